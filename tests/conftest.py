"""Shared fixtures: a session-scoped real kube-apiserver, isolation, and stand-ins for the
kubelet and the MCO. Integration tests reuse a running `make cluster-up` (same data dir)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cvo_py.kube import NAMESPACES, ApiError, KubeClient
from cvo_py.testing import cluster as local
from cvo_py.testing import leaks
from cvo_py.testing.kubelet import Kubelet
from cvo_py.testing.mco import MCO

REPO = Path(__file__).resolve().parents[1]

SHARED = REPO.parent / "shared"

pytest_plugins = ["cvo_py.testing.httpserve", "cvo_py.testing.prometheus"]  # http_server, prometheus

# How long a thread or child process that a test asked to stop may take to finish after the test.
LEAK_GRACE_SECONDS = 5.0


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


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Fails the test that leaves a thread or child process running (an informer, a controller, a
    server, a subprocess). Session and module fixtures are set up before this snapshot, so what
    they own is not the test's; processes that outlive tests on purpose are declared with
    `leaks.session_owned`."""
    before = leaks.snapshot()
    yield
    found = leaks.leaks(before, LEAK_GRACE_SECONDS)
    if found:
        pytest.fail(
            f"the test left {len(found)} thread(s)/process(es) running "
            f"{LEAK_GRACE_SECONDS:.0f}s after it ended:\n" + "\n".join(found),
            pytrace=False,
        )


@pytest.fixture(scope="session")
def cluster() -> Iterator[local.LocalCluster]:
    # Reuse a running `make cluster-up`; a cluster this session started is removed afterwards.
    started_here = local.localcluster.running(local.cluster_dir()) is None
    try:
        handle = local.start(local.cluster_dir())
    except local.localcluster.ClusterError as exc:
        pytest.fail(f"the local kube-apiserver is required for integration tests: {exc}", pytrace=False)
    # The API server belongs to the session, also after a test restarts it (new process, same data).
    leaks.session_owned(lambda: [int(handle.state["pid"])])
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
