"""One pass's cancellation: new work, a stop or the pass timeout cuts it short, and every wait of
the pass ends with it (`../shared/reference/sync-worker-facts.md` §6)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


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
