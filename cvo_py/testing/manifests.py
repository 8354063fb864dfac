"""The install/ manifests as the CVO would apply them: load, create-or-replace, delete."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from cvo_py.kube import JSON, NAMESPACES, SERVICEACCOUNTS, ApiError, KubeClient, Resource

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "install"

KINDS: dict[str, Resource] = {
    "Namespace": NAMESPACES,
    "ServiceAccount": SERVICEACCOUNTS,
    "ClusterRole": Resource("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False),
    "ClusterRoleBinding": Resource("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False),
    "Role": Resource("rbac.authorization.k8s.io/v1", "Role", "roles", True),
    "RoleBinding": Resource("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True),
    "Deployment": Resource("apps/v1", "Deployment", "deployments", True),
    "Service": Resource("v1", "Service", "services", True),
    "ServiceMonitor": Resource("monitoring.coreos.com/v1", "ServiceMonitor", "servicemonitors", True),
    "PrometheusRule": Resource("monitoring.coreos.com/v1", "PrometheusRule", "prometheusrules", True),
    "ValidatingAdmissionPolicy": Resource(
        "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", False
    ),
    "ValidatingAdmissionPolicyBinding": Resource(
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        False,
    ),
}


class UnknownKind(ValueError):
    pass


def resource_of(doc: JSON) -> Resource:
    res = KINDS.get(doc["kind"])
    if res is None:
        raise UnknownKind(f"install/ has a {doc['kind']}, which the test support does not know how to apply")
    return res


def load(pattern: str = "*.yaml") -> list[JSON]:
    """Every document of the install/ files matching `pattern`, in run-level (file name) order."""
    docs: list[JSON] = []
    for path in sorted(INSTALL.glob(pattern)):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def apply(kube: KubeClient, docs: list[JSON]) -> None:
    """Create each object, or replace it when it exists."""
    for doc in docs:
        res = resource_of(doc)
        meta = doc["metadata"]
        try:
            kube.create(res, doc, meta.get("namespace"))
        except ApiError as exc:
            if not exc.is_already_exists():
                raise
            current = kube.get(res, meta["name"], meta.get("namespace"))
            body = copy.deepcopy(doc)
            body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            kube.replace(res, body)


def delete(kube: KubeClient, docs: list[JSON]) -> None:
    for doc in reversed(docs):
        if doc["kind"] == "Namespace":
            continue  # namespaces never finish terminating without a controller manager
        try:
            kube.delete(resource_of(doc), doc["metadata"]["name"], doc["metadata"].get("namespace"))
        except ApiError as exc:
            if not exc.is_not_found():
                raise


def cluster_scoped(docs: list[JSON]) -> list[JSON]:
    """The manifests a test must delete itself (the namespace excepted: it never finishes terminating)."""
    return [d for d in docs if not resource_of(d).namespaced and d["kind"] != "Namespace"]
