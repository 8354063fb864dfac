"""What the sync worker's reports say in `Failing` and `Progressing` (pure; `now` is injected).

The worker (`syncworker/`) applies the payload pass after pass and reports each pass as an
immutable `syncworker.passes.Report`: N of M manifests done, and, at a pass's end, its failure,
condensed as upstream condenses it (`syncworker.errors.summarize`: ClusterOperator errors merged
by reason, several as MultipleErrors, each with its effect). The status side adds what only it
keeps, the clocks of the ClusterOperators it waits on, and applies upstream's decision table:

- effect None (an operator updating): Failing False, Progressing `…, waiting on <names>`; once an
  operator waited more than 30 minutes (machine-config 90): Failing Unknown, `SlowClusterOperator`,
  `…, waiting on <names> over 30 minutes which is longer than expected`;
- FailAfterInterval (Degraded): Failing False, `…, waiting up to 40 minutes on <names>`; from 40
  minutes Failing True, `Unable to apply <v>: wait has exceeded 40 minutes for these operators: …`;
- Fail, Report and the rest: Failing True, `Unable to apply <v>: <summary>`
  (`syncworker.errors.summary`);
- MultipleErrors: its None parts dropped; none left is not failing, the rest fail at once;
  Progressing `Unable to apply <v>: an unknown error has occurred: MultipleErrors`;
- anything while reconciling: Failing True, Progressing False `Error while reconciling <v>: <summary>`.

**The clocks** (`operator_clock`): an operator's wait starts when status first sees it named in a
pass's failure (the end of that pass, at most one pass later than upstream, which starts it at the
operator manifest's first apply), and all restart when a pass starts at attempt 0 (new work, or
after a success) and with the process, as upstream's.

Facts: `../shared/reference/upstream-status-facts.md` §3, `sync-worker-facts.md` §5 and §6.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cvo_py.runtime.gotext.durations import TimeFormatError
from cvo_py.runtime.gotext.times import parse_time
from syncworker.errors import MULTIPLE_ERRORS, Effect, TaskError, summarize, summary
from syncworker.passes import Report

SLOW_AFTER = timedelta(minutes=30)
SLOW_MACHINE_CONFIG_AFTER = timedelta(minutes=90)
DEGRADED_GRACE = timedelta(minutes=40)
MACHINE_CONFIG = "machine-config"

SLOW_CLUSTER_OPERATOR = "SlowClusterOperator"


@dataclass(frozen=True)
class WorkerState:
    """What the sync worker tells the status computation, one more immutable input: its latest
    report (None before its first), since when each ClusterOperator named in its failures is waited
    on (`operator_clock`), the objects whose removal it asked for and that are still there
    (Upgradeable), and why the running release's own payload could not be loaded ("" when it was:
    then nothing is applied)."""

    report: Report | None = None
    since: Mapping[str, datetime] = field(default_factory=dict)
    pending_deletions: tuple[str, ...] = ()
    refused: str = ""


@dataclass(frozen=True)
class Clock:
    """The status side's ClusterOperator clocks: since when each is waited on, and the start of
    the pass at attempt 0 they count from."""

    since: Mapping[str, datetime] = field(default_factory=dict)
    epoch: datetime | None = None


def operator_clock(previous: Clock, report: Report | None) -> Clock:
    """The clocks after `report` (module docstring): restarted when its pass started at attempt
    0 after the previous epoch; an operator its failure names is timed from this report if it was
    not already; a completed pass stops them all."""
    if report is None:
        return previous
    epoch, since = previous.epoch, dict(previous.since)
    if report.attempt == 0 and report.started is not None and report.started != epoch:
        epoch, since = report.started, {}
    if report.completed:
        since = {}
    elif report.failure is not None:
        for name in _operator_names(report.failure):
            since.setdefault(name, report.at)
    return Clock(since, epoch)


def _operator_names(error: TaskError) -> tuple[str, ...]:
    """The ClusterOperators an error names (those of a MultipleErrors' parts too)."""
    names = set(error.names)
    for part in error.errors:
        names.update(part.names)
    return tuple(sorted(names))


@dataclass(frozen=True)
class Decision:
    """What Failing and Progressing say about a pass's failure.

    `failing` is (status, reason, message). `working` True: Progressing is "Working towards <v>"
    with `progress_reason` and the optional `tail`; False: the update cannot go on ("Unable to apply
    <v>: <tail>", or "Error while reconciling <v>: <tail>" once reconciling)."""

    failing: tuple[str, str, str]
    working: bool
    progress_reason: str = ""
    tail: str = ""


NOT_FAILING = ("False", "", "")


def decide(failure: TaskError | None, reconciling: bool, since: Mapping[str, datetime], now: datetime) -> Decision:
    """Upstream's decision table (module docstring) for a pass's condensed `failure`."""
    if failure is None:
        return Decision(NOT_FAILING, True)
    if reconciling:
        return Decision(("True", failure.reason, failure.message), False, failure.reason, summary(failure))
    if failure.reason == MULTIPLE_ERRORS:
        # Waiting reasons do not fail; the rest do at once (no grace for a Degraded operator here).
        left = summarize([e for e in failure.errors if e.effect is not Effect.NONE])
        if left is None:
            return Decision(NOT_FAILING, True)
        return Decision(("True", left.reason, left.message), False, failure.reason, summary(failure))
    if failure.effect is Effect.NONE:
        return _waiting(failure, since, now)
    if failure.effect is Effect.FAIL_AFTER_INTERVAL:
        names = failure.names or (failure.name,)
        exceeded = [n for n in names if now - since.get(n, now) >= DEGRADED_GRACE]
        if not exceeded:
            return Decision(NOT_FAILING, True, failure.reason, f"waiting up to 40 minutes on {', '.join(names)}")
        tail = f"wait has exceeded 40 minutes for these operators: {', '.join(exceeded)}"
        return Decision(("True", failure.reason, failure.message), False, failure.reason, tail)
    return Decision(("True", failure.reason, failure.message), False, failure.reason, summary(failure))


def _waiting(error: TaskError, since: Mapping[str, datetime], now: datetime) -> Decision:
    names = error.names or (error.name,)
    slow: list[str] = []
    machine_config = False
    for name in names:
        limit = SLOW_MACHINE_CONFIG_AFTER if name == MACHINE_CONFIG else SLOW_AFTER
        if now - since.get(name, now) > limit:
            if name == MACHINE_CONFIG:
                machine_config = True
            else:
                slow.append(name)
    if not slow and not machine_config:
        return Decision(NOT_FAILING, True, error.reason, f"waiting on {', '.join(names)}")
    if slow and machine_config:
        tail = (
            f"waiting on {', '.join(slow)} over 30 minutes and machine-config over 90 minutes which is longer "
            "than expected"
        )
    elif slow:
        tail = f"waiting on {', '.join(slow)} over 30 minutes which is longer than expected"
    else:
        tail = "waiting on machine-config over 90 minutes which is longer than expected"
    return Decision(("Unknown", SLOW_CLUSTER_OPERATOR, tail), True, error.reason, tail)


def judge(report: Report, since: Mapping[str, datetime], now: datetime) -> Decision:
    """The decision for the worker's latest report at `now`."""
    failure = None if report.completed else report.failure
    return decide(failure, report.reconciling, since, now)


def parse_time_or_none(value: Any) -> datetime | None:
    """A metav1.Time, or None when absent or unreadable (or, like year 0, which Go and the API
    server take, before the first year a datetime holds)."""
    try:
        return datetime.fromtimestamp(parse_time(str(value)) / 1e9, UTC) if value else None
    except (TimeFormatError, ValueError, OverflowError):
        return None
