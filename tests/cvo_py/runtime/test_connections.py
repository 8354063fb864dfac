"""The API client's transport against a real HTTP/1.1 server: keep-alive reuse, an idle connection
the server closed, streams ended from another thread, timeouts, a base path."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import importlib
import json
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cvo_py.runtime.clientconfig import ClientConfig
from cvo_py.runtime.connections import ConnectionPool, Stream, _read_giving
from cvo_py.runtime.httpwire import Answer, Headers, HTTPError, host_header, request_head
from cvo_py.runtime.kube import LARGE_RESPONSE, ApiError, KubeClient, ServerUnreachable, _gunzip
from cvo_py.runtime.streamedbody import StreamedBody
from testkit.corpus.servers import ScriptedServer, read_request_head
from testkit.harness.certs import self_signed


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        server: _Server = self.server  # type: ignore[assignment]
        server.paths.append(self.path)
        server.peers.add(self.client_address)
        if self.path.endswith("/slow"):
            time.sleep(2)
        if self.path.endswith("/stream"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"5\r\nhello\r\n")
            self.wfile.flush()
            server.stream_started.set()
            server.release.wait(30)  # holds the stream open until the test ends
            return
        body = server.bodies.get(self.path, f"you asked for {self.path}".encode())
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if self.path.endswith("/close"):
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.paths: list[str] = []
        self.peers: set[tuple[str, int]] = set()
        self.stream_started = threading.Event()
        self.release = threading.Event()
        self.bodies: dict[str, bytes] = {}


@pytest.fixture
def server() -> Iterator[_Server]:
    with _serving(_Server()) as srv:
        yield srv


S = TypeVar("S", bound="_Server")


@contextlib.contextmanager
def _serving(srv: S) -> Iterator[S]:
    """`srv` serving on its own thread until the block ends; every thread it started is joined."""
    thread = threading.Thread(target=srv.serve_forever, name="test-http-server")
    thread.start()
    try:
        yield srv
    finally:
        srv.release.set()
        srv.shutdown()
        srv.server_close()  # joins the handler threads (block_on_close)
        thread.join(10)


def _end_from_another_thread(stream: Stream) -> tuple[bytes, float]:
    """(what the blocked reader still got, seconds until it returned) after `shutdown()` 0.2 s later."""
    chunks = stream.chunks()
    ender = threading.Timer(0.2, stream.shutdown)
    ender.start()
    started = time.monotonic()
    rest = b""
    try:
        for chunk in chunks:  # blocked until the shutdown
            rest += chunk
    except (OSError, HTTPError):  # how a read cut short ends
        pass
    ender.join()
    return rest, time.monotonic() - started


def _url(srv: _Server, path: str = "") -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}{path}"


def test_requests_share_one_kept_alive_connection(server: _Server) -> None:
    pool = ConnectionPool(_url(server))
    try:
        for i in range(3):
            response = pool.request("GET", f"/{i}", {}, read_timeout=5)
            assert (response.status, response.data) == (200, f"you asked for /{i}".encode())
        assert len(server.peers) == 1, server.peers
    finally:
        pool.clear()


class _CountingHandler(_Handler):
    """Answers after a moment, counting the requests the server holds at once."""

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        server: _CountingServer = self.server  # type: ignore[assignment]
        with server.lock:
            server.active += 1
            server.most = max(server.most, server.active)
        server.release.wait(0.05)
        with server.lock:
            server.active -= 1
        super().do_GET()


class _CountingServer(_Server):
    def __init__(self) -> None:
        super().__init__()
        self.RequestHandlerClass = _CountingHandler
        self.lock = threading.Lock()
        self.active = self.most = 0


def test_max_requests_bounds_the_requests_in_flight_and_their_connections() -> None:
    with _serving(_CountingServer()) as srv:
        pool = ConnectionPool(_url(srv), max_requests=2)
        answers: dict[int, bytes] = {}

        def ask(i: int) -> None:
            answers[i] = pool.request("GET", f"/{i}", {}, read_timeout=10).data

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(20)
        finally:
            pool.clear()
        assert answers == {i: f"you asked for /{i}".encode() for i in range(6)}
        assert 1 <= srv.most <= 2, srv.most
        assert 1 <= len(srv.peers) <= 2, srv.peers
    with pytest.raises(ValueError, match="max_requests must be at least 1, not 0"):
        ConnectionPool(_url(srv), max_requests=0)


def test_a_connection_the_server_closes_is_not_reused(server: _Server) -> None:
    pool = ConnectionPool(_url(server))
    try:
        assert pool.request("GET", "/close", {}, read_timeout=5).status == 200
        assert pool.request("GET", "/after", {}, read_timeout=5).data == b"you asked for /after"
        assert len(server.peers) == 2, server.peers
    finally:
        pool.clear()


def test_an_idle_connection_closed_by_the_server_is_replaced(server: _Server) -> None:
    pool = ConnectionPool(_url(server))
    try:
        pool.request("GET", "/first", {}, read_timeout=5)
        # the server ends every idle connection (as an API server does after its idle timeout)
        idle = pool._idle[0]
        assert idle.sock is not None
        idle.sock.shutdown(socket.SHUT_RD)  # what the pool sees is a readable (EOF) socket
        assert pool.request("GET", "/second", {}, read_timeout=5).data == b"you asked for /second"
        assert len(server.peers) == 2
    finally:
        pool.clear()


def test_a_base_path_prefixes_every_request(server: _Server) -> None:
    pool = ConnectionPool(_url(server, "/proxy/cluster/"))
    try:
        pool.request("GET", "/api/v1/nodes?limit=1", {}, read_timeout=5)
        assert server.paths == ["/proxy/cluster/api/v1/nodes?limit=1"]
    finally:
        pool.clear()


def test_a_read_timeout_is_a_timeout_error(server: _Server) -> None:
    pool = ConnectionPool(_url(server))
    try:
        with pytest.raises(TimeoutError):
            pool.request("GET", "/slow", {}, read_timeout=0.2)
        assert pool._idle == []  # the timed-out connection is not given back
    finally:
        pool.clear()


def test_a_stream_is_ended_from_another_thread(server: _Server) -> None:
    pool = ConnectionPool(_url(server))
    stream = pool.stream("GET", "/stream", {}, read_timeout=30)
    try:
        assert next(stream.chunks()) == b"hello"
        assert server.stream_started.wait(5)
        rest, elapsed = _end_from_another_thread(stream)
        assert elapsed < 10, "the shutdown did not end the blocked read"
        assert rest == b""
    finally:
        stream.close()
        pool.clear()
    assert pool._idle == []  # a stream's connection never goes back to the pool


def test_a_refused_connection_is_an_os_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    pool = ConnectionPool(f"http://127.0.0.1:{port}")
    with pytest.raises(ConnectionRefusedError):
        pool.request("GET", "/", {}, read_timeout=5)


@pytest.mark.parametrize("url", ["ftp://example.com", "https://", "example.com"])
def test_only_http_urls(url: str) -> None:
    with pytest.raises(ValueError, match="not an http or https URL"):
        ConnectionPool(url)


def test_the_client_reads_large_bodies_as_the_standard_parser_does(server: _Server) -> None:
    """Where pydantic-core is loaded (the controllers), bodies from LARGE_RESPONSE bytes go
    through its parser, and what it refuses through Python's: either way the caller gets what
    json.loads gives."""
    importlib.import_module("pydantic_core")
    padding = "x" * LARGE_RESPONSE
    bodies = {
        "/small": '{"a": [1, 2.5, "\\u00e9"]}',
        "/large": json.dumps({"items": [{"n": i, "f": i / 3, "s": f"v{i}"} for i in range(5000)], "pad": padding}),
        "/lone-surrogate": '{"s": "\\ud800", "pad": "' + padding + '"}',
        "/nan": '{"f": NaN, "pad": "' + padding + '"}',
    }
    server.bodies.update({path: body.encode() for path, body in bodies.items()})
    client = KubeClient(ClientConfig(host=_url(server), verify=False))
    try:
        for path, body in bodies.items():
            assert repr(client.request("GET", path)) == repr(json.loads(body)), path
    finally:
        client.close()


# -- TLS: files read again for new connections, names checked as Go checks them --------------------


class _TLSServer(_Server):
    """The same server over TLS, with the certificate chosen when each connection is accepted."""

    def __init__(self, cert: tuple[str, str]) -> None:
        super().__init__()
        self.use(cert)

    def use(self, cert: tuple[str, str]) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*cert)
        self.context = context

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        return self.context.wrap_socket(sock, server_side=True), address


@contextlib.contextmanager
def _serving_tls(cert: tuple[str, str]) -> Iterator[_TLSServer]:
    with _serving(_TLSServer(cert)) as srv:
        yield srv


def test_a_rotated_ca_file_is_read_for_the_next_connection(tmp_path: Path) -> None:
    """A Pod's ca.crt (or a kubeconfig's CA file) rotated on disk: new connections trust the new CA."""
    first = self_signed(tmp_path, "first", common_name="api", ip="127.0.0.1")
    second = self_signed(tmp_path, "second", common_name="api", ip="127.0.0.1")
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(Path(first[0]).read_bytes())
    with _serving_tls(first) as server:
        client = KubeClient(ClientConfig(host=_url(server).replace("http:", "https:"), ca_file=str(ca_file)))
        try:
            assert client.request("GET", "/before") == "you asked for /before"
            server.use(second)
            ca_file.write_bytes(Path(second[0]).read_bytes())
            client.close()  # the kept-alive connection ends, as the server's would
            assert client.request("GET", "/after") == "you asked for /after"
        finally:
            client.close()


def test_a_certificate_that_names_the_server_only_in_its_common_name_is_refused(tmp_path: Path) -> None:
    """As Go (and urllib3): the subjectAltNames name the server, never the subject's CN."""
    cn_only = self_signed(tmp_path, "cn-only", common_name="localhost")
    with _serving_tls(cn_only) as server:
        host = f"https://localhost:{server.server_address[1]}"
        client = KubeClient(ClientConfig(host=host, ca_file=cn_only[0]))
        try:
            with pytest.raises(ServerUnreachable, match="certificate verify failed"):
                client.request("GET", "/")
        finally:
            client.close()


