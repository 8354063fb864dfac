"""Firing alerts of a real Prometheus become 'Update Health' lines of the live `upgrade-status`,
as oc shows them; an unreachable alerts API is reported once and the rest keeps updating."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from cvo_py.runtime.kube import CLUSTEROPERATORS, ApiError, KubeClient
from testkit.checkout import REPO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster, free_port
from testkit.harness.prometheus import LocalPrometheus

USC = "update-status-controller"
PDB_SUMMARY = "The pod disruption budget is preventing further disruption to pods."
PDB_DESCRIPTION = "The pod disruption budget is at the minimum disruptions allowed level."
# Active from when the controller is first scraped: after the update started.
SCRAPED = 'count(up{job="update-status-controller"} == 1) > 0'


def alert_rules(path: Path) -> str:
    rules = [
        {
            "alert": "PodDisruptionBudgetAtLimit",  # active since Prometheus started: before the update
            "expr": "vector(1)",
            "labels": {"severity": "warning", "namespace": "openshift-ingress", "poddisruptionbudget": "router"},
            "annotations": {"summary": PDB_SUMMARY, "description": PDB_DESCRIPTION},
        },
        {
            "alert": "TestWorkloadDegraded",
            "expr": SCRAPED,
            "labels": {"severity": "critical", "namespace": "openshift-test"},
            "annotations": {
                "summary": "A test workload is degraded.",
                "runbook_url": "https://example.com/runbooks/TestWorkloadDegraded.md",
            },
        },
        {"alert": "TestInfoOnly", "expr": SCRAPED, "labels": {"severity": "info"}, "annotations": {"summary": "x"}},
        {"alert": "TestStillPending", "expr": SCRAPED, "for": "1h", "labels": {"severity": "warning"}},
    ]
    path.write_text(yaml.safe_dump({"groups": [{"name": "test-alerts", "interval": "1s", "rules": rules}]}))
    return str(path)


def upgrade_status(kubeconfig: str, check: bool = True) -> str:
    result = subprocess.run(
        # what the controller publishes (its insights, whether current or not)
        [sys.executable, "-m", "cvo_py", "upgrade-status", "--kubeconfig", kubeconfig, "--source", "controller",
         "--details=health"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result.stdout if result.returncode == 0 else ""


def showing(kubeconfig: str, text: str) -> str | None:
    out = upgrade_status(kubeconfig, check=False)  # the first insights may not be published yet
    return out if text in out else None


def operator_updating(kube: KubeClient, name: str) -> bool:
    insight = h.insight(h.configmap_data(kube, h.NAMESPACE), f"usc-co-{name}")
    return insight is not None and bool(h.condition(insight, "Updating")["status"] == "True")


def _reset(kube: KubeClient) -> None:
    h.delete_configmap(kube, h.NAMESPACE)
    h.delete_lease(kube, h.NAMESPACE)
    for name in ("authentication",):
        try:
            kube.delete(CLUSTEROPERATORS, name)
        except ApiError as exc:
            if not exc.is_not_found():
                raise


def test_firing_alerts_are_update_health_lines_and_an_unreachable_api_is_said_once(
    cluster: LocalCluster,
    kube: KubeClient,
    prometheus: Callable[..., LocalPrometheus],
    clusterversion_cleanup: None,
    tmp_path: Path,
) -> None:
    h.apply(kube, h.load_manifests())
    _reset(kube)
    prom = prometheus(
        scrape_interval="1s",
        evaluation_interval="1s",
        rule_interval="1s",
        extra_rule_files=[alert_rules(tmp_path / "test-alerts.yaml")],
    )
    h.wait_for("the PDB alert firing", lambda: [a for a in prom.alerts() if a["state"] == "firing"] or None)
    installed = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    h.create_clusterversion(kube, "4.15.8", installed)
    h.create_operator(kube, "authentication", "4.15.8", installed)
    started = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    h.start_update(kube, "4.16.0", started)
    h.create_configmap(kube, h.NAMESPACE)
    cert, key = prom.serving_certificate(USC)
    serving = [f"--serving-cert-file={cert}", f"--serving-key-file={key}"]
    alerts = ["--alerts-url", prom.url, "--alerts-interval", "1"]
    usc = h.ControllerProcess(cluster.kubeconfig, h.NAMESPACE, tmp_path / "usc.log", *serving, *alerts)
    try:
        prom.register(USC, f"127.0.0.1:{usc.port}")
        out = h.wait_for(
            "both alerts in Update Health",
            lambda: showing(cluster.kubeconfig, "TestWorkloadDegraded"),
            timeout=60,
        )
        assert "Message: Alert is firing: A test workload is degraded.\n" in out, out
        assert "  Level:       Critical\n  Impact:      Unknown\n" in out, out
        assert "  Reference:   https://example.com/runbooks/TestWorkloadDegraded.md\n" in out, out
        assert "    alerts.config.openshift.io: openshift-test/TestWorkloadDegraded\n" in out, out
        assert "  Description: Alert started firing during the update. The alert has no description.\n" in out, out
        assert f"Message: Alert is firing: {PDB_SUMMARY}\n" in out, out
        assert "  Reference:   <alert does not have a runbook_url annotation>\n" in out, out
        assert "    alerts.config.openshift.io: openshift-ingress/PodDisruptionBudgetAtLimit\n" in out, out
        assert (
            "  Description: Alert known to affect updates has been firing since before the update started. "
            f"The alert description is: {PDB_DESCRIPTION}" in out
        ), out
        assert "TestInfoOnly" not in out and "TestStillPending" not in out, out
        assert any(a["labels"]["alertname"] == "TestStillPending" and a["state"] == "pending" for a in prom.alerts())
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]

    # The alerts API cannot be reached: said once; the rest keeps updating.
    port = free_port()  # nothing listens there
    unreachable = ["--alerts-url", f"http://127.0.0.1:{port}", "--alerts-interval", "1", "-v", "4"]
    usc = h.ControllerProcess(cluster.kubeconfig, h.NAMESPACE, tmp_path / "usc-2.log", *unreachable)
    try:
        out = h.wait_for(
            "the alerts API failure in Update Health",
            lambda: showing(cluster.kubeconfig, "Unable to fetch alerts"),
            timeout=60,
        )
        assert f"Message: Unable to fetch alerts: http://127.0.0.1:{port}/api/v1/alerts: " in out, out
        assert "No alerts have been read yet, so 'Update Health' shows none." in out, out
        h.wait_for("three failed polls", lambda: usc.log().count("Alerts poll failed") >= 3 or None)
        h.set_operator(kube, "authentication", "4.15.8", started, progressing=True)
        h.wait_for(
            "the operator's change published while the alerts API is down",
            lambda: operator_updating(kube, "authentication") or None,
        )
        assert usc.log().count("Unable to fetch alerts") == 1, usc.log()[-3000:]
        assert upgrade_status(cluster.kubeconfig).count("Unable to fetch alerts") == 1
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]
        _reset(kube)
