"""`upgrade-status --watch` as a person runs it: typed into a shell in a terminal (tmux) while the
Update Status Controller runs as a real process on the local API server; the screen is read
after a node starts draining and after the controller is stopped, then Ctrl-C is pressed."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse

import pytest

from cvo_py.runtime.kube import LEASES, MACHINECONFIGPOOLS, MACHINECONFIGS, NODES, KubeClient
from status.updatestatus.api.names import LEASE
from status.updatestatus.client.watch import REDRAW_GAP
from testkit.fakes.mco import MCO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster
from testkit.harness.tcpproxy import PausableProxy
from testkit.harness.terminal import HAS_TMUX, Piped, Terminal

NEEDS_TMUX = pytest.mark.skipif(not HAS_TMUX, reason="tmux is not installed: the test needs a terminal")

OLD, NEW = "4.15.8", "4.16.0"
POOL = "watching"
NODES_IN_POOL = ("watching-node-0", "watching-node-1")
CONFIGS = {OLD: f"rendered-{POOL}-{OLD}", NEW: f"rendered-{POOL}-{NEW}"}


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

        ended = terminal.ctrl_c()
        exit_line = next(i for i, line in enumerate(ended) if line.startswith("EXIT="))
        assert ended[exit_line] == "EXIT=130"
        # the shell's prompt and output come below the last frame, on a clean screen
        assert exit_line > max(i for i, line in enumerate(ended) if line.startswith(NODES_IN_POOL[0]))
        assert not any("\x1b" in line for line in ended)
    finally:
        terminal.close()
        if usc.proc.poll() is None:
            usc.stop()


@pytest.mark.parametrize("source", ["controller", "cluster", "auto"])
def test_a_reader_who_may_not_watch_is_told_in_one_line(
    cluster: LocalCluster, namespace: str, tmp_path: Path, source: str
) -> None:
    """Told in the API's words (the publication's watch) or as kubectl words it (the objects'); `auto`
    says first, in one more line, why it follows the objects (the ConfigMaps cannot be read)."""
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "nobody.kubeconfig", cluster.service_account_token(namespace, "nobody")
    )
    done = subprocess.run(
        [sys.executable, "-m", "cvo_py", "upgrade-status", "--kubeconfig", kubeconfig, "--watch", "--source", source,
         *([] if source == "cluster" else ["--namespace", namespace])],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    lines = done.stderr.splitlines()
    if source == "controller":
        assert len(lines) == 1 and "403" in lines[0], done.stderr
        return
    if source == "auto":
        note = lines.pop(0)
        assert note.startswith("note: the update status controller's ConfigMaps cannot be read ("), note
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("Error from server (Forbidden): clusterversions.config.openshift.io is forbidden: User ")


def blocks(text: str) -> list[str]:
    """The blocks a piped watch has appended so far (each starts with a `--- <time>: ...` line)."""
    return text.split("\n--- ") if text.startswith("--- ") else []


def test_a_piped_watch_says_when_its_watch_fails_after_the_last_change_and_when_it_works_again(
    cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path
) -> None:
    """Nothing changes in the ConfigMaps after the last change while the API server is out of
    reach, so no object event wakes the watch: the failure itself must, and so must the recovery
    (appended blocks on a pipe, which, unlike a terminal's frame, is not redrawn every second)."""
    h.publish_insights(kube, namespace)
    server = urlparse(kube.server)
    proxy = PausableProxy(server.hostname or "127.0.0.1", server.port or 443)
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "proxied.kubeconfig", cluster.state["adminToken"], server=f"https://127.0.0.1:{proxy.port}"
    )
    command = h.upgrade_status_command(kubeconfig, "--watch", "--namespace", namespace, "--source", "controller")
    watching = Piped(command)
    not_watched = f"watch: ConfigMaps in {namespace} not watched ("
    try:
        watching.wait_for("the first block", lambda text: len(blocks(text)) >= 1)
        h.publish_insights(kube, namespace, omitted=["usc-node-gone"])  # the last change
        changed = watching.wait_for("the last change", lambda text: "insights were omitted" in blocks(text)[-1])
        assert not_watched not in changed
        assert proxy.pause() >= 1  # the watches are cut; new connections are refused
        failed = watching.wait_for("a block saying the watch fails", lambda text: not_watched in blocks(text)[-1])
        assert len(blocks(failed)) > len(blocks(changed))
        proxy.resume()
        watching.wait_for(
            "a block without the failure once the watch works again",
            lambda text: len(blocks(text)) > len(blocks(failed)) and not_watched not in blocks(text)[-1],
        )
        assert watching.interrupt() == 130
    finally:
        watching.close()
        proxy.close()
    assert b"Traceback" not in watching.err


@pytest.mark.parametrize(
    ("args", "nodes"),
    [(["--watch"], 0), (["--watch"], 800), ([], 800)],
    ids=["watch, between frames", "watch, in the middle of a frame", "one-shot, in the middle of its output"],
)
def test_a_reader_that_leaves_early_ends_the_command_quietly(
    cluster: LocalCluster, kube: KubeClient, namespace: str, args: list[str], nodes: int
) -> None:
    """`| head -3`: head exits with its lines, after the first frame (found before anything more is
    written: nothing may change for hours) or while a frame larger than the pipe is written."""
    h.publish_insights(kube, namespace, nodes=nodes)
    command = " ".join(
        h.upgrade_status_command(cluster.kubeconfig, *args, "--namespace", namespace, "--details", "all")
    )
    done = subprocess.run(
        ["bash", "-c", f'{command} | head -3; echo "exit ${{PIPESTATUS[0]}}"'],
        cwd=h.REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = done.stdout.split("\n")
    assert len(lines) == 5 and lines[3:] == ["exit 0", ""], done.stdout
    assert done.stderr == ""


def test_a_burst_of_lease_renewals_is_shown_as_a_few_blocks_ending_with_the_last(
    cluster: LocalCluster, kube: KubeClient, namespace: str
) -> None:
    """200 renewals of an expired Lease, each naming another holder (so each changes what is shown),
    as fast as four writers go: a few blocks, composed at least `REDRAW_GAP` apart from the first
    renewal until the last is shown, and the last block shows the Lease as the last renewal left it."""
    h.publish_insights(kube, namespace)
    long_ago = "2024-01-01T10:00:00.000000Z"
    kube.patch(LEASES, LEASE, {"spec": {"renewTime": long_ago, "leaseDurationSeconds": 15}}, namespace)
    watching = Piped(
        h.upgrade_status_command(cluster.kubeconfig, "--watch", "--namespace", namespace, "--source", "controller")
    )
    try:
        before = blocks(watching.wait_for("the first block", lambda text: "holder usc-0," in text))
        started = time.monotonic()
        with ThreadPoolExecutor(4) as writers:
            patches = [{"spec": {"holderIdentity": f"usc-{i}"}} for i in range(1, 201)]
            list(writers.map(lambda patch: kube.patch(LEASES, LEASE, patch, namespace), patches))
        holder = kube.get(LEASES, LEASE, namespace)["spec"]["holderIdentity"]
        after = blocks(watching.wait_for("the last renewal", lambda text: f"holder {holder}," in blocks(text)[-1]))
        elapsed = time.monotonic() - started
        shown = len(after) - len(before)
        assert 1 <= shown <= 1 + elapsed / REDRAW_GAP, f"{shown} blocks for 200 renewals shown in {elapsed:.2f}s"
        assert watching.interrupt() == 130
    finally:
        watching.close()
