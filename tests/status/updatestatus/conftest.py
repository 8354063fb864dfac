"""Fixtures of the Update Status Controller and upgrade-status tests (status/updatestatus)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cvo_py.kube import KubeClient
from cvo_py.testing import usc as h
from cvo_py.testing.cluster import LocalCluster
from cvo_py.testing.mco import MCO


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
