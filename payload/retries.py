"""When a requested target is retrieved again (pure: the caller holds its lock around every call and
gives the time).

A retrieved target is not retrieved again. A failed one is, as upstream's sync worker retries a
failed pass: after `retry_after`/8, /4, /2, then `retry_after` seconds for each failure in a row
(each ×`jitter()`), or at once when what it depended on changed (`retry_now`, and for a refusal of
the precondition checks, a change of what they read).
"""

from __future__ import annotations

from collections.abc import Callable

from payload.acceptance import ReleaseAcceptance
from payload.release import Release

# A requested target and whether the update is forced: what identifies a request.
Key = tuple[Release, bool]

NEVER, NOW = float("inf"), float("-inf")


class RetryBook:
    """What became of each target asked for, and when it may be tried again."""

    def __init__(self, retry_after: float, jitter: Callable[[], float]) -> None:
        self.retry_after = retry_after
        self._jitter = jitter
        # → (status, when it may be tried again: a clock time; NEVER for a success).
        self._finished: dict[Key, tuple[str, float]] = {}
        self._failed_in_a_row: dict[Key, int] = {}
        self._failures: dict[Key, ReleaseAcceptance] = {}  # the last failure of each
        self._refused_with: dict[Key, str] = {}  # what the checks read when they refused it

    def forget(self, key: Key) -> None:
        """Asked for anew (A → B → A): retrieved again, as if never tried."""
        for book in (self._finished, self._failures, self._failed_in_a_row, self._refused_with):
            book.pop(key, None)

    def due(self, key: Key, now: float) -> bool:
        """Never tried, or failed and its retry time has come."""
        finished = self._finished.get(key)
        return finished is None or (finished[0] != "True" and now >= finished[1])

    def failed_last(self, key: Key) -> bool:
        finished = self._finished.get(key)
        return finished is not None and finished[0] == "False"

    def retry_delay(self, failures: int) -> float:
        """Seconds before the next attempt after `failures` failures in a row (before jitter)."""
        return self.retry_after / (1 << max(0, 4 - failures))  # /8, /4, /2, then the whole interval

    def wait(self, key: Key | None, now: float) -> float:
        """Seconds until `key`'s retry is due (at most `retry_after`: the caller looks again then)."""
        finished = self._finished.get(key) if key is not None else None
        if finished is None or finished[0] == "True":
            return self.retry_after
        return min(self.retry_after, max(0.0, finished[1] - now))

    def succeeded(self, key: Key) -> None:
        self._finished[key] = ("True", NEVER)
        for book in (self._failures, self._failed_in_a_row, self._refused_with):
            book.pop(key, None)

    def failed(self, key: Key, final: ReleaseAcceptance, now: float, *, at_once: bool) -> None:
        failures = self._failed_in_a_row[key] = self._failed_in_a_row.get(key, 0) + 1
        retry_at = NOW if at_once else now + self.retry_delay(failures) * self._jitter()
        self._finished[key] = (final.status, retry_at)
        self._failures[key] = final

    def retry_now(self, applies: Callable[[ReleaseAcceptance], bool]) -> None:
        """What failures depended on changed: those it `applies` to are due at once."""
        for key, (status, _when) in list(self._finished.items()):
            final = self._failures.get(key)
            if status != "True" and final is not None and applies(final):
                self._finished[key] = (status, NOW)

    def refused(self, key: Key, checks_inputs: str) -> None:
        """The precondition checks refused `key`, reading `checks_inputs`."""
        self._refused_with[key] = checks_inputs

    def recheck(self, key: Key, checks_inputs: Callable[[], str]) -> bool:
        """What the checks read is `checks_inputs()` now (called only when `key` was refused): a
        refusal decided on something else is due at once. Whether it was."""
        refused_with = self._refused_with.get(key)
        if refused_with is None or refused_with == checks_inputs():
            return False
        del self._refused_with[key]
        status, _when = self._finished.get(key, ("False", NOW))
        self._finished[key] = (status, NOW)
        return True
