"""The sync worker's decisions about passes, as pure functions of their inputs and an injected
`now`: which mode a pass runs in, how many workers it has, how often a task is tried, when the
next pass starts, what a pass reports and which of its reports the status is given.

    Work                                     what the worker applies: a loaded payload, the
                                             apply-time selection, the generation, the owner
    new_work(current, wanted) -> str | None  what makes `wanted` new work ("" when it is not)
    starting_mode(history, image) -> Mode    the mode of a process's first pass
    mode_for_new_work(mode) -> Mode          Updating, unless still Initializing
    starts_pass(mode, ...) -> bool           whether a wake-up starts a pass now
    Timing                                   every wait, injectable: the interval, the task
                                             back-offs, the pass timeouts, the pass back-off
    TaskBackoff.schedule() -> (tries, sleeps) upstream's per-task retries
    parallelism(mode, nodes) -> int          workers of a pass
    Report, gate(baseline, report)           a pass's immutable snapshot; whether it reaches status
    incomplete(count, first) -> TaskError    what a pass cut short says when nothing failed

Facts: `../shared/reference/sync-worker-facts.md` §0.3, §3 and §6.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from payload.release import Release
from syncworker.errors import UPDATE_PAYLOAD_FAILED, Effect, TaskError
from syncworker.load import Payload
from syncworker.modes import Mode
from syncworker.select import Selection

# Upstream's minimum reconcile interval: this many seconds times a factor in [1, 2), drawn once
# per process.
RECONCILE_INTERVAL_BASE = 120.0
# Workers of a pass (Initializing: one per node).
UPDATING_WORKERS = 16
RECONCILING_WORKERS = 2
# A failed pass's next one comes after the interval divided by these, by failed passes in a row
# (then after the interval), plus up to this fraction of it.
FAILED_PASS_DIVISORS = (8, 4, 2)
PASS_JITTER = 0.2


@dataclass(frozen=True)
class Work:
    """What the worker applies: a loaded payload, the apply-time selection (gates, capabilities,
    overrides), the ClusterVersion generation it answers, the ClusterVersion's UID (every created
    object's owner) and `force` of the desired update."""

    payload: Payload
    selection: Selection
    generation: int
    cluster_version_uid: str
    force: bool = False

    @property
    def release(self) -> Release:
        return self.payload.release


def new_work(current: Work | None, wanted: Work) -> str:
    """What makes `wanted` new work for a worker applying `current` ("" when it is not): a new
    payload, changed overrides, capabilities or gates, or `force`. The generation and the owner
    alone are not: the next pass takes them."""
    if current is None:
        return "first work"
    if (current.payload.release.image, current.payload.version_hash) != (
        wanted.payload.release.image,
        wanted.payload.version_hash,
    ):
        return "a new payload"
    before, after = current.selection, wanted.selection
    if [dict(o) for o in before.overrides] != [dict(o) for o in after.overrides]:
        return "changed overrides"
    if (before.known_capabilities, before.enabled_capabilities) != (
        after.known_capabilities,
        after.enabled_capabilities,
    ):
        return "changed capabilities"
    if before.enabled_gates != after.enabled_gates:
        return "changed feature gates"
    if current.force != wanted.force:
        return "a changed force"
    return ""


def same_payload(current: Work | None, wanted: Work) -> bool:
    return current is not None and (current.release.image, current.payload.version_hash) == (
        wanted.release.image,
        wanted.payload.version_hash,
    )


def starting_mode(history: Sequence[Mapping[str, Any]], desired_image: str) -> Mode:
    """The mode of a process's first pass, from ClusterVersion's `status.history`: no Completed
    entry is an install (Initializing); the newest entry Completed for the desired image is a
    settled cluster (Reconciling); anything else an update (Updating)."""
    if not any(isinstance(e, Mapping) and e.get("state") == "Completed" for e in history):
        return Mode.INITIALIZING
    newest = history[0] if history and isinstance(history[0], Mapping) else {}
    if newest.get("state") == "Completed" and newest.get("image") == desired_image:
        return Mode.RECONCILING
    return Mode.UPDATING


def mode_for_new_work(mode: Mode) -> Mode:
    """New work is an update, unless the install has not completed yet."""
    return mode if mode is Mode.INITIALIZING else Mode.UPDATING


def starts_pass(mode: Mode, *, new: bool, due: bool, operator_activity: bool) -> bool:
    """Whether a wake-up starts a pass now: new work and a due pass always do; a ClusterOperator's
    change does only while not Reconciling (a settled cluster waits for its interval)."""
    return new or due or (operator_activity and mode is not Mode.RECONCILING)


