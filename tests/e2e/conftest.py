"""The end-to-end tier: the node of `.local-cluster/node.json` (`make e2e` starts it, runs these
tests and stops it), bootstrapped as an installer does and completed by `start` from its release
image. Figures measured on the way (how soon a failure the kubelet writes reaches the
ClusterVersion; when an update was accepted, handed over and completed) are printed at the end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import KubeClient, connect
from testkit.harness import leaks, localcluster, localnode
from testkit.harness.localnode import NodeInfo
from testkit.harness.nodeconfig import NodePaths

FIGURES: list[dict[str, Any]] = []
# What the update tests measure: title → {what: seconds}.
TIMES: dict[str, dict[str, float]] = {}

# The node's components belong to the node, also when a test restarts one (the registry, the
# kubelet and the runtime): they are not the test's leaks.
leaks.session_owned(localnode.component_pids)


@pytest.fixture(scope="session")
def node() -> NodeInfo:
    info = localnode.running()
    if info is None:
        pytest.fail("no local node is running: `make e2e` starts one for these tests (or `make node-up`)")
    if not info.release_images:
        pytest.fail("the local node has no release images: it was started with --no-deploy")
    return info


@pytest.fixture(scope="session")
def paths(node: NodeInfo) -> NodePaths:
    return NodePaths(Path(node.data_dir))


@pytest.fixture(scope="session")
def kube(node: NodeInfo) -> KubeClient:
    return connect(node.kubeconfig, user_agent="cvo-py-e2e")


@pytest.fixture(scope="session")
def api(paths: NodePaths) -> localcluster.Cluster:
    cluster = localcluster.running(paths.apiserver)
    assert cluster is not None, "the node's API server is not running"
    return cluster


@pytest.fixture(scope="session")
def figures(paths: NodePaths) -> Iterator[list[dict[str, Any]]]:
    yield FIGURES
    (paths.root / "e2e-figures.json").write_text(json.dumps(FIGURES, indent=2))


@pytest.fixture(scope="session")
def times() -> dict[str, dict[str, float]]:
    """Where a test leaves the times it measured (seconds), printed at the end of the run."""
    return TIMES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.section("failure reporting on the real node")
        for figure in FIGURES:
            terminalreporter.write_line(json.dumps(figure, ensure_ascii=False))
    if TIMES:
        terminalreporter.section("times on the real node (seconds)")
        for title, measured in TIMES.items():
            terminalreporter.write_line(f"{title}: " + ", ".join(f"{k} {v:.1f}" for k, v in measured.items()))
