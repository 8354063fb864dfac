"""syncworker.applier against the local API server, for what the §8 payload does not exercise: the
cluster's Proxy read only for a manifest that asks for it, a cluster-scoped custom resource whose
manifest names a namespace, discovery that learns a kind served after it first looked, the
discovery cache's minute, and an object whose removal was requested but that is still there."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import CRDS, MERGE_PATCH, PROXIES, ApiError, KubeClient, Resource
from syncworker.applier import TYPED_RESOURCES, USER_AGENT, Applier, Discovery, user_agent
from syncworker.load import Payload, load_payload
from syncworker.manifest import Manifest
from syncworker.modes import Mode
from syncworker.select import Selection
from testkit.checkout import REPO
from testkit.harness import localcluster
from testkit.harness.cluster import LocalCluster
from testkit.harness.syncworker import Audit, exists
from testkit.harness.wait import wait_until
from testkit.objects.payloads import INCLUDE, RELEASE_IMAGE, write_payload

DEPLOYMENTS = TYPED_RESOURCES[("apps/v1", "Deployment")]
JOBS = TYPED_RESOURCES[("batch/v1", "Job")]
OWNER = "00000000-0000-0000-0000-0000000000aa"


@pytest.fixture
def applier(kube: KubeClient) -> Applier:
    """An applier with the CVO's user agent (the admin's credentials)."""
    return Applier(KubeClient(kube.config, user_agent=user_agent("4.99.0")))


def no_operators(name: str) -> dict[str, Any] | None:
    return None


def manifests(tmp_path: Path, *objects: dict[str, Any]) -> Payload:
    """A payload of these objects, one file each, in this order."""
    files = {f"0000_10_test_{i:02d}.yaml": json.dumps(obj) for i, obj in enumerate(objects)}
    root = write_payload(tmp_path / uuid.uuid4().hex, "4.99.0", {}, files)
    return load_payload(str(root), release_image=RELEASE_IMAGE, selection=Selection())


def meta(name: str, namespace: str | None = None, **annotations: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "annotations": {**INCLUDE, **annotations}}
    if namespace:
        out["namespace"] = namespace
    return out


def deployment(name: str, namespace: str, **annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, namespace, **annotations),
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "registry.local/main:1"}]},
            },
        },
    }


def crd(plural: str, kind: str, scope: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.applier.example.com"},
        "spec": {
            "group": "applier.example.com",
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }


@pytest.fixture
def crds(kube: KubeClient) -> Iterator[Callable[[dict[str, Any]], None]]:
    """CRDs a test creates (waiting until they are served), deleted afterwards."""
    created: list[str] = []

    def create(body: dict[str, Any]) -> None:
        kube.create(CRDS, body)
        created.append(body["metadata"]["name"])
        spec = body["spec"]
        path = f"/apis/{spec['group']}/v1/{spec['names']['plural']}"
        wait_until(lambda: _served(kube, path), what=f"{body['metadata']['name']} served")

    yield create
    for name in created:
        kube.delete(CRDS, name)


def _served(kube: KubeClient, path: str) -> bool:
    try:
        kube.request("GET", path, query={"limit": 1})
    except ApiError:
        return False
    return True


def test_a_cluster_scoped_resource_whose_manifest_names_a_namespace_is_applied_once(
    cluster: LocalCluster,
    kube: KubeClient,
    applier: Applier,
    crds: Callable[[dict[str, Any]], None],
    tmp_path: Path,
) -> None:
    crds(crd("tiles", "Tile", "Cluster"))
    name = f"tile-{uuid.uuid4().hex[:6]}"
    payload = manifests(
        tmp_path,
        {"apiVersion": "applier.example.com/v1", "kind": "Tile", "metadata": meta(name, "ignored"), "spec": {"a": 1}},
    )
    audit = Audit(cluster.state["auditLog"])
    for _ in range(3):
        assert applier.apply(payload.manifests[0], Mode.UPDATING, OWNER, no_operators) is None
    tile = Resource("applier.example.com/v1", "Tile", "tiles", False)
    assert "namespace" not in kube.get(tile, name)["metadata"]
    seen = [(r.verb, r.namespace, r.code) for r in audit.requests(kube, USER_AGENT) if r.name == name]
    assert seen == [("get", "", 404), ("create", "", 201), ("get", "", 200), ("get", "", 200)]


def test_discovery_learns_a_kind_served_after_it_first_looked(
    applier: Applier, crds: Callable[[dict[str, Any]], None], tmp_path: Path, namespace: str
) -> None:
    payload = manifests(
        tmp_path,
        {"apiVersion": "applier.example.com/v1", "kind": "Brick", "metadata": meta("brick", namespace), "spec": {}},
    )
    missing = applier.apply(payload.manifests[0], Mode.UPDATING, OWNER, no_operators)
    assert missing is not None and missing.reason == "UpdatePayloadResourceTypeMissing"
    assert missing.detail == 'no matches for kind "Brick" in version "applier.example.com/v1"'
    crds(crd("bricks", "Brick", "Namespaced"))
    assert applier.apply(payload.manifests[0], Mode.UPDATING, OWNER, no_operators) is None


def test_discovery_asks_again_once_a_minute(cluster: LocalCluster, kube: KubeClient) -> None:
    now = [0.0]
    discovery = Discovery(kube, clock=lambda: now[0])
    audit = Audit(cluster.state["auditLog"])
    for moment in (0.0, 30.0, 59.0, 61.0, 90.0):
        now[0] = moment
        found = discovery.resource("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        assert found is not None and found.plural == "customresourcedefinitions" and not found.namespaced
    asked = [r for r in audit.requests(kube, "cvo-py-tests") if r.uri == "/apis/apiextensions.k8s.io/v1"]
    assert len(asked) == 2


@pytest.fixture
def proxy_api(cluster: LocalCluster, kube: KubeClient) -> Iterator[None]:
    """The Proxy API (config.openshift.io), removed afterwards."""
    localcluster.apply_crd(cluster.handle, REPO / "tests" / "crds" / "proxy.yaml")
    yield
    kube.delete(CRDS, "proxies.config.openshift.io")
    wait_until(lambda: not _served(kube, "/apis/config.openshift.io/v1/proxies"), what="the Proxy API removed")


def env_of(kube: KubeClient, name: str, namespace: str) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = kube.get(DEPLOYMENTS, name, namespace)["spec"]["template"]["spec"]["containers"][0].get(
        "env", []
    )
    return env


def test_without_a_proxy_nothing_is_injected(
    kube: KubeClient, applier: Applier, namespace: str, tmp_path: Path
) -> None:
    payload = manifests(tmp_path, deployment("proxied", namespace, **{"config.openshift.io/inject-proxy": "main"}))
    assert applier.apply(payload.manifests[0], Mode.UPDATING, OWNER, no_operators) is None
    assert env_of(kube, "proxied", namespace) == []


@pytest.mark.usefixtures("proxy_api")
def test_the_clusters_proxy_is_injected_into_the_containers_a_manifest_names(
    kube: KubeClient, applier: Applier, namespace: str, tmp_path: Path
) -> None:
    created = kube.create(PROXIES, {"metadata": {"name": "cluster"}, "spec": {}})
    created["status"] = {"httpProxy": "http://proxy:3128", "noProxy": ".cluster.local"}
    kube.replace_status(PROXIES, created)
    payload = manifests(
        tmp_path,
        deployment("proxied", namespace, **{"config.openshift.io/inject-proxy": "main"}),
        deployment("plain", namespace),
        deployment("wrong", namespace, **{"config.openshift.io/inject-proxy": "sidecar"}),
    )
    proxied, plain, wrong = payload.manifests
    assert applier.apply(proxied, Mode.UPDATING, OWNER, no_operators) is None
    assert applier.apply(plain, Mode.UPDATING, OWNER, no_operators) is None
    assert env_of(kube, "proxied", namespace) == [
        {"name": "HTTP_PROXY", "value": "http://proxy:3128"},
        {"name": "HTTPS_PROXY"},
        {"name": "NO_PROXY", "value": ".cluster.local"},
    ]
    assert env_of(kube, "plain", namespace) == []
    error = applier.apply(wrong, Mode.UPDATING, OWNER, no_operators)
    assert error is not None and error.reason == "UpdatePayloadFailed"
    assert error.detail == 'requested injection for non-existent container: "sidecar"'


def test_an_object_still_there_after_its_deletion_was_requested_is_pending(
    kube: KubeClient, applier: Applier, namespace: str, tmp_path: Path
) -> None:
    job: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "old", "namespace": namespace},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "registry.local/c"}]}}
        },
    }
    kube.create(JOBS, job, namespace)
    removed = {**job, "metadata": meta("old", namespace, **{"release.openshift.io/delete": "true"})}
    payload = manifests(tmp_path, removed)
    manifest: Manifest = payload.manifests[0]
    assert applier.apply(manifest, Mode.RECONCILING, OWNER, no_operators) is None
    assert applier.pending_deletions() == [], "only an update removes anything"
    assert applier.apply(manifest, Mode.UPDATING, OWNER, no_operators) is None
    # A Job's deletion waits for a garbage collector (its orphan finalizer): still there.
    assert kube.get(JOBS, "old", namespace)["metadata"].get("deletionTimestamp")
    assert applier.pending_deletions() == [f'job "{namespace}/old"']
    assert applier.apply(manifest, Mode.UPDATING, OWNER, no_operators) is None
    live = kube.get(JOBS, "old", namespace)
    live["metadata"]["finalizers"] = []
    kube.replace(JOBS, live)
    wait_until(lambda: not exists(kube, JOBS, "old", namespace), what="the Job gone")
    assert applier.apply(manifest, Mode.UPDATING, OWNER, no_operators) is None
    assert applier.pending_deletions() == []


def test_the_install_admission_policy_draws_no_write_from_a_second_start(
    cluster: LocalCluster, kube: KubeClient, tmp_path: Path
) -> None:
    """install/'s ValidatingAdmissionPolicy and its binding go through the generic rule, which
    compares the manifest with the live object as the server defaulted it: the manifest spells the
    defaults out, so a second `start` process (a new applier, no memory of the first) writes nothing."""
    import yaml

    source = REPO / "install" / "0000_00_update-status-controller_02_admission-DevPreviewNoUpgrade.yaml"
    objects = list(yaml.safe_load_all(source.read_text()))
    suffix = uuid.uuid4().hex[:6]
    for obj in objects:  # a name of this test's own, selected for any feature set
        obj["metadata"]["name"] += f"-{suffix}"
        obj["metadata"]["annotations"].pop("release.openshift.io/feature-set")
        if obj["kind"] == "ValidatingAdmissionPolicyBinding":
            obj["spec"]["policyName"] += f"-{suffix}"
    payload = manifests(tmp_path, *objects)
    assert [m.obj["kind"] for m in payload.manifests] == [
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ]
    try:
        first = Applier(KubeClient(kube.config, user_agent=user_agent("4.99.0")))
        for manifest in payload.manifests:
            assert first.apply(manifest, Mode.UPDATING, OWNER, no_operators) is None
        audit = Audit(cluster.state["auditLog"])
        second = Applier(KubeClient(kube.config, user_agent=user_agent("4.99.0")))
        for manifest in payload.manifests:
            assert second.apply(manifest, Mode.RECONCILING, OWNER, no_operators) is None
        names = {o["metadata"]["name"] for o in objects}
        seen = [(r.verb, r.code) for r in audit.requests(kube, USER_AGENT) if r.name in names]
        assert seen == [("get", 200), ("get", 200)], seen
    finally:
        group = "/apis/admissionregistration.k8s.io/v1"
        for obj in reversed(objects):
            plural = (
                "validatingadmissionpolicybindings"
                if obj["kind"].endswith("Binding")
                else "validatingadmissionpolicies"
            )
            try:
                kube.request("DELETE", f"{group}/{plural}/{obj['metadata']['name']}")
            except ApiError as exc:
                if not exc.is_not_found():
                    raise


def test_a_reconciled_cluster_operator_keeps_the_finalizers_someone_else_set(
    kube: KubeClient, applier: Applier, tmp_path: Path
) -> None:
    """Reconciling writes a ClusterOperator back whole from start's cache when its manifest's
    metadata changed: what another party set on it (a finalizer) stays, as upstream keeps it."""
    from cvo_py.runtime.kube import CLUSTEROPERATORS
    from status.clusterversion.caches import slim_clusteroperator

    name = f"keeps-{uuid.uuid4().hex[:6]}"
    kube.create(
        CLUSTEROPERATORS,
        {
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterOperator",
            "spec": {},
            "metadata": {"name": name, "finalizers": ["example.com/keep"]},
        },
    )
    try:
        manifest = {
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterOperator",
            "metadata": meta(name, **{"example.com/new": "label-like"}),
        }
        payload = manifests(tmp_path, manifest)

        def cached(wanted: str) -> dict[str, Any] | None:
            return slim_clusteroperator(kube.get(CLUSTEROPERATORS, wanted)) if wanted == name else None

        applier.apply(payload.manifests[0], Mode.RECONCILING, OWNER, cached)
        written = kube.get(CLUSTEROPERATORS, name)["metadata"]
        assert written["annotations"].get("example.com/new") == "label-like", "the manifest's metadata was written"
        assert written.get("finalizers") == ["example.com/keep"]
    finally:
        kube.patch(CLUSTEROPERATORS, name, {"metadata": {"finalizers": None}}, content_type=MERGE_PATCH)
        kube.delete(CLUSTEROPERATORS, name)
