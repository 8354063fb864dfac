"""The skeleton of a long-running command (`start`, `update-status-controller`).

Serve /metrics, /healthz and /readyz; with a leader elector, start the controllers once this
replica leads (without one, at once); run until SIGTERM/SIGINT (exit 0) or a lost Lease (exit 1, as
upstream: the replica is restarted and a standby takes over); then shut down in one order: the
election stopped first, the controllers stopped (in reverse start order), the Lease released, the
servers stopped. A second signal during the shutdown exits at once (255, as Go's fatal log), and
with `Parts.shutdown_within` a shutdown that takes longer releases the Lease and exits (1).
What runs is built by the command's composition root (`cvo_py.compose`).
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cvo_py.runtime.leader import LeaderElector

log = logging.getLogger(__name__)

# How often the main thread looks at the Lease while it waits for a signal.
LEASE_CHECK_INTERVAL = 0.5


class Stoppable(Protocol):
    def stop(self) -> None: ...


class Controller(Stoppable, Protocol):
    def start(self) -> object: ...


@dataclass(frozen=True)
class Parts:
    """What one process runs, built by its composition root."""

    # Started in this order once leading, stopped in the reverse order.
    controllers: Sequence[Controller]
    # Whether the leader is ready (its caches listed, a first sync done); a standby always is.
    synced: Callable[[], bool]
    # Start the servers with the readiness check; returns what to stop at the end, in that order.
    serve: Callable[[Callable[[], bool]], Sequence[Stoppable]]
    elector: LeaderElector | None = None
    # On winning the Lease, before the controllers start (e.g. remove what an earlier leader left).
    before_leading: Callable[[], None] | None = None
    # Logged once everything is stopped.
    farewell: str = ""
    # Keep what exists when the controllers start (modules, classes, configuration: it lives as
    # long as the process) out of the collector's reach, so a full collection scans only what
    # came later and stays short on a latency-bound path (`start`: 15-25 ms pauses before).
    freeze_startup: bool = False
    # Run for the whole process, leader or standby, started before the Lease is sought (e.g. the
    # watch that sets `restart`).
    watches: Sequence[Controller] = ()
    # Set to end the process so that it is started again (e.g. the feature gates changed): it shuts
    # down in order, as on a signal, and exits 0.
    restart: threading.Event | None = None
    # The shutdown may take at most this many seconds (None: no bound); past it the Lease is
    # released and the process exits 1.
    shutdown_within: float | None = None


# Go's names of the signals a shutdown is due to (os.Signal's String()).
GO_SIGNAL_NAMES = {signal.SIGTERM: "terminated", signal.SIGINT: "interrupt"}
# Go's klog.Fatal exit code: a second signal ends the process at once.
EXIT_AT_ONCE = 255


def stop_on_signals() -> threading.Event:
    """An Event set by SIGTERM or SIGINT (logged as upstream logs it), for a graceful shutdown; a
    second signal exits at once."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        name = GO_SIGNAL_NAMES.get(signal.Signals(signum), signal.Signals(signum).name)
        if stop.is_set():
            log.error("Received shutdown signal twice, exiting: %s", name)
            logging.shutdown()
            os._exit(EXIT_AT_ONCE)
        log.info("Shutting down due to %s", name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def run(parts: Parts) -> int:
    """Run `parts` until a signal (0) or a lost Lease (1); always shut down in order."""
    elector = parts.elector

    def ready() -> bool:
        # A standby is healthy; a leader is ready once it has synced.
        return (elector is not None and not elector.leading.is_set()) or parts.synced()

    frozen = False

    def start_controllers() -> None:
        nonlocal frozen
        if parts.freeze_startup and not frozen:
            gc.collect()  # nothing left from start-up that is already garbage gets frozen
            gc.freeze()
            frozen = True
        for controller in parts.controllers:
            controller.start()

    servers = parts.serve(ready)
    stop = stop_on_signals()
    restart = parts.restart or threading.Event()
    code = 0
    for watch in parts.watches:
        watch.start()
    try:
        if elector is None:
            start_controllers()
            while not stop.wait(LEASE_CHECK_INTERVAL) and not restart.is_set():
                pass
        else:

            def on_started_leading() -> None:
                if parts.before_leading is not None:
                    parts.before_leading()
                if not elector.stopping:  # a shutdown during the start-up: do not start what is being stopped
                    start_controllers()

            elector.start(on_started_leading)
            while not stop.wait(LEASE_CHECK_INTERVAL) and not restart.is_set():
                if elector.lost.is_set():
                    code = 1  # as upstream: a leader that lost its Lease exits and is restarted
                    break
    finally:
        _shut_down(parts, elector, servers, unfreeze=frozen)  # a standby that never led froze nothing
    if parts.farewell:
        log.info("%s", parts.farewell)
    return code


def _shut_down(
    parts: Parts, elector: LeaderElector | None, servers: Sequence[Stoppable], *, unfreeze: bool
) -> None:
    """Stop everything in one order: the election, the controllers (in reverse start order), the
    Lease released, the servers, the watches; within `parts.shutdown_within` when set."""
    watchdog = _shutdown_watchdog(parts.shutdown_within, elector)
    if elector is not None:
        elector.stop()  # first: a start-up still under way must not start the controllers after this
    for controller in reversed(parts.controllers):
        controller.stop()
    if elector is not None:
        elector.release()
    if watchdog is not None:
        watchdog.cancel()
        watchdog.join(5.0)
    for server in servers:
        server.stop()
    for watch in reversed(parts.watches):
        watch.stop()
    if unfreeze:
        gc.unfreeze()


def _shutdown_watchdog(within: float | None, elector: LeaderElector | None) -> threading.Timer | None:
    """A timer that ends a shutdown taking more than `within` seconds: the Lease released (best
    effort), then exit 1."""
    if within is None:
        return None
    log.info("Run context completed; beginning %s graceful shutdown period.", _period(within))

    def overdue() -> None:
        log.error("The graceful shutdown did not end within %s: exiting", _period(within))
        if elector is not None:
            try:
                elector.release()
            except Exception as exc:  # exiting anyway: one line
                log.error("Could not release the Lease: %s", exc)
        logging.shutdown()
        os._exit(1)

    timer = threading.Timer(within, overdue)
    timer.name = "shutdown-watchdog"
    timer.daemon = True
    timer.start()
    return timer


def _period(seconds: float) -> str:
    """`two-minute` for 120 s, as upstream says it; `<n>s` otherwise."""
    return "two-minute" if seconds == 120 else f"{seconds:g}s"
