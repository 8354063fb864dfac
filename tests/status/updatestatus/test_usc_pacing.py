"""The Update Status Controller's write pacing (pure): a trickle is written at once, a storm at
a bounded rate, the longest-waiting ConfigMap first, and nothing is left waiting for good."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from status.updatestatus.controller.pacing import WritePacer
from status.updatestatus.controller.sync import changed_values

SHARDS = [f"cm-{i:02d}" for i in range(17)]


def test_a_trickle_is_written_at_once() -> None:
    pacer = WritePacer(rate=5, burst=5, storm_changes=50)
    now = 0.0
    for _ in range(200):  # ten changes a second, each to the main ConfigMap and a shard
        pacer.changed(now, 2)
        write, retry = pacer.choose(now, {"main": now, "cm-03": now})
        assert (sorted(write), retry) == (["cm-03", "main"], None)
        pacer.wrote(now, len(write))
        now += 0.1


def test_a_storm_is_paced_oldest_first_and_comes_back_for_the_rest() -> None:
    pacer = WritePacer(rate=5, burst=5, storm_changes=50)
    pacer.changed(0.0, 300)
    assert pacer.storming(0.0)
    waiting = {name: 0.0 if name == "cm-16" else 0.5 for name in SHARDS}
    write, retry = pacer.choose(1.0, waiting)
    assert write[0] == "cm-16" and len(write) == 5  # the full bucket, the longest waiting first
    assert retry == pytest.approx(0.2)  # one more token at five a second
    pacer.wrote(1.0, len(write))
    assert pacer.choose(1.0, {n: t for n, t in waiting.items() if n not in write}) == ([], pytest.approx(0.2))
    write, retry = pacer.choose(1.2, {n: t for n, t in waiting.items() if n not in write})
    assert len(write) == 1 and retry == pytest.approx(0.2)


def test_a_storm_ends_once_changes_stay_few() -> None:
    pacer = WritePacer(rate=5, burst=5, storm_changes=50, window=1.0, calm_after=2.0)
    pacer.changed(0.0, 60)
    assert pacer.storming(1.9)
    pacer.changed(1.5, 10)  # few: the storm is not renewed
    assert not pacer.storming(2.0)
    assert pacer.choose(2.0, {n: 0.0 for n in SHARDS}) == (sorted(SHARDS), None)


def test_changes_spread_over_more_than_the_window_make_no_storm() -> None:
    pacer = WritePacer(storm_changes=50, window=1.0)
    for tick in range(100):
        pacer.changed(tick * 0.05, 2)  # 40 a second
    assert not pacer.storming(5.0)


@settings(max_examples=200)
@given(st.lists(st.tuples(st.floats(0.0, 0.5), st.integers(0, 200), st.sets(st.sampled_from(SHARDS))), max_size=80))
def test_in_a_storm_writes_stay_within_the_bucket_and_none_waits_for_good(
    steps: list[tuple[float, int, set[str]]],
) -> None:
    """Over any run of syncs (each: time passes, changes come, ConfigMaps change), the writes
    made while storming fit `burst + rate × elapsed`, and once the changes stop every waiting
    ConfigMap is written within (how many wait) / rate seconds."""
    rate, burst = 5.0, 5
    pacer = WritePacer(rate=rate, burst=burst, storm_changes=50)
    now = 0.0
    waiting: dict[str, float] = {}
    storm_writes: list[tuple[float, int]] = []
    for pause, changes, touched in steps:
        now += pause
        pacer.changed(now, changes)
        for name in touched:
            waiting.setdefault(name, now)
        write, retry = pacer.choose(now, waiting)
        assert retry is None or retry > 0
        assert write == sorted(waiting, key=lambda n: (waiting[n], n))[: len(write)]
        if pacer.storming(now):
            storm_writes.append((now, len(write)))
        pacer.wrote(now, len(write))
        for name in write:
            del waiting[name]
        if write == [] and waiting:
            assert retry is not None
    for i in range(len(storm_writes)):
        for j in range(i, len(storm_writes)):
            made = sum(n for _, n in storm_writes[i : j + 1])
            assert made <= burst + (storm_writes[j][0] - storm_writes[i][0]) * rate + 1e-9
    # The changes stop: coming back when told, everything is written in bounded time.
    deadline = now + len(waiting) / rate + 1 / rate + pacer.calm_after
    while waiting:
        write, retry = pacer.choose(now, waiting)
        pacer.wrote(now, len(write))
        for name in write:
            del waiting[name]
        if waiting:
            assert retry is not None
            now += retry
        assert now <= deadline


def test_changed_values_counts_added_removed_and_changed_keys() -> None:
    before = {"a": "1", "b": "2", "c": "3"}
    assert changed_values(before, dict(before)) == 0
    assert changed_values(before, {"a": "1", "b": "x", "d": "4"}) == 3  # b changed, c removed, d added
    rng = random.Random(7)
    keys = [f"usc-node-{i}" for i in range(50)]
    old = {k: str(rng.randrange(3)) for k in keys}
    new = {k: str(rng.randrange(3)) for k in keys if rng.random() < 0.9}
    want = len({k for k in old.keys() | new.keys() if old.get(k) != new.get(k)})
    assert changed_values(old, new) == want
