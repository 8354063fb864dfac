"""The operator side's install/ manifests on the real API server: they apply, `start` runs from
the Deployment's own command line as its ServiceAccount with only the install/ RBAC (cluster-admin,
as upstream: it applies whatever a payload holds; the audit log shows no request refused, for its
own work and for a payload it applies), and the version Pod it creates passes the namespace's Pod
Security admission, which must be `privileged`."""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import CLUSTERVERSIONS, CONFIGMAPS, NAMESPACES, PODS, ApiError, KubeClient
from payload.podspec import PodSpecOptions, build_version_pod
from payload.retrieval import JOBS
from syncworker.load import load_payload
from syncworker.select import Selection
from testkit.fakes.kubelet import Kubelet
from testkit.fakes.thanos import ThanosQuerier, ensure_cluster_monitoring_view, service_address
from testkit.fakes.update_service import UpdateService, graph, promql_risk
from testkit.harness import manifests
from testkit.harness.certs import https_get
from testkit.harness.cluster import LocalCluster, ensure_namespace, unique_name
from testkit.harness.clusterversion import put_co
from testkit.harness.payload import (
    ClusterVerification,
    StartProcess,
    ensure_priority_class,
    release_accepted,
    request_update,
    version_pods,
    write_payload,
)
from testkit.harness.prometheus import LocalPrometheus
from testkit.harness.syncworker import remove_applied
from testkit.harness.usc import iter_audit
from testkit.harness.wait import wait_until
from testkit.objects.payloads import SECTION8_VERSION, image_of, write_section8

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

TARGET = "quay.io/openshift-release-dev/ocp-release@sha256:" + "7a" * 32
THANOS_PORT = 9091  # the port of the Deployment's (default) --promql-url


def test_every_install_manifest_applies(kube: KubeClient) -> None:
    docs = manifests.load()
    assert {d["metadata"]["name"] for d in docs if d["kind"] == "Deployment"} >= {
        "cluster-version-operator",
        "update-status-controller",
    }
    # Present on every OpenShift cluster (other operators create them), not on a bare API server.
    ensure_namespace(kube, "openshift-config-managed")
    ensure_namespace(kube, "openshift-config")
    try:
        manifests.apply(kube, docs)
        for doc in docs:
            meta = doc["metadata"]
            stored = kube.get(manifests.resource_of(doc), meta["name"], meta.get("namespace"))
            assert stored["metadata"]["name"] == meta["name"]
    finally:
        manifests.delete(kube, manifests.cluster_scoped(docs))


def test_start_as_its_service_account_with_only_its_rbac(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    kubelet: Kubelet,
    verification: ClusterVerification,
    prometheus: Callable[..., LocalPrometheus],
    tmp_path: Path,
    featuregate_api: None,  # served, as in every OpenShift cluster: `start` reads and watches the FeatureGate
) -> None:
    docs = manifests.render(manifests.load(manifests.CVO_FILES), manifests.CVO_NAMESPACE, namespace)
    # What every OpenShift cluster has: these namespaces and the monitoring operator's reader role.
    ensure_namespace(kube, "openshift-config-managed")
    ensure_namespace(kube, "openshift-config")
    ensure_cluster_monitoring_view(kube)
    manifests.apply(kube, docs)  # the Namespace too: its Pod Security labels apply to the version Pod
    ensure_priority_class(kube)
    put_co(kube, "etcd", "4.14.1")
    put_co(kube, "dns", "4.14.1")
    token = cluster.service_account_token(namespace, manifests.CVO_SERVICE_ACCOUNT)
    kubeconfig = cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token)
    token_file = tmp_path / "sa.token"
    token_file.write_text(token)
    # A version Job an operator of 4.18 or older left behind: `start` prunes it first.
    kube.create(JOBS, _legacy_job(namespace), namespace)
    audit = cluster.state["auditLog"]
    offset = os.path.getsize(audit)
    # Thanos Querier at its Service's cluster IP, in front of a real Prometheus; an update service
    # whose one conditional update has a PromQL risk.
    prom = prometheus()
    risky = graph(
        ["4.14.1", "4.14.3"],
        conditional=[([("4.14.1", "4.14.3")], [promql_risk("AlwaysMatches", "vector(1)", "It always applies.")])],
    )
    with contextlib.ExitStack() as stack:
        address = stack.enter_context(service_address(kube, "openshift-monitoring", "thanos-querier", THANOS_PORT))
        querier = stack.enter_context(ThanosQuerier(kube, address, THANOS_PORT, prom.url, tmp_path / "thanos"))
        updates = stack.enter_context(UpdateService(channels={"stable-4.14": risky}))
        # No ClusterVersion yet: `start` creates it, as on a new cluster. Its Prometheus is the
        # Deployment's own (no --promql-url), reached with the ServiceAccount's files.
        start = StartProcess(
            kubeconfig,
            namespace,
            tmp_path,
            "4.14.1",
            f"--update-service={updates.url}",
            service_account=manifests.ServiceAccountFiles(token=str(token_file), service_ca=querier.ca_file),
        )
        stack.callback(manifests.delete, kube, manifests.outside(docs, namespace))
        stack.callback(start.stop)
        _cycle(kube, namespace, kubelet, verification, start, cluster, querier, token, docs)
        code = start.stop()  # SIGTERM: the Lease is handed back
    assert code == 0, start.log()[-3000:]
    assert "Graceful shutdown complete" in start.log()
    _check_audit(audit, offset, namespace, docs)


