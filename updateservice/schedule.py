"""When to ask the update service again, by the CVO's polling rules, and whether a failed attempt
keeps the lists found before (pure).

The first matching case wins: no earlier attempt, a changed channel or architecture, or a day
since the last success or configuration change → fetch; the poll interval elapsed → fetch; the
same upstream → only re-evaluate risks, and only when some `Recommended` is neither True nor False
or the accepted risks changed; a changed upstream → fetch.

A failure to reach the service or to read its answer keeps the last lists, but only for a day
after the last success (or configuration change): past that, every failed attempt clears them, so a
list nobody could confirm for a day is not offered any more.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

BASE_INTERVAL = timedelta(minutes=2)
FULL_REFRESH = timedelta(hours=24)


def poll_interval(rng: random.Random) -> timedelta:
    """2 minutes × (1 + a random fraction), chosen once per process as the CVO does."""
    return BASE_INTERVAL * (1 + rng.random())


class Action(Enum):
    FETCH = "fetch"
    EVALUATE = "evaluate"
    IDLE = "idle"


@dataclass(frozen=True)
class LastAttempt:
    upstream: str
    channel: str
    arch: str
    at: datetime
    # When the lists were last confirmed (a success) or their inputs last changed.
    sync_or_config_change: datetime


def next_action(
    last: LastAttempt | None,
    *,
    upstream: str,
    channel: str,
    arch: str,
    interval: timedelta,
    now: datetime,
    needs_evaluation: bool,
) -> Action:
    if last is None or last.channel != channel or last.arch != arch or now - last.sync_or_config_change > FULL_REFRESH:
        return Action.FETCH
    if now - last.at >= interval:
        return Action.FETCH
    if last.upstream == upstream:
        return Action.EVALUATE if needs_evaluation else Action.IDLE
    return Action.FETCH


# The failures that keep the last good lists (only the condition changes); every other clears them.
KEEPS_LAST_UPDATES = frozenset({"RemoteFailed", "ResponseFailed", "ResponseInvalid"})


def keeps_lists(reason: str, same_question: bool, last_success: datetime | None, now: datetime) -> bool:
    """Whether a failed attempt (`reason`) keeps the lists found before: same upstream, channel,
    architecture and version; a failure of the service, not of the request; and the lists confirmed
    (or their configuration changed) within a day of `now` (`last_success`; None: not known)."""
    if not same_question or reason not in KEEPS_LAST_UPDATES:
        return False
    return last_success is None or now - last_success <= FULL_REFRESH
