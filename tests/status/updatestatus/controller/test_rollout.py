"""A rolling update of a 3-master / 3-worker / 2-infra-node cluster, with the test playing the MCO.

At each step the node and pool insights in the ConfigMap API must say what the Machine Config
Daemon is doing; at the end `upgrade-status` against the live cluster must print what it prints
against a snapshot of the same objects.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    NODES,
    ApiError,
    KubeClient,
)
from testkit.fakes.mco import MCO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster

OLD, NEW = "4.15.8", "4.16.0"
MCO_PREFIX = "machineconfiguration.openshift.io/"
NODES_BY_POOL = {
    "master": ["master-0", "master-1", "master-2"],
    "worker": ["worker-0", "worker-1", "worker-2"],
    "infra": ["infra-0", "infra-1"],
}
POOL_OF = {node: pool for pool, nodes in NODES_BY_POOL.items() for node in nodes}
OPERATORS = ("dns", "etcd", "kube-apiserver", "machine-config", "network")


@pytest.fixture
def rollout_cluster(kube: KubeClient, mco: MCO, clusterversion_cleanup: None) -> Iterator[None]:
    _delete_machine_objects(kube)
    for pool in NODES_BY_POOL:
        for version in (OLD, NEW):
            mco.create_machineconfig(f"rendered-{pool}-{version}", version)
        mco.create_pool(pool, {f"node-role.kubernetes.io/{pool}": ""}, f"rendered-{pool}-{OLD}")
    for node, pool in POOL_OF.items():
        roles = ["master"] if pool == "master" else ["worker"] if pool == "worker" else ["worker", "infra"]
        mco.create_node(node, roles, f"rendered-{pool}-{OLD}")
    yield
    _delete_machine_objects(kube)


def _delete_machine_objects(kube: KubeClient) -> None:
    for res, names in (
        (NODES, list(POOL_OF)),
        (MACHINECONFIGPOOLS, list(NODES_BY_POOL)),
        (MACHINECONFIGS, [f"rendered-{p}-{v}" for p in NODES_BY_POOL for v in (OLD, NEW)]),
    ):
        for name in names:
            try:
                kube.delete(res, name)
            except ApiError as exc:
                if not exc.is_not_found():
                    raise


class Rollout:
    """The MCO's side of the update: pool targets, node annotations, cordons, pool status."""

    def __init__(self, kube: KubeClient, mco: MCO) -> None:
        self.kube = kube
        self.mco = mco

    def target_pools(self) -> None:
        for pool in NODES_BY_POOL:
            self.kube.patch(MACHINECONFIGPOOLS, pool, {"spec": {"configuration": {"name": f"rendered-{pool}-{NEW}"}}})
            self.pool_status(pool)

    def drain(self, node: str) -> None:
        pool = POOL_OF[node]
        self.mco.annotate_node(
            node,
            {
                MCO_PREFIX + "desiredConfig": f"rendered-{pool}-{NEW}",
                MCO_PREFIX + "state": "Working",
                MCO_PREFIX + "desiredDrain": f"drain-rendered-{pool}-{NEW}",
                MCO_PREFIX + "lastAppliedDrain": f"uncordon-rendered-{pool}-{OLD}",
            },
        )
        self.mco.set_unschedulable(node, True)

    def reboot(self, node: str) -> None:
        pool = POOL_OF[node]
        self.mco.annotate_node(
            node,
            {
                MCO_PREFIX + "state": "Rebooting",
                MCO_PREFIX + "lastAppliedDrain": f"drain-rendered-{pool}-{NEW}",
            },
        )

    def done(self, node: str) -> None:
        pool = POOL_OF[node]
        self.mco.annotate_node(
            node,
            {
                MCO_PREFIX + "currentConfig": f"rendered-{pool}-{NEW}",
                MCO_PREFIX + "state": "Done",
                MCO_PREFIX + "desiredDrain": f"uncordon-rendered-{pool}-{NEW}",
                MCO_PREFIX + "lastAppliedDrain": f"uncordon-rendered-{pool}-{NEW}",
            },
        )
        self.mco.set_unschedulable(node, False)
        self.pool_status(pool)

    def pool_status(self, pool: str) -> None:
        nodes = [self.kube.get(NODES, n) for n in NODES_BY_POOL[pool]]
        target = f"rendered-{pool}-{NEW}"
        updated = sum(1 for n in nodes if n["metadata"]["annotations"][MCO_PREFIX + "currentConfig"] == target)

        def mutate(status: dict[str, Any]) -> None:
            status.update(
                {
                    "machineCount": len(nodes),
                    "updatedMachineCount": updated,
                    "readyMachineCount": updated,
                    "unavailableMachineCount": 0,
                    "degradedMachineCount": 0,
                    "observedGeneration": 1,
                    "configuration": {"name": target},
                }
            )

        self.mco.set_pool_status(pool, mutate)


