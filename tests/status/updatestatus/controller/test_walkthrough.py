"""The administrator's walkthrough of the Update Status Controller, on the real API server.

The install/ manifests are applied as the CVO applies them; the controller runs as its
ServiceAccount (a real token from the server) in a subprocess, exactly as in its pod.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cvo_py.runtime.kube import LEASES, ApiError, KubeClient
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster

OPERATORS = ("authentication", "dns", "etcd", "kube-apiserver", "machine-config", "network")


def show(step: str, data: dict[str, str] | None) -> None:
    print(f"\n===== {step} =====\n{h.printable(data)}", flush=True)


def test_admin_walkthrough(
    cluster: LocalCluster, kube: KubeClient, clusterversion_cleanup: None, tmp_path: Path
) -> None:
    manifests = h.load_manifests()
    h.apply(kube, manifests)
    h.delete_configmap(kube, h.NAMESPACE)
    try:
        kube.delete(LEASES, h.LEASE, h.NAMESPACE)
    except ApiError as exc:
        if not exc.is_not_found():
            raise
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "sa.kubeconfig", cluster.service_account_token(h.NAMESPACE, h.SERVICE_ACCOUNT)
    )
    installed = datetime.now(UTC).replace(microsecond=0) - timedelta(days=3)
    h.create_clusterversion(kube, "4.15.8", installed)
    for name in OPERATORS:
        h.create_operator(kube, name, "4.15.8", installed + timedelta(minutes=30))

    usc = h.ControllerProcess(kubeconfig, h.NAMESPACE, tmp_path / "usc.log")
    try:
        # 1. Not opted in: the controller says so once, and creates nothing.
        usc.wait_for_log(
            r"ConfigMap openshift-update-status-controller/status-api-cm-prototype does not exist"
        )
        h.wait_for("the first sync", lambda: usc.metric("update_status_controller_insights") > 0)
        data = h.configmap_data(kube, h.NAMESPACE)
        show("before the administrator creates the ConfigMap", data)
        print("controller log: " + usc.wait_for_log(r"ConfigMap \S+ does not exist[^\n]*").group(0))
        assert data is None

        # 2. Opt in with a ConfigMap holding a key of the administrator's own.
        h.create_configmap(kube, h.NAMESPACE, {"admin-note": "keep me"})
        data = h.wait_for("usc-cv-version", lambda: _with_key(kube, "usc-cv-version"))
        show("ConfigMap created", data)
        cv = h.unwrap(h.insight(data, "usc-cv-version"))
        assert cv["resource"] == {
            "group": "config.openshift.io",
            "resource": "clusterversions",
            "name": "version",
        }
        assert cv["versions"]["target"]["version"] == "4.15.8"
        assert cv["versions"]["previous"]["version"] == "<none>"
        assert [m["key"] for m in cv["versions"]["previous"].get("metadata") or []] == ["Installation"]
        assert h.condition(cv, "Updating")["status"] == "False"
        assert cv["assessment"] == "Completed"
        assert data["admin-note"] == "keep me"
        assert {f"usc-co-{name}" for name in OPERATORS} <= set(data)

        # 3. An update starts: a Partial history entry, Progressing=True.
        started = datetime.now(UTC).replace(microsecond=0)
        h.start_update(kube, "4.16.0", started)
        h.set_operator(kube, "authentication", "4.15.8", started, progressing=True)
        data = h.wait_for(
            "Updating=True for the cluster and the authentication operator",
            lambda: _co_updating(kube, "authentication")
            and _cv_matches(kube, lambda cv: h.condition(cv, "Updating")["status"] == "True"),
        )
        show("update to 4.16.0 started", data)
        cv = h.unwrap(h.insight(data, "usc-cv-version"))
        assert cv["versions"]["target"]["version"] == "4.16.0"
        assert cv["versions"]["previous"]["version"] == "4.15.8"
        assert h.condition(cv, "Updating")["reason"] == "ClusterVersionProgressing"
        assert cv["assessment"] == "Progressing"
        assert cv["startedAt"] == h.ts(started)
        assert h.condition(h.insight(data, "usc-co-authentication"), "Updating")["reason"] == "Progressing"
        assert data["admin-note"] == "keep me"

        # 4. Every operator reaches the target and the update completes.
        finished = started + timedelta(minutes=1)
        for name in OPERATORS:
            h.set_operator(kube, name, "4.16.0", finished)
        h.finish_update(kube, finished)
        data = h.wait_for(
            "Updating=False",
            lambda: _cv_matches(kube, lambda cv: h.condition(cv, "Updating")["status"] == "False"),
        )
        show("update to 4.16.0 completed", data)
        cv = h.unwrap(h.insight(data, "usc-cv-version"))
        assert h.condition(cv, "Updating")["reason"] == "ClusterVersionNotProgressing"
        assert cv["assessment"] == "Completed"
        assert cv["completion"] == 100
        assert cv["completedAt"] == h.ts(finished)
        assert data["admin-note"] == "keep me"

        log = usc.log()
        assert log.count("status-api-cm-prototype does not exist") == 1, "logged once per state change"
        assert usc.metric("update_status_controller_configmap_writes_total") >= 3
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]
        h.delete_configmap(kube, h.NAMESPACE)


def _with_key(kube: KubeClient, key: str) -> dict[str, str] | None:
    data = h.configmap_data(kube, h.NAMESPACE)
    return data if data and key in data else None


def _co_updating(kube: KubeClient, name: str) -> bool:
    data = _with_key(kube, f"usc-co-{name}") or {}
    return bool(data) and h.condition(h.insight(data, f"usc-co-{name}"), "Updating")["status"] == "True"


def _cv_matches(kube: KubeClient, check: Any) -> dict[str, str] | None:
    data = _with_key(kube, "usc-cv-version")
    return data if data and check(h.insight(data, "usc-cv-version")) else None
