"""ClusterOperator insights and health insights, as oc computes them: which operators count, when
one is updated, updating or waiting, and when an unavailable or degraded one becomes a health
insight (with oc's thresholds, measured from the injected `now`)."""

from __future__ import annotations

from typing import NamedTuple

from cvo_py.runtime.gotext.durations import MINUTE
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.insights.estimate import MCO_NAME
from status.updatestatus.insights.health import health, health_uid
from status.updatestatus.insights.kinds import (
    ClusterOperatorHealthyReason,
    ClusterOperatorUpdatingReason,
    ConditionStatus,
    ConditionType,
    ImpactLevel,
    ImpactType,
    ScopeType,
)
from status.updatestatus.insights.objects import JSON, cond_str, cond_time, conditions_by_type, name_of
from status.updatestatus.insights.objects import field as get
from status.updatestatus.insights.plain import ClusterOperatorStatusInsight, Condition, HealthInsight, ResourceRef

CONFIG_GROUP = "config.openshift.io"
RUNBOOK_DEGRADED = (
    "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDegraded.md"
)
RUNBOOK_DOWN = (
    "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDown.md"
)

# oc's thresholds for operator health insights (measured from `now`)
CO_UNAVAILABLE_WARNING_AFTER = 5 * MINUTE
CO_UNAVAILABLE_ERROR_AFTER = 20 * MINUTE
CO_DEGRADED_WARNING_AFTER = 5 * MINUTE
CO_DEGRADED_ERROR_AFTER = 40 * MINUTE


def is_counted(co: JSON) -> bool:
    """oc counts only operators that the release payload includes or excludes by annotation."""
    annotations = get(co, "metadata", "annotations")
    return any(
        str(k).startswith(("exclude.release.openshift.io/", "include.release.openshift.io/")) for k in annotations
    )


class OperatorState(NamedTuple):
    name: str
    updated: bool
    progressing: JSON | None
    available: JSON | None
    degraded: JSON | None

    @property
    def updating(self) -> bool:
        return not self.updated and cond_str(self.progressing, "status") == "True"

    @property
    def waiting(self) -> bool:
        return not self.updated and cond_str(self.progressing, "status") == "False"

    @property
    def unavailable(self) -> bool:
        return cond_str(self.available, "status") != "True"

    @property
    def degraded_only(self) -> bool:
        return not self.unavailable and cond_str(self.degraded, "status") == "True"


def assess_operator(co: JSON, target: str, mco_image: str) -> OperatorState:
    name = name_of(co)
    versions = get(co, "status", "versions", want=list)
    updated = False
    image_upgrading = name == MCO_NAME and any(
        isinstance(v, dict) and v.get("name") == "operator-image" and str(v.get("version") or "") != mco_image
        for v in versions
    )
    if not image_upgrading:
        updated = any(
            isinstance(v, dict) and v.get("name") == "operator" and str(v.get("version") or "") == target
            for v in versions
        )
    conds = conditions_by_type(co)
    return OperatorState(
        name=name,
        updated=updated,
        progressing=conds.get("Progressing"),
        available=conds.get("Available"),
        degraded=conds.get("Degraded"),
    )


def copy_condition(cond: JSON, obj: JSON) -> Condition:
    status = cond_str(cond, "status")
    return Condition(
        cond_str(cond, "type"),
        ConditionStatus(status) if status in ("True", "False") else ConditionStatus.UNKNOWN,
        cond_str(cond, "reason"),
        cond_str(cond, "message"),
        cond_time(cond, obj),
    )


def clusteroperator_insight(co: JSON, state: OperatorState, target: str, now: int) -> ClusterOperatorStatusInsight:
    progressing = state.progressing
    source_times = [cond_time(c, co) for c in (state.progressing, state.available, state.degraded) if c]
    fallback = max(source_times) if source_times else ZERO_TIME
    conditions = [operator_updating(co, state, target, fallback), operator_healthy(co, state, fallback)]
    if progressing is not None:
        conditions.append(copy_condition(progressing, co))
    return ClusterOperatorStatusInsight(
        conditions=conditions,
        name=state.name,
        resource=ResourceRef(CONFIG_GROUP, "clusteroperators", state.name),
    )


