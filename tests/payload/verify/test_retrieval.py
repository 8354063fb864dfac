"""Verification before the version Pod, on the real API server: the configuration ConfigMap,
a real HTTP signature store (a local server), and what the admin reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from cvo_py.runtime.kube import CONFIGMAPS, KubeClient
from payload.acceptance import ReleaseAcceptance
from payload.verify.config import CONFIG_ANNOTATION, SIGNATURES_LABEL
from testkit.fakes.kubelet import Kubelet, waiting
from testkit.harness.payload import (
    IMAGE,
    Retrieval,
    SignatureStore,
    ensure_priority_class,
    options,
    sign_release,
    version_pods,
    write_payload,
)

HEX = IMAGE.rsplit(":", 1)[1]


@pytest.fixture
def store() -> Iterator[SignatureStore]:
    s = SignatureStore()
    yield s
    s.close()


def configure(kube: KubeClient, namespace: str, key: Any, store_url: str) -> None:
    kube.create(
        CONFIGMAPS,
        {
            "metadata": {
                "name": "release-verification",
                "namespace": namespace,
                "annotations": {CONFIG_ANNOTATION: ""},
            },
            "data": {"verifier-public-key-test": str(key.extract_certificate()), "store-local": store_url},
        },
    )


def verifying(kube: KubeClient, namespace: str, payload_dir: Path, force: bool = False) -> Retrieval:
    """A retrieval that verifies the release with the configuration in `namespace` first."""
    return Retrieval(kube, options(namespace, payload_dir), force=force, verification_namespace=namespace)


def sample(run: Retrieval, name: str, **labels: str) -> float:
    value = run.retriever.metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def verifications(run: Retrieval) -> dict[str, float]:
    """cluster_version_release_verifications_total by outcome (zeros left out)."""
    outcomes = ("verified", "cached", "failed", "not_configured", "forced")
    counts = {o: sample(run, "cluster_version_release_verifications_total", outcome=o) for o in outcomes}
    return {o: n for o, n in counts.items() if n}


@pytest.fixture
def payload_dir(tmp_path: Path) -> Path:
    (tmp_path / "p").mkdir()
    return tmp_path / "p"


def test_unsigned_unforced_update_is_blocked_before_any_pod(
    kube: KubeClient, namespace: str, payload_dir: Path, key: Any, store: SignatureStore
) -> None:
    configure(kube, namespace, key, store.url)
    run = verifying(kube, namespace, payload_dir).start()
    result = run.finish(timeout=20)
    assert result == ReleaseAcceptance(
        "False",
        "RetrievePayload",
        f'Retrieving payload failed version="4.19.1" image="{IMAGE}" failure=The update cannot be verified: unable '
        f"to verify sha256:{HEX} against keyrings: verifier-public-key-test; {store.url}/sha256={HEX}/signature-1: "
        "no signature in this store (HTTP 404)",
    )
    assert not version_pods(kube, namespace)
    assert verifications(run) == {"failed": 1}
    assert sample(run, "cluster_version_payload_retrieval_failures_total", reason="ImageVerificationFailed") == 1
    assert sample(run, "cluster_version_payload_retrieval_duration_seconds_count", result="failure") == 1
    assert sample(run, "cluster_version_signature_store_fetch_duration_seconds_count", store=store.url) == 1


def test_unreachable_store_is_named_with_its_error(
    kube: KubeClient, namespace: str, payload_dir: Path, key: Any, store: SignatureStore
) -> None:
    url = store.url
    store.close()  # nothing listens there any more
    configure(kube, namespace, key, url)
    result = verifying(kube, namespace, payload_dir).start().finish(timeout=20)
    assert result.message == (
        f'Retrieving payload failed version="4.19.1" image="{IMAGE}" failure=The update cannot be verified: unable '
        f"to verify sha256:{HEX} against keyrings: verifier-public-key-test; {url}/sha256={HEX}/signature-1: "
        f"store unreachable: dial tcp 127.0.0.1:{urlsplit(url).port}: connect: connection refused"
    )


def test_no_configuration_means_verification_is_not_possible(
    kube: KubeClient, namespace: str, payload_dir: Path
) -> None:
    run = verifying(kube, namespace, payload_dir).start()
    assert run.finish(timeout=20).message == (
        f'Retrieving payload failed version="4.19.1" image="{IMAGE}" failure=The update cannot be verified: '
        f"verification is not possible: no ConfigMap in {namespace} is annotated {CONFIG_ANNOTATION}"
    )
    assert verifications(run) == {"not_configured": 1}


def test_forced_update_continues_to_the_pod_and_says_so(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, key: Any, store: SignatureStore
) -> None:
    ensure_priority_class(kube)
    configure(kube, namespace, key, store.url)
    run = verifying(kube, namespace, payload_dir, force=True).start()
    pod = run.wait_pod()["metadata"]["name"]
    forced = run.wait_report(lambda r: "forced" in r.message)
    assert forced.message.startswith(
        f'Target release version="4.19.1" image="{IMAGE}" cannot be verified, but continuing anyway because the '
        f"update was forced: unable to verify sha256:{HEX} against keyrings: verifier-public-key-test"
    )
    # A pull problem while waiting is shown without hiding that the release is unverified.
    kubelet.set_container_state(pod, namespace, "cleanup", waiting("ImagePullBackOff", "Back-off pulling"), init=True)
    waiting_report = run.wait_report(lambda r: "still waiting" in r.message)
    assert waiting_report.message.startswith(forced.message + "; still waiting: cannot pull the release image yet")
    write_payload(payload_dir, IMAGE)
    kubelet.succeed(pod, namespace)
    assert run.finish(timeout=20).reason == "PayloadLoaded"
    assert run.retriever.last_result is not None and not run.retriever.last_result.verified
    assert verifications(run) == {"forced": 1}


def test_signed_update_goes_on_to_the_pod_and_keeps_the_signature(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, key: Any, store: SignatureStore
) -> None:
    ensure_priority_class(kube)
    signature = sign_release(key, IMAGE)
    store.signatures[f"/sigs/sha256={HEX}/signature-1"] = signature
    configure(kube, namespace, key, store.url)
    run = verifying(kube, namespace, payload_dir).start()
    pod = run.wait_pod()["metadata"]["name"]
    write_payload(payload_dir, IMAGE)
    kubelet.succeed(pod, namespace)
    assert run.finish(timeout=20).status == "True"
    assert run.retriever.last_result is not None and run.retriever.last_result.verified
    assert verifications(run) == {"verified": 1}
    assert sample(run, "cluster_version_payload_retrieval_duration_seconds_count", result="success") == 1
    kept = kube.get(CONFIGMAPS, f"sha256-{HEX}", namespace)
    assert SIGNATURES_LABEL in kept["metadata"]["labels"]
    import base64

    assert base64.b64decode(kept["binaryData"][f"sha256-{HEX}-1"]) == signature
