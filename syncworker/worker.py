"""The sync worker: the loop that starts passes over the task graph of a payload.

    worker = SyncWorker(applier, operators_informer, on_report, Timing(interval=...))
    worker.start()
    worker.update(work, starting_mode(history, image))   # the first work starts the first pass
    ...
    worker.stop()                                        # the pass is cut short, no thread stays

A pass is `syncworker.syncpass.run_pass`, cut short through its `syncworker.cancel.Cancel`.
`SyncWorker` is idle until its first work. A pass that succeeds counts as completed, and the next
runs Reconciling after the interval; one that fails keeps its mode and the next comes after an
eighth, a quarter, a half, then the whole interval (+0-20 %). New work (`passes.new_work`) cuts
the running pass short and starts the next at once, Updating unless still Initializing; a cut
pass's last report is not given, its work being no longer current. A ClusterOperator whose
`operator` version, Available or Degraded changes wakes the loop, which starts a pass only when
not Reconciling.

Reports go to `on_report` as immutable `passes.Report`s, through `passes.gate` (after a failed
pass, the retry's progress is dropped until it passes the failed pass's). `on_report` is called
on the pass's threads, one at a time, and must not block. Facts:
`../shared/reference/sync-worker-facts.md` §3, §5 and §6.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Protocol

from cvo_py.runtime import klog
from cvo_py.runtime.gotext.quoting import escape
from cvo_py.runtime.kube import JSON
from syncworker import operators
from syncworker.cancel import Cancel
from syncworker.modes import Mode
from syncworker.passes import Report, Timing, Work, gate, mode_for_new_work, new_work, same_payload, starts_pass
from syncworker.syncpass import TaskApplier, run_pass

log = logging.getLogger(__name__)


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
