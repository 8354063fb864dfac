"""A retrieval that failed verification is retried as soon as the verification inputs change in
the cluster (a signature ConfigMap, the configuration ConfigMap, spec.signatureStores), not a
retry interval later; meanwhile the failure stays visible."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest

from cvo_py.compose.start import ClusterVersionSide
from cvo_py.runtime.kube import CLUSTERVERSIONS, KubeClient
from payload.verify.verifier import persist_signature
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import create_cv, status_414
from testkit.harness.payload import (
    ClusterVerification,
    ensure_priority_class,
    release_accepted,
    request_update,
    sign_release,
    status_operator,
    version_pods,
)
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

UNSIGNED = "quay.io/openshift-release-dev/ocp-release@sha256:" + "e" * 64
WHY_CONFIGMAP = f"Release verification input changed (ConfigMap sha256-{'e' * 64} changed)"
WHY_STORES = "Release verification input changed (spec.signatureStores changed)"


def unverified(kube: KubeClient) -> bool:
    condition = release_accepted(kube)
    return condition.get("status") == "False" and "cannot be verified" in str(condition.get("message"))


@pytest.fixture
def failed(
    cluster: LocalCluster, kube: KubeClient, namespace: str, verification: ClusterVerification
) -> Iterator[ClusterVersionSide]:
    """A status loop whose retrieval of an unsigned release failed verification once; its own
    retry interval (10 min) is longer than any test."""
    ensure_priority_class(kube)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    request_update(kube, UNSIGNED, "4.14.9")
    op: ClusterVersionSide = status_operator(
        cluster.kubeconfig,
        namespace,
        "cvo-py/verification-retry",
        retrieval_retry=600.0,
        verification_namespace=ClusterVerification.NAMESPACE,
    )
    op.start()
    try:
        wait_until(lambda: unverified(kube), timeout=30, what="ReleaseAccepted=False: cannot be verified")
        assert retrievals(op) == 1
        yield op
    finally:
        op.stop()


def retrievals(op: ClusterVersionSide) -> int:
    assert op.retrieval is not None
    return op.retrieval.coordinator.retrievals


def test_a_published_signature_retries_the_failed_retrieval_at_once(
    failed: ClusterVersionSide,
    kube: KubeClient,
    namespace: str,
    verification: ClusterVerification,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="payload.reverify")
    # What a signature controller (or an admin) does: publish the signature in the cluster.
    signature = sign_release(verification.key, UNSIGNED)
    persist_signature(kube, ClusterVerification.NAMESPACE, f"sha256:{'e' * 64}", signature)
    wait_until(lambda: version_pods(kube, namespace), timeout=15, what="the retried retrieval's version Pod")
    assert retrievals(failed) == 2
    # The retry is under way, and the reason of the last failure is still what the admin reads.
    assert unverified(kube)
    wait_until(lambda: WHY_CONFIGMAP in caplog.text, timeout=15, what="the reason logged")


def test_changed_signature_stores_retry_the_failed_retrieval_at_once(
    failed: ClusterVersionSide, kube: KubeClient, verification: ClusterVerification, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="payload.reverify")
    kube.patch(CLUSTERVERSIONS, "version", {"spec": {"signatureStores": [{"url": verification.store.url}]}})
    wait_until(lambda: retrievals(failed) == 2, timeout=15, what="a second retrieval")
    wait_until(lambda: WHY_STORES in caplog.text, timeout=15, what="the reason logged")