def test_an_unloadable_ca_file_is_named(tmp_path: Path, server: _Server) -> None:
    missing = tmp_path / "nowhere" / "ca.crt"
    client = KubeClient(ClientConfig(host=f"https://127.0.0.1:{server.server_address[1]}", ca_file=str(missing)))
    with pytest.raises(ServerUnreachable, match=f"cannot load the CA file {re.escape(str(missing))}: file not found"):
        client.request("GET", "/")


class _ClosingStreamHandler(_Handler):
    def do_GET(self) -> None:  # noqa: N802
        server: _Server = self.server  # type: ignore[assignment]
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")  # a stream that ends its connection
        self.end_headers()
        self.wfile.write(b"5\r\nhello\r\n")
        self.wfile.flush()
        server.release.wait(30)


def test_a_stream_that_ends_its_connection_is_still_ended_from_another_thread() -> None:
    srv = _Server()
    srv.RequestHandlerClass = _ClosingStreamHandler
    with _serving(srv):
        pool = ConnectionPool(_url(srv))
        stream = pool.stream("GET", "/watch", {}, read_timeout=30)
        try:
            assert next(stream.chunks()) == b"hello"
            _, elapsed = _end_from_another_thread(stream)
            assert elapsed < 10, f"the read ended only after {elapsed:.1f}s, when the server let go"
        finally:
            stream.close()


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("close", "EOF"),
        ("reset", "read: connection reset by peer"),
        ("garbage", 'malformed HTTP response "\\x1b[2Jnot http at all"'),
        ("long-header", "net/http: HTTP/1.x transport connection broken: "),
        ("many-headers", "net/http: HTTP/1.x transport connection broken: "),
    ],
)
def test_an_api_server_that_answers_badly_is_named_in_go_shaped_words(behaviour: str, reason: str) -> None:
    from testkit.corpus.servers import HostileServer
    from testkit.corpus.values import PYTHON_WORDING, RAW_CONTROL

    with HostileServer(behaviour) as server:
        host = server.url.removesuffix("/path")
        client = KubeClient(ClientConfig(host=host))
        try:
            with pytest.raises(ServerUnreachable) as caught:
                client.request("GET", "/version")
        finally:
            client.close()
    text = str(caught.value)
    assert text.startswith(f"cannot reach the Kubernetes API server at {host}: ") and reason in text, text
    assert not PYTHON_WORDING.search(text) and not RAW_CONTROL.search(text), text


