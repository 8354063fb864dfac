"""The session's real local control plane, as tests and benchmarks see it."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    CONFIGMAPS,
    NAMESPACES,
    SERVICEACCOUNTS,
    ApiError,
    KubeClient,
    connect,
)
from status.clusterversion import upgradeable
from testkit.checkout import REPO
from testkit.harness import localcluster
from testkit.harness.localcluster import free_port as free_port  # re-exported: the tests' import

CRD_DIR = REPO / "tests" / "crds"
CLUSTERVERSION_CRDS = {"current": CRD_DIR / "clusterversion.yaml", "4.13": CRD_DIR / "clusterversion-4.13.yaml"}


@dataclass
class LocalCluster:
    handle: localcluster.Cluster
    client: KubeClient = field(init=False)

    def __post_init__(self) -> None:
        self.client = connect(self.handle.kubeconfig, user_agent="cvo-py-tests")

    @property
    def kubeconfig(self) -> str:
        return self.handle.kubeconfig

    @property
    def state(self) -> dict[str, Any]:
        return self.handle.state

    @property
    def dir(self) -> Path:
        return self.handle.dir

    def compact(self) -> int:
        """Compact etcd now: resourceVersions before this point answer 410 Gone."""
        return localcluster.compact(self.handle)

    def wal_fsyncs(self) -> dict[float, int]:
        """etcd's WAL fsync histogram so far (see `localcluster.etcd_wal_fsyncs`)."""
        return localcluster.etcd_wal_fsyncs(self.handle)

    def restart(self) -> None:
        """Stop and start the API server on the same port, keeping its data."""
        self.handle = localcluster.restart(self.handle.dir)

    def install_clusterversion_crd(self, variant: str) -> None:
        localcluster.apply_crd(self.handle, CLUSTERVERSION_CRDS[variant])

    def service_account_token(self, namespace: str, name: str, seconds: int = 3600) -> str:
        ensure_namespace(self.client, namespace)
        try:
            self.client.create(SERVICEACCOUNTS, {"metadata": {"name": name, "namespace": namespace}})
        except ApiError as exc:
            if not exc.is_already_exists():
                raise
        path = SERVICEACCOUNTS.path(namespace, name, "token")
        review = self.client.request(
            "POST",
            path,
            body={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": seconds},
            },
        )
        return str(review["status"]["token"])

    def service_account_client(self, namespace: str, name: str) -> KubeClient:
        return self.client.with_token(self.service_account_token(namespace, name))

    def write_kubeconfig(self, path: Path, token: str, server: str | None = None) -> str:
        """A kubeconfig for the same server (or `server`, e.g. a proxy in front of it: the same
        certificate must be valid for it), authenticated with `token` (e.g. a ServiceAccount's)."""
        admin = yaml.safe_load(Path(self.kubeconfig).read_text())
        if server is not None:
            for entry in admin["clusters"]:
                entry["cluster"]["server"] = server
        admin["users"] = [{"name": "user", "user": {"token": token}}]
        admin["contexts"] = [{"name": "local", "context": {"cluster": "local", "user": "user"}}]
        path.write_text(yaml.safe_dump(admin))
        return str(path)


def start(data_dir: Path | None = None) -> LocalCluster:
    return LocalCluster(localcluster.up(data_dir, quiet=True))


def ensure_namespace(client: KubeClient, name: str) -> None:
    try:
        client.create(NAMESPACES, {"metadata": {"name": name}})
    except ApiError as exc:
        if not exc.is_already_exists():
            raise


def unique_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def put_configmap(client: KubeClient, namespace: str, name: str, data: dict[str, str]) -> None:
    """ConfigMap `namespace/name` holding exactly `data`, created (with its namespace) or replaced."""
    ensure_namespace(client, namespace)
    body = {"metadata": {"name": name, "namespace": namespace}, "data": dict(data)}
    try:
        client.create(CONFIGMAPS, body, namespace)
    except ApiError as exc:
        if not exc.is_already_exists():
            raise
        current = client.get(CONFIGMAPS, name, namespace)
        current["data"] = dict(data)
        client.replace(CONFIGMAPS, current)


def delete_all_cluster_scoped_update_objects(client: KubeClient) -> None:
    """ClusterVersion and ClusterOperators are cluster singletons: tests start from none. The
    admin-ack ConfigMaps are left as install/ creates them on every cluster (no gates, no acks):
    without them Upgradeable is False (AdminAckUnknown), as upstream's."""
    for namespace, name in (upgradeable.ADMIN_GATES, upgradeable.ADMIN_ACKS):
        put_configmap(client, namespace, name, {})
    for res in (CLUSTERVERSIONS, CLUSTEROPERATORS):
        try:
            items = client.list(res).get("items", [])
        except ApiError as exc:
            if exc.is_not_found():
                continue
            raise
        for item in items:
            try:
                client.delete(res, item["metadata"]["name"])
            except ApiError as exc:
                if not exc.is_not_found():
                    raise


def cluster_dir() -> Path:
    return Path(os.environ.get("CVO_PY_CLUSTER_DIR") or REPO / ".local-cluster").resolve()
