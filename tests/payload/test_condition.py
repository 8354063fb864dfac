"""End to end: `cluster-version-operator start` turns retrieval into the ReleaseAccepted condition
on the real ClusterVersion, while the test plays the kubelet."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cvo_py.runtime.informer import DELETED, Informer
from cvo_py.runtime.kube import CLUSTERVERSIONS, PODS, KubeClient
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


def test_a_failure_is_written_before_the_version_pod_is_deleted(
    cluster: LocalCluster, kube: KubeClient, namespace: str, kubelet: Kubelet, verification: ClusterVerification
) -> None:
    """Deleting the Pod is a write the API server would commit ahead of the status write, each
    waiting for its own disk sync: the failure goes first. Both watches see etcd's revisions, which
    order every write of the server, so the order is checked exactly, not by timing."""
    ensure_priority_class(kube)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    image = "quay.io/openshift-release-dev/ocp-release@sha256:" + "d" * 64
    verification.sign(image)
    failed_at: list[int] = []  # revision of the first status carrying the failure
    deleted_at: list[int] = []  # revision of the Pod's deletion
    cv_watch = Informer(kube, CLUSTERVERSIONS, field_selector="metadata.name=version")
    cv_watch.add_handler(
        lambda _t, cv, _old: failed_at.append(int(cv["metadata"]["resourceVersion"]))
        if any(
            c.get("type") == "ReleaseAccepted" and c.get("status") == "False"
            for c in (cv.get("status") or {}).get("conditions") or []
        )
        else None
    )
    pod_watch = Informer(kube, PODS, namespace=namespace)
    pod_watch.add_handler(
        lambda t, pod, _old: deleted_at.append(int(pod["metadata"]["resourceVersion"])) if t == DELETED else None
    )
    # No bound that a slow machine could outlast: the order is what is checked.
    op = status_operator(cluster.kubeconfig, namespace, "cvo-py/order", retrieval_retry=60.0, show_failure_within=60.0)
    for informer in (cv_watch, pod_watch):
        informer.start()
    op.start()
    try:
        request_update(kube, image)
        pod = wait_until(lambda: [p["metadata"]["name"] for p in version_pods(kube, namespace)], what="version pod")[0]
        kubelet.set_container_state(pod, namespace, "cleanup", waiting("SignatureValidationFailed", SIG), init=True)
        wait_until(lambda: failed_at and deleted_at, timeout=30, what="failure written and pod deleted")
    finally:
        op.stop()
        for informer in (cv_watch, pod_watch):
            informer.stop()
    assert failed_at[0] < deleted_at[0], f"Pod deleted at revision {deleted_at[0]}, failure written at {failed_at[0]}"
