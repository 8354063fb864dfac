"""Node and MachineConfigPool insights, and the node / pool health insights, as oc computes them.

Pool membership (master, then custom pools in list order, then worker), the per-node flags
(updated, updating, degraded, unavailable with the Machine Config Operator's rules), phase,
assessment, estimate and message, pool counters and assessment. Thresholds are measured from the
injected `now`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cvo_py.runtime import gotext
from cvo_py.runtime.gotext import MINUTE, go_quote
from status.updatestatus.insights.health import health, health_uid
from status.updatestatus.insights.inputs import CURRENT_CONFIG, DESIRED_CONFIG, MCO_PREFIX
from status.updatestatus.insights.kinds import (
    NODE_MESSAGE_MAX,
    ConditionStatus,
    ConditionType,
    ImpactLevel,
    ImpactType,
    NodeAvailableReason,
    NodeDegradedReason,
    NodeSummaryType,
    NodeUpdatingReason,
    PoolAssessment,
    PoolUpdatingReason,
    ScopeType,
)
from status.updatestatus.insights.objects import JSON, InputError, describe, name_of, time_of
from status.updatestatus.insights.plain import (
    Condition,
    HealthInsight,
    MachineConfigPoolStatusInsight,
    NodeStatusInsight,
    NodeSummary,
    ResourceRef,
)
from status.updatestatus.insights.selectors import Selector

STATE = MCO_PREFIX + "state"
REASON = MCO_PREFIX + "reason"
DESIRED_DRAIN = MCO_PREFIX + "desiredDrain"
LAST_APPLIED_DRAIN = MCO_PREFIX + "lastAppliedDrain"
CURRENT_IMAGE = MCO_PREFIX + "currentImage"
DESIRED_IMAGE = MCO_PREFIX + "desiredImage"
LAYERING_ENABLED = MCO_PREFIX + "layering-enabled"
NEWEST_IMAGE = MCO_PREFIX + "newestImageEquivalentConfig"

MCO_GROUP = "machineconfiguration.openshift.io"
MASTER = "master"
WORKER = "worker"

# Machine Config Daemon states
STATE_DONE = "Done"
STATE_WORKING = "Working"
STATE_REBOOTING = "Rebooting"
STATE_DEGRADED = "Degraded"
STATE_UNRECONCILABLE = "Unreconcilable"

# oc's unavailability reasons (the node MESSAGE column prints them)
NOT_READY = "Not ready"
DISK_PRESSURE = "Disk pressure"
NETWORK_UNAVAILABLE = "Network unavailable"
UNSCHEDULABLE = "Node is marked unschedulable"
MCD_PROCESSING = "Machine Config Daemon is processing the node"

_REASON_TOKENS = {
    NOT_READY: NodeAvailableReason.NOT_READY,
    DISK_PRESSURE: NodeAvailableReason.DISK_PRESSURE,
    NETWORK_UNAVAILABLE: NodeAvailableReason.NETWORK_UNAVAILABLE,
    UNSCHEDULABLE: NodeAvailableReason.UNSCHEDULABLE,
    MCD_PROCESSING: NodeAvailableReason.MCD_PROCESSING,
}
_CONDITION_CHECKS = {
    # node condition type → (the status that is fine, oc's reason, its description condition text)
    "Ready": ("True", NOT_READY, "Ready!=True"),
    "DiskPressure": ("False", DISK_PRESSURE, "DiskPressure!=False"),
    "NetworkUnavailable": ("False", NETWORK_UNAVAILABLE, "NetworkUnavailable!=False"),
}
_CHECK_BY_REASON = {check[1]: check for check in _CONDITION_CHECKS.values()}
# how long each reason must last before the node counts as seriously unavailable
_SERIOUS_AFTER = {NOT_READY: 5 * MINUTE, DISK_PRESSURE: MINUTE, NETWORK_UNAVAILABLE: MINUTE}
_NEVER_SERIOUS = {UNSCHEDULABLE, MCD_PROCESSING}

DOC_MCO = (
    "https://docs.openshift.com/container-platform/latest/post_installation_configuration/"
    "machine-configuration-tasks.html#understanding-the-machine-config-operator"
)
DOC_PAUSED = (
    "https://docs.openshift.com/container-platform/latest/support/troubleshooting/"
    "troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues"
)

ESTIMATE_DRAINING = 10 * MINUTE
ESTIMATE_UPDATING = 5 * MINUTE


# --- pools by selector -------------------------------------------------------------------------


class PoolIndex:
    """Pools in the order oc tries them: master, then custom pools in list order, then worker."""

    def __init__(self, pools: list[JSON]) -> None:
        named = [(name_of(p), p) for p in pools]
        order = [x for x in named if x[0] == MASTER]
        order += [x for x in named if x[0] not in (MASTER, WORKER)]
        order += [x for x in named if x[0] == WORKER]
        self._order: list[tuple[PoolFacts, JSON, Selector]] = []
        self.unusable: list[tuple[JSON, InputError]] = []  # pools that cannot be used, and why
        for name, pool in order:
            try:
                self._order.append((PoolFacts.of(pool), pool, Selector.parse(_selector(pool), name)))
            except InputError as exc:
                self.unusable.append((pool, exc))

    def match(self, node_labels: Mapping[str, str]) -> tuple[PoolFacts, JSON] | None:
        for facts, pool, selector in self._order:
            # cheap pre-check on the first required label: most pools do not match most nodes
            if selector.match_labels and selector.match_labels[0][0] not in node_labels:
                continue
            if selector.matches(node_labels):
                return facts, pool
        return None


def _selector(pool: JSON) -> object:
    spec = pool.get("spec")
    return spec.get("nodeSelector") if isinstance(spec, dict) else None


# --- per node ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Unavailability:
    """The Machine Config Operator's ordered list of reasons a node is unavailable."""

    reasons: list[tuple[str, str, int | None]] = field(default_factory=list)  # (reason, cond message, ltt)

    def reason_text(self) -> str:
        return " | ".join(r for r, _, _ in self.reasons)

    def message_text(self, node: str) -> str:
        out = []
        for reason, _, _ in self.reasons:
            if reason == NOT_READY:
                out.append(f"Node {node} is not ready")
            elif reason == DISK_PRESSURE:
                out.append(f"Node {node} has disk pressure")
            elif reason == NETWORK_UNAVAILABLE:
                out.append(f"Node {node} has unavailable network")
            else:
                out.append(reason)
        return " | ".join(out)

    def description_text(self) -> str:
        out = []
        for reason, message, _ in self.reasons:
            check = _CHECK_BY_REASON.get(reason)
            if check is None:
                out.append(reason)
            else:
                out.append(
                    f"Node has a {check[2]} condition with Reason {go_quote(reason)} and message {go_quote(message)}"
                )
        return " | ".join(out)

    def since(self) -> int:
        times = [t for _, _, t in self.reasons if t is not None and t != gotext.ZERO_TIME]
        return min(times) if times else gotext.ZERO_TIME

    def tokens(self) -> str:
        return ",".join(_REASON_TOKENS.get(r, NodeAvailableReason.UNEXPECTED_IMAGE) for r, _, _ in self.reasons)

    def seriously_unavailable(self, now: int) -> bool:
        for reason, _, ltt in self.reasons:
            if reason in _NEVER_SERIOUS:
                continue
            threshold = _SERIOUS_AFTER.get(reason)
            if threshold is None:
                return True
            when = gotext.ZERO_TIME if ltt is None else ltt
            if now - when >= threshold:
                return True
        return False


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class PoolFacts:
    """What node assessment reads from a pool, extracted once per pool instead of once per node."""

    name: str
    target_config: str
    paused: bool
    layered_image: str  # the newest image of a layered pool, "" when not layered

    @classmethod
    def of(cls, pool: JSON) -> PoolFacts:
        spec = _mapping(pool.get("spec"))
        meta = _mapping(pool.get("metadata"))
        configuration = _mapping(spec.get("configuration"))
        layered = LAYERING_ENABLED in _mapping(meta.get("labels"))
        image = str((meta.get("annotations") or {}).get(NEWEST_IMAGE) or "") if layered else ""
        return cls(name_of(pool), str(configuration.get("name") or ""), bool(spec.get("paused")), image)


