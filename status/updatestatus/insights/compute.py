"""Entry points: Kubernetes objects (plain dicts) and an injected `now` → insights.

`now` is an aware `datetime` or an int of nanoseconds since the epoch. The returned list is in
oc's collection order: the ClusterVersion insight, ClusterOperator insights (list order),
MachineConfigPool insights (list order), Node insights (by pool, then list order), then Health
insights in the order oc collects them (per pool: its nodes' then the paused pool's; alerts;
the ClusterVersion's; the operators'; the incomplete previous update's). Renderers keep that
order for insights of equal level and age.

`NodeAssessor` is the node part one node at a time, for callers that recompute only the nodes that
changed (the controller); `all_insights` and `node_insights` use it too.

Conditions that have no source time (a node's `Updating`, a pool's `Updating`, …) need memory to
carry a real `lastTransitionTime`: pass the previously computed insights as `previous` and a
condition that did not change keeps its time, one that changed gets `now`. Without `previous`
those times are Go's zero time, so repeated computations give identical insights.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cvo_py.runtime import gcpause
from cvo_py.runtime.gotext.times import ZERO_TIME, to_now
from status.updatestatus.insights import alerts as alerts_mod
from status.updatestatus.insights import controlplane, faults, mco
from status.updatestatus.insights import nodes as nodes_mod
from status.updatestatus.insights import pools as pools_mod
from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterVersionInsightShape,
    ConditionShape,
    HealthInsightShape,
    InsightShape,
    NodeInsightShape,
    PoolInsightShape,
    ScopeType,
)
from status.updatestatus.insights.membership import PoolIndex
from status.updatestatus.insights.objects import JSON, InputError, conditions_by_type, history, name_of
from status.updatestatus.insights.operators import CONFIG_GROUP
from status.updatestatus.insights.plain import (
    Condition,
    HealthInsight,
    Insight,
    MachineConfigPoolStatusInsight,
    NodeStatusInsight,
    ResourceRef,
)

if TYPE_CHECKING:
    from datetime import datetime

    Now = datetime | int  # as `to_now` takes it (no `datetime` import at run time: see gotext.times)

__all__ = [
    "NodeAssessor",
    "all_insights",
    "controlplane_insights",
    "node_insights",
    "in_collection_order",
    "InputError",
]


def controlplane_insights(cv: JSON | None, operators: list[JSON], now: Now, *, mco_image: str = "") -> list[Insight]:
    """ClusterVersion and ClusterOperator insights plus the control plane's health insights.

    `mco_image` is the image of the machine-config-operator Deployment's container (oc does not
    count `machine-config` as updated while its `operator-image` version differs from it).
    """
    if cv is None:
        return []
    t = to_now(now)
    cp, unassessable = assess_control_plane(cv, operators, t, mco_image)
    out: list[Insight] = [cp.clusterversion, *cp.operators]
    out.extend(_control_plane_health(cp))
    out.extend(unassessable)
    return out


def assess_control_plane(
    cv: JSON, operators: Any, now: int, mco_image: str = ""
) -> tuple[controlplane.ControlPlaneResult, list[HealthInsight]]:
    """`controlplane.assess_control_plane`, with each ClusterOperator that cannot be assessed left
    out and replaced by a health insight naming it (`status.updatestatus.insights.faults`). A ClusterVersion
    that cannot be assessed is still an error: every control-plane insight depends on it."""
    ops = _objects(operators, "ClusterOperator")
    try:
        return controlplane.assess_control_plane(cv, ops, now, mco_image), []
    except faults.FAULTS:
        pass
    controlplane.assess_control_plane(cv, [], now, mco_image)  # the ClusterVersion's own error, if any
    good: list[JSON] = []
    out: list[HealthInsight] = []
    for op in ops:
        try:
            controlplane.assess_control_plane(cv, [op], now, mco_image)
        except faults.FAULTS as exc:
            group, scope = CONFIG_GROUP, ScopeType.CONTROL_PLANE
            out.append(faults.unassessable_object("ClusterOperator", group, "clusteroperators", op, exc, scope))
            continue
        good.append(op)
    return controlplane.assess_control_plane(cv, good, now, mco_image), out


def node_insights(
    nodes: list[JSON],
    pools: list[JSON],
    machineconfig_versions: Mapping[str, str],
    now: Now,
    *,
    cv: JSON | None,
    node_clock: Now | None = None,
) -> list[Insight]:
    """MachineConfigPool and Node insights plus their health insights.

    `machineconfig_versions` maps a MachineConfig name to its
    `machineconfiguration.openshift.io/release-image-version` annotation (MachineConfigs without
    it are left out). `cv` (the ClusterVersion, or None when there is none) is required: a node
    is updated when it runs the version of the newest ClusterVersion history entry. `node_clock`
    (default: `now`) is the instant node unavailability is aged at (see `all_insights`).
    """
    _, clock = _clocks(now, node_clock)
    pools_out, nodes_out, health = _assess_nodes(nodes, pools, machineconfig_versions, clock, cv)
    return [*pools_out, *nodes_out, *health]


def all_insights(
    cv: JSON | None,
    operators: list[JSON],
    nodes: list[JSON],
    pools: list[JSON],
    machineconfig_versions: Mapping[str, str],
    now: Now,
    *,
    mco_image: str = "",
    alerts: Any = None,
    previous: Iterable[Insight] | None = None,
    node_clock: Now | None = None,
) -> list[Insight]:
    """Every insight, in oc's collection order (see the module docstring).

    `alerts` is the Thanos `/api/v1/alerts` response (or None); `previous` the insights computed
    last time, to carry transition times forward. `node_clock` (default: `now`) is the instant at
    which a node's unavailability is aged against oc's thresholds: oc measures it against the real
    clock even when it assesses a snapshot at the snapshot's "now", so reproducing oc's output for a
    snapshot takes the wall clock here.
    """
    t, clock = _clocks(now, node_clock)
    pools_out, nodes_out, node_health = _assess_nodes(nodes, pools, machineconfig_versions, clock, cv)
    out: list[Insight] = []
    health: list[Insight] = list(node_health)
    if cv is not None:
        cp, unassessable = assess_control_plane(cv, operators, t, mco_image)
        out.append(cp.clusterversion)
        out.extend(cp.operators)
        if alerts is not None:
            health.extend(alerts_mod.alert_insights(alerts, controlplane.update_started_at(cv)))
        health.extend(_control_plane_health(cp))
        health.extend(unassessable)
    out.extend(pools_out)
    out.extend(nodes_out)
    out.extend(health)
    if previous is not None:
        stamp_transition_times(out, previous, t)
    return out


def in_collection_order(
    controlplane: Sequence[Insight], nodes: Sequence[Insight], alerts: Sequence[Insight] = ()
) -> list[Insight]:
    """What `controlplane_insights` and `node_insights` computed, and alert insights, in the order
    `all_insights` gives them (for a caller that has the alerts only after the rest, and does not
    compute the rest again): the ClusterVersion's and the operators' insights, the pools', the
    nodes' and their health, the alerts, then the control plane's health."""
    head = [i for i in controlplane if not isinstance(i, HealthInsightShape)]
    health = [i for i in controlplane if isinstance(i, HealthInsightShape)]
    return [*head, *nodes, *alerts, *health]


def _clocks(now: Now, node_clock: Now | None) -> tuple[int, int]:
    """(now, the instant node unavailability is aged at) in ns."""
    t = to_now(now)
    return t, t if node_clock is None else to_now(node_clock)


def _control_plane_health(cp: controlplane.ControlPlaneResult) -> list[Insight]:
    out: list[Insight] = []
    if cp.failing is not None:
        out.append(cp.failing)
    out.extend(cp.operator_health)
    if cp.previous_incomplete is not None:
        out.append(cp.previous_incomplete)
    return out


def _objects(items: Any, kind: str) -> list[JSON]:
    if not isinstance(items, list):
        raise InputError(f"expected a list of {kind} objects, not {type(items).__name__}")
    for item in items:
        if not isinstance(item, dict):
            raise InputError(f"expected a list of {kind} objects, found a {type(item).__name__}")
    return items


def _assess_nodes(
    nodes: list[JSON], pools: list[JSON], versions: Mapping[str, str], node_clock: int, cv: JSON | None
) -> tuple[list[MachineConfigPoolStatusInsight], list[NodeStatusInsight], list[HealthInsight]]:
    _objects(nodes, "Node")
    with gcpause.paused():
        assessor = NodeAssessor(pools, versions, cv)
        by_pool = assessor.new_groups()
        assess, insight = assessor.assess, assessor.insight  # bound once: this loop runs per node
        for node in nodes:
            a = assess(node)
            if a is not None:  # oc ignores nodes outside every pool
                by_pool[a.pool].append(a)
        node_out = [insight(a) for assessed in by_pool.values() for a in assessed]
        pool_out, health = assessor.pools_and_health(by_pool, node_clock)
        return pool_out, node_out, health


_NO_LABELS: Mapping[str, str] = {}
_assess_node = nodes_mod.assess_node


class NodeAssessor:
    """Node and pool insights, one node at a time: what the full computation and an incremental one
    (`status.updatestatus.controller.incremental`, which reassesses only the nodes that changed) both use.

    Built once per set of inputs every node depends on besides the node itself: the pools (their
    order and selectors), the MachineConfig versions and the ClusterVersion's target. `inputs`
    identifies those, so a cache of assessments stays valid while it is equal.
    """

    def __init__(self, pools: list[JSON], versions: Mapping[str, str], cv: JSON | None) -> None:
        _objects(pools, "MachineConfigPool")
        target: str | None = None
        multi_arch = False
        if cv is not None:
            hist = history(cv)
            if hist:
                target = str(hist[0].get("version") or "")
            progressing = conditions_by_type(cv).get("Progressing")
            multi_arch = controlplane.is_multi_arch_migration(hist) and bool(
                progressing and progressing.get("status") == "True"
            )
        self.pools = pools
        self.versions = versions
        self.target = target
        self.multi_arch = multi_arch
        self._index = PoolIndex(pools)
        unusable = {id(p) for p, _ in self._index.unusable}
        self._pool_by_name = {name_of(p): p for p in pools if id(p) not in unusable}
        # objects that cannot be assessed: health insights in their place (`status.updatestatus.insights.faults`)
        self.pool_faults: list[HealthInsight] = [
            faults.unassessable_object(
                "MachineConfigPool", mco.MCO_GROUP, "machineconfigpools", p, exc, ScopeType.WORKER_POOL
            )
            for p, exc in self._index.unusable
        ]
        self.node_faults: list[HealthInsight] = []
        self._pool_refs = {
            name: ResourceRef(mco.MCO_GROUP, "machineconfigpools", name) for name in self._pool_by_name
        }
        # pools by identity: an informer delivers a new object for every change
        self.inputs: tuple[object, ...] = (tuple(id(p) for p in pools), dict(versions), target, multi_arch)

    def new_groups(self) -> dict[str, list[nodes_mod.NodeAssessment]]:
        """An empty list of assessments per pool, in the pools' order (what `pools_and_health` takes)."""
        return {name: [] for name in self._pool_by_name}

    def assess(self, node: JSON) -> nodes_mod.NodeAssessment | None:
        """oc's assessment of one node, or None when the node is in no pool or cannot be assessed
        (then `node_faults` has a health insight about it)."""
        meta = node.get("metadata")
        node_labels = meta.get("labels") if isinstance(meta, dict) else None
        found = self._index.match(node_labels if isinstance(node_labels, dict) else _NO_LABELS)
        if found is None:
            return None
        try:
            return _assess_node(node, found[0], self.versions, self.target, self.multi_arch)
        except faults.FAULTS as exc:
            scope = ScopeType.CONTROL_PLANE if found[0].name == mco.MASTER else ScopeType.WORKER_POOL
            self.node_faults.append(faults.unassessable_object("Node", "", "nodes", node, exc, scope))
            return None

    def insight(self, a: nodes_mod.NodeAssessment) -> NodeStatusInsight:
        return nodes_mod.node_insight(a, pool_ref=self._pool_refs[a.pool])

    def pools_and_health(
        self, by_pool: Mapping[str, Iterable[nodes_mod.NodeAssessment]], node_clock: int
    ) -> tuple[list[MachineConfigPoolStatusInsight], list[HealthInsight]]:
        """Pool insights and the node and paused-pool health insights, in oc's order (per pool: its
        nodes' health, then the paused pool's), from every pool's node assessments."""
        pool_insights: list[MachineConfigPoolStatusInsight] = []
        health: list[HealthInsight] = []
        for name, pool in self._pool_by_name.items():
            counters = pools_mod.PoolCounters()
            for a in by_pool.get(name, ()):
                counters.add(a)
                health.extend(nodes_mod.node_health(a, node_clock))
            try:
                paused = pools_mod.paused_pool_health(pool, counters)
                pool_insight = pools_mod.pool_insight(pool, counters)
            except faults.FAULTS as exc:
                group, scope = mco.MCO_GROUP, ScopeType.WORKER_POOL
                health.append(
                    faults.unassessable_object("MachineConfigPool", group, "machineconfigpools", pool, exc, scope)
                )
                continue
            if paused is not None:
                health.append(paused)
            pool_insights.append(pool_insight)
        health.extend(self.pool_faults)
        health.extend(self.node_faults)
        return pool_insights, health


