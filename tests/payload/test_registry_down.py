"""A release image whose registry refuses connections: `start` says so at once
(`ReleaseAccepted=False` with the kubelet's text), then tries the retrieval again with backoff,
so once the registry is back the update proceeds without the admin asking again."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import KubeClient
from testkit.fakes.versionpod import VersionPodKubelet, registry_unavailable
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import create_cv, status_414
from testkit.harness.payload import (
    NODE,
    ClusterVerification,
    StartProcess,
    ensure_priority_class,
    release_accepted,
    request_update,
)
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

IMAGE = "registry.example:5000/ocp-release@sha256:" + "e" * 64


def release_accepted_is(kube: KubeClient, status: str) -> dict[str, Any] | None:
    condition = release_accepted(kube)
    return condition if condition.get("status") == status else None


def test_a_registry_that_refuses_connections_fails_at_once_and_is_retried_until_it_is_back(
    cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path, verification: ClusterVerification
) -> None:
    ensure_priority_class(kube)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    verification.sign(IMAGE)
    start = StartProcess(cluster.kubeconfig, namespace, tmp_path)
    node = VersionPodKubelet(kube, namespace, NODE, start.payload_dir, {IMAGE: "4.14.9"})
    node.unavailable.add(IMAGE)
    node.start()
    try:
        request_update(kube, IMAGE, "4.14.9")
        # Reported as soon as the kubelet writes the pull failure (not after the Pod's deadline).
        failed = wait_until(lambda: release_accepted_is(kube, "False"), timeout=30, what="ReleaseAccepted=False")
        assert start.proc.poll() is None, start.log()
        first_pod = node.pods[0]
        assert failed["reason"] == "RetrievePayload"
        assert failed["message"] == (
            f'Retrieving payload failed version="4.14.9" image="{IMAGE}" failure=Unable to download and prepare '
            f"the update: fetching update payload: the release image's registry is unavailable (pod {first_pod}, "
            f"init container cleanup): RegistryUnavailable: {registry_unavailable(IMAGE)}"
        )

        # The registry comes back: a later attempt (a new version Pod) pulls and the update proceeds.
        node.unavailable.discard(IMAGE)
        accepted = wait_until(lambda: release_accepted_is(kube, "True"), timeout=90, what="ReleaseAccepted=True")
        assert start.proc.poll() is None, start.log()
    finally:
        node.stop()
        start.stop()
    assert len(node.pods) >= 2 and node.pods[-1] != first_pod
    assert accepted["reason"] == "PayloadLoaded"
    assert accepted["message"] == f'Payload loaded version="4.14.9" image="{IMAGE}" architecture="amd64"'
    assert node.errors == []
