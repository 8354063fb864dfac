"""Pool insights → oc's worker pool table and the completion it computes from a pool's summaries."""

from __future__ import annotations

from status.updatestatus.client.render.tabwriter import TabWriter, cell
from status.updatestatus.insights.kinds import NodeSummaryType, PoolInsightShape


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
