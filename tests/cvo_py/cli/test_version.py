"""`version` against the real API server prints both versions."""

from __future__ import annotations

import subprocess
import sys

from testkit.harness.cluster import REPO, LocalCluster


def test_version_prints_client_and_server(cluster: LocalCluster) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cvo_py", "version", "--kubeconfig", cluster.kubeconfig],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ClusterVersionOperator cvo-py v")
    assert lines[1] == f"Server: Kubernetes {cluster.state['kubernetesVersion']} at {cluster.state['server']}"
