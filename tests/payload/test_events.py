"""`RetrievePayloadFailed` Events on the real API server: what `start` records when the kubelet
rejects the release image's signature, and how a repeated identical failure bumps one Event."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from cvo_py.compose.start import ClusterVersionSide
from cvo_py.runtime.kube import EVENTS, KubeClient
from testkit.fakes.kubelet import Kubelet, waiting
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import create_cv, status_414
from testkit.harness.payload import (
    ClusterVerification,
    StartProcess,
    ensure_priority_class,
    release_accepted,
    request_update,
    signature_rejected,
    status_operator,
    version_pods,
)
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

UNSIGNED = "quay.io/openshift-release-dev/ocp-release@sha256:" + "c" * 64
SIG = signature_rejected(UNSIGNED)


def failed_events(kube: KubeClient, namespace: str) -> list[dict[str, Any]]:
    items = kube.list(EVENTS, namespace, field_selector="reason=RetrievePayloadFailed").get("items") or []
    return list(items)


def test_start_records_signature_failure_event(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    kubelet: Kubelet,
    tmp_path: Path,
    verification: ClusterVerification,
) -> None:
    ensure_priority_class(kube)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    start = StartProcess(cluster.kubeconfig, namespace, tmp_path)  # CVO_NAMESPACE=namespace
    try:
        # Signed for the operator's own check; the node's image policy still rejects the pull.
        verification.sign(UNSIGNED)
        request_update(kube, UNSIGNED, "")

        def pod() -> str:
            pods = [p for p in version_pods(kube, namespace) if not p["metadata"].get("deletionTimestamp")]
            return str(pods[0]["metadata"]["name"]) if pods else ""

        wait_until(lambda: pod() or start.proc.poll() is not None, timeout=30, what="version pod")
        assert start.proc.poll() is None, start.log()
        name = pod()
        kubelet.set_container_state(name, namespace, "cleanup", waiting("SignatureValidationFailed", SIG), init=True)
        wait_until(lambda: release_accepted(kube).get("status") == "False", timeout=15, what="ReleaseAccepted=False")
        message = release_accepted(kube)["message"]
        [event] = wait_until(lambda: failed_events(kube, namespace), timeout=15, what="the Event")
    finally:
        start.stop()

    # The condition's text (`failure=` with everything the error chain says, on one line).
    assert message == (
        f'Retrieving payload failed version="" image="{UNSIGNED}" failure=Unable to download and prepare '
        f"the update: fetching update payload: the release image signature was rejected (pod {name}, init "
        f"container cleanup): SignatureValidationFailed: {SIG}"
    )
    assert event["message"] == message
    assert (event["type"], event["reason"], event["count"]) == ("Warning", "RetrievePayloadFailed", 1)
    assert event["involvedObject"] == {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "name": "version",
        "namespace": namespace,
    }
    assert event["metadata"]["namespace"] == namespace
    assert event["metadata"]["name"].startswith("version.")
    assert event["source"] == {"component": "cluster-version-operator"}
    assert event["reportingComponent"] == "cluster-version-operator"
    assert event["firstTimestamp"] == event["lastTimestamp"]
    assert "Event(ClusterVersion/version): type: 'Warning' reason: 'RetrievePayloadFailed'" in start.log()


def operator(cluster: LocalCluster, namespace: str, agent: str) -> ClusterVersionSide:
    """An in-process ClusterVersion side that retries a failed retrieval every half second."""
    return status_operator(cluster.kubeconfig, namespace, agent, retrieval_retry=0.5)


def test_repeated_identical_failure_bumps_one_event(
    cluster: LocalCluster, kube: KubeClient, namespace: str, verification: ClusterVerification
) -> None:
    # Nothing signs this image: every try fails verification the same way, before any Pod.
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    request_update(kube, UNSIGNED, "4.14.9")
    op = operator(cluster, namespace, "cvo-py/events-1").start()
    try:
        wait_until(lambda: [e for e in failed_events(kube, namespace) if e["count"] >= 3], timeout=30, what="count 3")
    finally:
        op.stop()
    # Stopped, the recorder's counters are final (while it runs, a bump is counted only after the
    # API server has stored it): one Normal "RetrievePayload" for the attempts and one Warning for
    # their failures, and every occurrence after the first of each is a bump.
    [event] = failed_events(kube, namespace)
    retrieving = kube.list(EVENTS, namespace, field_selector="reason=RetrievePayload").get("items") or []
    [started] = [e for e in retrieving if UNSIGNED in e["message"]]  # not the running release's own, at start
    assert (started["type"], started["message"]) == (
        "Normal",
        f'Retrieving and verifying payload version="4.14.9" image="{UNSIGNED}"',
    )
    assert event["count"] >= 3 and started["count"] >= event["count"]  # each attempt starts before it fails
    recorder = op.controller.recorder
    # Those two, and the running release's payload loaded at start (RetrievePayload, LoadPayload, PayloadLoaded).
    assert recorder is not None and (recorder.created, recorder.failed) == (2 + 3, 0)
    assert recorder.bumped == (event["count"] - 1) + (started["count"] - 1)
    message = release_accepted(kube)["message"]
    assert message.startswith(
        f'Retrieving payload failed version="4.14.9" image="{UNSIGNED}" failure=The update cannot be '
        f"verified: unable to verify sha256:{'c' * 64} against keyrings: verifier-public-key-test"
    )
    assert event["message"] == message
    assert event["lastTimestamp"] >= event["firstTimestamp"]
    assert len(failed_events(kube, namespace)) == 1

    # A restarted operator (nothing cached) finds the Event and keeps counting on it.
    count = int(event["count"])
    again = operator(cluster, namespace, "cvo-py/events-2").start()
    try:
        wait_until(
            lambda: any(e["count"] > count + 1 for e in failed_events(kube, namespace)),
            timeout=30,
            what="count bumped by the restarted operator",
        )
        assert again.controller.recorder is not None and again.controller.recorder.created == 0
    finally:
        again.stop()
    [bumped] = failed_events(kube, namespace)
    assert bumped["metadata"]["name"] == event["metadata"]["name"]
    assert bumped["firstTimestamp"] == event["firstTimestamp"]
