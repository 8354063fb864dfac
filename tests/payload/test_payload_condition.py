"""End to end: `cluster-version-operator start` turns retrieval into the ReleaseAccepted condition
on the real ClusterVersion, while the test plays the kubelet."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cvo_py.kube import KubeClient
from cvo_py.testing.cluster import LocalCluster
from cvo_py.testing.clusterversion import create_cv, status_414
from cvo_py.testing.kubelet import Kubelet, waiting
from cvo_py.testing.payload import (
    ClusterVerification,
    StartProcess,
    ensure_priority_class,
    release_accepted,
    request_update,
    signature_rejected,
    version_pods,
)
from cvo_py.testing.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

UNSIGNED = "quay.io/openshift-release-dev/ocp-release@sha256:" + "e" * 64
SIG = signature_rejected(UNSIGNED)


@pytest.fixture
def start(
    cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path, verification: ClusterVerification
) -> Iterator[StartProcess]:
    ensure_priority_class(kube)
    # The ClusterVersion exists before `start` runs (otherwise `start` creates one itself).
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    proc = StartProcess(cluster.kubeconfig, namespace, tmp_path)
    yield proc
    proc.stop()


def the_pod(kube: KubeClient, namespace: str, start: StartProcess) -> str:
    def found() -> str:
        pods = [p for p in version_pods(kube, namespace) if not p["metadata"].get("deletionTimestamp")]
        return str(pods[0]["metadata"]["name"]) if pods else ""

    wait_until(lambda: found() or start.proc.poll() is not None, timeout=30, what="version pod")
    assert start.proc.poll() is None, start.log()
    return found()


def test_unsigned_image_shows_signature_failure_container_and_kubelet_message(
    kube: KubeClient, namespace: str, kubelet: Kubelet, start: StartProcess, verification: ClusterVerification
) -> None:
    # Signed for the operator's own check; the node's image policy still rejects the pull.
    verification.sign(UNSIGNED)
    request_update(kube, UNSIGNED)
    pod = the_pod(kube, namespace, start)
    kubelet.set_container_state(pod, namespace, "cleanup", waiting("SignatureValidationFailed", SIG), init=True)
    wait_until(lambda: release_accepted(kube).get("status") == "False", timeout=15, what="ReleaseAccepted=False")
    cond = release_accepted(kube)
    assert (cond["reason"], cond["message"]) == (
        "RetrievePayload",
        f'Retrieving payload failed version="" image="{UNSIGNED}" failure=Unable to download and prepare the '
        f"update: fetching update payload: the release image signature was rejected (pod {pod}, init container "
        f"cleanup): SignatureValidationFailed: {SIG}",
    )
    assert "deadline" not in cond["message"]
    wait_until(lambda: not version_pods(kube, namespace), what="version pod deleted")


def test_transient_problem_is_visible_in_the_condition_while_waiting(
    kube: KubeClient, namespace: str, kubelet: Kubelet, start: StartProcess, verification: ClusterVerification
) -> None:
    image = "quay.io/openshift-release-dev/ocp-release@sha256:" + "f" * 64
    verification.sign(image)
    request_update(kube, image, "4.14.2")
    pod = the_pod(kube, namespace, start)
    cond = wait_until(lambda: (c := release_accepted(kube)).get("reason") == "RetrievePayload" and c, what="retrieving")
    assert (cond["status"], cond["message"]) == (
        "Unknown",
        f'Retrieving and verifying payload version="4.14.2" image="{image}"',
    )
    network = "pinging container registry quay.io: dial tcp 10.0.0.1:443: i/o timeout"
    kubelet.set_container_state(pod, namespace, "cleanup", waiting("ErrImagePull", network), init=True)
    wait_until(lambda: "still waiting" in release_accepted(kube).get("message", ""), timeout=15, what="transient shown")
    cond = release_accepted(kube)
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "Unknown",
        "RetrievePayload",
        f'Retrieving and verifying payload version="4.14.2" image="{image}"; still waiting: cannot pull the '
        f"release image yet (pod {pod}, init container cleanup): ErrImagePull: {network}",
    )
