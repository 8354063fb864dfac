"""`upgrade-status --watch` on the cluster's objects (`--source cluster`, and `auto` without a
current publication): an oc example loaded into the local API server, the watch run as a person
runs it (into a pipe, at a terminal), each kind of object changed while it watches, the API server
taken away and given back; and the view it computes equal to a one-shot run's."""

from __future__ import annotations

import copy
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.times import format_time
from cvo_py.runtime.kube import CLUSTEROPERATORS, CLUSTERVERSIONS, MACHINECONFIGPOOLS, NODES, KubeClient, Resource
from status.updatestatus.client import snapshot
from status.updatestatus.client.clusterwatch import ObjectSources
from status.updatestatus.client.routealerts import UNABLE
from testkit.checkout import EXAMPLES, REPO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster
from testkit.harness.tcpproxy import PausableProxy
from testkit.harness.terminal import HAS_TMUX, Piped, Terminal
from testkit.objects import livecluster
from testkit.objects.livecluster import upgrade_status

EXAMPLE = "4.14.1-workers-started-updating-multiple-pools"
MCO = "machineconfiguration.openshift.io/"
OBJECTS = "update status from the cluster's objects"
PUBLISHED = "update status insights"
NEEDS_EXAMPLES = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"oc examples not found in {EXAMPLES}")
NEEDS_TMUX = pytest.mark.skipif(not HAS_TMUX, reason="tmux is not installed: the test needs a terminal")


@pytest.fixture
def loaded(kube: KubeClient) -> Iterator[snapshot.Snapshot]:
    """The example's objects in the API server, as oc reads them live."""
    snap = snapshot.load(EXAMPLES / f"{EXAMPLE}-cv.yaml")
    objects = livecluster.load(kube, snap)
    try:
        yield snap
    finally:
        objects.remove()


def blocks(text: str) -> list[str]:
    """The blocks a piped watch has appended so far (each starts with a `--- <time>: ...` line)."""
    return text.split("\n--- ") if text.startswith("--- ") else []


def last(text: str) -> str:
    found = blocks(text)
    return found[-1] if found else ""


def watch(kubeconfig: str, *args: str) -> Piped:
    return Piped(h.upgrade_status_command(kubeconfig, "--watch", "--details", "all", *args))


def changed_status(kube: KubeClient, res: Resource, name: str, change: Callable[[dict[str, Any]], None]) -> None:
    """`change` applied to the object's status, written as its controller writes it."""
    obj = copy.deepcopy(kube.get(res, name))
    change(obj)
    kube.replace_status(res, obj)


def set_condition(obj: dict[str, Any], kind: str, status: str, reason: str) -> None:
    conditions = obj["status"].setdefault("conditions", [])
    found = next((c for c in conditions if c["type"] == kind), None)
    if found is None:
        found = {"type": kind, "lastTransitionTime": "2024-02-07T16:00:00Z"}
        conditions.append(found)
    found.update(status=status, reason=reason, message=f"{reason} while watched")


def watched_view(sources: ObjectSources, now: int) -> Any:
    """The view `sources` compute at `now` once listed, with the alerts' answer."""
    try:
        sources.start()
        h.wait_for("listed", lambda: sources.wait_listed(0.1) or None)
        sources.view(now)  # the cluster updates: the alerts are fetched
        h.wait_for("the alerts' answer", lambda: sources.alerts.latest()[1] or None)
        return sources.view(now)
    finally:
        sources.stop()


@NEEDS_EXAMPLES
def test_the_watch_computes_what_a_one_shot_run_prints(cluster: LocalCluster, loaded: snapshot.Snapshot) -> None:
    """At the same "now", the watch's view is the one-shot `--source cluster` output, alerts line
    included (no Route here), at every `--details`."""
    now = loaded.mock_now()
    for details in ("none", "all"):
        view = watched_view(ObjectSources(cluster.client, details), now)
        done = upgrade_status(
            cluster.kubeconfig, "--source", "cluster", "--now", format_time(now), "--details", details
        )
        assert done.returncode == 0, done.stderr
        assert view.text == done.stdout, details
        assert view.text.startswith(UNABLE)


