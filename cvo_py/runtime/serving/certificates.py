"""Certificates that change while serving.

`ServingContext` reloads the certificate and key when their files change (a rotated serving
certificate is picked up without a restart) and, for `start` and `update-status-controller`
over HTTPS, asks scrapers for a client certificate signed by the cluster's client CA, as
upstream's CVO does since 4.20
(`authorize_scraper` decides; `watch_client_ca` keeps the CA current from its ConfigMap).
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cvo_py.runtime.informer import Informer
    from cvo_py.runtime.kube import JSON, KubeClient
from cvo_py.runtime import safeload
from cvo_py.runtime.serving.tls import TLSOptions, server_ssl_context
from cvo_py.runtime.tlstrust import ssl_detail

log = logging.getLogger(__name__)


# Who may scrape /metrics, and where the CA that signs its client certificate is published.
SCRAPER_COMMON_NAME = "system:serviceaccount:openshift-monitoring:prometheus-k8s"
CLIENT_CA_NAMESPACE = "kube-system"
CLIENT_CA_CONFIGMAP = "extension-apiserver-authentication"
CLIENT_CA_KEY = "client-ca-file"


def common_name(peer_certificate: Mapping[str, Any]) -> str:
    """The subject CN of a certificate as `ssl.SSLSocket.getpeercert()` returns it ("" if none)."""
    for rdn in peer_certificate.get("subject") or ():
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return ""


def authorize_scraper(
    peer_certificate: Mapping[str, Any] | None, client_ca_loaded: bool, allowed: str = SCRAPER_COMMON_NAME
) -> tuple[int, str] | None:
    """None to serve /metrics, else (HTTP status, message) in upstream's words (pure).

    The handshake has already verified a presented certificate against the client CA, so a
    certificate here is trusted; an untrusted one never gets this far (see `ServingContext`)."""
    if not client_ca_loaded:
        return 401, (
            f"client certificate not trusted: no client CA loaded yet from ConfigMap "
            f"{CLIENT_CA_NAMESPACE}/{CLIENT_CA_CONFIGMAP} ({CLIENT_CA_KEY})"
        )
    if not peer_certificate:
        return 401, "client certificate required"
    name = common_name(peer_certificate)
    if name != allowed:
        return 403, f"unauthorized common name: {name}"
    return None


def _file_contents(*paths: str) -> tuple[bytes | None, ...]:
    """The files' bytes (None for one that cannot be read). Compared by content, because a
    rotation may keep size, inode and (on coarse-clock filesystems) modification time."""
    contents: list[bytes | None] = []
    for path in paths:
        try:
            contents.append(safeload.read_file(path, max_bytes=safeload.CREDENTIAL_MAX_BYTES))
        except safeload.DocumentError:  # missing, special or oversized: the last good pair stays
            contents.append(None)
    return tuple(contents)


class ServingContext:
    """The server's TLS context, rebuilt when the certificate or key file changes on disk or the
    trusted client CA changes. Each connection uses the context current when it was accepted.

    With `client_auth`, clients are asked for a certificate, which must chain to the client CA
    given to `set_client_ca`. Python's ssl module verifies it during the handshake with no hook to
    defer the decision, so an untrusted certificate is refused there (TLS alert "unknown ca")
    rather than with upstream's HTTP 401 "client certificate not trusted"; the other answers are
    upstream's (`authorize_scraper`). A file pair or CA that fails to load keeps the last good one.
    """

    def __init__(
        self,
        cert_file: str,
        key_file: str | None,
        tls: TLSOptions | None = None,
        *,
        client_auth: bool = False,
        recheck_after: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cert_file, self.key_file, self.tls = cert_file, key_file or None, tls
        self.client_auth = client_auth
        self.recheck_after = recheck_after
        self._clock = clock
        self._lock = threading.Lock()
        self._client_ca: str | None = None  # in the serving context
        self._wanted_ca: str | None = None  # the newest good bundle, applied with the next good pair
        self._stamp = _file_contents(*self._files())
        self._context = self._build(None)  # a bad initial pair raises: the flags were wrong
        self._checked = clock()
        self.reloads = 0

    def _files(self) -> tuple[str, ...]:
        return (self.cert_file,) if self.key_file is None else (self.cert_file, self.key_file)

    def _build(self, client_ca: str | None) -> ssl.SSLContext:
        context = server_ssl_context(self.cert_file, self.key_file, self.tls)
        if self.client_auth and client_ca:
            context.verify_mode = ssl.CERT_OPTIONAL
            context.load_verify_locations(cadata=client_ca)
        return context

    @property
    def client_ca_loaded(self) -> bool:
        return self._client_ca is not None

    def current(self) -> ssl.SSLContext:
        """The context for a new connection, reloading the files if they changed (checked at
        most once per `recheck_after` seconds)."""
        with self._lock:
            now = self._clock()
            if now - self._checked >= self.recheck_after:
                self._checked = now
                stamp = _file_contents(*self._files())
                if stamp != self._stamp:
                    self._stamp = stamp
                    if self._reload("serving certificate", self._wanted_ca):
                        self._client_ca = self._wanted_ca
            return self._context

    def set_client_ca(self, pem: str | None) -> None:
        """Trust client certificates signed by the CA bundle `pem` from now on (None: keep the last).

        A bundle that does not load is ignored; a good one waiting on a half-rotated certificate
        pair is applied together with the next pair that loads."""
        with self._lock:
            if not pem or pem == self._wanted_ca:
                return
            try:
                ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cadata=pem)
            except (ssl.SSLError, ValueError) as exc:
                log.warning(
                    "Keeping the previous TLS configuration: the new client CA does not load: %s", ssl_detail(exc)
                )
                return
            self._wanted_ca = pem
            if self._reload("client CA", pem):
                self._client_ca = pem

    def _reload(self, what: str, client_ca: str | None) -> bool:
        try:
            context = self._build(client_ca)
        except (ssl.SSLError, OSError, ValueError) as exc:
            # Mid-rotation (new certificate, old key) or a broken bundle: keep serving the last good one.
            log.warning("Keeping the previous TLS configuration: the new %s does not load: %s", what, ssl_detail(exc))
            return False
        self._context = context
        self.reloads += 1
        log.info("Loaded a new %s for the metrics server", what)
        return True


def watch_client_ca(client: KubeClient, serving: ServingContext) -> Informer:
    """An informer that keeps `serving`'s client CA equal to the cluster's (started; stop it)."""
    from cvo_py.runtime.informer import DELETED, Informer
    from cvo_py.runtime.kube import CONFIGMAPS

    informer = Informer(
        client,
        CONFIGMAPS,
        namespace=CLIENT_CA_NAMESPACE,
        field_selector=f"metadata.name={CLIENT_CA_CONFIGMAP}",
    )

    def on_event(event_type: str, obj: JSON, _old: JSON | None) -> None:
        if event_type == DELETED:
            # Keep trusting the last CA: a recreated ConfigMap will bring it back.
            log.warning(
                "ConfigMap %s/%s was deleted; keeping its last client CA", CLIENT_CA_NAMESPACE, CLIENT_CA_CONFIGMAP
            )
            return
        pem = (obj.get("data") or {}).get(CLIENT_CA_KEY)
        if not pem:
            log.warning(
                "ConfigMap %s/%s has no %s: scrapers cannot be authenticated yet",
                CLIENT_CA_NAMESPACE,
                CLIENT_CA_CONFIGMAP,
                CLIENT_CA_KEY,
            )
            return
        serving.set_client_ca(pem)

    informer.add_handler(on_event)
    return informer.start()
