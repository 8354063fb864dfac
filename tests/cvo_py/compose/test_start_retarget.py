"""`start` while a retrieval waits on a Pending version Pod and the admin changes their mind:
another image, back to the running release, the request withdrawn, force toggled. The old
retrieval ends at once (its Pod deleted); in every status the operator writes, `Progressing` never
names a target whose payload was not accepted (only `ReleaseAccepted` does, as upstream), and once
`ReleaseAccepted` names a newer request it never goes back to an older one."""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import CLUSTERVERSIONS, KubeClient
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import condition, create_cv, status_414
from testkit.harness.payload import (
    RUNNING_IMAGE,
    ClusterVerification,
    StartProcess,
    ensure_priority_class,
    request_update,
    version_pods,
)
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

IMAGE_A = "quay.io/openshift-release-dev/ocp-release@sha256:" + "a1" * 32
IMAGE_B = "quay.io/openshift-release-dev/ocp-release@sha256:" + "b2" * 32


class StatusRecorder:
    """Every distinct (Progressing, ReleaseAccepted) pair the ClusterVersion shows, read by a watch."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self.seen: list[tuple[str, str, str]] = []  # (resourceVersion, Progressing, ReleaseAccepted)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            cv = self.kube.get(CLUSTERVERSIONS, "version")
            progressing = condition(cv, "Progressing") or {}
            accepted = condition(cv, "ReleaseAccepted") or {}
            entry = (
                str(cv["metadata"]["resourceVersion"]),
                str(progressing.get("message") or ""),
                f"{accepted.get('status')} {accepted.get('message')}",
            )
            if not self.seen or self.seen[-1] != entry:
                self.seen.append(entry)
            self._stop.wait(0.01)

    def __enter__(self) -> StatusRecorder:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def contradictions(seen: list[tuple[str, str, str]], requests: list[str]) -> list[tuple[str, str, str]]:
    """Statuses whose Progressing names a requested image, or whose ReleaseAccepted names a request
    older than one an earlier status already named (`requests` in the order they were made, the
    first never accepted in these tests; what came before the first request is not judged)."""
    bad = []
    newest = -1
    for entry in seen:
        _rv, progressing, accepted = entry
        if any(image in progressing for image in requests):
            bad.append(entry)
            continue
        named = re.search(r'image="([^"]*)"', accepted)
        if named is None or named.group(1) not in requests or (newest < 0 and named.group(1) != requests[0]):
            continue
        order = requests.index(named.group(1))
        if order < newest:
            bad.append(entry)
        newest = max(newest, order)
    return bad


def live_pods(kube: KubeClient, namespace: str) -> list[dict[str, Any]]:
    return [p for p in version_pods(kube, namespace) if not p["metadata"].get("deletionTimestamp")]


def gone(kube: KubeClient, namespace: str, name: str) -> Callable[[], bool]:
    return lambda: name not in {p["metadata"]["name"] for p in version_pods(kube, namespace)}


def accepted_about(kube: KubeClient, image: str, status: str = "Unknown") -> bool:
    c = condition(kube.get(CLUSTERVERSIONS, "version"), "ReleaseAccepted") or {}
    return c.get("status") == status and f'image="{image}"' in str(c.get("message"))


@pytest.fixture
def start(cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path) -> Iterator[StartProcess]:
    ensure_priority_class(kube)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    process = StartProcess(cluster.kubeconfig, namespace, tmp_path)
    yield process
    process.stop()


def pending_pod_for(kube: KubeClient, namespace: str, start: StartProcess, image: str) -> str:
    """Ask for `image` and wait until its version Pod exists (nobody plays the kubelet: it stays Pending)."""

    def pod() -> str:
        assert start.proc.poll() is None, start.log()
        pods = [p for p in live_pods(kube, namespace) if p["spec"]["containers"][0]["image"] == image]
        return str(pods[0]["metadata"]["name"]) if pods else ""

    return str(wait_until(pod, timeout=30, what=f"a version Pod for {image}"))


def test_new_target_cancels_the_pending_retrieval(
    kube: KubeClient, namespace: str, start: StartProcess, verification: ClusterVerification
) -> None:
    verification.sign(IMAGE_A)
    verification.sign(IMAGE_B)
    with StatusRecorder(kube) as recorder:
        request_update(kube, IMAGE_A)
        old = pending_pod_for(kube, namespace, start, IMAGE_A)
        wait_until(lambda: accepted_about(kube, IMAGE_A), timeout=15, what="ReleaseAccepted about A")

        request_update(kube, IMAGE_B)
        new = pending_pod_for(kube, namespace, start, IMAGE_B)
        wait_until(
            gone(kube, namespace, old),
            timeout=15,
            what="the old Pod deleted",
        )
        wait_until(lambda: accepted_about(kube, IMAGE_B), timeout=15, what="ReleaseAccepted about B")
        assert [p["metadata"]["name"] for p in live_pods(kube, namespace)] == [new]
    assert not contradictions(recorder.seen, [IMAGE_A, IMAGE_B]), recorder.seen
    assert any(IMAGE_A in e[2] for e in recorder.seen) and any(IMAGE_B in e[2] for e in recorder.seen)
    # The cancelled retrieval of A is not reported as a failure of anything.
    assert not [e for e in recorder.seen if e[2].startswith("False")], recorder.seen


def test_back_to_the_running_release_or_withdrawn_ends_the_retrieval(
    kube: KubeClient, namespace: str, start: StartProcess, verification: ClusterVerification
) -> None:
    verification.sign(IMAGE_A)
    for undo in ("running", "cleared"):
        with StatusRecorder(kube) as recorder:
            request_update(kube, IMAGE_A)
            old = pending_pod_for(kube, namespace, start, IMAGE_A)
            wait_until(lambda: accepted_about(kube, IMAGE_A), timeout=15, what="ReleaseAccepted about A")
            if undo == "running":
                request_update(kube, RUNNING_IMAGE, "4.14.1")
            else:
                kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": None}})
            wait_until(
                gone(kube, namespace, old),
                timeout=15,
                what=f"the Pod deleted ({undo})",
            )
            wait_until(
                lambda: accepted_about(kube, RUNNING_IMAGE, "True"),
                timeout=15,
                what=f"ReleaseAccepted about the running release ({undo})",
            )
            cv = kube.get(CLUSTERVERSIONS, "version")
            assert (condition(cv, "Progressing") or {}).get("message") == "Cluster version is 4.14.1"
        assert not contradictions(recorder.seen, [IMAGE_A, RUNNING_IMAGE]), recorder.seen
        # Progressing stayed at the running release throughout.
        assert {e[1] for e in recorder.seen} == {"Cluster version is 4.14.1"}, recorder.seen
        assert live_pods(kube, namespace) == []


def test_force_toggled_restarts_the_retrieval(
    kube: KubeClient, namespace: str, start: StartProcess, verification: ClusterVerification
) -> None:
    verification.sign(IMAGE_A)
    request_update(kube, IMAGE_A)
    old = pending_pod_for(kube, namespace, start, IMAGE_A)
    kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": {"image": IMAGE_A, "force": True}}})
    wait_until(
        gone(kube, namespace, old),
        timeout=15,
        what="the Pod of the unforced request deleted",
    )
    pending_pod_for(kube, namespace, start, IMAGE_A)
    assert len(live_pods(kube, namespace)) == 1
