"""Ctrl-C ends `upgrade-status --watch` with exit 130 and a clean terminal whatever the watch is
doing: waiting for a change, reconnecting to an API server that refuses it, waiting on one that is
paused (SIGSTOP) or blocked in its first read from it, or blocked writing a frame to a terminal
whose output is stopped (Ctrl-S) or to a pipe nobody reads. Each watch runs as a real process on
the local API server; on a terminal it is typed into a shell in tmux and Ctrl-C is pressed."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

import pytest

from cvo_py.runtime.kube import KubeClient
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster
from testkit.harness.tcpproxy import PausableProxy, TCPProxy
from testkit.harness.terminal import HAS_TMUX, Piped, Terminal, blocked_writing_stdout
from testkit.harness.wait import wait_until

NEEDS_TMUX = pytest.mark.skipif(not HAS_TMUX, reason="tmux is not installed: the test needs a terminal")


def watch_command(kubeconfig: str, namespace: str) -> list[str]:
    # the publication, in every state it is watched in (`auto` would follow the objects while it is not current)
    return h.upgrade_status_command(
        kubeconfig, "--watch", "--source", "controller", "--namespace", namespace, "--details", "all"
    )


def assert_clean(watch: Piped) -> None:
    """Nothing a terminal would take as a control sequence, and no traceback."""
    assert b"\x1b" not in watch.out
    assert b"Traceback" not in watch.err, bytes(watch.err).decode()


def control_plane_shown(text: str) -> bool:
    return "= Control Plane =" in text


@contextmanager
def paused(cluster: LocalCluster) -> Iterator[None]:
    """The API server stopped (SIGSTOP): connections are accepted by the kernel and never answered."""
    pid = int(cluster.state["pid"])
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.fixture
def piped(cluster: LocalCluster, kube: KubeClient, namespace: str) -> Iterator[Piped]:
    h.publish_insights(kube, namespace)
    watch = Piped(watch_command(cluster.kubeconfig, namespace))
    try:
        watch.wait_for("the first block", control_plane_shown)
        yield watch
    finally:
        watch.close()


def test_ctrl_c_ends_a_piped_watch_that_waits_for_a_change(piped: Piped) -> None:
    assert piped.interrupt() == 130
    assert_clean(piped)


def test_ctrl_c_ends_a_piped_watch_that_reconnects_to_a_server_refusing_it(
    cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path
) -> None:
    h.publish_insights(kube, namespace)
    server = urlparse(kube.server)
    proxy = PausableProxy(server.hostname or "127.0.0.1", server.port or 443)
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "proxied.kubeconfig",
        cluster.state["adminToken"],
        server=f"https://127.0.0.1:{proxy.port}",
    )
    watch = Piped(watch_command(kubeconfig, namespace))
    try:
        watch.wait_for("the first block", control_plane_shown)
        proxy.pause()  # the watches are cut and new connections refused: the informers retry with backoff
        watch.wait_for(
            "a block saying the watch fails", lambda text: f"ConfigMaps in {namespace} not watched (" in text
        )
        assert watch.interrupt() == 130
        assert_clean(watch)
    finally:
        watch.close()
        proxy.close()


def test_ctrl_c_ends_a_piped_watch_whose_api_server_is_paused(cluster: LocalCluster, piped: Piped) -> None:
    with paused(cluster):
        time.sleep(1)  # the informers' watches now wait on a server that says nothing
        assert piped.interrupt() == 130
    assert_clean(piped)


def test_ctrl_c_ends_a_watch_blocked_in_its_first_read_from_a_paused_api_server(
    cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path
) -> None:
    """The first read (can the reader list ConfigMaps?) is made before anything is shown: its TLS
    handshake with a paused server waits (up to 10 s, then 30 s for the answer)."""
    h.publish_insights(kube, namespace)
    server = urlparse(kube.server)
    proxy = TCPProxy(server.hostname or "127.0.0.1", server.port or 443)  # to see the connection reach it
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "proxied.kubeconfig",
        cluster.state["adminToken"],
        server=f"https://127.0.0.1:{proxy.port}",
    )
    with paused(cluster):
        watch = Piped(watch_command(kubeconfig, namespace))
        try:
            wait_until(lambda: proxy.accepted, timeout=60, what="the first read to reach the paused server")
            time.sleep(0.5)  # into the handshake
            assert watch.proc.poll() is None
            assert watch.interrupt() == 130
            assert watch.out == b""  # nothing was shown yet
            assert_clean(watch)
        finally:
            watch.close()
            proxy.close()


def test_ctrl_c_ends_a_piped_watch_blocked_writing_a_frame_nobody_reads(
    cluster: LocalCluster, kube: KubeClient, namespace: str
) -> None:
    """A frame larger than the pipe holds, and a reader that stops reading: the write waits."""
    h.publish_insights(kube, namespace, nodes=800)
    watch = Piped(watch_command(cluster.kubeconfig, namespace), reading=False)
    try:
        wait_until(lambda: blocked_writing_stdout(watch.proc.pid), timeout=60, what="the watch blocked writing")
        assert watch.interrupt() == 130
        assert_clean(watch)
    finally:
        watch.close()


@NEEDS_TMUX
@pytest.mark.parametrize("state", ["drawing a frame to a terminal whose output is stopped", "API server paused"])
def test_ctrl_c_ends_a_watch_on_a_terminal_and_leaves_it_clean(
    cluster: LocalCluster, kube: KubeClient, namespace: str, state: str
) -> None:
    h.publish_insights(kube, namespace)
    terminal = Terminal(columns=160, rows=80)  # the whole frame fits, with room below it
    try:
        terminal.type(" ".join(watch_command(cluster.kubeconfig, namespace)))
        first = terminal.wait_for("the first frame", lambda lines: "= Control Plane =" in lines)
        frame_end = max(i for i, line in enumerate(first) if line.strip())
        pid = terminal.command_pid()
        if state == "API server paused":
            with paused(cluster):
                age = first[0]
                terminal.wait_for("the age line moving on", lambda lines: lines[0] != age)
                ended = terminal.ctrl_c()
        else:
            terminal.press("C-s")  # XOFF: the terminal takes no more output
            wait_until(
                lambda: blocked_writing_stdout(pid), timeout=60, what="the watch blocked writing to the terminal"
            )
            ended = terminal.ctrl_c()  # Ctrl-C also lets the output flow again, as a terminal does
        exit_line = next(i for i, line in enumerate(ended) if line.startswith("EXIT="))
        assert ended[exit_line] == "EXIT=130"
        # the shell comes back below the last frame, and nothing of a frame is left below it
        assert exit_line > frame_end, ended
        assert all(not line.strip() or line.startswith("bash") for line in ended[exit_line + 1 :]), ended
    finally:
        terminal.close()


def test_sigterm_ends_a_watch_on_a_terminal_with_143_and_restores_it(
    cluster: LocalCluster, kube: KubeClient, namespace: str
) -> None:
    """`kill PID` (SIGTERM) on a watch drawing on a terminal: its last bytes put the cursor below
    the frame and reset the attributes, as on Ctrl-C, and it exits 143."""
    import pty
    import re
    import subprocess

    h.publish_insights(kube, namespace)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(watch_command(cluster.kubeconfig, namespace), stdin=follower, stdout=follower,
                            stderr=subprocess.PIPE, close_fds=True)  # fmt: skip
    os.close(follower)
    seen = bytearray()

    def read_some() -> bytes:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other end is closed
            return b""
        seen.extend(chunk)
        return chunk

    try:
        wait_until(lambda: read_some() is not None and b"= Control Plane =" in seen, timeout=60, what="a frame")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
        while read_some():
            pass
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    assert re.search(rb"\x1b\[\d+;1H\x1b\[0m\x1b\[J$", bytes(seen)), bytes(seen[-200:])
    assert b"Traceback" not in (proc.stderr.read() if proc.stderr else b"")


def test_sigterm_ends_a_piped_watch_with_143_and_no_traceback(piped: Piped) -> None:
    piped.proc.send_signal(signal.SIGTERM)
    assert piped.proc.wait(timeout=piped.EXITS_WITHIN) == 143
    assert_clean(piped)
