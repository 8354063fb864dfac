"""install/ on a real node: `start` as its Deployment (probes, status, scraped by Prometheus) and the
update-status-controller Deployment through OTA-1269's procedure (idle without its ConfigMap,
publishing once it exists)."""

from __future__ import annotations

import time
from typing import Any

from cvo_py.runtime.kube import CLUSTERVERSIONS, PODS, KubeClient
from testkit.harness import localcluster, localprometheus, usc
from testkit.harness.localnode import NodeInfo
from testkit.harness.nodeconfig import NodePaths
from testkit.harness.wait import wait_until

CVO_NAMESPACE = "openshift-cluster-version"


def _pods(kube: KubeClient, namespace: str, app: str) -> list[dict[str, Any]]:
    return list(kube.list(PODS, namespace, label_selector=f"k8s-app={app}")["items"])


def _ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", []))


def test_start_runs_as_its_deployment_from_the_release_image(kube: KubeClient, node: NodeInfo) -> None:
    (pod,) = [p for p in _pods(kube, CVO_NAMESPACE, "cluster-version-operator") if _ready(p)]
    (status,) = pod["status"]["containerStatuses"]
    release = node.release_images[0]["image"]
    assert pod["spec"]["nodeName"] == node.node and pod["spec"]["hostNetwork"] is True
    assert status["ready"] and "running" in status["state"], status
    # Pulled from the local registry by digest: the runtime reports the digest it runs.
    assert status["image"] == release and status["imageID"].endswith(release.rsplit("@", 1)[1]), status
    cv = kube.get(CLUSTERVERSIONS, "version")
    conditions = {c["type"]: c for c in cv["status"]["conditions"]}
    assert cv["status"]["desired"]["image"] == release
    assert cv["status"]["desired"]["version"] == node.release_images[0]["version"], cv["status"]["desired"]
    assert conditions["ReleaseAccepted"]["status"] == "True", conditions["ReleaseAccepted"]
    assert conditions["Available"]["status"] == "True", conditions["Available"]


def test_prometheus_scrapes_start_on_the_node(api: localcluster.Cluster, paths: NodePaths) -> None:
    prometheus = localprometheus.up(api, paths.prometheus, scrape_interval="2s", quiet=True)
    try:
        prometheus.register("cluster-version-operator", "127.0.0.1:9099")

        def up() -> list[dict[str, Any]] | None:
            targets = [t for t in prometheus.targets() if t["labels"].get("job") == "cluster-version-operator"]
            return targets if targets and all(t["health"] == "up" for t in targets) else None

        targets = wait_until(up, timeout=60, interval=0.5, what="Prometheus scrapes start's /metrics on the node")
        assert targets[0]["labels"]["namespace"] == CVO_NAMESPACE
        series = prometheus.query('cluster_version{type="current"}')
        assert series and series[0]["metric"]["version"], series
    finally:
        localprometheus.stop(paths.prometheus)


def test_update_status_controller_follows_ota_1269(kube: KubeClient, node: NodeInfo) -> None:
    (pod,) = [p for p in _pods(kube, usc.NAMESPACE, "update-status-controller") if _ready(p)]
    assert pod["spec"]["nodeName"] == node.node and not pod["spec"].get("hostNetwork")
    # The Pod reaches the API server through the `kubernetes` Service (kube-proxy), as Pods do.
    assert pod["status"]["podIP"].startswith("10.88.0."), pod["status"]
    name = pod["metadata"]["name"]

    def log() -> str:
        return str(kube.request("GET", f"/api/v1/namespaces/{usc.NAMESPACE}/pods/{name}/log"))

    idle = "does not exist: nothing to publish until an administrator creates it"
    wait_until(lambda: idle in log(), timeout=30, interval=0.5, what="the controller logs that it is idle")
    assert usc.configmap_data(kube, usc.NAMESPACE) is None
    usc.create_configmap(kube, usc.NAMESPACE)
    started = time.monotonic()
    def published() -> dict[str, str] | None:
        data = usc.configmap_data(kube, usc.NAMESPACE)
        return data if data and "usc-cv-version" in data else None

    data = wait_until(
        published,
        timeout=60,
        interval=0.2,
        what="usc-cv-version published after the ConfigMap was created",
    )
    assert usc.insight_condition(data, "usc-cv-version", "Updating").startswith("False "), usc.printable(data)
    assert "exists: publishing update status insights" in log()
    print(f"usc-cv-version published {time.monotonic() - started:.1f}s after the ConfigMap was created")
