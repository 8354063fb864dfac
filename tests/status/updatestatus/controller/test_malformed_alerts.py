"""Malformed alerts from the alerts API, on the real API server: the update status controller
skips each, counts them (a metric) and says so once (a log line); every sync still publishes, with
the well-formed alerts in Update Health."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from cvo_py.runtime.kube import KubeClient
from testkit.fakes.httpserve import Handler
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster
from testkit.objects.insight_objects import firing_alert, malformed_alerts


def operator_updating(kube: KubeClient) -> bool:
    insight = h.insight(h.configmap_data(kube, h.NAMESPACE), "usc-co-authentication")
    return insight is not None and bool(h.condition(insight, "Updating")["status"] == "True")


def showing(kubeconfig: str) -> str | None:
    out = h.upgrade_status(kubeconfig, "--source", "controller", "--details=health")
    return out if "A test workload is degraded." in out else None


def test_malformed_alerts_are_skipped_counted_and_the_sync_goes_on(
    cluster: LocalCluster,
    kube: KubeClient,
    http_server: Callable[[Handler], str],
    update_without_nodes: datetime,
    tmp_path: Path,
) -> None:
    started = update_without_nodes
    during = h.ts(started + timedelta(minutes=5))
    bad = list(malformed_alerts(during).values())
    good = firing_alert("TestWorkloadDegraded", during, summary="A test workload is degraded.")
    body = json.dumps({"status": "success", "data": {"alerts": [*bad[:6], good, *bad[6:]]}}).encode()

    polls: list[int] = []

    def alerts_api(_req: BaseHTTPRequestHandler) -> tuple[int, bytes]:
        polls.append(1)
        return 200, body

    url = http_server(alerts_api)
    usc = h.ControllerProcess(cluster.kubeconfig, h.NAMESPACE, tmp_path / "usc.log", "--alerts-url", url,
                              "--alerts-interval", "1", "-v", "4")
    try:
        out = h.wait_for("the well-formed alert in Update Health", lambda: showing(cluster.kubeconfig), timeout=60)
        assert "Malformed" not in out and "(exit" not in out, out
        h.wait_for("the malformed alerts counted",
                   lambda: usc.metric("update_status_controller_alerts_malformed") == len(bad) or None)
        # The sync goes on: an operator's change is published.
        h.set_operator(kube, "authentication", "4.15.8", started, progressing=True)
        h.wait_for("the operator's change published", lambda: operator_updating(kube) or None, timeout=30)
        h.wait_for("three polls or more", lambda: len(polls) >= 3 or None)
        log = usc.log()
        assert log.count(f"Skipping {len(bad)} malformed alerts from {url}/api/v1/alerts") == 1, log[-3000:]
        assert "Traceback" not in log and "InputError" not in log, log[-3000:]
        assert usc.metric("update_status_controller_alerts_malformed") == len(bad)
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]
