"""How fast the Update Status Controller writes its ConfigMaps (pure: every decision is a function
of what it was told and the `now` it is given).

Every write is charged to one token bucket: `rate` tokens a second, at most `burst` held. A
trickle of changes (a node at a time, as an update usually goes) finds tokens and is written at
once. A storm (hundreds of nodes changing together: a pool unpaused, kubelets restarting) would
otherwise rewrite every shard, about 224 KB each in etcd, many times a second; it drains the
bucket, and from then on the ConfigMap whose change has waited longest is written first, so no
change waits much longer than (ConfigMaps with changes) / `rate` seconds. There is no storm to
recognise and no end of one to catch up on: before, during and after, the writes in any `w`
seconds are at most `burst + rate × w`.

A change of the layout (shards added or dropped) is written in one go, in the order that keeps
it readable; it waits until the bucket holds as many tokens as it writes (a full bucket at most)
and leaves a debt for the rest, which the writes after it wait out.

    write, retry_in = pacer.choose(now, waiting)  # waiting: ConfigMap → since when it is not current
    write, retry_in = pacer.choose_and_tell(now, waiting, main, told, since)  # the main one says so
    pacer.wrote(now, writes)                      # once they are written
    retry_in = pacer.wait_for(now, writes)        # before a layout change: 0.0 when it may go
    writes = pacer.room(now)                      # how many may be written at once now
    stamp = current_as_of(now, waiting, write)    # the main ConfigMap's stamp when it is written
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

ROUNDING = 1e-9  # a token short by a rounding error is a token


@dataclass
class WritePacer:
    # 4 a second and 4 at once keep a burst of changes under 5 writes a second on average once
    # it lasts a second or more (4 + 4 × t ≤ 5 × t for t ≥ 4 s; the last of the waiting
    # ConfigMaps alone take 18 / 4 s at 5,000 nodes).
    rate: float = 4.0
    burst: int = 4
    _tokens: float = 0.0
    _tokens_at: float = float("-inf")

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.burst < 1:
            raise ValueError("the write rate must be positive and the burst at least 1")
        self._tokens = float(self.burst)

    def choose(
        self, now: float, waiting: Mapping[str, float], last: str = "", first: str = ""
    ) -> tuple[list[str], float | None]:
        """Which of the ConfigMaps with changes to write now (`waiting`: name → since when it has
        not been current): as many as there are tokens, oldest first, `last` (the main ConfigMap)
        after those that waited as long (shards first, as a layout change writes them), `first`
        before all (the main ConfigMap when it must say that writes are held back); and in how
        many seconds to come back for the others (None when all are chosen)."""
        if not waiting:
            return [], None
        order = sorted(waiting, key=lambda name: (name != first, waiting[name], name == last, name))
        allowed = self.room(now)
        if allowed >= len(order):
            return order, None
        return order[:allowed], self._seconds_until(allowed + 1)

    def choose_and_tell(
        self, now: float, waiting: dict[str, float], main: str, told: bool, since: float
    ) -> tuple[list[str], float | None]:
        """`choose` with `main` after those that waited as long, but first of all when some must
        wait and it does not say yet that writes are held back (`told`): it joins `waiting` (since
        `since`, when it had no change of its own) to say so before any other is deferred."""
        chosen, retry_in = self.choose(now, waiting, last=main)
        if len(chosen) < len(waiting) and not told:
            waiting.setdefault(main, since)
            chosen, retry_in = self.choose(now, waiting, last=main, first=main)
        return chosen, retry_in

    def room(self, now: float) -> int:
        """How many ConfigMaps may be written at `now` (0 while a layout change is paid back)."""
        self._refill(now)
        return max(0, int(self._tokens + ROUNDING))

    def wait_for(self, now: float, writes: int) -> float:
        """Seconds until `writes` writes made at once are within the bucket (0.0: now)."""
        self._refill(now)
        return self._seconds_until(min(writes, self.burst))

    def wrote(self, now: float, writes: int) -> None:
        """`writes` ConfigMap writes were made at `now`: they take tokens, beyond zero if a
        layout change wrote more than the bucket held."""
        self._refill(now)
        self._tokens -= writes

    def _seconds_until(self, tokens: int) -> float:
        short = tokens - self._tokens - ROUNDING
        return 0.0 if short <= 0 else max(0.001, short / self.rate)

    def _refill(self, now: float) -> None:
        if now > self._tokens_at:
            if self._tokens_at > float("-inf"):
                self._tokens = min(float(self.burst), self._tokens + (now - self._tokens_at) * self.rate)
            self._tokens_at = now


def current_as_of(now: float, waiting: Mapping[str, float], written: Iterable[str]) -> float:
    """Once `written` are written, the time up to which everything published is current: `now`,
    or when the oldest change still waiting was first seen (its ConfigMap shows what was true
    before it)."""
    chosen = set(written)
    return min((since for name, since in waiting.items() if name not in chosen), default=now)
