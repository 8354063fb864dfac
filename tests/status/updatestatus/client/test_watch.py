"""`upgrade-status --watch`'s decisions (pure): what a frame shows, when time alone changes it,
how it fits a window (one that reports no size included), how a burst of changes is paced, and
what a terminal and a pipe receive."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import termios
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cvo_py import __version__
from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.times import format_time
from status.updatestatus.api import configmap, metadata, staleness, wire
from status.updatestatus.api.names import CONFIGMAP, NAMESPACE
from status.updatestatus.client.render import render
from status.updatestatus.client.watch import REDRAW_GAP, Screen, age_line, compose, fit, hold, terminal_size
from testkit.objects.insight_objects import ns, sample_insights

NOW = ns(0)
RESYNC = 30 * SECOND


def configmaps(computed_at: int = NOW, shards: bool = False, **extra: str) -> dict[str, dict[str, object]]:
    data = configmap.encode(sample_insights())
    data[metadata.META_KEY] = metadata.encode(metadata.build(computed_at, "usc-0", __version__, RESYNC, []))
    data.update(extra)
    out: dict[str, dict[str, object]] = {}
    if shards:
        nodes = {k: v for k, v in data.items() if k.startswith(configmap.PREFIX_NODE)}
        data = {k: v for k, v in data.items() if k not in nodes}
        data[configmap.SHARDS_KEY] = f'["{configmap.shard_name(0)}"]'
        out[configmap.shard_name(0)] = {"metadata": {"name": configmap.shard_name(0)}, "data": nodes}
    out[CONFIGMAP] = {"metadata": {"name": CONFIGMAP}, "data": data}
    return out


def held(renewed: int = NOW, seconds: int = 15) -> staleness.LeaseState:
    return staleness.LeaseState(holder="usc-0", renewed_at=renewed, duration=seconds * SECOND)


def test_a_view_shows_what_a_one_shot_run_shows_and_reads_only_changed_values_again() -> None:
    cache: wire.Reads = {}
    maps = configmaps(shards=True)
    view = compose(NAMESPACE, maps, held(), "all", cache, [])
    assert view.body(NOW + SECOND) == render(sample_insights(), NOW + SECOND, "all")
    assert view.computed_at == NOW
    before = dict(cache)
    changed = configmaps(shards=True)
    key = next(k for k in changed[configmap.shard_name(0)]["data"])  # type: ignore[union-attr]
    changed[configmap.shard_name(0)]["data"][key] = before[key][0] + " "  # type: ignore[index]
    compose(NAMESPACE, changed, held(), "all", cache, [])
    assert [k for k in cache if cache[k][1] is not before[k][1]] == [key]


def test_time_alone_changes_the_warnings_when_the_data_turns_stale_and_the_lease_expires() -> None:
    view = compose(NAMESPACE, configmaps(), held(seconds=15), "none", {}, [])
    assert view.warnings(NOW + SECOND) == []
    assert view.due(NOW + SECOND) == NOW + 15 * SECOND + 1  # the Lease expires first
    [expired] = view.warnings(NOW + 20 * SECOND)
    assert expired.startswith("the update status controller's Lease expired 5s ago")
    assert view.due(NOW + 20 * SECOND) == NOW + 2 * RESYNC + 1  # then the data turns stale
    later = view.warnings(NOW + 2 * RESYNC + 1)
    assert len(later) == 2 and later[0].startswith("the insights are stale")
    assert view.due(NOW + 2 * RESYNC + 1) is None
    # the health section is rendered again once, when its caveat comes with the first warning
    assert "Update health is not known" in view.body(NOW + 20 * SECOND)
    assert "Update health is not known" not in compose(NAMESPACE, configmaps(), held(), "none", {}, []).body(
        NOW + SECOND
    )


def test_problems_of_the_watch_and_of_the_data_are_shown_in_one_shot_order() -> None:
    maps = configmaps(shards=True)
    del maps[configmap.shard_name(0)]
    maps[CONFIGMAP]["data"]["usc-co-broken"] = "{"  # type: ignore[index]
    view = compose(
        NAMESPACE, maps, held(seconds=0), "none", {}, ["ConfigMaps in ns not watched (403 Forbidden); retrying"]
    )
    warnings = view.warnings(NOW + SECOND)
    assert warnings[0] == "watch: ConfigMaps in ns not watched (403 Forbidden); retrying"
    assert "Lease expired" in warnings[1]
    assert warnings[2].startswith(f"ConfigMap {NAMESPACE}/{configmap.shard_name(0)} (a listed shard) does not exist")
    assert warnings[3].startswith("unreadable, not shown: ConfigMap key usc-co-broken")
    assert view.body(NOW + SECOND).startswith("".join(f"warning: {w}\n" for w in warnings))


def test_without_the_configmap_the_watch_waits_for_an_administrator_to_opt_in() -> None:
    view = compose(NAMESPACE, {}, staleness.LeaseState(missing=True), "none", {}, [])
    assert view.body(NOW).endswith("(create it to opt in); waiting for it\n")
    assert view.due(NOW) is None and view.computed_at is None


def test_every_text_about_the_configmaps_names_the_namespace_watched() -> None:
    """--watch --namespace: what it says about missing ConfigMaps names where it looks."""
    moved = "moved-update-status"
    absent = compose(moved, {}, staleness.LeaseState(missing=True), "none", {}, [])
    assert absent.body(NOW).startswith(f"ConfigMap {moved}/{CONFIGMAP} does not exist")
    maps = configmaps(shards=True)
    del maps[configmap.shard_name(0)]
    body = compose(moved, maps, held(), "none", {}, []).body(NOW + SECOND)
    assert f"warning: ConfigMap {moved}/{configmap.shard_name(0)} (a listed shard) does not exist" in body
    assert NAMESPACE not in body and NAMESPACE not in absent.body(NOW)


def test_a_frame_fits_the_window() -> None:
    lines = [f"line {i} " + "x" * 200 for i in range(100)]
    shown = fit(lines, rows=24, columns=80)
    assert len(shown) == 23 and all(len(line) <= 80 for line in shown)
    assert shown[-1] == "... 78 more lines: a taller window shows them"
    assert fit(["a", "b"], rows=24, columns=80) == ["a", "b"]


def test_the_age_line_says_how_old_the_insights_are() -> None:
    stamp = format_time(NOW, nanos=False)
    assert age_line(NOW, NOW + 75 * SECOND, True) == (
        f"Update status insights, as published: computed 1m15s ago at {stamp}. Ctrl-C to stop."
    )
    assert age_line(None, NOW, False).endswith("when they were computed is not known ---")
    assert "after this machine's clock" in age_line(NOW + SECOND, NOW, True)


def test_the_age_line_of_a_view_computed_from_the_objects_says_so() -> None:
    from status.updatestatus.client.clusterwatch import HEADING, REFRESH, ObjectsView

    stamp = format_time(NOW, nanos=False)
    assert age_line(NOW, NOW + 3 * SECOND, True, HEADING) == (
        f"Update status from the cluster's objects: computed 3s ago at {stamp}. Ctrl-C to stop."
    )
    assert age_line(NOW, NOW, False, HEADING) == (
        f"--- {stamp}: update status from the cluster's objects computed now at {stamp} ---"
    )
    view = ObjectsView("text\n", NOW, True)
    assert view.due(NOW) == NOW + int(REFRESH * SECOND)  # computed again then, with no change
    assert view.body(NOW + SECOND) == "text\n"


def test_a_terminal_gets_frames_in_place_and_only_the_age_when_nothing_else_changed() -> None:
    out = io.StringIO()
    screen = Screen(out, True, lambda: (80, 10))
    assert screen.show("a\nb\n", NOW, NOW + SECOND)
    frame = out.getvalue()
    assert frame.startswith("\x1b[H") and frame.endswith("a\x1b[K\nb\x1b[K\x1b[J")
    out.truncate(0)
    out.seek(0)
    assert not screen.show("a\nb\n", NOW, NOW + 2 * SECOND)
    assert out.getvalue() == "\x1b7\x1b[H" + age_line(NOW, NOW + 2 * SECOND, True)[:80] + "\x1b[K\x1b8"
    assert screen.show("a\nb\n", NOW, NOW + 2 * SECOND, again=True)  # resized: drawn again
    out.truncate(0)
    out.seek(0)
    screen.close()
    assert out.getvalue() == "\x1b[5;1H\x1b[0m\x1b[J"  # below the 4 lines drawn, attributes reset


def test_a_pipe_gets_a_block_per_change() -> None:
    out = io.StringIO()
    screen = Screen(out, False, lambda: (80, 10))
    screen.show("a\n", NOW, NOW + SECOND)
    screen.show("a\n", NOW, NOW + 2 * SECOND)  # nothing new: nothing written
    screen.show("b\n", NOW, NOW + 3 * SECOND)
    screen.close()
    first, second = out.getvalue().split("\n\n")
    assert first == age_line(NOW, NOW + SECOND, False) + "\na"
    assert second == age_line(NOW, NOW + 3 * SECOND, False) + "\nb\n"
    assert "\x1b" not in out.getvalue()


def test_insights_computed_under_a_second_ago_were_computed_now_as_oc_says() -> None:
    """oc's SINCE column says `now` for an age under a second: never `now ago`."""
    stamp = format_time(NOW, nanos=False)
    assert age_line(NOW, NOW + SECOND - 1, True) == (
        f"Update status insights, as published: computed now at {stamp}. Ctrl-C to stop."
    )
    assert age_line(NOW, NOW, False).endswith(f": update status insights computed now at {stamp} ---")
    assert "computed 1s ago at" in age_line(NOW, NOW + SECOND, True)


