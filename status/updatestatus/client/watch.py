"""`upgrade-status --watch`: the insights as they are published, shown again when they change.

    code = watch(client, details, out, namespace=ns)     # until Ctrl-C (KeyboardInterrupt): 130

No polling: the project's informer watches the ConfigMaps of `namespace` (where the controller
publishes: its `--namespace`, given as `upgrade-status --namespace`), the main one and its shards,
and the controller's Lease there; each change wakes the loop, which assembles the
insights again as a one-shot `upgrade-status` does (`status.updatestatus.client.live`; only values
that changed are read again) and shows them when what it would show differs. Time alone changes
what is shown only at known moments, when the insights turn stale (twice the resync period after
they were computed) and when the Lease expires: the loop wakes at those too, so a controller
that stops while you watch is flagged when it happens.

On a terminal each frame is drawn in place (from the top, every line cleared, the rest of the
screen cleared), cut to the window, and its first line says how old the insights are, updated
every second without drawing the rest; Ctrl-C leaves the cursor below the last frame. Otherwise
(a pipe, a file) each new frame is appended as a block that starts with a line saying when it
was shown and how old the insights were; once nobody reads the pipe (`| head -3` has its lines)
the watch ends quietly (exit 0), within a second.

A change that comes within `REDRAW_GAP` of the previous one is shown with whatever else comes
meanwhile: a burst (200 Lease renewals in 0.4 s) is a few frames, not one per change, while a
change after a quiet spell is shown at once.

Ctrl-C ends the watch whatever it is doing: the main thread only ever waits interruptibly (an
Event, a sleep, a socket or terminal write), and the informers' threads leave the signals to it
(`published.signals_left_to_main`), so the kernel never hands Ctrl-C to a thread that cannot act
on it. A watch started with Ctrl-C ignored (`&` in a script: shells start background commands so)
keeps ignoring it, as every command does. SIGTERM (a `kill`, a closing session manager) ends it the
same way, the terminal restored, and the caller exits 143 (`Terminated`).
"""

from __future__ import annotations

import logging
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.quoting import escape
from cvo_py.runtime.gotext.times import format_time
from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import CONFIGMAPS, LEASES, KubeClient
from status.updatestatus.api import staleness, wire
from status.updatestatus.api.names import CONFIGMAP, LEASE
from status.updatestatus.client import live as published
from status.updatestatus.client.render import RenderError, RowMemo, render, warning_text

INTERRUPTED = 130
TICK = 1.0  # seconds between updates of a terminal frame's age line, and between looks at a pipe's reader
REDRAW_GAP = 0.2  # seconds: changes closer than this to the previous frame wait for it, and are shown together
FALLBACK_SIZE = (80, 24)  # what a terminal that reports no size is taken to be, as `shutil.get_terminal_size`
PUBLISHED = ("Update status insights, as published", "update status insights")  # the age line's subject


class Terminated(Exception):
    """SIGTERM ended the watch; the terminal was left as it was found."""


@dataclass
class View:
    """What the namespace's ConfigMaps and the Lease show: the insights, their status rendered once,
    and the warnings, worded afresh at each moment (`warnings(now)`: the ages in them move on)."""

    layout: published.MainLayout | None  # None: no main ConfigMap
    lease: staleness.LeaseState
    watch_problems: list[str]  # the watches cannot list or watch
    read_problems: list[str]  # shards or keys that cannot be read
    insights: list[Any]
    details: str
    memo: RowMemo
    text: str = ""
    caveat: bool | None = None  # whether `text` says the health is not known (None: not rendered)
    heading: tuple[str, str] = PUBLISHED  # the age line's subject on a terminal, and in a pipe

    @property
    def computed_at(self) -> int | None:
        return self.layout.meta.computed_at if self.layout is not None and self.layout.meta else None

    def warnings(self, now: int) -> list[str]:
        """Every warning line at `now`, in the order a one-shot `upgrade-status` prints them."""
        timely = published.warnings_at(self.layout, self.lease, now) if self.layout is not None else []
        return [*self.watch_problems, *timely, *self.read_problems]

    def body(self, now: int) -> str:
        """The warning lines at `now` above the status, rendered again only when the health
        section's caveat comes or goes with them."""
        warnings = self.warnings(now)
        if self.layout is not None and bool(warnings) != self.caveat:
            self.caveat = bool(warnings)
            try:
                caveat = staleness.health_caveat(warnings)
                self.text = render(self.insights, now, self.details, caveat=caveat, memo=self.memo)
            except RenderError as exc:
                self.text = f"error: {escape(str(exc).rstrip())}\n"
        return warning_text(warnings) + self.text

    def due(self, now: int) -> int | None:
        """The next moment after `now` at which the warnings change with time alone."""
        return due(self.layout, self.lease, now) if self.layout is not None else None


