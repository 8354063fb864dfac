"""The metrics and health endpoint served on `--listen`: /metrics, /healthz, /readyz.

Metric values are computed at scrape time by collectors registered on the process's registry
(the prometheus client's Collector protocol), so they always reflect the controllers' caches.

Over HTTPS the TLS settings follow upstream's `--tls-min-version` / `--tls-cipher-suites`: Go
crypto/tls names, translated here for OpenSSL (`parse_tls_options`, `server_ssl_context`). The
serving flags themselves (`--serving-cert-file`, `--serving-key-file` and those two) are defined
and validated once, in `add_serving_arguments` / `serving_options`, for every subcommand that serves.

`ServingContext` reloads the certificate and key when their files change (a rotated serving
certificate is picked up without a restart) and, for `start`, asks scrapers for a client
certificate signed by the cluster's client CA, as upstream's CVO does since 4.20
(`authorize_scraper` decides; `watch_client_ca` keeps the CA current from its ConfigMap).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import socket
import ssl
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from cvo_py import klog

if TYPE_CHECKING:
    from cvo_py.informer import Informer
    from cvo_py.kube import JSON, KubeClient

log = logging.getLogger(__name__)


# -- TLS settings -----------------------------------------------------------------------------------


class TLSConfigError(ValueError):
    """A TLS version or cipher suite that cannot be served."""


TLS_VERSIONS: dict[str, ssl.TLSVersion] = {
    "VersionTLS10": ssl.TLSVersion.TLSv1,
    "VersionTLS11": ssl.TLSVersion.TLSv1_1,
    "VersionTLS12": ssl.TLSVersion.TLSv1_2,
    "VersionTLS13": ssl.TLSVersion.TLSv1_3,
}

# Go crypto/tls cipher-suite name → (IANA code point, OpenSSL name). Includes Go's insecure suites
# and its legacy CHACHA20 aliases, all of which the Go flag parser accepts.
GO_CIPHER_SUITES: dict[str, tuple[int, str]] = {
    "TLS_RSA_WITH_RC4_128_SHA": (0x0005, "RC4-SHA"),
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": (0x000A, "DES-CBC3-SHA"),
    "TLS_RSA_WITH_AES_128_CBC_SHA": (0x002F, "AES128-SHA"),
    "TLS_RSA_WITH_AES_256_CBC_SHA": (0x0035, "AES256-SHA"),
    "TLS_RSA_WITH_AES_128_CBC_SHA256": (0x003C, "AES128-SHA256"),
    "TLS_RSA_WITH_AES_128_GCM_SHA256": (0x009C, "AES128-GCM-SHA256"),
    "TLS_RSA_WITH_AES_256_GCM_SHA384": (0x009D, "AES256-GCM-SHA384"),
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": (0xC007, "ECDHE-ECDSA-RC4-SHA"),
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": (0xC009, "ECDHE-ECDSA-AES128-SHA"),
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": (0xC00A, "ECDHE-ECDSA-AES256-SHA"),
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": (0xC011, "ECDHE-RSA-RC4-SHA"),
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": (0xC012, "ECDHE-RSA-DES-CBC3-SHA"),
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": (0xC013, "ECDHE-RSA-AES128-SHA"),
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": (0xC014, "ECDHE-RSA-AES256-SHA"),
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": (0xC023, "ECDHE-ECDSA-AES128-SHA256"),
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": (0xC027, "ECDHE-RSA-AES128-SHA256"),
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": (0xC02B, "ECDHE-ECDSA-AES128-GCM-SHA256"),
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": (0xC02C, "ECDHE-ECDSA-AES256-GCM-SHA384"),
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": (0xC02F, "ECDHE-RSA-AES128-GCM-SHA256"),
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": (0xC030, "ECDHE-RSA-AES256-GCM-SHA384"),
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": (0xCCA8, "ECDHE-RSA-CHACHA20-POLY1305"),
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": (0xCCA9, "ECDHE-ECDSA-CHACHA20-POLY1305"),
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": (0xCCA8, "ECDHE-RSA-CHACHA20-POLY1305"),
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": (0xCCA9, "ECDHE-ECDSA-CHACHA20-POLY1305"),
    # TLS 1.3 suites: like Go, always enabled for TLS 1.3 and not configurable (OpenSSL's
    # TLS 1.3 list is not reachable from Python's ssl module either).
    "TLS_AES_128_GCM_SHA256": (0x1301, "TLS_AES_128_GCM_SHA256"),
    "TLS_AES_256_GCM_SHA384": (0x1302, "TLS_AES_256_GCM_SHA384"),
    "TLS_CHACHA20_POLY1305_SHA256": (0x1303, "TLS_CHACHA20_POLY1305_SHA256"),
}
TLS13_SUITES = frozenset({"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"})

# The cluster's default (Intermediate) TLS profile, which upstream applies when the flags are unset:
# TLS 1.2 minimum and these suites (the profile's DHE suites have no Go implementation).
DEFAULT_TLS_MIN_VERSION = "VersionTLS12"
DEFAULT_CIPHER_SUITES: tuple[str, ...] = (
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
)


@dataclass(frozen=True)
class TLSOptions:
    """What a TLS server accepts: the minimum protocol and, for TLS 1.2 and lower, the suites."""

    min_version: str = DEFAULT_TLS_MIN_VERSION
    cipher_suites: tuple[str, ...] = DEFAULT_CIPHER_SUITES

    @property
    def minimum(self) -> ssl.TLSVersion:
        return TLS_VERSIONS[self.min_version]

    def openssl_ciphers(self) -> str:
        """The OpenSSL cipher string for TLS 1.2 and lower ("" when only TLS 1.3 suites are named).

        OpenSSL 3 refuses TLS 1.0/1.1 at its default security level; asking for them as the minimum
        is an explicit choice, so the level is lowered as Go would allow them."""
        suites = [s for s in self.cipher_suites if s not in TLS13_SUITES]
        names = list(dict.fromkeys(GO_CIPHER_SUITES[s][1] for s in suites))  # aliases share a name
        if not names:
            return ""
        if self.minimum < ssl.TLSVersion.TLSv1_2:
            names.append("@SECLEVEL=0")
        return ":".join(names)


def parse_tls_options(min_version: str = "", cipher_suites: Sequence[str] = ()) -> TLSOptions:
    """Flags → TLSOptions; empty values take the default profile. Raises TLSConfigError."""
    version = min_version or DEFAULT_TLS_MIN_VERSION
    if version not in TLS_VERSIONS:
        raise TLSConfigError(f"unknown TLS version {version!r}: want one of {', '.join(TLS_VERSIONS)}")
    suites = tuple(cipher_suites) or DEFAULT_CIPHER_SUITES
    unknown = [s for s in suites if s not in GO_CIPHER_SUITES]
    if unknown:
        raise TLSConfigError(
            f"unknown cipher suite {', '.join(map(repr, unknown))}: want Go crypto/tls names, "
            "e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
        )
    options = TLSOptions(version, suites)
    if options.minimum < ssl.TLSVersion.TLSv1_3 and not options.openssl_ciphers():
        raise TLSConfigError(
            f"the cipher suites name only TLS 1.3 suites, so {version} connections could use none: "
            "add TLS 1.2 suites or set the minimum version to VersionTLS13"
        )
    for suite in suites:
        if suite not in TLS13_SUITES and not _openssl_has(GO_CIPHER_SUITES[suite][1]):
            raise TLSConfigError(f"cipher suite {suite} is not available in {ssl.OPENSSL_VERSION}")
    return options


def _openssl_has(openssl_name: str) -> bool:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.set_ciphers(f"{openssl_name}:@SECLEVEL=0")
    except ssl.SSLError:
        return False
    return True


def server_ssl_context(cert_file: str, key_file: str | None, tls: TLSOptions | None = None) -> ssl.SSLContext:
    """A server context with the certificate loaded; `tls=None` keeps OpenSSL's defaults."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    if tls is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.0/1.1 asked for explicitly
            context.minimum_version = tls.minimum
        ciphers = tls.openssl_ciphers()
        if ciphers:
            context.set_ciphers(ciphers)
    return context


