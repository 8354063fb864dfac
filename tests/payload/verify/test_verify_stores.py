"""Release verification with real OpenPGP signatures (throwaway keys made here, by pysequoia and
by GnuPG) and HTTP stores mocked with `responses`: every store and signature failure mode, and the
parallel search."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pysequoia
import pytest
import requests
import responses
from pysequoia.packet import PacketPile, Tag

from payload.verify.config import Store, VerifierConfig
from payload.verify.errors import VerificationError
from payload.verify.signature import MAX_FAILURE
from payload.verify.verifier import UNTRUSTED, ReleaseVerifier

HEX = "5d" * 32
DIGEST = f"sha256:{HEX}"
IMAGE = f"quay.io/openshift-release-dev/ocp-release@{DIGEST}"
STORE_A = "https://store-a.example/sigs"
STORE_B = "https://store-b.example/sigs"


@pytest.fixture(scope="module")
def other_key() -> Any:
    return pysequoia.Tsk.generate("someone else <else@example.com>")


def release_json(digest: str = DIGEST, type_: str = "atomic container signature") -> bytes:
    doc = {"critical": {"type": type_, "image": {"docker-manifest-digest": digest},
                        "identity": {"docker-reference": IMAGE}}, "optional": {"creator": "test"}}
    return json.dumps(doc).encode()


def sign(tsk: Any, digest: str = DIGEST, type_: str = "atomic container signature") -> bytes:
    return bytes(pysequoia.sign(tsk.signer(), release_json(digest, type_), armor=False))


def issuer(signature: bytes) -> str:
    """The signing (sub)key's fingerprint, as pysequoia reads it, in the reason's upper case."""
    sigs = [p for p in PacketPile.from_bytes(signature) if p.tag == Tag.Signature]
    return str(sigs[0].issuer_fingerprint).upper()


def sig_url(store: str, n: int) -> str:
    return f"{store}/sha256={HEX}/signature-{n}"


def verifier(key: Any, stores: tuple[str, ...] = (STORE_A,), persisted: list[tuple[str, bytes]] | None = None,
             now: datetime | None = None, **config: Any) -> ReleaseVerifier:
    """`key` is a pysequoia key or an armored public certificate."""
    armored = key if isinstance(key, str) else str(key.extract_certificate())
    cfg = VerifierConfig(
        source="ConfigMap openshift-config-managed/release-verification",
        keyrings={"verifier-public-key-test": armored},
        stores=tuple(Store(f"store-{i}", url) for i, url in enumerate(stores)),
        **config,
    )
    sink = persisted if persisted is not None else []
    clock = (lambda: datetime.now(UTC)) if now is None else (lambda: now)
    return ReleaseVerifier(lambda: cfg, persist=lambda d, s: sink.append((d, s)), fetch_timeout=2.0, now=clock)


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
        ("wrong key", f"{sig_url(STORE_A, 1)}: signed by key <other key>, which is not in the keyrings"),
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
        tail = tail.replace("<other key>", issuer(sign(other_key)))
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
    reason = f"signed by key {issuer(sign(other_key))}, which is not in the keyrings"
    assert len(str(err.value)) <= MAX_FAILURE and str(err.value).endswith(f"signature-10: {reason}")
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


# -- signatures made by GnuPG -------------------------------------------------------------------
# pysequoia cannot make a signature that expires, and gpg writes signed messages as real release
# signatures are written (compressed, one-pass). The key lives in a throwaway GNUPGHOME only.

GPG_TIME = "20200101T000000!"  # gpg's clock, frozen: keys and signatures are made at 2020-01-01
NOW = datetime(2025, 6, 1, tzinfo=UTC)


class Gpg:
    def __init__(self, binary: str, home: Path) -> None:
        self.binary = binary
        self.env = {**os.environ, "GNUPGHOME": str(home)}

    def run(self, *args: str, data: bytes = b"") -> bytes:
        cmd = [self.binary, "--batch", "--pinentry-mode", "loopback", "--passphrase", "",
               "--faked-system-time", GPG_TIME, *args]
        done = subprocess.run(cmd, input=data, env=self.env, capture_output=True, timeout=120, check=False)
        if done.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed: {done.stderr.decode(errors='replace')}")
        return done.stdout

    def sign(self, data: bytes, *options: str, expire: str | None = None) -> bytes:
        expiry = ["--default-sig-expire", expire] if expire else []
        return self.run(*expiry, *options, "--sign", data=data)

    @property
    def public_key(self) -> str:
        return self.run("--armor", "--export").decode()

    @property
    def fingerprint(self) -> str:
        lines = self.run("--with-colons", "--list-keys").decode().splitlines()
        return next(line.split(":")[9] for line in lines if line.startswith("fpr:"))


@pytest.fixture(scope="module")
def gpg() -> Iterator[Gpg]:
    binary = shutil.which("gpg") or ("/usr/bin/gpg" if os.access("/usr/bin/gpg", os.X_OK) else None)
    if binary is None:
        pytest.skip("gpg (GnuPG) not found on PATH or at /usr/bin/gpg: it makes the expired signatures here")
    # A short path under /tmp: gpg-agent's socket path must stay short.
    home = Path(tempfile.mkdtemp(prefix="cvo-gpg-"))
    tool = Gpg(binary, home)
    try:
        tool.run("--quick-generate-key", "release key 2020 <release@example.com>", "ed25519", "sign", "never")
        yield tool
    finally:
        gpgconf = shutil.which("gpgconf")
        if gpgconf:
            subprocess.run([gpgconf, "--kill", "gpg-agent"], env=tool.env, capture_output=True, timeout=30,
                           check=False)
        shutil.rmtree(home, ignore_errors=True)


@responses.activate
def test_gpg_signature_that_expired_in_2020_says_when(gpg: Gpg) -> None:
    signature = gpg.sign(release_json(), expire="1d")
    assert signature[0] == 0xA3  # as release signatures: a compressed packet of indeterminate length
    responses.get(sig_url(STORE_A, 1), body=signature)
    responses.get(sig_url(STORE_A, 2), status=404)
    expect_failure(verifier(gpg.public_key, now=NOW),
                   f"{sig_url(STORE_A, 1)}: signature expired at 2020-01-02T00:00:00Z")


def test_gpg_expired_signature_from_a_configmap_says_when(gpg: Gpg) -> None:
    import base64

    cm = {"metadata": {"name": f"sha256-{HEX}", "namespace": "openshift-config-managed"},
          "binaryData": {f"sha256-{HEX}-1": base64.b64encode(gpg.sign(release_json(), expire="1d")).decode()}}
    expect_failure(verifier(gpg.public_key, stores=(), now=NOW, signature_configmaps=(cm,)),
                   f"ConfigMap openshift-config-managed/sha256-{HEX} key sha256-{HEX}-1: "
                   "signature expired at 2020-01-02T00:00:00Z")


@responses.activate
def test_gpg_signature_by_a_key_outside_the_keyrings_names_the_key(gpg: Gpg, key: Any) -> None:
    responses.get(sig_url(STORE_A, 1), body=gpg.sign(release_json()))
    responses.get(sig_url(STORE_A, 2), status=404)
    expect_failure(verifier(key, now=NOW),
                   f"{sig_url(STORE_A, 1)}: signed by key {gpg.fingerprint}, which is not in the keyrings")


@responses.activate
def test_gpg_signature_that_does_not_expire_verifies(gpg: Gpg) -> None:
    signature = gpg.sign(release_json())
    responses.get(sig_url(STORE_A, 1), body=signature)
    persisted: list[tuple[str, bytes]] = []
    verifier(gpg.public_key, persisted=persisted, now=NOW).verify(IMAGE, 10)
    assert persisted == [(DIGEST, signature)]


@responses.activate
def test_altered_gpg_signature_by_a_trusted_key_keeps_the_generic_reason(gpg: Gpg) -> None:
    # Trusted issuer, not expired, yet invalid: the packet tells nothing more.
    signature = gpg.sign(release_json(), "--compress-algo", "none").replace(b"atomic", b"Atomic")
    assert b"Atomic container signature" in signature
    responses.get(sig_url(STORE_A, 1), body=signature)
    responses.get(sig_url(STORE_A, 2), status=404)
    expect_failure(verifier(gpg.public_key, now=NOW), f"{sig_url(STORE_A, 1)}: {UNTRUSTED}")


@pytest.mark.parametrize(
    ("behaviour", "said"),
    [
        ("escape-status", "store unreachable: HTTP 500 \\x1b]0;owned\\a\\x1b[2J"),
        ("close", "store unreachable: EOF"),
        ("reset", "store unreachable: read tcp 127.0.0.1:"),
        ("garbage", 'store unreachable: net/http: HTTP/1.x transport connection broken: malformed HTTP response'),
    ],
)
def test_a_store_that_answers_badly_is_one_escaped_go_shaped_line(key: Any, behaviour: str, said: str) -> None:
    """A real server (not a mock): what the store says reaches ReleaseAccepted escaped, and its
    transport failures in Go's words, never Python's."""
    from cvo_py.testing.hostile.servers import HostileServer
    from cvo_py.testing.hostile.values import PYTHON_WORDING, RAW_CONTROL

    with HostileServer(behaviour) as server, pytest.raises(VerificationError) as err:
        verifier(key, stores=(server.url,)).verify(IMAGE, 10)
    text = str(err.value)
    assert said in text, text
    assert not PYTHON_WORDING.search(text) and not RAW_CONTROL.search(text) and "\n" not in text, text
