"""A person at a terminal, for tests: commands typed into a shell in tmux, commands started as an
interactive shell starts them (so that a test's SIGINT is a person's Ctrl-C), and what they write
into a pipe, read as it comes."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from testkit.checkout import REPO
from testkit.harness.wait import wait_until

HAS_TMUX = shutil.which("tmux") is not None

_CTRL_C_RESTORED = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])"
)


def as_typed(argv: Sequence[str]) -> list[str]:
    """`argv` started with Ctrl-C's default meaning, as a shell at a terminal starts a command. A
    test run started in the background (`make test &` in a script: shells start such commands
    with SIGINT ignored) hands SIGINT on ignored, and a command started so keeps ignoring it, as
    it should; a SIGINT the test sends would never arrive."""
    return [sys.executable, "-c", _CTRL_C_RESTORED, *argv]


class Piped:
    """A command (as typed: `as_typed`) whose stdout and stderr are pipes, read as they come; stdout
    only while `reading` is set (cleared: the pipe fills and the command's writes wait)."""

    EXITS_WITHIN = 30.0  # seconds: a liveness bound for a loaded machine

    def __init__(self, argv: Sequence[str], *, reading: bool = True) -> None:
        self.proc = subprocess.Popen(as_typed(argv), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out = bytearray()
        self.err = bytearray()
        self.reading = threading.Event()
        if reading:
            self.reading.set()
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.out, self.reading), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.err, None), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: object, into: bytearray, reading: threading.Event | None) -> None:
        fd = stream.fileno()  # type: ignore[attr-defined]
        while True:
            if reading is not None:
                reading.wait()
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            into += chunk

    def text(self) -> str:
        return bytes(self.out).decode(errors="replace")

    def wait_for(self, what: str, check: Callable[[str], object]) -> str:
        """What it wrote once `check` holds for it (a bounded wait; failing at once if it exits)."""
        wait_until(lambda: check(self.text()) or self.proc.poll() is not None, timeout=60, what=what)
        assert check(self.text()), f"exited ({self.proc.returncode}) before {what}: {bytes(self.err).decode()}"
        return self.text()

    def interrupt(self) -> int:
        """Ctrl-C; its exit status once it has ended (its stdout read again meanwhile)."""
        self.proc.send_signal(signal.SIGINT)
        self.reading.set()
        return self.proc.wait(self.EXITS_WITHIN)

    def close(self) -> None:
        """Killed if it still runs; its pipes read to the end."""
        self.reading.set()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(self.EXITS_WITHIN)
        for reader in self._readers:
            reader.join(self.EXITS_WITHIN)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


class Terminal:
    """A tmux session running a shell, on a socket of its own, `columns` by `rows`."""

    def __init__(self, columns: int = 160, rows: int = 60) -> None:
        self.socket = f"cvo-py-watch-{uuid.uuid4().hex[:8]}"
        self._tmux("new-session", "-d", "-s", "watch", "-x", str(columns), "-y", str(rows), "bash --norc --noprofile")

    def _tmux(self, *args: str) -> str:
        tmux = ["tmux", "-L", self.socket, *args]
        return subprocess.run(tmux, capture_output=True, text=True, check=True, timeout=30).stdout

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "watch", "-l", text)
        self._tmux("send-keys", "-t", "watch", "Enter")

    def press(self, key: str) -> None:
        self._tmux("send-keys", "-t", "watch", key)

    def screen(self) -> list[str]:
        return self._tmux("capture-pane", "-p", "-t", "watch").split("\n")

    def wait_for(self, what: str, check: Callable[[list[str]], object]) -> list[str]:
        """The screen once `check` holds for it (a bounded wait)."""
        seen: list[list[str]] = []

        def shown() -> bool:
            seen.append(self.screen())
            return bool(check(seen[-1]))

        wait_until(shown, timeout=60, what=what)
        return seen[-1]

    def command_pid(self) -> int:
        """The process the shell runs in the foreground (a bounded wait for one)."""
        shell = self._tmux("display-message", "-p", "-t", "watch", "#{pane_pid}").strip()
        children = Path(f"/proc/{shell}/task/{shell}/children")
        return int(wait_until(lambda: children.read_text().split(), timeout=60, what="the typed command")[0])

    def ctrl_c(self) -> list[str]:
        """Press Ctrl-C, and the screen once the shell is back and has said the command's exit status."""
        self.press("C-c")
        self.type("echo EXIT=$?")
        return self.wait_for("the shell back", lambda lines: any(line.startswith("EXIT=") for line in lines))

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False, timeout=30)


def blocked_writing_stdout(pid: int) -> bool:
    """Whether the main thread of `pid` waits in a system call on its standard output (a write to
    a terminal whose output is stopped, or to a pipe that is full): its first argument is fd 1."""
    try:
        call = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(call) > 1 and call[0] not in ("running", "-1") and int(call[1], 16) == 1
