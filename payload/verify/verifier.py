"""Verify a release digest against trusted keyrings, with signatures from ConfigMaps and HTTP stores.

OpenPGP is done by pysequoia (Sequoia-PGP's Python binding): maintained, ships manylinux wheels
with no system gpg or native build needed, and verifies inline signed messages as release
signatures are. It does not say why a signature is rejected, so `packets.explain_rejection` reads
that from the signature packet (expired, or made by a key outside the keyrings). Signature
ConfigMaps are tried first; then every store is searched in parallel (`signature-1`…`signature-10`,
stopping at 404), and the first valid signature wins. Each fetch is `cvo_py.runtime.httpget`'s bounded GET
(through the proxy the environment names): the whole request, however slowly a store drips its
answer, ends by the time the verification has left (at most `fetch_timeout`), and a body beyond
MAX_SIGNATURE_BYTES is not read.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import Any

import pysequoia

from cvo_py.runtime import httpget
from cvo_py.runtime.kube import CONFIGMAPS, ApiError, KubeClient
from payload.metrics import PayloadMetrics
from payload.verify.config import SIGNATURES_LABEL, Store, VerifierConfig, load_config
from payload.verify.errors import VerificationError
from payload.verify.packets import PacketError, explain_rejection, key_identities
from payload.verify.signature import (
    Attempt,
    DigestError,
    check_simple_signing,
    failure_text,
    image_digest,
    parse_digest,
)

log = logging.getLogger(__name__)

MAX_SIGNATURES = 10
# When the signature packet does not tell more (see packets.explain_rejection).
UNTRUSTED = "no valid signature by a trusted key (not signed by one, or expired)"
MAX_SIGNATURE_BYTES = 64 * 1024


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class ReleaseVerifier:
    """`verify(image, timeout)`: returns when signed by a trusted key, else raises VerificationError."""

    def __init__(
        self,
        load: Callable[[], VerifierConfig],
        *,
        persist: Callable[[str, bytes], None] | None = None,
        metrics: PayloadMetrics | None = None,
        fetch_timeout: float = 10.0,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._load = load
        self._persist = persist
        self.metrics = metrics or PayloadMetrics()
        self.fetch_timeout = fetch_timeout
        self._now = now
        self._verified: set[str] = set()
        self._lock = threading.Lock()

    def verify(self, image: str, timeout: float) -> None:
        deadline = time.monotonic() + max(0.0, timeout)
        try:
            digest = image_digest(image)
            algo, hexpart = parse_digest(digest)
        except DigestError as exc:
            raise VerificationError(str(exc)) from None
        with self._lock:
            if digest in self._verified:
                self.metrics.verifications.labels("cached").inc()
                return
        config = self._load()
        if config.problem:
            raise VerificationError(f"verification is not possible: {config.problem}", "not_configured")
        certs: list[Any] = []
        for name, armored in config.keyrings.items():
            try:
                certs.extend(pysequoia.Cert.split_bytes(armored.encode()))
            except Exception as exc:  # pysequoia raises plain errors for unparsable keys
                raise VerificationError(
                    "the release verifier is incorrectly configured, unable to verify digests: "
                    f"keyring {name} in {config.source}: {_first_line(exc)}",
                    "not_configured",
                ) from None
        trusted = _trusted_identities(certs)
        keyrings = list(config.keyrings)
        attempts: list[Attempt] = []
        prefix = f"{algo}-{hexpart}"
        for cm in config.signature_configmaps:
            meta = cm.get("metadata") or {}
            for key, data in _configmap_signatures(cm, prefix):
                source = f"ConfigMap {meta.get('namespace')}/{meta.get('name')} key {key}"
                reason = self._check(data, certs, trusted, digest)
                if reason is None:
                    return self._accept(digest, None)
                attempts.append(Attempt(source, reason))
        keys = (certs, trusted)
        found = self._search_stores(config.stores, algo, hexpart, keys, digest, deadline, attempts)
        if found is not None:
            return self._accept(digest, found)
        raise VerificationError(failure_text(digest, keyrings, attempts))

    def _accept(self, digest: str, signature: bytes | None) -> None:
        with self._lock:
            self._verified.add(digest)
        self.metrics.verifications.labels("verified").inc()
        if signature is not None and self._persist is not None:
            try:
                self._persist(digest, signature)
            except Exception as exc:  # keeping a copy is best effort; the release is verified
                log.warning("could not store the verified signature for %s: %s", digest, exc)

    # -- one signature ---------------------------------------------------------------------------

    def _check(
        self, data: bytes, certs: list[Any], trusted: frozenset[str] | None, digest: str
    ) -> str | None:
        """None when `data` is a valid signature of `digest` by a trusted key, else why not."""
        if not data:
            return "empty signature"
        try:
            result = pysequoia.verify(bytes=data, store=lambda _ids: certs)
        except Exception as exc:
            text = _first_line(exc)
            if "no valid signatures" in text or "signature" in text.lower():
                return explain_rejection(data, trusted, self._now(), UNTRUSTED)
            return f"not an OpenPGP signed message ({text})"
        if not result.valid_sigs or result.bytes is None:
            return explain_rejection(data, trusted, self._now(), UNTRUSTED)
        return check_simple_signing(result.bytes, digest)

    # -- HTTP stores -----------------------------------------------------------------------------

    def _search_stores(
        self,
        stores: tuple[Store, ...],
        algo: str,
        hexpart: str,
        keys: tuple[list[Any], frozenset[str] | None],
        digest: str,
        deadline: float,
        attempts: list[Attempt],
    ) -> bytes | None:
        if not stores:
            return None
        stop = threading.Event()
        pool = ThreadPoolExecutor(max_workers=len(stores), thread_name_prefix="signature-store")
        futures: dict[Future[tuple[bytes | None, list[Attempt]]], Store] = {
            pool.submit(self._search_store, s, algo, hexpart, keys, digest, deadline, stop): s for s in stores
        }
        found: bytes | None = None
        pending = set(futures)
        try:
            while pending and found is None:
                left = deadline - time.monotonic()
                done, pending = wait(pending, timeout=max(0.0, left), return_when=FIRST_COMPLETED)
                if not done:
                    for future in pending:
                        attempts.append(Attempt(futures[future].url, "no answer before the verification deadline"))
                    break
                for future in done:
                    signature, store_attempts = future.result()
                    attempts.extend(store_attempts)
                    if signature is not None and found is None:
                        found = signature
        finally:
            stop.set()
            # Slow stores are not waited for: their requests end at their own timeouts.
            pool.shutdown(wait=False, cancel_futures=True)
        return found

    def _search_store(
        self,
        store: Store,
        algo: str,
        hexpart: str,
        keys: tuple[list[Any], frozenset[str] | None],
        digest: str,
        deadline: float,
        stop: threading.Event,
    ) -> tuple[bytes | None, list[Attempt]]:
        attempts: list[Attempt] = []
        base = store.url.rstrip("/")
        for index in range(1, MAX_SIGNATURES + 1):
            if stop.is_set():
                break
            url = f"{base}/{algo}={hexpart}/signature-{index}"
            left = deadline - time.monotonic()
            if left <= 0:
                attempts.append(Attempt(url, "no answer before the verification deadline"))
                break
            # The whole request, however slowly the store answers, ends by the verification's deadline.
            timeout = min(self.fetch_timeout, left)
            started = time.monotonic()
            try:
                answer = httpget.get(url, headers={}, proxy=httpget.environment_proxy, total_timeout=timeout,
                                     max_bytes=MAX_SIGNATURE_BYTES)
            except httpget.BodyTooLarge as exc:
                answer = httpget.Answer(exc.status, exc.reason, b"")
                if answer.status < 400:
                    self._fetch_error(store, "garbage")
                    attempts.append(Attempt(url, f"larger than {MAX_SIGNATURE_BYTES} bytes, not a signature"))
                    continue
            except httpget.GetError as exc:
                if exc.timed_out:
                    self._fetch_error(store, "timeout")
                    attempts.append(Attempt(url, f"store unreachable: no answer within {timeout:.1f}s"))
                else:
                    self._fetch_error(store, "connection")
                    attempts.append(Attempt(url, f"store unreachable: {exc}"))
                break
            finally:
                self.metrics.store_fetch_duration.labels(store.url).observe(time.monotonic() - started)
            if answer.status == 404:
                if index == 1:
                    attempts.append(Attempt(url, "no signature in this store (HTTP 404)"))
                break
            if answer.status >= 400:
                self._fetch_error(store, f"http_{answer.status}")
                # the reason phrase comes escaped and bounded: it is the store's words, shown
                attempts.append(Attempt(url, f"store unreachable: HTTP {answer.status} {answer.reason}".strip()))
                break
            body = answer.body
            reason = self._check(body, *keys, digest)
            if reason is None:
                return body, attempts
            if reason.startswith("not an OpenPGP"):
                self._fetch_error(store, "garbage")
            attempts.append(Attempt(url, reason))
        return None, attempts

    def _fetch_error(self, store: Store, kind: str) -> None:
        self.metrics.store_fetch_errors.labels(store.url, kind).inc()


def _trusted_identities(certs: list[Any]) -> frozenset[str] | None:
    """The keyrings' key fingerprints and IDs (subkeys too), or None if the packet reader cannot
    list a certificate's keys: then no signer is called untrusted."""
    found: set[str] = set()
    for cert in certs:
        try:
            found |= key_identities(bytes(cert))
        except PacketError as exc:
            log.warning("cannot list the keys of certificate %s: %s", cert.fingerprint, exc)
            return None
    return frozenset(found)