def compose(
    namespace: str,
    configmaps: dict[str, Any],
    lease: staleness.LeaseState,
    details: str,
    cache: wire.Reads,
    watch_problems: list[str],
    memo: RowMemo | None = None,
) -> View:
    """The view of `namespace`'s ConfigMaps (by name) and the Lease (pure but for `cache`, the
    reads of the previous view, and `memo`, its rows of nodes: what did not change is not read or
    worked out again)."""
    memo = memo if memo is not None else RowMemo()
    main = configmaps.get(CONFIGMAP)
    problems = [f"watch: {p}" for p in watch_problems]
    if main is None:
        missing = (
            f"ConfigMap {namespace}/{CONFIGMAP} does not exist: no update status insights are published "
            "(create it to opt in); waiting for it\n"
        )
        return View(None, lease, problems, [], [], details, memo, missing)
    layout = published.read_main(published.data_of(main))
    shards = [
        (published.data_of(configmaps[name]), "")
        if name in configmaps
        else ({}, published.missing_shard(namespace, name))
        for name in layout.shards
    ]

    def decode(data: Any) -> tuple[list[Any], list[wire.DecodeError]]:
        return wire.decode_readable(data, cache=cache)

    insights, read_problems = published.gather(layout, shards, decode)
    return View(layout, lease, problems, read_problems, insights, details, memo)


def due(layout: published.MainLayout, lease: staleness.LeaseState, now: int) -> int | None:
    """The next moment after `now` at which the warnings change with time alone."""
    moments = []
    if layout.meta is not None:
        moments.append(layout.meta.computed_at + 2 * layout.meta.resync_period + 1)  # stale from then on
    if not lease.problem and lease.renewed_at is not None and lease.duration is not None:
        moments.append(lease.renewed_at + lease.duration + 1)  # expired from then on
    future = [m for m in moments if m > now]
    return min(future) if future else None


def age_line(computed_at: int | None, now: int, tty: bool, heading: tuple[str, str] = PUBLISHED) -> str:
    if computed_at is None:
        age = "when they were computed is not known"
    elif computed_at > now:
        age = f"computed at {format_time(computed_at, nanos=False)}, after this machine's clock"
    else:
        age = f"computed {staleness.ago(now - computed_at)} at {format_time(computed_at, nanos=False)}"
    if tty:
        return f"{heading[0]}: {age}. Ctrl-C to stop."
    return f"--- {format_time(now, nanos=False)}: {heading[1]} {age} ---"


def hold(last_composed: float | None, now: float) -> float:
    """How long a change seen at `now` waits before it is shown (monotonic seconds): not at all
    after a quiet spell, else until `REDRAW_GAP` has passed since the last frame was composed at
    `last_composed`, so that a burst of changes is shown as a few frames."""
    return 0.0 if last_composed is None else max(0.0, last_composed + REDRAW_GAP - now)


