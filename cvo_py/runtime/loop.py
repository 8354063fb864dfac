"""A coalescing work trigger: many `poke()`s while a sync runs lead to one more sync, not many."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from cvo_py.runtime import klog
from cvo_py.runtime.informer import Backoff

log = logging.getLogger(__name__)


class TokenBucket:
    """At most `burst` runs at once, then one per `interval` seconds (a token bucket)."""

    def __init__(self, interval: float, burst: int = 1, now: float = 0.0) -> None:
        self.interval = interval
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._at = now

    def reserve(self, now: float) -> float:
        """Take a token at `now`; returns how long to wait before using it (0: at once)."""
        if self.interval <= 0:
            return 0.0
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) / self.interval)
        self._at = now
        self._tokens -= 1
        return 0.0 if self._tokens >= 0 else -self._tokens * self.interval


class SyncLoop:
    """Runs `sync()` on its own thread whenever poked (and every `resync` seconds, and when a
    deadline set by `poke_in` comes).

    Bursts of pokes are coalesced: a sync runs at most once per `min_interval` seconds on
    average, with up to `burst` at once after a quiet spell, so an event after an idle period
    (or after the echo of our own write) is handled at once. A sync that raises is retried with
    jittered backoff.
    """

    def __init__(
        self,
        name: str,
        sync: Callable[[], None],
        *,
        resync: float | None = None,
        min_interval: float = 0.0,
        burst: int = 1,
        expected_errors: tuple[type[BaseException], ...] = (),
    ) -> None:
        self.name = name
        # Failures that are part of operating (an API server away for a moment, a write that did
        # not land): one log line each; anything else is a bug and is logged with its traceback.
        self.expected_errors = expected_errors
        self._sync = sync
        self.resync = resync
        self.min_interval = min_interval
        self._bucket = TokenBucket(min_interval, burst, time.monotonic())
        self._wake = threading.Event()  # set to make the loop look again: poked, a deadline, stopping
        self._requested = False  # poked since the last sync
        self._due_lock = threading.Lock()
        self._due: float | None = None  # the earliest `poke_in` deadline (monotonic), until a sync
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._backoff = Backoff(base=0.5, cap=30.0)
        self.runs = 0
        self.failures = 0
        self.idle = threading.Event()

    def poke(self) -> None:
        self._requested = True
        self._wake.set()

    def poke_in(self, seconds: float) -> None:
        """A sync `seconds` from now, or sooner if poked meanwhile (any sync takes the place of
        a pending deadline). No thread or timer is started: the loop waits for it."""
        due = time.monotonic() + max(0.0, seconds)
        with self._due_lock:
            if self._due is None or due < self._due:
                self._due = due
                self._wake.set()  # the loop looks again and waits for the new deadline

    def start(self) -> SyncLoop:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _wait(self) -> None:
        """Until poked or stopped, `resync` seconds have passed, or the `poke_in` deadline came."""
        resync_at = None if self.resync is None else time.monotonic() + self.resync
        while True:
            self._wake.clear()  # before looking: a poke or a stop from now on sets it again
            if self._stop.is_set():  # after clearing: a stop that came just before is not lost
                return
            now = time.monotonic()
            with self._due_lock:
                due = self._due
            if self._requested or (due is not None and now >= due) or (resync_at is not None and now >= resync_at):
                return
            deadlines = [t for t in (resync_at, due) if t is not None]
            self._wake.wait(min(deadlines) - now if deadlines else None)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.idle.set()
            self._wait()
            if self._stop.is_set():
                return
            self.idle.clear()
            delay = self._bucket.reserve(time.monotonic())
            if delay > 0 and self._stop.wait(delay):
                return
            self._requested = False
            with self._due_lock:
                self._due = None
            klog.v(5).info("%s: sync (%.1f ms held back by the rate limit)", self.name, max(0.0, delay) * 1000)
            try:
                self._sync()
                self.runs += 1
                self._backoff.reset()
            except Exception as exc:
                self.failures += 1
                delay = self._backoff.next()
                if isinstance(exc, self.expected_errors):
                    log.error("%s: sync failed: %s; retrying in %.1fs", self.name, exc, delay)
                else:
                    log.exception("%s: sync failed; retrying in %.1fs", self.name, delay)
                self._stop.wait(delay)
                self.poke()
                continue


class Timers:
    """Delayed calls that can all be cancelled at once (e.g. when their owner stops), so none
    fires, and no timer thread lingers, after the owner is gone."""

    def __init__(self, name: str) -> None:
        self.name = name  # of the timer threads
        self._lock = threading.Lock()
        self._timers: list[threading.Timer] = []
        self._cancelled = False

    def add(self, delay: float, call: Callable[[], None]) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._timers = [t for t in self._timers if t.is_alive()]
            timer = threading.Timer(delay, call)
            timer.daemon = True
            timer.name = self.name
            self._timers.append(timer)
            timer.start()

    def cancel(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._cancelled = True
            timers, self._timers = self._timers, []
        for timer in timers:
            timer.cancel()
        for timer in timers:
            timer.join(timeout)
