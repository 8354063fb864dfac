"""The Update Status Controller's write pacing (pure): a trickle is written at once, a storm at
a bounded rate, the longest-waiting ConfigMap first, and nothing is left waiting for good."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from status.updatestatus.controller.pacing import WritePacer, current_as_of
from testkit.harness import usc as h

SHARDS = [f"cm-{i:02d}" for i in range(17)]
CONFIGMAPS = ["main", *SHARDS]  # the main ConfigMap and 17 shards, as at 5,000 nodes


def test_a_trickle_is_written_at_once() -> None:
    pacer = WritePacer()
    now = 0.0
    for _ in range(200):  # a change a second, each to the main ConfigMap and a shard
        write, retry = pacer.choose(now, {"main": now, "cm-03": now})
        assert (sorted(write), retry) == (["cm-03", "main"], None)
        pacer.wrote(now, len(write))
        now += 1.0


def test_writes_beyond_the_bucket_wait_oldest_first_and_are_told_when_to_come_back() -> None:
    pacer = WritePacer(rate=5, burst=5)
    waiting = {name: 0.0 if name == "cm-16" else 0.5 for name in SHARDS}
    write, retry = pacer.choose(1.0, waiting)
    assert write[0] == "cm-16" and len(write) == 5  # the full bucket, the longest waiting first
    assert retry == pytest.approx(0.2)  # one more token at five a second
    pacer.wrote(1.0, len(write))
    rest = {n: t for n, t in waiting.items() if n not in write}
    write, retry = pacer.choose(1.0, rest)
    assert write == [] and retry == pytest.approx(0.2)
    write, retry = pacer.choose(1.2, rest)
    assert len(write) == 1 and retry == pytest.approx(0.2)


def test_the_main_configmap_goes_after_shards_that_waited_as_long() -> None:
    pacer = WritePacer(rate=4, burst=4)
    pacer.wrote(0.0, 3)  # one token left
    waiting = {"main": 1.0, "cm-03": 1.0, "cm-07": 2.0}
    assert pacer.choose(0.0, waiting, last="main")[0] == ["cm-03"]  # the node's change, not the stamp
    assert pacer.choose(10.0, waiting, last="main")[0] == ["cm-03", "main", "cm-07"]
    assert pacer.choose(10.0, {"main": 0.5, "cm-03": 1.0}, last="main")[0] == ["main", "cm-03"]


def test_a_layout_change_waits_for_room_and_what_it_writes_beyond_the_bucket_is_paid_back() -> None:
    pacer = WritePacer(rate=4, burst=4)
    pacer.wrote(0.0, 3)
    assert pacer.wait_for(0.0, len(CONFIGMAPS)) == pytest.approx(0.75)  # until the bucket is full
    assert pacer.wait_for(0.75, len(CONFIGMAPS)) == 0.0
    pacer.wrote(0.75, len(CONFIGMAPS))  # 18 at once, 14 beyond the bucket
    write, retry = pacer.choose(0.75, {"main": 0.75})
    assert write == [] and retry == pytest.approx(15 / 4)  # the debt, then a token
    assert pacer.choose(0.75 + 15 / 4, {"main": 0.75})[0] == ["main"]


def simulate(
    pacer: WritePacer, changes: list[tuple[float, str]], sync_interval: float = 0.02
) -> tuple[list[float], dict[str, list[float]], float]:
    """The controller's loop against `pacer`: a sync at each change (at most one per
    `sync_interval`, as the loop's minimum interval) and when the pacer said to come back; each
    change makes its ConfigMap and the main one (its metadata) wait. Returns the times of the
    writes, those of each ConfigMap, and when nothing waited any more."""
    writes: list[float] = []
    written: dict[str, list[float]] = {name: [] for name in CONFIGMAPS}
    waiting: dict[str, float] = {}
    due: float | None = None
    i, now = 0, 0.0
    while i < len(changes) or waiting:
        next_change = changes[i][0] if i < len(changes) else float("inf")
        now = max(now + sync_interval, min(next_change, due if due is not None else float("inf")))
        while i < len(changes) and changes[i][0] <= now:
            for name in (changes[i][1], "main"):
                waiting.setdefault(name, changes[i][0])
            i += 1
        write, retry = pacer.choose(now, waiting, last="main")
        assert write == sorted(waiting, key=lambda n: (waiting[n], n == "main", n))[: len(write)]  # oldest first
        pacer.wrote(now, len(write))
        for name in write:
            del waiting[name]
            written[name].append(now)
            writes.append(now)
        assert (retry is None) == (not waiting) and (retry is None or retry > 0)
        due = None if retry is None else now + retry
    return writes, written, now


def test_a_long_storm_through_the_default_pacer_keeps_every_second_within_the_bucket() -> None:
    """A trickle (a change every 2 s for 20 s), a storm (3,000 changes over 10 s, spread over all
    shards), a trickle again once the storm's waiting ConfigMaps are written. In every 1-second
    window, before, during and after the storm: at most `burst + rate × 1` writes. Every change
    published (its ConfigMap written after it); a trickle's at once, a storm's within every
    ConfigMap's turn."""
    rng = random.Random(26)
    pacer = WritePacer()
    window = 1.0
    bound = pacer.burst + pacer.rate * window  # 8 with the defaults: 4 at once, 4 a second
    changes = [(t * 2.0, rng.choice(SHARDS)) for t in range(10)]
    changes += sorted((20.0 + rng.uniform(0.0, 10.0), rng.choice(SHARDS)) for _ in range(3000))
    changes += [(36.0 + t * 2.0, rng.choice(SHARDS)) for t in range(10)]
    writes, written, idle_at = simulate(pacer, changes)

    assert h.most_in_any_window(writes, window) <= bound
    for when, name in changes:  # nothing lost: each ConfigMap a change touched is written after it
        published = min(t for t in written[name] if t >= when)
        if when < 20.0 or when >= 36.0:  # a trickle finds tokens: written in the sync that sees it
            assert published - when <= 0.02 + 1e-9
        else:  # in the storm, or in its wake, no longer than every ConfigMap's turn
            assert published - when <= (len(CONFIGMAPS) + 1) / pacer.rate
    assert idle_at <= changes[-1][0] + 0.02 + 1e-9


