"""Large clusters from an oc example (copies of its nodes), as a snapshot, a must-gather archive
and the ConfigMap API on the local API server, for scale tests and benchmarks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cvo_py import __version__
from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.kube import CONFIGMAPS, ApiError, KubeClient
from status.updatestatus.api import configmap, metadata
from status.updatestatus.client import snapshot
from status.updatestatus.insights.kinds import InsightShape
from testkit.checkout import EXAMPLES as EXAMPLES  # re-exported: where the examples are read from
from testkit.harness import cluster as local
from testkit.objects import dumps as conv
from testkit.objects.insight_objects import write_snapshot

EXAMPLE = "4.14.1-workers-started-updating-multiple-pools"
MCO = "machineconfiguration.openshift.io/"


def example_at_scale(nodes: int, name: str = EXAMPLE, degraded_every: int = 7) -> snapshot.Snapshot:
    """The example with `nodes` nodes, every list in name order (as the API server lists).

    Every `degraded_every`-th node (0: none) is degraded as the Machine Config Daemon reports it,
    so hundreds of health insights of equal level and start time are ordered as oc orders them.
    """
    snap = conv.by_name(conv.scaled(snapshot.load(EXAMPLES / f"{name}-cv.yaml"), nodes))
    for i, node in enumerate(snap.nodes):
        if degraded_every and i % degraded_every == 0:
            annotations = node["metadata"].setdefault("annotations", {})
            annotations[MCO + "state"] = "Degraded"
            annotations[MCO + "reason"] = f"failed to drain node {node['metadata']['name']}: PodDisruptionBudget"
    return snap


def write_as_snapshot(
    snap: snapshot.Snapshot, directory: Path, name: str = "scaled", *, as_json: bool = False
) -> Path:
    """oc-style snapshot files of these objects (YAML, or JSON as some of oc's are); returns the
    NAME-cv.yaml path."""

    def as_list(items: list[snapshot.JSON]) -> snapshot.JSON:
        return {"apiVersion": "v1", "kind": "List", "items": items}

    directory.mkdir(parents=True, exist_ok=True)
    files: dict[str, Any] = {
        "-cv.yaml": snap.clusterversion,
        "-co.yaml": as_list(snap.operators),
        "-mc.yaml": as_list(snap.machineconfigs),
        "-mcp.yaml": as_list(snap.pools),
        "-node.yaml": as_list(snap.nodes),
    }
    return write_snapshot(directory, name, as_json, **files)


def write_must_gather(snap: snapshot.Snapshot, path: Path, gathered_at: int) -> Path:
    path.write_bytes(conv.tar_bytes(conv.must_gather_files(snap, gathered_at), prefix="must-gather.local.1/"))
    return path


def publish(kube: KubeClient, insights: Sequence[InsightShape], computed_at: int) -> int:
    """Put these insights in the ConfigMap API as the controller lays them out (main ConfigMap and
    node shards, and the publication metadata saying they were computed at `computed_at`);
    returns the number of ConfigMaps."""
    local.ensure_namespace(kube, configmap.NAMESPACE)
    plan = configmap.plan(configmap.encode(insights), node_health=configmap.node_health_keys(insights))
    assert plan.ok, plan.problems
    for name in configmap.shard_names_allowed():
        try:
            kube.delete(CONFIGMAPS, name, namespace=configmap.NAMESPACE)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
    meta = metadata.encode(metadata.build(computed_at, "scale-test", __version__, 30 * SECOND, []))
    for name, data in plan.configmaps.items():
        if name == configmap.CONFIGMAP:
            data = {**data, metadata.META_KEY: meta}
        kube.create(CONFIGMAPS, {"metadata": {"name": name, "namespace": configmap.NAMESPACE}, "data": data})
    return len(plan.configmaps)

