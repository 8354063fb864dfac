"""The payload-retrieval scheduler: at most one retrieval at a time, for the newest requested target.

The ClusterVersion status loop asks for what the spec wants on every sync and reads back the
latest acceptance; retrievals run on their own thread, so a sync never waits for one.

The precondition checks (an injected `Preconditions`) run here, for every target other than the
operator's own release: before verification and the version Pod when the request names the
target's version, so a refused update costs no Pod; after the payload is loaded when it names only
an image (the version is known only then). Upstream runs them after the load in every case. A
blocking failure (unless forced) ends the attempt with `ReleaseAccepted=False/PreconditionChecks`;
a warning goes ahead and is recorded as the accepted risk.
"""

from __future__ import annotations

import collections
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from payload import acceptance as acc
from payload.acceptance import PreconditionOutcome, ReleaseAcceptance
from payload.release import MULTI, Acceptance, Release
from payload.retrieval import RetrievalResult

log = logging.getLogger(__name__)

Report = Callable[[ReleaseAcceptance], None]


class Retriever(Protocol):
    """One payload retrieval (payload.retrieval.PayloadRetriever)."""

    # What the last retrieve() produced beyond the condition (loaded version, verified), or None.
    last_result: RetrievalResult | None

    def retrieve(self, image: str, version: str, force: bool) -> ReleaseAcceptance:
        """Block until the payload is in place or has failed, reporting every change."""
        ...

    def cancel(self, why: str) -> None:
        """End a retrieval in flight soon (the operator is stopping, or it is no longer wanted)."""
        ...


# Builds a retriever that reports through the given callback (payload.retrieval.PayloadRetriever).
RetrieverFactory = Callable[[Report], Retriever]

# The precondition checks of a target (its version known) and whether the update is forced.
Preconditions = Callable[[Release, bool], PreconditionOutcome]


@dataclass(frozen=True)
class Outcome:
    """A retrieval starting (`state` is the "Retrieving and verifying" state) or ending (its final
    state): the target as requested, and the exception when it ended with one instead of a state of its own.
    With `preconditions`, the checks of `target` passed (perhaps with a warning) at that point."""

    target: Release
    state: ReleaseAcceptance
    error: BaseException | None = None
    preconditions: PreconditionOutcome | None = None


