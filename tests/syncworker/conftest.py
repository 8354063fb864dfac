"""Fixtures of the sync worker's tests (syncworker/): the facts' synthetic payload and its update
target, written and loaded; on the local API server, a client acting as the CVO, the ClusterVersion
owning what it creates, running sync workers, and no objects left of the payloads."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import CLUSTEROPERATORS, KubeClient
from syncworker.applier import Applier
from syncworker.load import Payload, load_payload
from syncworker.passes import TaskBackoff, Timing
from syncworker.select import Selection
from syncworker.worker import SyncWorker
from testkit.harness.cluster import LocalCluster
from testkit.harness.syncworker import Reports, Running, cvo_client, fresh_cluster_version, remove_applied
from testkit.objects.payloads import (
    RELEASE_IMAGE,
    SECTION8_TARGET,
    SECTION8_VERSION,
    image_of,
    write_section8,
)

# Upstream's back-offs, shrunk: 4 tries installing, 2 tries otherwise (then a last sleep).
QUICK_INSTALL = TaskBackoff(0.1, 2.0, 4)
QUICK = TaskBackoff(1.0, 1.3, 3, 1.5)


@pytest.fixture(scope="module")
def section8_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The facts' synthetic payload 4.99.0 (§8), written once per module; tests must not change it."""
    return write_section8(tmp_path_factory.mktemp("section8") / "payload")


@pytest.fixture(scope="module")
def section8(section8_dir: Path) -> Payload:
    """That payload loaded for a Default cluster with no gates, EXCLUDE_MANIFESTS unset."""
    return load_payload(str(section8_dir), release_image=RELEASE_IMAGE, selection=Selection())


@pytest.fixture(scope="module")
def section8_target(tmp_path_factory: pytest.TempPathFactory) -> Payload:
    """The update target of that payload (4.99.1: M = 20), loaded for the same cluster."""
    root = write_section8(tmp_path_factory.mktemp("section8-target") / "payload", SECTION8_TARGET)
    return load_payload(str(root), release_image=image_of(SECTION8_TARGET), selection=Selection())


@pytest.fixture
def cvo(cluster: LocalCluster) -> KubeClient:
    """A client acting as upstream's CVO: its ServiceAccount and user agent."""
    return cvo_client(cluster, SECTION8_VERSION)


@pytest.fixture
def owner(kube: KubeClient, clusterversion_cleanup: None) -> str:
    """The UID of a new ClusterVersion `version` without history (and no ClusterOperators)."""
    return fresh_cluster_version(kube)


@pytest.fixture
def workers(cvo: KubeClient, kube: KubeClient) -> Iterator[Callable[..., Running]]:
    """Sync workers a test starts (with their own applier and ClusterOperator informer), applying
    as the CVO with short intervals and back-offs; stopped afterwards, with their informers."""
    started: list[Running] = []

    def start(interval: float = 2.0) -> Running:
        informer = Informer(kube, CLUSTEROPERATORS).start()
        reports = Reports()
        timing = Timing(interval=interval, install_backoff=QUICK_INSTALL, task_backoff=QUICK)
        worker = SyncWorker(Applier(cvo), informer, reports, timing)
        running = Running(worker.start(), informer, reports)
        started.append(running)
        return running

    yield start
    for running in started:
        running.worker.stop()
        running.informer.stop()


@pytest.fixture
def section8_cleared(kube: KubeClient, section8: Payload, section8_target: Payload) -> Iterator[None]:
    """No object of the synthetic payloads before or after the test (namespaces lose their owners)."""
    remove_applied(kube, [*section8.manifests, *section8_target.manifests])
    yield
    remove_applied(kube, [*section8.manifests, *section8_target.manifests])