def node_unavailability(node: JSON, ann: Mapping[str, str], pool: PoolFacts) -> tuple[bool, Unavailability, int | None]:
    """(isUnavailable, the recorded reasons, the Ready condition's time) per the MCO's layered node state."""
    state = Unavailability()
    ready_ltt = None
    status = node.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for cond in conditions or ():
        if not isinstance(cond, dict):
            raise InputError(f"{describe(node)}: status.conditions holds a {type(cond).__name__}")
        ctype = cond.get("type")
        check = _CONDITION_CHECKS.get(ctype) if isinstance(ctype, str) else None
        if check is None:
            continue
        bad = cond.get("status") != check[0]
        if bad or ctype == "Ready":
            ltt = time_of(cond.get("lastTransitionTime"), node, f"condition {ctype} lastTransitionTime")
            if ctype == "Ready":
                ready_ltt = ltt
            if bad:
                state.reasons.append((check[1], str(cond.get("message") or ""), ltt))
    spec = node.get("spec")
    if isinstance(spec, dict) and spec.get("unschedulable"):
        state.reasons.append((UNSCHEDULABLE, "", None))
    mcd_state = ann.get(STATE) or ""
    if state.reasons:
        unavailable = True
    elif _is_done(ann, mcd_state) or mcd_state in (STATE_DEGRADED, STATE_UNRECONCILABLE):
        unavailable = False
    else:
        state.reasons.append((MCD_PROCESSING, "", None))
        unavailable = True
    if not unavailable:
        return False, state, ready_ltt
    desired_image = ann.get(DESIRED_IMAGE) or ""
    if pool.layered_image:
        if desired_image != pool.layered_image:
            reason = f"Node has an unexpected annotation {NEWEST_IMAGE}={pool.layered_image}"
            state.reasons.append((reason, "", None))
            return False, state, ready_ltt
        return True, state, ready_ltt
    return desired_image == "", state, ready_ltt


