"""Health insights that overflow the ConfigMap API, on the real API server: the controller
publishes what fits and says what it left out, every ConfigMap `usc-shards` lists exists, and the
live `upgrade-status` prints what is published with a warning, never an error."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import CONFIGMAPS, MACHINECONFIGPOOLS, MACHINECONFIGS, NODES, ApiError, KubeClient
from status.updatestatus.api import configmap, metadata
from status.updatestatus.api.metadata import META_KEY
from testkit.fakes.httpserve import Handler
from testkit.fakes.mco import MCO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster
from testkit.objects.insight_objects import firing_alert


def many_alerts(during: str) -> list[dict[str, Any]]:
    return [firing_alert(f"TestAlert{i}", during, summary=f"Alert number {i}") for i in range(20_000)]


def one_huge_text(during: str) -> list[dict[str, Any]]:
    huge = firing_alert("TestHugeText", during, summary="A description of 5 MB", description="d" * (5 << 20))
    return [huge, firing_alert("TestSmall", during, summary="A small one")]


OVERFLOWS: dict[str, Callable[[str], list[dict[str, Any]]]] = {
    "20,000 firing alerts": many_alerts,
    "one alert with a 5 MB description": one_huge_text,
}


def published_meta(kube: KubeClient) -> metadata.PublicationMetadata | None:
    data = h.configmap_data(kube, h.NAMESPACE) or {}
    return metadata.decode(data[META_KEY]) if META_KEY in data else None


def listed_shards_exist(kube: KubeClient) -> bool:
    data = h.configmap_data(kube, h.NAMESPACE) or {}
    for name in configmap.shard_names(data):
        try:
            kube.get(CONFIGMAPS, name, namespace=h.NAMESPACE)
        except ApiError as exc:
            if exc.is_not_found():
                return False
            raise
    return True


@pytest.mark.parametrize("case", list(OVERFLOWS))
def test_overflowing_health_insights_leave_a_readable_layout(
    cluster: LocalCluster,
    kube: KubeClient,
    http_server: Callable[[Handler], str],
    update_without_nodes: datetime,
    tmp_path: Path,
    case: str,
) -> None:
    started = update_without_nodes
    during = h.ts(started + timedelta(minutes=1))
    body = json.dumps({"status": "success", "data": {"alerts": OVERFLOWS[case](during)}}).encode()

    def alerts_api(_req: BaseHTTPRequestHandler) -> tuple[int, bytes]:
        return 200, body

    usc = h.ControllerProcess(cluster.kubeconfig, h.NAMESPACE, tmp_path / "usc.log", "--alerts-url",
                              http_server(alerts_api), "--alerts-interval", "5")
    try:
        meta = h.wait_for("metadata that lists omitted insights",
                          lambda: (m := published_meta(kube)) and m.omitted.count and m, timeout=120)
        assert meta.omitted.kinds.get("Health", 0) >= 1
        assert listed_shards_exist(kube)
        out = h.upgrade_status(cluster.kubeconfig, "--source", "controller", "--details=all")
        assert "(exit" not in out, out[-2000:]  # printed, exit 0
        assert "Control Plane" in out and "Update Health" in out
        assert "insights were omitted by the controller (ConfigMap size limit)" in out, out[:2000]
        data = h.configmap_data(kube, h.NAMESPACE) or {}
        assert configmap.data_size(data) <= configmap.DATA_LIMIT
        assert "usc-cv-version" in data  # what matters most is published first
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]


POOLS = {"master": ("overflow-m0",), "worker": ("overflow-w0", "overflow-w1")}
CONFIGS = {"master": "rendered-master-overflow", "worker": "rendered-worker-overflow"}


@pytest.fixture
def pools_and_nodes(kube: KubeClient, mco: MCO) -> Iterator[None]:
    """The control plane's pool and a worker pool with their nodes, all at the current config."""
    objects = [(NODES, n) for nodes in POOLS.values() for n in nodes]
    objects += [(MACHINECONFIGPOOLS, p) for p in POOLS] + [(MACHINECONFIGS, c) for c in CONFIGS.values()]
    h.delete_objects(kube, objects)
    for pool, nodes in POOLS.items():
        mco.create_machineconfig(CONFIGS[pool], "4.15.8")
        mco.create_pool(pool, {f"node-role.kubernetes.io/{pool}": ""}, CONFIGS[pool])
        for name in nodes:
            mco.create_node(name, [pool], CONFIGS[pool])
        mco.sync_pool(pool, list(nodes))
    yield
    h.delete_objects(kube, objects)


def test_twenty_thousand_alerts_never_hide_the_pools_or_nodes(
    cluster: LocalCluster,
    kube: KubeClient,
    http_server: Callable[[Handler], str],
    update_without_nodes: datetime,
    pools_and_nodes: None,
    tmp_path: Path,
) -> None:
    """A noisy Prometheus crowds out only other alerts: the pools and nodes are published, and the
    live view still shows the control plane's nodes and the worker pool, with a warning that names
    what was left out."""
    during = h.ts(update_without_nodes + timedelta(minutes=1))
    body = json.dumps({"status": "success", "data": {"alerts": many_alerts(during)}}).encode()
    usc = h.ControllerProcess(cluster.kubeconfig, h.NAMESPACE, tmp_path / "usc.log", "--alerts-url",
                              http_server(lambda _req: (200, body)), "--alerts-interval", "5")
    try:
        meta = h.wait_for("metadata that lists omitted insights",
                          lambda: (m := published_meta(kube)) and m.omitted.count and m, timeout=120)
        assert set(meta.omitted.kinds) == {"Health"}, meta.omitted
        assert all(key.startswith("usc-health-alert-") for key in meta.omitted.keys)
        published = h.configmap_data(kube, h.NAMESPACE) or {}
        assert {"usc-mcp-master", "usc-mcp-worker"} <= set(published)
        out = h.upgrade_status(cluster.kubeconfig, "--source", "controller", "--details=all")
        assert "= Worker Upgrade =" in out and "Control Plane Nodes" in out, out[-3000:]
        assert "overflow-m0" in out and "overflow-w1" in out
        warning = next(line for line in out.splitlines() if "insights were omitted by the controller" in line)
        assert "(not shown: usc-health-alert-" in warning, warning
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]