def test_a_change_after_a_quiet_spell_is_shown_at_once_and_one_in_a_burst_waits_for_the_gap() -> None:
    assert hold(None, 100.0) == 0.0  # the first
    assert hold(100.0, 100.0 + REDRAW_GAP) == pytest.approx(0.0, abs=1e-9)  # after a quiet spell
    assert hold(100.0, 100.0 + REDRAW_GAP + 5) == 0.0
    assert hold(100.0, 100.05) == pytest.approx(REDRAW_GAP - 0.05)  # in a burst: until the gap has passed
    assert hold(100.0, 100.0) == pytest.approx(REDRAW_GAP)


@given(st.lists(st.floats(min_value=0, max_value=10, allow_nan=False), min_size=1, max_size=300))
def test_a_burst_of_changes_is_composed_at_most_once_per_gap_and_the_last_is_shown(offsets: list[float]) -> None:
    """The watch's loop on changes that come at any moments: the first is composed at once, none
    within the gap of the one before, and none is left unshown (each is composed at or after it came)."""
    changes = sorted(offsets)
    composed: list[float] = []
    pending = 0
    clock = changes[0]
    while pending < len(changes):
        clock = max(clock, changes[pending])  # woken by the next change
        clock += hold(composed[-1] if composed else None, clock)
        composed.append(clock)
        while pending < len(changes) and changes[pending] <= clock:  # all that came meanwhile
            pending += 1
    assert composed[0] == changes[0]
    assert all(later - earlier >= REDRAW_GAP - 1e-9 for earlier, later in zip(composed, composed[1:], strict=False))
    assert composed[-1] >= changes[-1]
    assert len(composed) <= 1 + (changes[-1] - changes[0]) / REDRAW_GAP + 1


