"""klog-format logging: `Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg`, with `-v N` verbosity;
every message is one escaped line (a traceback follows it, line by line, escaped too).

Upstream's verbosity names: Normal=2, Debug=4, Trace=6, TraceAll=8. `klog.v(4).info(...)` logs
only when the process runs with `-v 4` or higher, like `klog.V(4).Infof`.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from datetime import datetime
from typing import Any, TextIO

from cvo_py.runtime.gotext.quoting import escape

NORMAL, DEBUG, TRACE, TRACE_ALL = 2, 4, 6, 8

_verbosity = 0
_LEVEL_LETTER = {logging.DEBUG: "I", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E", logging.CRITICAL: "F"}


class KlogFormatter(logging.Formatter):
    """Formats records the way klog does; the thread id is the OS thread id, as Go prints its pid."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created)
        letter = _LEVEL_LETTER.get(record.levelno, "I")
        tid = getattr(record, "thread_native_id", None) or record.thread or 0
        # One line per record, whatever the values in it held: a control character is shown as Go's
        # %q shows it (a newline as \n), so no value can forge a record or act on a terminal.
        message = escape(record.getMessage())
        if record.exc_info:
            trace = self.formatException(record.exc_info)
            message += "".join("\n" + escape(line) for line in trace.splitlines())
        return (
            f"{letter}{when:%m%d %H:%M:%S}.{when.microsecond:06d} {tid:>7} "
            f"{os.path.basename(record.pathname)}:{record.lineno}] {message}"
        )


class _NativeThreadId(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.thread_native_id = threading.get_native_id()
        return True


def setup(verbosity: int = 0, stream: TextIO | None = None) -> None:
    """Route all logging to stderr in klog format at the given -v level."""
    global _verbosity
    _verbosity = verbosity
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(KlogFormatter())
    handler.addFilter(_NativeThreadId())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    # Library chatter stays at warnings unless the operator asks for trace-level output.
    for noisy in ("urllib3", "kubernetes"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if verbosity >= TRACE_ALL else logging.WARNING)


class _Verbose:
    __slots__ = ("enabled",)

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def info(self, msg: str, *args: Any) -> None:
        if self.enabled:
            logging.getLogger("klog").info(msg, *args, stacklevel=2)

    def __bool__(self) -> bool:
        return self.enabled


def v(level: int) -> _Verbose:
    """`klog.V(level)`: a logger that is a no-op below the configured verbosity."""
    return _Verbose(_verbosity >= level)
