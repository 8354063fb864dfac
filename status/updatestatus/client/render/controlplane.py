"""The control plane's section of `oc adm upgrade status`, byte for byte: the update's assessment,
target, completion, duration with oc's estimate of the time remaining, the operators' health, and
with `--details operators` the table of the operators updating."""

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
    ConditionStatus,
    ConditionType,
    VersionMetadataKey,
    VersionShape,
    find_condition,
)

STALLED_AFTER = -10 * MINUTE  # an estimate this far overrun: the update is Stalled


class OperatorCounts(NamedTuple):
    """The operators by their Updating and Healthy conditions, as oc counts them."""

    total: int
    updated: int
    updating: list[ClusterOperatorInsightShape]
    waiting: int
    unavailable: int
    degraded: int

    @property
    def health(self) -> str:
        text = f"{self.total - self.unavailable - self.degraded} Healthy"
        if self.unavailable:
            text += f", {self.unavailable} Unavailable"
        if self.degraded:
            text += f", {self.degraded} Available but degraded"
        return text


def count_operators(operators: list[ClusterOperatorInsightShape]) -> OperatorCounts:
    def is_(co: ClusterOperatorInsightShape, status: ConditionStatus, reason: str) -> bool:
        c = find_condition(co.conditions, ConditionType.UPDATING)
        return c is not None and c.status == status and c.reason == reason

    updated = sum(is_(co, ConditionStatus.FALSE, ClusterOperatorUpdatingReason.UPDATED) for co in operators)
    updating = [co for co in operators if is_(co, ConditionStatus.TRUE, ClusterOperatorUpdatingReason.PROGRESSING)]
    waiting = sum(is_(co, ConditionStatus.FALSE, ClusterOperatorUpdatingReason.PENDING) for co in operators)
    unavailable = degraded = 0
    for co in operators:
        healthy = find_condition(co.conditions, ConditionType.HEALTHY)
        if healthy is None or healthy.status == ConditionStatus.TRUE:
            continue
        if healthy.reason == ClusterOperatorHealthyReason.DEGRADED:
            degraded += 1
        else:
            unavailable += 1
    return OperatorCounts(len(operators), updated, updating, waiting, unavailable, degraded)


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


def duration_text(cv: ClusterVersionInsightShape, updating_for: int) -> str:
    """How long the update took or is taking. oc leaves a history entry that ends before it starts
    (or starts after now) unspecified: it is inconsistent data, said as such instead of a negative
    duration."""
    if updating_for >= 0:
        rounded = round_duration(updating_for, MINUTE if updating_for > 10 * MINUTE else SECOND)
        return short_duration(rounded)
    if cv.completed_at is not None:
        return "unknown: history[0].completionTime is before its startedTime"
    return "unknown: history[0].startedTime is after now"


def assessment_text(est: int) -> str:
    """The assessment of an update whose estimated time remaining is `est` (negative: overrun)."""
    if est < STALLED_AFTER:
        return "Stalled"
    return "Progressing - Slow" if est < 0 else "Progressing"


def remaining_text(cv: ClusterVersionInsightShape, est: int, updating_for: int) -> str:
    """oc's estimate of the time remaining, or why it gives none."""
    if has_metadata(cv.versions.target, VersionMetadataKey.ARCHITECTURE):
        return "N/A for Multi-Architecture Migration"
    if est < STALLED_AFTER:
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
    counts = count_operators(operators)
    completion_at = cv.completed_at if cv.completed_at is not None else now
    updating_for = sub_times(completion_at, cv.started_at) if cv.started_at != ZERO_TIME else 0
    duration = duration_text(cv, updating_for)
    out.append("= Control Plane =\n")
    if counts.updated == counts.total:
        stamp = format_time(completion_at, nanos=False)
        target = escape(cv.versions.target.version)
        out.append(f"Update to {target} successfully completed at {stamp} (duration: {duration})\n")
        return
    est = time_remaining(cv, operators, now)
    if est != 0:
        duration += f" (Est. Time Remaining: {remaining_text(cv, est, updating_for)})"
    out.append(f"Assessment:      {assessment_text(est)}\n")
    out.append(f"Target Version:  {target_version_text(cv)}\n")
    if counts.updating:
        out.append(f"Updating:        {', '.join(escape(co.name) for co in counts.updating)}\n")
    completion = counts.updated / counts.total * 100
    out.append(
        f"Completion:      {completion:.0f}% ({counts.updated} operators updated, {len(counts.updating)} updating, "
        f"{counts.waiting} waiting)\n"
    )
    out.append(f"Duration:        {duration}\n")
    out.append(f"Operator Health: {counts.health}\n")
    if detailed and counts.updating:
        write_updating_operators(out, counts.updating, now)


def write_updating_operators(out: list[str], updating: list[ClusterOperatorInsightShape], now: int) -> None:
    """The table `--details operators` adds: each updating operator's progress, its message's
    lines one under the other."""
    out.append("\nUpdating Cluster Operators")
    tw = TabWriter()
    tw.write("\nNAME\tSINCE\tREASON\tMESSAGE\n")
    for co in updating:
        progressing = find_condition(co.conditions, ConditionType.PROGRESSING) or find_condition(
            co.conditions, ConditionType.UPDATING
        )
        assert progressing is not None  # an updating operator has its Updating condition
        since = short_duration(sub_times(now, progressing.last_transition_time))
        reason = cell(_ellipsis(progressing.reason, 20)) or "-"
        lines = [cell(line) for line in progressing.message.split("\n")]
        tw.write(f"{cell(co.name)}\t{since}\t{reason}\t{lines[0]}\n")
        for line in lines[1:]:
            tw.write(f"\t\t\t{line}\n")
    out.append(tw.flush())


def _ellipsis(text: str, n: int) -> str:
    return text[: n - 3] + "..." if len(text) > n else text