# -- certificates that change while serving -------------------------------------------------------

# Who may scrape `start`'s /metrics, and where the CA that signs its client certificate is published.
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


def _ssl_detail(exc: BaseException) -> str:
    """An OpenSSL error's reason without the `(_ssl.c:1006)` source location."""
    return re.sub(r" \(_ssl\.c:\d+\)$", "", getattr(exc, "strerror", None) or str(exc))


def _file_contents(*paths: str) -> tuple[bytes | None, ...]:
    """The files' bytes (None for one that cannot be read). Compared by content, because a
    rotation may keep size, inode and (on coarse-clock filesystems) modification time."""
    contents: list[bytes | None] = []
    for path in paths:
        try:
            with open(path, "rb") as handle:
                contents.append(handle.read())
        except OSError:
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
                    "Keeping the previous TLS configuration: the new client CA does not load: %s", _ssl_detail(exc)
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
            log.warning("Keeping the previous TLS configuration: the new %s does not load: %s", what, _ssl_detail(exc))
            return False
        self._context = context
        self.reloads += 1
        log.info("Loaded a new %s for the metrics server", what)
        return True


def watch_client_ca(client: KubeClient, serving: ServingContext) -> Informer:
    """An informer that keeps `serving`'s client CA equal to the cluster's (started; stop it)."""
    from cvo_py.informer import DELETED, Informer
    from cvo_py.kube import CONFIGMAPS

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


