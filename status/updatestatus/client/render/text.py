"""Insights → the text `oc adm upgrade status` prints, byte for byte: the whole output, with its
nodes', pools' and health sections (the control plane's is `render.controlplane`).

Reads only insights (and `now`), so a client reading the ConfigMap API and one computing insights
from a snapshot print the same. It takes them by their shape (`status.updatestatus.insights.kinds`):
the plain classes the computation builds and the readers give, or the pydantic models. Insights
are taken in the order given (oc's collection order; see `status.updatestatus.insights.compute`),
which decides the order of equal health insights.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from cvo_py.runtime import gosort
from cvo_py.runtime.gotext.durations import (
    SECOND,
    round_duration,
    short_duration,
    sub_times,
    truncate_duration,
)
from cvo_py.runtime.gotext.quoting import escape
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.client.details import DETAILS
from status.updatestatus.client.render.controlplane import write_control_plane
from status.updatestatus.client.render.tabwriter import TabWriter, cell
from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterVersionInsightShape,
    ConditionStatus,
    ConditionType,
    HealthInsightShape,
    ImpactLevel,
    ImpactType,
    InsightShape,
    NodeInsightShape,
    NodeSummaryType,
    NodeUpdatingReason,
    PoolInsightShape,
    ResourceRefShape,
    find_condition,
)

NOT_UPDATING = "The cluster is not updating.\n"  # all oc prints then (it reads no alerts either)
NODE_ROW_LIMIT = 10
_LABEL_WIDTH = len("Description: ")

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


class RenderError(Exception):
    """Insights that cannot be rendered (what oc reports as an error)."""


def detail_flags(details: str) -> tuple[bool, bool, bool]:
    """(operators, nodes, health) detailed, from a --details value."""
    if details not in DETAILS:
        raise RenderError(
            f"invalid value for --details: {details} (must be one of none, all, nodes, health, operators)"
        )
    return (details in ("all", "operators"), details in ("all", "nodes"), details in ("all", "health"))


# --- nodes -------------------------------------------------------------------------------------


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
            tw.write(
                f"{cell(r.name)}\t{r.assessment}\t{r.phase}\t{cell(r.version)}\t{r.est}\t{cell(r.message)}\n"
            )
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


def summary_count(pool: PoolInsightShape, type_: NodeSummaryType) -> int:
    """The pool's count of nodes of the summary's type (0 when it has no such summary)."""
    return next((s.count for s in pool.summaries if s.type == type_), 0)


def pool_completion(pool: PoolInsightShape) -> float:
    total = summary_count(pool, NodeSummaryType.TOTAL)
    if total == 0:
        return float("nan")
    return (total - summary_count(pool, NodeSummaryType.OUTDATED)) / total * 100


def write_pools(out: list[str], pools: list[PoolInsightShape]) -> None:
    tw = TabWriter()
    tw.write("\nWORKER POOL\tASSESSMENT\tCOMPLETION\tSTATUS\n")
    for p in pools:
        total = summary_count(p, NodeSummaryType.TOTAL)
        if total == 0:
            tw.write(f"{cell(p.name)}\tEmpty\t\t0 Total\n")
            continue
        outdated = summary_count(p, NodeSummaryType.OUTDATED)
        status = (
            f"{summary_count(p, NodeSummaryType.AVAILABLE)} Available, "
            f"{summary_count(p, NodeSummaryType.PROGRESSING)} Progressing, "
            f"{summary_count(p, NodeSummaryType.DRAINING)} Draining"
        )
        for kind in (NodeSummaryType.EXCLUDED, NodeSummaryType.DEGRADED):
            if summary_count(p, kind):
                status += f", {summary_count(p, kind)} {kind.value}"
        completion = f"{pool_completion(p):.0f}% ({total - outdated}/{total})"
        tw.write(f"{cell(p.name)}\t{p.assessment.value}\t{completion}\t{status}\n")
    out.append(tw.flush())


# --- health ------------------------------------------------------------------------------------


def kind_label(r: ResourceRefShape) -> str:
    """How oc names the resource type: `<resource>.<group>` (or just `<resource>`)."""
    return f"{r.resource}.{r.group}" if r.group else r.resource


def _started(h: HealthInsightShape, now: int) -> int:
    """An insight without a start of its own started, as oc dates it, when it is looked at."""
    return now if h.started_at is None else h.started_at


def _since(started_at: int, now: int) -> str:
    if started_at == ZERO_TIME or started_at > now:  # unknown, or inconsistent (after now)
        return "-"
    return short_duration(truncate_duration(sub_times(now, started_at), SECOND))


def order_health(insights: Sequence[HealthInsightShape], now: int) -> list[HealthInsightShape]:
    """oc's order: Go's `sort.Slice` by start time (newest first, zero last), then `sort.SliceStable`
    by level (most severe first). `sort.Slice` is not stable, so beyond 12 insights the order of
    equals is Go's pdqsort's, which depends on the input order (oc's collection order)."""
    keyed = [(_started(h, now), -h.impact.level.severity, h) for h in insights]
    gosort.slice_sort(keyed, _newer)
    # every stable sort gives the same order as Go's sort.SliceStable
    keyed.sort(key=_severity_key)
    return [h for _, _, h in keyed]


def _newer(x: tuple[int, int, HealthInsightShape], y: tuple[int, int, HealthInsightShape]) -> bool:
    return x[0] > y[0]


def _severity_key(x: tuple[int, int, HealthInsightShape]) -> int:
    return x[1]


def write_health(
    out: list[str],
    insights: list[HealthInsightShape],
    now: int,
    updating_for: int,
    detailed: bool,
    caveat: str | None = None,
) -> None:
    """oc's Update Health section; with a `caveat` (the insights may be stale or partial) it is the
    first entry, and "Update is proceeding well" is never said."""
    shown = [h for h in insights if h.impact.summary and h.impact.description and h.remediation.reference]
    shown = order_health(shown, now)
    out.append("= Update Health =\n")
    if detailed and (shown or caveat):
        blocks = [] if caveat is None else [f"Message: {caveat}\n"]
        for h in shown:
            lines = [f"Message: {escape(h.impact.summary)}"]
            lines.append(f"  {'Since:':<{_LABEL_WIDTH}}{_since(_started(h, now), now)}")
            lines.append(f"  {'Level:':<{_LABEL_WIDTH}}{h.impact.level.value}")
            lines.append(f"  {'Impact:':<{_LABEL_WIDTH}}{h.impact.type.value}")
            lines.append(f"  {'Reference:':<{_LABEL_WIDTH}}{escape(h.remediation.reference)}")
            if h.scope.resources:
                lines.append("  Resources:")
                names: dict[str, list[str]] = {}
                for r in h.scope.resources:
                    names.setdefault(escape(kind_label(r)), []).append(
                        escape(f"{r.namespace}/{r.name}" if r.namespace else r.name)
                    )
                labels = sorted(escape(kind_label(r)) + ": " for r in h.scope.resources)
                width = max(len(label) for label in labels)
                for label in labels:
                    lines.append(f"    {label:<{width}}{', '.join(sorted(names[label[:-2]]))}")
            description = ("\n" + " " * 15 + ", ").join(escape(line) for line in h.impact.description.split("\n"))
            lines.append(f"  {'Description:':<{_LABEL_WIDTH}}{description}")
            blocks.append("\n".join(lines) + "\n")
        out.append("\n".join(blocks))
        return
    tw = TabWriter()
    tw.write("SINCE\tLEVEL\tIMPACT\tMESSAGE\n")
    if caveat is not None:
        tw.write(f"-\t{ImpactLevel.WARNING.value}\t{ImpactType.UNKNOWN.value}\t{caveat}\n")
        if not shown:
            out.append(tw.flush())
            return
    if not shown:
        since = short_duration(updating_for) if updating_for >= 0 else "-"  # after now: inconsistent
        tw.write(f"{since}\t{ImpactLevel.INFO.value}\t{ImpactType.NONE.value}\tUpdate is proceeding well\n")
        out.append(tw.flush())
        return
    for h in shown:
        tw.write(
            f"{_since(_started(h, now), now)}\t{h.impact.level.value}\t{h.impact.type.value}\t"
            f"{cell(h.impact.summary)}\n"
        )
    out.append(tw.flush())
    if not (len(shown) == 1 and shown[0].impact.level == ImpactLevel.INFO):
        out.append("\nRun with --details=health for additional description and links to related online documentation\n")


# --- top level ---------------------------------------------------------------------------------


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
    worker_outdated = any(summary_count(p, NodeSummaryType.TOTAL) > 0 and pool_completion(p) != 100 for p in workers)
    if progressing.status != ConditionStatus.TRUE and not worker_outdated:
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
