"""Release verification with real OpenPGP signatures (throwaway keys made here) and HTTP stores
mocked with `responses`: every store and signature failure mode, and the parallel search."""

from __future__ import annotations

import json
import threading
from typing import Any

import pysequoia
import pytest
import requests
import responses

from payload.retrieval import VerificationError
from payload.verify.config import Store, VerifierConfig
from payload.verify.signature import MAX_FAILURE
from payload.verify.verifier import UNTRUSTED, ReleaseVerifier

HEX = "5d" * 32
DIGEST = f"sha256:{HEX}"
IMAGE = f"quay.io/openshift-release-dev/ocp-release@{DIGEST}"
STORE_A = "https://store-a.example/sigs"
STORE_B = "https://store-b.example/sigs"


@pytest.fixture(scope="module")
def key() -> Any:
    return pysequoia.Tsk.generate("release key <release@example.com>")


@pytest.fixture(scope="module")
def other_key() -> Any:
    return pysequoia.Tsk.generate("someone else <else@example.com>")


def sign(tsk: Any, digest: str = DIGEST, type_: str = "atomic container signature") -> bytes:
    doc = {"critical": {"type": type_, "image": {"docker-manifest-digest": digest},
                        "identity": {"docker-reference": IMAGE}}, "optional": {"creator": "test"}}
    return bytes(pysequoia.sign(tsk.signer(), json.dumps(doc).encode(), armor=False))


def sig_url(store: str, n: int) -> str:
    return f"{store}/sha256={HEX}/signature-{n}"


def verifier(key: Any, stores: tuple[str, ...] = (STORE_A,), persisted: list[tuple[str, bytes]] | None = None,
             **config: Any) -> ReleaseVerifier:
    cfg = VerifierConfig(
        source="ConfigMap openshift-config-managed/release-verification",
        keyrings={"verifier-public-key-test": str(key.extract_certificate())},
        stores=tuple(Store(f"store-{i}", url) for i, url in enumerate(stores)),
        **config,
    )
    sink = persisted if persisted is not None else []
    return ReleaseVerifier(lambda: cfg, persist=lambda d, s: sink.append((d, s)), fetch_timeout=2.0)


@responses.activate
def test_valid_signature_verifies_is_persisted_and_cached(key: Any) -> None:
    signature = sign(key)
    responses.get(sig_url(STORE_A, 1), body=signature)
    persisted: list[tuple[str, bytes]] = []
    v = verifier(key, persisted=persisted)
    v.verify(IMAGE, 10)
    assert persisted == [(DIGEST, signature)]
    calls = len(responses.calls)
    v.verify(IMAGE, 10)  # cached: no second fetch
    assert len(responses.calls) == calls
    assert v.metrics.verifications.labels("cached")._value.get() == 1


def test_signature_from_a_configmap_needs_no_store(key: Any) -> None:
    import base64

    cm = {"metadata": {"name": f"sha256-{HEX}", "namespace": "openshift-config-managed"},
          "binaryData": {f"sha256-{HEX}-1": base64.b64encode(sign(key)).decode()}}
    verifier(key, stores=(), signature_configmaps=(cm,)).verify(IMAGE, 10)


def expect_failure(v: ReleaseVerifier, tail: str) -> None:
    with pytest.raises(VerificationError) as err:
        v.verify(IMAGE, 10)
    assert str(err.value) == f"unable to verify {DIGEST} against keyrings: verifier-public-key-test; {tail}"


@pytest.mark.parametrize(
    ("setup", "tail"),
    [
        ("wrong key", f"{sig_url(STORE_A, 1)}: {UNTRUSTED}"),
        ("wrong digest", f'{sig_url(STORE_A, 1)}: signature digest does not match (signed "sha256:{"ab" * 32}")'),
        ("wrong type", f'{sig_url(STORE_A, 1)}: signature type "something else" is not "atomic container signature"'),
        ("404 first", f"{sig_url(STORE_A, 1)}: no signature in this store (HTTP 404)"),
        ("500", f"{sig_url(STORE_A, 1)}: store unreachable: HTTP 500 Internal Server Error"),
        ("timeout", f"{sig_url(STORE_A, 1)}: store unreachable: no answer within 2.0s"),
        ("connection refused", f"{sig_url(STORE_A, 1)}: store unreachable: connection refused"),
        ("garbage", f"{sig_url(STORE_A, 1)}: not an OpenPGP signed message (unexpected EOF)"),
    ],
)
@responses.activate
def test_store_failure_modes(key: Any, other_key: Any, setup: str, tail: str) -> None:
    url = sig_url(STORE_A, 1)
    if setup == "wrong key":
        responses.get(url, body=sign(other_key))
    elif setup == "wrong digest":
        responses.get(url, body=sign(key, digest=f"sha256:{'ab' * 32}"))
    elif setup == "wrong type":
        responses.get(url, body=sign(key, type_="something else"))
    elif setup == "404 first":
        responses.get(url, status=404)
    elif setup == "500":
        responses.get(url, status=500)
    elif setup == "timeout":
        responses.get(url, body=requests.exceptions.ReadTimeout("read timed out"))
    elif setup == "connection refused":
        responses.get(url, body=requests.exceptions.ConnectionError("[Errno 111] Connection refused"))
    elif setup == "garbage":
        responses.get(url, body=b"garbage")
    if setup in ("wrong key", "wrong digest", "wrong type", "garbage"):
        responses.get(sig_url(STORE_A, 2), status=404)
    expect_failure(verifier(key), tail)