@settings(max_examples=200)
@given(st.lists(st.tuples(st.floats(0.0, 0.5), st.sets(st.sampled_from(SHARDS)), st.integers(0, 20)), max_size=80))
def test_all_writes_stay_within_the_bucket_and_none_waits_for_good(
    steps: list[tuple[float, set[str], int]],
) -> None:
    """Over any run of syncs (each: time passes, ConfigMaps change, now and then a layout change
    writes some at once), the writes in any span of `w` seconds fit `max(burst, largest layout
    change) + rate × w`, and once the changes stop every waiting ConfigMap is written within
    (how many wait) / rate seconds."""
    rate, burst = 5.0, 5
    pacer = WritePacer(rate=rate, burst=burst)
    now = 0.0
    waiting: dict[str, float] = {}
    made: list[tuple[float, int]] = []
    largest_layout = 0
    for pause, touched, layout in steps:
        now += pause
        if layout >= 10:  # now and then: the layout changes, all of it written in one go
            if pacer.wait_for(now, layout) == 0.0:
                pacer.wrote(now, layout)
                made.append((now, layout))
                largest_layout = max(largest_layout, layout)
            continue
        for name in touched:
            waiting.setdefault(name, now)
        write, retry = pacer.choose(now, waiting)
        assert retry is None or retry > 0
        assert write == sorted(waiting, key=lambda n: (waiting[n], n))[: len(write)]
        made.append((now, len(write)))
        pacer.wrote(now, len(write))
        for name in write:
            del waiting[name]
        if write == [] and waiting:
            assert retry is not None
    for i in range(len(made)):
        for j in range(i, len(made)):
            writes = sum(n for _, n in made[i : j + 1])
            assert writes <= max(burst, largest_layout) + (made[j][0] - made[i][0]) * rate + 1e-9
    # The changes stop: coming back when told, everything is written in bounded time (a layout
    # change's debt first).
    deadline = now + (len(waiting) + max(0, largest_layout - burst)) / rate + 1 / rate
    while waiting:
        write, retry = pacer.choose(now, waiting)
        pacer.wrote(now, len(write))
        for name in write:
            del waiting[name]
        if waiting:
            assert retry is not None
            now += retry
        assert now <= deadline + 1e-9