class RetrievalCoordinator:
    """At most one retrieval at a time, for the newest requested target.

    `request()` is called from every sync with what the spec asks for (or None). Reports of a
    superseded retrieval are dropped, and the retrieval itself is cancelled at once (another target,
    force toggled, or nothing asked for any more). A failed target is tried again, as upstream's
    sync worker retries a failed pass, after `retry_after`/8, /4, /2, then `retry_after` seconds
    for each failure in a row (each ×`jitter()`, ±20 % by default), or at once when `force`
    changes or `retry_failed` says its inputs changed; a retrieved one is not retried. So a failure
    that retrying may fix (a registry that refuses connections) is reported at once and still ends
    in the update once the cause is gone.

    With `show_failure_within` > 0, a retrieval that reports a failure (status False) waits, up to
    that many seconds, until the status loop calls `shown()` with that state, before it goes on to
    clean up: deleting the version Pod is a write the API server would otherwise commit ahead of
    the status write, each waiting for its own disk sync, so the admin would see the failure later.
    """

    def __init__(
        self,
        make_retriever: RetrieverFactory,
        on_change: Callable[[], None],
        *,
        retry_after: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = lambda: random.uniform(0.8, 1.2),
        preconditions: Preconditions | None = None,
        local_image: str = "",
        show_failure_within: float = 0.0,
    ) -> None:
        self._make = make_retriever
        self._preconditions = preconditions
        self._local_image = local_image  # the operator's own release: no checks, as upstream
        self._on_change = on_change
        self.retry_after = retry_after
        self.show_failure_within = show_failure_within
        self._clock = clock
        self._jitter = jitter
        self._lock = threading.Lock()
        # Notified when the status loop has shown a state, the wanted target changed, or on stop.
        self._shown_changed = threading.Condition(self._lock)
        self._shown: Acceptance | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._wanted: tuple[Release, bool] | None = None
        self._running: tuple[Release, bool] | None = None
        self._latest: Acceptance | None = None
        # → (status, when a failure may be retried: its clock time; never for a success).
        self._finished: dict[tuple[Release, bool], tuple[str, float]] = {}
        self._failed_in_a_row: dict[tuple[Release, bool], int] = {}
        # Retrievals that ended, for the status loop to report as Events (bounded: it drains them).
        self._outcomes: collections.deque[Outcome] = collections.deque(maxlen=64)
        # Inputs changed while an attempt ran: which of its failures to retry at once.
        self._retry_pending: Callable[[ReleaseAcceptance], bool] | None = None
        self._failures: dict[tuple[Release, bool], ReleaseAcceptance] = {}  # the last failure of each
        self._current: Retriever | None = None  # the retrieval in flight, cancelled by stop()
        self._thread: threading.Thread | None = None
        self.retrievals = 0

    def start(self) -> RetrievalCoordinator:
        self._thread = threading.Thread(target=self._run, name="payload-retrieval", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        with self._lock:
            self._shown_changed.notify_all()
            current = self._current
        if current is not None:
            current.cancel("the operator is stopping")  # it would otherwise run on until its deadline
        if self._thread is not None:
            self._thread.join(timeout)

    def request(self, target: Release | None, force: bool = False) -> None:
        superseded: Retriever | None = None
        with self._lock:
            if target is None:
                self._wanted, self._latest = None, None
                self._shown_changed.notify_all()
                superseded = self._current if self._running is not None else None
            else:
                wanted = (target, force)
                if self._wanted != wanted:
                    self._wanted = wanted
                    self._shown_changed.notify_all()
                    # A target asked for again (A → B → A) is retrieved again: its earlier acceptance
                    # was dropped when B was asked for.
                    self._finished.pop(wanted, None)
                    self._failures.pop(wanted, None)
                    self._failed_in_a_row.pop(wanted, None)
                    if self._latest is not None and not self._latest.target.same_as(target):
                        self._latest = None
                if self._running is not None and self._running != wanted:
                    superseded = self._current
                if self._should_start(wanted):
                    self._wake.set()
        if superseded is not None:
            # The admin asked for something else (another target, force toggled, or nothing): the
            # retrieval under way is of no use any more; end it now (its Pod is deleted) so the
            # wanted one starts at once instead of after the old one's deadline.
            superseded.cancel("superseded by a new spec.desiredUpdate")

    def acceptance(self) -> Acceptance | None:
        with self._lock:
            return self._latest

    def shown(self, acceptance: Acceptance | None) -> None:
        """The status loop wrote a status computed from `acceptance` (or found it written)."""
        with self._lock:
            self._shown = acceptance
            self._shown_changed.notify_all()

    def retry_failed(self, applies: Callable[[ReleaseAcceptance], bool] = lambda _final: True) -> bool:
        """What failed retrievals depended on changed (e.g. the verification configuration): try
        the wanted target again now rather than after its retry delay, if its failure `applies`.
        True if it will be."""
        with self._lock:
            for key, (status, _when) in list(self._finished.items()):
                final = self._failures.get(key)
                if status != "True" and final is not None and applies(final):
                    self._finished[key] = (status, float("-inf"))
            if self._running is not None:
                # The attempt under way may have read the old inputs: if it fails so, go again at once.
                self._retry_pending = applies
                return True
            wanted = self._wanted
            if wanted is None or not self._should_start(wanted):
                return False
            self._wake.set()
            return True

    def take_outcomes(self) -> list[Outcome]:
        """The retrievals that started or ended since the last call (of targets still wanted), oldest first."""
        with self._lock:
            outcomes = list(self._outcomes)
            self._outcomes.clear()
            return outcomes

    def idle(self) -> bool:
        with self._lock:
            return self._running is None and (self._wanted is None or not self._should_start(self._wanted))

    def _wanted_now(self) -> tuple[Release, bool] | None:
        with self._lock:
            return self._wanted

    def _should_start(self, wanted: tuple[Release, bool]) -> bool:
        if self._running == wanted:
            return False
        finished = self._finished.get(wanted)
        if finished is None:
            return True
        status, retry_at = finished
        return status != "True" and self._clock() >= retry_at

    def retry_delay(self, failures: int) -> float:
        """Seconds before the next attempt after `failures` failures in a row (before jitter)."""
        return self.retry_after / (1 << max(0, 4 - failures))  # /8, /4, /2, then the whole interval

    def _next_wake(self) -> float:
        """Seconds until the wanted target's retry is due (at most `retry_after`: the loop also
        looks again then)."""
        with self._lock:
            finished = self._finished.get(self._wanted) if self._wanted is not None else None
        if finished is None or finished[0] == "True":
            return self.retry_after
        return min(self.retry_after, max(0.0, finished[1] - self._clock()))

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._next_wake())
            self._wake.clear()
            if self._stop.is_set():
                return
            with self._lock:
                wanted = self._wanted
                if wanted is None or not self._should_start(wanted) or self._running is not None:
                    continue
                self._running = wanted
            self._retrieve(wanted)

    def _check(self, target: Release, force: bool) -> PreconditionOutcome | ReleaseAcceptance:
        """The checks' outcome, or the ReleaseAccepted state that blocks (an error in a check blocks)."""
        assert self._preconditions is not None
        try:
            outcome = self._preconditions(target, force)
        except Exception as exc:  # a bug in a check must not let the update through unchecked
            log.exception("precondition checks of %s failed", target.label())
            outcome = PreconditionOutcome(blocked=True, message=f"the checks could not run: {exc}")
        if outcome.blocked:
            return acc.precondition_blocked(target.version, target.image, outcome.message)
        return outcome

    def _retrieve(self, wanted: tuple[Release, bool]) -> None:
        target, force = wanted
        with self._lock:
            finished = self._finished.get(wanted)
        retrying_a_failure = finished is not None and finished[0] == "False"

        def report(state: ReleaseAcceptance) -> None:
            with self._lock:
                if self._wanted != wanted:
                    return  # superseded: the admin asked for something else meanwhile
                if retrying_a_failure and state.status == "Unknown":
                    # Upstream flips to Unknown "Retrieving..." on every retry, hiding why the last
                    # attempt failed (and restarting alerts' `for`): keep the failure until this ends.
                    return
                if state.status == "True":
                    # Accepted only once this attempt ends: after the precondition checks of an
                    # image-only request, with the loaded version, verification and accepted risks.
                    return
                latest = self._latest = Acceptance(target, state, self._latest.verified if self._latest else False)
            self._on_change()
            if state.status == "False" and self.show_failure_within > 0:
                # The retrieval cleans up next: let the failure reach the status first.
                with self._lock:
                    self._shown_changed.wait_for(
                        lambda: self._shown == latest or self._wanted != wanted or self._stop.is_set(),
                        self.show_failure_within,
                    )

        self.retrievals += 1
        checked: PreconditionOutcome | None = None
        final: ReleaseAcceptance | None = None
        local = bool(self._local_image) and target.image == self._local_image
        if self._preconditions is not None and target.version and not local:
            before = self._check(target, force)
            if isinstance(before, ReleaseAcceptance):
                final = before  # refused: no verification, no Pod
            else:
                checked = before
        retriever: Retriever | None = None
        error: Exception | None = None
        if final is None:
            with self._lock:
                if self._wanted == wanted:
                    self._outcomes.append(Outcome(target, acc.retrieving(target.version, target.image)))
            try:
                retriever = self._make(report)
                with self._lock:
                    self._current = retriever
                if self._stop.is_set():
                    retriever.cancel("the operator is stopping")
                elif self._wanted_now() != wanted:
                    retriever.cancel("superseded by a new spec.desiredUpdate")
                final = retriever.retrieve(target.image, target.version, force)
            except Exception as exc:  # a bug or an I/O failure outside retrieval's own reporting
                log.exception("payload retrieval of %s failed", target.label())
                final = ReleaseAcceptance("False", "RetrievePayload", f"Retrieving payload failed: {exc}")
                error = exc
        # The retriever also tells the loaded version and whether the release was verified.
        result = retriever.last_result if retriever is not None else None
        loaded_version = result.version if result is not None else ""
        verified = result.verified if result is not None else False
        local = local or (result is not None and result.local)
        architecture = MULTI if result is not None and result.multi_arch else ""
        filled = Release(target.version or loaded_version, target.image, target.url, target.channels, architecture)
        if final.status == "True" and checked is None and self._preconditions is not None and not local:
            after = self._check(filled, force)  # an image-only request: its version is known now
            if isinstance(after, ReleaseAcceptance):
                final = after
            else:
                checked = after
        risks = (
            []
            if result is None or not result.verification_error
            else [acc.verification_forced(target.version, target.image, result.verification_error).message]
        )
        if checked is not None and checked.message:
            risks.append(checked.message)
        with self._lock:
            self._running = None
            self._current = None
            pending, self._retry_pending = self._retry_pending, None
            retry_now = pending is not None and final.status != "True" and pending(final)
            if final.status == "True":
                self._finished[wanted] = (final.status, float("inf"))
                self._failures.pop(wanted, None)
                self._failed_in_a_row.pop(wanted, None)
            else:
                failures = self._failed_in_a_row[wanted] = self._failed_in_a_row.get(wanted, 0) + 1
                delay = self.retry_delay(failures) * self._jitter()
                self._finished[wanted] = (final.status, float("-inf") if retry_now else self._clock() + delay)
                self._failures[wanted] = final
            if self._wanted == wanted:
                warned = checked is not None and bool(checked.message)
                self._latest = Acceptance(filled, final, verified, "\n".join(risks), local, warned)
                if checked is not None and final.status == "True":
                    # As upstream, their Events come with the payload loaded (not with every attempt).
                    self._outcomes.append(Outcome(filled, final, None, checked))
                self._outcomes.append(Outcome(target, final, error))
            more = self._wanted is not None and self._should_start(self._wanted)
        if more:
            self._wake.set()
        self._on_change()