def node_reason(data: dict[str, str], node: str) -> str:
    return str(h.condition(h.insight(data, f"usc-node-{node}"), "Updating")["reason"])


def pool_assessment(data: dict[str, str], pool: str) -> str:
    return str(h.unwrap(h.insight(data, f"usc-mcp-{pool}"))["assessment"])


def test_rolling_update_step_by_step(
    cluster: LocalCluster, kube: KubeClient, mco: MCO, rollout_cluster: None, tmp_path: Path
) -> None:
    # The real namespace: `upgrade-status` reads the ConfigMap API where clients find it.
    namespace = h.NAMESPACE
    h.apply(kube, h.load_manifests())
    h.delete_configmap(kube, namespace)
    h.delete_lease(kube, namespace)
    installed = datetime.now(UTC).replace(microsecond=0) - timedelta(days=7)
    h.create_clusterversion(kube, OLD, installed)
    for name in OPERATORS:
        h.create_operator(kube, name, OLD, installed + timedelta(minutes=30))
    h.create_configmap(kube, namespace)
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "sa.kubeconfig", cluster.service_account_token(namespace, h.SERVICE_ACCOUNT)
    )
    usc = h.ControllerProcess(kubeconfig, namespace, tmp_path / "usc.log")
    rollout = Rollout(kube, mco)

    def expect(step: str, nodes: dict[str, str], pools: dict[str, str]) -> dict[str, str]:
        def check() -> dict[str, str] | None:
            data = h.configmap_data(kube, namespace) or {}
            try:
                got_nodes = {n: node_reason(data, n) for n in nodes}
                got_pools = {p: pool_assessment(data, p) for p in pools}
            except (KeyError, TypeError, AttributeError):
                return None
            return data if (got_nodes, got_pools) == (nodes, pools) else None

        try:
            data = h.wait_for(step, check)
        except AssertionError:
            data = h.configmap_data(kube, namespace) or {}
            got = {n: node_reason(data, n) for n in nodes if f"usc-node-{n}" in data}
            got_pools = {p: pool_assessment(data, p) for p in pools if f"usc-mcp-{p}" in data}
            raise AssertionError(
                f"{step}: want nodes {nodes} pools {pools}; got nodes {got}, pools {got_pools}"
            ) from None
        print(
            f"\n--- {step}: "
            + ", ".join(f"{n}={r}" for n, r in nodes.items())
            + " | "
            + ", ".join(f"{p}={a}" for p, a in pools.items())
        )
        return data

    all_nodes = list(POOL_OF)
    try:
        expect(
            "installed at 4.15.8",
            dict.fromkeys(all_nodes, "Completed"),
            dict.fromkeys(NODES_BY_POOL, "Completed"),
        )

        started = datetime.now(UTC).replace(microsecond=0)
        h.start_update(kube, NEW, started)
        for name in OPERATORS:
            h.set_operator(
                kube,
                name,
                NEW if name in ("etcd", "kube-apiserver") else OLD,
                started,
                progressing=name not in ("etcd", "kube-apiserver"),
            )
        rollout.target_pools()
        expect(
            "update started, pools targeted",
            dict.fromkeys(all_nodes, "Pending"),
            dict.fromkeys(NODES_BY_POOL, "Pending"),
        )

        rollout.drain("master-0")
        expect("master-0 draining", {"master-0": "Draining", "master-1": "Pending"}, {"master": "Progressing"})
        rollout.reboot("master-0")
        expect("master-0 rebooting", {"master-0": "Rebooting"}, {"master": "Progressing"})
        rollout.done("master-0")
        expect("master-0 updated", {"master-0": "Completed", "master-1": "Pending"}, {"master": "Progressing"})
        for node in ("master-1", "master-2"):
            rollout.drain(node)
            rollout.reboot(node)
            rollout.done(node)
        expect(
            "masters updated",
            {n: "Completed" for n in NODES_BY_POOL["master"]},
            {"master": "Completed", "worker": "Pending", "infra": "Pending"},
        )

        rollout.drain("worker-0")
        rollout.drain("infra-0")
        rollout.reboot("infra-0")
        expect(
            "workers and infra rolling",
            {"worker-0": "Draining", "worker-1": "Pending", "infra-0": "Rebooting", "infra-1": "Pending"},
            {"worker": "Progressing", "infra": "Progressing"},
        )
        # The state is still while both render: the live ConfigMap API vs a snapshot of the objects.
        live, snap = _upgrade_status_twice(cluster, _snapshot(kube, tmp_path / "snapshot"))

        # The daemon on worker-1 gives up on the drain: the node and its pool say so, with its reason.
        drain_failure = "failed to drain node: worker-1: Cannot evict pod as it would violate the disruption budget."
        rollout.drain("worker-1")
        mco.annotate_node("worker-1", {MCO_PREFIX + "state": "Degraded", MCO_PREFIX + "reason": drain_failure})
        data = expect("worker-1 degraded", {"worker-0": "Draining"}, {"worker": "Degraded"})
        degraded = h.condition(h.insight(data, "usc-node-worker-1"), "Degraded")
        assert (degraded["status"], degraded["message"]) == ("True", drain_failure)
        mco.annotate_node("worker-1", {MCO_PREFIX + "state": "Working", MCO_PREFIX + "reason": ""})
        data = expect("worker-1 recovered", {"worker-1": "Draining"}, {"worker": "Progressing"})
        assert h.condition(h.insight(data, "usc-node-worker-1"), "Degraded")["status"] == "False"

        for node in NODES_BY_POOL["worker"] + NODES_BY_POOL["infra"]:
            if node not in ("worker-0", "worker-1", "infra-0"):
                rollout.drain(node)
                rollout.reboot(node)
            rollout.done(node)
        finished = datetime.now(UTC).replace(microsecond=0)
        for name in OPERATORS:
            h.set_operator(kube, name, NEW, finished)
        h.finish_update(kube, finished)
        expect(
            "update completed",
            dict.fromkeys(all_nodes, "Completed"),
            dict.fromkeys(NODES_BY_POOL, "Completed"),
        )
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]
        h.delete_configmap(kube, namespace)
    print("\n--- upgrade-status --details=all against the live cluster, mid-update:\n" + live.stdout + live.stderr)
    assert live.returncode == 0, live.stderr
    assert snap.returncode == 0, snap.stderr
    assert live.stdout == snap.stdout


