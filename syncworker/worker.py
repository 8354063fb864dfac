"""The sync worker: passes over the task graph of a payload, and the loop that starts them.

    worker = SyncWorker(applier, operators_informer, on_report, Timing(interval=...))
    worker.start()
    worker.update(work, starting_mode(history, image))   # the first work starts the first pass
    ...
    worker.stop()                                        # the pass is cut short, no thread stays

**A pass** (`run_pass`) runs `task_graph(manifests, mode, attempt)` with upstream's parallelism
(`passes.parallelism`): a node starts once every node before it succeeded, free nodes go out in
index order; it first precreates its ClusterOperators, then runs its tasks in order. A task the
apply-time selection skips is logged (`Skipping <task>: <why>`) and never done; before every other
task the pass reports N done. A task is tried with its mode's back-off (`Timing.backoff`): an
error with `retry` (an API error, a CRD not yet Established) is tried again, any other (a
ClusterOperator not available, a Deployment that cannot roll out) fails the task at once; every
failed try counts in `applier.payload_errors`. A failed task ends its node, and no node after it
starts this pass; the others carry on. A `Report`-effect error (a Degraded ClusterOperator while
installing) is recorded and the node goes on. The pass's errors are condensed by
`errors.summarize`; a pass cut short (new work, a stop, its timeout) where no node failed says
`<n> incomplete task nodes, beginning with <task>`, and tries cut short are no errors.

**The loop** (`SyncWorker`) is idle until its first work. A pass that succeeds counts as
completed, and the next runs Reconciling after the interval; one that fails keeps its mode and
the next comes after an eighth, a quarter, a half, then the whole interval (+0-20 %). New work
(`passes.new_work`) cuts the running pass short and starts the next at once, Updating unless
still Initializing; a cut pass's last report is not given, its work being no longer current. A
ClusterOperator whose `operator` version, Available or Degraded changes wakes the loop, which
starts a pass only when not Reconciling.

Reports go to `on_report` as immutable `passes.Report`s, through `passes.gate` (after a failed
pass, the retry's progress is dropped until it passes the failed pass's). `on_report` is called
on the pass's threads, one at a time, and must not block. Facts:
`../shared/reference/sync-worker-facts.md` §3, §5 and §6.
"""

from __future__ import annotations

import heapq
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import Enum
from typing import Protocol

from cvo_py.runtime import klog
from cvo_py.runtime.gotext.quoting import escape
from cvo_py.runtime.kube import JSON
from syncworker import errors, operators, select
from syncworker.applier import OperatorCache, PayloadErrors, task_ref
from syncworker.errors import Effect, TaskError
from syncworker.graph import TaskGraph, task_graph
from syncworker.manifest import Manifest
from syncworker.modes import Mode
from syncworker.passes import (
    Report,
    TaskBackoff,
    Timing,
    Work,
    gate,
    incomplete,
    mode_for_new_work,
    new_work,
    parallelism,
    same_payload,
    starts_pass,
)

log = logging.getLogger(__name__)