# -- the answers read as http.client reads them ---------------------------------------------------

_NAMES = ["Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Content-Encoding", "Retry-After", "X-A"]


@st.composite
def _answers(draw: st.DrawFn) -> tuple[str, bytes]:
    """(method, the bytes a server sends): well-formed heads with random framing, sometimes a 100
    Continue first, sometimes cut short anywhere."""
    method = draw(st.sampled_from(["GET", "HEAD", "POST"]))
    version = draw(st.sampled_from(["HTTP/1.1", "HTTP/1.0"]))
    status = draw(st.sampled_from([200, 201, 204, 304, 404, 410, 429, 500]))
    body = draw(st.binary(max_size=300))
    headers: list[tuple[str, str]] = []
    framings = ["length", "short-length", "bad-length", "none"]  # 204 and 304 have no body (Go): not chunked
    framing = draw(st.sampled_from(framings if status in (204, 304) else [*framings, "chunked"]))
    if framing == "length":
        headers.append(("Content-Length", str(len(body))))
    elif framing == "short-length":
        headers.append(("Content-Length", str(len(body) + draw(st.integers(1, 50)))))
    elif framing == "bad-length":
        headers.append(("Content-Length", draw(st.sampled_from(["-1", "x", "1e3", ""]))))
    elif framing == "chunked":
        headers.append(("Transfer-Encoding", draw(st.sampled_from(["chunked", "Chunked"]))))
    value = st.text(st.characters(min_codepoint=0x21, max_codepoint=0xFF), max_size=20)
    for name in draw(st.lists(st.sampled_from(["Connection", "Keep-Alive", "X-A", "Retry-After", "Content-Encoding"]))):
        headers.append((name, draw(st.sampled_from(["close", "keep-alive", "Keep-Alive, x"]) | value)))
    # at and around http.client's bounds: 100 header lines, 65,536 bytes a line
    headers += [("X-B", "v")] * draw(st.sampled_from([0, 0, 0, 97, 98, 99]))
    if draw(st.integers(0, 5)) == 0:
        headers.append(("X-A", "x" * (65536 - len("X-A: \r\n") + draw(st.integers(-1, 1)))))
    if framing == "chunked":
        cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=4)))
        pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True) if b > a]
        payload = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in pieces) + b"0\r\n"
        payload += draw(st.sampled_from([b"", b"Trailer: x\r\n"])) + b"\r\n"
    else:
        payload = body
    head = "".join(f"{n}: {v}\r\n" for n, v in headers)
    data = f"{version} {status} Reason\r\n{head}\r\n".encode("latin-1") + payload
    if draw(st.booleans()):
        data = b"HTTP/1.1 100 Continue\r\nX-A: skipped\r\n\r\n" + data
    if draw(st.integers(0, 4)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return method, data


def _read_with(reader: str, method: str, data: bytes) -> tuple[Any, ...]:
    """What one reader makes of `data`: (status, headers, body, will_close), or how Go would word
    its error."""
    ours, theirs = socket.socketpair()
    try:
        theirs.sendall(data)
        theirs.close()
        if reader == "http.client":
            response = http.client.HTTPResponse(ours, method=method)
            response.begin()
            return (response.status, [response.headers.get(n) for n in _NAMES], response.read(), response.will_close)
        answer = Answer(ours.makefile("rb"), method)
        if reader == "ours, piece by piece":
            pieces: list[bytes] = []
            whole = _read_giving(answer, pieces.append)
            assert b"".join(pieces) == whole and all(pieces)
            return (answer.status, [answer.headers.get(n) for n in _NAMES], whole, answer.will_close)
        return (answer.status, [answer.headers.get(n) for n in _NAMES], answer.read(), answer.will_close)
    except (OSError, http.client.HTTPException, HTTPError) as exc:
        from cvo_py.runtime.connections import go_cause

        return ("error", go_cause(exc, "127.0.0.1", 1))
    finally:
        ours.close()


@settings(max_examples=400, deadline=None)
@given(_answers())
def test_answers_read_as_http_client_reads_them(answer: tuple[str, bytes]) -> None:
    """The project's reader against the standard library's, on the same bytes; where they differ
    by design (a head cut short), Go's wording. (1xx answers other than 100, 204 and 304 with a
    chunked body, and malformed answers, are read as Go reads them: the tests below.)"""
    method, data = answer
    expected, got = _read_with("http.client", method, data), _read_with("ours", method, data)
    assert _read_with("ours, piece by piece", method, data) == got  # the body given as it arrives
    if got == ("error", "unexpected EOF") and not _head_is_whole(data):
        return  # http.client reads a head cut short as if it were whole; Go says it was cut short
    assert got == expected, data


def _head_is_whole(data: bytes) -> bool:
    """Whether the answer's head (after any 100 Continue's) ends with its blank line."""
    continued = b"HTTP/1.1 100 Continue\r\nX-A: skipped\r\n\r\n"
    return b"\r\n\r\n" in data.removeprefix(continued)


@pytest.mark.parametrize(
    ("data", "cause"),
    [
        (b"HTTP/1.1 200 OK\r\nbogus\r\nContent-Length: 0\r\n\r\n", "malformed MIME header line: bogus"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "invalid byte in chunk length"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", 'malformed HTTP response "HTTP/1.1 2000 OK"'),
        (b"HTTP/1.1 099 OK\r\n\r\n", 'malformed HTTP status code "099"'),
        (b"HTTP/2.0 200 OK\r\n\r\n", 'malformed HTTP version "HTTP/2.0"'),
        (b"", "EOF"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", 'bad Content-Length "9999'
         '9999999999999999"'),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", "http chunk length too large"),
        (b"HTTP/1.1 100 Continue\r\n\r\n" * 6 + b"HTTP/1.1 200 OK\r\n\r\n", "too many 1xx informational responses"),
    ],
)
def test_malformed_answers_are_named_as_go_names_them(data: bytes, cause: str) -> None:
    broken = "net/http: HTTP/1.x transport connection broken: "
    broken = "" if cause in ("EOF", "invalid byte in chunk length", "http chunk length too large") else broken
    broken = "net/http: " if cause.startswith("too many 1xx") else broken
    assert _read_with("ours", "GET", data) == ("error", broken + cause)


def test_informational_heads_are_skipped_and_204_has_no_body_as_go_reads_them() -> None:
    early_hints = b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    assert _read_with("ours", "GET", early_hints)[::2] == (200, b"ok")
    no_content = b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"  # nothing follows
    assert _read_with("ours", "GET", no_content)[::2] == (204, b"")


def test_a_folded_header_continues_its_value_as_go_joins_it() -> None:
    data = b"HTTP/1.1 200 OK\r\nX-A: one\r\n  two\r\nContent-Length: 2\r\n\r\nok"
    status, headers, body, _ = _read_with("ours", "GET", data)
    assert (status, headers[_NAMES.index("X-A")], body) == (200, "one two", b"ok")


def test_requests_are_written_as_http_client_writes_them() -> None:
    """The same bytes on the wire for the API client's requests, and the same refusals."""
    import http.client as stdlib

    host = host_header("127.0.0.1", 8080, https=False)
    for method, target, headers, body in [
        ("GET", "/api/v1/nodes?limit=100", {"Accept": "application/json", "User-Agent": "cvo-py"}, None),
        ("POST", "/api/v1/namespaces", {"Content-Type": "application/json"}, b'{"a":1}'),
        ("PUT", "/x", {"Authorization": "Bearer t\xe9"}, None),
        ("DELETE", "/x", {"Accept-Encoding": "gzip", "Host": "other"}, None),
    ]:
        sent = bytearray()
        conn = stdlib.HTTPConnection("127.0.0.1", 8080)
        conn.send = sent.extend  # type: ignore[assignment,method-assign]
        conn.request(method, target, body=body, headers=headers)
        assert request_head(method, target, headers, body, host) + (body or b"") == bytes(sent)
    for bad in ({"X": "a\r\nInjected: 1"}, {"Bad:Name": "x"}, {" X": "x"}):
        refusing = stdlib.HTTPConnection("h")
        refusing.putrequest("GET", "/")
        with pytest.raises(ValueError):
            refusing.putheader(*next(iter(bad.items())))
        with pytest.raises(ValueError):
            request_head("GET", "/", bad, None, host)
    with pytest.raises(HTTPError, match="invalid control character in URL"):
        request_head("GET", "/a b", {}, None, host)


@pytest.mark.parametrize(
    ("host", "port", "https", "value"),
    [("127.0.0.1", 6443, True, b"127.0.0.1:6443"), ("api.example", 443, True, b"api.example"),
     ("fe80::1%eth0", 80, False, b"[fe80::1]"), ("bücher.example", 8080, False, b"xn--bcher-kva.example:8080")],
)  # fmt: skip
def test_the_host_header_is_written_as_http_client_writes_it(host: str, port: int, https: bool, value: bytes) -> None:
    import http.client as stdlib

    sent = bytearray()
    conn = (stdlib.HTTPSConnection if https else stdlib.HTTPConnection)(host, port)
    conn.send = sent.extend  # type: ignore[assignment,method-assign]
    conn.request("GET", "/")
    assert host_header(host, port, https) == value
    assert b"\r\nHost: " + value + b"\r\n" in bytes(sent)


def test_bytes_after_an_answer_are_never_the_next_requests_answer() -> None:
    """What a server sends past an answer's end (in the same write) is dropped with its
    connection; the next request gets its own answer."""
    fake = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfake!"

    def answer(conn: socket.socket, n: int) -> None:
        first = n == 1
        while read_request_head(conn):
            if first:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + fake)
                first = False
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nreal")

    with ScriptedServer(answer) as server:
        pool = ConnectionPool(f"http://127.0.0.1:{server.port}")
        try:
            assert pool.request("GET", "/1", {}, read_timeout=5).data == b"ok"
            assert pool.request("GET", "/2", {}, read_timeout=5).data == b"real"
        finally:
            pool.clear()


def test_a_stream_gives_what_has_arrived_without_waiting_for_the_rest_of_its_chunk() -> None:
    """A watch event is handed over when it arrives, even inside a chunk the server is still
    writing (a proxy may cut chunks anywhere)."""
    first_seen = threading.Event()

    def answer(conn: socket.socket, _: int) -> None:
        read_request_head(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n0123456789")
        first_seen.wait(10)
        conn.sendall(b"abcdefghij\r\n0\r\n\r\n")

    with ScriptedServer(answer) as server:
        pool = ConnectionPool(f"http://127.0.0.1:{server.port}")
        stream = pool.stream("GET", "/watch", {}, read_timeout=5)
        try:
            pieces = stream.chunks()
            assert next(pieces) == b"0123456789"  # before the rest is written: no read timeout
            first_seen.set()
            assert b"".join(pieces) == b"abcdefghij"
        finally:
            first_seen.set()
            stream.close()


# -- a body given as it arrives, gzipped or not ------------------------------------------------------


def _gzipped_answers(conn: socket.socket, _n: int) -> None:
    """Answers each request on the connection by its path: /gzip/<hex> a gzipped chunked body,
    /plain/<hex> the bytes as they are, /missing a 404 Status; in chunks of 7 bytes."""
    import gzip

    with contextlib.suppress(OSError):
        while True:
            head = read_request_head(conn)
            if not head:
                return
            path = head.split(b" ", 2)[1].decode()
            kind, _, payload = path.lstrip("/").partition("/")
            data = bytes.fromhex(payload)
            status, extra = "200 OK", ""
            if kind == "gzip":
                data, extra = gzip.compress(data), "Content-Encoding: gzip\r\n"
            elif kind == "broken-gzip":
                data, extra = gzip.compress(data)[:-5], "Content-Encoding: gzip\r\n"
            elif kind == "bad-checksum":  # whole, its CRC-32 wrong
                packed = bytearray(gzip.compress(data))
                packed[-8] ^= 0xFF
                data, extra = bytes(packed), "Content-Encoding: gzip\r\n"
            elif kind == "missing":
                status, data = "404 Not Found", b'{"kind":"Status","reason":"NotFound","message":"gone","code":404}'
                extra = "Content-Type: application/json\r\n"
            framed = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (data[i : i + 7] for i in range(0, len(data), 7)))
            head_out = f"HTTP/1.1 {status}\r\nTransfer-Encoding: chunked\r\n{extra}\r\n".encode()
            conn.sendall(head_out + framed + b"0\r\n\r\n")


@pytest.mark.parametrize("kind", ["gzip", "plain"])
def test_a_body_is_given_as_it_arrives_decompressed_and_read_whole_as_before(kind: str) -> None:
    payload = json.dumps({"items": [{"n": i} for i in range(200)]}).encode()
    with ScriptedServer(_gzipped_answers) as server:
        client = KubeClient(ClientConfig(host=f"http://127.0.0.1:{server.port}"))
        try:
            readers: list[_Reading] = []

            def progress() -> Any:
                readers.append(_Reading({"read": "as it arrived"} if not readers else None))
                return readers[-1]

            path = f"/{kind}/{payload.hex()}"
            # what the reader makes of the body is the answer; None: the body decoded whole
            assert client.request("GET", path, compressed=True, progress=progress) == {"read": "as it arrived"}
            assert readers[0].fed == payload and len(readers) == 1
            got = client.request("GET", path, compressed=True, progress=progress)
            assert got == client.request("GET", path, compressed=True) == json.loads(payload)
            # an error's body is not given: it is the error's
            with pytest.raises(ApiError) as missing:
                client.request("GET", "/missing/", compressed=True, progress=progress)
            assert missing.value.reason == "NotFound" and len(readers) == 2
        finally:
            client.close()


class _Reading:
    """A BodyReader that has read all it was fed as the answer `read`."""

    def __init__(self, read: Any) -> None:
        self.read, self.fed = read, b""

    def feed(self, piece: bytes) -> None:
        self.fed += piece

    def result(self) -> Any:
        return self.read


@pytest.mark.parametrize("kind", ["broken-gzip", "bad-checksum"])
def test_a_gzipped_body_cut_short_or_corrupt_is_the_same_error_given_as_it_arrives_or_not(kind: str) -> None:
    """Whatever the reader made of the pieces, a body that does not decompress whole is the
    error the whole body's decompression gives."""
    with ScriptedServer(_gzipped_answers) as server:
        client = KubeClient(ClientConfig(host=f"http://127.0.0.1:{server.port}"))
        try:
            errors = []
            for progress in (None, lambda: _Reading({"read": "as it arrived"})):
                with pytest.raises(ApiError) as refused:
                    client.request("GET", f"/{kind}/" + (b"x" * 500).hex(), compressed=True, progress=progress)
                errors.append((refused.value.status, str(refused.value)))
            assert errors[0] == errors[1] and errors[0][0] == 500
        finally:
            client.close()


def _gzip_bodies() -> st.SearchStrategy[bytes]:
    import gzip

    members = st.binary(max_size=300).map(gzip.compress)
    return st.one_of(
        members,
        st.tuples(members, members).map(b"".join),  # two members: the first is read, as zlib reads one
        st.tuples(members, st.binary(min_size=1, max_size=20)).map(b"".join),  # bytes after it
        st.tuples(members, st.integers(1, 30)).map(lambda m: m[0][: -m[1]]),  # cut short
        st.binary(max_size=40),  # not gzip at all
    )


@given(_gzip_bodies(), st.lists(st.integers(0, 400), max_size=6))
def test_a_body_decompressed_as_it_arrives_is_what_decompressing_it_whole_gives(raw: bytes, cuts: list[int]) -> None:
    """Read as it arrived exactly when the whole body decompresses (its first gzip member, as
    zlib reads it), from the same bytes."""
    reader = _Reading({"read": "as it arrived"})
    streamed = StreamedBody(lambda: reader, compressed=True)
    give = streamed.on_answer(200, Headers([("Content-Encoding", "gzip")]))
    assert give is not None
    bounds = sorted({0, *(c for c in cuts if c < len(raw)), len(raw)})
    for start, end in zip(bounds, bounds[1:], strict=False):
        give(raw[start:end])
    try:
        whole = _gunzip(raw, "GET", "/x")
    except ApiError:
        assert streamed.read() is None
    else:
        assert streamed.read() == {"read": "as it arrived"} and reader.fed == whole
