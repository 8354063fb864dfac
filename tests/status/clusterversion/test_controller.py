"""The ClusterVersion controller's side of the retrieval channel, with fake caches and writer (no API
server): the snapshot a status is computed from is acknowledged once that status is written, and
the retrievals it carries become Events after the write, never before and never lost."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from payload.acceptance import retrieval_failed, retrieving
from payload.channel import Outcome
from payload.coordinator import RetrievalCoordinator
from payload.release import Acceptance, Release
from status.clusterversion.caches import ClusterVersionCaches
from status.clusterversion.controller import ClusterVersionController, ClusterVersionOptions
from status.clusterversion.events import EventSpec
from status.clusterversion.rejections import Rejection
from status.clusterversion.writer import StatusRejected, StatusWriteError
from testkit.harness.clusterversion import IMG_4141, status_414

JSON = dict[str, Any]
TARGET = Release("4.14.2", "quay.io/openshift-release-dev/ocp-release@sha256:" + "2" * 64)
FAILED = retrieval_failed(TARGET.version, TARGET.image, "signature rejected")


@dataclass
class FakeInformer:
    objects: dict[str, JSON] = field(default_factory=dict)
    has_synced: bool = True

    def get(self, name: str, namespace: str | None = None) -> JSON | None:
        return self.objects.get(name)

    def items(self) -> list[JSON]:
        return list(self.objects.values())

    def add_handler(self, handler: Callable[..., None]) -> None:
        pass


@dataclass
class FakeWriter:
    """Computes the status as the real writer does; fails as told."""

    fail: Exception | None = None
    written: list[JSON] = field(default_factory=list)

    def write(self, cv: JSON, compute: Callable[[JSON], JSON]) -> JSON:
        status = compute(cv)
        if self.fail is not None:
            raise self.fail
        self.written.append(status)
        return {**cv, "status": status}

    def pruned_state(self) -> dict[str, tuple[str, ...]]:
        return {}


@dataclass
class FakeRecorder:
    recorded: list[str] = field(default_factory=list)

    def record(self, involved: JSON, spec: EventSpec) -> None:
        self.recorded.append(spec.reason)


def controller(writer: FakeWriter) -> tuple[ClusterVersionController, RetrievalCoordinator, FakeRecorder]:
    cv = {"metadata": {"name": "version", "uid": "u", "resourceVersion": "5"}, "spec": {}, "status": status_414()}
    caches = ClusterVersionCaches(FakeInformer({"version": cv}), FakeInformer(), FakeInformer(has_synced=False), {})
    coordinator = RetrievalCoordinator(lambda report: None)  # never started: the test publishes for it
    recorder = FakeRecorder()
    built = ClusterVersionController(
        None,  # no client: the ClusterVersion exists, nothing is created
        caches,
        writer,
        ClusterVersionOptions(release=Release("4.14.1", IMG_4141), namespace="ns"),
        retrieval=coordinator,
        recorder=recorder,
    )
    # What the coordinator published: a retrieval of TARGET that started and failed.
    started = Outcome(TARGET, retrieving(TARGET.version, TARGET.image))
    coordinator.channel.publish(Acceptance(TARGET, FAILED), (started, Outcome(TARGET, FAILED)))
    return built, coordinator, recorder


def test_a_written_status_acknowledges_its_snapshot_and_then_records_its_retrievals() -> None:
    writer = FakeWriter()
    built, coordinator, recorder = controller(writer)
    serial = coordinator.channel.latest().serial
    built.sync()
    assert coordinator.channel.wait_acknowledged(serial, 0.0)  # a cleanup waiting for it goes ahead
    assert coordinator.channel.latest().outcomes == ()
    assert recorder.recorded == ["RetrievePayload", "RetrievePayloadFailed"]


def test_a_write_that_did_not_land_acknowledges_nothing_and_the_retrievals_wait_for_the_next() -> None:
    writer = FakeWriter(fail=StatusWriteError("etcdserver: request timed out"))
    built, coordinator, recorder = controller(writer)
    serial = coordinator.channel.latest().serial
    with pytest.raises(StatusWriteError):
        built.sync()  # the loop retries with backoff
    assert not coordinator.channel.wait_acknowledged(serial, 0.0)
    assert len(coordinator.channel.latest().outcomes) == 2 and recorder.recorded == []
    writer.fail = None
    built.sync()
    assert recorder.recorded == ["RetrievePayload", "RetrievePayloadFailed"]


def test_a_refused_write_acknowledges_its_snapshot_as_waiting_would_not_show_it() -> None:
    writer = FakeWriter(fail=StatusRejected(Rejection(message="too large", too_large=True)))
    built, coordinator, recorder = controller(writer)
    serial = coordinator.channel.latest().serial
    built.sync()  # logged once, not retried blindly
    assert coordinator.channel.wait_acknowledged(serial, 0.0)
    assert recorder.recorded == ["RetrievePayload", "RetrievePayloadFailed"]


def test_the_final_sync_writes_status_from_the_latest_snapshot_without_asking_for_a_retrieval() -> None:
    writer = FakeWriter()
    built, coordinator, recorder = controller(writer)  # no sync worker: the final state is the controller's
    built.sync()
    assert coordinator.idle()  # the spec asks for nothing: no retrieval wanted
    built.stop()
    # SIGTERM and a new desiredUpdate arrive together: the final sync must not start its retrieval.
    cv = built.caches.clusterversion.get("version")
    assert cv is not None
    cv["spec"] = {"desiredUpdate": {"version": TARGET.version, "image": TARGET.image}}
    coordinator.channel.publish(Acceptance(TARGET, FAILED), ())
    latest = coordinator.channel.latest()
    assert built.final_sync(timeout=10.0)
    assert coordinator.idle()  # nothing was requested: no version Pod would start
    assert coordinator.channel.latest().serial == latest.serial  # a request would have published
    assert len(writer.written) == 2  # the status write still happened, from that snapshot
    assert coordinator.channel.wait_acknowledged(latest.serial, 0.0)
    released = [c for c in writer.written[-1]["conditions"] if c["type"] == "ReleaseAccepted"]
    assert [(c["status"], c["reason"]) for c in released] == [("False", "RetrievePayload")]
