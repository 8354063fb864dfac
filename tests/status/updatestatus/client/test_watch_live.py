"""`upgrade-status --watch` as a person runs it: typed into a shell in a terminal (tmux) while the
Update Status Controller runs as a real process on the local API server; the screen is read
after a node starts draining and after the controller is stopped, then Ctrl-C is pressed."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse

import pytest

from cvo_py.runtime.kube import MACHINECONFIGPOOLS, MACHINECONFIGS, NODES, KubeClient
from testkit.fakes.mco import MCO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster
from testkit.harness.tcpproxy import PausableProxy
from testkit.harness.wait import wait_until

NEEDS_TMUX = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed: the test needs a terminal")

OLD, NEW = "4.15.8", "4.16.0"
POOL = "watching"
NODES_IN_POOL = ("watching-node-0", "watching-node-1")
CONFIGS = {OLD: f"rendered-{POOL}-{OLD}", NEW: f"rendered-{POOL}-{NEW}"}


class Terminal:
    """A tmux session running a shell, on a socket of its own, 160 columns by 60 rows."""

    def __init__(self) -> None:
        self.socket = f"cvo-py-watch-{uuid.uuid4().hex[:8]}"
        self._tmux("new-session", "-d", "-s", "watch", "-x", "160", "-y", "60", "bash --norc --noprofile")

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

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False, timeout=30)


@pytest.fixture
def nodes_updating(
    kube: KubeClient, mco: MCO, update_without_nodes: datetime, cluster: LocalCluster, tmp_path: Path
) -> Iterator[str]:
    """A pool of two nodes on the old configuration in an update in progress; yields the
    controller's kubeconfig (its ServiceAccount)."""
    h.delete_objects(kube, [(NODES, n) for n in NODES_IN_POOL] + [(MACHINECONFIGPOOLS, POOL)])
    for version, name in CONFIGS.items():
        mco.create_machineconfig(name, version)
    mco.create_pool(POOL, {f"node-role.kubernetes.io/{POOL}": ""}, CONFIGS[NEW])
    for node in NODES_IN_POOL:
        mco.create_node(node, [POOL], CONFIGS[OLD])
    yield cluster.write_kubeconfig(
        tmp_path / "sa.kubeconfig", cluster.service_account_token(h.NAMESPACE, h.SERVICE_ACCOUNT)
    )
    h.delete_objects(
        kube,
        [(NODES, n) for n in NODES_IN_POOL]
        + [(MACHINECONFIGPOOLS, POOL)]
        + [(MACHINECONFIGS, name) for name in CONFIGS.values()],
    )


def node_row(lines: list[str], node: str) -> str:
    return next((line for line in lines if line.startswith(node + " ")), "")