class Cancel:
    """One pass's cancellation: set by new work or a stop, or reached at its deadline (the pass
    timeout). Every wait of the pass goes through it, so a cut pass ends within one request."""

    def __init__(self, deadline: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.deadline = deadline
        self._clock = clock
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._wakers: list[Callable[[], None]] = []

    def cancel(self) -> None:
        self._event.set()
        with self._lock:
            wakers = list(self._wakers)
        for wake in wakers:
            wake()

    def on_cancel(self, wake: Callable[[], None]) -> None:
        """Call `wake` when cancelled (for a wait that is not on this object)."""
        with self._lock:
            self._wakers.append(wake)
        if self._event.is_set():
            wake()

    def cancelled(self) -> bool:
        return self._event.is_set() or self._clock() >= self.deadline

    def remaining(self) -> float:
        return max(0.0, self.deadline - self._clock())

    def sleep(self, seconds: float) -> bool:
        """Wait `seconds`, or less when cut short; True when it was."""
        return self._event.wait(min(seconds, self.remaining())) or self.cancelled()


class TaskApplier(Protocol):
    """What a pass needs of the applier (`syncworker.applier.Applier`)."""

    payload_errors: PayloadErrors

    def apply(
        self, manifest: Manifest, mode: Mode, owner_uid: str, operator_cache: OperatorCache
    ) -> TaskError | None: ...

    def precreate(self, manifest: Manifest, owner_uid: str) -> None: ...


class NodeResult(Enum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CUT = "cut"  # cancelled before its tasks were done


def run_graph(
    graph: TaskGraph, workers: int, run_node: Callable[[int], NodeResult], cancel: Cancel, name: str = "graph"
) -> list[NodeResult | None]:
    """Run the graph's nodes on `workers` threads (joined before returning): a node once all the
    nodes it waits for succeeded, free nodes in index order; none after a cancellation. Each
    node's result, None for a node that never started."""
    nodes = graph.nodes
    results: list[NodeResult | None] = [None] * len(nodes)
    waiting = [len(node.after) for node in nodes]
    successors = graph.successors()
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    running = 0
    changed = threading.Condition()

    def wake() -> None:
        with changed:
            changed.notify_all()

    cancel.on_cancel(wake)

    def work() -> None:
        nonlocal running
        while True:
            with changed:
                while not ready:
                    if running == 0 or cancel.cancelled():
                        return
                    changed.wait(cancel.remaining())
                if cancel.cancelled():
                    return
                index = heapq.heappop(ready)
                running += 1
            result = run_node(index)
            with changed:
                running -= 1
                results[index] = result
                if result is NodeResult.SUCCEEDED:
                    for after in sorted(successors[index]):
                        waiting[after] -= 1
                        if waiting[after] == 0:
                            heapq.heappush(ready, after)
                changed.notify_all()

    threads = [
        threading.Thread(target=work, name=f"{name}-{i}", daemon=True) for i in range(max(1, min(workers, len(nodes))))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


class _Cut:
    """What a task's tries end in, besides done (None) and a TaskError: cut short by the pass's
    cancellation (no error: nothing failed)."""


CUT = _Cut()


@dataclass(frozen=True)
class PassOutcome:
    """A pass's end: N done, every task error it recorded (Report ones included), its failure
    (condensed, or the incomplete-nodes error), and whether it was cut short."""

    done: int
    errors: tuple[TaskError, ...]
    failure: TaskError | None
    cut: bool


@dataclass
class _PassState:
    done: int = 0
    errors: list[TaskError] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def run_pass(
    work: Work,
    mode: Mode,
    attempt: int,
    *,
    applier: TaskApplier,
    operator_cache: OperatorCache,
    backoff: TaskBackoff,
    cancel: Cancel,
    progress: Callable[[int], None],
    graph: TaskGraph | None = None,
) -> PassOutcome:
    """One pass over `work` in `mode` (module docstring); `progress(N)` before each task."""
    manifests = work.payload.manifests
    graph = graph or task_graph(manifests, mode, attempt)
    version = work.release.version
    verbose = klog.DEBUG if mode is Mode.RECONCILING and attempt == 0 else klog.NORMAL
    state = _PassState()
    tries, sleeps = backoff.schedule()

    def run_task(manifest: Manifest) -> TaskError | _Cut | None:
        task = task_ref(manifest)
        error: TaskError | None = None
        for index in range(tries):
            try:
                error = applier.apply(manifest, mode, work.cluster_version_uid, operator_cache)
            except Exception as exc:  # a bug must fail the task, never the pass or the process
                error = errors.from_other(task, f"unexpected error: {type(exc).__name__}: {exc}")
            if error is None:
                return None
            applier.payload_errors.add(version)
            log.error("error running apply for %s: %s", task, escape(error.detail or error.message))
            if not error.retry:
                return error
            if index < len(sleeps) and cancel.sleep(sleeps[index]):
                return CUT
        return error

    def run_node(index: int) -> NodeResult:
        tasks = [manifests[number - 1] for number in graph.nodes[index].tasks]
        for manifest in tasks:
            if cancel.cancelled():
                return NodeResult.CUT
            if (
                operators.is_cluster_operator(manifest.obj)
                and select.excluded_at_apply(manifest, work.selection) is None
            ):
                applier.precreate(manifest, work.cluster_version_uid)
        for manifest in tasks:
            if cancel.cancelled():
                return NodeResult.CUT
            task = task_ref(manifest)
            why = select.excluded_at_apply(manifest, work.selection)
            if why is not None:
                klog.v(klog.NORMAL).info("Skipping %s: %s", task, escape(why))
                continue
            with state.lock:
                progress(state.done)
            klog.v(verbose).info("Running sync for %s", task)
            outcome = run_task(manifest)
            if outcome is CUT:
                return NodeResult.CUT
            if isinstance(outcome, TaskError):
                with state.lock:
                    state.errors.append(outcome)
                if outcome.effect is not Effect.REPORT:
                    return NodeResult.FAILED
            with state.lock:
                state.done += 1
            klog.v(verbose).info("Done syncing for %s", task)
        return NodeResult.SUCCEEDED

    results = run_graph(graph, parallelism(mode, len(graph.nodes)), run_node, cancel, name=f"sync-{mode.value.lower()}")
    failure = errors.summarize(state.errors)
    unfinished = [i for i, result in enumerate(results) if result in (None, NodeResult.CUT)]
    failed = any(result is NodeResult.FAILED for result in results)
    if unfinished and not failed:
        first = next((i for i in unfinished if graph.nodes[i].tasks), None)
        if first is not None:
            failure = incomplete(len(unfinished), str(task_ref(manifests[graph.nodes[first].tasks[0] - 1])))
    return PassOutcome(state.done, tuple(state.errors), failure, bool(unfinished) and cancel.cancelled())


class OperatorInformer(Protocol):
    """The informer of ClusterOperators the worker reads (`cvo_py.runtime.informer.Informer`)."""

    def get(self, name: str, namespace: str | None = None) -> JSON | None: ...

    def add_handler(self, handler: Callable[[str, JSON, JSON | None], None]) -> None: ...


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SyncWorker:
    """The loop around passes (module docstring): `update()` hands it work, `start()` and `stop()`
    run it on one thread of its own, the passes' threads inside it."""

    def __init__(
        self,
        applier: TaskApplier,
        cluster_operators: OperatorInformer,
        on_report: Callable[[Report], None],
        timing: Timing,
        *,
        now: Callable[[], datetime] = _utc_now,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
        name: str = "sync-worker",
    ) -> None:
        self.applier = applier
        self.cluster_operators = cluster_operators
        self.timing = timing
        self.name = name
        self._on_report = on_report
        self._now = now
        self._clock = clock
        self._jitter = jitter
        self._changed = threading.Condition()
        # Guarded by _changed:
        self._work: Work | None = None
        self._mode = Mode.INITIALIZING
        self._attempt = 0  # failed passes in a row
        self._completed = 0  # passes of this payload that succeeded
        self._serial = 0  # bumped by new work: a pass of older work is cut and not reported
        self._new = False  # new work waits for its pass
        self._activity = False  # a ClusterOperator changed since the last pass started
        self._due: float | None = None  # when the next pass is due (monotonic)
        self._stopping = False
        self._running: Cancel | None = None
        # Held while a report is given, and while a pass is cut, so that no report of a cut pass
        # is given after `update()` or `stop()` returned.
        self._reporting = threading.RLock()
        self._last: Report | None = None
        self._thread: threading.Thread | None = None
        cluster_operators.add_handler(self._on_operator_event)

    # -- what the composer calls ------------------------------------------------------------------

    def update(self, work: Work, mode: Mode) -> None:
        """Hand the worker its work. `mode` is the first pass's (`passes.starting_mode`), read on
        the first call only; later, new work runs Updating unless still Initializing."""
        with self._changed:
            why = new_work(self._work, work)
            if not why:
                self._work = work  # a new generation or owner: the next pass takes it
                return
            if self._work is None:
                self._mode = mode
            else:
                self._mode = mode_for_new_work(self._mode)
            if not same_payload(self._work, work):
                self._completed = 0
            self._work = work
            self._attempt = 0
            self._serial += 1
            self._new = True
            running, self._running = self._running, None
            self._changed.notify_all()
        klog.v(klog.NORMAL).info("Work updated: %s", why)
        if running is not None:
            with self._reporting:
                running.cancel()

    def start(self) -> SyncWorker:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Cut the running pass short and end the loop: within one request's time, no thread left."""
        with self._changed:
            self._stopping = True
            running, self._running = self._running, None
            self._changed.notify_all()
        if running is not None:
            with self._reporting:
                running.cancel()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def last_report(self) -> Report | None:
        with self._reporting:
            return self._last

    # -- the loop -----------------------------------------------------------------------------------

    def _on_operator_event(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        if old is None or event_type != "MODIFIED":
            return
        change = operators.activity(old, obj)
        if change:
            klog.v(klog.NORMAL).info("Notify the sync worker: %s", change)
            with self._changed:
                self._activity = True
                self._changed.notify_all()

    def _next(self) -> tuple[Work, Mode, int, int, int, Cancel] | None:
        """Wait until a pass is to start (None: stopping), and take it."""
        with self._changed:
            while not self._stopping:
                if self._work is not None:
                    due = self._due is not None and self._clock() >= self._due
                    if starts_pass(self._mode, new=self._new, due=due, operator_activity=self._activity):
                        break
                    self._activity = False  # a settled cluster waits for its interval
                timeout = None if self._due is None or self._work is None else max(0.0, self._due - self._clock())
                self._changed.wait(timeout)
            if self._stopping or self._work is None:
                return None
            self._new = self._activity = False
            self._due = None
            cancel = Cancel(self._clock() + self.timing.pass_timeout(self._mode), self._clock)
            self._running = cancel
            return self._work, self._mode, self._attempt, self._completed, self._serial, cancel

    def _run(self) -> None:
        while True:
            taken = self._next()
            if taken is None:
                return
            self._pass(*taken)

    def _pass(self, work: Work, mode: Mode, attempt: int, completed: int, serial: int, cancel: Cancel) -> None:
        klog.v(klog.NORMAL).info(
            "apply: %s on generation %d in state %s at attempt %d",
            escape(work.release.version or work.release.image or "<unknown>"),
            work.generation,
            mode.value,
            attempt,
        )
        with self._reporting:
            baseline = self._last
        started = self._now()

        def progress(done: int) -> None:
            self._give(baseline, cancel, self._report(work, mode, attempt, completed, done, started))

        outcome = run_pass(
            work,
            mode,
            attempt,
            applier=self.applier,
            operator_cache=self.cluster_operators.get,
            backoff=self.timing.backoff(mode),
            cancel=cancel,
            progress=progress,
        )
        with self._changed:
            if self._running is cancel:
                self._running = None
            if self._stopping or serial != self._serial:
                total = len(work.payload.manifests)
                klog.v(klog.NORMAL).info("The pass was cut short: %d of %d done", outcome.done, total)
                return
            if outcome.failure is None:
                self._completed += 1
                self._attempt = 0
                self._mode = Mode.RECONCILING
                self._due = self._clock() + self.timing.interval
                klog.v(klog.NORMAL).info("Sync succeeded, reconciling")
            else:
                self._attempt += 1
                self._due = self._clock() + self.timing.next_pass_after(self._attempt, self._jitter())
                log.error("Result of work: %s", escape(outcome.failure.message))
            last = replace(
                self._report(work, mode, attempt, self._completed, outcome.done, started),
                failure=outcome.failure,
                completed=outcome.failure is None,
            )
            # given while the outcome is current: new work waits for it, and is never followed by it
            self._give(baseline, None, last)

    def _report(
        self, work: Work, mode: Mode, attempt: int, completed: int, done: int, started: datetime
    ) -> Report:
        return Report(
            release=work.release,
            version_hash=work.payload.version_hash,
            generation=work.generation,
            mode=mode,
            attempt=attempt,
            total=len(work.payload.manifests),
            done=done,
            at=self._now(),
            completed_passes=completed,
            started=started,
        )

    def _give(self, baseline: Report | None, cancel: Cancel | None, report: Report) -> None:
        with self._reporting:
            if cancel is not None and cancel.cancelled():
                return  # the pass was cut: what it did is no longer what the worker is doing
            gated = gate(baseline, report)
            if gated is None:
                klog.v(klog.NORMAL).info("Dropping status report from earlier in sync loop")
                return
            self._last = gated
            self._on_report(gated)
