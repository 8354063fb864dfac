"""The install/ manifests as the CVO would apply them: render, load, create-or-replace, delete.

Every file is rendered first, as the CVO renders its image's /manifests (a Go template; see
`syncworker.render`), with `RENDER_DATA`: what tests apply is what the CVO would apply.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from cvo_py.runtime.kube import CONFIGMAPS, JSON, NAMESPACES, SERVICEACCOUNTS, SERVICES, ApiError, KubeClient, Resource
from syncworker.render import RenderData
from syncworker.render import render as render_template
from testkit.checkout import INSTALL

# The operator side (`start`), as upstream ships the CVO.
CVO_FILES = "0000_00_cluster-version-operator_*.yaml"
CVO_NAMESPACE = "openshift-cluster-version"
CVO_SERVICE_ACCOUNT = "cluster-version-operator"
# The release image the tests render install/ with (`{{.ReleaseImage}}`: the CVO's own release).
RELEASE_IMAGE = "localhost/cvo-py:dev"
RENDER_DATA = RenderData(release_image=RELEASE_IMAGE)
# The flags of the Deployment whose values belong to the node the Pod runs on: the release it runs,
# where it listens, its certificate files. A process on this machine gives its own values.
NODE_LOCAL_FLAGS = ("--release-image", "--listen", "--serving-cert-file", "--serving-key-file")
# Replaced by --kubeconfig off the cluster (in a Pod they point at the node's API server).
IN_CLUSTER_ENV = ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")

KINDS: dict[str, Resource] = {
    "Namespace": NAMESPACES,
    "ConfigMap": CONFIGMAPS,
    "ServiceAccount": SERVICEACCOUNTS,
    "ClusterRole": Resource("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False),
    "ClusterRoleBinding": Resource("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False),
    "Role": Resource("rbac.authorization.k8s.io/v1", "Role", "roles", True),
    "RoleBinding": Resource("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True),
    "Deployment": Resource("apps/v1", "Deployment", "deployments", True),
    "Service": SERVICES,
    "NetworkPolicy": Resource("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", True),
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


def files(pattern: str = "*.yaml") -> list[Path]:
    """The install/ files matching `pattern`, in run-level (file name) order."""
    return sorted(INSTALL.glob(pattern))


def rendered(path: Path, data: RenderData = RENDER_DATA) -> str:
    """One install/ file as the CVO renders it (a TemplateError when it would not)."""
    return render_template(path.read_text(encoding="utf-8"), data)


def documents(text: str) -> list[JSON]:
    return [d for d in yaml.safe_load_all(text) if d]


def load(pattern: str = "*.yaml", data: RenderData = RENDER_DATA) -> list[JSON]:
    """Every document of the install/ files matching `pattern`, rendered, in run-level order."""
    docs: list[JSON] = []
    for path in files(pattern):
        docs.extend(documents(rendered(path, data)))
    return docs


def write_rendered(directory: Path, data: RenderData = RENDER_DATA, pattern: str = "*.yaml") -> list[Path]:
    """install/ rendered into `directory`, one file per file (for `kubectl apply -f directory`)."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for path in files(pattern):
        target = directory / path.name
        target.write_text(rendered(path, data), encoding="utf-8")
        out.append(target)
    return out


def apply(kube: KubeClient, docs: list[JSON]) -> None:
    """Create each object, or replace it when it exists."""
    for doc in docs:
        create_or_replace(kube, resource_of(doc), doc)


def create_or_replace(kube: KubeClient, res: Resource, doc: JSON) -> None:
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


def outside(docs: list[JSON], namespace: str) -> list[JSON]:
    """The rendered manifests a test in `namespace` must delete itself: cluster-scoped ones and those
    in other namespaces (kube-system). Its namespace's own objects go with it (deleting a namespace
    never finishes here, without a controller manager, but nothing else shares its name)."""
    return [d for d in docs if d["kind"] != "Namespace" and d["metadata"].get("namespace") != namespace]


