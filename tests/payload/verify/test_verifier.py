"""Release verification with real OpenPGP signatures (throwaway keys made here, by pysequoia and
by GnuPG) and real local HTTP stores (the toolkit's `SignatureStore`, and its servers that answer
badly): every store and signature failure mode, the parallel search, and the whole-request
deadline against a store that drips its answer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pysequoia
import pytest
from pysequoia.packet import PacketPile, Tag

from payload.verify.config import Store, VerifierConfig
from payload.verify.errors import VerificationError
from payload.verify.signature import MAX_FAILURE
from payload.verify.verifier import MAX_SIGNATURE_BYTES, UNTRUSTED, ReleaseVerifier
from testkit.harness.cluster import free_port
from testkit.harness.payload import SignatureStore

HEX = "5d" * 32
DIGEST = f"sha256:{HEX}"
IMAGE = f"quay.io/openshift-release-dev/ocp-release@{DIGEST}"
FETCH_TIMEOUT = 2.0


@pytest.fixture(scope="module")
def other_key() -> Any:
    return pysequoia.Tsk.generate("someone else <else@example.com>")


@pytest.fixture
def new_store() -> Iterator[Callable[[], SignatureStore]]:
    """Real local signature stores, closed after the test."""
    opened: list[SignatureStore] = []

    def new() -> SignatureStore:
        opened.append(SignatureStore())
        return opened[-1]

    yield new
    for store in opened:
        store.close()


@pytest.fixture
def store(new_store: Callable[[], SignatureStore]) -> SignatureStore:
    return new_store()


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


def sig_url(store: SignatureStore | str, n: int) -> str:
    base = store if isinstance(store, str) else store.url
    return f"{base}/sha256={HEX}/signature-{n}"


def put(store: SignatureStore, n: int, body: bytes) -> None:
    store.signatures[store.path(HEX, n)] = body


def verifier(key: Any, stores: tuple[SignatureStore | str, ...] = (),
             persisted: list[tuple[str, bytes]] | None = None, now: datetime | None = None,
             fetch_timeout: float = FETCH_TIMEOUT, **config: Any) -> ReleaseVerifier:
    """`key` is a pysequoia key or an armored public certificate."""
    armored = key if isinstance(key, str) else str(key.extract_certificate())
    urls = [s if isinstance(s, str) else s.url for s in stores]
    cfg = VerifierConfig(
        source="ConfigMap openshift-config-managed/release-verification",
        keyrings={"verifier-public-key-test": armored},
        stores=tuple(Store(f"store-{i}", url) for i, url in enumerate(urls)),
        **config,
    )
    sink = persisted if persisted is not None else []
    clock = (lambda: datetime.now(UTC)) if now is None else (lambda: now)
    return ReleaseVerifier(lambda: cfg, persist=lambda d, s: sink.append((d, s)), fetch_timeout=fetch_timeout,
                           now=clock)


def test_valid_signature_verifies_is_persisted_and_cached(key: Any, store: SignatureStore) -> None:
    signature = sign(key)
    put(store, 1, signature)
    persisted: list[tuple[str, bytes]] = []
    v = verifier(key, (store,), persisted=persisted)
    v.verify(IMAGE, 10)
    assert persisted == [(DIGEST, signature)]
    asked = len(store.asked)
    v.verify(IMAGE, 10)  # cached: no second fetch
    assert len(store.asked) == asked
    assert v.metrics.verifications.labels("cached")._value.get() == 1


def test_signature_from_a_configmap_needs_no_store(key: Any) -> None:
    import base64

    cm = {"metadata": {"name": f"sha256-{HEX}", "namespace": "openshift-config-managed"},
          "binaryData": {f"sha256-{HEX}-1": base64.b64encode(sign(key)).decode()}}
    verifier(key, stores=(), signature_configmaps=(cm,)).verify(IMAGE, 10)


def expect_failure(v: ReleaseVerifier, tail: str, timeout: float = 10) -> None:
    with pytest.raises(VerificationError) as err:
        v.verify(IMAGE, timeout)
    assert str(err.value) == f"unable to verify {DIGEST} against keyrings: verifier-public-key-test; {tail}"


@pytest.mark.parametrize(
    ("setup", "tail", "error_kind"),
    [
        ("wrong key", "{url}: signed by key <other key>, which is not in the keyrings", None),
        ("wrong digest", f'{{url}}: signature digest does not match (signed "sha256:{"ab" * 32}")', None),
        ("wrong type", '{url}: signature type "something else" is not "atomic container signature"', None),
        ("404 first", "{url}: no signature in this store (HTTP 404)", None),
        ("500", "{url}: store unreachable: HTTP 500 Internal Server Error", "http_500"),
        ("timeout", f"{{url}}: store unreachable: no answer within {FETCH_TIMEOUT:.1f}s", "timeout"),
        ("connection refused", "{url}: store unreachable: dial tcp 127.0.0.1:{port}: connect: connection refused",
         "connection"),
        ("garbage", "{url}: not an OpenPGP signed message (unexpected EOF)", "garbage"),
        ("too large", f"{{url}}: larger than {MAX_SIGNATURE_BYTES} bytes, not a signature", "garbage"),
    ],
)
def test_store_failure_modes(key: Any, other_key: Any, store: SignatureStore, setup: str, tail: str,
                             error_kind: str | None) -> None:
    path = store.path(HEX, 1)
    base = store.url
    if setup == "wrong key":
        put(store, 1, sign(other_key))
        tail = tail.replace("<other key>", issuer(sign(other_key)))
    elif setup == "wrong digest":
        put(store, 1, sign(key, digest=f"sha256:{'ab' * 32}"))
    elif setup == "wrong type":
        put(store, 1, sign(key, type_="something else"))
    elif setup == "500":
        store.statuses[path] = 500
    elif setup == "timeout":
        store.faults[path] = "hang"
    elif setup == "connection refused":
        port = free_port()
        base = f"http://127.0.0.1:{port}/sigs"
        tail = tail.replace("{port}", str(port))
    elif setup == "garbage":
        put(store, 1, b"garbage")
    elif setup == "too large":
        put(store, 1, b"x" * (MAX_SIGNATURE_BYTES + 1))
    v = verifier(key, (base,))
    expect_failure(v, tail.format(url=sig_url(base, 1)))
    if error_kind is not None:
        assert v.metrics.store_fetch_errors.labels(base, error_kind)._value.get() == 1
    if setup in ("wrong key", "wrong digest", "wrong type", "garbage", "too large"):  # on to the next one
        assert store.asked == [path, store.path(HEX, 2)]


def test_search_stops_at_the_first_404_and_at_ten(key: Any, other_key: Any, store: SignatureStore) -> None:
    for n in range(1, 12):
        put(store, n, sign(other_key))
    with pytest.raises(VerificationError) as err:
        verifier(key, (store,)).verify(IMAGE, 10)
    # Ten failed signatures stay one bounded, readable line.
    reason = f"signed by key {issuer(sign(other_key))}, which is not in the keyrings"
    assert len(str(err.value)) <= MAX_FAILURE and str(err.value).endswith(f"signature-10: {reason}")
    assert store.asked == [store.path(HEX, n) for n in range(1, 11)]


def test_second_signature_is_accepted(key: Any, other_key: Any, store: SignatureStore) -> None:
    put(store, 1, sign(other_key))
    put(store, 2, sign(key))
    verifier(key, (store,)).verify(IMAGE, 10)


def test_slow_store_does_not_delay_a_store_that_has_the_signature(
    key: Any, new_store: Callable[[], SignatureStore]
) -> None:
    slow, good = new_store(), new_store()
    slow.faults[slow.path(HEX, 1)] = "hang"
    put(good, 1, sign(key))
    started = time.monotonic()
    verifier(key, (slow, good), fetch_timeout=120).verify(IMAGE, 120)
    # Well before the slow store's request could end: the search does not wait for it.
    assert time.monotonic() - started < 60


def test_every_store_is_reported(key: Any, new_store: Callable[[], SignatureStore]) -> None:
    a, b = new_store(), new_store()
    b.statuses[b.path(HEX, 1)] = 503
    with pytest.raises(VerificationError) as err:
        verifier(key, (a, b)).verify(IMAGE, 10)
    text = str(err.value)
    assert f"{sig_url(a, 1)}: no signature in this store (HTTP 404)" in text
    assert f"{sig_url(b, 1)}: store unreachable: HTTP 503 Service Unavailable" in text


def test_a_dripping_store_is_cut_at_the_fetch_timeout(key: Any, store: SignatureStore) -> None:
    """A store that sends a byte now and then never trips a per-read timeout: the whole request
    ends at `fetch_timeout`, long before the verification's own deadline."""
    store.faults[store.path(HEX, 1)] = "drip"
    v = verifier(key, (store,), fetch_timeout=1.0)
    started = time.monotonic()
    expect_failure(v, f"{sig_url(store, 1)}: store unreachable: no answer within 1.0s", timeout=60)
    assert 1.0 <= time.monotonic() - started < 60
    assert store.abandoned.wait(30), "the verifier kept reading the dripping answer"
    assert v.metrics.store_fetch_errors.labels(store.url, "timeout")._value.get() == 1