def operator_updating(co: JSON, state: OperatorState, target: str, fallback: int) -> Condition:
    """The operator insight's Updating condition; `fallback`: the time of a condition that has none
    of its own (the newest of the operator's)."""
    progressing = state.progressing
    if state.updated:
        return Condition(
        ConditionType.UPDATING,
        ConditionStatus.FALSE,
        ClusterOperatorUpdatingReason.UPDATED,
        f"The operator is updated to {target}",
        cond_time(progressing, co) if progressing else fallback,
    )
    if state.updating:
        return Condition(
        ConditionType.UPDATING,
        ConditionStatus.TRUE,
        ClusterOperatorUpdatingReason.PROGRESSING,
        cond_str(progressing, "message"),
        cond_time(progressing, co),
    )
    if state.waiting:
        return Condition(
        ConditionType.UPDATING,
        ConditionStatus.FALSE,
        ClusterOperatorUpdatingReason.PENDING,
        cond_str(progressing, "message"),
        cond_time(progressing, co),
    )
    return Condition(
        ConditionType.UPDATING,
        ConditionStatus.UNKNOWN,
        ClusterOperatorUpdatingReason.CANNOT_DETERMINE,
        "The operator is not updated and its Progressing condition is missing or Unknown",
        fallback,
    )


def operator_healthy(co: JSON, state: OperatorState, fallback: int) -> Condition:
    """The operator insight's Healthy condition (`fallback` as for `operator_updating`)."""
    if state.available is None:
        return Condition(
        ConditionType.HEALTHY,
        ConditionStatus.UNKNOWN,
        ClusterOperatorHealthyReason.CANNOT_DETERMINE,
        "The cluster operator is unavailable because the available condition is not found in the "
        "cluster operator's status",
        fallback,
    )
    if state.unavailable:
        return Condition(
        ConditionType.HEALTHY,
        ConditionStatus.FALSE,
        ClusterOperatorHealthyReason.UNAVAILABLE,
        cond_str(state.available, "message"),
        cond_time(state.available, co),
    )
    if state.degraded_only:
        return Condition(
        ConditionType.HEALTHY,
        ConditionStatus.FALSE,
        ClusterOperatorHealthyReason.DEGRADED,
        cond_str(state.degraded, "message"),
        cond_time(state.degraded, co),
    )
    return Condition(
        ConditionType.HEALTHY,
        ConditionStatus.TRUE,
        ClusterOperatorHealthyReason.AS_EXPECTED,
        "",
        cond_time(state.available, co),
    )


# operator health insights: (condition, its bad status, what it means, warning after, error after, runbook)
_OPERATOR_HEALTH = (
    ("available", "False", "unavailable", CO_UNAVAILABLE_WARNING_AFTER, CO_UNAVAILABLE_ERROR_AFTER, RUNBOOK_DOWN),
    ("degraded", "True", "degraded", CO_DEGRADED_WARNING_AFTER, CO_DEGRADED_ERROR_AFTER, RUNBOOK_DEGRADED),
)


def clusteroperator_health(co: JSON, state: OperatorState, now: int) -> list[HealthInsight]:
    out: list[HealthInsight] = []
    ref = [ResourceRef(CONFIG_GROUP, "clusteroperators", state.name)]
    for attr, bad, what, warning_after, error_after, runbook in _OPERATOR_HEALTH:
        cond: JSON | None = getattr(state, attr)
        if cond is None or cond_str(cond, "status") != bad:
            continue
        since = cond_time(cond, co)
        if not now > since + warning_after:
            continue
        insight = health(
            health_uid("co", state.name, what),
            since,
            ScopeType.CONTROL_PLANE,
            ref,
            ImpactLevel.ERROR if now > since + error_after else ImpactLevel.WARNING,
            ImpactType.API_AVAILABILITY,
            f"Cluster Operator {state.name} is {what} ({cond_str(cond, 'reason')})",
            cond_str(cond, "message") or "<no message>",
            runbook,
        )
        if insight:
            out.append(insight)
    return out
