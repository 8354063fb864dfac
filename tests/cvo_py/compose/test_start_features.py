"""`start` reads the cluster's feature gates once and, as upstream, ends itself when they change,
so that its Deployment starts it again with them: in order (the Lease handed back), exit 0."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from cvo_py.runtime.kube import FEATUREGATES, KubeClient
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import create_cv, enable_feature_gates, status_414
from testkit.harness.payload import StartProcess, ensure_priority_class
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")


def test_start_exits_to_be_started_again_when_the_gates_of_its_version_change(
    cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path, featuregate_api: None
) -> None:
    ensure_priority_class(kube)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    enable_feature_gates(kube, "4.14.1")
    start = StartProcess(cluster.kubeconfig, namespace, tmp_path)
    try:
        # leading: the controllers run (a change before that would end it just the same)
        wait_until(lambda: "successfully acquired lease" in start.log(), timeout=60, what="start leading")
        assert start.proc.poll() is None, start.log()[-3000:]
        featuregate = kube.get(FEATUREGATES, "cluster")
        featuregate["status"]["featureGates"][0]["enabled"] = [{"name": "ClusterUpdateAcceptRisks"}]
        kube.replace_status(FEATUREGATES, featuregate)
        code = start.proc.wait(60)
    finally:
        start.stop()
    log = start.log()
    assert code == 0, log[-3000:]
    assert (
        "The cluster's features changed (enabled ClusterUpdateAcceptRisks): exiting, to be started again with them"
        in log
    )
    assert "Graceful shutdown complete" in log
    assert "Traceback" not in log