def fit(lines: list[str], rows: int, columns: int) -> list[str]:
    """The lines a window of `rows` × `columns` shows without scrolling: each cut to the width,
    the last row kept for the cursor, and a last line saying how many more there are."""
    room = max(1, rows - 1)
    shown = [line[:columns] for line in lines]
    if len(shown) <= room:
        return shown
    more = len(shown) - (room - 1)
    return [*shown[: room - 1], f"... {more} more lines: a taller window shows them"[:columns]]


class Screen:
    """Where frames go: drawn in place on a terminal, appended as blocks anywhere else."""

    def __init__(self, out: TextIO, tty: bool, size: Callable[[], tuple[int, int]]) -> None:
        self.out = out
        self.tty = tty
        self.size = size  # (columns, rows)
        self.body: str | None = None
        self.drawn = 0  # lines of the frame on the terminal

    def show(
        self,
        body: str,
        computed_at: int | None,
        now: int,
        *,
        again: bool = False,
        heading: tuple[str, str] = PUBLISHED,
    ) -> bool:
        """Show `body` under the age line of insights computed at `computed_at` (True when the
        body was drawn: it changed, or `again` on a terminal, whose window changed)."""
        if body == self.body and not (again and self.tty):
            if self.tty:  # only the age moves on
                self._write("\x1b7\x1b[H" + self._fit([age_line(computed_at, now, True, heading)])[0] + "\x1b[K\x1b8")
            return False
        self.body = body
        if not self.tty:
            self._write(("\n" if self.drawn else "") + age_line(computed_at, now, False, heading) + "\n" + body)
            self.drawn += 1
            return True
        lines = self._fit([age_line(computed_at, now, True, heading), "", *body.rstrip("\n").split("\n")])
        # Counted before the write: a frame cut short by Ctrl-C still has the cursor put below it.
        self.drawn = max(self.drawn, len(lines))
        self._write("\x1b[H" + "\n".join(f"{line}\x1b[K" for line in lines) + "\x1b[J")
        self.drawn = len(lines)
        return True

    def close(self) -> None:
        """Leave the terminal as it was: the cursor on a fresh line below the frame, attributes
        reset. (The sequence starts with ESC, which also ends one that Ctrl-C cut short.)"""
        if self.tty and self.drawn:
            self._write(f"\x1b[{self.drawn + 1};1H\x1b[0m\x1b[J")
        elif self.tty:
            self._write("\x1b[0m")

    def reader_gone(self) -> bool:
        """Whether nobody reads the output any more: a pipe whose reader has exited (`| head -3`).
        Seen before anything is written, so the watch need not wait for a change to find out."""
        if self.tty:
            return False  # a terminal that hangs up sends SIGHUP
        try:
            poller = select.poll()
            poller.register(self.out.fileno(), 0)  # no event asked for: an error or hang-up is always reported
        except (AttributeError, ValueError, OSError):  # not a file (a test's StringIO), or closed
            return False
        return bool(poller.poll(0))

    def _fit(self, lines: list[str]) -> list[str]:
        columns, rows = self.size()
        return fit(lines, rows, columns)

    def _write(self, text: str) -> None:
        """Write all of `text`, now. A write that a signal interrupts (a resize, on the main thread)
        or a closing reader cuts short has written part of it: a buffered stream writes the rest,
        the text layer of an unbuffered one (PYTHONUNBUFFERED, `python -u`) drops it, so the
        bytes go to its binary layer until all are written (or BrokenPipeError)."""
        binary = getattr(self.out, "buffer", None)
        if binary is None:  # a text stream only (a test's StringIO)
            self.out.write(text)
            self.out.flush()
            return
        self.out.flush()
        data = memoryview(text.encode(self.out.encoding or "utf-8", self.out.errors or "strict"))
        while data:
            written = binary.write(data)
            if written is None:  # a non-blocking descriptor that is full: wait until it takes more
                select.select([], [binary], [])
                continue
            data = data[written:]
        binary.flush()