def render(docs: list[JSON], source_namespace: str, namespace: str) -> list[JSON]:
    """The manifests moved from `source_namespace` into `namespace`; objects outside it
    (cluster-scoped, or in another namespace such as kube-system) get `-<namespace>` appended to
    their names, and bindings of the roles among them follow (a binding to a role the platform
    provides, such as cluster-monitoring-view, keeps its reference), so several tests can hold
    their own copies at once."""
    if namespace == source_namespace:
        return copy.deepcopy(docs)
    out = list(yaml.safe_load_all(yaml.safe_dump_all(docs).replace(source_namespace, namespace)))
    renamed = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in out}
    for doc in out:
        meta = doc["metadata"]
        if doc["kind"] != "Namespace" and meta.get("namespace") != namespace:
            meta["name"] = f"{meta['name']}-{namespace}"
        ref = doc.get("roleRef")
        role_namespace = None if ref is None or ref["kind"] == "ClusterRole" else meta.get("namespace")
        if ref and (ref["kind"], role_namespace, ref["name"]) in renamed and (
            ref["kind"] == "ClusterRole" or role_namespace != namespace
        ):
            ref["name"] = f"{ref['name']}-{namespace}"
        if doc["kind"] == "ValidatingAdmissionPolicyBinding":
            doc["spec"]["policyName"] = f"{doc['spec']['policyName']}-{namespace}"
    return out


def start_container(docs: list[JSON] | None = None) -> JSON:
    """The container of the Deployment that runs `start`."""
    deployments = [d for d in (docs if docs is not None else load(CVO_FILES)) if d["kind"] == "Deployment"]
    assert len(deployments) == 1, f"expected one Deployment in install/{CVO_FILES}, found {len(deployments)}"
    containers = deployments[0]["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1, "the start Deployment has one container"
    container: JSON = containers[0]
    return container


# The cluster's endpoints `start` reaches out to, here on this machine: no update service (a port
# that refuses at once; a test that wants one passes `--update-service` again) and no Prometheus.
# Without these, a ClusterVersion with a channel would send `start` to the public update service.
NO_UPDATE_SERVICE = "--update-service=http://127.0.0.1:9/api/upgrades_info/v1/graph"
LOCAL_ENDPOINTS = (NO_UPDATE_SERVICE, "--promql-url=")


@dataclass(frozen=True)
class ServiceAccountFiles:
    """What the Pod's ServiceAccount volume holds, as files here: the token, and the service CA
    OpenShift adds to it (`start` reads both by default for Thanos Querier)."""

    token: str
    service_ca: str

    def flags(self) -> tuple[str, ...]:
        return (f"--promql-token-file={self.token}", f"--promql-ca-file={self.service_ca}")


def start_argv(
    local: Mapping[str, str],
    kubeconfig: str,
    docs: list[JSON] | None = None,
    service_account: ServiceAccountFiles | None = None,
) -> list[str]:
    """`cluster-version-operator start` exactly as the Deployment runs it (its container's args,
    in order), as a process here: `local` gives the value of every node-local flag,
    `--kubeconfig` takes the place of the in-cluster configuration, and `LOCAL_ENDPOINTS` that of
    the cluster's update service and Prometheus. With `service_account`, Prometheus is the
    Deployment's own (Thanos Querier at its Service's cluster IP), reached with those files in
    place of the ServiceAccount volume's. Nothing else may differ."""
    if set(local) != set(NODE_LOCAL_FLAGS):
        raise ValueError(f"give exactly the node-local flags {NODE_LOCAL_FLAGS}, not {sorted(local)}")
    args: list[str] = []
    seen: set[str] = set()
    for arg in start_container(docs)["args"]:
        flag, sep, _ = arg.partition("=")
        if flag in local:
            if not sep:
                raise ValueError(f"the Deployment passes {flag} without '=': write it as {flag}=VALUE")
            arg = f"{flag}={local[flag]}"
            seen.add(flag)
        args.append(arg)
    missing = set(NODE_LOCAL_FLAGS) - seen
    if missing:
        raise ValueError(f"the Deployment no longer passes {sorted(missing)}")
    # The image's entrypoint is `cluster-version-operator`, the console script of cvo_py.cli:main.
    endpoints = LOCAL_ENDPOINTS if service_account is None else (NO_UPDATE_SERVICE, *service_account.flags())
    return [sys.executable, "-m", "cvo_py", *args, f"--kubeconfig={kubeconfig}", *endpoints]


def start_env(node_name: str, docs: list[JSON] | None = None) -> dict[str, str]:
    """The environment the Deployment gives `start`: NODE_NAME as the downward API sets it
    (spec.nodeName), literal values as they are; the in-cluster API address is left out."""
    env: dict[str, str] = {}
    for var in start_container(docs).get("env") or []:
        if var["name"] in IN_CLUSTER_ENV:
            continue
        if "value" in var:
            env[var["name"]] = str(var["value"])
        elif (var.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
            env[var["name"]] = node_name
        else:
            raise ValueError(f"the Deployment sets {var['name']} in a way the tests do not reproduce: {var}")
    return env
