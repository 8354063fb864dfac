"""A real Prometheus scrapes `start` and `update-status-controller` over HTTPS as the cluster's
would (install/'s ServiceMonitors: job, namespace, endpoint, serverName, the scraper's client
certificate) and evaluates install/'s rules, with every `for:` shortened to 3 s."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import KubeClient
from testkit.demo import dashboard
from testkit.fakes.kubelet import Kubelet, waiting
from testkit.harness.cluster import LocalCluster, free_port
from testkit.harness.clusterversion import create_cv, put_co, status_414
from testkit.harness.payload import (
    ClusterVerification,
    StartProcess,
    ensure_priority_class,
    release_accepted,
    request_update,
    signature_rejected,
    version_pods,
)
from testkit.harness.prometheus import LocalPrometheus, localprometheus
from testkit.harness.usc import ControllerProcess, create_configmap
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

CVO, USC = "cluster-version-operator", "update-status-controller"
UNSIGNED = "quay.io/openshift-release-dev/ocp-release@sha256:" + "e" * 64


@pytest.fixture
def prom(prometheus: Callable[..., LocalPrometheus]) -> LocalPrometheus:
    return prometheus()


class Scraped:
    """`start` and the controller as processes that the test's Prometheus scrapes."""

    def __init__(self, cluster: LocalCluster, prom: LocalPrometheus, namespace: str, workdir: Path) -> None:
        self.cluster, self.prom, self.namespace, self.workdir = cluster, prom, namespace, workdir
        self.cvo: StartProcess | None = None
        self.usc: ControllerProcess | None = None
        self.starts = 0

    def start_cvo(self) -> StartProcess:
        cert, key = self.prom.serving_certificate(CVO)
        port = free_port()
        self.starts += 1
        workdir = self.workdir / f"start-{self.starts}"
        workdir.mkdir()
        self.cvo = StartProcess(
            self.cluster.kubeconfig,
            self.namespace,
            workdir,
            "4.14.1",
            f"--listen=127.0.0.1:{port}",
            f"--serving-cert-file={cert}",
            f"--serving-key-file={key}",
        )
        self.prom.register(CVO, f"127.0.0.1:{port}")
        return self.cvo

    def start_usc(self, *extra: str) -> ControllerProcess:
        cert, key = self.prom.serving_certificate(USC)
        self.usc = ControllerProcess(
            self.cluster.kubeconfig,
            self.namespace,
            self.workdir / "usc.log",
            f"--serving-cert-file={cert}",
            f"--serving-key-file={key}",
            "--no-leader-elect",
            *extra,
        )
        self.prom.register(USC, f"127.0.0.1:{self.usc.port}")
        return self.usc

    def stop(self) -> None:
        if self.cvo is not None:
            self.cvo.stop()
        if self.usc is not None:
            self.usc.stop()


@pytest.fixture
def scraped(
    cluster: LocalCluster, kube: KubeClient, prom: LocalPrometheus, namespace: str, tmp_path: Path
) -> Iterator[Scraped]:
    ensure_priority_class(kube)
    handle = Scraped(cluster, prom, namespace, tmp_path)
    yield handle
    handle.stop()


def series(prom: LocalPrometheus, expr: str) -> list[dict[str, str]]:
    return [dict(s["metric"]) for s in prom.query(expr)]


def firing(prom: LocalPrometheus, name: str) -> list[dict[str, Any]]:
    return [a for a in prom.alerts() if a["labels"].get("alertname") == name and a["state"] == "firing"]


class TargetErrors:
    """The targets' last scrape errors, read when a failure message is formatted."""

    def __init__(self, prom: LocalPrometheus) -> None:
        self.prom = prom

    def __format__(self, spec: str) -> str:
        errors = [f"{t['labels'].get('job')}: {t.get('lastError') or t.get('health')}" for t in self.prom.targets()]
        return f"both targets up ({'; '.join(errors)})"


def up(prom: LocalPrometheus, job: str) -> bool:
    return bool(series(prom, f'up{{job="{job}"}} == 1'))