class Sources:
    """The informers of `namespace`'s ConfigMaps and of the Lease there; `changed` is set on every event."""

    def __init__(self, client: KubeClient, namespace: str, details: str = "none") -> None:
        self.namespace = namespace
        self.details = details
        self._cache: wire.Reads = {}
        self._memo = RowMemo()
        self.changed = threading.Event()
        self.configmaps = Informer(client, CONFIGMAPS, namespace=namespace)
        self.lease = Informer(client, LEASES, namespace=namespace, field_selector=f"metadata.name={LEASE}")
        for informer in (self.configmaps, self.lease):
            informer.add_handler(lambda _type, _obj, _old: self.changed.set())
            # A watch that fails (or works again) changes what is shown, with no event of its own.
            informer.add_failing_handler(lambda _why: self.changed.set())

    def start(self) -> None:
        with published.signals_left_to_main():
            self.configmaps.start()
            self.lease.start()

    def stop(self) -> None:
        for informer in (self.configmaps, self.lease):
            informer.request_stop()

    def wait_listed(self, timeout: float) -> bool:
        """Whether the ConfigMaps are listed, or cannot be (then the view says why), within `timeout`."""
        return self.configmaps.wait_for_sync(timeout) or bool(self.configmaps.failing)

    def view(self, now: int) -> View:
        """The view of what the caches hold (what did not change is not read or worked out again)."""
        configmaps, lease, problems = self.snapshot()
        return compose(self.namespace, configmaps, lease, self.details, self._cache, problems, self._memo)

    def snapshot(self) -> tuple[dict[str, Any], staleness.LeaseState, list[str]]:
        """The ConfigMaps by name, the Lease's state and what keeps the watches from working."""
        configmaps = {str((cm.get("metadata") or {}).get("name")): cm for cm in self.configmaps.items()}
        lease_problem = self.lease.failing
        if lease_problem:
            lease = staleness.LeaseState(
                problem="cannot watch the update status controller's Lease "
                f"{self.namespace}/{LEASE} ({lease_problem}): whether the controller is running is not known"
            )
        elif not self.lease.has_synced:
            lease = staleness.LeaseState(missing=True)  # not listed yet: said by the data's age alone
        else:
            found = self.lease.get(LEASE, self.namespace)
            lease = staleness.lease_state(found) if found is not None else staleness.LeaseState(missing=True)
        problems = []
        if self.configmaps.failing:
            problems.append(f"ConfigMaps in {self.namespace} not watched ({self.configmaps.failing}); retrying")
        return configmaps, lease, problems


class Source(Protocol):
    """What the watch follows: the controller's publication (`Sources`) or the cluster's objects
    (`status.updatestatus.client.clusterwatch.ObjectSources`)."""

    changed: threading.Event

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def wait_listed(self, timeout: float) -> bool: ...
    def view(self, now: int) -> Frame: ...


class Frame(Protocol):
    @property
    def computed_at(self) -> int | None: ...
    @property
    def heading(self) -> tuple[str, str]: ...
    def body(self, now: int) -> str: ...
    def due(self, now: int) -> int | None: ...


def watch(
    client: KubeClient,
    details: str,
    out: TextIO,
    *,
    namespace: str,
    tty: bool,
    size: Callable[[], tuple[int, int]],
    clock: Callable[[], int] = time.time_ns,
    objects: bool = False,
) -> int:
    """Show the insights published in `namespace` (with `objects`, the status computed from the
    cluster's objects) until Ctrl-C (exit 130) or until nobody reads them (a pipe's reader gone:
    exit 0). A reader who may not list what is watched, or cannot reach the API server, is told so
    in one line by the caller (the client's errors, raised before anything is shown)."""
    source: Source
    if objects:
        from status.updatestatus.client import clusterwatch

        clusterwatch.check_reads(client)  # may we list them all? (403: one line, exit 1)
        source = clusterwatch.ObjectSources(client, details)
    else:
        client.list(CONFIGMAPS, namespace=namespace, limit=1)  # can we watch at all? (403: one line, exit 1)
        source = Sources(client, namespace, details)
    return follow(source, out, tty=tty, size=size, clock=clock)


