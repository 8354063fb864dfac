"""Special files given where a regular file is expected, and a bounded way to run what reads them.

    special_file(directory, kind, name) -> Path     a FIFO, /dev/zero, or a symlink to either
    kubeconfig(directory, ...) -> Path               a kubeconfig, with any field replaced
    run_limited(argv, ...) -> Limited                a child process under a memory rlimit and a
                                                     timeout: exit code, output, wall time, peak RSS

A FIFO blocks whoever opens it for reading until a writer comes (never, here); `/dev/zero` reads
as endless zero bytes while its size reads as 0. A reader without bounds hangs on the first and
eats all memory on the second, which is why every test of them runs the reader in a child under
`run_limited`: a regression then fails the test (timeout, MemoryError) instead of the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DEV_ZERO = Path("/dev/zero")
SPECIAL_KINDS = ("fifo", "dev-zero", "symlink-to-fifo", "symlink-to-dev-zero")
DEFAULT_CLUSTER = {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True}


def special_file(directory: Path, kind: str, name: str) -> Path:
    """A special file of `kind` (one of SPECIAL_KINDS) at `directory/name` (a FIFO of its own)."""
    path = directory / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        return DEV_ZERO
    elif kind == "symlink-to-fifo":
        fifo = directory / f".{name}.fifo"
        os.mkfifo(fifo)
        path.symlink_to(fifo)
    elif kind == "symlink-to-dev-zero":
        path.symlink_to(DEV_ZERO)
    else:
        raise ValueError(f"unknown special file kind {kind!r}")
    return path


def kubeconfig(
    directory: Path,
    name: str = "kubeconfig",
    *,
    cluster: Mapping[str, Any] | None = None,
    user: Mapping[str, Any] | None = None,
) -> Path:
    """A kubeconfig (server https://127.0.0.1:6443, insecure, a token) whose cluster and user
    entries are replaced by `cluster` / `user` when given."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": dict(cluster or DEFAULT_CLUSTER)}],
        "users": [{"name": "u", "user": dict(user or {"token": "sekret"})}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
    path = directory / name
    path.write_text(yaml.safe_dump(doc))
    return path


@dataclass(frozen=True)
class Limited:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float
    peak_rss_bytes: int

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run_limited(
    argv: Sequence[str],
    *,
    timeout: float = 60.0,
    memory_bytes: int = 1 << 30,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> Limited:
    """Run `argv` with its address space capped at `memory_bytes` (RLIMIT_AS) and kill it after
    `timeout` seconds; the peak RSS is the child's own (wait4)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err, preexec_fn=limit,
            env=dict(env) if env is not None else None, cwd=cwd,
        )
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if not killed and time.monotonic() > start + timeout:
                proc.kill()
                killed = True
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Limited(
            None if killed else proc.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            seconds,
            usage.ru_maxrss * 1024,
        )


def cli(*args: str) -> list[str]:
    """The command line of `cluster-version-operator ARGS` as a child process runs it."""
    return [sys.executable, "-m", "cvo_py", *args]
