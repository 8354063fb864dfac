"""How fast the Update Status Controller writes its ConfigMaps (pure: every decision is a function
of what it was told and the `now` it is given).

A trickle of changes (a node at a time, as an update usually goes) is written at once: each
change reaches the API in the sync that sees it. A storm (hundreds of nodes changing together: a
pool unpaused, kubelets restarting) would otherwise rewrite every shard, about 224 KB each in
etcd, many times a second. While one lasts, writes are paced to `rate` per second (a token
bucket of `burst`), the ConfigMap whose change has waited longest first, so no change waits much
longer than (ConfigMaps with changes) / `rate` seconds.

    pacer.changed(now, nodes_reassessed)          # after each computation of the insights
    write, retry_in = pacer.choose(now, waiting)  # waiting: ConfigMap → when its change was first seen
    pacer.wrote(now, len(write))                  # once they are written
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass
class WritePacer:
    rate: float = 5.0  # writes per second while a storm lasts
    burst: int = 5  # writes at once when the bucket is full
    storm_changes: int = 100  # insights changed within `window` seconds that make a storm
    window: float = 1.0
    calm_after: float = 2.0  # a storm ends once changes have stayed under the threshold this long

    _changes: collections.deque[tuple[float, int]] = field(default_factory=collections.deque)
    _storm_until: float = float("-inf")
    _tokens: float = 0.0
    _tokens_at: float = float("-inf")

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.burst < 1:
            raise ValueError("the write rate must be positive and the burst at least 1")
        self._tokens = float(self.burst)

    def changed(self, now: float, count: int) -> None:
        """`count` insights changed at `now` (a computation of the insights found them)."""
        if count > 0:
            self._changes.append((now, count))
        while self._changes and self._changes[0][0] <= now - self.window:
            self._changes.popleft()
        if sum(n for _, n in self._changes) >= self.storm_changes:
            self._storm_until = now + self.calm_after

    def storming(self, now: float) -> bool:
        return now < self._storm_until

    def choose(self, now: float, waiting: Mapping[str, float]) -> tuple[list[str], float | None]:
        """Which of the ConfigMaps with changes to write now (`waiting`: name → when its oldest
        unwritten change was first seen), oldest first, and in how many seconds to come back for
        the others (None when all are chosen)."""
        if not waiting:
            return [], None
        order = sorted(waiting, key=lambda name: (waiting[name], name))
        if not self.storming(now):
            return order, None
        self._refill(now)
        allowed = int(self._tokens + 1e-9)  # a token short by a rounding error is a token
        if allowed >= len(order):
            return order, None
        return order[:allowed], max(0.001, (allowed + 1 - self._tokens) / self.rate)

    def wrote(self, now: float, writes: int) -> None:
        """`writes` ConfigMap writes were made at `now` (they take tokens in a storm and out of one)."""
        self._refill(now)
        self._tokens = max(0.0, self._tokens - writes)

    def _refill(self, now: float) -> None:
        if now > self._tokens_at:
            elapsed = now - self._tokens_at
            self._tokens = min(float(self.burst), self._tokens + elapsed * self.rate)
            self._tokens_at = now
