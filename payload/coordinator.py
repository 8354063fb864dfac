"""The payload-retrieval scheduler: at most one retrieval at a time, for the newest requested target.

The ClusterVersion status loop states what the spec asks for on every sync (`request()`, with a
`RetrievalRequest` or None); retrievals run on the coordinator's own thread, so a sync never waits
for one, and every state they reach is published on the coordinator's `RetrievalChannel`, which
the status loop reads and acknowledges (`payload.channel`).

The precondition checks come with each request, bound to the cluster as that sync saw it, and run
here for every target other than the operator's own release: before verification and the version
Pod when the request names the target's version, so a refused update costs no Pod; after the
payload is loaded when it names only an image (the version is known only then). Upstream runs them
after the load in every case. A blocking failure (unless forced) ends the attempt with
`ReleaseAccepted=False/PreconditionChecks`; a warning goes ahead and is recorded as the accepted risk.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from cvo_py.runtime import klog
from payload import acceptance as acc
from payload.acceptance import PreconditionOutcome, ReleaseAcceptance
from payload.channel import Outcome, RetrievalChannel
from payload.release import MULTI, Acceptance, Release
from payload.retries import Key, RetryBook
from payload.retrieval import RetrievalResult

log = logging.getLogger(__name__)

Report = Callable[[ReleaseAcceptance], None]
# The precondition checks of a target (its version known) and whether the update is forced.
Preconditions = Callable[[Release, bool], PreconditionOutcome]


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


@dataclass(frozen=True)
class RetrievalRequest:
    """What spec.desiredUpdate asks payload retrieval for, as one status sync saw the cluster. Two
    requests are the same request when they name the same target with the same `force`."""

    target: Release
    force: bool = False
    # The precondition checks, on the cluster as that sync saw it (None: none, as for tests of
    # retrieval alone). The newest request's are the ones that run.
    checks: Preconditions | None = field(default=None, compare=False)
    # What the checks read, as one text: a target they refused is checked again at once when it
    # changes. Computed only when a refusal is compared with it, off the status write's path.
    checks_inputs: Callable[[], str] = field(default=lambda: "", compare=False)

    @property
    def key(self) -> Key:
        return (self.target, self.force)


@dataclass(frozen=True)
class _Ended:
    """How one attempt ended, before it is published."""

    final: ReleaseAcceptance
    filled: Release  # the target with what the payload told (its version for an image-only request)
    result: RetrievalResult | None = None
    checked: PreconditionOutcome | None = None  # the checks passed (perhaps with a warning)
    checked_with: str = ""  # for a refusal: the checks_inputs it was decided on
    error: BaseException | None = None
    local: bool = False


class RetrievalCoordinator:
    """At most one retrieval at a time, for the newest requested target.

    `request()` is called from every sync with what the spec asks for (or None). Reports of a
    superseded retrieval are dropped, and the retrieval itself is cancelled at once (another target,
    force toggled, or nothing asked for any more). A failed target is tried again on the
    `RetryBook`'s schedule (jitter ±20 % by default), or at once when `force` changes, when
    `retry_failed` says its inputs changed, or, for a refusal of the precondition checks, when the
    request's `checks_inputs` changed; a retrieved one is not retried. So a failure that retrying
    may fix (a registry that refuses connections) is reported at once and still ends in the update
    once the cause is gone.

    With `show_failure_within` > 0, a retrieval that reports a failure (status False) waits, up to
    that many seconds, until the status loop acknowledged a snapshot carrying it, before it goes
    on to clean up (see `payload.channel`).
    """

    def __init__(
        self,
        make_retriever: RetrieverFactory,
        *,
        retry_after: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = lambda: random.uniform(0.8, 1.2),
        local_image: str = "",
        show_failure_within: float = 0.0,
    ) -> None:
        self._make = make_retriever
        self._local_image = local_image  # the operator's own release: no checks, as upstream
        self.show_failure_within = show_failure_within
        self._clock = clock
        self.retries = RetryBook(retry_after, jitter)  # guarded by the lock
        self.channel = RetrievalChannel()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._wanted: RetrievalRequest | None = None
        self._running: Key | None = None
        self._latest: Acceptance | None = None
        # Inputs changed while an attempt ran: which of its failures to retry at once.
        self._retry_pending: Callable[[ReleaseAcceptance], bool] | None = None
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
        self.channel.close()
        with self._lock:
            current = self._current
        if current is not None:
            current.cancel("the operator is stopping")  # it would otherwise run on until its deadline
        if self._thread is not None:
            self._thread.join(timeout)

    def request(self, wanted: RetrievalRequest | None) -> None:
        """What the spec asks for now (None: nothing). A changed request is published at once,
        quietly: the caller reads the channel next."""
        superseded: Retriever | None = None
        with self._lock:
            if wanted is None:
                if self._wanted is not None:
                    self._wanted, self._latest = None, None
                    self.channel.publish(None, quiet=True)
                superseded = self._current if self._running is not None else None
            else:
                key = wanted.key
                if self._wanted != wanted:
                    self._wanted = wanted
                    # A target asked for again (A → B → A) is retrieved again: its earlier acceptance
                    # was dropped when B was asked for.
                    self.retries.forget(key)
                    if self._latest is not None and not self._latest.target.same_as(wanted.target):
                        self._latest = None
                    self.channel.publish(self._latest, quiet=True)
                else:
                    self._wanted = wanted  # the same request, with the newest view for its checks
                    if self._running != key and self.retries.recheck(key, wanted.checks_inputs):
                        klog.v(2).info("What the precondition checks read changed: checking the refused target again")
                if self._running is not None and self._running != key:
                    superseded = self._current
                if self._should_start(key):
                    self._wake.set()
        if superseded is not None:
            # The admin asked for something else (another target, force toggled, or nothing): the
            # retrieval under way is of no use any more; end it now (its Pod is deleted) so the
            # wanted one starts at once instead of after the old one's deadline.
            superseded.cancel("superseded by a new spec.desiredUpdate")

    def retry_failed(self, applies: Callable[[ReleaseAcceptance], bool] = lambda _final: True) -> bool:
        """What failed retrievals depended on changed (e.g. the verification configuration): try
        the wanted target again now rather than after its retry delay, if its failure `applies`.
        True if it will be."""
        with self._lock:
            self.retries.retry_now(applies)
            if self._running is not None:
                # The attempt under way may have read the old inputs: if it fails so, go again at once.
                self._retry_pending = applies
                return True
            if self._wanted is None or not self._should_start(self._wanted.key):
                return False
            self._wake.set()
            return True

    def idle(self) -> bool:
        with self._lock:
            return self._running is None and (self._wanted is None or not self._should_start(self._wanted.key))

    def _wanted_now(self, key: Key) -> RetrievalRequest | None:
        """The newest request, if it is still the one for `key`."""
        with self._lock:
            wanted = self._wanted
        return wanted if wanted is not None and wanted.key == key else None

    def _should_start(self, key: Key) -> bool:
        return self._running != key and self.retries.due(key, self._clock())

    def _next_wake(self) -> float:
        with self._lock:
            return self.retries.wait(self._wanted.key if self._wanted is not None else None, self._clock())

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._next_wake())
            self._wake.clear()
            if self._stop.is_set():
                return
            with self._lock:
                wanted = self._wanted
                if wanted is None or not self._should_start(wanted.key) or self._running is not None:
                    continue
                self._running = wanted.key
            self._finish(wanted.key, self._attempt(wanted))

    # -- one attempt -----------------------------------------------------------------------------

    def _attempt(self, request: RetrievalRequest) -> _Ended:
        """Check, retrieve, check again when only the payload told the version: how it ended."""
        target, force = request.key
        self.retrievals += 1
        local = bool(self._local_image) and target.image == self._local_image
        checked: PreconditionOutcome | None = None
        if request.checks is not None and target.version and not local:
            before = _check(request.checks, target, force)
            if isinstance(before, ReleaseAcceptance):  # refused: no verification, no Pod
                return _Ended(before, _filled(target, None), checked_with=request.checks_inputs())
            checked = before
        retriever, final, error = self._retrieve(request)
        result = retriever.last_result if retriever is not None else None
        filled = _filled(target, result)
        local = local or (result is not None and result.local)
        newest = self._wanted_now(request.key) or request
        if final.status == "True" and checked is None and newest.checks is not None and not local:
            after = _check(newest.checks, filled, force)  # an image-only request: its version is known now
            if isinstance(after, ReleaseAcceptance):
                return _Ended(after, filled, result, None, newest.checks_inputs(), None, local)
            checked = after
        return _Ended(final, filled, result, checked, "", error, local)

    def _retrieve(self, request: RetrievalRequest) -> tuple[Retriever | None, ReleaseAcceptance, BaseException | None]:
        """Run one retrieval of `request`'s target, publishing every state it reports."""
        target, force = key = request.key
        with self._lock:
            retrying_a_failure = self.retries.failed_last(key)
            if self._wanted == request:
                started = Outcome(target, acc.retrieving(target.version, target.image))
                self.channel.publish(self._latest, (started,), quiet=True)
        report = self._reporter(key, retrying_a_failure)
        retriever: Retriever | None = None
        try:
            retriever = self._make(report)
            with self._lock:
                self._current = retriever
            if self._stop.is_set():
                retriever.cancel("the operator is stopping")
            elif self._wanted_now(key) is None:
                retriever.cancel("superseded by a new spec.desiredUpdate")
            return retriever, retriever.retrieve(target.image, target.version, force), None
        except Exception as exc:  # a bug or an I/O failure outside retrieval's own reporting
            log.exception("payload retrieval of %s failed", target.label())
            return retriever, ReleaseAcceptance("False", "RetrievePayload", f"Retrieving payload failed: {exc}"), exc

    def _reporter(self, key: Key, retrying_a_failure: bool) -> Report:
        """What the retriever reports through: each state of the wanted target is published."""
        target = key[0]

        def report(state: ReleaseAcceptance) -> None:
            with self._lock:
                if self._wanted is None or self._wanted.key != key:
                    return  # superseded: the admin asked for something else meanwhile
                if retrying_a_failure and state.status == "Unknown":
                    # Upstream flips to Unknown "Retrieving..." on every retry, hiding why the last
                    # attempt failed (and restarting alerts' `for`): keep the failure until this ends.
                    return
                if state.status == "True":
                    # Accepted only once this attempt ends: after the precondition checks of an
                    # image-only request, with the loaded version, verification and accepted risks.
                    return
                verified = self._latest.verified if self._latest is not None else False
                self._latest = Acceptance(target, state, verified)
                serial = self.channel.publish(self._latest)
            if state.status == "False" and self.show_failure_within > 0:
                # The retrieval cleans up next: let the failure reach the status first.
                self.channel.wait_acknowledged(serial, self.show_failure_within)

        return report

    def _finish(self, key: Key, ended: _Ended) -> None:
        """Book how the attempt ended, publish it if its target is still wanted, and go again if due."""
        final, result, checked = ended.final, ended.result, ended.checked
        with self._lock:
            self._running = None
            self._current = None
            pending, self._retry_pending = self._retry_pending, None
            retry_now = pending is not None and final.status != "True" and pending(final)
            wanted = self._wanted
            if final.reason == acc.PRECONDITION_CHECKS and final.status == "False":
                self.retries.refused(key, ended.checked_with)
                # What the checks read changed while they ran: check again now.
                retry_now = retry_now or (
                    wanted is not None and wanted.key == key and wanted.checks_inputs() != ended.checked_with
                )
            if final.status == "True":
                self.retries.succeeded(key)
            else:
                self.retries.failed(key, final, self._clock(), at_once=retry_now)
            if self._wanted is not None and self._wanted.key == key:
                risks = _accepted_risks(key[0], result, checked)
                verified = result.verified if result is not None else False
                warned = checked is not None and bool(checked.message)
                loaded = result.payload if result is not None and final.status == "True" else None
                self._latest = Acceptance(ended.filled, final, verified, risks, ended.local, warned, loaded)
                outcomes: tuple[Outcome, ...] = (Outcome(key[0], final, ended.error),)
                if checked is not None and final.status == "True":
                    # As upstream, their Events come with the payload loaded (not with every attempt).
                    outcomes = (Outcome(ended.filled, final, None, checked), *outcomes)
                self.channel.publish(self._latest, outcomes)
            more = self._wanted is not None and self._should_start(self._wanted.key)
        if more:
            self._wake.set()


