"""Node insights → oc's node tables (one per pool), with the rows oc omits counted."""

from __future__ import annotations

from typing import NamedTuple

from cvo_py.runtime.gotext.durations import short_duration
from cvo_py.runtime.gotext.quoting import escape
from status.updatestatus.client.render.pools import pool_completion
from status.updatestatus.client.render.tabwriter import TabWriter, cell
from status.updatestatus.insights.kinds import (
    ConditionStatus,
    ConditionType,
    NodeInsightShape,
    NodeUpdatingReason,
    PoolInsightShape,
)

NODE_ROW_LIMIT = 10

_PHASES = ("Draining", "Updating", "Rebooting", "Paused", "Pending", "Updated")
_ASSESSMENTS = ("Degraded", "Unavailable", "Progressing", "Excluded", "Outdated", "Completed")
_ASSESSMENT_BY_PHASE = {
    "Paused": "Excluded",
    "Pending": "Outdated",
    "Draining": "Progressing",
    "Updating": "Progressing",
    "Rebooting": "Progressing",
    "Updated": "Completed",
}
_PHASE_BY_REASON = {
    NodeUpdatingReason.DRAINING: "Draining",
    NodeUpdatingReason.UPDATING: "Updating",
    NodeUpdatingReason.REBOOTING: "Rebooting",
    NodeUpdatingReason.COMPLETED: "Updated",
    NodeUpdatingReason.PAUSED: "Paused",
    NodeUpdatingReason.PENDING: "Pending",
}


class NodeRow(NamedTuple):
    name: str
    assessment: str
    phase: str
    version: str
    est: str
    message: str
    is_updated: bool
    is_updating: bool
    is_unavailable: bool
    is_degraded: bool

    @property
    def sort_key(self) -> tuple[int, int, bytes]:
        return (_ASSESSMENT_RANK[self.assessment], _PHASE_RANK[self.phase], self.name.encode())


_ASSESSMENT_RANK = {assessment: rank for rank, assessment in enumerate(_ASSESSMENTS)}
_PHASE_RANK = {phase: rank for rank, phase in enumerate(_PHASES)}
_UPDATING, _AVAILABLE, _DEGRADED = ConditionType.UPDATING, ConditionType.AVAILABLE, ConditionType.DEGRADED
_TRUE, _FALSE, _UNKNOWN = ConditionStatus.TRUE, ConditionStatus.FALSE, ConditionStatus.UNKNOWN


def node_row(n: NodeInsightShape) -> NodeRow:
    updating = available = degraded = None
    for c in n.conditions:  # the first of each type, as find_condition (one pass: this runs per node)
        kind = c.type
        if kind == _UPDATING:
            if updating is None:
                updating = c
        elif kind == _AVAILABLE:
            if available is None:
                available = c
        elif kind == _DEGRADED and degraded is None:
            degraded = c
    if updating is None or updating.status == _UNKNOWN:
        # the MCD reports Done before the node runs the target: oc prints it Updated, still updating
        phase, is_updating, is_updated = "Updated", True, False
    else:
        phase = _PHASE_BY_REASON.get(updating.reason, "Pending")
        is_updating = updating.status == _TRUE
        is_updated = updating.status == _FALSE and updating.reason == NodeUpdatingReason.COMPLETED
    is_unavailable = available is not None and available.status == _FALSE
    is_degraded = degraded is not None and degraded.status == _TRUE
    assessment = _ASSESSMENT_BY_PHASE[phase]
    message = ""
    if is_unavailable and not is_updating and available is not None:
        assessment = "Unavailable"
        message = available.message
    if is_degraded and degraded is not None:
        assessment = "Degraded"
        message = degraded.message
    if len(n.name.encode()) >= 8:
        message = message.replace(n.name, "<node>")
    if n.est_to_complete is None:
        est = "?"
    elif n.est_to_complete == 0:
        est = "-"
    else:
        est = "+" + short_duration(n.est_to_complete)
    return NodeRow(
        name=n.name,
        assessment=assessment,
        phase=phase,
        version=n.version or "?",
        est=est,
        message=message,
        is_updated=is_updated,
        is_updating=is_updating,
        is_unavailable=is_unavailable,
        is_degraded=is_degraded,
    )


class RowMemo:
    """The rows of node insights already worked out, for a caller that renders the same insight
    objects again (`upgrade-status --watch`: only a changed node's insight is a new object). A row
    is a function of its insight alone; an entry is used only for the very object it was made from."""

    def __init__(self) -> None:
        self._rows: dict[int, tuple[NodeInsightShape, NodeRow]] = {}
        self._used: dict[int, tuple[NodeInsightShape, NodeRow]] = {}

    def row(self, n: NodeInsightShape) -> NodeRow:
        entry = self._rows.get(id(n))
        if entry is None or entry[0] is not n:
            entry = (n, node_row(n))
        self._used[id(n)] = entry
        return entry[1]

    def done(self) -> None:
        """One rendering is over: keep the rows it used, drop the rest."""
        self._rows, self._used = self._used, {}


def write_nodes(
    out: list[str],
    pool: PoolInsightShape,
    nodes: list[NodeInsightShape],
    detailed: bool,
    memo: RowMemo | None = None,
) -> None:
    if not nodes:
        return
    rows = sorted((memo.row(n) if memo is not None else node_row(n) for n in nodes), key=lambda r: r.sort_key)
    is_master = pool.name == "master"
    if is_master and pool_completion(pool) == 100:
        out.append(f"\nAll control plane nodes successfully updated to {escape(nodes_version(rows[0]))}\n")
        return
    out.append("\nControl Plane Nodes" if is_master else f"\nWorker Pool Nodes: {escape(pool.name)}")
    tw = TabWriter()
    tw.write("\nNAME\tASSESSMENT\tPHASE\tVERSION\tEST\tMESSAGE\n")
    omitted = dict.fromkeys(("total", "completed", "available", "progressing", "outdated", "draining", "excluded"), 0)
    for i, r in enumerate(rows):
        if detailed or i < NODE_ROW_LIMIT or r.is_degraded or (r.is_unavailable and not r.is_updating):
            tw.write(f"{cell(r.name)}\t{r.assessment}\t{r.phase}\t{cell(r.version)}\t{r.est}\t{cell(r.message)}\n")
            continue
        omitted["total"] += 1
        omitted["completed" if r.is_updated else "outdated"] += 1
        omitted["available"] += not r.is_unavailable
        omitted["draining"] += r.phase == "Draining"
        omitted["excluded"] += r.phase == "Paused"
        omitted["progressing"] += r.assessment == "Progressing"
    out.append(tw.flush())
    if omitted["total"]:
        o = omitted
        out.append(
            "...\n"
            f"Omitted additional {o['total']} Total, {o['completed']} Completed, {o['available']} Available, "
            f"{o['progressing']} Progressing, {o['outdated']} Outdated, {o['draining']} Draining, "
            f"{o['excluded']} Excluded, and 0 Degraded nodes.\n"
            "Pass along --details=nodes to see all information.\n"
        )


def nodes_version(row: NodeRow) -> str:
    return "" if row.version == "?" else row.version
