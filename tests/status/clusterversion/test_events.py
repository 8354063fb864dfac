"""Events for payload retrieval failures: which Event, its text and object, and bumping repeats."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cvo_py.runtime.gotext.messages import one_line
from cvo_py.runtime.kube import EVENTS, MERGE_PATCH, ApiError, Resource
from payload import acceptance as acc
from payload.acceptance import PreconditionOutcome, ReleaseAcceptance
from payload.channel import Outcome
from payload.coordinator import RetrievalCoordinator, RetrievalRequest
from payload.release import Release
from status.clusterversion import events
from status.clusterversion.events import EventRecorder, EventSpec

NOW = datetime(2024, 3, 1, 12, 0, 5, 123456, tzinfo=UTC)
IMG = "quay.io/openshift-release-dev/ocp-release@sha256:" + "e" * 64


# -- the unwrapped aggregate ------------------------------------------------------------------------


def chain(*texts: str, suppress: bool = False) -> BaseException:
    """An exception caused by one carrying the next text, outermost first (as `raise ... from`);
    with `suppress`, each cause is only a context hidden by `from None`."""
    exc: BaseException = RuntimeError(texts[-1])
    for text in reversed(texts[:-1]):
        outer = RuntimeError(text)
        if suppress:
            outer.__context__, outer.__suppress_context__ = exc, True
        else:
            outer.__cause__ = exc
        exc = outer
    return exc


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (RuntimeError("plain"), "plain"),
        # Inner texts already in the outer one add nothing (Go's fmt.Errorf("...: %w") chains).
        (chain("fetching update payload: pod failed", "pod failed"), "fetching update payload: pod failed"),
        # Inner detail the outer text hides is appended, one per line, outermost first.
        (
            chain("The update cannot be verified", "store A: 404", "store B: bad signature"),
            "The update cannot be verified\nstore A: 404\nstore B: bad signature",
        ),
        (chain("outer", "outer"), "outer"),
        # `raise ... from None` hides the context, as it hides it from tracebacks.
        (chain("outer", "hidden", suppress=True), "outer"),
        (
            ExceptionGroup("2 stores failed", [ValueError("store A: 404"), ValueError("store B: timeout")]),
            "2 stores failed (2 sub-exceptions)\nstore A: 404\nstore B: timeout",
        ),
    ],
)
def test_unwrapped_aggregate(exc: BaseException, expected: str) -> None:
    assert events.unwrapped_aggregate(exc) == expected


def test_unwrapped_aggregate_uses_the_implicit_context() -> None:
    try:
        try:
            raise KeyError("missing")
        except KeyError:
            raise RuntimeError("lookup failed")  # noqa: B904 (the implicit context is what is tested)
    except RuntimeError as exc:
        assert events.unwrapped_aggregate(exc) == "lookup failed\n'missing'"


def test_unwrapped_aggregate_stops_on_cycles() -> None:
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__cause__, b.__cause__ = b, a
    assert events.unwrapped_aggregate(a) == "a\nb"


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("one\ntwo\n\nthree", 100, "one // two //  // three"),
        ("x" * 10, 10, "x" * 10),
        ("a" * 20 + "b" * 20, 17, "a" * 8 + " […] " + "b" * 4),
    ],
)
def test_one_line(text: str, limit: int, expected: str) -> None:
    assert one_line(text, limit) == expected


# -- which Event ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("final", "error", "expected"),
    [
        (
            acc.retrieving("4.14.2", IMG),
            None,
            EventSpec("Normal", "RetrievePayload", f'Retrieving and verifying payload version="4.14.2" image="{IMG}"'),
        ),
        (acc.waiting_after(acc.retrieving("4.14.2", IMG), "ErrImagePull"), None, None),
        (
            acc.payload_loaded("4.14.2", IMG, "amd64"),
            None,
            EventSpec("Normal", "PayloadLoaded", f'Payload loaded version="4.14.2" image="{IMG}" architecture="amd64"'),
        ),
        (acc.payload_loaded("4.14.2", IMG), None, None),  # the running payload again: no Event
        (
            acc.retrieval_failed("", IMG, acc.download_failed("fetching update payload: pod version-x failed")),
            None,
            EventSpec(
                "Warning",
                "RetrievePayloadFailed",
                f'Retrieving payload failed version="" image="{IMG}" failure=Unable to download and '
                "prepare the update: fetching update payload: pod version-x failed",
            ),
        ),
        (
            acc.load_failed("4.14.2", IMG, "loading metadata: bad JSON"),
            None,
            EventSpec(
                "Warning",
                "LoadPayloadFailed",
                f'Loading payload failed version="4.14.2" image="{IMG}" failure=loading metadata: bad JSON',
            ),
        ),
        (
            acc.version_mismatch("4.14.2", IMG, "4.14.3"),
            None,
            EventSpec(
                "Warning",
                "VerifyPayloadVersionFailed",
                f'Verifying payload failed version="4.14.2" image="{IMG}" failure=release image version '
                "4.14.3 does not match the expected upstream version 4.14.2",
            ),
        ),
        (
            ReleaseAcceptance("False", acc.PRECONDITION_CHECKS, "Preconditions failed for payload loaded"),
            None,
            EventSpec("Warning", "PreconditionBlock", "Preconditions failed for payload loaded"),
        ),
        (ReleaseAcceptance("False", "SomethingElse", "x"), None, None),
        # Failed with an exception chain: upstream's text, failure= the aggregate, on one line.
        (
            ReleaseAcceptance("False", acc.RETRIEVE_PAYLOAD, "Retrieving payload failed: outer"),
            chain("outer", "inner detail\nsecond line"),
            EventSpec(
                "Warning",
                "RetrievePayloadFailed",
                f'Retrieving payload failed version="4.14.2" image="{IMG}" failure=outer // inner detail // '
                "second line",
            ),
        ),
    ],
)
def test_retrieval_event(final: ReleaseAcceptance, error: BaseException | None, expected: EventSpec | None) -> None:
    version = "" if 'version=""' in final.message else "4.14.2"
    assert events.retrieval_event(version, IMG, final, error) == expected


SUMMARY = (
    'Multiple precondition checks failed:\n* Precondition "ClusterVersionUpgradeable" failed because of '
    '"AdminAckRequired": ack needed\n* Precondition "ClusterVersionGiantHop" failed because of '
    '"MultipleMinorVersionsUpdate": too far'
)


def test_precondition_events_keep_the_lines_of_upstreams_text() -> None:
    blocked = acc.precondition_blocked("4.16.0", IMG, SUMMARY)
    spec = events.retrieval_event("4.16.0", IMG, blocked)
    assert spec == EventSpec(
        "Warning",
        "PreconditionBlock",
        f'Preconditions failed for payload loaded version="4.16.0" image="{IMG}": {SUMMARY}',
    )
    assert spec.message == blocked.message and spec.message.count("\n") == 2  # the condition's text
    forced = PreconditionOutcome(False, "Forced through blocking failures: " + SUMMARY)
    warned, passed = events.precondition_events("4.16.0", IMG, forced)
    assert warned == EventSpec(
        "Warning",
        "PreconditionWarn",
        f'precondition warning for payload loaded version="4.16.0" image="{IMG}": Forced through blocking '
        f"failures: {SUMMARY}",
    )
    assert passed.reason == "PreconditionsPassed"
    # Bounded still, keeping the lines and the tail (where the last failure is).
    long = acc.precondition_blocked("4.16.0", IMG, SUMMARY + "\n* " + "x" * 20_000 + " the end")
    clipped = events.retrieval_event("4.16.0", IMG, long)
    assert clipped is not None and len(clipped.message) <= events.MAX_MESSAGE
    assert clipped.message.endswith(" the end") and "\n* Precondition" in clipped.message


def test_the_log_line_of_an_event_is_one_escaped_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=events.__name__)
    api, clock = FakeEventsAPI(), [NOW]
    spec = EventSpec("Warning", "PreconditionBlock", "Multiple precondition checks failed:\n* \x1b[2Jstorage")
    stored = recorder(api, clock).record(events.involved_object("version", ""), spec)
    assert stored is not None and stored["message"] == spec.message  # stored as upstream's, lines and all
    [line] = [r.getMessage() for r in caplog.records if "PreconditionBlock" in r.getMessage()]
    assert line.endswith("Multiple precondition checks failed:\\n* \\x1b[2Jstorage") and line.isprintable()


def test_retrieval_event_keeps_the_condition_text_with_newlines_joined() -> None:
    final = ReleaseAcceptance(
        "False", acc.RETRIEVE_PAYLOAD, 'Retrieving payload failed version="" image="i" failure=a\nb'
    )
    spec = events.retrieval_event("", "i", final)
    assert spec is not None and spec.message == 'Retrieving payload failed version="" image="i" failure=a // b'


# -- the Event object -------------------------------------------------------------------------------


def test_new_event_has_the_recorder_shape() -> None:
    ref = events.involved_object("version", "openshift-cluster-version")
    spec = EventSpec("Warning", "RetrievePayloadFailed", "Retrieving payload failed ...")
    event = events.new_event(ref, spec, events.COMPONENT, NOW)
    nanos = int(NOW.timestamp()) * 10**9 + 123456000
    assert event == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"version.{nanos:x}", "namespace": "openshift-cluster-version"},
        "involvedObject": {
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterVersion",
            "name": "version",
            "namespace": "openshift-cluster-version",
        },
        "reason": "RetrievePayloadFailed",
        "message": "Retrieving payload failed ...",
        "type": "Warning",
        "source": {"component": "cluster-version-operator"},
        "firstTimestamp": "2024-03-01T12:00:05Z",
        "lastTimestamp": "2024-03-01T12:00:05Z",
        "count": 1,
        "reportingComponent": "cluster-version-operator",
        "reportingInstance": "",
    }
    with pytest.raises(ValueError, match="timezone-aware"):
        events.new_event(ref, spec, events.COMPONENT, NOW.replace(tzinfo=None))


def stored(name: str, message: str, count: int, last: str, reason: str = "RetrievePayloadFailed") -> dict[str, Any]:
    event = events.new_event(
        events.involved_object("version", "ns"), EventSpec("Warning", reason, message), events.COMPONENT, NOW
    )
    event["metadata"]["name"] = name
    event["count"] = count
    event["lastTimestamp"] = last
    return event


def test_event_key_find_same_and_bump() -> None:
    a1 = stored("version.1", "A", 3, "2024-03-01T11:00:00Z")
    a2 = stored("version.2", "A", 1, "2024-03-01T11:30:00Z")
    b = stored("version.3", "B", 9, "2024-03-01T11:59:00Z")
    other_reason = stored("version.4", "A", 1, "2024-03-01T11:59:00Z", reason="LoadPayloadFailed")
    key = events.event_key(a1)
    assert events.event_key(a2) == key != events.event_key(b) != events.event_key(other_reason)
    assert events.find_same([a1, b, a2, other_reason], key) is a2  # the most recent of the same
    assert events.find_same([b], key) is None
    assert events.bump(a1, NOW) == {"count": 4, "lastTimestamp": "2024-03-01T12:00:05Z"}
    assert events.bump({}, NOW) == {"count": 2, "lastTimestamp": "2024-03-01T12:00:05Z"}


# -- the recorder, against a small fake API ---------------------------------------------------------


@dataclass
class FakeEventsAPI:
    """Stores Events like the API server does, and records every call."""

    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    fail: int | None = None

    def _check(self, res: Resource) -> None:
        assert res == EVENTS
        if self.fail is not None:
            raise ApiError(self.fail, '{"reason": "InternalError", "message": "boom"}', "X", "/events")

    def create(self, res: Resource, body: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        self._check(res)
        self.calls.append(f"create {body['metadata']['name']}")
        stored = {**body, "metadata": {**body["metadata"], "namespace": namespace}}
        self.objects[body["metadata"]["name"]] = stored
        return stored

    def list(self, res: Resource, namespace: str | None = None, **kwargs: Any) -> dict[str, Any]:
        self._check(res)
        self.calls.append(f"list {kwargs.get('field_selector')}")
        return {"items": list(self.objects.values())}

    def patch(
        self, res: Resource, name: str, patch: dict[str, Any], namespace: str | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        self._check(res)
        assert kwargs.get("content_type") == MERGE_PATCH
        self.calls.append(f"patch {name} {patch['count']}")
        if name not in self.objects:
            raise ApiError(404, '{"reason": "NotFound", "message": "gone"}', "PATCH", f"/events/{name}")
        self.objects[name] = {**self.objects[name], **patch}
        return self.objects[name]


def recorder(api: FakeEventsAPI, clock: list[datetime]) -> EventRecorder:
    return EventRecorder(api, "openshift-cluster-version", now=lambda: clock[0])  # type: ignore[arg-type]


def test_recorder_creates_then_bumps_then_recreates_when_gone() -> None:
    api, clock = FakeEventsAPI(), [NOW]
    rec = recorder(api, clock)
    ref = events.involved_object("version", "ignored: the recorder's namespace is used")
    spec = EventSpec("Warning", "RetrievePayloadFailed", "same failure")
    first = rec.record(ref, spec)
    assert first is not None and first["count"] == 1
    assert first["involvedObject"]["namespace"] == "openshift-cluster-version"
    name = first["metadata"]["name"]
    selector = (
        "involvedObject.kind=ClusterVersion,involvedObject.name=version,reason=RetrievePayloadFailed,type=Warning"
    )
    assert api.calls == [f"list {selector}", f"create {name}"]
    clock[0] = NOW + timedelta(minutes=1)
    second = rec.record(ref, spec)
    assert second is not None and second["count"] == 2 and second["lastTimestamp"] == "2024-03-01T12:01:05Z"
    assert second["firstTimestamp"] == "2024-03-01T12:00:05Z" and len(api.objects) == 1
    assert api.calls[-1] == f"patch {name} 2"
    # A different message is a different Event.
    other = rec.record(ref, EventSpec("Warning", "RetrievePayloadFailed", "another failure"))
    assert other is not None and other["count"] == 1 and len(api.objects) == 2
    # The Event expired (or was deleted): a new one starts at 1.
    del api.objects[name]
    clock[0] = NOW + timedelta(minutes=2)
    third = rec.record(ref, spec)
    assert third is not None and third["count"] == 1 and third["metadata"]["name"] != name
    assert api.calls[-2:] == [f"patch {name} 3", f"create {third['metadata']['name']}"]
    assert (rec.created, rec.bumped, rec.failed) == (3, 1, 0)


def test_recorder_bumps_an_event_recorded_before_it_started() -> None:
    api, clock = FakeEventsAPI(), [NOW]
    earlier = recorder(api, clock).record(
        events.involved_object("version", ""), EventSpec("Warning", "RetrievePayloadFailed", "same")
    )
    assert earlier is not None
    restarted = recorder(api, clock)  # a new process: nothing cached
    again = restarted.record(
        events.involved_object("version", ""), EventSpec("Warning", "RetrievePayloadFailed", "same")
    )
    assert again is not None and again["count"] == 2 and again["metadata"]["name"] == earlier["metadata"]["name"]


def test_recorder_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    api, clock = FakeEventsAPI(fail=500), [NOW]
    rec = recorder(api, clock)
    assert rec.record(events.involved_object("version", ""), EventSpec("Warning", "RetrievePayloadFailed", "x")) is None
    assert rec.failed == 1
    assert any("Could not record Event RetrievePayloadFailed" in r.getMessage() for r in caplog.records)
    with pytest.raises(ValueError, match="namespace is required"):
        EventRecorder(api, "")  # type: ignore[arg-type]


# -- the coordinator hands finished retrievals to the loop -------------------------------------------


@dataclass
class ScriptedRetriever:
    outcome: ReleaseAcceptance | BaseException
    last_result: None = None

    def cancel(self, why: str = "") -> None:
        pass

    def retrieve(self, image: str, version: str, force: bool) -> ReleaseAcceptance:
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


def acknowledged_outcomes(coordinator: RetrievalCoordinator) -> list[Outcome]:
    """The outcomes of the newest snapshot, acknowledged as the loop does after its write."""
    snapshot = coordinator.channel.latest()
    coordinator.channel.acknowledge(snapshot)
    return list(snapshot.outcomes)


def test_coordinator_reports_started_and_finished_retrievals_with_their_exception() -> None:
    changed = threading.Semaphore(0)
    script: dict[str, ReleaseAcceptance | BaseException] = {}
    coordinator = RetrievalCoordinator(lambda report: ScriptedRetriever(script["next"]), retry_after=3600)
    coordinator.channel.listen(changed.release)
    coordinator.start()
    try:
        failure = acc.retrieval_failed("4.14.2", IMG, acc.not_verified("no signature"))
        script["next"] = failure
        target = Release("4.14.2", IMG)
        coordinator.request(RetrievalRequest(target))
        assert changed.acquire(timeout=10)
        # The attempt's start, then its end.
        assert acknowledged_outcomes(coordinator) == [
            Outcome(target, acc.retrieving("4.14.2", IMG)),
            Outcome(target, failure, None),
        ]
        assert acknowledged_outcomes(coordinator) == []  # drained

        broken = chain("cannot create the version pod", "connection reset by peer")
        script["next"] = broken
        other = Release("", IMG.replace("e", "f"))
        coordinator.request(RetrievalRequest(other))
        assert changed.acquire(timeout=10)
        [started, outcome] = acknowledged_outcomes(coordinator)
        assert started == Outcome(other, acc.retrieving("", other.image))
        assert outcome.target == other and outcome.error is broken
        assert outcome.state.message == "Retrieving payload failed: cannot create the version pod"
        spec = events.retrieval_event(other.version, other.image, outcome.state, outcome.error)
        assert spec is not None and spec.message == (
            f'Retrieving payload failed version="" image="{other.image}" failure=cannot create the '
            "version pod // connection reset by peer"
        )
    finally:
        coordinator.stop()
