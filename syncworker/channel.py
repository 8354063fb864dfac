"""The one way the sync worker's reports reach the ClusterVersion status loop.

The worker publishes every report it gives (`publish`, its `on_report`); the status loop reads the
newest (`latest()`) at each sync and computes the whole status from it. Nothing flows back.

Upstream throttles the status syncs its worker's reports cause to one per 15 s with a burst of 2,
while edges go through at once: a new generation, a new release image, reconciling or not, a
failure that appears, changes or clears, a pass that completes (`is_edge`). The channel does the
same with the status loop's two pokes, `now()` and `later(seconds)`: a report that is neither an
edge nor within the budget asks for a sync when the budget allows one. The report itself is never
lost: the sync that comes reads the newest.

The channel also keeps what `cluster_version_payload{version,type}` exports: for each release
version the worker reported on, N applied and M - N pending as the last report said, set before
each task and at the end of each pass; old versions stay, as upstream's vectors keep stale label
sets.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from cvo_py.runtime.loop import TokenBucket
from syncworker.passes import Report

# Upstream's throttle of status syncs caused by the worker: one per 15 s, two at once.
STATUS_INTERVAL = 15.0
STATUS_BURST = 2


def is_edge(previous: Report | None, report: Report) -> bool:
    """Whether `report` goes to status at once, whatever the throttle: the first, and any that
    changes the generation, the release image, reconciling, the failure or completion."""
    if previous is None:
        return True
    return (
        previous.generation != report.generation
        or previous.release.image != report.release.image
        or previous.reconciling != report.reconciling
        or _failure(previous) != _failure(report)
        or previous.completed != report.completed
    )


def _failure(report: Report) -> tuple[str, str] | None:
    failure = report.failure
    return None if failure is None else (failure.reason, failure.message)


@dataclass(frozen=True)
class PayloadCounts:
    """`cluster_version_payload` for one version: manifests applied in the pass, and pending."""

    applied: int
    pending: int


class ReportChannel:
    """Reports, from the sync worker to the ClusterVersion status loop (see the module)."""

    def __init__(
        self,
        *,
        interval: float = STATUS_INTERVAL,
        burst: int = STATUS_BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._bucket = TokenBucket(interval, burst, clock())
        self._latest: Report | None = None
        self._notified: Report | None = None  # the last report published
        self._pending_at: float | None = None  # when the sync asked for by `later` comes
        self._payload: dict[str, PayloadCounts] = {}
        self._now: list[Callable[[], None]] = []
        self._later: list[Callable[[float], None]] = []

    def listen(self, now: Callable[[], None], later: Callable[[float], None]) -> None:
        """`now()` asks the status loop for a sync at once, `later(s)` for one in `s` seconds;
        both are called on the worker's threads and must return at once."""
        with self._lock:
            self._now.append(now)
            self._later.append(later)

    def publish(self, report: Report) -> None:
        """The worker's newest report (its `on_report`)."""
        with self._lock:
            self._latest = report
            self._payload[report.release.version] = PayloadCounts(report.done, max(0, report.total - report.done))
            at = self._clock()
            edge = is_edge(self._notified, report)
            self._notified = report
            if not edge and self._pending_at is not None and self._pending_at > at:
                return  # a sync is already asked for: it will read this report
            wait = self._bucket.reserve(at)  # an edge spends from the budget too
            if edge or wait <= 0:
                wait = 0.0
            else:
                self._pending_at = at + wait
            now, later = list(self._now), list(self._later)
        for poke in now if wait <= 0 else ():
            poke()
        for poke_in in later if wait > 0 else ():
            poke_in(wait)

    def latest(self) -> Report | None:
        with self._lock:
            return self._latest

    def payload_counts(self) -> dict[str, PayloadCounts]:
        """`cluster_version_payload` by version, as the last report of each said."""
        with self._lock:
            return dict(self._payload)
