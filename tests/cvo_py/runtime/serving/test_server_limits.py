"""The metrics server's bounds (cvo_py/runtime/serving/server.py): header size and count as Go bounds them,
read and idle timeouts, a connection cap whose reserve keeps the probes answering, header bytes
bounded across connections; over HTTP and HTTPS. The real processes under attack are in
test_endpoints_under_attack.py; the memory bound under an rlimit is at the end of this file."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from cvo_py.runtime.serving.admission import ServingLimits
from cvo_py.runtime.serving.certificates import ServingContext
from cvo_py.runtime.serving.server import MetricsServer
from testkit.corpus.clients import Attack, metrics_server_child, probe, probe_as_kubelet, stuffed_headers
from testkit.corpus.files import peak_rss
from testkit.harness.wait import wait_until

PROBE_BOUND = 5.0  # seconds: generous for a loaded 2-core machine; bench/hostile_inputs.py prints the figures
FAST = ServingLimits(header_timeout=1.0, idle_timeout=1.5, write_timeout=2.0, max_connections=24, reserve=4)


def _client_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


@pytest.fixture(params=["http", "https"])
def served(request: pytest.FixtureRequest, certificate: tuple[str, str]) -> Iterator[tuple[MetricsServer, str]]:
    serving = ServingContext(*certificate, client_auth=True) if request.param == "https" else None
    server = MetricsServer("127.0.0.1:0", CollectorRegistry(), serving=serving, limits=FAST).start()
    yield server, request.param
    server.stop()


def _connect(server: MetricsServer, scheme: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    if scheme == "https":
        return _client_context().wrap_socket(sock)
    return sock


def _exchange(server: MetricsServer, scheme: str, data: bytes) -> bytes:
    """Send `data` on a new connection and read until the server closes it."""
    with _connect(server, scheme) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass  # the server stopped reading and answered: read the answer
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except (ConnectionResetError, ssl.SSLError):
            pass
        return b"".join(chunks)


def _url(server: MetricsServer, scheme: str, path: str = "/healthz") -> str:
    return f"{scheme}://127.0.0.1:{server.port}{path}"


def _context(scheme: str) -> ssl.SSLContext | None:
    return _client_context() if scheme == "https" else None


def test_headers_over_1mb_are_431(served: tuple[MetricsServer, str]) -> None:
    server, scheme = served
    answer = _exchange(server, scheme, stuffed_headers(count=20, size=60_000) + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer[:200]
    assert b"Connection: close" in answer


def test_more_than_1000_header_lines_are_431(served: tuple[MetricsServer, str]) -> None:
    server, scheme = served
    request = b"GET /healthz HTTP/1.1\r\n" + b"a: b\r\n" * 1001 + b"\r\n"
    assert _exchange(server, scheme, request).startswith(b"HTTP/1.1 431 ")


@pytest.mark.parametrize(
    "request_bytes",
    [b"GARBAGE\r\n\r\n", b"GET /healthz HTTP/9.9\r\n\r\n", b"GET /healthz HTTP/1.1\r\n folded: x\r\n\r\n",
     b"GET /healthz HTTP/1.1\r\nno colon\r\n\r\n", b"G\x1bT /healthz HTTP/1.1\r\n\r\n"],
)
def test_malformed_requests_are_400(served: tuple[MetricsServer, str], request_bytes: bytes) -> None:
    server, scheme = served
    assert _exchange(server, scheme, request_bytes).startswith(b"HTTP/1.1 400 Bad Request\r\n")


def test_keep_alive_pipelining_head_and_other_methods(served: tuple[MetricsServer, str]) -> None:
    server, scheme = served
    two = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nHEAD /readyz HTTP/1.1\nHost: x\n\nPOST / HTTP/1.1\r\n\r\n"
    answer = _exchange(server, scheme, two)
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 2
    assert b"\r\n\r\nok" in answer  # GET has its body, HEAD none (the 405 follows at once)
    assert answer.endswith(b"Allow: GET, HEAD\r\nConnection: close\r\n\r\nmethod not allowed")


def test_a_slow_loris_is_closed_at_the_header_timeout(served: tuple[MetricsServer, str]) -> None:
    server, scheme = served
    with _connect(server, scheme) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
        start = time.monotonic()
        closed = False
        while time.monotonic() - start < 30:
            try:
                sock.sendall(b"a")
                sock.settimeout(0.2)
                if sock.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except (OSError, ssl.SSLError):
                closed = True
                break
        assert closed, "a dripping client was never closed"


def test_an_idle_kept_alive_connection_is_closed_at_the_idle_timeout(served: tuple[MetricsServer, str]) -> None:
    server, scheme = served
    with _connect(server, scheme) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(30)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (ConnectionResetError, ssl.SSLError):
            pass
    assert answer.startswith(b"HTTP/1.1 200 OK"), answer  # answered, then closed after idling


@pytest.mark.parametrize("kind", ["idle", "slow-loris", "header-stuffing"])
def test_stalled_connections_past_the_cap_make_room_and_probes_answer(
    served: tuple[MetricsServer, str], kind: str
) -> None:
    server, scheme = served
    tls = _client_context() if scheme == "https" else None
    with Attack("127.0.0.1", server.port, kind, connections=3 * FAST.max_connections, tls=tls, drip=0.2) as attack:
        wait_until(lambda: attack.opened + attack.refused >= 2 * FAST.max_connections, timeout=60,
                   what="the attack's connections")
        # as the kubelet probes: a connection evicted before its request was read (a loaded
        # machine can leave it unread while the attack's connections churn) fails one attempt only
        probes = [probe_as_kubelet(_url(server, scheme), _context(scheme)) for _ in range(10)]
    assert all(attempts[-1].status == 200 for attempts in probes), probes
    assert max(attempts[-1].seconds for attempts in probes) < PROBE_BOUND, probes
    assert server.evicted > 0 or attack.refused > 0  # the cap held: stalled ones were closed


def test_header_bytes_are_bounded_across_connections(certificate: tuple[str, str]) -> None:
    limits = ServingLimits(header_timeout=30, max_connections=64, reserve=8, max_buffered_bytes=2 << 20)
    server = MetricsServer("127.0.0.1:0", CollectorRegistry(), limits=limits).start()
    try:
        # 13 headers of 65,000 bytes: under the 1 MB of one request, 11 MB across twelve connections.
        with Attack("127.0.0.1", server.port, "header-stuffing", connections=12, headers=13) as attack:
            wait_until(lambda: server.evicted >= 4, timeout=60, what="connections closed over the byte bound")
            assert server.connections.buffered <= limits.max_buffered_bytes
            assert probe(_url(server, "http")).status == 200
        assert attack.refused > 0
    finally:
        server.stop()


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_memory_stays_bounded_under_header_stuffing_in_a_child_under_an_rlimit(
    scheme: str, certificate: tuple[str, str]
) -> None:
    """120 connections of 99 headers of 65 KB, then a stall (what held 805 MB and peaked at 3.87 GB
    before): the server, with its default limits, in a child whose address space is capped at
    1 GiB, keeps answering probes and peaks at under 150 MB."""
    with metrics_server_child(certificate if scheme == "https" else None) as child:
        tls = _client_context() if scheme == "https" else None
        with Attack("127.0.0.1", child.port, "header-stuffing", connections=120, tls=tls) as attack:
            wait_until(lambda: attack.opened + attack.refused >= 120, timeout=120, what="120 connections")
            time.sleep(2)  # let it read what it will
            answers = [probe(f"{scheme}://127.0.0.1:{child.port}/healthz", tls) for _ in range(5)]
        assert all(a.status == 200 for a in answers), answers
        peak = peak_rss(child.pid)
    assert child.evicted >= 0, "the server died"
    assert peak < 150 << 20, f"peak RSS {peak >> 20} MiB"