def _is_done(ann: Mapping[str, str], mcd_state: str) -> bool:
    current, desired = ann.get(CURRENT_CONFIG) or "", ann.get(DESIRED_CONFIG) or ""
    if not current or not desired or current != desired:
        return False
    if CURRENT_IMAGE in ann or DESIRED_IMAGE in ann:
        ci, di = ann.get(CURRENT_IMAGE) or "", ann.get(DESIRED_IMAGE) or ""
        if not (ci and di and ci == di):
            return False
    return mcd_state == STATE_DONE


_UPDATING_PHASE_BY_STATE = {STATE_REBOOTING: "Rebooting", STATE_DONE: "Updated"}
_NO_TIMES: Mapping[str, int] = {}


@dataclass(slots=True)
class NodeAssessment:
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
    meta = node.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        name = name_of(node)  # raises the clear error
    assert isinstance(meta, dict)
    ann = meta.get("annotations") or {}
    if not isinstance(ann, dict):
        raise InputError(f"{describe(node)}: metadata.annotations is not an object")
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

    desired_drain, last_drain = ann.get(DESIRED_DRAIN) or "", ann.get(LAST_APPLIED_DRAIN) or ""
    draining = bool(desired_drain and last_drain) and (
        (desired_drain != last_drain and desired_drain.split("-", 1)[0] == "drain")
        or (is_updating and mcd_state == STATE_DONE)
    )
    if is_updating and draining:
        phase = "Draining"
    elif is_updating:
        phase = _UPDATING_PHASE_BY_STATE.get(mcd_state, "Updating")
    elif is_updated:
        phase = "Updated"
    elif facts.paused:
        phase = "Paused"
    else:
        phase = "Pending"
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
    phase: Condition(ConditionType.UPDATING, *condition, gotext.ZERO_TIME)
    for phase, condition in _UPDATING_BY_PHASE.items()
}
_DONE_NOT_UPDATED_UNTIMED = Condition(ConditionType.UPDATING, *_DONE_NOT_UPDATED, gotext.ZERO_TIME)
_NOT_DEGRADED_UNTIMED = Condition(ConditionType.DEGRADED, *_NOT_DEGRADED, gotext.ZERO_TIME)


def node_insight(
    a: NodeAssessment, times: Mapping[str, int] | None = None, pool_ref: ResourceRef | None = None
) -> NodeStatusInsight:
    """The insight; `times` gives transition times for conditions without a source time."""
    times = times or _NO_TIMES
    no_time = gotext.ZERO_TIME
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
    if a.is_unavailable:
        since = a.unavailability.since()
        available = Condition(
            ConditionType.AVAILABLE,
            ConditionStatus.FALSE,
            a.unavailability.tokens(),
            a.unavailability.reason_text(),
            since if since != no_time else times.get(ConditionType.AVAILABLE, no_time),
        )
    else:
        available = Condition(
            ConditionType.AVAILABLE,
            ConditionStatus.TRUE,
            NodeAvailableReason.AS_EXPECTED,
            "The node is available",
            a.ready_ltt if a.ready_ltt is not None else times.get(ConditionType.AVAILABLE, no_time),
        )
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
            gotext.ZERO_TIME,
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


