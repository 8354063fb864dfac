"""Helpers for the sync worker's tests and benchmarks on the local API server: a client acting as
the CVO, the ClusterVersion that owns what it creates, removing what a payload created, and reading
what the API server's audit log says the CVO asked."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import CLUSTERVERSIONS, CONFIGMAPS, CRDS, ApiError, KubeClient, Resource
from syncworker.applier import TYPED_RESOURCES, USER_AGENT, Discovery, user_agent
from syncworker.manifest import Manifest
from syncworker.passes import Report
from syncworker.worker import SyncWorker
from testkit.harness.cluster import LocalCluster
from testkit.harness.wait import wait_until

CVO_NAMESPACE = "openshift-cluster-version"
CVO_SERVICE_ACCOUNT = "cluster-version-operator"
CVO_USER = f"system:serviceaccount:{CVO_NAMESPACE}:{CVO_SERVICE_ACCOUNT}"
CLUSTER_ROLE_BINDINGS = Resource("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False)
NAMESPACES = TYPED_RESOURCES[("v1", "Namespace")]
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


def cvo_client(cluster: LocalCluster, version: str) -> KubeClient:
    """A client acting as upstream's CVO: its ServiceAccount (bound to cluster-admin, as upstream's)
    and its user agent."""
    try:
        cluster.client.create(
            CLUSTER_ROLE_BINDINGS,
            {
                "metadata": {"name": "cvo-py-tests-cluster-version-operator"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                "subjects": [{"kind": "ServiceAccount", "name": CVO_SERVICE_ACCOUNT, "namespace": CVO_NAMESPACE}],
            },
        )
    except ApiError as exc:
        if not exc.is_already_exists():
            raise
    token = cluster.service_account_token(CVO_NAMESPACE, CVO_SERVICE_ACCOUNT)
    sa = cluster.client.with_token(token)
    return KubeClient(sa.config, user_agent=user_agent(version), timeout=sa.timeout)


def fresh_cluster_version(client: KubeClient) -> str:
    """A new ClusterVersion `version` without history (any earlier one deleted); its UID."""
    try:
        client.delete(CLUSTERVERSIONS, "version")
    except ApiError as exc:
        if not exc.is_not_found():
            raise
    created = client.create(
        CLUSTERVERSIONS,
        {"metadata": {"name": "version"}, "spec": {"clusterID": "00000000-0000-0000-0000-000000000099"}},
    )
    return str(created["metadata"]["uid"])


def remove_applied(client: KubeClient, manifests: Iterable[Manifest]) -> None:
    """Remove what applying `manifests` may have left: every object deleted, CRDs waited for; a
    Namespace (which this control plane never finishes deleting) only loses its owner references,
    so a later ClusterVersion can own it. Objects that are not there are fine."""
    discovery = Discovery(client)
    crds: list[str] = []
    for manifest in manifests:
        api_version = str(manifest.obj.get("apiVersion"))
        resource = TYPED_RESOURCES.get((api_version, manifest.kind)) or discovery.resource(api_version, manifest.kind)
        if resource is None:
            continue
        namespace = manifest.namespace if resource.namespaced else None
        try:
            if resource == NAMESPACES:
                live = client.get(resource, manifest.name)
                if live["metadata"].pop("ownerReferences", None) is not None:
                    client.replace(resource, live)
                continue
            # Background: a Job's default (orphan) waits for a garbage collector this control plane has not
            client.delete(resource, manifest.name, namespace, propagation_policy="Background")
            _release_finalizers(client, resource, manifest.name, namespace)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
        if resource == CRDS:
            crds.append(manifest.name)
    wait_until(lambda: not any(exists(client, CRDS, name) for name in crds), what=f"CRDs {crds} deleted")


def _release_finalizers(client: KubeClient, resource: Resource, name: str, namespace: str | None) -> None:
    """An object still there after its deletion (an `orphan` finalizer of an earlier delete) loses its
    finalizers, so that it goes."""
    live = client.get(resource, name, namespace)
    if live["metadata"].get("deletionTimestamp") and live["metadata"].get("finalizers") and resource != CRDS:
        live["metadata"]["finalizers"] = []
        client.replace(resource, live)


def exists(client: KubeClient, resource: Resource, name: str, namespace: str | None = None) -> bool:
    try:
        client.get(resource, name, namespace)
    except ApiError as exc:
        if exc.is_not_found():
            return False
        raise
    return True


@dataclass(frozen=True)
class Request:
    """One request as the audit log recorded it (its ResponseComplete event)."""

    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    code: int
    user: str
    user_agent: str
    received: datetime  # requestReceivedTimestamp
    completed: datetime  # stageTimestamp
    uri: str

    @property
    def is_write(self) -> bool:
        return self.verb in WRITE_VERBS

    @property
    def succeeded(self) -> bool:
        return 200 <= self.code < 300


class Audit:
    """The API server's audit log from the moment this object was made."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def requests(self, client: KubeClient, user_agent_prefix: str = USER_AGENT) -> list[Request]:
        """The requests completed since, by user agents starting with `user_agent_prefix`. The log
        is written behind the answers: a request of `client`'s, made now, is waited for first, so
        every request answered before this call is in."""
        marker = f"audit-marker-{uuid.uuid4().hex}"
        try:
            client.get(CONFIGMAPS, marker, "default")
        except ApiError as exc:
            if not exc.is_not_found():
                raise
        wait_until(lambda: any(r.name == marker for r in self._read("")), what="the audit log to catch up")
        return list(self._read(user_agent_prefix))

    def _read(self, prefix: str) -> Iterator[Request]:
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        for line in data.splitlines():
            try:
                event: dict[str, Any] = json.loads(line)
            except ValueError:
                continue
            if event.get("stage") != "ResponseComplete" or not str(event.get("userAgent", "")).startswith(prefix):
                continue
            ref = event.get("objectRef") or {}
            yield Request(
                verb=str(event.get("verb", "")),
                resource=str(ref.get("resource", "")),
                subresource=str(ref.get("subresource", "")),
                namespace=str(ref.get("namespace", "")),
                name=str(ref.get("name", "")),
                code=int((event.get("responseStatus") or {}).get("code") or 0),
                user=str((event.get("user") or {}).get("username", "")),
                user_agent=str(event.get("userAgent", "")),
                received=_timestamp(event.get("requestReceivedTimestamp")),
                completed=_timestamp(event.get("stageTimestamp")),
                uri=str(event.get("requestURI", "")),
            )


def _timestamp(value: object) -> datetime:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


@dataclass
class Reports:
    """The reports a sync worker gave, kept in order (its `on_report`)."""

    items: list[Report] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, report: Report) -> None:
        with self.lock:
            self.items.append(report)

    def all(self) -> list[Report]:
        with self.lock:
            return list(self.items)

    def ends(self) -> list[Report]:
        """The last report of each pass that was given one (a completion or a failure)."""
        return [r for r in self.all() if r.completed or r.failure is not None]

    def wait_end(self, check: Callable[[Report], bool], what: str, timeout: float = 60.0) -> Report:
        """The first end of a pass that satisfies `check`, waiting for it."""
        return wait_until(lambda: next((r for r in self.ends() if check(r)), None), timeout, what)


@dataclass
class Running:
    """A started sync worker, its ClusterOperator informer and its reports."""

    worker: SyncWorker
    informer: Informer
    reports: Reports
