"""What every subcommand shares: the usage error (exit 2) and the SIGTERM/SIGINT handler."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

log = logging.getLogger("cvo_py.cli")


def stop_on_signals() -> threading.Event:
    """An Event set by SIGTERM or SIGINT (logged), for a subcommand's graceful shutdown."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("Received %s: shutting down", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


class UsageError(Exception):
    """A flag value that parses but cannot be used; exits 2 like a parse error."""