def test_the_stamp_is_the_oldest_change_left_waiting() -> None:
    """The main ConfigMap written while shards wait: its stamp must not say their older content
    is current, and it never goes back in time as the waiting ones are written oldest first."""
    some = {"main": 3.0, "cm-00": 1.0, "cm-01": 2.0, "cm-02": 2.5}
    assert current_as_of(4.0, some, some) == 4.0  # all written: current now
    assert current_as_of(4.0, some, ["main", "cm-00"]) == 2.0
    assert current_as_of(4.0, {}, []) == 4.0
    rng = random.Random(3)
    pacer, now, stamps, behind = WritePacer(), 0.0, [0.0], 0
    waiting: dict[str, float] = {}
    for _ in range(300):
        now += rng.uniform(0.0, 1.5)
        for name in rng.sample(SHARDS, rng.randrange(6)):
            waiting.setdefault(name, now)
            waiting.setdefault("main", now)  # a changed insight changes the metadata too
        write, _ = pacer.choose(now, waiting)
        pacer.wrote(now, len(write))
        if "main" in write:
            stamp = current_as_of(now, waiting, write)
            assert stamps[-1] <= stamp <= now
            assert all(since >= stamp for name, since in waiting.items() if name not in write)
            stamps.append(stamp)
            behind += stamp < now
        for name in write:
            del waiting[name]
    assert len(stamps) > 100 and behind > 10  # stamped often, and often behind


def test_when_some_must_wait_the_main_configmap_goes_first_to_say_so() -> None:
    pacer = WritePacer(rate=4, burst=4)
    pacer.wrote(0.0, 2)  # two tokens left
    waiting = {"cm-00": 1.0, "cm-01": 1.0, "cm-02": 1.0}
    # the main ConfigMap has no change of its own, but must say that two of these will wait
    write, retry = pacer.choose_and_tell(0.0, waiting, "main", told=False, since=1.5)
    assert write == ["main", "cm-00"] and retry == pytest.approx(0.25)
    assert waiting["main"] == 1.5  # it joined the waiting ones
    # once it says so, it keeps its place: after those that waited as long
    waiting = {"main": 1.0, "cm-00": 1.0, "cm-01": 0.5}
    assert pacer.choose_and_tell(0.0, waiting, "main", told=True, since=1.5)[0] == ["cm-01", "cm-00"]
    # when all fit, nothing is said and the main ConfigMap is not written for it
    waiting = {"cm-00": 1.0}
    assert pacer.choose_and_tell(0.0, waiting, "main", told=False, since=1.5)[0] == ["cm-00"]
    assert "main" not in waiting
    # with no token at all, it is first in line for the next one
    pacer.wrote(0.0, 2)
    waiting = {"cm-00": 1.0, "cm-01": 1.0}
    assert pacer.choose_and_tell(0.0, waiting, "main", told=False, since=1.5) == ([], pytest.approx(0.25))
    assert pacer.choose_and_tell(0.25, waiting, "main", told=False, since=1.5)[0] == ["main"]


@settings(max_examples=200)
@given(st.lists(st.tuples(st.floats(0.0, 0.6), st.sets(st.sampled_from(SHARDS)), st.booleans()), max_size=80))
def test_a_configmap_waits_past_the_next_token_only_while_the_main_configmap_says_so(
    steps: list[tuple[float, set[str], bool]],
) -> None:
    """The controller's loop (a sync at each step: shards and perhaps the main ConfigMap change,
    as many are written as the pacer allows): whenever a sync leaves some ConfigMap waiting, the
    main ConfigMap either says that writes are held back, or had no token at all and is the first
    to be written at the next one. It says so no longer than something waits."""
    pacer = WritePacer(rate=4.0, burst=4)
    now, told = 0.0, False  # what the main ConfigMap published says
    waiting: dict[str, float] = {}
    for pause, touched, main_changed in [*steps, *[(0.25, set(), False)] * 120]:  # then the changes stop
        now += pause
        for name in touched | ({"main"} if main_changed else set()):
            waiting.setdefault(name, now)
        if told:  # until written with nothing left waiting, it has that to say
            waiting.setdefault("main", now)
        write, _ = pacer.choose_and_tell(now, waiting, "main", told, since=now)
        pacer.wrote(now, len(write))
        for name in write:
            del waiting[name]
        if "main" in write:
            told = bool(waiting)
        if waiting:
            assert told or (write == [] and "main" in waiting), (write, waiting)
    assert not waiting and not told  # everything written, and said to be


def test_a_pacer_needs_a_positive_rate_and_a_bucket() -> None:
    with pytest.raises(ValueError, match="positive"):
        WritePacer(rate=0)
    with pytest.raises(ValueError, match="at least 1"):
        WritePacer(burst=0)
