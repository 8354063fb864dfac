"""The one way payload-retrieval state reaches the ClusterVersion status loop.

The retrieval coordinator publishes; the status loop reads and acknowledges. Nothing flows back
but the acknowledgement:

- `publish()` (the coordinator) makes a new `RetrievalSnapshot`: an immutable value holding the
  latest acceptance of the wanted target and every retrieval `Outcome` not yet acknowledged, with
  a serial number one higher than the last. Each publication calls the listener (the status
  loop's poke) unless it is quiet.
- `latest()` (the status loop) returns the newest snapshot; the loop computes the whole status
  from it, writes it, then calls `acknowledge(snapshot)` once: the status computed from that
  snapshot is written (or was already, or the API server refused it and waiting would not help).
  That drops the outcomes it carried, which the loop records as Events after the write.
- `wait_acknowledged(serial, timeout)` (the coordinator) holds a failed retrieval's cleanup until
  its failure is written: deleting the version Pod is a write the API server would otherwise
  commit ahead of the status write, each waiting for its own disk sync.

A sync worker that applies the payload would report its passes on a channel of the same shape:
one more immutable input of the status computation, acknowledged after the same write.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from dataclasses import dataclass

from payload.acceptance import PreconditionOutcome, ReleaseAcceptance
from payload.release import Acceptance, Release

# Outcomes kept for the status loop at most (it drains them at every write; a loop that cannot
# write for long keeps the newest).
MAX_OUTCOMES = 64


@dataclass(frozen=True)
class Outcome:
    """A retrieval starting (`state` is the "Retrieving and verifying" state) or ending (its final
    state): the target as requested, and the exception when it ended with one instead of a state of its own.
    With `preconditions`, the checks of `target` passed (perhaps with a warning) at that point."""

    target: Release
    state: ReleaseAcceptance
    error: BaseException | None = None
    preconditions: PreconditionOutcome | None = None


@dataclass(frozen=True)
class RetrievalSnapshot:
    """One publication of the retrieval coordinator, as the status loop reads it."""

    # 0 before the first publication; one more at each.
    serial: int = 0
    # The latest payload-retrieval state of the wanted target (None: nothing wanted, or nothing yet).
    acceptance: Acceptance | None = None
    # Retrievals that started or ended and were not yet acknowledged, oldest first (Events to record).
    outcomes: tuple[Outcome, ...] = ()


class RetrievalChannel:
    """Retrieval state, from the coordinator to the ClusterVersion status loop (see the module)."""

    def __init__(self, max_outcomes: int = MAX_OUTCOMES) -> None:
        self._lock = threading.Lock()
        # Notified on every publication, acknowledgement and on close.
        self._changed = threading.Condition(self._lock)
        self._serial = 0
        self._acceptance: Acceptance | None = None
        self._outcomes: collections.deque[tuple[int, Outcome]] = collections.deque(maxlen=max_outcomes)
        self._acknowledged = 0
        self._closed = False
        self._listeners: list[Callable[[], None]] = []

    def listen(self, on_publish: Callable[[], None]) -> None:
        """Call `on_publish` after each publication that is not quiet. It is called on the
        publisher's thread and must return at once (a poke)."""
        self._listeners.append(on_publish)

    # -- the coordinator's side ------------------------------------------------------------------

    def publish(self, acceptance: Acceptance | None, outcomes: tuple[Outcome, ...] = (), *, quiet: bool = False) -> int:
        """A new snapshot with `acceptance` and `outcomes` added to those not yet acknowledged;
        its serial. `quiet`: the reader reads next anyway (it is the caller), so it is not told."""
        with self._lock:
            self._serial += 1
            self._acceptance = acceptance
            self._outcomes.extend((self._serial, outcome) for outcome in outcomes)
            self._changed.notify_all()
            serial = self._serial
        if not quiet:
            for on_publish in self._listeners:
                on_publish()
        return serial

    def wait_acknowledged(self, serial: int, timeout: float) -> bool:
        """Wait, at most `timeout` seconds, until the snapshot `serial` (or a later one) is
        acknowledged; a later publication (the wanted target changed) or `close()` ends the wait
        too. Whether it was acknowledged."""
        with self._lock:
            self._changed.wait_for(
                lambda: self._acknowledged >= serial or self._serial > serial or self._closed, timeout
            )
            return self._acknowledged >= serial

    def close(self) -> None:
        """The coordinator is stopping: no wait holds anything up any more (publishing still works)."""
        with self._lock:
            self._closed = True
            self._changed.notify_all()

    # -- the status loop's side ------------------------------------------------------------------

    def latest(self) -> RetrievalSnapshot:
        with self._lock:
            outcomes = tuple(outcome for _serial, outcome in self._outcomes)
            return RetrievalSnapshot(self._serial, self._acceptance, outcomes)

    def acknowledge(self, snapshot: RetrievalSnapshot) -> None:
        """The status computed from `snapshot` is written: its outcomes are done with, and a
        cleanup waiting for it goes ahead."""
        with self._lock:
            self._acknowledged = max(self._acknowledged, snapshot.serial)
            while self._outcomes and self._outcomes[0][0] <= snapshot.serial:
                self._outcomes.popleft()
            self._changed.notify_all()