def test_scrape_has_every_series_the_rules_and_dashboard_use(
    kube: KubeClient, prom: LocalPrometheus, scraped: Scraped
) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.14"}, status_414())
    put_co(kube, "etcd", "4.14.1")
    put_co(kube, "dns", "4.14.1", degraded="True")
    scraped.start_cvo()
    create_configmap(kube, scraped.namespace)
    scraped.start_usc()
    wait_until(lambda: up(prom, CVO) and up(prom, USC), timeout=60, what=TargetErrors(prom))  # type: ignore[arg-type]

    base = {"job": CVO, "namespace": "openshift-cluster-version", "endpoint": "metrics"}
    for expr, labels in [
        ('cluster_operator_conditions{name="version", condition="ReleaseAccepted"}', ["reason"]),
        # The release is applied (its payload holds nothing to apply): Failing=False has no reason,
        # and Prometheus keeps no empty label.
        ('cluster_operator_conditions{name="version", condition="Failing"}', []),
        ('cluster_operator_conditions{name="dns", condition="Degraded"}', ["reason"]),
        ('cluster_operator_up{name="etcd"}', ["reason", "version"]),
    ]:
        got = wait_until(lambda e=expr: series(prom, e), timeout=30, what=expr)  # type: ignore[misc]
        for metric in got:
            assert {k: metric.get(k) for k in base} == base, metric
            assert all(k in metric for k in labels), metric
    usc_base = {"job": USC, "namespace": "openshift-update-status-controller", "endpoint": "https"}
    for name in (
        "update_status_controller_configmap_present",
        "update_status_controller_last_publish_timestamp_seconds",
    ):
        got = wait_until(lambda n=name: series(prom, n), timeout=30, what=name)  # type: ignore[misc]
        assert {k: got[0].get(k) for k in usc_base} == usc_base, got

    # Every metric name the dashboard's panels and install/'s rules read.
    names = set(re.findall(r"\b((?:cluster|update_status_controller)_[a-z_]+)", _queries_and_rules()))
    scraped_names = {s["__name__"] for s in series(prom, f'group by (__name__) ({{job=~"{CVO}|{USC}"}})')}
    missing = {n for n in names if _family(n) not in {_family(s) for s in scraped_names}}
    # Emitted only after their event (a payload retrieval, a verification, a signature store
    # fetch, a status write rejection, an update service answer), which this scenario has not had.
    assert missing <= EVENT_ONLY, sorted(missing - EVENT_ONLY)

    # Every dashboard panel query, evaluated by Prometheus, converges to data, except those over
    # event-only series (rates need two scrapes after a series first appears).
    deadline = time.monotonic() + 30
    while (unexplained := _empty_panels(prom)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not unexplained, unexplained


EVENT_ONLY = {
    "cluster_version_payload_retrieval_failures_total",
    "cluster_version_payload_retrieval_duration_seconds_bucket",
    "cluster_version_release_verifications_total",
    "cluster_version_signature_store_fetch_errors_total",
    "cluster_version_status_write_rejections_total",
    "cluster_version_status_pruned_capabilities",
    "cluster_version_available_updates",
    "cluster_version_conditional_update_condition_seconds",  # only while a conditional update exists
    "cluster_version_risk_conditions",  # only with the ClusterUpdateAcceptRisks gate and a risk
    "cluster_operator_payload_errors",  # only once a manifest failed to apply
    "update_status_controller_reaction_seconds_bucket",
}


def _family(name: str) -> str:
    return re.sub(r"_(total|bucket|count|sum|created)$", "", name)


def _empty_panels(prom: LocalPrometheus) -> list[str]:
    """Dashboard queries without data, other than those over event-only series."""
    names = re.compile(r"\b((?:cluster|update_status_controller)_[a-z_]+)")
    return [q for q in _dashboard_queries() if not prom.query(q) and not set(names.findall(q)) & EVENT_ONLY]


def _dashboard_queries() -> list[str]:
    return [q for _row, panels in dashboard.ROWS for *_title, targets in panels for _legend, q in targets]


def _queries_and_rules() -> str:
    queries = _dashboard_queries()
    exprs = [
        str(rule["expr"])
        for content in localprometheus.rule_files().values()
        for group in content["groups"]
        for rule in group["rules"]
    ]
    return "\n".join([*queries, *exprs])


def test_rules_fire_and_resolve_with_their_causes(
    kube: KubeClient,
    prom: LocalPrometheus,
    scraped: Scraped,
    kubelet: Kubelet,
    verification: ClusterVerification,
) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    put_co(kube, "etcd", "4.14.1")
    put_co(kube, "dns", "4.14.1", degraded="True")
    start = scraped.start_cvo()
    wait_until(lambda: up(prom, CVO), timeout=60, what="start scraped")

    # A degraded ClusterOperator: ClusterOperatorDegraded, resolved when it recovers.
    alert = wait_until(
        lambda: [a for a in firing(prom, "ClusterOperatorDegraded") if a["labels"].get("name") == "dns"],
        timeout=60,
        what="ClusterOperatorDegraded firing for dns",
    )[0]
    assert alert["labels"]["severity"] == "warning"
    assert alert["labels"]["namespace"] == "openshift-cluster-version"
    put_co(kube, "dns", "4.14.1")
    wait_until(
        lambda: (
            not [
                a
                for a in prom.alerts()
                if a["labels"].get("alertname") == "ClusterOperatorDegraded" and a["labels"].get("name") == "dns"
            ]
        ),
        timeout=60,
        what="ClusterOperatorDegraded resolved",
    )

    # The version Pod fails with SignatureValidationFailed: ClusterReleaseNotAccepted (RetrievePayload).
    verification.sign(UNSIGNED)
    request_update(kube, UNSIGNED)
    pod = wait_until(lambda: version_pods(kube, scraped.namespace), timeout=30, what="version pod")[0]
    kubelet.set_container_state(
        pod["metadata"]["name"], scraped.namespace, "cleanup",
        waiting("SignatureValidationFailed", signature_rejected(UNSIGNED)), init=True,
    )  # fmt: skip
    wait_until(lambda: release_accepted(kube).get("status") == "False", timeout=30, what="ReleaseAccepted=False")
    alert = wait_until(lambda: firing(prom, "ClusterReleaseNotAccepted"), timeout=60, what="ClusterReleaseNotAccepted")[
        0
    ]
    assert alert["labels"]["reason"] == "RetrievePayload"
    assert alert["labels"]["name"] == "version"
    assert "has not been accepted because RetrievePayload" in alert["annotations"]["description"]
    request_update(kube, status_414()["desired"]["image"], "4.14.1")  # back to the running release
    wait_until(
        lambda: not firing(prom, "ClusterReleaseNotAccepted"), timeout=60, what="ClusterReleaseNotAccepted resolved"
    )

    # `start` stops: ClusterVersionOperatorDown; a new one resolves it.
    assert not firing(prom, "ClusterVersionOperatorDown")
    start.stop()
    alert = wait_until(
        lambda: firing(prom, "ClusterVersionOperatorDown"), timeout=60, what="ClusterVersionOperatorDown"
    )[0]
    assert alert["labels"]["severity"] == "critical"
    scraped.start_cvo()
    wait_until(
        lambda: not firing(prom, "ClusterVersionOperatorDown"), timeout=60, what="ClusterVersionOperatorDown resolved"
    )
