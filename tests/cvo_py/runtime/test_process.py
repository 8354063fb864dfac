"""The process skeleton without leader election: controllers started in order, a signal stops
them in the reverse order, then the servers in theirs; readiness follows the controllers."""

from __future__ import annotations

import dataclasses
import gc
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

import pytest

from cvo_py.runtime import process
from testkit.checkout import REPO


@pytest.fixture(autouse=True)
def restore_signal_handlers() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


class Recorder:
    def __init__(self, name: str, events: list[str], on_start: Callable[[], None] | None = None) -> None:
        self.name, self.events, self.on_start = name, events, on_start

    def start(self) -> Recorder:
        self.events.append(f"start {self.name}")
        if self.on_start is not None:
            self.on_start()
        return self

    def stop(self) -> None:
        self.events.append(f"stop {self.name}")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_controllers_in_reverse_then_servers_and_exits_0(
    signum: signal.Signals, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    readiness: list[bool] = []
    synced = False

    def serve(ready: Callable[[], bool]) -> Sequence[process.Stoppable]:
        readiness.append(ready())
        return (Recorder("server", events), Recorder("client-ca", events))

    def last_started() -> None:
        nonlocal synced
        synced = True
        signal.raise_signal(signum)  # handled on this (the main) thread: the wait ends

    parts = process.Parts(
        controllers=(Recorder("operator", events), Recorder("poller", events, on_start=last_started)),
        synced=lambda: synced,
        serve=serve,
        farewell="Graceful shutdown complete for 4.14.1.",
    )
    with caplog.at_level("INFO", logger="cvo_py.runtime.process"):
        assert process.run(parts) == 0
    assert events == [
        "start operator",
        "start poller",
        "stop poller",
        "stop operator",
        "stop server",
        "stop client-ca",
    ]
    assert readiness == [False]  # without election the process is ready only once synced
    messages = [r.getMessage() for r in caplog.records]
    due = {signal.SIGTERM: "terminated", signal.SIGINT: "interrupt"}[signum]  # Go's names, as upstream logs them
    assert messages == [f"Shutting down due to {due}", "Graceful shutdown complete for 4.14.1."]


def test_a_restart_asked_by_a_watch_shuts_down_in_order_and_exits_0() -> None:
    """A watch runs before and after the controllers; when it asks for a restart, everything stops
    as on a signal (the watch last) and the process exits 0, for its Deployment to start it again."""
    events: list[str] = []
    restart = threading.Event()
    parts = process.Parts(
        controllers=(Recorder("operator", events, on_start=restart.set),),
        synced=lambda: True,
        serve=lambda ready: (Recorder("server", events),),
        watches=(Recorder("features", events),),
        restart=restart,
    )
    assert process.run(parts) == 0
    assert events == ["start features", "start operator", "stop operator", "stop server", "stop features"]


def test_a_failing_start_still_stops_everything_and_says_no_farewell(caplog: pytest.LogCaptureFixture) -> None:
    events: list[str] = []

    def broken() -> None:
        raise RuntimeError("boom")

    parts = process.Parts(
        controllers=(Recorder("controller", events, on_start=broken),),
        synced=lambda: False,
        serve=lambda ready: (Recorder("server", events),),
        farewell="done",
    )
    with caplog.at_level("INFO", logger="cvo_py.runtime.process"), pytest.raises(RuntimeError, match="boom"):
        process.run(parts)
    assert events == ["start controller", "stop controller", "stop server"]
    assert "done" not in [r.getMessage() for r in caplog.records]


def test_start_up_heap_frozen_on_request_until_the_process_stops() -> None:
    """Full collections skip the start-up heap while the controllers run (short pauses on the
    event path); nothing stays frozen once run() returns."""
    assert gc.get_freeze_count() == 0
    frozen_while_running: list[int] = []

    def started() -> None:
        frozen_while_running.append(gc.get_freeze_count())
        signal.raise_signal(signal.SIGTERM)

    parts = process.Parts(
        controllers=(Recorder("operator", [], on_start=started),),
        synced=lambda: True,
        serve=lambda ready: (),
        freeze_startup=True,
    )
    assert process.run(parts) == 0
    assert frozen_while_running and frozen_while_running[0] > 0
    assert gc.get_freeze_count() == 0

    # without freeze_startup (the update status controller's pauses thaw what they hand over)
    frozen_while_running.clear()
    assert process.run(dataclasses.replace(parts, freeze_startup=False)) == 0
    assert frozen_while_running == [0]


# A process whose one controller never finishes stopping (it waits for `release`, which nothing
# sets): how a shutdown that hangs ends. Its stdout says when it is waiting for the signal.
HANGING = """
import logging, sys, threading
from cvo_py.runtime import process
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")

class Hangs:
    def start(self):
        print("started", flush=True)
        return self

    def stop(self):
        print("stopping", flush=True)
        threading.Event().wait()

within = float(sys.argv[1]) if len(sys.argv) > 1 else None
sys.exit(process.run(process.Parts(controllers=(Hangs(),), synced=lambda: True, serve=lambda ready: (),
                                   shutdown_within=within)))
"""


def _hanging(*args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HANGING, *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "started\n"
    return proc


def test_a_second_signal_during_a_hanging_shutdown_exits_at_once() -> None:
    proc = _hanging()
    assert proc.stdout is not None
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.readline() == "stopping\n"
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 255, err
    assert "Shutting down due to terminated" in err
    assert "Received shutdown signal twice, exiting: terminated" in err


def test_a_shutdown_past_its_bound_exits() -> None:
    proc = _hanging("0.5")
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, err
    assert "Run context completed; beginning 0.5s graceful shutdown period." in err
    assert "The graceful shutdown did not end within 0.5s: exiting" in err
