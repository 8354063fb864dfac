"""The channel of the sync worker's reports to the status loop: upstream's throttle of the status
syncs they cause (one per 15 s, two at once, edges at once), nothing lost, and the counts of
`cluster_version_payload`."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from payload.release import Release
from syncworker.channel import PayloadCounts, ReportChannel, is_edge
from syncworker.errors import TaskError
from syncworker.modes import Mode
from syncworker.passes import Report

A = Release("4.99.0", "registry.local/release@sha256:" + "a" * 64)
B = Release("4.99.1", "registry.local/release@sha256:" + "b" * 64)
T0 = datetime(2026, 7, 1, tzinfo=UTC)


def report(done: int, release: Release = A, **extra: object) -> Report:
    values: dict = dict(release=release, version_hash="h", generation=1, mode=Mode.UPDATING, attempt=0, total=20)
    values.update(extra)
    return Report(done=done, at=T0, **values)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def channel() -> tuple[ReportChannel, Clock, list[str]]:
    clock = Clock()
    pokes: list[str] = []
    found = ReportChannel(interval=15.0, burst=2, clock=clock)
    found.listen(lambda: pokes.append("now"), lambda s: pokes.append(f"in {s:g}"))
    return found, clock, pokes


def test_progress_is_throttled_to_one_sync_per_15_seconds_after_a_burst_of_2() -> None:
    reports, clock, pokes = channel()
    reports.publish(report(0))  # the first report is an edge
    reports.publish(report(1))  # the second token of the burst
    reports.publish(report(2))  # none left: a sync in 15 s
    reports.publish(report(3))  # that sync will read this one: nothing more asked
    assert pokes == ["now", "now", "in 15"]
    assert reports.latest() == report(3)  # the newest is never lost
    clock.now += 15
    reports.publish(report(4))
    assert pokes[-1] == "in 15"


def test_edges_go_at_once_whatever_the_budget() -> None:
    reports, _clock, pokes = channel()
    for done in range(5):
        reports.publish(report(done))
    pokes.clear()
    failure = TaskError("UpdatePayloadFailed", "boom")
    edges = [
        report(5, failure=failure),  # a failure appears
        report(5, failure=replace(failure, message="other")),  # it changes
        report(6),  # it clears
        report(6, generation=2),  # a new generation
        report(0, release=B, generation=2),  # a new release image
        report(20, release=B, generation=2, completed=True),  # a pass completes
        report(1, release=B, generation=2, mode=Mode.RECONCILING),  # reconciling
    ]
    for found in edges:
        reports.publish(found)
    assert pokes == ["now"] * len(edges)


def test_is_edge_ignores_progress_alone() -> None:
    assert is_edge(None, report(0))
    assert not is_edge(report(1), report(2))
    assert not is_edge(report(1), report(2, attempt=1))


def test_payload_counts_keep_every_version() -> None:
    reports, _clock, _pokes = channel()
    reports.publish(report(19, total=19))
    reports.publish(report(14, release=B))
    assert reports.payload_counts() == {"4.99.0": PayloadCounts(19, 0), "4.99.1": PayloadCounts(14, 6)}
