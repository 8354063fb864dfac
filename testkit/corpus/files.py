"""Special files given where a regular file is expected, and a bounded way to run what reads them.

    special_file(directory, kind, name) -> Path     a FIFO, /dev/zero, or a symlink to either
    SPECIAL_FILE_FLAGS[where](special, ...) -> argv  every place a command reads a named file
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
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from testkit.objects.insight_objects import write_snapshot

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


_PROMQL = "https://127.0.0.1:1"


def _start(*args: str) -> list[str]:
    return ["start", "--node-name", "n", "--release-image", "x", "--listen", "", *args]


def _usc(*args: str) -> list[str]:
    return ["update-status-controller", "--listen", "", *args]


# Where a file is named → the command line naming `special` there, given a work directory and a
# serving certificate and key (for the flags that need one beside the special file).
Case = Callable[[Path, Path, tuple[str, str]], list[str]]


def _kubeconfig_naming(field: str, section: str) -> Case:
    def argv(special: Path, directory: Path, cert: tuple[str, str]) -> list[str]:
        user: dict[str, object] = {"token": "t"}
        cluster: dict[str, object] = {"server": "https://127.0.0.1:6443"}
        if section == "cluster":
            cluster[field] = str(special)
        elif field == "client-certificate":
            user = {"client-certificate": str(special), "client-key": cert[1]}
        elif field == "client-key":
            user = {"client-certificate": cert[0], "client-key": str(special)}
        else:
            user = {field: str(special)}
        if "certificate-authority" not in cluster:
            cluster["insecure-skip-tls-verify"] = True
        path = kubeconfig(directory, cluster=cluster, user=user)
        return ["version", "--kubeconfig", str(path)]

    return argv


def _snapshot(suffix: str) -> Case:
    def argv(special: Path, directory: Path, _cert: tuple[str, str]) -> list[str]:
        cv = write_snapshot(directory)
        target = Path(str(cv).replace("-cv.yaml", suffix))
        target.unlink(missing_ok=True)
        target.symlink_to(special)
        return ["upgrade-status", "--mock-clusterversion", str(cv)]

    return argv


SPECIAL_FILE_FLAGS: dict[str, Case] = {
    "--kubeconfig": lambda s, _d, _c: ["version", "--kubeconfig", str(s)],
    "kubeconfig certificate-authority": _kubeconfig_naming("certificate-authority", "cluster"),
    "kubeconfig tokenFile": _kubeconfig_naming("tokenFile", "user"),
    "kubeconfig client-certificate": _kubeconfig_naming("client-certificate", "user"),
    "kubeconfig client-key": _kubeconfig_naming("client-key", "user"),
    "start --serving-cert-file": lambda s, _d, c: _start(
        "--listen", "127.0.0.1:0", "--serving-cert-file", str(s), "--serving-key-file", c[1]
    ),
    "start --serving-key-file": lambda s, _d, c: _start(
        "--listen", "127.0.0.1:0", "--serving-cert-file", c[0], "--serving-key-file", str(s)
    ),
    "update-status-controller --serving-cert-file": lambda s, _d, c: _usc(
        "--listen", "127.0.0.1:0", "--serving-cert-file", str(s), "--serving-key-file", c[1]
    ),
    "start --promql-ca-file": lambda s, _d, _c: _start("--promql-url", _PROMQL, "--promql-ca-file", str(s)),
    "start --promql-token-file": lambda s, _d, _c: _start("--promql-url", _PROMQL, "--promql-token-file", str(s)),
    "update-status-controller --alerts-ca-file": lambda s, _d, _c: _usc("--alerts-ca-file", str(s)),
    "update-status-controller --alerts-token-file": lambda s, _d, _c: _usc("--alerts-token-file", str(s)),
    "--mock-clusterversion NAME-cv.yaml": _snapshot("-cv.yaml"),
    "--mock-clusterversion NAME-node.yaml": _snapshot("-node.yaml"),
    "--mock-clusterversion NAME-alerts.json": _snapshot("-alerts.json"),
    "--from NAME-cv.yaml": lambda s, d, _c: ["upgrade-status", "--from", str(_link(d / "x-cv.yaml", s))],
}


def _link(path: Path, target: Path) -> Path:
    path.symlink_to(target)
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


# Runs argv under RLIMIT_AS and writes "<exit code> <ru_maxrss KiB>" to a file descriptor. The
# measured process is forked from this small interpreter, not from the caller: Linux carries a
# forked child's pre-exec peak (the parent's resident pages) into its ru_maxrss, so a child of a
# large test process would report that process's size, not its own.
_LAUNCHER = """
import os, resource, subprocess, sys
limit, fd = int(sys.argv[1]), int(sys.argv[2])
proc = subprocess.Popen(sys.argv[3:], preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
_, status, usage = os.wait4(proc.pid, 0)
os.write(fd, f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}".encode())
"""


def run_limited(
    argv: Sequence[str],
    *,
    timeout: float = 60.0,
    memory_bytes: int = 1 << 30,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> Limited:
    """Run `argv` with its address space capped at `memory_bytes` (RLIMIT_AS) and kill it after
    `timeout` seconds; the peak RSS is the child's own (wait4 in a small launcher, `_LAUNCHER`)."""
    start = time.monotonic()
    read_end, write_end = os.pipe()
    launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(memory_bytes), str(write_end), *argv]
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(
                launcher, stdin=subprocess.DEVNULL, stdout=out, stderr=err, pass_fds=(write_end,),
                env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True,
            )
            os.close(write_end)
            write_end = -1
            killed = False
            while proc.poll() is None:
                if not killed and time.monotonic() > start + timeout:
                    os.killpg(proc.pid, 9)  # the launcher and what it runs
                    killed = True
                time.sleep(0.02)
            seconds = time.monotonic() - start
            with os.fdopen(read_end, "rb") as result:
                read_end = -1
                answer = result.read().decode().split()
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)
    if killed:
        return Limited(None, stdout, stderr, seconds, int(answer[1]) * 1024 if len(answer) == 2 else 0)
    if len(answer) != 2:
        raise RuntimeError(f"could not run {list(argv)}: {stderr.strip()[-2000:]}")
    return Limited(int(answer[0]), stdout, stderr, seconds, int(answer[1]) * 1024)


def peak_rss(pid: int) -> int:
    """The peak resident memory of a running process, in bytes (Linux's VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def cli(*args: str) -> list[str]:
    """The command line of `cluster-version-operator ARGS` as a child process runs it."""
    return [sys.executable, "-m", "cvo_py", *args]