def follow(
    source: Source,
    out: TextIO,
    *,
    tty: bool,
    size: Callable[[], tuple[int, int]],
    clock: Callable[[], int] = time.time_ns,
) -> int:
    """Show `source`'s view, again at each change, until Ctrl-C (130) or a pipe's reader leaves (0)."""
    # Problems of the watches are shown in the frame, where they are current, not logged over it.
    logging.getLogger("cvo_py.runtime.informer").setLevel(logging.ERROR)
    screen = Screen(out, tty, size)
    resized = threading.Event()

    def redraw() -> None:
        resized.set()
        source.changed.set()

    previous_winch = None
    previous_term = _on_terminate()
    try:
        if tty:
            previous_winch = _on_resize(redraw)
            out.write("\x1b[H\x1b[2J")
        source.start()
        while not source.wait_listed(0.1):
            pass  # listed, or what keeps it from listing is shown
        return show_changes(source, screen, resized, clock)
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:  # the reader left while a frame was written
        return 0
    finally:
        if previous_term is not None:  # a second SIGTERM must not cut the terminal's restoring short
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        source.stop()
        try:
            screen.close()
        except OSError:  # nowhere left to write to
            pass
        if previous_winch is not None:
            signal.signal(signal.SIGWINCH, previous_winch)
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)


def show_changes(source: Source, screen: Screen, resized: threading.Event, clock: Callable[[], int]) -> int:
    """Compose `source`'s view at each change (and when time alone changes it) and show it on
    `screen` (again when `resized` is set), until the screen's reader is gone (0)."""
    view: Frame | None = None
    composed_at: float | None = None  # monotonic
    due_at: int | None = None  # when time alone next changes the view
    while True:
        changed = view is None or source.changed.is_set() or (due_at is not None and clock() >= due_at)
        if changed:
            time.sleep(hold(composed_at, time.monotonic()))  # what comes meanwhile is shown with it
            source.changed.clear()
            composed_at = time.monotonic()
            view = source.view(clock())
        assert view is not None  # composed on the first turn
        if screen.reader_gone():
            return 0
        now = clock()
        # A terminal's age line moves on every tick; a pipe gets a block only for a change or a due moment.
        if changed or screen.tty:
            screen.show(view.body(now), view.computed_at, now, again=resized.is_set(), heading=view.heading)
            resized.clear()
            due_at = view.due(now)
        wait = TICK
        if due_at is not None:
            wait = min(wait, max(0.0, (due_at - clock()) / SECOND))
        source.changed.wait(wait)


def _on_terminate() -> Any:
    """Make SIGTERM raise `Terminated` in the main thread, unless it is ignored (a command started
    with it ignored keeps ignoring it); returns the handler it replaced (None: none replaced)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        return None

    def terminate(_signum: int, _frame: Any) -> None:
        raise Terminated

    return signal.signal(signal.SIGTERM, terminate)


def _on_resize(redraw: Callable[[], None]) -> Any:
    """Redraw on SIGWINCH (the terminal was resized); returns the handler it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGWINCH, lambda _signum, _frame: redraw())


def terminal_size(out: TextIO = sys.stdout) -> tuple[int, int]:
    """(columns, rows) of the terminal on `out`; a dimension it reports as 0 (a console or a
    container whose size was never set) is taken from 80 × 24, as `shutil.get_terminal_size`
    takes it. $COLUMNS and $LINES are not read: a frame drawn in place must fit the window as it
    is now, which they do not follow when it is resized."""
    import os

    try:
        size = os.get_terminal_size(out.fileno())
    except (OSError, ValueError):
        return FALLBACK_SIZE
    return size.columns or FALLBACK_SIZE[0], size.lines or FALLBACK_SIZE[1]