# -- the serving flags -------------------------------------------------------------------------------


class ServingConfigError(ValueError):
    """Serving flags that cannot be used together; the message is one line naming the flag."""


@dataclass(frozen=True)
class ServingOptions:
    """How to serve `--listen`: HTTPS with `cert_file`/`key_file` and `tls`, plain HTTP without a cert."""

    cert_file: str = ""
    key_file: str = ""
    tls: TLSOptions = TLSOptions()

    @property
    def https(self) -> bool:
        return bool(self.cert_file)


def add_serving_arguments(parser: argparse.ArgumentParser, *, cert_required: bool) -> None:
    """`--serving-cert-file`, `--serving-key-file`, `--tls-min-version`, `--tls-cipher-suites`."""
    if cert_required:
        cert_when = key_when = "required unless --listen is empty"
    else:
        cert_when, key_when = "without it, plain HTTP", "required with --serving-cert-file"
    parser.add_argument(
        "--serving-cert-file",
        default="",
        help=f"PEM certificate for serving metrics over HTTPS ({cert_when}); reloaded when the file changes",
    )
    parser.add_argument(
        "--serving-key-file",
        default="",
        help=f"PEM private key for serving metrics over HTTPS ({key_when})",
    )
    parser.add_argument(
        "--tls-min-version",
        default="",
        metavar="VERSION",
        help="minimum TLS version for the metrics server: VersionTLS10, VersionTLS11, VersionTLS12 or "
        "VersionTLS13 (default: the Intermediate TLS profile's, VersionTLS12)",
    )
    parser.add_argument(
        "--tls-cipher-suites",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help="cipher suites for the metrics server, Go crypto/tls names (comma-separated; may be repeated; "
        "default: the Intermediate TLS profile's); TLS 1.3 suites are always enabled for TLS 1.3",
    )


def check_serving_files_given(args: argparse.Namespace) -> None:
    """Upstream `start`'s first serving checks: a non-empty `--listen` needs both files named."""
    if args.listen and not args.serving_cert_file:
        raise ServingConfigError("--listen was not set empty, so --serving-cert-file must be set")
    if args.listen and not args.serving_key_file:
        raise ServingConfigError("--listen was not set empty, so --serving-key-file must be set")


def serving_options(args: argparse.Namespace, *, cert_required: bool) -> ServingOptions:
    """The parsed flags of `add_serving_arguments` (and `--listen`) → ServingOptions.

    Raises ListenAddressError or ServingConfigError, whose message is the one-line usage error.
    With `cert_required`, a non-empty `--listen` needs a certificate (upstream `start`); without
    it, a certificate is optional but, when given, needs its key (and the other way round)."""
    cert, key = args.serving_cert_file, args.serving_key_file
    if args.listen:
        if cert_required:
            check_serving_files_given(args)
        elif cert and not key:
            raise ServingConfigError("--serving-cert-file was set, so --serving-key-file must be set")
        elif key and not cert:
            raise ServingConfigError("--serving-key-file was set, so --serving-cert-file must be set")
        parse_listen(args.listen)
        for flag, path in (("--serving-cert-file", cert), ("--serving-key-file", key)):
            if path and not os.path.isfile(path):
                raise ServingConfigError(f"{flag} {path!r}: no such file")
    suites = [n.strip() for value in args.tls_cipher_suites for n in value.split(",") if n.strip()]
    try:
        tls = parse_tls_options(args.tls_min_version, suites)
    except TLSConfigError as exc:
        raise ServingConfigError(f"invalid TLS configuration: {exc}") from None
    if args.listen and cert:
        # A key that does not match, or a file that is not PEM: say so now, not with a traceback.
        try:
            server_ssl_context(cert, key, tls)
        except ssl.SSLError as exc:
            if exc.reason == "KEY_VALUES_MISMATCH":
                raise ServingConfigError(
                    f"--serving-key-file {key!r} is not the key of --serving-cert-file {cert!r}"
                ) from None
            detail = _ssl_detail(exc)
            raise ServingConfigError(
                f"cannot load --serving-cert-file {cert!r} and --serving-key-file {key!r}: "
                f"want a PEM certificate and its PEM private key ({detail})"
            ) from None
        except OSError as exc:
            raise ServingConfigError(
                f"cannot read --serving-cert-file {cert!r} or --serving-key-file {key!r}: {exc.strerror or exc}"
            ) from None
    return ServingOptions(cert, key, tls)


