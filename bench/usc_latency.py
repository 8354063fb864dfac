"""Reaction latency of the Update Status Controller on the real local API server.

An administrator's opt-in (creating the ConfigMap while the controller runs) → the insights in it;
then a ClusterVersion change (an update starting or completing) → the `usc-cv-version` key of the
ConfigMap API reflecting it, both observed through a watch. The controller runs as a subprocess
authenticated as its ServiceAccount, as in its pod. Targets: opt-in < 1 s; p99 < 250 ms.

    CVO_PY_CLUSTER_DIR=.local-cluster-usc .venv/bin/python bench/usc_latency.py [--iterations 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import CLUSTEROPERATORS, CLUSTERVERSIONS, CONFIGMAPS, JSON, ApiError
from testkit.checkout import REPO
from testkit.harness import cluster as local
from testkit.harness import usc as h


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def updating_status(data: dict[str, str]) -> str | None:
    value = data.get("usc-cv-version")
    if value is None:
        return None
    try:
        return str(h.condition(yaml.safe_load(value), "Updating")["status"])
    except KeyError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--operators", type=int, default=30, help="ClusterOperators present (default 30)")
    parser.add_argument("--opt-ins", type=int, default=5, help="ConfigMap delete/create rounds (default 5)")
    args = parser.parse_args()

    cluster = local.start()
    kube = cluster.client
    namespace = f"bench-usc-{uuid.uuid4().hex[:6]}"
    docs = h.render(h.load_manifests(), namespace)
    h.apply(kube, docs)
    local.delete_all_cluster_scoped_update_objects(kube)
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, "4.15.8", now - timedelta(days=1))
    for i in range(args.operators):
        h.create_operator(kube, f"operator-{i:02d}", "4.15.8", now)
    h.start_update(kube, "4.16.0", now)

    seen = threading.Condition()
    latest: dict[str, str | None] = {"status": None}

    def on_configmap(event_type: str, obj: JSON, old: JSON | None) -> None:
        with seen:
            latest["status"] = updating_status(obj.get("data") or {})
            latest["at"] = str(time.perf_counter())
            seen.notify_all()

    watcher = Informer(kube, CONFIGMAPS, namespace=namespace, field_selector=f"metadata.name={h.CONFIGMAP}")
    watcher.add_handler(on_configmap)
    watcher.start()

    tmp = Path(tempfile.mkdtemp(prefix="usc-latency-"))
    kubeconfig = cluster.write_kubeconfig(
        tmp / "sa.kubeconfig", cluster.service_account_token(namespace, h.SERVICE_ACCOUNT)
    )
    usc = h.ControllerProcess(kubeconfig, namespace, tmp / "usc.log")
    latencies: list[float] = []
    opt_ins: list[float] = []
    try:
        for round_ in range(args.opt_ins):
            # The controller is running and synced, with no ConfigMap to publish into.
            usc.wait_for_log("does not exist: nothing to publish", timeout=30)
            if round_:
                time.sleep(0.5)  # let it settle after noticing the deletion
            started = time.perf_counter()
            h.create_configmap(kube, namespace)
            with seen:
                if not seen.wait_for(lambda: latest["status"] == "True", timeout=30):
                    raise SystemExit(f"the controller never published; log:\n{usc.log()[-2000:]}")
                opt_ins.append(float(latest["at"] or 0) - started)
            if round_ < args.opt_ins - 1:
                with seen:
                    latest["status"] = None
                kube.delete(CONFIGMAPS, h.CONFIGMAP, namespace)
                usc.wait_for_log(rf"(does not exist: nothing to publish[\s\S]*){{{round_ + 2}}}", timeout=30)
        cv = kube.get(CLUSTERVERSIONS, "version")
        for i in range(args.iterations):
            completing = i % 2 == 0  # alternate: the update completes, then starts again
            history = cv["status"]["history"][0]
            history["state"] = "Completed" if completing else "Partial"
            history["completionTime"] = h.ts(now + timedelta(minutes=40)) if completing else None
            for cond in cv["status"]["conditions"]:
                if cond["type"] == "Progressing":
                    cond["status"] = "False" if completing else "True"
            want = "False" if completing else "True"
            started = time.perf_counter()
            cv = kube.replace_status(CLUSTERVERSIONS, cv)
            with seen:
                if not seen.wait_for(lambda w=want: latest["status"] == w, timeout=10):  # type: ignore[misc]
                    raise SystemExit(f"iteration {i}: the ConfigMap never showed Updating={want}")
                latencies.append(float(latest["at"] or 0) - started)
        reaction = h.histogram_summary(usc.metrics(), "update_status_controller_reaction_seconds")
        writes = usc.metric("update_status_controller_configmap_writes_total")
    finally:
        usc.stop()
        watcher.stop()
        h.delete(kube, [d for d in docs if d["kind"].startswith("Cluster")])
        for name in [f"operator-{i:02d}" for i in range(args.operators)]:
            try:
                kube.delete(CLUSTEROPERATORS, name)
            except ApiError:
                pass
        kube.delete(CLUSTERVERSIONS, "version")

    ms = [x * 1000 for x in latencies]
    opt_in_ms = [x * 1000 for x in opt_ins]
    print(
        f"Update Status Controller opt-in ({len(opt_in_ms)} rounds): ConfigMap created -> insights in it, "
        f"seen through a watch: p50 {statistics.median(opt_in_ms):.1f} ms, max {max(opt_in_ms):.1f} ms "
        f"(target < 1 s: {'met' if max(opt_in_ms) < 1000 else 'NOT met'})"
    )
    print(
        f"Update Status Controller reaction latency ({len(ms)} ClusterVersion changes, "
        f"{args.operators} ClusterOperators, controller as its ServiceAccount, real kube-apiserver)"
    )
    print("  ClusterVersion status write sent -> usc-cv-version updated, seen through a watch:")
    print(
        f"    p50 {percentile(ms, 50):6.1f} ms   p90 {percentile(ms, 90):6.1f} ms   "
        f"p99 {percentile(ms, 99):6.1f} ms   max {max(ms):6.1f} ms   mean {statistics.mean(ms):6.1f} ms"
    )
    print(f"  target p99 < 250 ms: {'met' if percentile(ms, 99) < 250 else 'NOT met'}")
    print(f"  controller's own reaction histogram (event received -> patch done): {reaction}")
    print(f"  load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (shared machine)")
    print(f"  ConfigMap writes: {writes:.0f} for {len(ms)} changes (+{len(opt_in_ms)} first publishes after an opt-in)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("CVO_PY_CLUSTER_DIR", str(REPO / ".local-cluster"))
    raise SystemExit(main())
