"""What `upgrade-status` imports, listed: on a live cluster, and offline (a JSON snapshot, a
must-gather archive, an Insights archive), the project's modules one by one, no third-party
package but PyYAML (the kubeconfig, a YAML dump), and not the logging package. A new import on
the client's path (pydantic, say, whose import alone took longer than everything else the
command does) fails here until it is listed on purpose."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cvo_py import __version__
from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.kube import CONFIGMAPS, LEASES, ApiError, KubeClient
from status.updatestatus.api import configmap, metadata
from status.updatestatus.client.snapshot import Snapshot
from status.updatestatus.insights import compute
from testkit.checkout import PRODUCT
from testkit.harness import cluster as local
from testkit.objects import dumps as conv
from testkit.objects.insight_objects import (
    T0_NS,
    at,
    firing_alert,
    ns,
    sample_insights,
    small_cluster,
    write_snapshot,
)
from testkit.objects.synthetic import synthetic_cluster

# Every module of the project a live run imports: upgrade-status' fast path (cvo_py.compose.upgrade_status),
# whose import-linter contract lists the same modules.
PROJECT_MODULES = sorted(
    [
        "cvo_py",
        "cvo_py.cli",
        "cvo_py.cli.common",
        "cvo_py.cli.main",
        "cvo_py.cli.upgrade_status",
        "cvo_py.compose",
        "cvo_py.compose.upgrade_status",
        "cvo_py.runtime",
        "cvo_py.runtime.clientconfig",
        "cvo_py.runtime.connections",
        "cvo_py.runtime.docbounds",
        "cvo_py.runtime.errors",
        "cvo_py.runtime.gcpause",
        "cvo_py.runtime.gosort",
        "cvo_py.runtime.gotext",
        "cvo_py.runtime.gotext.base64std",
        "cvo_py.runtime.gotext.durations",
        "cvo_py.runtime.gotext.jsoncodec",
        "cvo_py.runtime.gotext.messages",
        "cvo_py.runtime.gotext.quoting",
        "cvo_py.runtime.gotext.times",
        "cvo_py.runtime.httpwire",
        "cvo_py.runtime.jsondata",
        "cvo_py.runtime.kube",
        "cvo_py.runtime.kubeconfig",
        "cvo_py.runtime.plainyaml",
        "cvo_py.runtime.safeload",
        "cvo_py.runtime.streamedbody",
        "cvo_py.runtime.tlstrust",
        "cvo_py.runtime.urls",
        "status",
        "status.updatestatus",
        "status.updatestatus.client.details",
        "status.updatestatus.insights",
        "status.updatestatus.insights.estimate",
        "status.updatestatus.insights.kinds",
        "status.updatestatus.insights.objects",
        "status.updatestatus.insights.plain",
        "status.updatestatus.insights.vocabulary",
        "status.updatestatus.api",
        "status.updatestatus.api.plain",
        "status.updatestatus.api.staleness",
        "status.updatestatus.api.names",
        "status.updatestatus.client",
        "status.updatestatus.client.live",
        "status.updatestatus.client.render",
        "status.updatestatus.client.render.controlplane",
        "status.updatestatus.client.render.health",
        "status.updatestatus.client.render.nodes",
        "status.updatestatus.client.render.pools",
        "status.updatestatus.client.render.tabwriter",
        "status.updatestatus.client.render.text",
        "status.updatestatus.client.render.warnings",
        "status.updatestatus.api.wire",
    ]
)
# Third-party packages a live run may import: none (`cvo_py.runtime.plainyaml` reads a kubeconfig
# written as kubectl and oc write them without PyYAML).
THIRD_PARTY: list[str] = []
# Standard modules a live run does without, each a few ms of every start-up: dataclasses (with
# inspect, ast, dis), pathlib, shutil, tempfile (the kubeconfig's CA data is kept in memory), the
# IDNA codec (an ASCII host name is given as bytes), logging (klog is set up only with -v or
# --watch), http.client with the email package (HTTP/1.1 is read by `runtime.connections`),
# datetime (instants are ints: `gotext.times`) and random (only a request told to wait jitters).
NOT_LOADED = ["dataclasses", "encodings.idna", "inspect", "logging", "pathlib", "shutil", "tempfile"]
NOT_LOADED += ["email", "http.client", "datetime", "random"]
CYTHON = re.compile(r"^(_cython_[0-9_]+|cython_runtime)$")
PROJECT = PRODUCT

PROBE = """
import atexit, runpy, sys
listing, *args = sys.argv[1:]
started = set(sys.modules)  # the interpreter's own, and what site hooks load
atexit.register(lambda: open(listing, "w").write("\\n".join(sorted(set(sys.modules) - started))))
sys.argv = ["cluster-version-operator", "upgrade-status", *args, "--details", "all"]
runpy.run_module("cvo_py", run_name="__main__")
"""

# What an offline run computes with besides the renderer: the pure insight functions, building the
# plain classes (`status.updatestatus.insights.plain`), never the pydantic models.
OFFLINE_MODULES = sorted(
    [
        "cvo_py",
        "cvo_py.cli",
        "cvo_py.cli.common",
        "cvo_py.cli.main",
        "cvo_py.cli.upgrade_status",
        "cvo_py.compose",
        "cvo_py.compose.upgrade_status",
        "cvo_py.runtime",
        "cvo_py.runtime.docbounds",
        "cvo_py.runtime.errors",
        "cvo_py.runtime.gcpause",
        "cvo_py.runtime.gosort",
        "cvo_py.runtime.gotext",
        "cvo_py.runtime.gotext.durations",
        "cvo_py.runtime.gotext.jsoncodec",
        "cvo_py.runtime.gotext.messages",
        "cvo_py.runtime.gotext.quoting",
        "cvo_py.runtime.gotext.times",
        "cvo_py.runtime.jsonfields",
        "cvo_py.runtime.safeload",
        "status",
        "status.updatestatus",
        "status.updatestatus.api",
        "status.updatestatus.api.names",
        "status.updatestatus.client",
        "status.updatestatus.client.details",
        "status.updatestatus.client.render",
        "status.updatestatus.client.render.controlplane",
        "status.updatestatus.client.render.health",
        "status.updatestatus.client.render.nodes",
        "status.updatestatus.client.render.pools",
        "status.updatestatus.client.render.tabwriter",
        "status.updatestatus.client.render.text",
        "status.updatestatus.client.render.warnings",
        "status.updatestatus.client.snapshot",
        "status.updatestatus.insights",
        "status.updatestatus.insights.alerts",
        "status.updatestatus.insights.compute",
        "status.updatestatus.insights.controlplane",
        "status.updatestatus.insights.estimate",
        "status.updatestatus.insights.faults",
        "status.updatestatus.insights.health",
        "status.updatestatus.insights.inputs",
        "status.updatestatus.insights.kinds",
        "status.updatestatus.insights.mco",
        "status.updatestatus.insights.membership",
        "status.updatestatus.insights.nodes",
        "status.updatestatus.insights.objects",
        "status.updatestatus.insights.operators",
        "status.updatestatus.insights.plain",
        "status.updatestatus.insights.pools",
        "status.updatestatus.insights.unavailability",
        "status.updatestatus.insights.vocabulary",
        "status.updatestatus.insights.selectors",
    ]
)
DUMP_MODULES = ["status.updatestatus.client.dump", "status.updatestatus.client.dump.archives"]
DUMP_MODULES += ["status.updatestatus.client.dump.layouts"]
# (what is read, the project's modules beyond OFFLINE_MODULES, the third-party packages)
OFFLINE_RUNS = {
    "json-snapshot": ([], []),
    "must-gather": (  # YAML files
        [*DUMP_MODULES, "cvo_py.runtime.gotext.numbers", "cvo_py.runtime.plainyaml", "cvo_py.runtime.safeyaml"],
        ["yaml"],
    ),
    "insights-archive": (DUMP_MODULES, []),  # JSON files
}


def probe(tmp_path: Path, *args: str) -> tuple[str, list[str]]:
    """What `upgrade-status --details all` with `args` prints, and the modules it imported (it
    succeeded)."""
    listing = tmp_path / "modules"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(listing), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, listing.read_text().split("\n")


def third_party_packages(modules: list[str]) -> list[str]:
    """The packages among `modules` that are neither the standard library's nor the project's."""
    tops = {m.split(".")[0] for m in modules if not CYTHON.match(m)}
    return sorted(tops - set(sys.stdlib_module_names) - set(PROJECT))


@pytest.fixture
def published(kube: KubeClient) -> Iterator[None]:
    """Insights of every kind and 300 more nodes (a LIST response over 64 KB), as the controller
    lays them out, with fresh publication metadata; removed afterwards."""
    cv, nodes, pools, versions = synthetic_cluster(300, 4)
    data = configmap.encode(compute.all_insights(cv, [], nodes, pools, versions, ns(1)))
    data.update(configmap.encode(sample_insights()))
    now = time.time_ns()
    data[metadata.META_KEY] = metadata.encode(metadata.build(now, "usc-0", __version__, 30 * SECOND, []))
    local.ensure_namespace(kube, configmap.NAMESPACE)
    for res, name in ((CONFIGMAPS, configmap.CONFIGMAP), (LEASES, metadata.LEASE)):
        try:
            kube.delete(res, name, namespace=configmap.NAMESPACE)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
    body = {"metadata": {"name": configmap.CONFIGMAP, "namespace": configmap.NAMESPACE}, "data": data}
    kube.create(CONFIGMAPS, body, namespace=configmap.NAMESPACE)
    assert configmap.data_size(data) > 1 << 16
    yield
    kube.delete(CONFIGMAPS, configmap.CONFIGMAP, namespace=configmap.NAMESPACE)


def test_a_live_run_imports_only_the_listed_modules(
    cluster: local.LocalCluster, published: None, tmp_path: Path
) -> None:
    stdout, modules = probe(tmp_path, "--kubeconfig", cluster.kubeconfig)
    assert "= Control Plane =" in stdout
    assert [m for m in modules if m.split(".")[0] in PROJECT] == PROJECT_MODULES
    assert third_party_packages(modules) == THIRD_PARTY
    assert sorted(set(NOT_LOADED) & set(modules)) == []


# What a live run from the cluster's objects (`--source cluster`, and `auto` without a current
# publication) imports: the live client's modules, the reads of the objects and of the alerts, and
# the insight computation an offline run loads, whose records are NamedTuples and plain classes
# (no dataclasses: with inspect, about 8 ms of every run); no third-party package (msgspec only for
# a Node LIST over `cluster.TRIMMED_FROM` bytes, about 250 nodes; the protobuf reader and google's
# protobuf only for the Nodes after the first page, over `cluster.FIRST_NODE_PAGE` nodes).
CLUSTER_MODULES = sorted(
    {*PROJECT_MODULES, *OFFLINE_MODULES}
    - {
        "status.updatestatus.api.plain",
        "status.updatestatus.api.staleness",
        "status.updatestatus.api.wire",
        "status.updatestatus.client.snapshot",
    }
    | {
        "status.updatestatus.client.cluster",
        "status.updatestatus.client.routealerts",
        "status.updatestatus.insights.incremental",
    }
)
CLUSTER_NOT_LOADED = ["dataclasses", "encodings.idna", "inspect", "logging", "pathlib", "shutil", "tempfile"]
CLUSTER_NOT_LOADED += ["email", "http.client", "datetime", "random", "msgspec", "pydantic_core"]
CLUSTER_NOT_LOADED += ["google.protobuf", "cvo_py.runtime.kubeproto", "cvo_py.runtime.liststream"]


def test_a_run_from_the_clusters_objects_imports_only_the_listed_modules(
    cluster: local.LocalCluster, kube: KubeClient, tmp_path: Path
) -> None:
    from status.updatestatus.client import snapshot
    from testkit.checkout import EXAMPLES
    from testkit.objects import livecluster

    if not EXAMPLES.is_dir():
        pytest.skip(f"oc examples not found in {EXAMPLES}")
    loaded = livecluster.load(kube, snapshot.load(EXAMPLES / "4.14.1-degraded-cv.yaml"))
    try:
        stdout, modules = probe(tmp_path, "--kubeconfig", cluster.kubeconfig, "--source", "cluster")
    finally:
        loaded.remove()
    assert "= Control Plane =" in stdout
    assert [m for m in modules if m.split(".")[0] in PROJECT] == CLUSTER_MODULES
    assert third_party_packages(modules) == []
    assert sorted(set(CLUSTER_NOT_LOADED) & set(modules)) == []


def offline_cluster() -> Snapshot:
    """Objects of every kind an offline run reads, and a firing alert."""
    return small_cluster(
        alerts={"status": "success", "data": {"alerts": [firing_alert("PodDisruptionBudgetLimit", at(10))]}}
    )


def offline_source(kind: str, snap: Snapshot, directory: Path) -> list[str]:
    """`upgrade-status`'s arguments that read `snap` as `kind`."""
    if kind == "json-snapshot":

        def as_list(items: list[dict[str, object]]) -> dict[str, object]:
            return {"apiVersion": "v1", "kind": "List", "items": items}

        cv_path = write_snapshot(
            directory,
            "x",
            True,
            **{
                "-cv.yaml": snap.clusterversion,
                "-co.yaml": as_list(snap.operators),
                "-mc.yaml": as_list(snap.machineconfigs),
                "-mcp.yaml": as_list(snap.pools),
                "-node.yaml": as_list(snap.nodes),
                "-alerts.json": snap.alerts,
            },
        )
        return ["--mock-clusterversion", str(cv_path)]
    if kind == "must-gather":
        files = conv.must_gather_files(snap, T0_NS)
        archive = directory / "must-gather.tar.gz"
        archive.write_bytes(conv.tar_bytes(files, prefix="must-gather.local.1/"))
        return ["--from", str(archive)]
    archive = directory / "insights.tar.gz"
    archive.write_bytes(conv.tar_bytes(conv.insights_files(snap)))
    return ["--from", str(archive)]


@pytest.mark.parametrize("kind", sorted(OFFLINE_RUNS))
def test_an_offline_run_imports_only_the_listed_modules_and_no_pydantic(kind: str, tmp_path: Path) -> None:
    stdout, modules = probe(tmp_path, *offline_source(kind, offline_cluster(), tmp_path))
    # everything was computed and shown: the control plane, the degraded node, the alert (a
    # must-gather holds no alerts)
    for shown in ("= Control Plane =", "= Worker Upgrade =", "w2"):
        assert shown in stdout, (shown, stdout)
    assert ("PodDisruptionBudgetLimit" in stdout) is (kind != "must-gather"), stdout
    assert not [m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")]
    extra_modules, third_party = OFFLINE_RUNS[kind]
    assert [m for m in modules if m.split(".")[0] in PROJECT] == sorted(OFFLINE_MODULES + extra_modules)
    assert third_party_packages(modules) == third_party
    assert "logging" not in modules