def _filled(target: Release, result: RetrievalResult | None) -> Release:
    """The target as the loaded payload tells it: its version (for an image-only request), its
    architecture."""
    architecture = MULTI if result is not None and result.multi_arch else ""
    loaded_version = result.version if result is not None else ""
    return Release(target.version or loaded_version, target.image, target.url, target.channels, architecture)


def _check(checks: Preconditions, target: Release, force: bool) -> PreconditionOutcome | ReleaseAcceptance:
    """The checks' outcome, or the ReleaseAccepted state that blocks (an error in a check blocks)."""
    try:
        outcome = checks(target, force)
    except Exception as exc:  # a bug in a check must not let the update through unchecked
        log.exception("precondition checks of %s failed", target.label())
        outcome = PreconditionOutcome(blocked=True, message=f"the checks could not run: {exc}")
    if outcome.blocked:
        return acc.precondition_blocked(target.version, target.image, outcome.message)
    return outcome


def _accepted_risks(target: Release, result: RetrievalResult | None, checked: PreconditionOutcome | None) -> str:
    """What the admin accepted by going ahead: a forced verification failure, precondition warnings."""
    risks = (
        []
        if result is None or not result.verification_error
        else [acc.verification_forced(target.version, target.image, result.verification_error).message]
    )
    if checked is not None and checked.message:
        risks.append(checked.message)
    return "\n".join(risks)