class _HTTPServer(ThreadingHTTPServer):
    """With TLS, the handshake runs on the request's thread (not in accept), so one slow or
    failing client cannot hold up the others."""

    daemon_threads = True
    serving: ServingContext | None = None
    handshake_timeout = 10.0

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        if self.serving is None:
            return sock, address
        sock.settimeout(self.handshake_timeout)
        context = self.serving.current()
        return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def finish_request(self, request: Any, client_address: Any) -> None:
        if isinstance(request, ssl.SSLSocket):
            try:
                request.do_handshake()
            except OSError as exc:  # ssl.SSLError included: protocol or cipher refused, or a timeout
                klog.v(4).info("TLS handshake with %s failed: %s", client_address[0], exc)
                return
            request.settimeout(None)
        super().finish_request(request, client_address)


class ListenAddressError(ValueError):
    pass


def parse_listen(address: str) -> tuple[str, int]:
    """`host:port` (host may be empty or bracketed IPv6) → (host, port)."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ListenAddressError(f"invalid --listen address {address!r}: want HOST:PORT, e.g. 0.0.0.0:9099")
    return host.strip("[]") or "0.0.0.0", int(port_text)


class MetricsServer:
    """A small threaded HTTP(S) server; `ready` decides /readyz.

    /healthz, /livez and /readyz are open (the kubelet's probes carry no client certificate);
    /metrics asks `serving` for a scraper's certificate when its `client_auth` is on."""

    def __init__(
        self,
        listen: str,
        registry: CollectorRegistry,
        ready: Callable[[], bool] = lambda: True,
        cert_file: str | None = None,
        key_file: str | None = None,
        *,
        tls: TLSOptions | None = None,
        serving: ServingContext | None = None,
    ) -> None:
        """HTTPS with `serving`, or with `cert_file` (and `tls` settings, else OpenSSL's); else HTTP."""
        host, port = parse_listen(listen)
        if serving is None and cert_file:
            serving = ServingContext(cert_file, key_file, tls)
        self.registry = registry
        self.ready = ready
        self.serving = serving
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    denied = server.deny_scraper(self.connection)
                    if denied is not None:
                        code, message = denied
                        body, ctype = f"{message}\n".encode(), "text/plain; charset=utf-8"
                    else:
                        body, ctype, code = generate_latest(server.registry), CONTENT_TYPE_LATEST, 200
                elif path in ("/healthz", "/livez"):
                    body, ctype, code = b"ok", "text/plain", 200
                elif path == "/readyz":
                    ok = server.ready()
                    body, ctype, code = (b"ok" if ok else b"not ready"), "text/plain", (200 if ok else 503)
                else:
                    body, ctype, code = b"not found", "text/plain", 404
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                if code in (401, 403):
                    self.send_header("X-Content-Type-Options", "nosniff")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        try:
            self.httpd = _HTTPServer((host, port), Handler)
        except OSError as exc:
            raise ListenAddressError(f"cannot listen on {listen}: {exc.strerror or exc}") from exc
        self.httpd.serving = serving
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="metrics", daemon=True)

    def deny_scraper(self, connection: socket.socket) -> tuple[int, str] | None:
        if self.serving is None or not self.serving.client_auth:
            return None
        peer = connection.getpeercert() if isinstance(connection, ssl.SSLSocket) else None
        denied = authorize_scraper(peer, self.serving.client_ca_loaded)
        if denied is not None:
            klog.v(2).info("Refused a metrics scrape: %d %s", *denied)
        return denied

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self) -> MetricsServer:
        self._thread.start()
        scheme = "https" if self.serving is not None else "http"
        log.info("Serving metrics and health on %s://%s:%d", scheme, self.httpd.server_address[0], self.port)
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
