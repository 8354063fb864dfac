"""The typed merges against the real API server: a manifest created on the server and read back,
with every default the server fills, needs no write; an edit to a field the rules enforce is
found, and the merged object is accepted (200) and then needs no write again; an edit to a field
the rules keep needs no write. The generic rule is shown on a custom resource (no write) and on a
Secret whose `type` the server fills (upstream writes every pass; the fingerprint of the last
write stops the repetition)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cvo_py.runtime.jsondata import copy_json
from cvo_py.runtime.kube import ApiError, KubeClient, Resource
from syncworker import merge
from syncworker.merge import Action
from testkit.checkout import REPO
from testkit.harness import localcluster
from testkit.harness.cluster import LocalCluster
from testkit.objects.manifests import custom_resource, secret, typed_manifests

JSON = dict[str, Any]
CRDS = {  # name: file under tests/crds
    "imagestreams.image.openshift.io": "imagestream.yaml",
    "operatorgroups.operators.coreos.com": "operatorgroup.yaml",
    "securitycontextconstraints.security.openshift.io": "securitycontextconstraints.yaml",
}


def _res(api_version: str, kind: str, plural: str, namespaced: bool = True) -> Resource:
    return Resource(api_version, kind, plural, namespaced)


RESOURCES = {
    "ConfigMap": _res("v1", "ConfigMap", "configmaps"),
    "ServiceAccount": _res("v1", "ServiceAccount", "serviceaccounts"),
    "Namespace": _res("v1", "Namespace", "namespaces", False),
    "Service": _res("v1", "Service", "services"),
    "Deployment": _res("apps/v1", "Deployment", "deployments"),
    "DaemonSet": _res("apps/v1", "DaemonSet", "daemonsets"),
    "Job": _res("batch/v1", "Job", "jobs"),
    "CronJob": _res("batch/v1", "CronJob", "cronjobs"),
    "ClusterRole": _res("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False),
    "ClusterRoleBinding": _res("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False),
    "Role": _res("rbac.authorization.k8s.io/v1", "Role", "roles"),
    "RoleBinding": _res("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"),
    "CustomResourceDefinition": _res(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False
    ),
    "ValidatingWebhookConfiguration": _res(
        "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", False
    ),
    "ImageStream": _res("image.openshift.io/v1", "ImageStream", "imagestreams"),
    "OperatorGroup": _res("operators.coreos.com/v1", "OperatorGroup", "operatorgroups"),
    "SecurityContextConstraints": _res(
        "security.openshift.io/v1", "SecurityContextConstraints", "securitycontextconstraints", False
    ),
}
PROMETHEUS_RULES = _res("monitoring.coreos.com/v1", "PrometheusRule", "prometheusrules")
SECRETS = _res("v1", "Secret", "secrets")

Edit = Callable[[JSON], None]


def _container(obj: JSON) -> JSON:
    container: JSON = obj["spec"]["template"]["spec"]["containers"][0]
    return container


def _label(obj: JSON) -> None:
    obj["metadata"].setdefault("labels", {})["admin"] = "added"


# kind: (an edit of a field the rules enforce, an edit of a field they keep)
EDITS: dict[str, tuple[Edit, Edit]] = {
    "ConfigMap": (lambda o: o["data"].update(mode="lax"), lambda o: o["data"].update(extra="admin")),
    "ServiceAccount": (
        lambda o: o.update(automountServiceAccountToken=True),
        lambda o: o.update(imagePullSecrets=[{"name": "pull"}]),
    ),
    "Namespace": (lambda o: o["metadata"]["labels"].update({"openshift.io/cluster-monitoring": "false"}), _label),
    "Service": (
        lambda o: o["spec"]["selector"].update(app="other"),
        lambda o: o["spec"].update(sessionAffinity="ClientIP"),
    ),
    "Deployment": (
        lambda o: o["spec"].update(replicas=3),
        lambda o: _container(o).update(imagePullPolicy="Never"),
    ),
    "DaemonSet": (
        lambda o: _container(o).update(image="quay.io/openshift/other:latest"),
        lambda o: o["spec"]["updateStrategy"]["rollingUpdate"].update(maxUnavailable=2),
    ),
    "Job": (lambda o: o["spec"].update(activeDeadlineSeconds=900), _label),
    "CronJob": (lambda o: o["spec"].update(schedule="*/5 * * * *"), _label),
    "ClusterRole": (lambda o: o["rules"][0]["verbs"].append("delete"), _label),
    "ClusterRoleBinding": (lambda o: o["subjects"].pop(), _label),
    "Role": (lambda o: o["rules"][0]["verbs"].remove("update"), _label),
    "RoleBinding": (lambda o: o["subjects"][0].update(name="someone-else"), _label),
    "CustomResourceDefinition": (lambda o: o["spec"]["names"].update(shortNames=["wd"]), _label),
    "ValidatingWebhookConfiguration": (lambda o: o["webhooks"][0].update(timeoutSeconds=25), _label),
    "ImageStream": (
        lambda o: o["spec"]["tags"][0]["from"].update(name="quay.io/openshift/tools:edited"),
        lambda o: o["spec"]["tags"].append({"name": "admin", "from": {"kind": "DockerImage", "name": "x/y:z"}}),
    ),
    "OperatorGroup": (lambda o: o["spec"].update(targetNamespaces=["default"]), _label),
    "SecurityContextConstraints": (lambda o: o.update(allowHostNetwork=True), _label),
}


@pytest.fixture(scope="module")
def openshift_apis(cluster: LocalCluster) -> Iterator[None]:
    """The ImageStream, OperatorGroup and SCC APIs, as CRDs (removed afterwards)."""
    for file in CRDS.values():
        localcluster.apply_crd(cluster.handle, REPO / "tests" / "crds" / file)
    yield
    for name in CRDS:
        try:
            cluster.client.delete(RESOURCES["CustomResourceDefinition"], name)
        except ApiError:
            pass


@pytest.fixture
def cluster_scoped(kube: KubeClient) -> Iterator[list[tuple[Resource, str]]]:
    """Cluster-scoped objects a test creates (append them), deleted afterwards."""
    created: list[tuple[Resource, str]] = []
    yield created
    for res, name in created:
        try:
            kube.delete(res, name)
        except ApiError:
            pass


def _namespace_of(res: Resource, namespace: str) -> str | None:
    return namespace if res.namespaced else None


CONFLICT_TRIES = 5  # a controller of the API server (a CRD's status) may write between our GET and PUT


def _read_modify_write(
    kube: KubeClient, res: Resource, name: str, ns: str | None, change: Callable[[JSON], JSON]
) -> JSON:
    """GET, change, PUT; on a conflict GET again, as the applier's task retry does."""
    for _ in range(CONFLICT_TRIES):
        try:
            return kube.replace(res, change(kube.get(res, name, ns)))
        except ApiError as exc:
            if not exc.is_conflict():
                raise
    raise AssertionError(f"{res.kind} {name}: still conflicting after {CONFLICT_TRIES} tries")


