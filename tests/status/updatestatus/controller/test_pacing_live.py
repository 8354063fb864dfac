"""The Update Status Controller's write pacing on the real API server: node changes, a node at a
time as fast as each is published and then all the others at once, are all published, with no
more ConfigMap writes than the pacer's bound over the span measured."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import pytest

from cvo_py.runtime.kube import CONFIGMAPS, MACHINECONFIGPOOLS, MACHINECONFIGS, NODES, ApiError, KubeClient
from status.updatestatus.api import wire
from status.updatestatus.controller.pacing import WritePacer
from testkit.fakes.mco import DESIRED_CONFIG, MCO, STATE
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster

OLD, NEW = "4.15.8", "4.16.0"
POOL = "worker"
NODE_NAMES = [f"pacing-{i:03d}" for i in range(200)]
WRITES = "update_status_controller_configmap_writes_total"


@pytest.fixture
def workers(kube: KubeClient, mco: MCO, update_without_nodes: datetime) -> Iterator[list[str]]:
    """A worker pool of 200 nodes on the old configuration, during an update."""
    delete_machine_objects(kube)
    for version in (OLD, NEW):
        mco.create_machineconfig(f"rendered-{POOL}-{version}", version)
    mco.create_pool(POOL, {f"node-role.kubernetes.io/{POOL}": ""}, f"rendered-{POOL}-{NEW}")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda name: mco.create_node(name, [POOL], f"rendered-{POOL}-{OLD}"), NODE_NAMES))
    yield NODE_NAMES
    delete_machine_objects(kube)


def delete_machine_objects(kube: KubeClient) -> None:
    h.delete_objects(
        kube,
        [(NODES, name) for name in NODE_NAMES]
        + [(MACHINECONFIGPOOLS, POOL)]
        + [(MACHINECONFIGS, f"rendered-{POOL}-{v}") for v in (OLD, NEW)],
    )


def published(kube: KubeClient) -> dict[str, str]:
    """Every key of the ConfigMap API: the main ConfigMap and the shards it lists."""
    data = dict(h.configmap_data(kube, h.NAMESPACE) or {})
    for name in wire.shard_names(data):
        try:
            data.update(kube.get(CONFIGMAPS, name, namespace=h.NAMESPACE).get("data") or {})
        except ApiError as exc:
            if not exc.is_not_found():
                raise
    return data


def test_node_changes_are_all_published_within_the_write_budget(
    cluster: LocalCluster, kube: KubeClient, mco: MCO, workers: list[str], tmp_path: Path
) -> None:
    pacer = WritePacer()  # the controller's defaults
    usc = h.ControllerProcess(cluster.kubeconfig, h.NAMESPACE, tmp_path / "usc.log")
    try:
        keys = [f"usc-node-{name}" for name in workers]

        def all_published() -> dict[str, str] | None:
            data = published(kube)
            return data if all(k in data for k in keys) else None

        before = h.wait_for("every node published", all_published, timeout=60)
        started = time.monotonic()
        writes_before = usc.metric(WRITES)

        def changed(wanted: list[str]) -> bool:
            data = published(kube)
            return all(data.get(k) != before[k] for k in wanted)

        for i, name in enumerate(workers):  # every node starts updating
            mco.annotate_node(name, {DESIRED_CONFIG: f"rendered-{POOL}-{NEW}", STATE: "Working"})
            if i < 30:  # the first ones a node at a time, each once published; the rest at once
                h.wait_for(f"{name}'s change published", functools.partial(changed, [keys[i]]))
        h.wait_for("every node change published", functools.partial(changed, keys), timeout=60)
        writes = usc.metric(WRITES) - writes_before
        span = time.monotonic() - started
        # Any span of `w` seconds: at most a bucket (or a layout change written in one go, every
        # ConfigMap of it at once) and `rate` a second; a second more for a sync whose writes were
        # chosen before the count began.
        configmaps = 1 + len(wire.shard_names(published(kube)))
        bound = max(pacer.burst, configmaps) + pacer.rate * (span + 1.0)
        assert 0 < writes <= bound, f"{writes:.0f} writes in {span:.1f} s, bound {bound:.1f}"
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]
