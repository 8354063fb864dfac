"""The ConfigMap API's writers, generated from the pydantic models by hack/gen_plain_insights.py
(whose docstring says what they give): do not edit.

A writer takes an insight of its shape (a plain object or a model) and returns its model's JSON,
one compact line, YAML-safe.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

from cvo_py.runtime.gotext.durations import duration_string
from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterVersionInsightShape,
    ConditionShape,
    ControlPlaneUpdateVersionsShape,
    HealthInsightShape,
    InsightImpactShape,
    InsightRemediationShape,
    InsightScopeShape,
    NodeInsightShape,
    NodeSummaryShape,
    PoolInsightShape,
    ResourceRefShape,
    VersionMetadataShape,
    VersionShape,
)
from status.updatestatus.insights.vocabulary import time_string

# Characters JSON leaves raw but YAML reads differently: C1 controls and DEL are not allowed in a
# YAML stream, and NEL, LS and PS are line breaks that YAML folds into spaces inside a quoted
# scalar. They are written as \uXXXX escapes, which JSON and YAML both read back exactly.
YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def _q(text: str) -> str:
    """JSON string quoting, C accelerated, non-ASCII kept (as `ensure_ascii=False`), YAML-safe."""
    quoted: str = encode_basestring(text)
    if YAML_UNSAFE.search(quoted) is None:
        return quoted
    return YAML_UNSAFE.sub(escape_yaml_unsafe, quoted)


def escape_yaml_unsafe(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


@functools.lru_cache(maxsize=4096)
def _write_condition(type: Any, status: Any, reason: Any, message: Any, last_transition_time: Any) -> str:
    return (
        f'{{"type":{_q(type)}'
        f',"status":{_q(status)}'
        f',"reason":{_q(reason)}'
        f',"message":{_q(message)}'
        f',"lastTransitionTime":"{time_string(last_transition_time)}"}}'
    )


def write_condition(o: ConditionShape) -> str:
    return _write_condition(o.type, o.status, o.reason, o.message, o.last_transition_time)


def write_resource_ref(o: ResourceRefShape) -> str:
    part0 = f'"group":{_q(o.group)},' if o.group != "" else ""
    part3 = f',"namespace":{_q(o.namespace)}' if o.namespace != "" else ""
    return f'{{{part0}"resource":{_q(o.resource)},"name":{_q(o.name)}{part3}}}'


def write_version_metadata(o: VersionMetadataShape) -> str:
    return f'{{"key":{_q(o.key)},"value":{_q(o.value)}}}'


def write_version(o: VersionShape) -> str:
    v1 = ",".join([write_version_metadata(item) for item in o.metadata])
    return f'{{"version":{_q(o.version)},"metadata":[{v1}]}}'


def write_control_plane_update_versions(o: ControlPlaneUpdateVersionsShape) -> str:
    return f'{{"previous":{write_version(o.previous)},"target":{write_version(o.target)}}}'


def write_node_summary(o: NodeSummaryShape) -> str:
    return f'{{"type":{_q(o.type)},"count":{o.count}}}'


def write_insight_scope(o: InsightScopeShape) -> str:
    v1 = ",".join([write_resource_ref(item) for item in o.resources])
    return f'{{"type":{_q(o.type)},"resources":[{v1}]}}'


def write_insight_impact(o: InsightImpactShape) -> str:
    return f'{{"level":{_q(o.level)},"type":{_q(o.type)},"summary":{_q(o.summary)},"description":{_q(o.description)}}}'


def write_insight_remediation(o: InsightRemediationShape) -> str:
    part1 = f',"estimatedFinish":"{time_string(o.estimated_finish)}"' if o.estimated_finish is not None else ""
    return f'{{"reference":{_q(o.reference)}{part1}}}'


def write_cluster_version_status_insight(o: ClusterVersionInsightShape) -> str:
    v0 = ",".join(
        [
            _write_condition(item.type, item.status, item.reason, item.message, item.last_transition_time)
            for item in o.conditions
        ]
    )
    part6 = f',"completedAt":"{time_string(o.completed_at)}"' if o.completed_at is not None else ""
    part7 = (
        f',"estimatedCompletedAt":"{time_string(o.estimated_completed_at)}"'
        if o.estimated_completed_at is not None
        else ""
    )
    return (
        f'{{"conditions":[{v0}]'
        f',"resource":{write_resource_ref(o.resource)}'
        f',"assessment":{_q(o.assessment)}'
        f',"versions":{write_control_plane_update_versions(o.versions)}'
        f',"completion":{o.completion}'
        f',"startedAt":"{time_string(o.started_at)}"'
        f"{part6}"
        f"{part7}}}"
    )


def write_cluster_operator_status_insight(o: ClusterOperatorInsightShape) -> str:
    v0 = ",".join(
        [
            _write_condition(item.type, item.status, item.reason, item.message, item.last_transition_time)
            for item in o.conditions
        ]
    )
    return f'{{"conditions":[{v0}],"name":{_q(o.name)},"resource":{write_resource_ref(o.resource)}}}'


def write_machine_config_pool_status_insight(o: PoolInsightShape) -> str:
    v0 = ",".join(
        [
            _write_condition(item.type, item.status, item.reason, item.message, item.last_transition_time)
            for item in o.conditions
        ]
    )
    v6 = ",".join([write_node_summary(item) for item in o.summaries])
    return (
        f'{{"conditions":[{v0}]'
        f',"name":{_q(o.name)}'
        f',"resource":{write_resource_ref(o.resource)}'
        f',"scopeType":{_q(o.scope_type)}'
        f',"assessment":{_q(o.assessment)}'
        f',"completion":{o.completion}'
        f',"summaries":[{v6}]}}'
    )


def write_node_status_insight(o: NodeInsightShape) -> str:
    v0 = ",".join(
        [
            _write_condition(item.type, item.status, item.reason, item.message, item.last_transition_time)
            for item in o.conditions
        ]
    )
    part5 = f',"version":{_q(o.version)}' if o.version != "" else ""
    part6 = f',"estToComplete":"{duration_string(o.est_to_complete)}"' if o.est_to_complete is not None else ""
    part7 = f',"message":{_q(o.message)}' if o.message != "" else ""
    return (
        f'{{"conditions":[{v0}]'
        f',"name":{_q(o.name)}'
        f',"resource":{write_resource_ref(o.resource)}'
        f',"poolResource":{write_resource_ref(o.pool_resource)}'
        f',"scopeType":{_q(o.scope_type)}'
        f"{part5}"
        f"{part6}"
        f"{part7}}}"
    )


def write_health_insight(o: HealthInsightShape) -> str:
    part1 = f',"startedAt":"{time_string(o.started_at)}"' if o.started_at is not None else ""
    return (
        f'{{"uid":{_q(o.uid)}'
        f"{part1}"
        f',"scope":{write_insight_scope(o.scope)}'
        f',"impact":{write_insight_impact(o.impact)}'
        f',"remediation":{write_insight_remediation(o.remediation)}}}'
    )


# Each insight type's shape and writer.
INSIGHT_WRITERS: tuple[tuple[type, Callable[[Any], str]], ...] = (
    (ClusterVersionInsightShape, write_cluster_version_status_insight),
    (ClusterOperatorInsightShape, write_cluster_operator_status_insight),
    (PoolInsightShape, write_machine_config_pool_status_insight),
    (NodeInsightShape, write_node_status_insight),
    (HealthInsightShape, write_health_insight),
)
