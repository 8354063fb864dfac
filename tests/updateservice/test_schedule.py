"""When the update service is asked again."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from updateservice.schedule import Action, LastAttempt, next_action, poll_interval

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
LAST = LastAttempt(upstream="u", channel="c", arch="amd64", at=NOW - timedelta(seconds=30),
                   sync_or_config_change=NOW - timedelta(seconds=30))
SAME: dict[str, Any] = {"upstream": "u", "channel": "c", "arch": "amd64", "interval": timedelta(minutes=3), "now": NOW,
        "needs_evaluation": False}


def test_rules_in_order() -> None:
    assert next_action(None, **SAME) is Action.FETCH
    assert next_action(LAST, **{**SAME, "channel": "d"}) is Action.FETCH
    assert next_action(LAST, **{**SAME, "arch": "arm64"}) is Action.FETCH
    assert next_action(LAST, **SAME) is Action.IDLE
    assert next_action(LAST, **{**SAME, "needs_evaluation": True}) is Action.EVALUATE
    assert next_action(LAST, **{**SAME, "upstream": "v"}) is Action.FETCH
    assert next_action(LAST, **{**SAME, "now": NOW + timedelta(minutes=3)}) is Action.FETCH
    stale = LastAttempt("u", "c", "amd64", NOW, NOW - timedelta(hours=25))
    assert next_action(stale, **SAME) is Action.FETCH


def test_the_interval_is_between_two_and_four_minutes() -> None:
    rng = random.Random(7)
    for _ in range(100):
        assert timedelta(minutes=2) <= poll_interval(rng) < timedelta(minutes=4)
