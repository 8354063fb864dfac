"""A small OpenShift cluster's objects and their rollout: release ClusterOperators, pools master /
worker / infra with seven Nodes and their rendered MachineConfigs, moved node by node as the
Machine Config Operator and its daemons would (see `mco.MCO`)."""

from __future__ import annotations

from datetime import UTC, datetime

from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    NODES,
    ApiError,
    KubeClient,
    Resource,
)
from testkit.fakes.mco import DESIRED_DRAIN, LAST_APPLIED_DRAIN, MCO, RELEASE_IMAGE_VERSION
from testkit.harness import usc

OPERATORS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "openshift-apiserver",
             "authentication", "network", "machine-config")  # fmt: skip
POOLS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {  # pool → (nodes, roles)
    "master": (("master-0", "master-1", "master-2"), ("master", "control-plane")),
    "worker": (("worker-0", "worker-1", "worker-2"), ("worker",)),
    "infra": (("infra-0",), ("worker", "infra")),
}
POOL_OF = {node: pool for pool, (nodes, _) in POOLS.items() for node in nodes}
NODE_STEPS = ("drain", "update", "reboot", "done")


def rendered(pool: str, version: str) -> str:
    return f"rendered-{pool}-{version.replace('.', '')}"


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def create(kube: KubeClient, old: str, new: str) -> list[str]:
    """The operators at `old`, every pool on its `old` config (MachineConfigs of `old` and `new`
    exist); returns one line per object group, for the reader."""
    for name in OPERATORS:
        usc.create_operator(kube, name, old, now())
    said = [f"{len(OPERATORS)} ClusterOperators at {old}: {', '.join(OPERATORS)}"]
    mco = MCO(kube)
    for pool, (nodes, roles) in POOLS.items():
        for version in (old, new):
            kube.create(MACHINECONFIGS, {"metadata": {
                "name": rendered(pool, version), "annotations": {RELEASE_IMAGE_VERSION: version},
                "labels": {"machineconfiguration.openshift.io/role": pool}},
                "spec": {"config": {"ignition": {"version": "3.4.0"}}}})  # fmt: skip
        mco.create_pool(pool, {f"node-role.kubernetes.io/{pool}": ""}, rendered(pool, old))
        for node in nodes:
            mco.create_node(node, list(roles), rendered(pool, old))
            uncordoned = f"uncordon-{rendered(pool, old)}"
            mco.annotate_node(node, {DESIRED_DRAIN: uncordoned, LAST_APPLIED_DRAIN: uncordoned})
        mco.sync_pool(pool, list(nodes))
        said.append(f"pool {pool}: {len(nodes)} node(s) {', '.join(nodes)} on {rendered(pool, old)} "
                    f"(MachineConfig with release-image-version {old})")  # fmt: skip
    return said


def set_operators(kube: KubeClient, names: tuple[str, ...], version: str, progressing: bool = False) -> None:
    for name in names:
        usc.set_operator(kube, name, version, now(), progressing)


def target(kube: KubeClient, version: str) -> None:
    """The MCO renders `version`'s configs: every pool's target changes."""
    for pool in POOLS:
        kube.patch(MACHINECONFIGPOOLS, pool, {"spec": {"configuration": {"name": rendered(pool, version)}}})


def roll(kube: KubeClient, old: str, new: str, *steps: str, sync: tuple[str, ...] = ()) -> None:
    """Daemon steps "node:step" (a bare "node": all of NODE_STEPS), then the `sync` pools' status."""
    mco = MCO(kube)
    for item in steps:
        node, _, step = item.partition(":")
        pool = POOL_OF[node]
        for one in [step] if step else NODE_STEPS:
            mco.node_step(node, one, rendered(pool, old), rendered(pool, new))
    for pool in sync:
        mco.sync_pool(pool, list(POOLS[pool][0]))


def reset(kube: KubeClient, versions: tuple[str, ...]) -> None:
    """Delete every ClusterVersion and ClusterOperator (others would change what is reported), the
    pools, nodes and MachineConfigs of `versions`."""

    def delete(res: Resource, name: str) -> None:
        try:
            kube.delete(res, name)
        except ApiError as exc:
            if not exc.is_not_found():
                raise

    for res in (CLUSTERVERSIONS, CLUSTEROPERATORS):
        for item in kube.list(res).get("items") or []:
            delete(res, item["metadata"]["name"])
    for pool in POOLS:
        delete(MACHINECONFIGPOOLS, pool)
        for version in versions:
            delete(MACHINECONFIGS, rendered(pool, version))
    for node in POOL_OF:
        delete(NODES, node)
