"""Fixtures of the Update Status Controller and upgrade-status tests (status/updatestatus)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cvo_py.runtime.kube import CLUSTEROPERATORS, KubeClient
from testkit.fakes.mco import MCO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster


@pytest.fixture
def mco(kube: KubeClient) -> MCO:
    """The Machine Config Operator's part: Node annotations and conditions, pool status."""
    return MCO(kube)


@pytest.fixture
def controller_kubeconfig(cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path) -> Iterator[str]:
    """The install/ manifests in `namespace`; a kubeconfig with the controller's ServiceAccount token."""
    docs = h.render(h.load_manifests(), namespace)
    h.apply(kube, docs)
    try:
        token = cluster.service_account_token(namespace, h.SERVICE_ACCOUNT)
        yield cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token)
    finally:
        h.delete(kube, h.outside(docs, namespace))


@pytest.fixture
def update_without_nodes(kube: KubeClient, clusterversion_cleanup: None) -> Iterator[datetime]:
    """An update in progress for ten minutes, one ClusterOperator and no nodes, the ConfigMap API
    opted in (install/ applied, no Lease left over); yields when the update started."""
    h.apply(kube, h.load_manifests())
    h.delete_configmap(kube, h.NAMESPACE)
    h.delete_lease(kube, h.NAMESPACE)
    installed = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    h.create_clusterversion(kube, "4.15.8", installed)
    h.create_operator(kube, "authentication", "4.15.8", installed)
    started = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    h.start_update(kube, "4.16.0", started)
    h.create_configmap(kube, h.NAMESPACE)
    yield started
    h.delete_configmap(kube, h.NAMESPACE)
    h.delete_lease(kube, h.NAMESPACE)
    h.delete_objects(kube, [(CLUSTEROPERATORS, "authentication")])