def _snapshot(kube: KubeClient, directory: Path) -> Path:
    """The live objects as an oc-style snapshot: NAME-cv.yaml, -co.yaml, -mc.yaml, -mcp.yaml, -node.yaml."""
    directory.mkdir(parents=True, exist_ok=True)
    for suffix, res in (
        ("cv", CLUSTERVERSIONS),
        ("co", CLUSTEROPERATORS),
        ("mc", MACHINECONFIGS),
        ("mcp", MACHINECONFIGPOOLS),
        ("node", NODES),
    ):
        items = kube.list(res)["items"]
        if res is NODES:
            items = [n for n in items if n["metadata"]["name"] in POOL_OF]
        for item in items:
            item.setdefault("apiVersion", res.api_version)
            item.setdefault("kind", res.kind)
        (directory / f"live-{suffix}.yaml").write_text(
            yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})
        )
    return directory / "live-cv.yaml"


def _upgrade_status_twice(
    cluster: LocalCluster, cv_path: Path
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    run = [sys.executable, "-m", "cvo_py", "upgrade-status", "--details=all"]
    # The same instant for both renderings (a snapshot's default "now" is derived from its objects).
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    live = subprocess.run(
        [*run, "--kubeconfig", cluster.kubeconfig, "--now", now], capture_output=True, text=True, check=False
    )
    snap = subprocess.run(
        [*run, "--mock-clusterversion", str(cv_path), "--now", now], capture_output=True, text=True, check=False
    )
    return live, snap
