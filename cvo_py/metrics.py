"""The metrics and health endpoint served on `--listen`: /metrics, /healthz, /readyz.

Metric values are computed at scrape time by collectors registered on the process's registry
(the prometheus client's Collector protocol), so they always reflect the controllers' caches.
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

log = logging.getLogger(__name__)


class ListenAddressError(ValueError):
    pass


def parse_listen(address: str) -> tuple[str, int]:
    """`host:port` (host may be empty or bracketed IPv6) → (host, port)."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ListenAddressError(f"invalid --listen address {address!r}: want HOST:PORT, e.g. 0.0.0.0:9099")
    return host.strip("[]") or "0.0.0.0", int(port_text)


class MetricsServer:
    """A small threaded HTTP(S) server; `ready` decides /readyz."""

    def __init__(
        self,
        listen: str,
        registry: CollectorRegistry,
        ready: Callable[[], bool] = lambda: True,
        cert_file: str | None = None,
        key_file: str | None = None,
    ) -> None:
        host, port = parse_listen(listen)
        self.registry = registry
        self.ready = ready
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
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
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        try:
            self.httpd = ThreadingHTTPServer((host, port), Handler)
        except OSError as exc:
            raise ListenAddressError(f"cannot listen on {listen}: {exc.strerror or exc}") from exc
        self.httpd.daemon_threads = True
        if cert_file:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert_file, key_file)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="metrics", daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self) -> MetricsServer:
        self._thread.start()
        log.info("Serving metrics and health on %s:%d", self.httpd.server_address[0], self.port)
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
