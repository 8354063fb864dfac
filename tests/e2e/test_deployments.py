"""The cluster as an installer leaves it and `start` completes it, on a real node: `make node-up`
applies only `start`'s Deployment and what it needs; `start` applies the rest of install/ from its
release image (the install completes); `start` as its Deployment (probes, status, scraped by
Prometheus); OTA-1269 as written: the feature set DevPreviewNoUpgrade → `start` restarts → the
Update Status Controller's Deployment, applied by `start`, Ready and idle → the ConfigMap created →
insights."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from cvo_py.runtime.kube import (
    CONFIGMAPS,
    CRDS,
    FEATUREGATES,
    NAMESPACES,
    PODS,
    SERVICES,
    ApiError,
    KubeClient,
)
from testkit.harness import localcluster, localprometheus, nodecluster, noderelease, usc
from testkit.harness.localnode import NodeInfo
from testkit.harness.manifests import KINDS
from testkit.harness.nodeconfig import NodePaths
from testkit.harness.wait import wait_until

CVO_NAMESPACE = "openshift-cluster-version"
# How `start`'s applier names itself in managedFields (its user agent, cluster-version-operator/<v>).
APPLIER = "cluster-version-operator"


def _pods(kube: KubeClient, namespace: str, app: str) -> list[dict[str, Any]]:
    return list(kube.list(PODS, namespace, label_selector=f"k8s-app={app}")["items"])


def _managers(obj: dict[str, Any]) -> set[str]:
    return {entry.get("manager", "") for entry in obj["metadata"].get("managedFields") or []}


def _owned_by_clusterversion(obj: dict[str, Any]) -> bool:
    return any(ref.get("kind") == "ClusterVersion" for ref in obj["metadata"].get("ownerReferences") or [])


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def test_start_installs_what_the_installer_left_to_the_release(
    kube: KubeClient, node: NodeInfo, times: dict[str, dict[str, float]]
) -> None:
    installed = node.release_images[0]

    def completed() -> dict[str, Any] | None:
        found = noderelease.clusterversion(kube)
        return found if noderelease.history(found)[:1] == [(installed["version"], "Completed")] else None

    cv = wait_until(
        completed,
        timeout=300,
        interval=1.0,
        what=f"the install of {installed['version']} Completed by start",
    )
    entry = cv["status"]["history"][0]
    times[f"install of {installed['version']}"] = {
        "completed after start began it": _seconds(entry["startedTime"], entry["completionTime"])
    }
    # What only the payload holds, applied by start (its applier in managedFields, ClusterVersion
    # as owner): the rest of install/ and the release's other manifests.
    from_payload = [
        (SERVICES, "cluster-version-operator", CVO_NAMESPACE),
        (KINDS["NetworkPolicy"], "default-deny", CVO_NAMESPACE),
        (CONFIGMAPS, "admin-gates", "openshift-config-managed"),
        (KINDS["ServiceMonitor"], "cluster-version-operator", CVO_NAMESPACE),
        (KINDS["PrometheusRule"], "cluster-version-operator", CVO_NAMESPACE),
        (CRDS, "servicemonitors.monitoring.coreos.com", None),
        (CRDS, "machineconfigpools.machineconfiguration.openshift.io", None),
    ]
    for res, name, namespace in from_payload:
        obj = kube.get(res, name, namespace)
        assert APPLIER in _managers(obj), (res.kind, name, _managers(obj))
        assert _owned_by_clusterversion(obj), (res.kind, name, obj["metadata"].get("ownerReferences"))
    # The admins' acknowledgements are create-only: owned, but not controlled, by ClusterVersion.
    acks = kube.get(CONFIGMAPS, "admin-acks", "openshift-config")
    assert [r.get("controller") for r in acks["metadata"]["ownerReferences"]] == [None], acks["metadata"]
    # The Update Status Controller is DevPreviewNoUpgrade's: nothing of it on a Default cluster.
    try:
        kube.get(NAMESPACES, usc.NAMESPACE)
        raise AssertionError(f"{usc.NAMESPACE} exists on a Default cluster")
    except ApiError as exc:
        assert exc.is_not_found(), exc
    assert noderelease.condition(cv, "Failing").get("status") == "False", noderelease.condition(cv, "Failing")
    assert noderelease.condition(cv, "Progressing")["message"] == f"Cluster version is {installed['version']}"
    # The installed release's API is 4.13's: its ClusterVersion CRD refuses Ingress, which start always
    # enables (--always-enable-capabilities=Ingress). The API server answered 422; status left it out and
    # says so, and everything else was written.
    pruned = noderelease.condition(cv, "CapabilitiesPruned")
    assert pruned.get("status") == "True" and "enabledCapabilities Ingress" in pruned["message"], pruned
    assert "Ingress" not in cv["status"]["capabilities"]["enabledCapabilities"]


def test_start_runs_as_its_deployment_from_the_release_image(kube: KubeClient, node: NodeInfo) -> None:
    (pod,) = [p for p in _pods(kube, CVO_NAMESPACE, "cluster-version-operator") if noderelease.ready(p)]
    (status,) = pod["status"]["containerStatuses"]
    release = node.release_images[0]["image"]
    assert pod["spec"]["nodeName"] == node.node and pod["spec"]["hostNetwork"] is True
    assert status["ready"] and "running" in status["state"], status
    # Pulled from the local registry by digest: the runtime reports the digest it runs.
    assert status["image"] == release and status["imageID"].endswith(release.rsplit("@", 1)[1]), status
    cv = noderelease.clusterversion(kube)
    assert cv["status"]["desired"]["image"] == release
    assert cv["status"]["desired"]["version"] == node.release_images[0]["version"], cv["status"]["desired"]
    for type_ in ("ReleaseAccepted", "Available"):
        assert noderelease.condition(cv, type_)["status"] == "True", noderelease.condition(cv, type_)


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


def test_update_status_controller_follows_ota_1269(
    kube: KubeClient, node: NodeInfo, paths: NodePaths, times: dict[str, dict[str, float]]
) -> None:
    """"Enable the DevPreviewNoUpgrade feature set. CVO will restart and will deploy all
    functionality gated by this feature set, including the USC.\""""
    cv, before = noderelease.wait_settled(kube)
    (container,) = before["status"]["containerStatuses"]
    restarts = container.get("restartCount", 0)
    started = time.monotonic()
    kube.patch(FEATUREGATES, "cluster", {"spec": {"featureSet": "DevPreviewNoUpgrade"}})

    # start exits on the change and its container starts again, in the same Pod.
    def restarted() -> dict[str, Any] | None:
        (pod,) = [p for p in noderelease.start_pods(kube) if p["metadata"]["uid"] == before["metadata"]["uid"]]
        (status,) = pod["status"]["containerStatuses"]
        return pod if status.get("restartCount", 0) > restarts and status.get("ready") else None

    wait_until(restarted, timeout=120, interval=0.5, what="start restarted by the feature-set change")
    restarted_after = time.monotonic() - started
    name = before["metadata"]["name"]
    previous = str(kube.request("GET", f"/api/v1/namespaces/{CVO_NAMESPACE}/pods/{name}/log?previous=true"))
    assert "The cluster's features changed" in previous, previous[-2000:]

    # start applies the controller's manifests from its payload; the service CA makes its certificate.
    def service() -> bool:
        nodecluster.serve_certificates(kube, paths)
        return _has_certificate(kube)

    wait_until(service, timeout=180, interval=1.0, what="the controller's Service, from start", tolerate=(ApiError,))
    deployment = nodecluster.wait_available(kube, usc.NAMESPACE, "update-status-controller", paths)
    assert APPLIER in _managers(deployment) and _owned_by_clusterversion(deployment), deployment["metadata"]
    (image,) = {c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]}
    assert image == cv["status"]["desired"]["image"], image  # the release image, rendered by start
    ready_after = time.monotonic() - started
    (pod,) = [p for p in _pods(kube, usc.NAMESPACE, "update-status-controller") if noderelease.ready(p)]
    assert pod["spec"]["nodeName"] == node.node and not pod["spec"].get("hostNetwork")
    # The Pod reaches the API server through the `kubernetes` Service (kube-proxy), as Pods do.
    assert pod["status"]["podIP"].startswith("10.88.0."), pod["status"]
    # restricted-v2's UID (the node's stand-in for the SCC assigns it).
    assert pod["spec"]["securityContext"]["runAsUser"] == nodecluster.RESTRICTED_UID, pod["spec"]["securityContext"]
    pod_name = pod["metadata"]["name"]

    def log() -> str:
        return str(kube.request("GET", f"/api/v1/namespaces/{usc.NAMESPACE}/pods/{pod_name}/log"))

    idle = "does not exist: nothing to publish until an administrator creates it"
    wait_until(lambda: idle in log(), timeout=30, interval=0.5, what="the controller logs that it is idle")
    assert usc.configmap_data(kube, usc.NAMESPACE) is None
    usc.create_configmap(kube, usc.NAMESPACE)
    created = time.monotonic()

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
    times["OTA-1269"] = {
        "start restarted after the feature set changed": restarted_after,
        "the controller Ready after it": ready_after,
        "usc-cv-version published after the ConfigMap was created": time.monotonic() - created,
    }


def _has_certificate(kube: KubeClient) -> bool:
    try:
        kube.get(nodecluster.SECRETS, "update-status-controller-serving-cert", usc.NAMESPACE)
    except ApiError as exc:
        if exc.is_not_found():
            return False
        raise
    return True