def _cycle(
    kube: KubeClient,
    namespace: str,
    kubelet: Kubelet,
    verification: ClusterVerification,
    start: StartProcess,
    cluster: LocalCluster,
    querier: ThanosQuerier,
    token: str,
    docs: list[dict[str, Any]],
) -> None:
    """Creation, an evaluated PromQL risk, an update retrieved and loaded, metrics served."""
    wait_until(
        lambda: start.proc.poll() is not None or _history(kube),
        timeout=30,
        what="the ClusterVersion created with status",
    )
    assert start.proc.poll() is None, start.log()[-3000:]
    assert _history(kube)[0]["version"] == "4.14.1"

    # The risk is a query through Thanos Querier, as the ServiceAccount: it applies.
    kube.patch(CLUSTERVERSIONS, "version", {"spec": {"channel": "stable-4.14"}})
    try:
        recommended = wait_until(lambda: _recommended(kube), timeout=60, what="the conditional update evaluated")
    except AssertionError:
        status = kube.get(CLUSTERVERSIONS, "version").get("status") or {}
        print("conditionalUpdates:", status.get("conditionalUpdates"), "\nThanos saw:", querier.seen)
        print(start.log()[-5000:])
        raise
    assert (recommended["status"], recommended["reason"]) == ("False", "AlwaysMatches"), recommended
    user = f"system:serviceaccount:{namespace}:{manifests.CVO_SERVICE_ACCOUNT}"
    assert any(s.path.startswith("/api/v1/query?") and s.user == user and s.status == 200 for s in querier.seen)

    # An update: verified, retrieved by a version Pod that the test's kubelet completes.
    verification.sign(TARGET)
    request_update(kube, TARGET)
    pod = wait_until(
        lambda: [p for p in version_pods(kube, namespace) if not p["metadata"].get("deletionTimestamp")],
        timeout=30,
        what="the version Pod",
    )[0]
    write_payload(start.payload_dir, TARGET, "4.14.2")
    kubelet.succeed(pod["metadata"]["name"], namespace)
    wait_until(
        lambda: release_accepted(kube).get("reason") == "PayloadLoaded"
        and _history(kube)[0]["version"] == "4.14.2",
        timeout=30,
        what="the payload loaded and 4.14.2 in the history",
    )
    wait_until(lambda: not version_pods(kube, namespace), what="the version Pod deleted")
    assert not kube.list(JOBS, namespace).get("items"), "the legacy Job was pruned"
    # /metrics for the cluster's Prometheus: the client CA comes from kube-system.
    scraper = (cluster.state["scraperCertFile"], cluster.state["scraperKeyFile"])
    status, text = https_get(start.port, "/metrics", scraper)
    assert status == 200
    assert 'cluster_installer{invoker="",type="",version=""} 1.0' in text  # read, and neither exists
    installer = {"metadata": {"name": "openshift-install", "namespace": "openshift-config"},
                 "data": {"version": "v4.14.0", "invoker": "user"}}  # fmt: skip
    kube.create(CONFIGMAPS, installer, "openshift-config")
    try:
        wait_until(
            lambda: 'cluster_installer{invoker="user",type="openshift-install",version="v4.14.0"} 1.0'
            in https_get(start.port, "/metrics", scraper)[1],
            what="cluster_installer from openshift-config/openshift-install",
        )
    finally:
        kube.delete(CONFIGMAPS, "openshift-install", "openshift-config")
    # A ClusterOperator's condition changes: its transitions are counted.
    put_co(kube, "dns", "4.14.1", degraded="True")
    wait_until(
        lambda: 'cluster_operator_condition_transitions{condition="Degraded",name="dns"} 1.0'
        in https_get(start.port, "/metrics", scraper)[1],
        what="the dns Degraded transition counted",
    )
    assert "process_resident_memory_bytes " in text and "process_start_time_seconds " in text
    assert https_get(start.port, "/readyz", None) == (200, "ok")
    assert querier.authorize(token) == (200, user)  # Thanos Querier's check passes for it


