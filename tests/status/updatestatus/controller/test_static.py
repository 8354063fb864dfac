"""A cluster in which nothing changes gets no insight rewritten, however often the controller
resyncs: only the metadata key's `computedAt` is refreshed, at most once per resync.

The state is chosen so that the values oc computes at "now" would differ on every resync: an
update in progress (oc's estimated completion moves with the clock), a ClusterVersion without a
`Failing` condition (oc dates that health insight "now") and a node being updated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cvo_py.runtime.kube import CLUSTERVERSIONS, CONFIGMAPS, MACHINECONFIGPOOLS, MACHINECONFIGS, NODES, KubeClient
from status.updatestatus.api import metadata
from status.updatestatus.api.metadata import META_KEY
from testkit.fakes.mco import MCO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster

OLD, NEW = "4.15.8", "4.16.0"
MCO_PREFIX = "machineconfiguration.openshift.io/"
POOL, NODE = "static", "static-node-0"
MACHINECONFIGS_BY_VERSION = {OLD: f"rendered-{POOL}-{OLD}", NEW: f"rendered-{POOL}-{NEW}"}
SYNC = re.compile(r"Computed \d+ insights")
WRITE = re.compile(r"Patched ConfigMap \S+: \d+ insights written")


@pytest.fixture
def static_cluster(kube: KubeClient, mco: MCO, clusterversion_cleanup: None) -> Iterator[None]:
    _delete_machine_objects(kube)
    for version, name in MACHINECONFIGS_BY_VERSION.items():
        mco.create_machineconfig(name, version)
    mco.create_pool(POOL, {f"node-role.kubernetes.io/{POOL}": ""}, MACHINECONFIGS_BY_VERSION[NEW])
    mco.create_node(NODE, [POOL], MACHINECONFIGS_BY_VERSION[OLD])
    mco.annotate_node(
        NODE, {MCO_PREFIX + "desiredConfig": MACHINECONFIGS_BY_VERSION[NEW], MCO_PREFIX + "state": "Working"}
    )
    yield
    _delete_machine_objects(kube)


def _delete_machine_objects(kube: KubeClient) -> None:
    objects = [(NODES, NODE), (MACHINECONFIGPOOLS, POOL)]
    objects += [(MACHINECONFIGS, name) for name in MACHINECONFIGS_BY_VERSION.values()]
    h.delete_objects(kube, objects)


def test_resyncs_of_an_unchanged_cluster_write_nothing(
    cluster: LocalCluster, kube: KubeClient, static_cluster: None, tmp_path: Path
) -> None:
    manifests = h.load_manifests()
    h.apply(kube, manifests)
    h.delete_configmap(kube, h.NAMESPACE)
    h.delete_lease(kube, h.NAMESPACE)
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "sa.kubeconfig", cluster.service_account_token(h.NAMESPACE, h.SERVICE_ACCOUNT)
    )
    started = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)
    h.create_clusterversion(kube, OLD, started - timedelta(days=3))
    h.start_update(kube, NEW, started)
    h.update_status(
        kube,
        CLUSTERVERSIONS,
        "version",
        lambda s: s.update(conditions=[c for c in s["conditions"] if c["type"] != "Failing"]),
    )
    h.create_operator(kube, "dns", NEW, started + timedelta(minutes=8))
    h.create_operator(kube, "etcd", OLD, started, progressing=True)
    h.create_operator(kube, "machine-config", OLD, started + timedelta(minutes=1), progressing=True)
    h.create_configmap(kube, h.NAMESPACE)

    usc = h.ControllerProcess(kubeconfig, h.NAMESPACE, tmp_path / "usc.log", "--resync", "1", "-v", "4")
    try:
        data = h.wait_for(
            "the insights of the update, the missing Failing condition and the node",
            lambda: _published(kube),
        )
        cv = h.unwrap(h.insight(data, "usc-cv-version"))
        assert cv["assessment"] == "Progressing" and "estimatedCompletedAt" in cv
        failing = h.unwrap(h.insight(data, "usc-health-cv-version-failing"))
        assert "startedAt" not in failing, "no start of its own: clients show it as 'now'"
        assert h.condition(h.insight(data, f"usc-node-{NODE}"), "Updating")["status"] == "True"

        # Everything is published: from here on, resyncs rewrite no insight key; only the metadata
        # key's `computedAt` is refreshed, at most once per resync.
        published = len(SYNC.findall(usc.log()))
        h.wait_for("a resync after the first write", lambda: len(SYNC.findall(usc.log())) >= published + 2)
        before = kube.get(CONFIGMAPS, h.CONFIGMAP, h.NAMESPACE)
        start = len(usc.log())
        h.wait_for("four more resyncs", lambda: len(SYNC.findall(usc.log()[start:])) >= 4)
        after = kube.get(CONFIGMAPS, h.CONFIGMAP, h.NAMESPACE)
        # Syncs and writes counted in one stretch of the log, from a sync up to (not including) the
        # last one seen, so every write counted follows its own sync (a machine short of CPU may
        # delay either; counting them at different moments would not compare like with like).
        stretch = usc.log()[start:]
        syncs = [m.start() for m in SYNC.finditer(stretch)]
        window = stretch[syncs[0] : syncs[-1]]
        resyncs = len(SYNC.findall(window))
        more = len(WRITE.findall(window))
        print(f"\n{resyncs} resyncs after the first write; {more} writes (metadata only)")

        assert 1 <= more <= resyncs, "the metadata is refreshed, at most once per resync"
        insights_before = {k: v for k, v in before["data"].items() if k != META_KEY}
        insights_after = {k: v for k, v in after["data"].items() if k != META_KEY}
        assert insights_after == insights_before, "no insight key is rewritten"
        refreshed = metadata.decode(after["data"][META_KEY]).computed_at
        assert refreshed > metadata.decode(before["data"][META_KEY]).computed_at
    finally:
        usc.stop()
        h.delete_configmap(kube, h.NAMESPACE)
        h.delete_lease(kube, h.NAMESPACE)


def _published(kube: KubeClient) -> dict[str, str] | None:
    data = h.configmap_data(kube, h.NAMESPACE) or {}
    keys = ("usc-cv-version", "usc-health-cv-version-failing", f"usc-node-{NODE}", "usc-co-machine-config")
    return data if all(k in data for k in keys) else None