@dataclass(frozen=True)
class TaskBackoff:
    """apimachinery's wait.Backoff as upstream sets it for a task: tried, then `duration` slept
    and multiplied by `factor`, `steps` times at most; reaching `cap` ends the tries."""

    duration: float
    factor: float
    steps: int
    cap: float = 0.0

    def schedule(self) -> tuple[int, tuple[float, ...]]:
        """(tries, the sleep after each failed try); a sleep after the last try is slept before
        the task gives up, as upstream's loop does."""
        steps, duration = self.steps, self.duration
        tries, sleeps = 0, []
        while steps > 0:
            tries += 1
            if steps == 1:
                break
            steps -= 1
            sleeps.append(duration)
            duration *= self.factor
            if self.cap > 0 and duration > self.cap:
                steps = 0  # reaching the cap ends the back-off (apimachinery's Step)
        return tries, tuple(sleeps)


# Installing: 4 tries, 1, 2 and 4 s apart. Otherwise: 2 tries 10 s apart, then 13 s before the task fails.
INSTALL_TASK_BACKOFF = TaskBackoff(1.0, 2.0, 4)
TASK_BACKOFF = TaskBackoff(10.0, 1.3, 3, 15.0)


@dataclass(frozen=True)
class Timing:
    """Every wait of the worker, so tests and benchmarks can shrink them. `interval` is the
    minimum reconcile interval (`reconcile_interval`)."""

    interval: float
    install_backoff: TaskBackoff = INSTALL_TASK_BACKOFF
    task_backoff: TaskBackoff = TASK_BACKOFF

    def backoff(self, mode: Mode) -> TaskBackoff:
        return self.install_backoff if mode is Mode.INITIALIZING else self.task_backoff

    def pass_timeout(self, mode: Mode) -> float:
        """How long a pass may run: the interval while installing, else twice it."""
        return self.interval if mode is Mode.INITIALIZING else 2 * self.interval

    def next_pass_after(self, attempt: int, jitter: float) -> float:
        """Seconds from the end of a pass to the next: the interval after a success (`attempt`
        0), else an eighth, a quarter, a half, then the whole interval for 1, 2, 3, more failed
        passes in a row, plus `jitter` (in [0, 1)) times 20 % of that."""
        if attempt <= 0:
            return self.interval
        divisor = FAILED_PASS_DIVISORS[attempt - 1] if attempt <= len(FAILED_PASS_DIVISORS) else 1
        delay = self.interval / divisor
        return delay + delay * PASS_JITTER * jitter


def reconcile_interval(factor: float, base: float = RECONCILE_INTERVAL_BASE) -> float:
    """Upstream's minimum reconcile interval: `base` times (1 + `factor`), `factor` drawn once per
    process in [0, 1)."""
    return base * (1.0 + factor)


def parallelism(mode: Mode, nodes: int) -> int:
    """Workers of a pass: one per node while installing, 16 while updating, 2 while reconciling."""
    if mode is Mode.INITIALIZING:
        return max(1, nodes)
    return UPDATING_WORKERS if mode is Mode.UPDATING else RECONCILING_WORKERS


@dataclass(frozen=True)
class Report:
    """One snapshot of a pass, as the status side reads it.

    `total` is M, the payload's manifests; `done` N, the tasks this pass finished so far
    (reported before each task; a task skipped by the apply-time selection is never done, so a
    whole pass may end below M). `failure` is the pass's condensed error, in its last report
    only; `completed` is True in the last report of a pass that ended without one, and
    `completed_passes` counts such passes of this payload. `last_progress` is when a report last
    moved the fraction done forward; `started` when its pass started."""

    release: Release
    version_hash: str
    generation: int
    mode: Mode
    attempt: int
    total: int
    done: int
    at: datetime
    failure: TaskError | None = None
    completed: bool = False
    completed_passes: int = 0
    last_progress: datetime | None = field(default=None, compare=False)
    # When this report's pass started (None: not told): the status side restarts the clocks of the
    # ClusterOperators it waits on when a pass starts at attempt 0.
    started: datetime | None = None

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total > 0 else 0.0

    @property
    def reconciling(self) -> bool:
        return self.mode is Mode.RECONCILING


def gate(baseline: Report | None, report: Report) -> Report | None:
    """The report as status gets it, or None when it is dropped. `baseline` is the last report
    of the previous pass: after a failed pass, the next pass's progress on the same image is
    dropped while its fraction done is below the failed pass's, so the failure and its N stay
    shown until the retry gets past that point. `last_progress` moves to the report's time when
    its fraction passes the baseline's."""
    if baseline is None:
        return replace(report, last_progress=report.at)
    if (
        baseline.failure is not None
        and report.failure is None
        and baseline.release.image == report.release.image
        and report.fraction < baseline.fraction
    ):
        return None
    return replace(report, last_progress=report.at if report.fraction > baseline.fraction else baseline.last_progress)


def incomplete(count: int, first: str) -> TaskError:
    """What a pass that was cut short (cancelled, timed out) says when none of its nodes failed:
    how many nodes did not finish and the first task of the first of them."""
    return TaskError(UPDATE_PAYLOAD_FAILED, f"{count} incomplete task nodes, beginning with {first}", Effect.FAIL)