@NEEDS_TMUX
def test_a_watching_terminal_shows_a_node_change_and_the_controller_stopping(
    cluster: LocalCluster, kube: KubeClient, mco: MCO, nodes_updating: str, tmp_path: Path
) -> None:
    usc = h.ControllerProcess(nodes_updating, h.NAMESPACE, tmp_path / "usc.log")
    terminal = Terminal()
    try:
        h.wait_for(
            "both nodes published",
            lambda: all(f"usc-node-{n}" in (h.configmap_data(kube, h.NAMESPACE) or {}) for n in NODES_IN_POOL),
        )
        terminal.type(
            f"{sys.executable} -m cvo_py upgrade-status --kubeconfig {cluster.kubeconfig} --watch --details all"
        )
        first = terminal.wait_for(
            "the first frame", lambda lines: "= Control Plane =" in lines and node_row(lines, NODES_IN_POOL[0])
        )
        assert first[0].startswith("Update status insights, as published: computed ")
        assert "Pending" in node_row(first, NODES_IN_POOL[0])
        assert not any(line.startswith("warning: ") for line in first), first

        mco.node_step(NODES_IN_POOL[0], "drain", CONFIGS[OLD], CONFIGS[NEW])
        changed = terminal.wait_for(
            "the node draining", lambda lines: "Draining" in node_row(lines, NODES_IN_POOL[0])
        )
        assert "Pending" in node_row(changed, NODES_IN_POOL[1])
        assert changed[0].startswith("Update status insights, as published: computed ")

        assert usc.stop() == 0  # as a rollout stops it: the Lease is released
        stopped = terminal.wait_for(
            "the controller flagged as gone",
            lambda lines: any("Lease has no holder" in line for line in lines),
        )
        assert stopped[0].startswith("Update status insights, as published: ")
        assert "Update health is not known" in "\n".join(stopped)  # never "proceeding well" with a warning

        terminal.press("C-c")
        terminal.type("echo EXIT=$?")
        ended = terminal.wait_for("the shell back", lambda lines: any(line.startswith("EXIT=") for line in lines))
        exit_line = next(i for i, line in enumerate(ended) if line.startswith("EXIT="))
        assert ended[exit_line] == "EXIT=130"
        # the shell's prompt and output come below the last frame, on a clean screen
        assert exit_line > max(i for i, line in enumerate(ended) if line.startswith(NODES_IN_POOL[0]))
        assert not any("\x1b" in line for line in ended)
    finally:
        terminal.close()
        if usc.proc.poll() is None:
            usc.stop()


def test_a_reader_who_may_not_watch_is_told_in_one_line(
    cluster: LocalCluster, namespace: str, tmp_path: Path
) -> None:
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "nobody.kubeconfig", cluster.service_account_token(namespace, "nobody")
    )
    done = subprocess.run(
        [sys.executable, "-m", "cvo_py", "upgrade-status", "--kubeconfig", kubeconfig, "--watch"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert "403" in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_a_piped_watch_says_when_its_watch_fails_and_when_it_works_again(
    cluster: LocalCluster, kube: KubeClient, update_without_nodes: datetime, tmp_path: Path
) -> None:
    """Nothing changes in the ConfigMaps while the API server is out of reach, so no object event
    wakes the watch: the failure itself must, and so must the recovery (appended blocks on a pipe)."""
    server = urlparse(kube.server)
    proxy = PausableProxy(server.hostname or "127.0.0.1", server.port or 443)
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "proxied.kubeconfig", cluster.state["adminToken"], server=f"https://127.0.0.1:{proxy.port}"
    )
    watching = subprocess.Popen(
        [sys.executable, "-m", "cvo_py", "upgrade-status", "--kubeconfig", kubeconfig, "--watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watching.stdout is not None
    lines: list[str] = []

    def read() -> None:
        for line in watching.stdout or ():
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    not_watched = f"watch: ConfigMaps in {h.NAMESPACE} not watched ("

    def blocks() -> list[str]:
        """The blocks appended so far (each starts with a `--- <time>: ...` line)."""
        text = "".join(list(lines))
        return text.split("\n--- ") if text.startswith("--- ") else []

    try:
        wait_until(lambda: len(blocks()) >= 1, timeout=60, what="the first block")
        first = len(blocks())
        assert not_watched not in blocks()[-1]
        assert proxy.pause() >= 1  # the watches are cut; new connections are refused
        wait_until(lambda: not_watched in blocks()[-1], timeout=60, what="a block saying the watch fails")
        failed_at = len(blocks())
        assert failed_at > first
        proxy.resume()
        wait_until(
            lambda: len(blocks()) > failed_at and not_watched not in blocks()[-1],
            timeout=60,
            what="a block without the failure once the watch works again",
        )
    finally:
        watching.send_signal(signal.SIGINT)
        try:
            code = watching.wait(timeout=30)
        finally:
            if watching.poll() is None:
                watching.kill()
                watching.wait(timeout=30)
            reader.join(timeout=30)
            proxy.close()
    assert code == 130
    assert "Traceback" not in (watching.stderr.read() if watching.stderr else "")
