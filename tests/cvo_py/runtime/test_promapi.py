"""The Prometheus/Thanos API client against a real HTTP server: answers, errors, limits."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.errors import ConfigError
from cvo_py.runtime.promapi import APIError, PrometheusAPI
from testkit.fakes.httpserve import Handler
from testkit.harness.certs import certificate_authority, server_certificate


def ok(data: Any) -> bytes:
    return json.dumps({"status": "success", "data": data}).encode()


ALERT = {"labels": {"alertname": "A", "severity": "warning"}, "annotations": {}, "state": "firing", "activeAt": "x"}


def test_alerts_sends_the_token_read_at_each_request(http_server: Callable[[Handler], str], tmp_path: Path) -> None:
    seen: list[str | None] = []

    def handler(req: BaseHTTPRequestHandler) -> tuple[int, bytes]:
        seen.append(req.headers.get("Authorization"))
        return 200, ok({"alerts": [ALERT]}) if req.path == "/api/v1/alerts" else (404, b"{}")

    token = tmp_path / "token"
    token.write_text("one\n")
    api = PrometheusAPI(http_server(handler) + "/", token_file=str(token))
    assert api.alerts() == [ALERT]
    token.write_text("two")
    api.alerts()
    assert seen == ["Bearer one", "Bearer two"]


def test_query_returns_the_vector(http_server: Callable[[Handler], str]) -> None:
    sample = {"metric": {"__name__": "up"}, "value": [1.5, "1"]}

    def handler(req: BaseHTTPRequestHandler) -> tuple[int, bytes]:
        assert req.path.startswith("/api/v1/query?query=up")
        return 200, ok({"resultType": "vector", "result": [sample]})

    assert PrometheusAPI(http_server(handler)).query("up") == [sample]


@pytest.mark.parametrize(
    "status,body,message",
    [
        (503, b"upstream down", 'HTTP 503: not an API response: "upstream down"'),  # Go's quoting
        (503, b"it's \x1b[2Jdown", 'HTTP 503: not an API response: "it\'s \\x1b[2Jdown"'),
        # What Go's decoder refuses: NaN and Infinity, a body in UTF-16.
        (200, b'{"status": "success", "data": {"alerts": NaN}}',
         'HTTP 200: not an API response: "{\\"status\\": \\"success\\", \\"data\\": {\\"alerts\\": NaN}}"'),
        (200, json.dumps({"status": "success", "data": {"alerts": []}}).encode("utf-16"),
         "HTTP 200: not an API response: "),
        (400, json.dumps({"status": "error", "error": "bad query"}).encode(), "HTTP 400: bad query"),
        (200, ok({"alerts": "nope"}), "data.alerts is not a list of objects"),
        (200, b"x" * 5000, "response larger than 4096 bytes"),
    ],
)
def test_bad_answers_are_one_line_errors(
    http_server: Callable[[Handler], str], status: int, body: bytes, message: str
) -> None:
    url = http_server(lambda _req: (status, body))
    with pytest.raises(APIError) as exc:
        PrometheusAPI(url, max_bytes=4096).alerts()
    assert str(exc.value).startswith(f"{url}/api/v1/alerts: {message}")
    assert str(exc.value).isprintable()


def test_unreachable_and_unreadable_token_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(APIError, match=r"^http://127\.0\.0\.1:1/api/v1/alerts: .*[Cc]onnection refused") as exc:
        PrometheusAPI("http://127.0.0.1:1", timeout=2).alerts()
    assert "\n" not in str(exc.value)
    with pytest.raises(APIError, match="cannot read the bearer token file .*/missing: file not found"):
        PrometheusAPI("http://127.0.0.1:1", token_file=str(tmp_path / "missing")).alerts()


@pytest.mark.parametrize("url", ["", "ftp://x", "thanos:9091", "https://"])
def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="invalid URL"):
        PrometheusAPI(url)


def test_check_files_names_the_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"CA file .*/ca\.crt: file not found"):
        PrometheusAPI("https://x", ca_file=str(tmp_path / "ca.crt")).check_files()


def test_a_12mb_error_text_becomes_a_bounded_line() -> None:
    """What the API says is cut to MAX_ERROR_CHARS (head and tail): a 12 MB error is not a 12 MB log
    line, nor a 100 KB insight."""
    from cvo_py.runtime.promapi import MAX_ERROR_CHARS
    from testkit.corpus.servers import HostileServer

    with HostileServer("huge-error") as server, pytest.raises(APIError) as caught:
        PrometheusAPI(server.url.removesuffix("/path")).alerts()
    text = str(caught.value)
    assert "HTTP 422: xxxx" in text and "[…]" in text
    assert len(text) < MAX_ERROR_CHARS + 200, len(text)


@pytest.mark.parametrize("behaviour", ["close", "reset", "garbage", "deep-json", "huge-number", "redirect-loop"])
def test_bad_answers_are_go_shaped(behaviour: str) -> None:
    from testkit.corpus.servers import HostileServer
    from testkit.corpus.values import PYTHON_WORDING

    with HostileServer(behaviour) as server, pytest.raises(APIError) as caught:
        PrometheusAPI(server.url.removesuffix("/path")).alerts()
    assert not PYTHON_WORDING.search(str(caught.value)), str(caught.value)
    assert "\n" not in str(caught.value)


def test_token_and_ca_files_swapped_for_special_files_fail_the_request_not_the_process(tmp_path: Path) -> None:
    """At each request the files are read again (rotation): a FIFO or /dev/zero put there meanwhile
    is an APIError at once. Run in a child under an rlimit: a reader without bounds would hang or
    eat memory there, not here."""
    import sys

    from testkit.corpus.files import run_limited, special_file

    fifo = special_file(tmp_path, "fifo", "token")
    code = (
        "import sys\n"
        "from cvo_py.runtime.promapi import APIError, PrometheusAPI\n"
        "for kind, path in (('token_file', sys.argv[1]), ('token_file', '/dev/zero'), ('ca_file', sys.argv[1]),"
        " ('ca_file', '/dev/zero')):\n"
        "    try:\n"
        "        PrometheusAPI('https://127.0.0.1:1', **{kind: path}).alerts()\n"
        "    except APIError as exc:\n"
        "        print(exc)\n"
    )
    result = run_limited([sys.executable, "-c", code, str(fifo)], timeout=60)
    assert not result.timed_out and result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert len(lines) == 4 and all("not a regular file" in line for line in lines), lines


@pytest.fixture
def https_named(tmp_path: Path) -> Iterator[tuple[int, str, list[tuple[str | None, str]]]]:
    """HTTPS on 127.0.0.1 with a certificate for thanos-querier's Service names only: (port, CA
    file, the (SNI, Host header) of each request)."""
    ca = certificate_authority(tmp_path)
    names = ["thanos-querier.openshift-monitoring.svc", "thanos-querier.openshift-monitoring.svc.cluster.local"]
    cert, key = server_certificate(tmp_path, "thanos", ca, names)
    seen: list[tuple[str | None, str]] = []
    sni: list[str | None] = []

    class Request(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append((sni[-1] if sni else None, self.headers.get("Host", "")))
            body = ok({"alerts": []})
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    def remember_sni(_sock: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
        sni.append(name)

    context.sni_callback = remember_sni
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Request)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield int(httpd.server_address[1]), ca[0], seen
    httpd.shutdown()
    httpd.server_close()


def test_a_service_is_reached_at_the_address_given_with_its_own_server_name(
    https_named: tuple[int, str, list[tuple[str | None, str]]],
) -> None:
    port, ca_file, seen = https_named
    host = "thanos-querier.openshift-monitoring.svc.cluster.local"
    asked: list[str] = []

    def cluster_ip() -> str:
        asked.append("x")
        return "127.0.0.1"

    api = PrometheusAPI(f"https://{host}:{port}", ca_file=ca_file, connect_host=cluster_ip)
    assert api.alerts() == []
    assert api.alerts() == []
    assert len(asked) == 2, "the address is asked before every request"
    assert seen == [(host, f"{host}:{port}")] * 2
    # A certificate that does not name the URL's host is refused, wherever it is reached.
    with pytest.raises(APIError, match=r"^https://localhost:\d+/api/v1/alerts: tls: "):
        PrometheusAPI(f"https://localhost:{port}", ca_file=ca_file, connect_host=cluster_ip).alerts()


def test_the_address_lookup_failing_is_a_one_line_error(
    https_named: tuple[int, str, list[tuple[str | None, str]]],
) -> None:
    port, _, _ = https_named

    def no_service() -> str:
        raise APIError("cannot get the cluster IP of Service openshift-monitoring/thanos-querier: 404 NotFound")

    api = PrometheusAPI(f"https://thanos-querier.openshift-monitoring.svc:{port}", connect_host=no_service)
    with pytest.raises(APIError, match="^cannot get the cluster IP of Service openshift-monitoring/thanos-querier"):
        api.query("up")
    # A refused connection names the address connected to, as Go's dialer does.
    refused = PrometheusAPI("https://thanos-querier.openshift-monitoring.svc:1", connect_host=lambda: "127.0.0.1")
    with pytest.raises(APIError, match=r"dial tcp 127\.0\.0\.1:1: connect: connection refused"):
        refused.alerts()
