"""Cost of the update status controller's alerts poller with 100 firing alerts, on a real
Prometheus (hack/localprometheus.py) beside the local API server.

100 alert rules (`vector(1)`, severity warning) fire; the poller reads `/api/v1/alerts` and turns
the alerts into insights (`live_alert_insights`) as the controller does after a change. Printed:
the response size, CPU time per poll (read + decode) and per insight computation, the CPU share at
the default 30 s interval, and the process's RSS before and after the polls.

    .venv/bin/python bench/alerts_poller.py [--alerts 100] [--polls 60]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

from cvo_py.runtime import httpget
from status.updatestatus.controller.alerts import AlertsPoller
from status.updatestatus.insights.alerts import live_alert_insights
from testkit.harness import localcluster, localprometheus


def rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alerts", type=int, default=100)
    parser.add_argument("--polls", type=int, default=60)
    args = parser.parse_args()

    cluster = localcluster.up(quiet=True)
    with tempfile.TemporaryDirectory(prefix="cvo-py-bench-alerts-") as tmp:
        rules = Path(tmp) / "bench-alerts.yaml"
        rules.write_text(
            yaml.safe_dump(
                {
                    "groups": [
                        {
                            "name": "bench",
                            "interval": "1s",
                            "rules": [
                                {
                                    "alert": f"BenchAlert{i:03d}",
                                    "expr": "vector(1)",
                                    "labels": {"severity": "warning", "namespace": f"openshift-bench-{i % 10}"},
                                    "annotations": {
                                        "summary": f"Bench alert {i} is firing.",
                                        "description": "A synthetic alert for measuring the alerts poller. " * 3,
                                        "runbook_url": f"https://example.com/runbooks/BenchAlert{i:03d}.md",
                                    },
                                }
                                for i in range(args.alerts)
                            ],
                        }
                    ]
                }
            )
        )
        prom = localprometheus.up(
            cluster, Path(tmp) / "prometheus", evaluation_interval="1s", extra_rule_files=[str(rules)], quiet=True
        )
        try:
            deadline = time.monotonic() + 60
            while len([a for a in prom.alerts() if a["state"] == "firing"]) < args.alerts:
                if time.monotonic() > deadline:
                    print("the bench alerts did not all fire within 60 s", file=sys.stderr)
                    return 1
                time.sleep(0.5)
            size = len(httpget.get(prom.url + "/api/v1/alerts", headers={}, total_timeout=10, max_bytes=1 << 30).body)
            changes: list[int] = []
            before = rss_mb()
            poller = AlertsPoller(prom.api, 30, lambda: changes.append(1))
            poll_cpu: list[float] = []
            compute_cpu: list[float] = []
            for _ in range(args.polls):
                t0 = time.process_time()
                poller.poll()
                t1 = time.process_time()
                insights = live_alert_insights(poller.reading, 0)
                t2 = time.process_time()
                poll_cpu.append((t1 - t0) * 1000)
                compute_cpu.append((t2 - t1) * 1000)
            after = rss_mb()
        finally:
            localprometheus.stop(prom.dir)
    read = len(poller.reading.alerts or [])
    print(f"alerts read (pending included): {read}; /api/v1/alerts response: {size} bytes; insights: {len(insights)}")
    print(
        f"CPU per poll (read + decode): median {statistics.median(poll_cpu):.2f} ms, "
        f"max {max(poll_cpu):.2f} ms over {args.polls} polls"
    )
    print(f"CPU per insight computation: median {statistics.median(compute_cpu):.2f} ms, max {max(compute_cpu):.2f} ms")
    per_poll = statistics.median(poll_cpu) + statistics.median(compute_cpu)
    print(f"CPU share at the default 30 s interval (poll + compute each time): {per_poll / 30_000 * 100:.4f} %")
    print(f"RSS: {before:.1f} MB before the poller, {after:.1f} MB after {args.polls} polls (+{after - before:.1f} MB)")
    print(f"changes signalled: {len(changes)} (a change of an alert's labels, annotations, state or activeAt)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
