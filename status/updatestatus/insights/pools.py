"""MachineConfigPool insights and the paused-pool health insight, from the assessments of the
pool's nodes as oc counts them."""

from __future__ import annotations

from cvo_py.runtime.gotext.durations import go_percent
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.insights.health import health, health_uid
from status.updatestatus.insights.kinds import (
    ConditionStatus,
    ConditionType,
    ImpactLevel,
    ImpactType,
    NodeSummaryType,
    PoolAssessment,
    PoolUpdatingReason,
    ScopeType,
)
from status.updatestatus.insights.mco import MASTER, MCO_GROUP
from status.updatestatus.insights.nodes import NodeAssessment
from status.updatestatus.insights.objects import JSON, name_of
from status.updatestatus.insights.plain import (
    Condition,
    HealthInsight,
    MachineConfigPoolStatusInsight,
    NodeSummary,
    ResourceRef,
)

DOC_PAUSED = (
    "https://docs.openshift.com/container-platform/latest/support/troubleshooting/"
    "troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues"
)


class PoolCounters:
    """A pool's nodes counted as oc counts them for its insight."""

    __slots__ = ("total", "available", "degraded", "excluded", "pending", "outdated", "draining", "progressing",
                 "updated")

    def __init__(self) -> None:
        self.total = self.available = self.degraded = self.excluded = self.pending = 0
        self.outdated = self.draining = self.progressing = self.updated = 0

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
        conditions=[Condition(ConditionType.UPDATING, updating[0], updating[1], updating[2], ZERO_TIME)],
        name=name,
        resource=ResourceRef(MCO_GROUP, "machineconfigpools", name),
        scope_type=ScopeType.CONTROL_PLANE if name == MASTER else ScopeType.WORKER_POOL,
        assessment=assessment,
        completion=go_percent(c.updated / c.total * 100) if c.total else 100,
        summaries=summaries,
    )


def paused_pool_health(pool: JSON, c: PoolCounters) -> HealthInsight | None:
    if c.excluded <= 0 or not (pool.get("spec") or {}).get("paused"):
        return None
    name = name_of(pool)
    return health(
        health_uid("mcp", name, "paused"),
        ZERO_TIME,
        ScopeType.WORKER_POOL,
        [ResourceRef(MCO_GROUP, "machineconfigpools", name)],
        ImpactLevel.WARNING,
        ImpactType.UPDATE_STALLED,
        f"Outdated nodes in a paused pool '{name}' will not be updated",
        "Pool is paused, which stops all changes to the nodes in the pool, including updates. The nodes will "
        "not be updated until the pool is unpaused by the administrator.",
        DOC_PAUSED,
    )
