"""The retrieval coordinator and the channel it publishes on, with a small fake retriever (no API server)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from payload.acceptance import (
    PreconditionOutcome,
    ReleaseAcceptance,
    payload_loaded,
    precondition_blocked,
    retrieval_failed,
    retrieving,
)
from payload.channel import Outcome
from payload.coordinator import RetrievalCoordinator, RetrievalRequest
from payload.release import Acceptance, Release

WAIT = 10.0  # generous bound for thread hand-offs; the tests assert outcomes, not timings
A = Release("4.14.2", "img-a")
B = Release("4.14.3", "img-b")


def coordinator_for(
    make: Callable[[Callable[[ReleaseAcceptance], None]], Any],
    on_publish: Callable[[], None] = lambda: None,
    **options: Any,
) -> RetrievalCoordinator:
    """A coordinator whose publications call `on_publish`, as they poke the status loop."""
    coordinator = RetrievalCoordinator(make, **options)
    coordinator.channel.listen(on_publish)
    return coordinator


def settled(coordinator: RetrievalCoordinator) -> Acceptance | None:
    """The acceptance published once the coordinator has nothing left to do."""
    wait_idle(coordinator)
    return coordinator.channel.latest().acceptance


def retrieved(
    h: Harness, coordinator: RetrievalCoordinator, target: Release, outcome: ReleaseAcceptance
) -> Acceptance | None:
    """`target` asked for and its retrieval ended as `outcome`: what is published then."""
    h.gate(target.image, outcome).set()
    coordinator.request(RetrievalRequest(target, False))
    assert h.started.acquire(timeout=WAIT)
    return settled(coordinator)


def failed_once(h: Harness, coordinator: RetrievalCoordinator) -> Acceptance:
    """A asked for, and its retrieval failed: the failure published."""
    failed = retrieved(h, coordinator, A, retrieval_failed("4.14.2", "img-a", "boom"))
    assert failed is not None and failed.state.status == "False"
    return failed


def take_outcomes(coordinator: RetrievalCoordinator) -> list[Outcome]:
    """What the status loop records as Events after a write: the newest snapshot's outcomes, once
    it is acknowledged."""
    snapshot = coordinator.channel.latest()
    coordinator.channel.acknowledge(snapshot)
    return list(snapshot.outcomes)


@dataclass
class FakeResult:
    version: str
    verified: bool
    local: bool = False
    verification_error: str = ""
    multi_arch: bool = False
    payload: object | None = None


@dataclass
class FakeRetriever:
    """Reports `retrieving`, then blocks until the test releases the image, then ends as told."""

    report: object
    outcomes: dict[str, ReleaseAcceptance]
    gates: dict[str, threading.Event]
    calls: list[tuple[str, str, bool]]
    started: threading.Semaphore
    multi: set[str]
    last_result: FakeResult | None = None

    def retrieve(self, image: str, version: str, force: bool) -> ReleaseAcceptance:
        self.calls.append((image, version, force))
        assert callable(self.report)
        self.report(retrieving(version, image))
        self.started.release()
        self.gates[image].wait(WAIT)
        final = self.outcomes[image]
        self.last_result = FakeResult(
            version="4.14.9" if not version else version, verified=True, multi_arch=image in self.multi
        )
        self.report(final)
        return final

    def cancel(self, why: str = "") -> None:
        pass


@dataclass
class Harness:
    outcomes: dict[str, ReleaseAcceptance] = field(default_factory=dict)
    gates: dict[str, threading.Event] = field(default_factory=dict)
    calls: list[tuple[str, str, bool]] = field(default_factory=list)
    started: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    changes: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    clock: list[float] = field(default_factory=lambda: [0.0])
    multi: set[str] = field(default_factory=set)  # images whose payload is multi-architecture

    def make(self, report: object) -> FakeRetriever:
        return FakeRetriever(report, self.outcomes, self.gates, self.calls, self.started, self.multi)

    def gate(self, image: str, outcome: ReleaseAcceptance) -> threading.Event:
        self.outcomes[image] = outcome
        self.gates[image] = threading.Event()
        return self.gates[image]


@pytest.fixture
def harness() -> Iterator[tuple[Harness, RetrievalCoordinator]]:
    h = Harness()
    coordinator = coordinator_for(h.make, h.changes.release, retry_after=60.0, clock=lambda: h.clock[0])
    coordinator.start()
    yield h, coordinator
    for gate in h.gates.values():
        gate.set()
    coordinator.stop()


def wait_idle(coordinator: RetrievalCoordinator) -> None:
    done = threading.Event()
    for _ in range(int(WAIT / 0.01)):
        if coordinator.idle():
            done.set()
            break
        done.wait(0.01)
    assert done.is_set(), "coordinator did not become idle"


def test_success_is_reported_and_not_repeated(harness: tuple[Harness, RetrievalCoordinator]) -> None:
    h, coordinator = harness
    gate = h.gate("img-a", payload_loaded("4.14.2", "img-a", "amd64"))
    coordinator.request(RetrievalRequest(A, False))
    assert h.started.acquire(timeout=WAIT)
    current = coordinator.channel.latest().acceptance
    assert current is not None and current.state.status == "Unknown" and current.target == A
    gate.set()
    final = settled(coordinator)
    assert final is not None and final.state.reason == "PayloadLoaded" and final.verified
    coordinator.request(RetrievalRequest(A, False))
    wait_idle(coordinator)
    assert h.calls == [("img-a", "4.14.2", False)]


def test_a_multi_architecture_payload_makes_a_multi_target(harness: tuple[Harness, RetrievalCoordinator]) -> None:
    h, coordinator = harness
    h.multi.add("img-a")
    h.gate("img-a", payload_loaded("4.14.2", "img-a", "Multi")).set()
    coordinator.request(RetrievalRequest(A, False))
    final = settled(coordinator)
    assert final is not None and final.target == dataclasses.replace(A, architecture="Multi")


def test_newer_target_supersedes_and_old_reports_are_dropped(
    harness: tuple[Harness, RetrievalCoordinator],
) -> None:
    h, coordinator = harness
    gate_a = h.gate("img-a", payload_loaded("4.14.2", "img-a"))
    gate_b = h.gate("img-b", payload_loaded("4.14.3", "img-b"))
    coordinator.request(RetrievalRequest(A, False))
    assert h.started.acquire(timeout=WAIT)
    coordinator.request(RetrievalRequest(B, False))  # while A is still running: A's reports no longer count
    assert coordinator.channel.latest().acceptance is None
    gate_a.set()  # (a retriever that cannot be cancelled runs on; PayloadRetriever is cancelled)
    assert h.started.acquire(timeout=WAIT)  # B starts once A has returned
    assert [c[0] for c in h.calls] == ["img-a", "img-b"]
    running = coordinator.channel.latest().acceptance
    assert running is not None and running.target == B and running.state.status == "Unknown"
    gate_b.set()
    final = settled(coordinator)
    assert final is not None and final.target == B and final.state.status == "True"


def test_failure_is_retried_only_after_the_retry_interval(
    harness: tuple[Harness, RetrievalCoordinator],
) -> None:
    h, coordinator = harness
    failed_once(h, coordinator)
    coordinator.request(RetrievalRequest(A, False))
    wait_idle(coordinator)
    assert len(h.calls) == 1
    h.clock[0] = 61.0
    coordinator.request(RetrievalRequest(A, False))
    assert h.started.acquire(timeout=WAIT)
    wait_idle(coordinator)
    assert len(h.calls) == 2
    coordinator.request(RetrievalRequest(A, True))  # forcing is a new request: at once
    assert h.started.acquire(timeout=WAIT)
    wait_idle(coordinator)
    assert h.calls[-1] == ("img-a", "4.14.2", True)


def test_failures_in_a_row_are_retried_after_an_eighth_a_quarter_a_half_then_the_whole_interval() -> None:
    """The retry schedule, with the clock and the jitter injected: each delay counts from the end of
    the failed attempt, a success starts the count again, and nothing starts before it is due."""
    h = Harness()
    jitter = [1.1]
    coordinator = coordinator_for(
        h.make, h.changes.release, retry_after=60.0, clock=lambda: h.clock[0], jitter=lambda: jitter[0]
    ).start()
    try:
        assert [coordinator.retries.retry_delay(n) for n in (1, 2, 3, 4, 5, 9)] == [7.5, 15.0, 30.0, 60.0, 60.0, 60.0]
        h.gate("img-a", retrieval_failed("4.14.2", "img-a", "registry down")).set()
        coordinator.request(RetrievalRequest(A, False))
        assert h.started.acquire(timeout=WAIT)
        wait_idle(coordinator)
        for delay in (7.5 * 1.1, 15.0 * 1.1, 30.0 * 1.1, 60.0 * 1.1, 60.0 * 1.1):
            attempts = len(h.calls)
            ended = h.clock[0]
            h.clock[0] = ended + delay - 0.01
            coordinator.request(RetrievalRequest(A, False))
            wait_idle(coordinator)
            assert len(h.calls) == attempts, f"retried {delay - 0.01:.2f}s after a failure, before its {delay:.2f}s"
            h.clock[0] = ended + delay
            coordinator.request(RetrievalRequest(A, False))
            assert h.started.acquire(timeout=WAIT)
            wait_idle(coordinator)
            assert len(h.calls) == attempts + 1
        failed = coordinator.channel.latest().acceptance
        assert failed is not None and failed.state.status == "False"

        # The cause is gone: the next attempt succeeds and is not repeated.
        h.gate("img-a", payload_loaded("4.14.2", "img-a")).set()
        h.clock[0] += 60.0 * 1.1
        coordinator.request(RetrievalRequest(A, False))
        assert h.started.acquire(timeout=WAIT)
        loaded = settled(coordinator)
        assert loaded is not None and loaded.state.status == "True"
        h.clock[0] += 3600.0
        coordinator.request(RetrievalRequest(A, False))
        wait_idle(coordinator)
        assert len(h.calls) == 7

        # Another target failing starts the schedule from an eighth again; the jitter scales it.
        jitter[0] = 0.8
        h.gate("img-b", retrieval_failed("4.14.3", "img-b", "registry down")).set()
        coordinator.request(RetrievalRequest(B, False))
        assert h.started.acquire(timeout=WAIT)
        wait_idle(coordinator)
        h.clock[0] += 7.5 * 0.8 - 0.01
        coordinator.request(RetrievalRequest(B, False))
        wait_idle(coordinator)
        assert len(h.calls) == 8
        h.clock[0] += 0.01
        coordinator.request(RetrievalRequest(B, False))
        assert h.started.acquire(timeout=WAIT)
        wait_idle(coordinator)
        assert [c[0] for c in h.calls[-2:]] == ["img-b", "img-b"]
    finally:
        coordinator.stop()


def test_withdrawn_request_clears_the_acceptance(harness: tuple[Harness, RetrievalCoordinator]) -> None:
    h, coordinator = harness
    assert retrieved(h, coordinator, A, payload_loaded("4.14.2", "img-a")) is not None
    coordinator.request(None)
    assert coordinator.channel.latest().acceptance is None


def test_image_only_request_gets_the_loaded_version(harness: tuple[Harness, RetrievalCoordinator]) -> None:
    h, coordinator = harness
    final = retrieved(h, coordinator, Release("", "img-x"), payload_loaded("", "img-x"))
    assert final is not None and final.target == Release("4.14.9", "img-x")


def test_every_report_pokes_the_status_loop(harness: tuple[Harness, RetrievalCoordinator]) -> None:
    h, coordinator = harness
    retrieved(h, coordinator, A, payload_loaded("4.14.2", "img-a"))
    # retrieving, and the end of the retrieval (which publishes the payload loaded).
    assert all(h.changes.acquire(timeout=WAIT) for _ in range(2))


def test_success_is_published_only_when_the_attempt_ends(checked: tuple[Harness, Checks, RetrievalCoordinator]) -> None:
    """The retriever's own "payload loaded" report is not the acceptance: an image-only target is
    checked first, and the acceptance carries the loaded version (status.desired must never be a
    release without its version, as a status sync between the two would write)."""
    h, checks, coordinator = checked
    gate = h.gate("img-x", payload_loaded("", "img-x", "amd64"))
    seen: list[Any] = []
    checks.on_call = lambda: seen.append(coordinator.channel.latest().acceptance)
    coordinator.request(RetrievalRequest(Release("", "img-x"), False, checks=checks))
    assert h.started.acquire(timeout=WAIT)
    gate.set()
    wait_idle(coordinator)
    assert len(seen) == 1 and (seen[0] is None or seen[0].state.status == "Unknown")
    final = coordinator.channel.latest().acceptance
    assert final is not None and final.state.status == "True" and final.target.version == "4.14.9"


def test_a_target_asked_for_again_is_retrieved_again(harness: tuple[Harness, RetrievalCoordinator]) -> None:
    h, coordinator = harness
    h.gate("img-a", payload_loaded("4.14.2", "img-a")).set()
    h.gate("img-b", payload_loaded("4.14.3", "img-b")).set()
    coordinator.request(RetrievalRequest(A, False))
    wait_idle(coordinator)
    coordinator.request(RetrievalRequest(B, False))
    wait_idle(coordinator)
    # A → B → A: A's earlier acceptance was dropped when B was asked for.
    coordinator.request(RetrievalRequest(A, False))
    final = settled(coordinator)
    assert final is not None and final.target == A and final.state.reason == "PayloadLoaded"
    assert [c[0] for c in h.calls] == ["img-a", "img-b", "img-a"]


def test_a_retry_keeps_the_last_failure_visible_until_it_ends(harness: tuple[Harness, RetrievalCoordinator]) -> None:
    h, coordinator = harness
    failed = failed_once(h, coordinator)
    gate = h.gate("img-a", payload_loaded("4.14.2", "img-a", "amd64"))
    h.clock[0] = 61.0
    coordinator.request(RetrievalRequest(A, False))
    assert h.started.acquire(timeout=WAIT)  # the retry has reported "Retrieving and verifying..."
    assert coordinator.channel.latest().acceptance == failed
    gate.set()
    loaded = settled(coordinator)
    assert loaded is not None and loaded.state.status == "True"


def test_inputs_changed_during_an_attempt_retry_its_failure_at_once(
    harness: tuple[Harness, RetrievalCoordinator],
) -> None:
    h, coordinator = harness
    gate = h.gate("img-a", retrieval_failed("4.14.2", "img-a", "no signature"))
    coordinator.request(RetrievalRequest(A, False))
    assert h.started.acquire(timeout=WAIT)
    assert coordinator.retry_failed()  # e.g. a signature was published while the attempt ran
    gate.set()  # the attempt, which read the old inputs, fails...
    assert h.started.acquire(timeout=WAIT)  # ...and is tried again at once (the clock stands still)
    wait_idle(coordinator)
    assert len(h.calls) == 2  # once: the second failure waits for the retry interval again


def test_stop_cancels_the_retrieval_in_flight() -> None:
    cancelled = threading.Event()

    class Blocking:
        last_result = None

        def retrieve(self, image: str, version: str, force: bool) -> ReleaseAcceptance:
            assert cancelled.wait(WAIT), "never cancelled"
            return retrieval_failed(version, image, "cancelled")

        def cancel(self, why: str = "") -> None:
            cancelled.set()

    started = threading.Event()

    def make(report: object) -> Blocking:
        started.set()
        return Blocking()

    coordinator = coordinator_for(make, retry_after=60.0).start()
    coordinator.request(RetrievalRequest(A, False))
    assert started.wait(WAIT)
    coordinator.stop(timeout=WAIT)
    assert cancelled.is_set() and coordinator.idle()


class Cancellable:
    """A retrieval that blocks until cancelled, recording why."""

    last_result = None

    def __init__(self, started: threading.Semaphore, reasons: list[str]) -> None:
        self._cancelled = threading.Event()
        self._started = started
        self._reasons = reasons

    def retrieve(self, image: str, version: str, force: bool) -> ReleaseAcceptance:
        self._started.release()
        assert self._cancelled.wait(WAIT), "never cancelled"
        return retrieval_failed(version, image, "cancelled")

    def cancel(self, why: str = "") -> None:
        self._reasons.append(why)
        self._cancelled.set()


@pytest.mark.parametrize(
    "change",
    [(B, False), (A, True), None],
    ids=["another target", "force toggled", "request withdrawn"],
)
def test_a_changed_request_cancels_the_retrieval_in_flight(change: tuple[Release, bool] | None) -> None:
    started = threading.Semaphore(0)
    reasons: list[str] = []
    made: list[Cancellable] = []

    def make(report: object) -> Cancellable:
        made.append(Cancellable(started, reasons))
        return made[-1]

    coordinator = coordinator_for(make, retry_after=60.0).start()
    try:
        coordinator.request(RetrievalRequest(A, False))
        assert started.acquire(timeout=WAIT)
        if change is None:
            coordinator.request(None)
        else:
            coordinator.request(RetrievalRequest(*change))
        # Cancelled by request() itself, not when the old retrieval ends on its own.
        assert reasons == ["superseded by a new spec.desiredUpdate"]
        if change is not None:
            assert started.acquire(timeout=WAIT)  # the new request's retrieval starts
            assert len(made) == 2
            latest = coordinator.channel.latest().acceptance
            assert latest is None or latest.target == change[0]
        else:
            wait_idle(coordinator)
            assert coordinator.channel.latest().acceptance is None and len(made) == 1
    finally:
        coordinator.stop(timeout=WAIT)


# -- precondition checks ------------------------------------------------------------------------------


@dataclass
class Checks:
    """Injected precondition checks: a fixed outcome per version, and what they were asked."""

    outcomes: dict[str, PreconditionOutcome] = field(default_factory=dict)
    asked: list[tuple[Release, bool]] = field(default_factory=list)
    on_call: Callable[[], None] = lambda: None

    def __call__(self, target: Release, force: bool) -> PreconditionOutcome:
        self.asked.append((target, force))
        self.on_call()
        if target.version == "boom":
            raise RuntimeError("a bug in a check")
        return self.outcomes.get(target.version, PreconditionOutcome(False, ""))


@pytest.fixture
def checked() -> Iterator[tuple[Harness, Checks, RetrievalCoordinator]]:
    h, checks = Harness(), Checks()
    coordinator = coordinator_for(
        h.make, h.changes.release, retry_after=60.0, clock=lambda: h.clock[0], local_image="img-running"
    )
    coordinator.start()
    yield h, checks, coordinator
    for gate in h.gates.values():
        gate.set()
    coordinator.stop()


BLOCKED = PreconditionOutcome(True, 'Precondition "ClusterVersionGiantHop" failed because of "MajorVersionUpdate": no')
WARNED = PreconditionOutcome(
    False, 'Precondition "ClusterVersionRecommendedUpdate" failed because of "UnknownUpdate": ?'
)


def test_a_refused_target_is_never_verified_or_fetched(checked: tuple[Harness, Checks, RetrievalCoordinator]) -> None:
    h, checks, coordinator = checked
    checks.outcomes["4.14.2"] = BLOCKED
    coordinator.request(RetrievalRequest(A, False, checks=checks))
    final = settled(coordinator)
    assert final is not None and final.state == precondition_blocked("4.14.2", "img-a", BLOCKED.message)
    assert h.calls == [] and checks.asked == [(A, False)]
    # The refusal is the one outcome to report (a Warning PreconditionBlock).
    assert [(o.state.reason, o.preconditions) for o in take_outcomes(coordinator)] == [("PreconditionChecks", None)]


@pytest.mark.parametrize(
    ("attempt", "force", "events"),
    [
        # Checked first, then retrieved; the checks' Events come with the payload loaded, as upstream's.
        (
            payload_loaded("4.14.2", "img-a", "amd64"),
            True,
            [("RetrievePayload", None), ("PayloadLoaded", WARNED), ("PayloadLoaded", None)],
        ),
        # No check Events for an attempt that fails after them.
        (retrieval_failed("4.14.2", "img-a", "not signed"), False, [("RetrievePayload", None)] * 2),
    ],
    ids=["loaded", "failed later"],
)
def test_a_warning_goes_ahead_and_its_events_come_with_the_payload_loaded(
    checked: tuple[Harness, Checks, RetrievalCoordinator],
    attempt: ReleaseAcceptance,
    force: bool,
    events: list[tuple[str, PreconditionOutcome | None]],
) -> None:
    h, checks, coordinator = checked
    checks.outcomes["4.14.2"] = WARNED
    h.gate("img-a", attempt).set()
    coordinator.request(RetrievalRequest(A, force, checks=checks))
    final = settled(coordinator)
    assert final is not None and final.state == attempt
    assert h.calls == [("img-a", "4.14.2", force)] and checks.asked == [(A, force)]
    if attempt.status == "True":
        assert final.accepted_risks == WARNED.message  # the warning becomes the accepted risk
    assert [(o.state.reason, o.preconditions) for o in take_outcomes(coordinator)] == events


def test_an_image_only_target_is_checked_once_its_version_is_loaded(
    checked: tuple[Harness, Checks, RetrievalCoordinator],
) -> None:
    h, checks, coordinator = checked
    checks.outcomes["4.14.9"] = BLOCKED  # the version FakeRetriever loads for an image-only request
    h.gate("img-x", payload_loaded("", "img-x", "amd64")).set()
    coordinator.request(RetrievalRequest(Release("", "img-x"), False, checks=checks))
    final = settled(coordinator)
    assert final is not None and final.state == precondition_blocked("4.14.9", "img-x", BLOCKED.message)
    assert checks.asked == [(Release("4.14.9", "img-x"), False)] and len(h.calls) == 1


def test_the_running_release_is_not_checked(checked: tuple[Harness, Checks, RetrievalCoordinator]) -> None:
    h, checks, coordinator = checked
    checks.outcomes["4.14.1"] = BLOCKED
    h.gate("img-running", payload_loaded("4.14.1", "img-running")).set()
    coordinator.request(RetrievalRequest(Release("4.14.1", "img-running"), False, checks=checks))
    final = settled(coordinator)
    assert final is not None and final.state.status == "True" and checks.asked == []


def test_a_check_that_fails_blocks(checked: tuple[Harness, Checks, RetrievalCoordinator]) -> None:
    h, checks, coordinator = checked
    coordinator.request(RetrievalRequest(Release("boom", "img-b"), False, checks=checks))
    final = settled(coordinator)
    assert final is not None and final.state.reason == "PreconditionChecks"
    assert final.state.message.endswith(": the checks could not run: a bug in a check") and h.calls == []


def test_a_refusal_is_checked_again_when_what_the_checks_read_changes(
    checked: tuple[Harness, Checks, RetrievalCoordinator],
) -> None:
    h, checks, coordinator = checked
    checks.outcomes["4.14.2"] = BLOCKED
    coordinator.request(RetrievalRequest(A, False, checks=checks, checks_inputs=lambda: "Upgradeable=False"))
    wait_idle(coordinator)
    del checks.outcomes["4.14.2"]  # e.g. the admin acked the gate
    h.gate("img-a", payload_loaded("4.14.2", "img-a", "amd64")).set()
    coordinator.request(RetrievalRequest(A, False, checks=checks, checks_inputs=lambda: "Upgradeable=False"))
    wait_idle(coordinator)
    assert len(checks.asked) == 1  # the same inputs: the refusal waits for its retry delay (the clock stands still)
    coordinator.request(RetrievalRequest(A, False, checks=checks, checks_inputs=lambda: "Upgradeable=True"))
    final = settled(coordinator)
    assert final is not None and final.state.status == "True" and len(checks.asked) == 2


def test_a_refusal_decided_on_inputs_that_changed_meanwhile_is_checked_again_at_once(
    checked: tuple[Harness, Checks, RetrievalCoordinator],
) -> None:
    h, checks, coordinator = checked
    checks.outcomes["4.14.2"] = BLOCKED
    h.gate("img-a", payload_loaded("4.14.2", "img-a", "amd64")).set()

    def meanwhile() -> None:
        if len(checks.asked) == 1:  # while the first checks run, what they read changes...
            coordinator.request(RetrievalRequest(A, False, checks=checks, checks_inputs=lambda: "after"))
        else:  # ...so that the target passes
            checks.outcomes.pop("4.14.2", None)

    checks.on_call = meanwhile
    coordinator.request(RetrievalRequest(A, False, checks=checks, checks_inputs=lambda: "before"))
    wait_idle(coordinator)
    assert [c[0] for c in h.calls] == ["img-a"] and len(checks.asked) == 2  # refused, then checked again


def test_a_forced_verification_failure_is_an_accepted_risk(
    checked: tuple[Harness, Checks, RetrievalCoordinator],
) -> None:
    h, checks, _coordinator = checked
    checks.outcomes["4.14.2"] = WARNED

    def make(report: object) -> FakeRetriever:
        retriever = h.make(report)
        original = retriever.retrieve

        def retrieve(image: str, version: str, force: bool) -> ReleaseAcceptance:
            final = original(image, version, force)
            retriever.last_result = FakeResult("4.14.2", False, verification_error="unable to verify sha256:aa")
            return final

        retriever.retrieve = retrieve  # type: ignore[method-assign]
        return retriever

    forced = coordinator_for(make, retry_after=60.0).start()
    try:
        h.gate("img-a", payload_loaded("4.14.2", "img-a", "amd64")).set()
        forced.request(RetrievalRequest(A, True, checks=checks))
        wait_idle(forced)
        final = forced.channel.latest().acceptance
        assert final is not None and final.state.status == "True"
        assert final.accepted_risks == (
            'Target release version="4.14.2" image="img-a" cannot be verified, but continuing anyway because the '
            "update was forced: unable to verify sha256:aa\n" + WARNED.message
        )
    finally:
        forced.stop()


class CleansUp:
    """Reports a failure, then cleans up (as the retriever deletes its Pod), recording the order."""

    last_result = None

    def __init__(self, report: Callable[[ReleaseAcceptance], None], steps: list[str]) -> None:
        self._report = report
        self._steps = steps

    def retrieve(self, image: str, version: str, force: bool) -> ReleaseAcceptance:
        failed = retrieval_failed(version, image, "signature rejected")
        self._report(failed)
        self._steps.append("cleaned up")
        return failed

    def cancel(self, why: str = "") -> None:
        pass


def failing_coordinator(show_within: float, steps: list[str]) -> tuple[RetrievalCoordinator, threading.Semaphore]:
    reported = threading.Semaphore(0)

    def on_change() -> None:
        steps.append("status loop poked")
        reported.release()

    coordinator = coordinator_for(
        lambda report: CleansUp(report, steps), on_change, retry_after=60.0, show_failure_within=show_within
    )
    return coordinator.start(), reported


def test_a_failure_is_shown_before_the_retrieval_cleans_up() -> None:
    steps: list[str] = []
    coordinator, reported = failing_coordinator(WAIT * 10, steps)
    try:
        coordinator.request(RetrievalRequest(A, False))
        earlier = coordinator.channel.latest()  # what a status written before the failure was computed from
        assert reported.acquire(timeout=WAIT)
        failed = coordinator.channel.latest()
        assert failed.acceptance is not None and failed.acceptance.state.status == "False"
        coordinator.channel.acknowledge(earlier)  # a status written without it: still waiting
        assert steps == ["status loop poked"]
        steps.append("status written")
        coordinator.channel.acknowledge(failed)
        wait_idle(coordinator)
        assert steps[:3] == ["status loop poked", "status written", "cleaned up"]
    finally:
        coordinator.stop(timeout=WAIT)


@pytest.mark.parametrize("end", ["withdrawn", "stopped", "never shown"])
def test_a_failure_that_is_not_shown_holds_the_cleanup_back_no_longer_than_needed(end: str) -> None:
    steps: list[str] = []
    coordinator, reported = failing_coordinator(0.2 if end == "never shown" else WAIT * 10, steps)
    try:
        coordinator.request(RetrievalRequest(A, False))
        assert reported.acquire(timeout=WAIT)
        if end == "withdrawn":
            coordinator.request(None)
        elif end == "stopped":
            coordinator.stop(timeout=WAIT)
        wait_idle(coordinator)
        assert "cleaned up" in steps
    finally:
        coordinator.stop(timeout=WAIT)


def test_without_a_wait_a_failure_is_cleaned_up_at_once() -> None:
    steps: list[str] = []
    coordinator, reported = failing_coordinator(0.0, steps)
    try:
        coordinator.request(RetrievalRequest(A, False))
        wait_idle(coordinator)
        assert steps[:2] == ["status loop poked", "cleaned up"]
    finally:
        coordinator.stop(timeout=WAIT)
