"""Health insights → oc's Update Health section, in oc's order."""

from __future__ import annotations

from collections.abc import Sequence

from cvo_py.runtime import gosort
from cvo_py.runtime.gotext.durations import SECOND, short_duration, sub_times, truncate_duration
from cvo_py.runtime.gotext.quoting import escape
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.client.render.tabwriter import TabWriter, cell
from status.updatestatus.insights.kinds import HealthInsightShape, ImpactLevel, ImpactType, ResourceRefShape

_LABEL_WIDTH = len("Description: ")


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
