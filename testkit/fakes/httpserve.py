"""A real HTTP server on 127.0.0.1 answering GETs with what a test's handler returns."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

Handler = Callable[[BaseHTTPRequestHandler], tuple[int, bytes]]


@pytest.fixture
def http_server() -> Iterator[Callable[[Handler], str]]:
    """Serve with `handler` (→ status, body); yields a function returning the base URL."""
    servers: list[ThreadingHTTPServer] = []

    def serve(handler: Handler) -> str:
        class Request(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                status, body = handler(self)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Request)
        servers.append(httpd)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield serve
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()
