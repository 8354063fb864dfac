"""What the real Prometheus sees of cvo-py: scrape duration of each endpoint and how long after
its cause an alert fires.

`start` and `update-status-controller` run as processes, scraped over HTTPS by
hack/localprometheus.py's Prometheus (scrape and rule evaluation every `--interval`, install/'s
rules with ClusterOperatorDegraded's `for:` set to 0 s). A ClusterOperator turns Degraded=True; the
time until ClusterOperatorDegraded is firing in /api/v1/alerts is measured (`--runs` times).

    .venv/bin/python bench/prometheus_figures.py [--interval 1s] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from cvo_py.runtime.kube import CLUSTEROPERATORS, CLUSTERVERSIONS, ApiError
from testkit.harness import cluster as local
from testkit.harness import localprometheus
from testkit.harness import usc as h
from testkit.harness.cluster import free_port
from testkit.harness.clusterversion import create_cv, put_co, status_414
from testkit.harness.payload import StartProcess

OPERATOR = "bench-degraded"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interval", default="1s", help="scrape and rule evaluation interval (default 1s)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    cluster = local.start()
    kube = cluster.client
    namespace = f"bench-prom-{uuid.uuid4().hex[:6]}"
    local.ensure_namespace(kube, namespace)
    for res, name in ((CLUSTERVERSIONS, "version"), (CLUSTEROPERATORS, OPERATOR)):
        try:
            kube.delete(res, name)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    put_co(kube, OPERATOR, "4.14.1")
    with tempfile.TemporaryDirectory(prefix="cvo-py-bench-prom-") as tmp:
        work = Path(tmp)
        prom = localprometheus.up(
            cluster.handle,
            work / "prometheus",
            scrape_interval=args.interval,
            evaluation_interval=args.interval,
            rule_interval=args.interval,
            for_override={"ClusterOperatorDegraded": "0s"},
            quiet=True,
        )
        cvo_cert = prom.serving_certificate("cluster-version-operator")
        usc_cert = prom.serving_certificate("update-status-controller")
        port = free_port()
        (work / "start").mkdir()
        cvo = StartProcess(
            cluster.kubeconfig,
            namespace,
            work / "start",
            "4.14.1",
            f"--listen=127.0.0.1:{port}",
            f"--serving-cert-file={cvo_cert[0]}",
            f"--serving-key-file={cvo_cert[1]}",
        )
        usc = h.ControllerProcess(
            cluster.kubeconfig,
            namespace,
            work / "usc.log",
            f"--serving-cert-file={usc_cert[0]}",
            f"--serving-key-file={usc_cert[1]}",
            "--no-leader-elect",
        )
        h.create_configmap(kube, namespace)
        try:
            prom.register("cluster-version-operator", f"127.0.0.1:{port}")
            prom.register("update-status-controller", f"127.0.0.1:{usc.port}")
            h.wait_for(
                "both targets up",
                lambda: len(prom.query("up == 1")) == 2 or None,
                timeout=60,
            )
            time.sleep(20)  # 20 s of scrapes to average
            print(f"scrape and rule evaluation interval: {args.interval}")
            for job in ("cluster-version-operator", "update-status-controller"):
                avg = prom.query(f'avg_over_time(scrape_duration_seconds{{job="{job}"}}[20s])')
                top = prom.query(f'max_over_time(scrape_duration_seconds{{job="{job}"}}[20s])')
                samples = prom.query(f'max_over_time(scrape_samples_scraped{{job="{job}"}}[20s])')
                print(
                    f"scrape duration {job}: mean {float(avg[0]['value'][1]) * 1000:.1f} ms, "
                    f"max {float(top[0]['value'][1]) * 1000:.1f} ms ({samples[0]['value'][1]} samples per scrape)"
                )
            latencies = []
            for _ in range(args.runs):
                put_co(kube, OPERATOR, "4.14.1", degraded="True")
                caused = time.monotonic()
                h.wait_for("ClusterOperatorDegraded firing", lambda: _firing(prom) or None, timeout=60, interval=0.05)
                latencies.append(time.monotonic() - caused)
                put_co(kube, OPERATOR, "4.14.1")
                h.wait_for("ClusterOperatorDegraded resolved", lambda: not _firing(prom) or None, timeout=60)
            print(
                "ClusterOperatorDegraded (for: 0s) firing after Degraded=True was written: "
                + ", ".join(f"{s:.2f} s" for s in latencies)
                + f" (median {statistics.median(latencies):.2f} s)"
            )
        finally:
            cvo.stop()
            usc.stop()
            localprometheus.stop(prom.dir)
            for res, name in ((CLUSTERVERSIONS, "version"), (CLUSTEROPERATORS, OPERATOR)):
                try:
                    kube.delete(res, name)
                except ApiError:
                    pass
    return 0


def _firing(prom: localprometheus.LocalPrometheus) -> bool:
    return any(
        a["labels"].get("alertname") == "ClusterOperatorDegraded"
        and a["labels"].get("name") == OPERATOR
        and a["state"] == "firing"
        for a in prom.alerts()
    )


if __name__ == "__main__":
    raise SystemExit(main())