def test_a_dripping_store_is_cut_at_the_verification_deadline(key: Any, store: SignatureStore) -> None:
    """With less time left than `fetch_timeout`, the request ends at the verification's deadline:
    the verifier hangs up on the store rather than reading on in the background."""
    store.faults[store.path(HEX, 1)] = "drip"
    v = verifier(key, (store,), fetch_timeout=60)
    started = time.monotonic()
    with pytest.raises(VerificationError) as err:
        v.verify(IMAGE, 1.0)
    assert 1.0 <= time.monotonic() - started < 30
    # Whichever ends first names it: the search's deadline (by store) or the request's (by URL).
    assert store.url in str(err.value) and (
        "no answer before the verification deadline" in str(err.value) or "no answer within" in str(err.value)
    ), str(err.value)
    assert store.abandoned.wait(30), "the verifier kept reading the dripping answer after its deadline"
    assert store.answered == []


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


def test_gpg_signature_that_expired_in_2020_says_when(gpg: Gpg, store: SignatureStore) -> None:
    signature = gpg.sign(release_json(), expire="1d")
    assert signature[0] == 0xA3  # as release signatures: a compressed packet of indeterminate length
    put(store, 1, signature)
    expect_failure(verifier(gpg.public_key, (store,), now=NOW),
                   f"{sig_url(store, 1)}: signature expired at 2020-01-02T00:00:00Z")


