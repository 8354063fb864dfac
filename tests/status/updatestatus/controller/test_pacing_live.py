"""The Update Status Controller's write pacing on the real API server: node changes, a node at a
time as fast as each is published and then all the others at once, are all published, with no
more ConfigMap writes than the pacer's bound over the span measured; a storm of new nodes is
published whole, and said to be partial while it is not."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import pytest

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import CONFIGMAPS, JSON, MACHINECONFIGPOOLS, MACHINECONFIGS, NODES, ApiError, KubeClient
from status.updatestatus.api import metadata, wire
from status.updatestatus.api.sharding import shard_names_allowed
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


# -- a storm of new nodes -------------------------------------------------------------------------

STORM_LABEL = "test.cvo-py/storm"
STORM_NODES = [f"storm-{i:04d}" for i in range(2000)]  # 8 node shards: every layout change on the way


@pytest.fixture
def storm_pool(kube: KubeClient, mco: MCO, update_without_nodes: datetime) -> Iterator[None]:
    """A worker pool with no nodes yet, during an update; afterwards its nodes and the shards go."""
    delete_storm(kube)
    for version in (OLD, NEW):
        mco.create_machineconfig(f"rendered-{POOL}-{version}", version)
    mco.create_pool(POOL, {f"node-role.kubernetes.io/{POOL}": ""}, f"rendered-{POOL}-{NEW}")
    yield
    delete_storm(kube)


def delete_storm(kube: KubeClient) -> None:
    kube.request("DELETE", NODES.path(), query={"labelSelector": STORM_LABEL})
    h.delete_objects(
        kube, [(MACHINECONFIGPOOLS, POOL)] + [(MACHINECONFIGS, f"rendered-{POOL}-{v}") for v in (OLD, NEW)]
    )
    for name in shard_names_allowed()[1:]:  # no garbage collector here to follow their owner
        try:
            kube.delete(CONFIGMAPS, name, namespace=h.NAMESPACE)
        except ApiError as exc:
            if not exc.is_not_found():
                raise


def test_a_storm_of_new_nodes_is_published_whole_and_said_to_be_partial_meanwhile(
    cluster: LocalCluster, kube: KubeClient, mco: MCO, storm_pool: None, tmp_path: Path
) -> None:
    """2,000 nodes created and their status written by 16 writers at once, faster than the
    controller may write (its ConfigMaps go from one to nine, a layout change that writes more
    than the bucket holds): while writes are held back the main ConfigMap says so (`paced`), and
    afterwards the published view is exactly what the insights of a fresh LIST give, no longer
    paced, stamped after the storm's last change, within the write budget."""
    pacer = WritePacer()
    usc = h.ControllerProcess(cluster.kubeconfig, h.NAMESPACE, tmp_path / "usc.log")
    seen_paced = threading.Event()

    def on_configmap(event_type: str, obj: JSON, old: JSON | None) -> None:
        value = (obj.get("data") or {}).get(metadata.META_KEY)
        if obj["metadata"]["name"] == h.CONFIGMAP and value and metadata.decode(value).paced:
            seen_paced.set()

    watch = Informer(kube, CONFIGMAPS, namespace=h.NAMESPACE)
    watch.add_handler(on_configmap)
    watch.start()
    try:
        h.wait_for("the cluster's insights published", lambda: "usc-cv-version" in h.published_at_once(kube)[0])
        started = time.monotonic()
        writes_before = usc.metric(WRITES)
        last_sent = [0]

        def new_node(name: str) -> None:
            last_sent[0] = max(last_sent[0], time.time_ns())  # before the request: the change is later
            mco.create_node(name, [POOL], f"rendered-{POOL}-{OLD}", labels={STORM_LABEL: ""})

        with ThreadPoolExecutor(16) as writers:
            list(writers.map(new_node, STORM_NODES))

        def whole() -> tuple[dict[str, str], metadata.PublicationMetadata] | None:
            data, meta = h.published_at_once(kube)
            if meta is None or meta.paced or not all(f"usc-node-{n}" in data for n in STORM_NODES):
                return None
            return (data, meta) if data == h.insights_of_a_fresh_list(kube, meta.computed_at, data) else None

        data, meta = h.wait_for("the whole storm published", whole, timeout=180, interval=0.5)
        span = time.monotonic() - started
        writes = usc.metric(WRITES) - writes_before
        configmaps = 1 + len(wire.shard_names(h.configmap_data(kube, h.NAMESPACE) or {}))
        assert configmaps >= 5, configmaps  # the storm changed the layout beyond the bucket
        assert seen_paced.is_set(), "the main ConfigMap never said that writes were held back"
        assert meta.computed_at >= last_sent[0]
        # As in the test above: a bucket (or the largest layout change) and `rate` a second.
        bound = max(pacer.burst, configmaps) + pacer.rate * (span + 1.0)
        assert 0 < writes <= bound, f"{writes:.0f} writes in {span:.1f} s, bound {bound:.1f}"
        out = h.upgrade_status(cluster.kubeconfig, "--source", "controller")
        assert "warning:" not in out and f"0% (0/{len(STORM_NODES)})" in out, out[:3000]
    finally:
        watch.stop()
        assert usc.stop() == 0, usc.log()[-3000:]
