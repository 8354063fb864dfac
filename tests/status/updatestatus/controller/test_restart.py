"""The API server restarts under the running controller: it reconnects and converges, losing nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from cvo_py.runtime.kube import CLUSTEROPERATORS, KubeClient
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster


def test_converges_after_an_api_server_restart(
    cluster: LocalCluster, kube: KubeClient, namespace: str, clusterversion_cleanup: None, tmp_path: Path,
    controller_kubeconfig: str,
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, "4.15.8", now - timedelta(days=1))
    for name in ("dns", "etcd", "network"):
        h.create_operator(kube, name, "4.15.8", now)
    h.create_configmap(kube, namespace, {"admin-note": "keep me"})
    usc = h.ControllerProcess(controller_kubeconfig, namespace, tmp_path / "usc.log")
    try:
        h.wait_for(
            "the first publish",
            lambda: (
                {"usc-cv-version", "usc-co-dns", "usc-co-etcd", "usc-co-network"}
                <= set(h.configmap_data(kube, namespace) or {})
            ),
        )
        cluster.restart()
        # Changes made right after the restart, while the controller's watches are reconnecting.
        h.start_update(kube, "4.16.0", now)
        kube.delete(CLUSTEROPERATORS, "etcd")
        h.create_operator(kube, "ingress", "4.15.8", now)
        h.set_operator(kube, "dns", "4.15.8", now, progressing=True)

        def converged() -> dict[str, str] | None:
            data = h.configmap_data(kube, namespace) or {}
            keys = {k for k in data if k.startswith("usc-co-")}
            cv = h.insight(data, "usc-cv-version")
            ok = (
                keys == {"usc-co-dns", "usc-co-ingress", "usc-co-network"}
                and cv is not None
                and h.condition(cv, "Updating")["status"] == "True"
                and h.condition(h.insight(data, "usc-co-dns"), "Updating")["status"] == "True"
            )
            return data if ok else None

        data = h.wait_for("convergence after the restart", converged, timeout=60)
        print("\nafter the API server restart:\n" + h.printable({k: v[:60] + "..." for k, v in data.items()}))
        assert data["admin-note"] == "keep me"
        assert usc.proc.poll() is None, "the controller rode out the restart"
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]