def _check_audit(audit: str, offset: int, namespace: str, docs: list[dict[str, Any]]) -> None:
    """No request was refused; the Lease and the client CA ConfigMap are the only ones of theirs."""
    user = f"system:serviceaccount:{namespace}:{manifests.CVO_SERVICE_ACCOUNT}"
    events = [e for e in iter_audit(audit, offset) if e["user"]["username"] == user]
    assert events, "the audit log recorded no request from start"
    denied = [
        (e["verb"], e["requestURI"], e["responseStatus"].get("code"))
        for e in events
        if e["responseStatus"].get("code", 200) in (401, 403)
    ]
    assert denied == [], f"requests RBAC denied: {denied}"
    # The Lease and the client CA ConfigMap are named; nothing else of theirs is touched.
    for e in events:
        ref = e.get("objectRef") or {}
        name = ref.get("name") or e["requestURI"].split("metadata.name%3D", 1)[-1].split("&", 1)[0]
        if ref.get("resource") == "leases" and e["verb"] != "create":
            assert name == "version", e["requestURI"]
        if ref.get("resource") == "configmaps" and ref.get("namespace") == "kube-system":
            assert name == "extension-apiserver-authentication", e["requestURI"]


def _legacy_job(namespace: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "version--8wg5f", "namespace": namespace},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "OnFailure",
                    "containers": [{"name": "payload", "image": TARGET, "command": ["true"]}],
                }
            }
        },
    }


def _recommended(kube: KubeClient) -> dict[str, Any] | None:
    """The Recommended condition of the one conditional update, once it is evaluated."""
    updates = (kube.get(CLUSTERVERSIONS, "version").get("status") or {}).get("conditionalUpdates") or []
    conditions = [c for u in updates for c in u.get("conditions") or [] if c.get("type") == "Recommended"]
    return conditions[0] if conditions and conditions[0].get("reason") != "EvaluationFailed" else None


def _history(kube: KubeClient) -> list[dict[str, Any]]:
    try:
        cv = kube.get(CLUSTERVERSIONS, "version")
    except ApiError as exc:
        if exc.is_not_found():
            return []
        raise
    return list((cv.get("status") or {}).get("history") or [])


# -- Pod Security ------------------------------------------------------------------------------------


def _namespace_at(kube: KubeClient, level: str | None) -> str:
    """A namespace with the install/ Namespace's labels, its enforce level changed to `level`."""
    [ns_doc] = [d for d in manifests.load(manifests.CVO_FILES) if d["kind"] == "Namespace"]
    labels = dict(ns_doc["metadata"]["labels"])
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"
    name = unique_name(f"psa-{level or 'cvo'}")
    if level:
        labels = {k: v for k, v in labels.items() if not k.startswith("pod-security.kubernetes.io/")}
        labels["pod-security.kubernetes.io/enforce"] = level
    kube.create(NAMESPACES, {"metadata": {"name": name, "labels": labels}})
    return name


def _version_pod(namespace: str) -> dict[str, Any]:
    rng = random.Random(1)
    suffix = "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    return build_version_pod(
        TARGET, "4.14.2", "node-0", PodSpecOptions(namespace=namespace), name_suffix=suffix, tmp_suffix=suffix
    )


def _operator_pod(namespace: str) -> dict[str, Any]:
    """A Pod of the install/ Deployment's template."""
    [deployment] = [d for d in manifests.load(manifests.CVO_FILES) if d["kind"] == "Deployment"]
    template = deployment["spec"]["template"]
    spec = dict(template["spec"])
    spec["containers"] = [{**c, "image": TARGET} for c in spec["containers"]]
    return {
        "metadata": {
            "name": "cluster-version-operator-x",
            "namespace": namespace,
            "labels": template["metadata"]["labels"],
        },
        "spec": spec,
    }


def _admit(kube: KubeClient, pod: dict[str, Any]) -> ApiError | None:
    """Create `pod` as a server-side dry run (admission runs, nothing is stored)."""
    try:
        kube.request("POST", PODS.path(pod["metadata"]["namespace"]), query={"dryRun": "All"}, body=pod)
    except ApiError as exc:
        return exc
    return None


@pytest.mark.parametrize("which", ["version Pod", "operator Pod"])
def test_pods_need_the_privileged_pod_security_level(kube: KubeClient, which: str) -> None:
    ensure_priority_class(kube)
    make = _version_pod if which == "version Pod" else _operator_pod
    created = []
    try:
        at_install = _namespace_at(kube, None)
        created.append(at_install)
        assert _admit(kube, make(at_install)) is None, f"the {which} is refused in the install/ namespace"
        for level in ("baseline", "restricted"):
            ns = _namespace_at(kube, level)
            created.append(ns)
            error = _admit(kube, make(ns))
            assert error is not None and error.status == 403, f"the {which} was admitted at {level}"
            assert f'violates PodSecurity "{level}:latest"' in str(error), str(error)
            assert "hostPath" in str(error), str(error)
            print(f"\n{which} at {level}: {str(error)[:300]}")
    finally:
        for ns in created:
            try:
                kube.delete(NAMESPACES, ns)
            except ApiError:
                pass


