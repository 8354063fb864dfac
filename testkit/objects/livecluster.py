"""An oc snapshot (`testkit.objects.scale`, `status.updatestatus.client.snapshot`) loaded into the
local API server as the objects `oc adm upgrade status` reads, with no update status controller:

    loaded = load(kube, snapshot.load(EXAMPLES / "4.14.1-degraded-cv.yaml"))
    ...                       # `upgrade-status --source cluster` reads what oc would read
    loaded.remove()

Each object keeps its labels, annotations, spec and status (status written through its status
subresource, as its controller writes it); what the API server sets (uid, resourceVersion,
creationTimestamp, managedFields) is dropped. The machine-config-operator Deployment is created
with an image that matches no `operator-image` version (as oc's snapshot mode, whose pull spec is
""), unless the snapshot has one of its own. Route `openshift-monitoring/thanos-querier` is made
by `route()` (the Route CRD is installed with it).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    NODES,
    ApiError,
    KubeClient,
    Resource,
)
from status.updatestatus.client.cluster import DEPLOYMENTS
from status.updatestatus.client.routealerts import MONITORING, ROUTE, ROUTES
from status.updatestatus.client.snapshot import Snapshot
from status.updatestatus.insights.inputs import MCO_DEPLOYMENT, MCO_NAMESPACE
from testkit.checkout import REPO
from testkit.harness import localcluster
from testkit.harness.cluster import LocalCluster, delete_all_cluster_scoped_update_objects, ensure_namespace

ROUTE_CRD = REPO / "tests" / "crds" / "route.yaml"
SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink")
# An image no ClusterOperator names as its operator-image: machine-config is never "updated" by it,
# as in oc's snapshot mode without a Deployment file (pull spec "").
UNMATCHED_MCO_IMAGE = "registry.invalid/machine-config-operator:from-no-release"
WRITERS = 8  # objects created at once (5,000 nodes load in about a minute)


@dataclass
class Loaded:
    kube: KubeClient
    created: list[tuple[Resource, str, str | None]] = field(default_factory=list)

    def remove(self) -> None:
        """Delete what was created (the Route CRD stays: other tests may use it)."""
        def delete(item: tuple[Resource, str, str | None]) -> None:
            res, name, namespace = item
            with contextlib.suppress(ApiError):
                self.kube.delete(res, name, namespace=namespace)

        _each(delete, reversed(self.created))
        self.created.clear()


def _each(call: Callable[[Any], None], items: Iterable[Any]) -> None:
    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(call, items))


def clean(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as a client would create it: what the API server sets is left out."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SERVER_SET}
    return {**{k: v for k, v in obj.items() if k not in ("metadata",)}, "metadata": meta}


def _create(kube: KubeClient, res: Resource, obj: dict[str, Any], loaded: Loaded, namespace: str | None = None) -> None:
    body = clean(obj)
    status = body.pop("status", None)
    name = body["metadata"]["name"]
    made = kube.create(res, body, namespace=namespace)
    loaded.created.append((res, name, namespace))
    if status:
        made["status"] = status
        kube.replace_status(res, made)


def deployment(image: str = UNMATCHED_MCO_IMAGE) -> dict[str, Any]:
    """The machine-config-operator Deployment, as far as oc reads it (its container's image)."""
    labels = {"k8s-app": MCO_DEPLOYMENT}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": MCO_DEPLOYMENT, "namespace": MCO_NAMESPACE},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": MCO_DEPLOYMENT, "image": image}]},
            },
        },
    }


def load(kube: KubeClient, snap: Snapshot, *, with_deployment: bool = True) -> Loaded:
    """Create the snapshot's objects (after removing any ClusterVersion and ClusterOperators left
    by other tests); `with_deployment=False` leaves the MCO Deployment out."""
    delete_all_cluster_scoped_update_objects(kube)
    loaded = Loaded(kube)
    try:
        _create(kube, CLUSTERVERSIONS, snap.clusterversion, loaded)
        _each(lambda o: _create(kube, CLUSTEROPERATORS, o, loaded), snap.operators)
        _each(lambda o: _create(kube, MACHINECONFIGPOOLS, o, loaded), snap.pools)
        _each(lambda o: _create(kube, MACHINECONFIGS, o, loaded), snap.machineconfigs)
        _each(lambda o: _create(kube, NODES, o, loaded), snap.nodes)
        if with_deployment:
            create_deployment(kube, loaded, snap.mco_deployment or deployment())
    except BaseException:
        loaded.remove()
        raise
    return loaded