@responses.activate
def test_search_stops_at_the_first_404_and_at_ten(key: Any, other_key: Any) -> None:
    for n in range(1, 12):
        responses.get(sig_url(STORE_A, n), body=sign(other_key))
    with pytest.raises(VerificationError) as err:
        verifier(key).verify(IMAGE, 10)
    # Ten failed signatures stay one bounded, readable line.
    assert len(str(err.value)) <= MAX_FAILURE and str(err.value).endswith(f"signature-10: {UNTRUSTED}")
    assert [c.request.url for c in responses.calls] == [sig_url(STORE_A, n) for n in range(1, 11)]


@responses.activate
def test_second_signature_is_accepted(key: Any, other_key: Any) -> None:
    responses.get(sig_url(STORE_A, 1), body=sign(other_key))
    responses.get(sig_url(STORE_A, 2), body=sign(key))
    verifier(key).verify(IMAGE, 10)


@responses.activate
def test_slow_store_does_not_delay_a_store_that_has_the_signature(key: Any) -> None:
    release = threading.Event()

    def slow(_request: Any) -> tuple[int, dict[str, str], bytes]:
        release.wait(10)
        return 404, {}, b""

    responses.add_callback(responses.GET, sig_url(STORE_A, 1), callback=slow)
    responses.get(sig_url(STORE_B, 1), body=sign(key))
    try:
        # Returns while store A is still blocked: the search does not wait for it.
        verifier(key, stores=(STORE_A, STORE_B)).verify(IMAGE, 10)
        assert not release.is_set()
    finally:
        release.set()


@responses.activate
def test_every_store_is_reported(key: Any) -> None:
    responses.get(sig_url(STORE_A, 1), status=404)
    responses.get(sig_url(STORE_B, 1), status=503)
    with pytest.raises(VerificationError) as err:
        verifier(key, stores=(STORE_A, STORE_B)).verify(IMAGE, 10)
    text = str(err.value)
    assert f"{sig_url(STORE_A, 1)}: no signature in this store (HTTP 404)" in text
    assert f"{sig_url(STORE_B, 1)}: store unreachable: HTTP 503 Service Unavailable" in text


@pytest.mark.parametrize(
    ("image", "error"),
    [
        ("quay.io/openshift-release-dev/ocp-release:4.19.1",
         "release images that are not accessed via digest cannot be verified"),
        ("quay.io/x@sha256:abc", 'the provided release image digest has an invalid format: "sha256:abc"'),
        (f"quay.io/x@md5:{HEX}", f'the provided release image digest has an invalid format: "md5:{HEX}"'),
    ],
)
def test_bad_pullspecs_use_upstream_wording(key: Any, image: str, error: str) -> None:
    with pytest.raises(VerificationError, match=error.replace("(", r"\(")):
        verifier(key).verify(image, 10)


@pytest.mark.parametrize(
    ("problem", "message"),
    [("no ConfigMap in openshift-config-managed is annotated release.openshift.io/verification-config-map",
      "verification is not possible: no ConfigMap in openshift-config-managed is annotated "
      "release.openshift.io/verification-config-map")],
)
def test_missing_configuration_is_a_clear_message(problem: str, message: str) -> None:
    v = ReleaseVerifier(lambda: VerifierConfig(problem=problem))
    with pytest.raises(VerificationError) as err:
        v.verify(IMAGE, 10)
    assert str(err.value) == message


def test_malformed_keyring_is_a_clear_message() -> None:
    v = ReleaseVerifier(lambda: VerifierConfig(source="ConfigMap ns/cm", keyrings={"verifier-public-key-x": "junk"}))
    with pytest.raises(VerificationError) as err:
        v.verify(IMAGE, 10)
    assert str(err.value).startswith(
        "the release verifier is incorrectly configured, unable to verify digests: keyring verifier-public-key-x in "
        "ConfigMap ns/cm: "
    )
