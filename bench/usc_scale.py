"""The Update Status Controller at scale on the real local API server: 5,000 nodes in 20 pools.

Measures, with the controller running as a subprocess authenticated as its ServiceAccount:
- time from process start to the first complete publish (every node and pool key present);
- one node's change → its key updated (seen through a watch), p50/p99, the changes a trickle
  (`--interval` seconds apart, each once published: the controller writes at most `rate` ConfigMaps
  a second, so changes coming faster wait their turn);
- peak RSS of the controller;
- ConfigMap writes per second while 1,000 node changes arrive as fast as the server takes them,
  and the time until all of them are reflected; the most writes seen in any second (each write
  is one event of the watch on the ConfigMaps);
- the largest ConfigMap size.

Targets: first publish < 10 s, node change p99 < 250 ms, at most 5 ConfigMap writes a second
during the burst (the controller paces all its writes, see status/updatestatus/controller/pacing.py), peak
RSS < 300 MB.

    CVO_PY_CLUSTER_DIR=.local-cluster-usc .venv/bin/python bench/usc_scale.py [--nodes 5000 --pools 20]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import (
    CLUSTERVERSIONS,
    CONFIGMAPS,
    JSON,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    NODES,
    ApiError,
    KubeClient,
)
from status.updatestatus.api.configmap import data_size
from status.updatestatus.controller.pacing import WritePacer
from testkit.checkout import REPO
from testkit.harness import cluster as local
from testkit.harness import usc as h

LABEL = "bench.cvo-py/usc-scale"
MCO = "machineconfiguration.openshift.io/"
OLD, NEW = "4.15.8", "4.16.0"


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))]


def pool_names(count: int) -> list[str]:
    return ["master", "worker"] + [f"pool-{i:02d}" for i in range(count - 2)]


def node_body(name: str, pool: str, config: str, stamp: str) -> JSON:
    labels = {LABEL: "", "kubernetes.io/hostname": name}
    if pool == "master":
        labels["node-role.kubernetes.io/master"] = ""
    else:
        labels["node-role.kubernetes.io/worker"] = ""
        if pool != "worker":
            labels[f"node-role.kubernetes.io/{pool}"] = ""
    return {
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {
                MCO + "currentConfig": config,
                MCO + "desiredConfig": config,
                MCO + "state": "Done",
                MCO + "reason": "",
            },
        },
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastTransitionTime": stamp,
                    "lastHeartbeatTime": stamp,
                },
            ]
        },
    }


def setup(kube: KubeClient, nodes: int, pools: int, namespace: str) -> dict[str, str]:
    """Create the cluster; returns node name → pool."""
    local.delete_all_cluster_scoped_update_objects(kube)
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, OLD, now - timedelta(days=1))
    for i in range(30):
        h.create_operator(kube, f"operator-{i:02d}", NEW if i < 20 else OLD, now, progressing=i == 20)
    h.start_update(kube, NEW, now - timedelta(minutes=20))
    names = pool_names(pools)
    for pool in names:
        for version in (OLD, NEW):
            kube.create(
                MACHINECONFIGS,
                {
                    "metadata": {
                        "name": f"rendered-{pool}-{version}",
                        "labels": {LABEL: ""},
                        "annotations": {MCO + "release-image-version": version},
                    },
                    "spec": {"config": {"ignition": {"version": "3.4.0"}}},
                },
            )
        selector = {f"node-role.kubernetes.io/{pool}": ""}
        kube.create(
            MACHINECONFIGPOOLS,
            {
                "metadata": {"name": pool, "labels": {LABEL: ""}},
                "spec": {
                    "nodeSelector": {"matchLabels": selector},
                    "paused": False,
                    "configuration": {"name": f"rendered-{pool}-{NEW}"},
                },
            },
        )
    assignment: dict[str, str] = {}
    for i in range(nodes):
        pool = "master" if i < 3 else names[1 + (i % (len(names) - 1))]
        assignment[f"node-{i:05d}"] = pool
    stamp = h.ts(now - timedelta(days=1))
    # A third of the nodes already run the target, as midway through an update.
    with ThreadPoolExecutor(16) as pool_exec:
        list(
            pool_exec.map(
                lambda item: kube.create(
                    NODES,
                    node_body(
                        item[0],
                        item[1],
                        f"rendered-{item[1]}-{NEW if hash(item[0]) % 3 == 0 else OLD}",
                        stamp,
                    ),
                ),
                assignment.items(),
            )
        )
    return assignment


def cleanup(kube: KubeClient) -> None:
    for res in (NODES, MACHINECONFIGPOOLS, MACHINECONFIGS):
        try:
            kube.request("DELETE", res.path(), query={"labelSelector": LABEL})
        except ApiError as exc:
            print(f"cleanup of {res}: {exc}", file=sys.stderr)
    local.delete_all_cluster_scoped_update_objects(kube)


class Published:
    """All ConfigMaps of the API in the namespace (the main one and any shards), via one watch."""

    def __init__(self, kube: KubeClient, namespace: str) -> None:
        self.cond = threading.Condition()
        self.maps: dict[str, dict[str, str]] = {}
        self.writes: list[float] = []  # when each write was seen (perf_counter)
        self.informer = Informer(kube, CONFIGMAPS, namespace=namespace)
        self.informer.add_handler(self._on)
        self.informer.start()

    def _on(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        name = obj["metadata"]["name"]
        if not name.startswith(h.CONFIGMAP):
            return
        with self.cond:
            if event_type in ("ADDED", "MODIFIED"):
                self.writes.append(time.perf_counter())
            if event_type == "DELETED":
                self.maps.pop(name, None)
            else:
                self.maps[name] = dict(obj.get("data") or {})
            self.cond.notify_all()

    def keys(self) -> dict[str, str]:
        merged: dict[str, str] = {}
        for data in self.maps.values():
            merged.update(data)
        return merged

    def wait(self, check: object, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(check, timeout)  # type: ignore[arg-type]


def rss_peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pools", type=int, default=20)
    parser.add_argument("--changes", type=int, default=100, help="single node changes timed (default 100)")
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument(
        "--interval", type=float, default=0.5, help="seconds between the single node changes timed (default 0.5)"
    )
    args = parser.parse_args()

    print(f"{datetime.now().isoformat(timespec='seconds')}, load average {os.getloadavg()[0]:.1f}")
    cluster = local.start()
    kube = cluster.client
    namespace = f"bench-scale-{uuid.uuid4().hex[:6]}"
    docs = h.render(h.load_manifests(), namespace)
    h.apply(kube, docs)
    cleanup(kube)
    started = time.perf_counter()
    assignment = setup(kube, args.nodes, args.pools, namespace)
    print(
        f"created {args.nodes} nodes in {args.pools} pools, 30 ClusterOperators, "
        f"{2 * args.pools} MachineConfigs in {time.perf_counter() - started:.1f}s"
    )
    h.create_configmap(kube, namespace)
    published = Published(kube, namespace)
    tmp = Path(tempfile.mkdtemp(prefix="usc-scale-"))
    kubeconfig = cluster.write_kubeconfig(
        tmp / "sa.kubeconfig", cluster.service_account_token(namespace, h.SERVICE_ACCOUNT)
    )
    want_nodes = {f"usc-node-{n}" for n in assignment}
    want_pools = {f"usc-mcp-{p}" for p in pool_names(args.pools)}
    t0 = time.perf_counter()
    usc = h.ControllerProcess(kubeconfig, namespace, tmp / "usc.log")
    try:
        if not published.wait(lambda: want_nodes | want_pools <= set(published.keys()), timeout=120):
            missing = (want_nodes | want_pools) - set(published.keys())
            raise SystemExit(
                f"first publish incomplete after 120s: {len(missing)} keys missing "
                f"(e.g. {sorted(missing)[:3]}); log:\n{usc.log()[-2000:]}"
            )
        first_publish = time.perf_counter() - t0
        writes_initial = usc.metric("update_status_controller_configmap_writes_total")
        # The first publish writes every ConfigMap at once; the writes after it wait that out.
        time.sleep(writes_initial / WritePacer().rate)

        # One node at a time: it starts updating (desiredConfig → the target, MCD Working).
        latencies: list[float] = []
        rng = random.Random(42)
        candidates = [n for n, p in assignment.items() if p != "master"]
        for i in range(args.changes):
            name = rng.choice(candidates)
            candidates.remove(name)
            pool = assignment[name]
            before = published.keys().get(f"usc-node-{name}")
            t = time.perf_counter()
            kube.patch(
                NODES,
                name,
                {
                    "metadata": {
                        "annotations": {
                            MCO + "desiredConfig": f"rendered-{pool}-{NEW}",
                            MCO + "state": "Working",
                        }
                    }
                },
            )
            key = f"usc-node-{name}"
            if not published.wait(lambda k=key, b=before: published.keys().get(k) != b, timeout=10):
                raise SystemExit(f"change {i}: {key} never changed")
            latencies.append((time.perf_counter() - t) * 1000)
            time.sleep(args.interval)

        # A burst: 1,000 nodes change at once (16 writers, as fast as the API server accepts).
        burst_nodes = rng.sample(candidates, min(args.burst, len(candidates)))
        befores = {n: published.keys().get(f"usc-node-{n}") for n in burst_nodes}
        writes_before = usc.metric("update_status_controller_configmap_writes_total")
        t = time.perf_counter()

        def change(name: str) -> None:
            kube.patch(
                NODES,
                name,
                {
                    "metadata": {
                        "annotations": {
                            MCO + "desiredConfig": f"rendered-{assignment[name]}-{NEW}",
                            MCO + "state": "Working",
                        }
                    }
                },
            )

        with ThreadPoolExecutor(16) as pool_exec:
            list(pool_exec.map(change, burst_nodes))
        sent = time.perf_counter() - t

        def all_reflected() -> bool:
            keys = published.keys()
            return all(keys.get(f"usc-node-{n}") != b for n, b in befores.items())

        if not published.wait(all_reflected, timeout=60):
            raise SystemExit("the burst was never fully reflected")
        reflected = time.perf_counter() - t
        burst_writes = usc.metric("update_status_controller_configmap_writes_total") - writes_before
        burst_seen = [w - t for w in published.writes if w >= t]
        peak = rss_peak_mb(usc.proc.pid)
        metrics = usc.metrics()
        load = os.getloadavg()[0]
        sizes = {name: data_size(data) for name, data in published.maps.items()}
        omitted = usc.metric("update_status_controller_insights_omitted")
    finally:
        usc.stop()
        published.informer.stop()
        cleanup(kube)
        h.delete(kube, [d for d in docs if d["kind"].startswith("Cluster")])
        for name in list(published.maps):
            try:
                kube.delete(CONFIGMAPS, name, namespace)
            except ApiError:
                pass
        for res, name in ((CLUSTERVERSIONS, "version"),):
            try:
                kube.delete(res, name)
            except ApiError:
                pass

    print(
        f"Update Status Controller at scale: {args.nodes} nodes, {args.pools} pools "
        "(controller as its ServiceAccount, real kube-apiserver)"
    )
    print(
        f"  first complete publish: {first_publish:.2f} s from process start "
        f"({writes_initial:.0f} writes) — target < 10 s: {'met' if first_publish < 10 else 'NOT met'}"
    )
    print(
        f"  one node change -> its key updated ({len(latencies)} changes, {args.interval} s apart): "
        f"p50 {percentile(latencies, 50):.1f} ms  p90 {percentile(latencies, 90):.1f} ms  "
        f"p99 {percentile(latencies, 99):.1f} ms  "
        f"max {max(latencies):.1f} ms — target p99 < 250 ms: "
        f"{'met' if percentile(latencies, 99) < 250 else 'NOT met'}"
    )
    print(
        f"  burst of {len(burst_nodes)} node changes: sent in {sent:.2f} s, "
        f"all reflected after {reflected:.2f} s, "
        f"{burst_writes:.0f} ConfigMap writes ({burst_writes / reflected:.1f} writes/s) — target <= 5 writes/s: "
        f"{'met' if burst_writes / reflected <= 5 else 'NOT met'}"
    )
    print("  controller's own sync (recompute + encode + shard + patch) and reaction (event -> patched):")
    print(f"    sync:     {h.histogram_summary(metrics, 'update_status_controller_sync_seconds')}")
    print(f"    reaction: {h.histogram_summary(metrics, 'update_status_controller_reaction_seconds')}")
    print(f"    most writes seen in any second of it: {h.most_in_any_window(burst_seen, 1.0)}")
    print(f"  load average at the end: {load:.1f} on {os.cpu_count()} CPUs (a shared machine)")
    print(
        f"  peak RSS of the controller: {peak:.0f} MB — target < 300 MB: {'met' if peak < 300 else 'NOT met'}"
    )
    for name, size in sorted(sizes.items()):
        print(f"  ConfigMap {name}: {size} bytes ({size / 1048576 * 100:.0f}% of the 1 MiB limit)")
    print(f"  insights omitted for size: {omitted:.0f}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("CVO_PY_CLUSTER_DIR", str(REPO / ".local-cluster"))
    raise SystemExit(main())
