"""The floor program of the payload-failure bench (testkit/oracles/gofloor) on the real API server:
it reports a version Pod's failure in ReleaseAccepted and keeps the rest of the status."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cvo_py.runtime.clientconfig import ClientConfig
from cvo_py.runtime.kube import CLUSTERVERSIONS, PODS, KubeClient
from testkit.fakes.kubelet import Kubelet, terminated, waiting
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import condition, create_cv, status_414
from testkit.harness.payload import NODE, ensure_priority_class, release_accepted
from testkit.harness.wait import wait_until
from testkit.oracles import goprogram
from testkit.oracles.floor import FloorProcess, version_pod

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

IMAGE = "quay.io/openshift-release-dev/ocp-release@sha256:" + "7" * 64


@pytest.fixture(scope="module")
def floor_binary(cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Go's build cache beside the cluster's data, as the bench keeps it: net/http compiles once.
    return goprogram.build(goprogram.FLOOR, tmp_path_factory.mktemp("gofloor"), cache=cluster.dir / "go-build-cache")


@pytest.fixture
def floor(floor_binary: Path, kube: KubeClient, namespace: str) -> Iterator[FloorProcess]:
    ensure_priority_class(kube)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    process = FloorProcess(floor_binary, kube.config, namespace)
    yield process
    process.stop()


def test_the_floor_reports_each_change_of_the_pods_status(
    kube: KubeClient, namespace: str, kubelet: Kubelet, floor: FloorProcess
) -> None:
    before = kube.get(CLUSTERVERSIONS, "version")["status"]
    pod = kube.create(PODS, version_pod(IMAGE, namespace, NODE))["metadata"]["name"]
    wait_until(
        lambda: release_accepted(kube).get("message") == f'Retrieving and verifying payload version="" image="{IMAGE}"',
        what="the new Pod reported",
    )
    assert release_accepted(kube)["status"] == "Unknown"
    message = f"image pull failed for {IMAGE} because the signature validation failed"
    kubelet.set_container_state(pod, namespace, "cleanup", waiting("SignatureValidationFailed", message), init=True)
    wait_until(lambda: release_accepted(kube).get("status") == "False", what="the failure reported")
    assert release_accepted(kube)["message"] == (
        f'Retrieving payload failed version="" image="{IMAGE}" failure=pod {pod}: '
        f"container cleanup waiting: SignatureValidationFailed: {message}"
    )
    kubelet.set_container_state(pod, namespace, "rename-to-final-location", terminated(1, "Error", "mv: failed"))
    wait_until(lambda: "exit code 1: Error: mv: failed" in release_accepted(kube)["message"], what="the exit reported")
    after = kube.get(CLUSTERVERSIONS, "version")["status"]
    # Everything but ReleaseAccepted is as it was.
    assert {k: v for k, v in after.items() if k != "conditions"} == {
        k: v for k, v in before.items() if k != "conditions"
    }
    for c in before["conditions"]:
        assert condition({"status": after}, c["type"]) == c


def test_the_floor_does_not_report_what_it_found_when_it_started(
    floor_binary: Path, kube: KubeClient, namespace: str, kubelet: Kubelet
) -> None:
    ensure_priority_class(kube)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    pod = kube.create(PODS, version_pod(IMAGE, namespace, NODE))["metadata"]["name"]
    kubelet.set_container_state(pod, namespace, "cleanup", waiting("ErrImagePull", "manifest unknown"), init=True)
    listed = kube.get(CLUSTERVERSIONS, "version")["metadata"]["resourceVersion"]
    # Ready once it has listed, and it handles what it listed before it says so: a write for the
    # listed Pod would have changed the ClusterVersion by now.
    process = FloorProcess(floor_binary, kube.config, namespace)
    try:
        assert kube.get(CLUSTERVERSIONS, "version")["metadata"]["resourceVersion"] == listed
        kubelet.set_phase(pod, namespace, "Failed", "Evicted", "The node was low on resource.")
        wait_until(lambda: "Evicted" in release_accepted(kube).get("message", ""), what="the change reported")
        assert release_accepted(kube)["message"] == (
            f'Retrieving payload failed version="" image="{IMAGE}" failure=pod {pod}: pod Evicted: The node was '
            "low on resource.; container cleanup waiting: ErrImagePull: manifest unknown"
        )
    finally:
        process.stop()


def test_a_floor_program_that_dies_at_start_is_said_with_what_it_wrote(tmp_path: Path) -> None:
    dies = tmp_path / "floor"
    dies.write_text("#!/bin/sh\necho 'cannot watch pods: forbidden' >&2\nexit 1\n")
    dies.chmod(0o755)
    config = ClientConfig(host="https://127.0.0.1:1", ca_data=b"-----BEGIN CERTIFICATE-----", token="t")
    with pytest.raises(RuntimeError, match="did not start: cannot watch pods: forbidden$"):
        FloorProcess(dies, config, "ns", timeout=30)