def create_deployment(kube: KubeClient, loaded: Loaded, body: dict[str, Any] | None = None) -> None:
    """The machine-config-operator Deployment (`deployment()` unless `body`), removed with the rest."""
    ensure_namespace(kube, MCO_NAMESPACE)
    _create(kube, DEPLOYMENTS, body or deployment(), loaded, namespace=MCO_NAMESPACE)


def route(cluster: LocalCluster, host: str, loaded: Loaded | None = None) -> None:
    """Route openshift-monitoring/thanos-querier with `host` (the Route CRD installed first)."""
    localcluster.apply_crd(cluster.handle, ROUTE_CRD)
    kube = cluster.client
    ensure_namespace(kube, MONITORING)
    with contextlib.suppress(ApiError):
        kube.delete(ROUTES, ROUTE, namespace=MONITORING)
    body = {"metadata": {"name": ROUTE, "namespace": MONITORING}, "spec": {"host": host, "to": {"name": ROUTE}}}
    kube.create(ROUTES, body, namespace=MONITORING)
    if loaded is not None:
        loaded.created.append((ROUTES, ROUTE, MONITORING))


CLUSTER_ROLES = Resource("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False)
CLUSTER_ROLE_BINDINGS = Resource("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False)
ROLES = Resource("rbac.authorization.k8s.io/v1", "Role", "roles", True)
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True)
READERS_NAMESPACE = "cvo-py-upgrade-status-readers"

# What `oc adm upgrade status` reads, as RBAC grants it: (namespace or None, group, resource, verb).
READS = (
    (None, "config.openshift.io", "clusterversions", "get"),
    (None, "config.openshift.io", "clusteroperators", "list"),
    (None, "machineconfiguration.openshift.io", "machineconfigpools", "list"),
    (None, "", "nodes", "list"),
    (None, "machineconfiguration.openshift.io", "machineconfigs", "get"),
    (MCO_NAMESPACE, "apps", "deployments", "get"),
    (MONITORING, "route.openshift.io", "routes", "get"),
    # beyond oc: the cluster's service and ingress CAs the alerts' TLS trusts where they can be read
    ("openshift-config-managed", "", "configmaps", "get"),
)


def reader(cluster: LocalCluster, directory: Path, name: str, *, without: Iterable[str] = (),
           monitoring_view: bool = False) -> str:  # fmt: skip
    """The kubeconfig of ServiceAccount `name` allowed exactly what oc reads (a ClusterRole for
    the cluster-scoped reads, a Role in each namespace read), but the resources named in
    `without`; with `monitoring_view`, also the cluster's monitoring data (cluster-monitoring-view)."""
    from testkit.fakes.thanos import ensure_cluster_monitoring_view

    kube = cluster.client
    token = cluster.service_account_token(READERS_NAMESPACE, name)
    user = f"system:serviceaccount:{READERS_NAMESPACE}:{name}"
    subjects = [{"kind": "User", "name": user}]
    omitted = set(without)
    grants: dict[str | None, list[dict[str, Any]]] = {}
    for namespace, group, resource, verb in READS:
        if resource not in omitted:
            grants.setdefault(namespace, []).append({"apiGroups": [group], "resources": [resource], "verbs": [verb]})
    role_name = f"cvo-py-reader-{name}"

    def put(res: Resource, body: dict[str, Any], namespace: str | None = None) -> None:
        with contextlib.suppress(ApiError):
            kube.delete(res, body["metadata"]["name"], namespace=namespace)
        kube.create(res, body, namespace=namespace)

    for namespace, rules in grants.items():
        role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole" if namespace is None else "Role",
                    "name": role_name}  # fmt: skip
        if namespace is None:
            put(CLUSTER_ROLES, {"metadata": {"name": role_name}, "rules": rules})
            put(CLUSTER_ROLE_BINDINGS, {"metadata": {"name": role_name}, "roleRef": role_ref, "subjects": subjects})
        else:
            ensure_namespace(kube, namespace)
            meta = {"name": role_name, "namespace": namespace}
            put(ROLES, {"metadata": meta, "rules": rules}, namespace)
            put(ROLE_BINDINGS, {"metadata": meta, "roleRef": role_ref, "subjects": subjects}, namespace)
    if monitoring_view:
        ensure_cluster_monitoring_view(kube)
        role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-monitoring-view"}
        put(CLUSTER_ROLE_BINDINGS, {"metadata": {"name": f"{role_name}-monitoring"}, "roleRef": role_ref,
                                    "subjects": subjects})  # fmt: skip
    return cluster.write_kubeconfig(directory / f"{name}.kubeconfig", token)


def upgrade_status(kubeconfig: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`cluster-version-operator upgrade-status --kubeconfig KUBECONFIG ARGS`, run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "cvo_py", "upgrade-status", "--kubeconfig", kubeconfig, *args],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
