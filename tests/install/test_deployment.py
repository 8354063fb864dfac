"""The operator side of install/ against upstream's Deployment, RBAC and install files, field by
field as the references give them (run levels, tolerations, NetworkPolicy, one Service)."""

from __future__ import annotations

from typing import Any

from testkit.harness import manifests

FILES = "0000_*_cluster-version-operator_*.yaml"


def by_kind(kind: str) -> list[dict[str, Any]]:
    return [d for d in manifests.load(FILES) if d["kind"] == kind]


def test_run_levels_are_upstreams() -> None:
    """0000_<runlevel>_cluster-version-operator_<order>_<what>.yaml: each kind where upstream has it."""
    where: dict[str, set[str]] = {}
    for path in manifests.files(FILES):
        run_level, order = path.name.split("_")[1], path.name.split("_")[3]
        for doc in manifests.documents(manifests.rendered(path)):
            where.setdefault(doc["kind"], set()).add(f"{run_level}_{order}")
    assert where["Namespace"] == {"00_00"}
    assert where["ConfigMap"] == {"00_01"}  # admin-acks, admin-gates
    assert where["NetworkPolicy"] == {"00_02"}
    assert where["ServiceAccount"] == {"00_02"}
    assert where["ClusterRoleBinding"] == {"00_03"}
    assert where["Deployment"] == {"00_30"}
    assert where["Service"] == {"00_40"}
    assert where["ServiceMonitor"] == {"90_02"}
    assert where["PrometheusRule"] <= {"90_03", "90_04"}


def test_one_service_as_upstream() -> None:
    [service] = by_kind("Service")
    assert service["metadata"]["name"] == "cluster-version-operator"
    assert service["metadata"]["annotations"]["service.beta.openshift.io/serving-cert-secret-name"] == (
        "cluster-version-operator-serving-cert"
    )
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 9099, "targetPort": "metrics", "protocol": "TCP"}]


def test_the_namespace_denies_all_pod_traffic_as_upstream() -> None:
    [policy] = by_kind("NetworkPolicy")
    meta = policy["metadata"]
    assert (meta["namespace"], meta["name"]) == ("openshift-cluster-version", "default-deny")
    assert policy["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}


def test_the_deployment_is_upstreams_where_it_runs_and_what_it_tolerates() -> None:
    [deployment] = by_kind("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    tolerations = {(t["key"], t["operator"], t["effect"], t.get("tolerationSeconds")) for t in pod["tolerations"]}
    assert len(tolerations) == len(pod["tolerations"])
    assert tolerations == {
        ("node-role.kubernetes.io/master", "Exists", "NoSchedule", None),
        ("node.kubernetes.io/network-unavailable", "Exists", "NoSchedule", None),
        ("node.kubernetes.io/not-ready", "Exists", "NoSchedule", None),
        ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 120),
        ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 120),
    }
    assert pod["nodeSelector"] == {"node-role.kubernetes.io/master": ""}
    assert (pod["hostNetwork"], pod["dnsPolicy"], pod["priorityClassName"], pod["terminationGracePeriodSeconds"]) == (
        True, "Default", "system-cluster-critical", 130)
    assert pod["serviceAccountName"] == "cluster-version-operator"
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert "replicas" not in deployment["spec"]
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["target.workload.openshift.io/management"] == '{"effect": "PreferredDuringScheduling"}'
    [container] = pod["containers"]
    assert container["args"] == [
        "start",
        f"--release-image={manifests.RELEASE_IMAGE}",
        "--enable-auto-update=false",
        "--listen=0.0.0.0:9099",
        "--serving-cert-file=/etc/tls/serving-cert/tls.crt",
        "--serving-key-file=/etc/tls/serving-cert/tls.key",
        "--v=2",
        "--always-enable-capabilities=Ingress",
    ]
    assert (container["imagePullPolicy"], container["terminationMessagePolicy"]) == (
        "IfNotPresent", "FallbackToLogsOnError")
    assert container["resources"]["requests"] == {"cpu": "20m", "memory": "50Mi"}


def test_the_deployment_cannot_take_over_upstreams() -> None:
    """Its selector is upstream's plus a label of its own: a Deployment's selector cannot change,
    so the API server refuses it where upstream's Deployment exists (tested against it in
    test_start_manifests.py)."""
    [deployment] = by_kind("Deployment")
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector["k8s-app"] == "cluster-version-operator"
    assert set(selector) > {"k8s-app"}
    assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()


def test_the_namespace_is_upstreams() -> None:
    [namespace] = by_kind("Namespace")
    annotations = namespace["metadata"]["annotations"]
    assert (annotations["openshift.io/node-selector"], annotations["workload.openshift.io/allowed"]) == (
        "", "management")
    assert namespace["metadata"]["labels"]["openshift.io/cluster-monitoring"] == "true"


def test_the_admin_ack_configmaps_are_upstreams() -> None:
    """admin-gates without data (other manifests add the gates) and admin-acks created once."""
    maps = {(d["metadata"]["namespace"], d["metadata"]["name"]): d for d in by_kind("ConfigMap")}
    assert set(maps) == {("openshift-config", "admin-acks"), ("openshift-config-managed", "admin-gates")}
    assert all("data" not in d for d in maps.values())
    acks = maps[("openshift-config", "admin-acks")]["metadata"]["annotations"]
    assert acks["release.openshift.io/create-only"] == "true"
    assert "release.openshift.io/create-only" not in maps[("openshift-config-managed", "admin-gates")]["metadata"][
        "annotations"
    ]
    for configmap in maps.values():  # the admin acks in the hosted cluster too, as upstream
        annotations = configmap["metadata"]["annotations"]
        assert annotations["include.release.openshift.io/hypershift"] == "true"
        assert annotations["include.release.openshift.io/ibm-cloud-managed"] == "true"


def test_the_objects_upstream_describes_say_what_they_are_for() -> None:
    """As upstream's: a kubernetes.io/description on the Prometheus Role and RoleBinding, the
    ServiceMonitor and the admin-ack ConfigMaps (and on what had one before)."""
    described = {(d["kind"], d["metadata"]["name"]) for d in manifests.load(FILES)
                 if (d["metadata"].get("annotations") or {}).get("kubernetes.io/description")}
    assert {
        ("Role", "prometheus-k8s"), ("RoleBinding", "prometheus-k8s"), ("ServiceMonitor", "cluster-version-operator"),
        ("ConfigMap", "admin-acks"), ("ConfigMap", "admin-gates"), ("PrometheusRule", "cluster-version-operator"),
        ("Service", "cluster-version-operator"), ("Deployment", "cluster-version-operator"),
        ("NetworkPolicy", "default-deny"), ("Namespace", "openshift-cluster-version"),
    } <= described


def test_the_deployment_has_no_liveness_probe_and_passes_the_cluster_profile_as_upstream() -> None:
    """No liveness probe: on a starved control-plane node, three slow answers would restart
    `start` in the middle of a retrieval (upstream has none). CLUSTER_PROFILE is the profile the
    CVO renders with, as upstream's Deployment sets it; OPERATOR_IMAGE_VERSION, which upstream sets
    but never fills in, is not: `start` does not read it."""
    [deployment] = by_kind("Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert "livenessProbe" not in container and container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    env = {var["name"]: var for var in container["env"]}
    assert env["CLUSTER_PROFILE"] == {"name": "CLUSTER_PROFILE", "value": "self-managed-high-availability"}
    assert "OPERATOR_IMAGE_VERSION" not in env
    raw = manifests.files("0000_00_cluster-version-operator_30_deployment.yaml")[0].read_text()
    assert "value: '{{ .ClusterProfile }}'" in raw