def _identity(insight: InsightShape) -> tuple[str, str]:
    """What an insight is about: its kind and its object's name (a health insight: its uid); the
    same for a model and for the plain insight a reader gives."""
    if isinstance(insight, NodeInsightShape):  # first: most insights are nodes'
        return "node", insight.name
    if isinstance(insight, ClusterVersionInsightShape):
        return "cv", insight.resource.name
    if isinstance(insight, ClusterOperatorInsightShape):
        return "co", insight.name
    if isinstance(insight, PoolInsightShape):
        return "mcp", insight.name
    if isinstance(insight, HealthInsightShape):
        return "health", insight.uid
    raise TypeError(f"not an insight: {type(insight).__name__}")


def stamp_transition_times(insights: list[Insight], previous: Iterable[InsightShape], now: int) -> None:
    """Give conditions without a source time (zero time) a real one: kept if unchanged, else now
    (`insights`: computed ones; `previous`: computed ones, or what a reader gives, models or plain)."""
    before: dict[tuple[str, str], InsightShape] = {_identity(i): i for i in previous}
    for insight in insights:
        if isinstance(insight, HealthInsightShape):
            continue  # no conditions
        old = before.get(_identity(insight))
        old_conditions: dict[str, ConditionShape] = {}
        if old is not None and not isinstance(old, HealthInsightShape):
            old_conditions = {c.type: c for c in old.conditions}
        stamped = []
        for cond in insight.conditions:
            if cond.last_transition_time == ZERO_TIME:
                prev: ConditionShape | None = old_conditions.get(cond.type)
                same = prev is not None and prev.status == cond.status and prev.reason == cond.reason
                keep = same and prev is not None and prev.last_transition_time != ZERO_TIME
                when = prev.last_transition_time if keep and prev is not None else now
                cond = Condition(cond.type, cond.status, cond.reason, cond.message, when)
            stamped.append(cond)
        insight.conditions = stamped  # a new list: conditions may be shared between insights
