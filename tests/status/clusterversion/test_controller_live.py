"""The ClusterVersion controller's final sync at shutdown on the real API server: status only. A
desiredUpdate set while `start` is being stopped is written about, but no retrieval is asked for,
so no version Pod is started moments before the process goes."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import CLUSTERVERSIONS, PODS, KubeClient, connect
from payload.coordinator import RetrievalRequest
from payload.release import Release
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import IMG_4141, ScriptedWorker, condition, create_cv, retrieving_side, status_414
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

IMG_4150 = "quay.io/openshift-release-dev/ocp-release@sha256:" + "5" * 64


def progressing(kube: KubeClient) -> str:
    found = condition(kube.get(CLUSTERVERSIONS, "version"), "Progressing")
    return str((found or {}).get("message", ""))


def test_the_final_sync_writes_status_but_starts_no_retrieval_for_a_desired_update_set_during_shutdown(
    cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    client = connect(cluster.kubeconfig, user_agent=f"cvo-py/final-sync-{uuid.uuid4().hex[:6]}")
    running = Release(version="4.14.1", image=IMG_4141)
    worker = ScriptedWorker(running)
    worker.report(1, 4)
    # No payload of IMG_4150 in tmp_path (the node's): retrieving it takes a version Pod.
    side = retrieving_side(client, namespace, tmp_path, running, worker, min_interval=0.0)
    caches, retrieval = side.caches, side.retrieval
    assert retrieval is not None
    side.start()
    try:
        wait_until(lambda: "1 of 4 done" in progressing(kube), what="the worker's first report written")
        coordinator = retrieval.coordinator
        assert coordinator.idle()  # the spec asks for the running release: nothing to retrieve

        # As ClusterVersionSide.stop: the worker and the status loop stop, then the final sync. In
        # between, the admin asks for an update and the worker's last report comes in.
        side.controller.stop()
        kube.patch(
            CLUSTERVERSIONS,
            "version",
            {"spec": {"desiredUpdate": {"version": "4.15.0", "image": IMG_4150, "force": True}}},
        )

        def desired_update_cached() -> dict[str, Any] | None:
            cv = caches.clusterversion.get("version") or {}
            return ((cv.get("spec") or {}).get("desiredUpdate") or {}).get("image") == IMG_4150 and cv or None

        wait_until(desired_update_cached, what="the new desiredUpdate in the cache")
        worker.report(3, 4)
        requested: list[RetrievalRequest | None] = []
        real_request = coordinator.request

        def record_request(wanted: RetrievalRequest | None) -> None:
            requested.append(wanted)
            real_request(wanted)

        monkeypatch.setattr(coordinator, "request", record_request)
        assert side.controller.final_sync(timeout=20.0)

        assert requested == []
        assert coordinator.idle()  # nothing wanted: the coordinator's thread has nothing to start
        assert "3 of 4 done" in progressing(kube)  # the final status write landed
    finally:
        side.stop()
    assert retrieval.coordinator.retrievals == 0
    assert kube.list(PODS, namespace).get("items") == []
