"""`upgrade-status` as its composition root runs it, as real processes: a stdout that cannot be
written is one line and a failure, and the last output never holds the process for ever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testkit.checkout import EXAMPLES, REPO
from testkit.harness.terminal import as_typed, blocked_writing_stdout
from testkit.harness.wait import wait_until

EXAMPLE = EXAMPLES / "4.14.1-degraded-cv.yaml"
NEEDS_EXAMPLES = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"oc examples not found in {EXAMPLES}")


def closed_stdout(*args: str) -> subprocess.CompletedProcess[str]:
    """`cluster-version-operator ARGS >&-`, as a shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "cvo_py", *args],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=lambda: os.close(1),
    )


@NEEDS_EXAMPLES
@pytest.mark.parametrize(
    "args",
    [
        ["--mock-clusterversion", str(EXAMPLE)],
        ["--from", str(EXAMPLE)],
        # live: refused before the API server is asked (none listens here)
        ["--kubeconfig", "KUBECONFIG"],
        ["--watch", "--kubeconfig", "KUBECONFIG"],
    ],
    ids=["snapshot", "dump", "live", "watch"],
)
def test_a_closed_stdout_is_one_line_and_exit_1(args: list[str], tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
        "users:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n"
        "    user: u\ncurrent-context: x\n"
    )
    done = closed_stdout("upgrade-status", *[str(kubeconfig) if a == "KUBECONFIG" else a for a in args])
    assert done.returncode == 1
    assert done.stderr == "error: write /dev/stdout: bad file descriptor\n"


# A process whose last output (more than a pipe holds, all of it still in the buffer) is flushed
# by `_end_process` with the flush bounded by BOUND seconds.
FLUSHING = (
    "import sys\n"
    "from cvo_py.cli import main\n"
    "main.FLUSH_BOUND = BOUND\n"
    "sys.stdout = open(1, 'w', buffering=1 << 20, closefd=False)\n"
    "sys.stdout.write('x' * (1 << 19))\n"
    "main._end_process(0)\n"
)


def test_the_last_output_waits_for_its_reader_only_so_long(tmp_path: Path) -> None:
    """A stdout nobody reads: the process still ends, after the flush's bound, and says it failed."""
    program = FLUSHING.replace("BOUND", "0.5")
    reader, writer = os.pipe()
    try:
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", program], cwd=REPO, stdout=writer, stderr=subprocess.PIPE)
        os.close(writer)
        writer = -1
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - started
    finally:
        os.close(reader)
        if writer >= 0:
            os.close(writer)
    assert proc.returncode == 1, err
    assert took < 30  # the bound (0.5 s) plus an interpreter's start on a loaded machine
    assert b"Traceback" not in err


def test_ctrl_c_abandons_the_last_output_nobody_reads() -> None:
    """Blocked in the final flush of output nobody reads, Ctrl-C ends the process at once (it used
    to be ignored there, and the process could not be stopped)."""
    program = FLUSHING.replace("BOUND", "600")
    reader, writer = os.pipe()
    try:
        argv = as_typed([sys.executable, "-c", program])
        proc = subprocess.Popen(argv, cwd=REPO, stdout=writer, stderr=subprocess.PIPE)
        os.close(writer)
        writer = -1
        try:
            wait_until(lambda: blocked_writing_stdout(proc.pid), timeout=60, what="the final flush blocked")
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        os.close(reader)
        if writer >= 0:
            os.close(writer)
    assert proc.returncode == 1, err
    assert b"Traceback" not in err
