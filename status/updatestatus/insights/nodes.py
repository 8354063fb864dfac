"""Node insights and the node health insights, as oc computes them.

The per-node flags (updated, updating, degraded, and unavailable by the Machine Config Operator's
rules, which `unavailability` holds), phase, assessment, estimate and message, for a node of the
pool `membership` found for it. Thresholds are measured from the injected `now`. Pools are counted
from these assessments in `pools`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from cvo_py.runtime.gotext.durations import MINUTE
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.insights.health import health, health_uid
from status.updatestatus.insights.kinds import (
    NODE_MESSAGE_MAX,
    ConditionStatus,
    ConditionType,
    ImpactLevel,
    ImpactType,
    NodeAvailableReason,
    NodeDegradedReason,
    NodeUpdatingReason,
    ScopeType,
)
from status.updatestatus.insights.mco import (
    CURRENT_CONFIG,
    DESIRED_CONFIG,
    DESIRED_DRAIN,
    DOC_MCO,
    LAST_APPLIED_DRAIN,
    MASTER,
    MCO_GROUP,
    REASON,
    STATE,
    STATE_DEGRADED,
    STATE_DONE,
    STATE_REBOOTING,
    STATE_UNRECONCILABLE,
)
from status.updatestatus.insights.membership import PoolFacts
from status.updatestatus.insights.objects import JSON, InputError, describe, name_of
from status.updatestatus.insights.plain import Condition, HealthInsight, NodeStatusInsight, ResourceRef
from status.updatestatus.insights.unavailability import Unavailability, node_unavailability

ESTIMATE_DRAINING = 10 * MINUTE
ESTIMATE_UPDATING = 5 * MINUTE

_UPDATING_PHASE_BY_STATE = {STATE_REBOOTING: "Rebooting", STATE_DONE: "Updated"}
_NO_TIMES: Mapping[str, int] = {}


class NodeAssessment(NamedTuple):
    name: str
    pool: str
    version: str
    is_updated: bool
    is_updating: bool
    is_degraded: bool
    is_unavailable: bool
    phase: str  # Draining, Updating, Rebooting, Paused, Pending, Updated
    unavailability: Unavailability
    degraded_reason: str
    mcd_state: str
    ready_ltt: int | None


def assess_node(
    node: JSON,
    pool: JSON | PoolFacts,
    machineconfig_versions: Mapping[str, str],
    target: str | None,
    multi_arch_in_progress: bool,
) -> NodeAssessment:
    """oc's per-node flags; `target` is the newest history entry's version (None: no history)."""
    facts = pool if isinstance(pool, PoolFacts) else PoolFacts.of(pool)
    name, ann = _name_and_annotations(node)
    current_config = ann.get(CURRENT_CONFIG) or ""
    desired_config = ann.get(DESIRED_CONFIG) or ""
    has_desired = DESIRED_CONFIG in ann
    current_version = machineconfig_versions.get(current_config, "") if current_config else ""
    desired_version = machineconfig_versions.get(desired_config, "") if desired_config else ""
    annotation_matched = current_config == desired_config
    desired_is_pool_target = desired_config == facts.target_config

    is_updated = (
        current_version != ""
        and target == current_version
        and (not multi_arch_in_progress or not has_desired or (annotation_matched and desired_is_pool_target))
    )
    is_updating = (
        not is_updated
        and current_version != ""
        and desired_version != ""
        and target == desired_version
        and not annotation_matched
        and desired_is_pool_target
    )
    mcd_state = ann.get(STATE) or ""
    is_degraded = desired_config != "" and mcd_state in (STATE_DEGRADED, STATE_UNRECONCILABLE)
    is_unavailable, unavailability, ready_ltt = node_unavailability(node, ann, facts)
    phase = _phase(ann, mcd_state, is_updating, is_updated, facts.paused)
    return NodeAssessment(
        name,
        facts.name,
        current_version,
        is_updated,
        is_updating,
        is_degraded,
        is_unavailable,
        phase,
        unavailability,
        str(ann.get(REASON) or ""),
        mcd_state,
        ready_ltt,
    )


def _name_and_annotations(node: JSON) -> tuple[str, Mapping[str, str]]:
    meta = node.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        name = name_of(node)  # raises the clear error
    assert isinstance(meta, dict)
    ann = meta.get("annotations") or {}
    if not isinstance(ann, dict):
        raise InputError(f"{describe(node)}: metadata.annotations is not an object")
    return name, ann


def _phase(ann: Mapping[str, str], mcd_state: str, is_updating: bool, is_updated: bool, paused: bool) -> str:
    """Draining, Updating, Rebooting, Updated, Paused or Pending, as oc tells them."""
    desired_drain, last_drain = ann.get(DESIRED_DRAIN) or "", ann.get(LAST_APPLIED_DRAIN) or ""
    draining = bool(desired_drain and last_drain) and (
        (desired_drain != last_drain and desired_drain.split("-", 1)[0] == "drain")
        or (is_updating and mcd_state == STATE_DONE)
    )
    if is_updating and draining:
        return "Draining"
    if is_updating:
        return _UPDATING_PHASE_BY_STATE.get(mcd_state, "Updating")
    if is_updated:
        return "Updated"
    return "Paused" if paused else "Pending"


_UPDATING_BY_PHASE = {
    "Draining": (ConditionStatus.TRUE, NodeUpdatingReason.DRAINING, "The node is draining"),
    "Updating": (ConditionStatus.TRUE, NodeUpdatingReason.UPDATING, "The node is updating"),
    "Rebooting": (ConditionStatus.TRUE, NodeUpdatingReason.REBOOTING, "The node is rebooting"),
    "Updated": (ConditionStatus.FALSE, NodeUpdatingReason.COMPLETED, "The node is updated"),
    "Paused": (ConditionStatus.FALSE, NodeUpdatingReason.PAUSED, "The update of the node is paused"),
    "Pending": (ConditionStatus.FALSE, NodeUpdatingReason.PENDING, "The update of the node is pending"),
}
_ESTIMATE_BY_PHASE: dict[str, int | None] = {
    "Draining": ESTIMATE_DRAINING,
    "Updating": ESTIMATE_UPDATING,
    "Rebooting": ESTIMATE_UPDATING,
    "Updated": 0,
    "Paused": 0,
    "Pending": None,
}


def node_message(a: NodeAssessment) -> str:
    """What oc prints in the MESSAGE column (before it shortens the node's own name to <node>)."""
    if a.is_degraded:
        return a.degraded_reason
    if a.is_unavailable and not a.is_updating:
        return a.unavailability.reason_text()
    return ""


_DONE_NOT_UPDATED = (
    ConditionStatus.UNKNOWN,
    NodeUpdatingReason.CANNOT_DETERMINE,
    "The Machine Config Daemon reports Done but the node does not run the target configuration yet",
)
_NOT_DEGRADED = (ConditionStatus.FALSE, NodeDegradedReason.AS_EXPECTED, "The node is not degraded")

# Conditions without a source time, one shared instance each (insights are values: never mutated,
# `stamp_transition_times` replaces conditions instead).
_UPDATING_UNTIMED = {
    phase: Condition(ConditionType.UPDATING, *condition, ZERO_TIME)
    for phase, condition in _UPDATING_BY_PHASE.items()
}
_DONE_NOT_UPDATED_UNTIMED = Condition(ConditionType.UPDATING, *_DONE_NOT_UPDATED, ZERO_TIME)
_NOT_DEGRADED_UNTIMED = Condition(ConditionType.DEGRADED, *_NOT_DEGRADED, ZERO_TIME)


def node_insight(
    a: NodeAssessment, times: Mapping[str, int] | None = None, pool_ref: ResourceRef | None = None
) -> NodeStatusInsight:
    """The insight; `times` gives transition times for conditions without a source time."""
    times = times or _NO_TIMES
    no_time = ZERO_TIME
    # MCD reports Done but the node does not run the target configuration: oc shows "Updated"
    # without counting the node as updated, so the API cannot say either way.
    done_not_updated = a.is_updating and a.phase == "Updated"
    if times:
        status, reason, message = _DONE_NOT_UPDATED if done_not_updated else _UPDATING_BY_PHASE[a.phase]
        updating = Condition(
            ConditionType.UPDATING, status, reason, message, times.get(ConditionType.UPDATING, no_time)
        )
    else:
        updating = _DONE_NOT_UPDATED_UNTIMED if done_not_updated else _UPDATING_UNTIMED[a.phase]
    available = _available(a, times)
    if a.is_degraded:
        degraded = Condition(
            ConditionType.DEGRADED,
            ConditionStatus.TRUE,
            a.mcd_state,
            a.degraded_reason,
            times.get(ConditionType.DEGRADED, no_time),
        )
    elif times:
        since = times.get(ConditionType.DEGRADED, no_time)
        degraded = Condition(ConditionType.DEGRADED, *_NOT_DEGRADED, since)
    else:
        degraded = _NOT_DEGRADED_UNTIMED
    estimate = _ESTIMATE_BY_PHASE[a.phase]
    if (a.is_unavailable and not a.is_updating) or a.is_degraded:
        estimate = 0 if a.is_updated else None
    text = node_message(a)
    if len(text) > NODE_MESSAGE_MAX:
        text = text[: NODE_MESSAGE_MAX - 1] + "…"
    return NodeStatusInsight(
        conditions=[updating, available, degraded],
        name=a.name,
        resource=ResourceRef("", "nodes", a.name),
        pool_resource=pool_ref or ResourceRef(MCO_GROUP, "machineconfigpools", a.pool),
        scope_type=ScopeType.CONTROL_PLANE if a.pool == MASTER else ScopeType.WORKER_POOL,
        version=a.version,
        est_to_complete=estimate,
        message=text,
    )


def _available(a: NodeAssessment, times: Mapping[str, int]) -> Condition:
    """The node insight's Available condition: since its reasons began, else since Ready's last
    transition, else `times`' (a condition without a source time)."""
    if a.is_unavailable:
        since = a.unavailability.since()
        return Condition(
            ConditionType.AVAILABLE,
            ConditionStatus.FALSE,
            a.unavailability.tokens(),
            a.unavailability.reason_text(),
            since if since != ZERO_TIME else times.get(ConditionType.AVAILABLE, ZERO_TIME),
        )
    return Condition(
        ConditionType.AVAILABLE,
        ConditionStatus.TRUE,
        NodeAvailableReason.AS_EXPECTED,
        "The node is available",
        a.ready_ltt if a.ready_ltt is not None else times.get(ConditionType.AVAILABLE, ZERO_TIME),
    )


def node_health(a: NodeAssessment, now: int) -> list[HealthInsight]:
    if not a.is_unavailable and not a.is_degraded:
        return []  # the common case, kept cheap
    scope = ScopeType.CONTROL_PLANE if a.pool == MASTER else ScopeType.WORKER_POOL
    ref = [ResourceRef("", "nodes", a.name)]
    out = []
    if a.unavailability.seriously_unavailable(now) and not a.is_updating and a.is_unavailable:
        description = a.degraded_reason if a.is_degraded else a.unavailability.description_text()
        insight = health(
            health_uid("node", a.name, "unavailable"),
            a.unavailability.since(),
            scope,
            ref,
            ImpactLevel.WARNING,
            ImpactType.UPDATE_SPEED,
            a.unavailability.message_text(a.name),
            description,
            DOC_MCO,
        )
        if insight:
            out.append(insight)
    if a.is_degraded:
        insight = health(
            health_uid("node", a.name, "degraded"),
            ZERO_TIME,
            scope,
            ref,
            ImpactLevel.ERROR,
            ImpactType.UPDATE_STALLED,
            f"Node {a.name} is degraded",
            a.degraded_reason,
            DOC_MCO,
        )
        if insight:
            out.append(insight)
    return out
