"""Status that never freezes, on the real local API server: whatever an update service sends
within the decoder's bounds (8 MiB, 50,000 nodes), `start` keeps writing ClusterVersion status.
What status cannot hold is left out and said in `RetrievedUpdates` and an Event; a failure that
quotes the answer is bounded; a value the API server rejects is left out and the rest lands."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from cvo_py.runtime.kube import CLUSTERVERSIONS, EVENTS, MERGE_PATCH, KubeClient
from testkit.fakes.update_service import (
    UpdateService,
    all_reachable,
    always_risk,
    graph,
    image_of,
    many_channels,
    many_risks,
    release_digest,
)
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import AuditLog, condition, create_cv, enable_feature_gates
from testkit.harness.wait import wait_until
from updateservice import bounds, retrieval

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

# Well under the API server's 3 MiB request limit, and under etcd's default 1.5 MiB.
WELL_UNDER = 1024 * 1024
CHANNELS = ("stable-4.15", "fast-4.15")


def bad_version(length: int) -> dict[str, Any]:
    """The current node and a node whose version is `length` characters of invalid pre-release."""
    doc = all_reachable(2)
    doc["nodes"][1]["version"] = "4.15.1-" + "x!" * (length // 2)
    return doc


HOSTILE: dict[str, tuple[Callable[[], dict[str, Any]], str]] = {
    "49,999 releases, all updates of the current one": (lambda: all_reachable(49_999), "available"),
    "one conditional update with 50,000 risks": (lambda: many_risks(50_000), "conditional"),
    "risks with 300 KB messages": (lambda: many_risks(20, message="m" * 300_000), "cut"),
    "150,000 channels on each release": (lambda: many_channels(150_000), "channels"),
    "a 5 MB invalid version": (lambda: bad_version(5_000_000), "failure"),
}


def cluster_version(kube: KubeClient) -> dict[str, Any]:
    return kube.get(CLUSTERVERSIONS, "version")


def retrieved(kube: KubeClient) -> dict[str, Any]:
    return condition(cluster_version(kube), "RetrievedUpdates") or {}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_status_stays_writable_whatever_the_graph(kube: KubeClient, start: Any, namespace: str, case: str) -> None:
    make, kind = HOSTILE[case]
    doc = make()
    assert len(json.dumps(doc)) < 8 * 1024 * 1024  # within the decoder's bounds
    with UpdateService(channels=dict.fromkeys(CHANNELS, doc)) as service:
        create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": CHANNELS[0], "upstream": service.url}, None)
        start(release_digest(0), "4.15.0", "--update-service=")
        expected = "ResponseInvalid" if kind == "failure" else retrieval.UPDATES_OMITTED
        found = wait_until(lambda: retrieved(kube).get("reason") == expected and retrieved(kube),
                           timeout=90, what=f"RetrievedUpdates {expected}")

        cv = cluster_version(kube)
        assert len(json.dumps(cv)) < WELL_UNDER
        status = cv["status"]
        if kind == "failure":
            assert found["status"] == "False"
            assert len(found["message"]) <= len(retrieval.UNABLE) + retrieval.MAX_DETAIL
            assert "Invalid character(s) found in prerelease" in found["message"]
        else:
            assert found["status"] == "True"  # retrieval worked; status shows what it can
            assert found["message"].startswith("The updates found hold more than status does")
            events = wait_until(
                lambda: kube.list(EVENTS, namespace, field_selector="reason=UpdatesOmitted")["items"],
                what="an UpdatesOmitted Event",
            )
            assert [e["message"] for e in events] == [found["message"]]
            assert events[0]["type"] == "Warning"
        if kind == "available":
            offered = len(doc["nodes"]) - 1
            shown = len(status["availableUpdates"])
            assert 0 < shown < offered
            assert f"leaves out {offered - shown} of {offered} available updates" in found["message"]
            assert status["availableUpdates"][0]["version"] == f"4.15.{offered}"  # newest first
        if kind == "conditional":
            assert "conditionalUpdates" not in status  # left out whole, never without some of its risks
            assert "1 with more than 200 risks: 4.15.1" in found["message"]
        if kind == "cut":
            (update,) = status["conditionalUpdates"]
            assert [len(r["message"]) for r in update["risks"]] == [bounds.MAX_RISK_MESSAGE] * 20
            assert [r["name"] for r in update["risks"]] == [f"R{i}" for i in range(20)]
        if kind == "channels":
            channels = status["desired"]["channels"]
            assert 0 < len(channels) < 150_000 and len(json.dumps(channels)) <= bounds.MAX_CHANNELS_BYTES

        # Status keeps following: a spec change is observed (at the sync worker's next pass, as upstream).
        kube.patch(CLUSTERVERSIONS, "version", {"spec": {"channel": CHANNELS[1]}}, content_type=MERGE_PATCH)
        generation = cluster_version(kube)["metadata"]["generation"]
        wait_until(lambda: cluster_version(kube)["status"]["observedGeneration"] == generation, timeout=60,
                   what="observedGeneration after a spec change")


def test_a_channel_repeated_in_node_metadata_lands_once(kube: KubeClient, start: Any) -> None:
    # The API server rejects a repeated item of a set (`status.desired.channels[1]: Duplicate value`).
    doc = graph(["4.15.0", "4.15.1"], edges=[("4.15.0", "4.15.1")], channels="stable-4.15,stable-4.15")
    with UpdateService(channels={"stable-4.15": doc}) as service:
        create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.15", "upstream": service.url}, None)
        start(image_of("4.15.0"), "4.15.0", "--update-service=")
        cv = wait_until(lambda: (c := cluster_version(kube)).get("status", {}).get("availableUpdates") and c,
                        timeout=60, what="availableUpdates")
    assert cv["status"]["desired"]["channels"] == ["stable-4.15"]
    assert cv["status"]["availableUpdates"][0]["channels"] == ["stable-4.15"]
    found = condition(cv, "RetrievedUpdates") or {}
    assert (found.get("status"), found.get("reason")) == ("True", None)


def test_with_the_gate_more_than_500_risk_names_never_freeze_status(
    cluster: LocalCluster, kube: KubeClient, start: Any, featuregate_api: None
) -> None:
    """With ClusterUpdateAcceptRisks, status.conditionalUpdateRisks lists each risk name once and the
    CRD takes at most 500: a graph whose updates name 600 risks has the oldest update left out
    before status is written (no 422), and RetrievedUpdates says so."""
    groups = [([("4.15.0", f"4.15.{1 + i}")], [always_risk(f"U{i}R{j}") for j in range(200)]) for i in range(3)]
    doc = graph(["4.15.0", "4.15.1", "4.15.2", "4.15.3"], conditional=groups)
    with UpdateService(channels={CHANNELS[0]: doc}) as service:
        cluster.install_clusterversion_crd("current")
        enable_feature_gates(kube, "4.15.0", "ClusterUpdateAcceptRisks")
        create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": CHANNELS[0], "upstream": service.url}, None)
        audit = AuditLog(cluster.state["auditLog"])
        start(image_of("4.15.0"), "4.15.0", "--update-service=")
        found = wait_until(lambda: retrieved(kube).get("reason") == retrieval.UPDATES_OMITTED and retrieved(kube),
                           timeout=90, what="RetrievedUpdates UpdatesOmitted")
    status = cluster_version(kube)["status"]
    assert [u["release"]["version"] for u in status["conditionalUpdates"]] == ["4.15.3", "4.15.2"]
    assert len(status["conditionalUpdateRisks"]) == 400
    assert "(1 whose risks would take conditionalUpdateRisks past 500 names: 4.15.1)" in found["message"]
    assert 422 not in [code for _, code in audit.status_writes("cvo-py/start")]
