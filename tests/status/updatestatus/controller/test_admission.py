"""Opt-in is enforced by the API server: the install/ ValidatingAdmissionPolicy denies the
controller's ServiceAccount (and only it) the creation of ConfigMap `status-api-cm-prototype`.

RBAC cannot restrict `create` by name, and the controller needs `create` for its node shards; the
policy closes that gap. Requests are made with real ServiceAccount tokens against the local
kube-apiserver, which enforces ValidatingAdmissionPolicy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from cvo_py.runtime.kube import CONFIGMAPS, JSON, ApiError, KubeClient, Resource
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster

SHARD = f"{h.CONFIGMAP}-nodes-0"
APPLY_PATCH = "application/apply-patch+yaml"
ROLES = Resource("rbac.authorization.k8s.io/v1", "Role", "roles", True)
ROLEBINDINGS = Resource("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True)


def policy_message() -> str:
    """The denial message, as the install/ manifest states it (folded YAML: one line)."""
    (policy,) = [d for d in h.load_manifests() if d["kind"] == "ValidatingAdmissionPolicy"]
    (validation,) = policy["spec"]["validations"]
    return str(validation["message"])


@pytest.fixture
def installed(cluster: LocalCluster, kube: KubeClient, namespace: str) -> Iterator[KubeClient]:
    """The install/ manifests in `namespace`, enforced; yields a client acting as the controller's SA."""
    docs = h.render(h.load_manifests(), namespace)
    h.apply(kube, docs)
    controller = cluster.service_account_client(namespace, h.SERVICE_ACCOUNT)
    try:
        # The API server loads a new policy from its informer: wait until it denies (a dry run
        # passes admission and RBAC but stores nothing).
        h.wait_for("the policy to be enforced", lambda: enforced(controller, namespace))
        yield controller
    finally:
        h.delete(kube, h.outside(docs, namespace))


def enforced(controller: KubeClient, namespace: str) -> bool:
    error = denial(lambda: dry_run_create(controller, namespace))
    return error is not None and "ValidatingAdmissionPolicy" in error.message


def dry_run_create(client: KubeClient, namespace: str) -> JSON:
    body = {"metadata": {"name": h.CONFIGMAP, "namespace": namespace}}
    result: JSON = client.request("POST", CONFIGMAPS.path(namespace), query={"dryRun": "All"}, body=body)
    return result


def denial(request: Callable[[], object]) -> ApiError | None:
    """The ApiError a request fails with, None when it succeeds."""
    try:
        request()
    except ApiError as exc:
        return exc
    return None


def assert_denied_by_the_policy(error: ApiError | None) -> None:
    assert error is not None, "the request was allowed"
    assert (error.status, error.reason) == (403, "Forbidden"), error
    assert "ValidatingAdmissionPolicy 'update-status-controller-opt-in" in error.message, error.message
    assert policy_message() in error.message, error.message


def test_the_controller_cannot_create_the_main_configmap(
    installed: KubeClient, kube: KubeClient, namespace: str
) -> None:
    controller = installed
    error = denial(
        lambda: controller.create(CONFIGMAPS, {"metadata": {"name": h.CONFIGMAP, "namespace": namespace}})
    )
    assert_denied_by_the_policy(error)
    print(f"\nas the controller: {error}")
    # Server-side apply creates a missing object with only `patch`: that is a CREATE too.
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": h.CONFIGMAP}}
    assert_denied_by_the_policy(
        denial(
            lambda: controller.request(
                "PATCH",
                CONFIGMAPS.path(namespace, h.CONFIGMAP),
                query={"fieldManager": "update-status-controller"},
                body=applied,
                content_type=APPLY_PATCH,
            )
        )
    )
    assert h.configmap_data(kube, namespace) is None


def test_the_controller_still_creates_its_shards_and_patches_the_opted_in_configmap(
    installed: KubeClient, kube: KubeClient, namespace: str
) -> None:
    controller = installed
    shard = controller.create(CONFIGMAPS, {"metadata": {"name": SHARD, "namespace": namespace}})
    assert shard["metadata"]["name"] == SHARD
    h.create_configmap(kube, namespace)  # the administrator opts in
    controller.patch(CONFIGMAPS, h.CONFIGMAP, {"data": {"usc-probe": "1"}}, namespace)
    assert h.configmap_data(kube, namespace) == {"usc-probe": "1"}


def test_an_administrator_opts_in(installed: KubeClient, kube: KubeClient, namespace: str) -> None:
    created = h.create_configmap(kube, namespace, {"note": "opted in by the admin"})
    assert created["metadata"]["name"] == h.CONFIGMAP
    assert h.configmap_data(kube, namespace) == {"note": "opted in by the admin"}


def test_only_the_controllers_service_account_is_matched(
    installed: KubeClient, cluster: LocalCluster, kube: KubeClient, namespace: str
) -> None:
    """Another ServiceAccount with the same `create` grant (an operator acting for the admin) may
    create the ConfigMap: the policy names the controller, not every ServiceAccount."""
    other = "opt-in-helper"
    kube.create(h.KINDS["ServiceAccount"], {"metadata": {"name": other, "namespace": namespace}})
    kube.create(
        ROLES,
        {
            "metadata": {"name": other, "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}],
        },
    )
    kube.create(
        ROLEBINDINGS,
        {
            "metadata": {"name": other, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": other},
            "subjects": [{"kind": "ServiceAccount", "name": other, "namespace": namespace}],
        },
    )
    client = cluster.service_account_client(namespace, other)
    created = h.wait_for(  # RBAC caches the new binding within moments
        "the helper's create to be authorised",
        lambda: client.create(CONFIGMAPS, {"metadata": {"name": h.CONFIGMAP, "namespace": namespace}}),
    )
    assert created["metadata"]["name"] == h.CONFIGMAP


def test_the_policy_names_the_installed_service_account_and_namespace() -> None:
    """The policy is written with literal names: they must be those of the other manifests."""
    docs = {d["kind"]: d for d in h.load_manifests()}
    policy, binding = docs["ValidatingAdmissionPolicy"], docs["ValidatingAdmissionPolicyBinding"]
    namespace = docs["Namespace"]["metadata"]["name"]
    account = docs["ServiceAccount"]["metadata"]
    assert account["namespace"] == namespace
    assert policy["spec"]["matchConstraints"]["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": namespace}
    }
    (condition,) = policy["spec"]["matchConditions"]
    user = f"system:serviceaccount:{namespace}:{account['name']}"
    assert condition["expression"].split() == ["request.userInfo.username", "==", f"'{user}'"]
    (validation,) = policy["spec"]["validations"]
    assert validation["expression"] == f"object.metadata.name != '{h.CONFIGMAP}'"
    assert binding["spec"] == {"policyName": policy["metadata"]["name"], "validationActions": ["Deny"]}
    for doc in (policy, binding):
        annotations = doc["metadata"]["annotations"]
        assert annotations["release.openshift.io/feature-set"] == "DevPreviewNoUpgrade"
        assert annotations["include.release.openshift.io/self-managed-high-availability"] == "true"
