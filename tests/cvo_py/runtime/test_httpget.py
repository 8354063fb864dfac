"""The one bounded GET: the whole request ends by its deadline however slowly a server answers,
bodies are bounded, redirects followed, transport failures worded as Go's client words them."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from cvo_py.runtime import httpget
from testkit.corpus.servers import HostileServer
from testkit.corpus.values import PYTHON_WORDING, RAW_CONTROL
from testkit.fakes.update_service import UpdateService, graph
from testkit.harness.cluster import free_port


def test_an_answer_within_the_bounds() -> None:
    with UpdateService(channels={"c": graph(["4.16.3"])}) as service:
        answer = httpget.get(service.url + "?channel=c", headers={}, total_timeout=5, max_bytes=1 << 20)
    assert answer.status == 200 and b'"4.16.3"' in answer.body


@pytest.mark.parametrize(
    ("fault", "phase", "fragment"),
    [
        ("slow-headers", "request", "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"),
        ("slow", "request", "context deadline exceeded"),
        ("endless", "body", "context deadline exceeded (Client.Timeout or context cancellation while reading body)"),
        ("huge", "body", "larger than the 1000 bytes accepted"),
    ],
)
def test_the_deadline_and_the_size_bound_hold(fault: str, phase: str, fragment: str) -> None:
    with UpdateService(fault=fault) as service:
        began = time.monotonic()
        with pytest.raises(httpget.GetError) as caught:
            httpget.get(service.url, headers={}, total_timeout=1.0, max_bytes=1000)
        elapsed = time.monotonic() - began
    assert caught.value.phase == phase and fragment in str(caught.value)
    assert caught.value.timed_out == (fault != "huge")
    assert elapsed < 10  # bounded by the deadline (generously, for a loaded machine), not by the server
    assert "http-deadline" not in {t.name for t in threading.enumerate()}


def test_a_refused_connection_is_worded_as_go_does() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(httpget.GetError) as caught:
        httpget.get(f"http://127.0.0.1:{port}/", headers={}, total_timeout=5, max_bytes=10)
    assert str(caught.value) == f"dial tcp 127.0.0.1:{port}: connect: connection refused"
    assert not caught.value.timed_out  # urllib3 words a refusal as a subclass of its connect timeout


@pytest.mark.parametrize(
    ("environment", "url", "proxy"),
    [
        ({}, "https://store.example/sigs", ""),
        ({"HTTPS_PROXY": "proxy.example:3128"}, "https://store.example/sigs", "http://proxy.example:3128"),
        ({"https_proxy": "http://lower.example:3128"}, "https://store.example/sigs", "http://lower.example:3128"),
        ({"HTTPS_PROXY": "http://upper.example", "https_proxy": "http://lower.example"}, "https://s.example/",
         "http://upper.example"),
        ({"HTTPS_PROXY": "http://p.example"}, "http://store.example/sigs", ""),
        ({"HTTP_PROXY": "http://p.example"}, "http://store.example/sigs", "http://p.example"),
        ({"HTTP_PROXY": "http://p.example"}, "http://127.0.0.1:8080/sigs", ""),
        ({"HTTP_PROXY": "http://p.example"}, "http://localhost/sigs", ""),
        ({"HTTP_PROXY": "http://p.example", "NO_PROXY": ".example"}, "http://store.example/sigs", ""),
        ({"HTTP_PROXY": "http://p.example", "no_proxy": "store.example"}, "http://store.example/sigs", ""),
        ({"HTTP_PROXY": "http://p.example", "NO_PROXY": "other.example"}, "http://store.example/", "http://p.example"),
        ({"HTTP_PROXY": "http://p.example", "NO_PROXY": "10.0.0.0/8"}, "http://10.1.2.3/sigs", ""),
        ({"HTTP_PROXY": "http://p.example", "NO_PROXY": "*"}, "http://store.example/sigs", ""),
    ],
)
def test_the_environment_names_the_proxy_as_go_reads_it(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], url: str, proxy: str
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert httpget.environment_proxy(url) == proxy


def test_redirects_are_followed() -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    with UpdateService(channels={"c": graph(["4.16.3"])}) as service:
        class Redirect(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the base's name
                self.send_response(302)
                self.send_header("Location", service.url + "?channel=c")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
                return

        server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
        thread = threading.Thread(target=server.serve_forever)
        thread.start()
        try:
            answer = httpget.get(f"http://127.0.0.1:{server.server_address[1]}/", headers={}, total_timeout=5,
                                 max_bytes=1 << 20)
        finally:
            server.shutdown()
            server.server_close()
            thread.join()
    assert answer.status == 200 and b"4.16.3" in answer.body


@pytest.mark.parametrize(
    ("behaviour", "phase", "message"),
    [
        ("close", "request", "EOF"),
        ("reset", "request", "read: connection reset by peer"),
        ("garbage", "request", 'malformed HTTP response "\\x1b[2Jnot http at all"'),
        ("truncated", "body", "reading the response body: unexpected EOF"),
        ("bad-chunk", "body", "reading the response body: "),
        ("long-header", "request", "net/http: HTTP/1.x transport connection broken: "),
        ("many-headers", "request", "net/http: HTTP/1.x transport connection broken: "),
        ("redirect-loop", "request", "stopped after 10 redirects"),
        ("redirect-to:http://[::1", "request", "failed to parse Location header \"http://[::1\": parse"),
        ("redirect-to:ftp://x/", "request", 'unsupported protocol scheme "ftp"'),
    ],
)
def test_every_failure_is_one_go_shaped_line(behaviour: str, phase: str, message: str) -> None:
    with HostileServer(behaviour) as server, pytest.raises(httpget.GetError) as caught:
        httpget.get(server.url, headers={}, total_timeout=10, max_bytes=1 << 20)
    text = str(caught.value)
    assert caught.value.phase == phase and message in text, text
    assert "\n" not in text and not PYTHON_WORDING.search(text), text
    assert not RAW_CONTROL.search(text), text


def test_a_failed_redirect_names_the_hop_that_failed() -> None:
    dead = f"http://127.0.0.1:{free_port()}/elsewhere"  # nothing listens there
    with HostileServer(f"redirect-to:{dead}") as server, pytest.raises(httpget.GetError) as caught:
        httpget.get(server.url, headers={}, total_timeout=10, max_bytes=1 << 20)
    assert caught.value.url == dead
    assert str(caught.value) == f"dial tcp {dead.split('/')[2]}: connect: connection refused"


def test_the_status_line_reason_is_escaped_and_bounded() -> None:
    with HostileServer("escape-status") as server:
        answer = httpget.get(server.url, headers={}, total_timeout=10, max_bytes=1 << 20)
    assert answer.status == 500
    assert answer.reason == "\\x1b]0;owned\\a\\x1b[2J"