# -- beside a real CVO -------------------------------------------------------------------------------


def _upstream_deployment(namespace: str) -> dict[str, Any]:
    """The CVO's own Deployment as a cluster has it (the parts that matter here)."""
    labels = {"k8s-app": "cluster-version-operator"}
    return {
        "metadata": {"name": "cluster-version-operator", "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": labels},
            "strategy": {"type": "Recreate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "cluster-version-operator", "image": TARGET, "args": ["start"]}]},
            },
        },
    }


def test_applying_the_manifests_cannot_replace_a_real_cvo(kube: KubeClient, namespace: str) -> None:
    docs = manifests.render(manifests.load(manifests.CVO_FILES), manifests.CVO_NAMESPACE, namespace)
    [ours] = [d for d in docs if d["kind"] == "Deployment"]
    deployments = manifests.resource_of(ours)
    kube.create(deployments, _upstream_deployment(namespace), namespace)
    before = kube.get(deployments, "cluster-version-operator", namespace)
    # As `oc apply` sends it (a patch) and as a replace would: both refused, nothing changed.
    attempts = [
        lambda: kube.patch(deployments, "cluster-version-operator", ours, namespace),
        lambda: manifests.apply(kube, [ours]),
    ]
    for attempt in attempts:
        with pytest.raises(ApiError) as refused:
            attempt()
        assert refused.value.status == 422 and "field is immutable" in str(refused.value), str(refused.value)
    after = kube.get(deployments, "cluster-version-operator", namespace)
    assert after["spec"] == before["spec"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"]


def test_no_cluster_scoped_name_is_one_of_the_cvos_own() -> None:
    # Upstream's ClusterRoleBindings (to cluster-admin; a roleRef cannot change in place).
    upstream = {("ClusterRoleBinding", name) for name in ("cluster-version-operator", "cluster-version-operator-1")}
    ours = {(d["kind"], d["metadata"]["name"]) for d in manifests.load() if "namespace" not in d["metadata"]}
    assert not ours & upstream


def test_start_applies_a_payload_as_its_service_account_with_no_request_refused(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    tmp_path: Path,
    featuregate_api: None,
) -> None:
    """install/'s RBAC lets `start` apply whatever a payload holds: the sync-worker facts'
    synthetic payload (a CRD and its custom resource, a Namespace, RBAC that grants what it holds,
    a Deployment, a Job, a ClusterOperator, ConfigMaps in two namespaces) is installed by `start`
    as its ServiceAccount, and the audit log shows no request refused."""
    docs = manifests.render(manifests.load(manifests.CVO_FILES), manifests.CVO_NAMESPACE, namespace)
    ensure_namespace(kube, "openshift-config-managed")
    ensure_namespace(kube, "openshift-config")
    manifests.apply(kube, docs)
    root = write_section8(tmp_path / "payload")
    payload = load_payload(str(root), release_image=image_of(SECTION8_VERSION), selection=Selection())
    remove_applied(kube, payload.manifests)
    token = cluster.service_account_token(namespace, manifests.CVO_SERVICE_ACCOUNT)
    kubeconfig = cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token)
    audit = cluster.state["auditLog"]
    offset = os.path.getsize(audit)
    start = StartProcess(
        kubeconfig,
        namespace,
        tmp_path,
        payload=root,
        release_image=image_of(SECTION8_VERSION),
        env={"CVO_PY_RECONCILE_INTERVAL": "3"},
    )
    try:
        wait_until(lambda: "Precreated resource clusteroperator" in start.log(), timeout=60, what="f-op precreated")
        put_co(kube, "f-op", SECTION8_VERSION)
        wait_until(
            lambda: (kube.get(CLUSTERVERSIONS, "version").get("status") or {}).get("history", [{}])[0].get("state")
            == "Completed",
            timeout=60,
            what="the payload installed",
        )
        assert start.stop() == 0, start.log()[-3000:]
    finally:
        start.stop()
        remove_applied(kube, payload.manifests)
        manifests.delete(kube, manifests.outside(docs, namespace))
    user = f"system:serviceaccount:{namespace}:{manifests.CVO_SERVICE_ACCOUNT}"
    applied = [
        e for e in iter_audit(audit, offset) if str(e.get("userAgent", "")).startswith("cluster-version-operator/")
    ]
    assert applied and {e["user"]["username"] for e in applied} == {user}
    created = {(e["objectRef"]["resource"], e["objectRef"]["name"]) for e in applied if e["verb"] == "create"}
    assert {("customresourcedefinitions", "widgets.example.com"), ("clusterrolebindings", "test-workload")} <= created
    _check_audit(audit, offset, namespace, docs)