def _configmap_signatures(cm: dict[str, Any], prefix: str) -> list[tuple[str, bytes]]:
    """Signatures stored for one digest: binaryData (or data) keys `<algo>-<hex>-<N>`, in order."""
    found: list[tuple[int, str, bytes]] = []
    for field_name in ("binaryData", "data"):
        for key, value in (cm.get(field_name) or {}).items():
            head, _, index = str(key).rpartition("-")
            if head != prefix or not index.isdigit():
                continue
            try:
                data = base64.b64decode(value) if field_name == "binaryData" else str(value).encode()
            except ValueError:
                continue
            found.append((int(index), key, data))
    return [(key, data) for _, key, data in sorted(found)]


def persist_signature(client: KubeClient, namespace: str, digest: str, signature: bytes) -> None:
    """Keep a verified signature in the cluster, as upstream: ConfigMap `<algo>-<hex>`, labelled,
    key `<algo>-<hex>-1` in binaryData."""
    prefix = digest.replace(":", "-", 1)
    body = {
        "metadata": {"name": prefix, "namespace": namespace, "labels": {SIGNATURES_LABEL: ""}},
        "binaryData": {f"{prefix}-1": base64.b64encode(signature).decode()},
    }
    try:
        client.create(CONFIGMAPS, body, namespace)
    except ApiError as exc:
        if not exc.is_already_exists():
            raise


def cluster_verifier(
    client: KubeClient,
    namespace: str,
    cv_name: str = "version",
    metrics: PayloadMetrics | None = None,
) -> ReleaseVerifier:
    """A verifier configured from the cluster, re-read for every verification."""
    return ReleaseVerifier(
        lambda: load_config(client, namespace, cv_name),
        persist=lambda digest, sig: persist_signature(client, namespace, digest, sig),
        metrics=metrics,
    )
