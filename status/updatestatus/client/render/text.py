"""Insights → the text `oc adm upgrade status` prints, byte for byte.

Reads only insights (and `now`), so a client reading the ConfigMap API and one computing insights
from a snapshot print the same. It takes them by their shape (`status.updatestatus.insights.kinds`):
the plain classes the computation builds and the readers give, or the pydantic models. Insights
are taken in the order given (oc's collection order; see `status.updatestatus.insights.compute`),
which decides the order of equal health insights.
"""

from __future__ import annotations

from collections.abc import Sequence

from cvo_py.runtime.gotext.durations import SECOND, round_duration, sub_times
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.client.details import DETAILS
from status.updatestatus.client.render.controlplane import write_control_plane
from status.updatestatus.client.render.health import write_health
from status.updatestatus.client.render.nodes import RowMemo, write_nodes
from status.updatestatus.client.render.pools import pool_completion, summary_count, write_pools
from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterVersionInsightShape,
    ConditionShape,
    ConditionStatus,
    ConditionType,
    HealthInsightShape,
    InsightShape,
    NodeInsightShape,
    NodeSummaryType,
    PoolInsightShape,
    find_condition,
)

NOT_UPDATING = "The cluster is not updating.\n"  # all oc prints then (it reads no alerts either)


class RenderError(Exception):
    """Insights that cannot be rendered (what oc reports as an error)."""


def detail_flags(details: str) -> tuple[bool, bool, bool]:
    """(operators, nodes, health) detailed, from a --details value."""
    if details not in DETAILS:
        raise RenderError(
            f"invalid value for --details: {details} (must be one of none, all, nodes, health, operators)"
        )
    return (details in ("all", "operators"), details in ("all", "nodes"), details in ("all", "health"))


def shows_update(insights: Sequence[InsightShape]) -> bool:
    """Whether `render` shows an update for these insights (not NOT_UPDATING, nor an error): what
    oc decides before it reads the alerts, decided without rendering."""
    cv = next((i for i in insights if isinstance(i, ClusterVersionInsightShape)), None)
    progressing = find_condition(cv.conditions, ConditionType.PROGRESSING) if cv is not None else None
    if progressing is None or not any(isinstance(i, ClusterOperatorInsightShape) for i in insights):
        return False
    workers = [i for i in insights if isinstance(i, PoolInsightShape) and i.name != "master"]
    return _updating(progressing, workers)


def _updating(progressing: ConditionShape, workers: Sequence[PoolInsightShape]) -> bool:
    """oc's rule: the ClusterVersion is Progressing, or a worker pool with nodes is not complete."""
    worker_outdated = any(summary_count(p, NodeSummaryType.TOTAL) > 0 and pool_completion(p) != 100 for p in workers)
    return progressing.status == ConditionStatus.TRUE or worker_outdated


def render(
    insights: Sequence[InsightShape],
    now: int,
    details: str = "none",
    *,
    caveat: str | None = None,
    memo: RowMemo | None = None,
) -> str:
    """The full `oc adm upgrade status` output for these insights at `now` (ns since the epoch).

    `caveat`: the insights may be stale or partial; the health section says it instead of
    "Update is proceeding well" (see `write_health`). `memo`: rows of node insights already worked
    out by an earlier call, for a caller that renders again as the insights change."""
    operators_detailed, nodes_detailed, health_detailed = detail_flags(details)
    cv = next((i for i in insights if isinstance(i, ClusterVersionInsightShape)), None)
    if cv is None:
        raise RenderError(
            "no cluster version information available - "
            "you must be connected to an OpenShift version 4 server "
            "to fetch the current version"
        )
    progressing = find_condition(cv.conditions, ConditionType.PROGRESSING)
    if progressing is None:
        raise RenderError("no current Progressing info, see `oc describe clusterversion` for more details.\n")
    operators = [i for i in insights if isinstance(i, ClusterOperatorInsightShape)]
    if not operators:
        raise RenderError(
            "no cluster operator information available - you must be connected to an OpenShift version 4 server"
        )
    pools = [i for i in insights if isinstance(i, PoolInsightShape)]
    nodes_by_pool: dict[str, list[NodeInsightShape]] = {p.name: [] for p in pools}
    for n in insights:
        if isinstance(n, NodeInsightShape) and n.pool_resource.name in nodes_by_pool:
            nodes_by_pool[n.pool_resource.name].append(n)
    health = [i for i in insights if isinstance(i, HealthInsightShape)]

    master = next((p for p in pools if p.name == "master"), None)
    workers = [p for p in pools if p.name != "master"]
    if not _updating(progressing, workers):
        return NOT_UPDATING

    started = cv.started_at if cv.started_at != ZERO_TIME else progressing.last_transition_time
    updating_for = round_duration(sub_times(now, started), SECOND)

    out: list[str] = []
    write_control_plane(out, cv, operators, now, operators_detailed)
    if master is not None:
        write_nodes(out, master, nodes_by_pool[master.name], nodes_detailed, memo)
    if any(summary_count(p, NodeSummaryType.TOTAL) > 0 for p in workers):
        out.append("\n= Worker Upgrade =\n")
        write_pools(out, workers)
        for p in workers:
            write_nodes(out, p, nodes_by_pool[p.name], nodes_detailed, memo)
    out.append("\n")
    write_health(out, health, now, updating_for, health_detailed, caveat)
    if memo is not None:
        memo.done()
    return "".join(out)