# --- pools -------------------------------------------------------------------------------------


@dataclass
class PoolCounters:
    total: int = 0
    available: int = 0
    degraded: int = 0
    excluded: int = 0
    pending: int = 0
    outdated: int = 0
    draining: int = 0
    progressing: int = 0
    updated: int = 0

    def add(self, a: NodeAssessment) -> None:
        self.total += 1
        if not a.is_unavailable:
            self.available += 1
        if a.is_degraded:
            self.degraded += 1
        if a.phase == "Paused":
            self.excluded += 1
            self.outdated += 1
        elif a.phase == "Pending":
            self.pending += 1
            self.outdated += 1
        elif a.phase in ("Draining", "Updating", "Rebooting"):
            self.outdated += 1
            if a.phase == "Draining":
                self.draining += 1
            if not a.is_degraded:
                self.progressing += 1
        else:
            self.updated += 1

    def assessment(self) -> PoolAssessment:
        if self.updated == self.total:
            return PoolAssessment.COMPLETED
        if self.pending == self.total:
            return PoolAssessment.PENDING
        if self.degraded > 0:
            return PoolAssessment.DEGRADED
        if self.excluded > 0:
            return PoolAssessment.EXCLUDED
        return PoolAssessment.PROGRESSING


def pool_insight(pool: JSON, c: PoolCounters) -> MachineConfigPoolStatusInsight:
    name = name_of(pool)
    assessment = c.assessment()
    paused = bool((pool.get("spec") or {}).get("paused"))
    if c.progressing > 0:
        updating = (
            ConditionStatus.TRUE,
            PoolUpdatingReason.PROGRESSING,
            f"{c.progressing} of {c.total} nodes are updating",
        )
    elif c.updated == c.total:
        updating = (ConditionStatus.FALSE, PoolUpdatingReason.UPDATED, "All nodes in the pool are updated")
    elif paused and c.excluded > 0:
        updating = (ConditionStatus.FALSE, PoolUpdatingReason.PAUSED, "The pool is paused")
    else:
        updating = (
            ConditionStatus.FALSE,
            PoolUpdatingReason.PENDING,
            f"{c.outdated} of {c.total} nodes are outdated",
        )
    summaries = [
        NodeSummary(t, n)
        for t, n in (
            (NodeSummaryType.TOTAL, c.total),
            (NodeSummaryType.AVAILABLE, c.available),
            (NodeSummaryType.PROGRESSING, c.progressing),
            (NodeSummaryType.OUTDATED, c.outdated),
            (NodeSummaryType.DRAINING, c.draining),
            (NodeSummaryType.EXCLUDED, c.excluded),
            (NodeSummaryType.DEGRADED, c.degraded),
        )
    ]
    return MachineConfigPoolStatusInsight(
        conditions=[Condition(ConditionType.UPDATING, updating[0], updating[1], updating[2], gotext.ZERO_TIME)],
        name=name,
        resource=ResourceRef(MCO_GROUP, "machineconfigpools", name),
        scope_type=ScopeType.CONTROL_PLANE if name == MASTER else ScopeType.WORKER_POOL,
        assessment=assessment,
        completion=gotext.go_percent(c.updated / c.total * 100) if c.total else 100,
        summaries=summaries,
    )


def paused_pool_health(pool: JSON, c: PoolCounters) -> HealthInsight | None:
    if c.excluded <= 0 or not (pool.get("spec") or {}).get("paused"):
        return None
    name = name_of(pool)
    return health(
        health_uid("mcp", name, "paused"),
        gotext.ZERO_TIME,
        ScopeType.WORKER_POOL,
        [ResourceRef(MCO_GROUP, "machineconfigpools", name)],
        ImpactLevel.WARNING,
        ImpactType.UPDATE_STALLED,
        f"Outdated nodes in a paused pool '{name}' will not be updated",
        "Pool is paused, which stops all changes to the nodes in the pool, including updates. The nodes will "
        "not be updated until the pool is unpaused by the administrator.",
        DOC_PAUSED,
    )
