"""What a test leaves running: threads and child processes it started and did not stop.

What is alive is recorded before each test (after the session and module fixtures it uses are set
up, so what they own is part of the record) and compared after the test's own fixtures are torn
down. Things that outlive a test on purpose are named explicitly with `session_owned()`.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

# Providers of process ids that belong to the session, not to the test that (re)started them:
# e.g. the local kube-apiserver, which a test may restart on the same data directory.
_SESSION_PIDS: list[Callable[[], Iterable[int]]] = []


def session_owned(provider: Callable[[], Iterable[int]]) -> None:
    """Declare processes (by a function returning their ids now) that outlive tests on purpose."""
    _SESSION_PIDS.append(provider)


def _session_pids() -> set[int]:
    pids: set[int] = set()
    for provider in _SESSION_PIDS:
        pids.update(provider())
    return pids


def _proc_state(pid: int) -> str | None:
    """The process's state letter from /proc (None once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may contain spaces; the state follows the last ')'.
    return stat[stat.rfind(")") + 2 :][:1] or None


def _running(pid: int) -> bool:
    state = _proc_state(pid)
    return state is not None and state not in ("Z", "X")


def child_processes() -> set[int]:
    """Direct children of this process that are still running (exited, unreaped ones excluded)."""
    pids: set[int] = set()
    try:
        tasks = list(Path("/proc/self/task").iterdir())
    except OSError:  # not Linux: child processes are not tracked
        return pids
    for task in tasks:
        try:
            pids.update(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return {pid for pid in pids if _running(pid)}


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)


@dataclass(frozen=True)
class Alive:
    threads: frozenset[threading.Thread]
    processes: frozenset[int]


def alive() -> Alive:
    """The threads and child processes alive now."""
    return Alive(frozenset(threading.enumerate()), frozenset(child_processes()))


def _describe_thread(thread: threading.Thread) -> str:
    frames = sys._current_frames()
    frame = frames.get(thread.ident) if thread.ident is not None else None
    stack = "".join(traceback.format_stack(frame)) if frame is not None else "  (no stack)\n"
    kind = "daemon thread" if thread.daemon else "thread"
    return f"{kind} {thread.name!r} (started by this test, still running):\n{stack}"


def leaks(before: Alive, grace: float) -> list[str]:
    """What was started since `before` and is still running after up to `grace` seconds of waiting
    for it to stop. Leaked child processes are killed after being reported, so they cannot
    disturb the tests that follow."""
    deadline = time.monotonic() + grace
    new_threads = [t for t in threading.enumerate() if t not in before.threads and t is not threading.current_thread()]
    for thread in new_threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    excluded = before.processes | _session_pids()
    new_processes = child_processes() - excluded
    while new_processes and time.monotonic() < deadline:
        time.sleep(0.05)
        new_processes = child_processes() - excluded
    found = [_describe_thread(t) for t in new_threads if t.is_alive()]
    for pid in sorted(new_processes):
        found.append(f"child process {pid} (started by this test, still running): {_cmdline(pid)}\n")
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    return found
