"""A synthetic cluster of N nodes in P pools, mid-update: the input of the insight benchmarks and scale tests."""

from __future__ import annotations

from typing import Any

OLD, NEW = "4.14.0", "4.14.1"
MCO = "machineconfiguration.openshift.io/"


def synthetic_cluster(
    n_nodes: int, n_pools: int
) -> tuple[dict[str, Any], list[Any], list[Any], dict[str, str]]:
    cv = {
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "status": {
            "desired": {"version": NEW},
            "history": [
                {
                    "state": "Partial",
                    "version": NEW,
                    "image": "img-new",
                    "startedTime": "2024-01-01T10:00:00Z",
                },
                {
                    "state": "Completed",
                    "version": OLD,
                    "image": "img-old",
                    "startedTime": "2023-12-01T10:00:00Z",
                    "completionTime": "2023-12-01T11:00:00Z",
                },
            ],
            "conditions": [
                {"type": "Progressing", "status": "True", "lastTransitionTime": "2024-01-01T10:00:00Z"},
                {"type": "Failing", "status": "False", "lastTransitionTime": "2024-01-01T10:00:00Z"},
            ],
        },
    }
    pools = [_pool("master", "node-role.kubernetes.io/master")]
    pools += [_pool(f"worker-{i}" if i else "worker", f"pool-{i}") for i in range(n_pools - 1)]
    versions = {}
    for p in pools:
        name = p["metadata"]["name"]
        versions[f"rendered-{name}-old"] = OLD
        versions[f"rendered-{name}-new"] = NEW
    nodes = []
    for i in range(n_nodes):
        pool = pools[0] if i < 3 else pools[1 + i % (len(pools) - 1)]
        nodes.append(_node(i, pool))
    return cv, nodes, pools, versions


def _pool(name: str, label: str) -> dict[str, Any]:
    return {
        "kind": "MachineConfigPool",
        "metadata": {"name": name},
        "spec": {
            "nodeSelector": {"matchLabels": {label: ""}},
            "configuration": {"name": f"rendered-{name}-new"},
            "paused": False,
        },
    }


def _node(i: int, pool: dict[str, Any]) -> dict[str, Any]:
    pool_name = pool["metadata"]["name"]
    label = next(iter(pool["spec"]["nodeSelector"]["matchLabels"]))
    kind = i % 10
    current = f"rendered-{pool_name}-new" if kind < 4 else f"rendered-{pool_name}-old"
    desired = f"rendered-{pool_name}-new" if kind < 7 else current
    state = {4: "Working", 5: "Rebooting", 6: "Working", 9: "Degraded"}.get(kind, "Done")
    drain = f"drain-{desired}" if kind == 6 else f"uncordon-{current}"
    ready = "False" if kind == 8 else "True"
    return {
        "kind": "Node",
        "metadata": {
            "name": f"ip-10-0-{i // 250}-{i % 250}.us-east-2.compute.internal",
            "labels": {label: "", "kubernetes.io/os": "linux"},
            "annotations": {
                MCO + "currentConfig": current,
                MCO + "desiredConfig": desired,
                MCO + "state": state,
                MCO + "reason": "failed to drain node" if kind == 9 else "",
                MCO + "desiredDrain": drain,
                MCO + "lastAppliedDrain": f"uncordon-{current}",
            },
        },
        "spec": {"unschedulable": kind == 6},
        "status": {
            "conditions": [
                {"type": "DiskPressure", "status": "False", "lastTransitionTime": "2024-01-01T09:00:00Z"},
                {
                    "type": "Ready",
                    "status": ready,
                    "message": "kubelet stopped posting",
                    "lastTransitionTime": "2024-01-01T10:20:00Z",
                },
            ]
        },
    }