def test_gpg_expired_signature_from_a_configmap_says_when(gpg: Gpg) -> None:
    import base64

    cm = {"metadata": {"name": f"sha256-{HEX}", "namespace": "openshift-config-managed"},
          "binaryData": {f"sha256-{HEX}-1": base64.b64encode(gpg.sign(release_json(), expire="1d")).decode()}}
    expect_failure(verifier(gpg.public_key, stores=(), now=NOW, signature_configmaps=(cm,)),
                   f"ConfigMap openshift-config-managed/sha256-{HEX} key sha256-{HEX}-1: "
                   "signature expired at 2020-01-02T00:00:00Z")


def test_gpg_signature_by_a_key_outside_the_keyrings_names_the_key(gpg: Gpg, key: Any, store: SignatureStore) -> None:
    put(store, 1, gpg.sign(release_json()))
    expect_failure(verifier(key, (store,), now=NOW),
                   f"{sig_url(store, 1)}: signed by key {gpg.fingerprint}, which is not in the keyrings")


def test_gpg_signature_that_does_not_expire_verifies(gpg: Gpg, store: SignatureStore) -> None:
    signature = gpg.sign(release_json())
    put(store, 1, signature)
    persisted: list[tuple[str, bytes]] = []
    verifier(gpg.public_key, (store,), persisted=persisted, now=NOW).verify(IMAGE, 10)
    assert persisted == [(DIGEST, signature)]


def test_altered_gpg_signature_by_a_trusted_key_keeps_the_generic_reason(gpg: Gpg, store: SignatureStore) -> None:
    # Trusted issuer, not expired, yet invalid: the packet tells nothing more.
    signature = gpg.sign(release_json(), "--compress-algo", "none").replace(b"atomic", b"Atomic")
    assert b"Atomic container signature" in signature
    put(store, 1, signature)
    expect_failure(verifier(gpg.public_key, (store,), now=NOW), f"{sig_url(store, 1)}: {UNTRUSTED}")


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
    from testkit.corpus.servers import HostileServer
    from testkit.corpus.values import PYTHON_WORDING, RAW_CONTROL

    with HostileServer(behaviour) as server, pytest.raises(VerificationError) as err:
        verifier(key, stores=(server.url,)).verify(IMAGE, 10)
    text = str(err.value)
    assert said in text, text
    assert not PYTHON_WORDING.search(text) and not RAW_CONTROL.search(text) and "\n" not in text, text