@pytest.mark.parametrize(
    ("rows", "columns", "expected"),
    [(0, 0, (80, 24)), (40, 0, (80, 40)), (0, 132, (132, 24)), (50, 132, (132, 50))],
)
def test_a_terminal_that_reports_no_size_is_taken_as_80_by_24(
    rows: int, columns: int, expected: tuple[int, int]
) -> None:
    master, slave = pty.openpty()
    try:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        with open(slave, "w", closefd=False) as terminal:
            assert terminal_size(terminal) == expected
            out = io.StringIO()
            Screen(out, True, lambda: terminal_size(terminal)).show("= Control Plane =\n", NOW, NOW)
            assert "= Control Plane =\x1b[K" in out.getvalue()  # not a blank frame
    finally:
        os.close(master)
        os.close(slave)
    assert terminal_size(io.StringIO()) == (80, 24)  # no terminal at all


def test_a_pipe_whose_reader_has_gone_is_seen_before_anything_more_is_written() -> None:
    read_end, write_end = os.pipe()
    with open(write_end, "w") as out:
        screen = Screen(out, False, lambda: (80, 24))
        assert not screen.reader_gone()
        os.close(read_end)
        assert screen.reader_gone()
    assert not Screen(io.StringIO(), False, lambda: (80, 24)).reader_gone()


class ShortWrites(io.RawIOBase):
    """A descriptor that takes at most 1,000 bytes a write, as one does when a signal interrupts it."""

    def __init__(self) -> None:
        self.taken = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        piece = bytes(data[:1000])
        self.taken += piece
        return len(piece)


def test_a_frame_reaches_an_unbuffered_output_whole_when_each_write_takes_only_part_of_it() -> None:
    """PYTHONUNBUFFERED: the text layer writes straight to the descriptor and drops what a short write left."""
    raw = ShortWrites()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)  # type: ignore[type-var]
    body = "".join(f"node-{i} Updating ✓\n" for i in range(500))
    Screen(out, False, lambda: (80, 24)).show(body, NOW, NOW)
    assert raw.taken.decode() == age_line(NOW, NOW, False) + "\n" + body


def test_a_frame_cut_short_by_ctrl_c_still_has_the_cursor_put_below_it() -> None:
    class Interrupted(io.StringIO):
        cut = False

        def write(self, text: str) -> int:
            if self.cut:
                self.cut = False
                raise KeyboardInterrupt
            return super().write(text)

    out = Interrupted()
    screen = Screen(out, True, lambda: (80, 24))
    screen.show("a\n", NOW, NOW)  # 3 lines: the age line, a blank one, a
    out.cut = True
    with pytest.raises(KeyboardInterrupt):
        screen.show("a\nb\nc\nd\n", NOW, NOW)  # 6 lines, cut short
    out.truncate(0)
    out.seek(0)
    screen.close()
    assert out.getvalue() == "\x1b[7;1H\x1b[0m\x1b[J"