@NEEDS_EXAMPLES
def test_a_change_to_each_kind_of_object_is_shown(
    cluster: LocalCluster, kube: KubeClient, loaded: snapshot.Snapshot
) -> None:
    watching = watch(cluster.kubeconfig, "--source", "cluster")
    try:
        first = last(watching.wait_for("the first block", lambda text: "= Control Plane =" in last(text)))
        assert f": {OBJECTS} computed now at " in first.split("\n", 1)[0]
        node = sorted(n["metadata"]["name"] for n in loaded.nodes)[-1]

        def node_degraded(obj: dict[str, Any]) -> None:
            obj["metadata"]["annotations"].update({MCO + "state": "Degraded", MCO + "reason": "x-watched-reason"})

        obj = kube.get(NODES, node)
        node_degraded(obj)
        kube.replace(NODES, obj)
        watching.wait_for("the node's change", lambda text: "x-watched-reason" in last(text))

        pool = kube.get(MACHINECONFIGPOOLS, "worker")
        pool["spec"]["paused"] = True
        kube.replace(MACHINECONFIGPOOLS, pool)
        watching.wait_for("the pool's change", lambda text: "paused pool 'worker'" in last(text))

        operator = sorted(o["metadata"]["name"] for o in loaded.operators)[0]
        changed_status(kube, CLUSTEROPERATORS, operator, lambda o: set_condition(o, "Degraded", "True", "XWatchedCO"))
        degraded = f"Cluster Operator {operator} is degraded (XWatchedCO)"
        watching.wait_for("the operator's change", lambda text: degraded in last(text))

        changed_status(kube, CLUSTERVERSIONS, "version", lambda o: set_condition(o, "Failing", "True", "XWatchedCV"))
        shown = last(watching.wait_for("the ClusterVersion's change", lambda text: "(XWatchedCV)" in last(text)))
        for earlier in ("x-watched-reason", "paused pool 'worker'", "(XWatchedCO)"):
            assert earlier in shown  # each block is the whole view
        assert watching.interrupt() == 130
    finally:
        watching.close()
    assert b"Traceback" not in watching.err
    assert bytes(watching.err).decode() == ""


@NEEDS_EXAMPLES
def test_a_watch_that_loses_its_api_server_says_so_and_recovers(
    cluster: LocalCluster, kube: KubeClient, loaded: snapshot.Snapshot, tmp_path: Path
) -> None:
    server = urlparse(kube.server)
    proxy = PausableProxy(server.hostname or "127.0.0.1", server.port or 443)
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "proxied.kubeconfig", cluster.state["adminToken"], server=f"https://127.0.0.1:{proxy.port}"
    )
    watching = watch(kubeconfig, "--source", "cluster")
    not_watched = "warning: watch: nodes not watched ("
    try:
        before = watching.wait_for("the first block", lambda text: "= Control Plane =" in last(text))
        assert not_watched not in before
        assert proxy.pause() >= 1  # the watches are cut; new connections are refused
        failed = last(watching.wait_for("a block saying the watch fails", lambda text: not_watched in last(text)))
        assert "Update health is not known" in failed  # never "proceeding well" on a partial view
        proxy.resume()
        recovered = watching.wait_for(
            "a block without the failure once the watch works again",
            lambda text: "= Control Plane =" in last(text) and "warning: watch:" not in last(text),
        )
        assert "Update health is not known" not in last(recovered)
        assert watching.interrupt() == 130
    finally:
        watching.close()
        proxy.close()
    assert b"Traceback" not in watching.err


