"""The ClusterVersion and ClusterOperator insights → oc's Control Plane section."""

from __future__ import annotations

from typing import NamedTuple

from cvo_py.runtime.gotext.durations import (
    MINUTE,
    SECOND,
    add_durations,
    round_duration,
    short_duration,
    sub_times,
    truncate_duration,
)
from cvo_py.runtime.gotext.quoting import escape
from cvo_py.runtime.gotext.times import ZERO_TIME, format_time
from status.updatestatus.client.render.tabwriter import TabWriter, cell
from status.updatestatus.insights.estimate import time_remaining
from status.updatestatus.insights.kinds import (
    ClusterOperatorHealthyReason,
    ClusterOperatorInsightShape,
    ClusterOperatorUpdatingReason,
    ClusterVersionInsightShape,
    ConditionShape,
    ConditionStatus,
    ConditionType,
    VersionMetadataKey,
    VersionShape,
    find_condition,
)


def _round_duration(d: int) -> int:
    return round_duration(d, MINUTE) if d > 10 * MINUTE else round_duration(d, SECOND)


def has_metadata(version: VersionShape, key: VersionMetadataKey) -> bool:
    return any(m.key == key for m in version.metadata)


def target_version_text(cv: ClusterVersionInsightShape) -> str:
    target, previous = cv.versions.target, cv.versions.previous
    to, since = escape(target.version), escape(previous.version)
    if has_metadata(previous, VersionMetadataKey.INSTALLATION):
        return f"{to} (a new install)"
    if has_metadata(previous, VersionMetadataKey.PARTIAL):
        return f"{to} (from incomplete {since})"
    if has_metadata(target, VersionMetadataKey.ARCHITECTURE):
        return f"{to} to Multi-Architecture"
    return f"{to} (from {since})"


def _ellipsis(text: str, n: int) -> str:
    return text[: n - 3] + "..." if len(text) > n else text


class _OperatorCounts(NamedTuple):
    total: int
    updated: int
    updating: list[ClusterOperatorInsightShape]
    waiting: int
    unavailable: int
    degraded: int


def _updating_of(co: ClusterOperatorInsightShape) -> ConditionShape | None:
    return find_condition(co.conditions, ConditionType.UPDATING)


def _is(co: ClusterOperatorInsightShape, status: ConditionStatus, reason: str) -> bool:
    c = _updating_of(co)
    return c is not None and c.status == status and c.reason == reason


def _count_operators(operators: list[ClusterOperatorInsightShape]) -> _OperatorCounts:
    unavailable = degraded = 0
    for co in operators:
        healthy = find_condition(co.conditions, ConditionType.HEALTHY)
        if healthy is None or healthy.status == ConditionStatus.TRUE:
            continue
        if healthy.reason == ClusterOperatorHealthyReason.DEGRADED:
            degraded += 1
        else:
            unavailable += 1
    return _OperatorCounts(
        total=len(operators),
        updated=sum(_is(co, ConditionStatus.FALSE, ClusterOperatorUpdatingReason.UPDATED) for co in operators),
        updating=[co for co in operators if _is(co, ConditionStatus.TRUE, ClusterOperatorUpdatingReason.PROGRESSING)],
        waiting=sum(_is(co, ConditionStatus.FALSE, ClusterOperatorUpdatingReason.PENDING) for co in operators),
        unavailable=unavailable,
        degraded=degraded,
    )


def _remaining_text(cv: ClusterVersionInsightShape, est: int, updating_for: int) -> str:
    """oc's "Est. Time Remaining" for an estimate `est` that is not 0."""
    if has_metadata(cv.versions.target, VersionMetadataKey.ARCHITECTURE):
        return "N/A for Multi-Architecture Migration"
    if est < -10 * MINUTE:
        est_duration = truncate_duration(add_durations(updating_for, est), MINUTE)
        return f"N/A; estimate duration was {short_duration(est_duration)}"
    if est < 10 * MINUTE:
        return "<10m"
    return short_duration(est)


def write_control_plane(
    out: list[str],
    cv: ClusterVersionInsightShape,
    operators: list[ClusterOperatorInsightShape],
    now: int,
    detailed: bool,
) -> None:
    counts = _count_operators(operators)
    has_history = cv.started_at != ZERO_TIME
    completion_at = cv.completed_at if cv.completed_at is not None else now
    updating_for = sub_times(completion_at, cv.started_at) if has_history else 0
    out.append("= Control Plane =\n")
    # oc leaves a history entry that ends before it starts (or starts after now) unspecified: it is
    # inconsistent data, said as such instead of a negative duration
    inconsistent = (
        "unknown: history[0].completionTime is before its startedTime"
        if cv.completed_at is not None
        else "unknown: history[0].startedTime is after now"
    )
    duration = short_duration(_round_duration(updating_for)) if updating_for >= 0 else inconsistent
    if counts.updated == counts.total:
        stamp = format_time(completion_at, nanos=False)
        target = escape(cv.versions.target.version)
        out.append(f"Update to {target} successfully completed at {stamp} (duration: {duration})\n")
        return
    est = time_remaining(cv, operators, now)
    assessment = "Progressing"
    if est < -10 * MINUTE:
        assessment = "Stalled"
    elif est < 0:
        assessment = "Progressing - Slow"
    health = f"{counts.total - counts.unavailable - counts.degraded} Healthy"
    if counts.unavailable:
        health += f", {counts.unavailable} Unavailable"
    if counts.degraded:
        health += f", {counts.degraded} Available but degraded"
    if est != 0:
        duration += f" (Est. Time Remaining: {_remaining_text(cv, est, updating_for)})"
    out.append(f"Assessment:      {assessment}\n")
    out.append(f"Target Version:  {target_version_text(cv)}\n")
    if counts.updating:
        out.append(f"Updating:        {', '.join(escape(co.name) for co in counts.updating)}\n")
    completion = counts.updated / counts.total * 100
    out.append(
        f"Completion:      {completion:.0f}% ({counts.updated} operators updated, {len(counts.updating)} updating, "
        f"{counts.waiting} waiting)\n"
    )
    out.append(f"Duration:        {duration}\n")
    out.append(f"Operator Health: {health}\n")
    if detailed and counts.updating:
        _write_updating_operators(out, counts.updating, now)


def _write_updating_operators(out: list[str], updating: list[ClusterOperatorInsightShape], now: int) -> None:
    out.append("\nUpdating Cluster Operators")
    tw = TabWriter()
    tw.write("\nNAME\tSINCE\tREASON\tMESSAGE\n")
    for co in updating:
        progressing = find_condition(co.conditions, ConditionType.PROGRESSING) or _updating_of(co)
        assert progressing is not None
        since = short_duration(sub_times(now, progressing.last_transition_time))
        reason = cell(_ellipsis(progressing.reason, 20)) or "-"
        lines = [cell(line) for line in progressing.message.split("\n")]
        tw.write(f"{cell(co.name)}\t{since}\t{reason}\t{lines[0]}\n")
        for line in lines[1:]:
            tw.write(f"\t\t\t{line}\n")
    out.append(tw.flush())
