"""Shared fixtures: a session-scoped real kube-apiserver, isolation, stand-ins for the kubelet and
the MCO, the release-verification configuration, and `cluster-version-operator start` as a process
(`start`, serving the certificate of `tls`). Integration tests reuse a running `make cluster-up`
(same data dir). Fixtures used by one folder only live in that folder's conftest."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from cvo_py.runtime.kube import CRDS, NAMESPACES, ApiError, KubeClient
from testkit import checkout
from testkit.checkout import REPO
from testkit.fakes.kubelet import Kubelet
from testkit.harness import cluster as local
from testkit.harness import leaks, localcluster
from testkit.harness.certs import self_signed
from testkit.harness.cluster import LocalCluster, free_port
from testkit.harness.clusterversion import featuregate_api_exists
from testkit.harness.manifests import start_argv, start_env
from testkit.harness.payload import ClusterVerification
from testkit.harness.wait import wait_until

pytest_plugins = ["testkit.fakes.httpserve", "testkit.harness.prometheus"]  # http_server, prometheus

# One Hypothesis profile for every property test, made for a loaded 2-core machine (a CI runner, or
# this one beside other work): no per-example deadline (an example took 516 ms on a loaded 2-core
# machine, against the default 200 ms; timings belong in bench/), no health check that fails on
# speed (`too_slow` measures input generation, which a cold start or a busy core slows), and runs that
# are reproducible: examples derived from each test alone (`derandomize`), no example database, so
# a test run alone behaves as it does inside the whole suite. `--hypothesis-profile=default`
# (Hypothesis's own defaults) is there for hunting with fresh random examples.
settings.register_profile(
    "cvo-py",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
)
settings.load_profile("cvo-py")

# How long a thread or child process that a test asked to stop may take to finish after the test.
LEAK_GRACE_SECONDS = 5.0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--image",
        default=None,
        metavar="REF",
        help="test this built container image (tests/image; `make image-test`)",
    )
    parser.addoption(
        "--node",
        action="store_true",
        default=False,
        help="run the end-to-end tier on the local node of .local-cluster/node.json (tests/e2e; `make e2e`)",
    )


def pytest_configure(config: pytest.Config) -> None:
    problem = checkout.missing()  # without ../shared the comparisons with oc would be skipped silently
    if problem:
        raise pytest.UsageError(problem)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # tests/image needs a built image and buildah: only `make image-test` (--image) runs it.
    if collection_path == REPO / "tests" / "image" and not config.getoption("--image"):
        return True
    # tests/e2e needs a running local node: only `make e2e` (--node) runs it.
    if collection_path == REPO / "tests" / "e2e" and not config.getoption("--node"):
        return True
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.getoption("--image"):
        return f"container image under test: {config.getoption('--image')}"
    if config.getoption("--node"):
        return "end-to-end tier on the local node (.local-cluster/node.json)"
    return "tests/image, tests/e2e: not collected (they test a built image and a real node: make image-test, make e2e)"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Anything that uses the real API server is an integration test, so `-m "not integration"`
    # selects the fast pure-logic suite.
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Fails the test that leaves a thread or child process running (an informer, a controller, a
    server, a subprocess). Session and module fixtures are set up before this record, so what
    they own is not the test's; processes that outlive tests on purpose are declared with
    `leaks.session_owned`."""
    before = leaks.alive()
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


@pytest.fixture
def featuregate_api(cluster: LocalCluster, kube: KubeClient) -> Iterator[None]:
    """The FeatureGate API (config.openshift.io), removed afterwards."""
    localcluster.apply_crd(cluster.handle, REPO / "tests" / "crds" / "featuregate.yaml")
    yield
    kube.delete(CRDS, "featuregates.config.openshift.io")
    wait_until(lambda: not featuregate_api_exists(kube), what="the FeatureGate API removed")


@pytest.fixture
def verification(kube: KubeClient) -> Iterator[ClusterVerification]:
    """The cluster's release-verification configuration with a throwaway key, removed afterwards."""
    handle = ClusterVerification(kube)
    yield handle
    handle.remove()


@dataclass
class Running:
    proc: subprocess.Popen[str]
    port: int
    log: Path
    scraper: tuple[str, str] | None  # the client certificate Prometheus would present

    def get(self, path: str, as_scraper: bool = True) -> tuple[int, str]:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # a self-signed test certificate
        if as_scraper and self.scraper:
            context.load_cert_chain(*self.scraper)
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{self.port}{path}", context=context, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def metrics(self) -> dict[str, float]:
        status, text = self.get("/metrics")
        assert status == 200
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                series, _, value = line.rpartition(" ")
                out[series] = float(value)
        return out

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)
        return self.log.read_text()


@pytest.fixture
def tls(tmp_path: Path) -> tuple[str, str]:
    return self_signed(tmp_path)


@pytest.fixture
def start(cluster: LocalCluster, namespace: str, tls: tuple[str, str], tmp_path: Path) -> Iterator[Any]:
    started: list[Running] = []

    def launch(release_image: str, version: str, *extra: str) -> Running:
        payload = tmp_path / f"payload-{len(started)}"
        (payload / "release-manifests").mkdir(parents=True)
        (payload / "release-manifests" / "release-metadata").write_text(json.dumps({"version": version}))
        port = free_port()
        log = tmp_path / f"start-{len(started)}.log"
        # The Deployment's command line (install/), with this machine's address and certificate.
        argv = start_argv(
            {
                "--release-image": release_image,
                "--listen": f"127.0.0.1:{port}",
                "--serving-cert-file": tls[0],
                "--serving-key-file": tls[1],
            },
            cluster.kubeconfig,
        )
        proc = subprocess.Popen(
            [*argv, *extra],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=log.open("w"),
            text=True,
            # A reconcile pass every 5 s: what only a pass shows (observedGeneration) comes soon.
            env={
                **os.environ,
                **start_env("node-0"),
                "CVO_NAMESPACE": namespace,
                "PAYLOAD_OVERRIDE": str(payload),
                "CVO_PY_RECONCILE_INTERVAL": "5",
            },
        )
        scraper = (cluster.state["scraperCertFile"], cluster.state["scraperKeyFile"])
        running = Running(proc, port, log, scraper)
        started.append(running)
        wait_until(lambda: proc.poll() is not None or _listening(port), what="metrics endpoint up")
        assert proc.poll() is None, log.read_text()
        return running

    yield launch
    for running in started:
        running.stop()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