def _edited(edit: Edit) -> Callable[[JSON], JSON]:
    def change(live: JSON) -> JSON:
        body: JSON = copy_json(live)
        edit(body)
        return body

    return change


def _merged(required: JSON) -> Callable[[JSON], JSON]:
    def change(live: JSON) -> JSON:
        result = merge.merge(required, live)
        assert result.changed is True and result.changes
        return result.merged

    return change


@pytest.mark.usefixtures("openshift_apis")
@pytest.mark.parametrize("kind", sorted(EDITS))
def test_a_live_object_holding_its_manifest_needs_no_write_and_an_edit_is_found(
    kind: str, kube: KubeClient, namespace: str, cluster_scoped: list[tuple[Resource, str]]
) -> None:
    suffix = uuid.uuid4().hex[:8]
    required = merge.with_owner(typed_manifests(namespace, suffix)[kind], str(uuid.uuid4()))
    res, name = RESOURCES[kind], required["metadata"]["name"]
    ns = _namespace_of(res, namespace)
    assert merge.plan(required, None).action is Action.CREATE
    kube.create(res, required, ns)
    if not res.namespaced:
        cluster_scoped.append((res, name))

    live = kube.get(res, name, ns)
    assert merge.merge(required, live).changed is False, "a freshly created object must need no write"

    enforced, kept = EDITS[kind]
    edited = _read_modify_write(kube, res, name, ns, _edited(enforced))
    assert edited["metadata"]["resourceVersion"] != live["metadata"]["resourceVersion"], "the edit was stored"
    written = _read_modify_write(kube, res, name, ns, _merged(required))  # any answer but 200 raises
    assert written["metadata"]["resourceVersion"] != edited["metadata"]["resourceVersion"]
    assert merge.merge(required, kube.get(res, name, ns)).changed is False, "the merged object holds the manifest"

    before = kube.get(res, name, ns)
    after = _read_modify_write(kube, res, name, ns, _edited(kept))
    assert after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"], "the edit was stored"
    assert merge.merge(required, after).changed is False, "an edit of a field the rules keep needs no write"


def test_a_custom_resource_holding_its_manifest_needs_no_write_under_the_generic_rule(
    kube: KubeClient, namespace: str
) -> None:
    required = merge.with_owner(custom_resource(namespace, "widgets"), str(uuid.uuid4()))
    kube.create(PROMETHEUS_RULES, required, namespace)
    live = kube.get(PROMETHEUS_RULES, "widgets", namespace)
    assert merge.merge(required, live).changed is False

    labelled = copy_json(live)
    _label(labelled)
    live = kube.replace(PROMETHEUS_RULES, labelled)
    assert merge.merge(required, live).changed is False, "metadata alone is not compared by the generic rule"

    edited = copy_json(live)
    edited["spec"]["groups"][0]["rules"][0]["for"] = "1h"
    live = kube.replace(PROMETHEUS_RULES, edited)
    result = merge.merge(required, live)
    assert result.changes == ("spec",)
    written = kube.replace(PROMETHEUS_RULES, result.merged)
    assert "admin" not in written["metadata"].get("labels", {}), "the generic rule replaces labels wholesale"
    assert merge.merge(required, written).changed is False


def test_a_secret_whose_type_the_server_fills_is_written_once_then_left_alone(kube: KubeClient, namespace: str) -> None:
    required = merge.with_owner(secret(namespace, "token"), str(uuid.uuid4()))
    created = kube.create(SECRETS, required, namespace)
    # Upstream's comparison: the server's `type` and `data` (for `stringData`) differ from the manifest.
    assert merge.merge(required, created).changed is True
    applied = merge.fingerprint(required, created)
    live = kube.get(SECRETS, "token", namespace)
    assert merge.plan(required, live, applied).action is Action.NONE

    edited = copy_json(live)
    edited["data"]["key"] = "ZWRpdGVk"  # "edited"
    live = kube.replace(SECRETS, edited)
    step = merge.plan(required, live, applied)
    assert step.action is Action.UPDATE, "a live edit is compared again, and written"
    written = kube.replace(SECRETS, step.body)
    assert written["data"]["key"] == "dmFsdWU="  # "value"
    applied = merge.fingerprint(required, written)
    assert merge.plan(required, kube.get(SECRETS, "token", namespace), applied).action is Action.NONE
