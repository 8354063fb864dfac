"""The metrics and health endpoint served on `--listen`: /metrics, /healthz, /readyz.

Metric values are computed at scrape time by collectors registered on the process's registry
(the prometheus client's Collector protocol), so they always reflect the controllers' caches.
TLS settings are in `cvo_py.serving.tls`, certificate reload and client-CA authorization in
`cvo_py.serving.certificates`, the serving flags in `cvo_py.serving.options`.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from cvo_py import klog
from cvo_py.serving.certificates import ServingContext, authorize_scraper
from cvo_py.serving.options import ListenAddressError, parse_listen
from cvo_py.serving.tls import TLSOptions

log = logging.getLogger(__name__)


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
