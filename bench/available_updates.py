#!/usr/bin/env python3
"""Available updates, measured on the local API server with `start` and a local update service:
how long after a channel change `status.availableUpdates` shows the new channel's updates, and how
long one PromQL risk evaluation takes against a real local Prometheus.

    .venv/bin/python bench/available_updates.py [--runs N]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from cvo_py.runtime.kube import CLUSTERVERSIONS, MERGE_PATCH
from cvo_py.runtime.promapi import PrometheusAPI
from testkit.fakes.update_service import UpdateService, graph
from testkit.harness import cluster as local
from testkit.harness import localprometheus
from testkit.harness.clusterversion import create_cv, status_414
from testkit.harness.payload import StartProcess, ensure_priority_class
from testkit.harness.wait import wait_until
from updateservice.prometheus import promql_query


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="channel changes and risk evaluations (default 20)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    handle = local.start()
    kube = handle.client
    ns = local.unique_name("bench-updates")
    local.ensure_namespace(kube, ns)
    ensure_priority_class(kube)
    local.delete_all_cluster_scoped_update_objects(kube)
    channels = {f"ch-{i}": graph(["4.14.1", f"4.14.{i + 2}"], edges=[("4.14.1", f"4.14.{i + 2}")])
                for i in range(args.runs + 1)}
    changes: list[float] = []
    with UpdateService(channels=channels) as service, tempfile.TemporaryDirectory() as tmp:
        create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "ch-0", "upstream": service.url}, status_414())
        start = StartProcess(handle.kubeconfig, ns, Path(tmp), "4.14.1", "--update-service=")

        def listed(version: str) -> bool:
            status = kube.get(CLUSTERVERSIONS, "version").get("status") or {}
            return [r.get("version") for r in status.get("availableUpdates") or []] == [version]

        try:
            wait_until(lambda: listed("4.14.2"), timeout=60, what="the first available updates")
            for i in range(1, args.runs + 1):
                began = time.monotonic()
                kube.patch(CLUSTERVERSIONS, "version", {"spec": {"channel": f"ch-{i}"}}, content_type=MERGE_PATCH)
                wait_until(functools.partial(listed, f"4.14.{i + 2}"), timeout=60, what=f"channel ch-{i}")
                changes.append((time.monotonic() - began) * 1000)
        finally:
            start.stop()
            local.delete_all_cluster_scoped_update_objects(kube)
    with tempfile.TemporaryDirectory() as tmp:
        prom = localprometheus.up(handle.handle, Path(tmp), scrape_interval="1s", quiet=True)
        try:
            query = promql_query(PrometheusAPI(prom.url))
            risk = 'max(up{job="prometheus"}) or vector(0)'
            evaluations: list[float] = []
            for _ in range(args.runs):
                began = time.monotonic()
                query(risk)
                evaluations.append((time.monotonic() - began) * 1000)
        finally:
            localprometheus.stop(prom.dir)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for name, samples in (("channel change -> availableUpdates (ms)", changes),
                          ("PromQL risk evaluation (ms)", evaluations)):
        print(f"{name:<42} n={len(samples):<3} p50 {statistics.median(samples):7.1f}  "
              f"p90 {percentile(samples, 90):7.1f}  max {max(samples):7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