@NEEDS_EXAMPLES
def test_a_reader_that_leaves_ends_the_watch_quietly(cluster: LocalCluster, loaded: snapshot.Snapshot) -> None:
    command = " ".join(h.upgrade_status_command(cluster.kubeconfig, "--watch", "--source", "cluster"))
    done = subprocess.run(
        ["bash", "-c", f'{command} | head -3; echo "exit ${{PIPESTATUS[0]}}"'],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = done.stdout.split("\n")
    assert lines[0].startswith("--- ") and OBJECTS in lines[0]
    assert len(lines) == 5 and lines[3:] == ["exit 0", ""], done.stdout
    assert done.stderr == ""


@NEEDS_TMUX
@NEEDS_EXAMPLES
def test_ctrl_c_ends_a_watch_at_a_terminal_below_its_last_frame(
    cluster: LocalCluster, loaded: snapshot.Snapshot
) -> None:
    terminal = Terminal()
    try:
        terminal.type(" ".join(h.upgrade_status_command(cluster.kubeconfig, "--watch", "--source", "cluster")))
        first = terminal.wait_for("the first frame", lambda lines: "= Control Plane =" in lines)
        assert first[0].startswith("Update status from the cluster's objects: computed ")
        assert first[0].endswith(". Ctrl-C to stop.")
        ended = terminal.ctrl_c()
        exit_line = next(i for i, line in enumerate(ended) if line.startswith("EXIT="))
        assert ended[exit_line] == "EXIT=130"
        assert exit_line > max(i for i, line in enumerate(ended) if line.startswith("= Control Plane ="))
        assert not any("\x1b" in line for line in ended)
    finally:
        terminal.close()


def make_stale(kube: KubeClient, namespace: str) -> None:
    from cvo_py.runtime.kube import CONFIGMAPS
    from status.updatestatus.api import configmap, metadata

    now = time.time_ns()
    meta = metadata.build(now - 3 * 3600 * SECOND, "usc-0", "0", 60 * SECOND, [])
    kube.patch(CONFIGMAPS, configmap.CONFIGMAP, {"data": {metadata.META_KEY: metadata.encode(meta)}}, namespace)


def release_lease(kube: KubeClient, namespace: str) -> None:
    from cvo_py.runtime.kube import LEASES
    from status.updatestatus.api import metadata

    kube.patch(LEASES, metadata.LEASE, {"spec": {"holderIdentity": None}}, namespace=namespace)


@NEEDS_EXAMPLES
@pytest.mark.parametrize("state", ["absent", "current", "stale", "lease released"])
def test_which_source_each_watch_follows(
    cluster: LocalCluster, kube: KubeClient, loaded: snapshot.Snapshot, namespace: str, state: str
) -> None:
    """`auto` follows the publication only when it is current when the watch starts (else the
    objects, said on stderr); `controller` always the publication; `cluster` always the objects."""
    if state != "absent":
        h.publish_insights(kube, namespace)
    if state == "stale":
        make_stale(kube, namespace)
    elif state == "lease released":
        release_lease(kube, namespace)
    follows: dict[str, tuple[str, str]] = {}
    for source in ("auto", "controller", "cluster"):
        where = [] if source == "cluster" else ["--namespace", namespace]  # `cluster` reads no publication
        watching = watch(cluster.kubeconfig, "--source", source, *where)
        try:
            text = watching.wait_for("the first block", lambda text: len(blocks(text)) >= 1 and "\n" in text)
            assert watching.interrupt() == 130
        finally:
            watching.close()
        follows[source] = (blocks(text)[0].split("\n", 1)[0], bytes(watching.err).decode())
    assert OBJECTS in follows["cluster"][0] and follows["cluster"][1] == ""
    assert PUBLISHED in follows["controller"][0] and follows["controller"][1] == ""
    auto_heading, auto_note = follows["auto"]
    if state == "current":
        assert PUBLISHED in auto_heading and auto_note == ""
        return
    assert OBJECTS in auto_heading
    assert auto_note.startswith("note: ") and auto_note.count("\n") == 1
    assert auto_note.endswith(": computing the status from the cluster's objects, as oc does\n")
    why = {
        "absent": "no update status controller publishes in",
        "stale": "the insights are stale",
        "lease released": "Lease has no holder",
    }[state]
    assert why in auto_note


@NEEDS_EXAMPLES
def test_what_oc_stops_at_is_the_frame_until_it_is_resolved(cluster: LocalCluster, kube: KubeClient) -> None:
    """No machine-config-operator Deployment, then a MachineConfig a node names that does not exist
    (its name holding an escape sequence): each is oc's one line, escaped, until it is resolved."""
    snap = snapshot.load(EXAMPLES / f"{EXAMPLE}-cv.yaml")
    objects = livecluster.load(kube, snap, with_deployment=False)
    watching = watch(cluster.kubeconfig, "--source", "cluster")
    no_deployment = 'Error from server (NotFound): deployments.apps "machine-config-operator" not found'
    try:
        watching.wait_for("the Deployment's absence", lambda text: no_deployment in last(text))
        livecluster.create_deployment(kube, objects)
        watching.wait_for("the status", lambda text: "= Control Plane =" in last(text))
        node = sorted(n["metadata"]["name"] for n in snap.nodes)[0]
        kube.patch(NODES, node, {"metadata": {"annotations": {MCO + "desiredConfig": "gone-\x1b[2J"}}})
        missing = "Error from server (NotFound): machineconfigs.machineconfiguration.openshift.io "
        shown = last(watching.wait_for("the missing MachineConfig", lambda text: missing in last(text)))
        assert "\x1b" not in shown.split("\n", 1)[1]
        assert '"gone-\\x1b[2J" not found' in shown
        assert watching.interrupt() == 130
    finally:
        watching.close()
        objects.remove()
    assert b"Traceback" not in watching.err
