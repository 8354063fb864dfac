"""Shared fixtures: a session-scoped real kube-apiserver, isolation, and stand-ins for the
kubelet and the MCO. Integration tests reuse a running `make cluster-up` (same data dir)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cvo_py.kube import NAMESPACES, ApiError, KubeClient  # noqa: E402
from tests.support import cluster as local  # noqa: E402
from tests.support.kubelet import Kubelet  # noqa: E402
from tests.support.mco import MCO  # noqa: E402

SHARED = REPO.parent / "shared"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--image",
        default=None,
        metavar="REF",
        help="test this built container image (tests/image; `make image-test`)",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # tests/image needs a built image and buildah: only `make image-test` (--image) runs it.
    if collection_path == REPO / "tests" / "image" and not config.getoption("--image"):
        return True
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.getoption("--image"):
        return f"container image under test: {config.getoption('--image')}"
    return "tests/image: not collected (they test a built image: make image-test)"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Anything that uses the real API server is an integration test, so `-m "not integration"`
    # selects the fast pure-logic suite.
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def cluster() -> Iterator[local.LocalCluster]:
    # Reuse a running `make cluster-up`; a cluster this session started is removed afterwards.
    started_here = local.localcluster.running(local.cluster_dir()) is None
    try:
        handle = local.start(local.cluster_dir())
    except local.localcluster.ClusterError as exc:
        pytest.fail(f"the local kube-apiserver is required for integration tests: {exc}", pytrace=False)
    yield handle
    if started_here:
        local.localcluster.down(handle.dir)


@pytest.fixture
def kube(cluster: local.LocalCluster) -> KubeClient:
    return cluster.client


@pytest.fixture
def namespace(request: pytest.FixtureRequest, kube: KubeClient) -> Iterator[str]:
    """A fresh namespace per test (namespaces are never reused: deleted ones stay Terminating)."""
    base = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:30].strip("-")
    name = local.unique_name(base or "t")
    local.ensure_namespace(kube, name)
    yield name
    try:
        kube.delete(NAMESPACES, name)
    except ApiError:
        pass


@pytest.fixture
def kubelet(kube: KubeClient) -> Kubelet:
    return Kubelet(kube)


@pytest.fixture
def mco(kube: KubeClient) -> MCO:
    return MCO(kube)


@pytest.fixture
def sa_client(cluster: local.LocalCluster) -> Callable[[str, str], KubeClient]:
    return cluster.service_account_client


@pytest.fixture
def clusterversion_cleanup(kube: KubeClient) -> Iterator[None]:
    local.delete_all_cluster_scoped_update_objects(kube)
    yield
    local.delete_all_cluster_scoped_update_objects(kube)


class CRDs:
    def __init__(self, cluster: local.LocalCluster) -> None:
        self.cluster = cluster
        self.swapped = False

    def install_clusterversion(self, variant: str) -> None:
        self.cluster.install_clusterversion_crd(variant)
        self.swapped = variant != "current"


@pytest.fixture
def crds(cluster: local.LocalCluster) -> Iterator[CRDs]:
    handle = CRDs(cluster)
    yield handle
    if handle.swapped:
        cluster.install_clusterversion_crd("current")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference data not found at {SHARED} (../shared beside the repository)")
    return SHARED
