"""The metrics server's HTTP/1.1 request reader, `cvo_py.runtime.serving.http1` (hand-written),
beside one built on h11 (a sans-I/O HTTP/1.1 parser), on the same inputs:

- verdicts: what each answers to the well-formed and malformed requests of the serving tests and
  of testkit/corpus/clients.py's attacks (ok, 400, 431), and, with Go installed, what Go's own
  net/http server answers to the same bytes (testkit/oracles/gohttpserver/main.go);
- parse: CPU time per request and the peak of Python allocations (tracemalloc) while reading it,
  for a probe's request, 1,000 header lines, 1 MB of headers, the same 1 MB dripped in 1 KB reads
  (what a slow client makes the server re-scan), and an over-long head (431);
- endpoints: the server in a child process (default bounds, 1 GiB address space), once with each
  reader, under testkit/corpus/clients.py's attacks (120 idle, slow-loris, header-stuffing
  connections, and all three at once), with a /healthz probe every quarter second: probe latency
  p50/p99/max, failed probes, connections evicted, the child's peak RSS.

h11 is not a dependency of cvo-py: install it to compare (`.venv/bin/pip install h11==0.16.0`);
without it only the hand-written reader is measured.

    .venv/bin/python bench/http_parsers.py [--sections verdicts,parse,endpoints] [--attack-seconds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cvo_py.runtime.serving import http1
from cvo_py.runtime.serving.admission import DEFAULT_LIMITS, ServingLimits
from cvo_py.runtime.serving.http1 import Refused, Request
from cvo_py.runtime.serving.stream import Stream
from testkit.corpus.clients import attacking, probe_for, stuffed_headers
from testkit.corpus.files import peak_rss
from testkit.harness.certs import self_signed
from testkit.oracles import goprogram

SECTIONS = ("verdicts", "parse", "endpoints")
Reader = Callable[[Stream, ServingLimits, Callable[[int], None], bytes, "float | None"],
                  Awaitable[tuple["Request | None", bytes]]]


# -- the h11 reader ------------------------------------------------------------------------------------


async def h11_read_request(
    stream: Stream, limits: ServingLimits, hold: Callable[[int], None], leftover: bytes, deadline: float | None
) -> tuple[Request | None, bytes]:
    """`http1.read_request`'s contract, with h11 parsing: the same timeouts, byte accounting and
    bounds (h11's `max_incomplete_event_size` is the header-byte bound; the line count is checked
    on the parsed request), the same verdicts where h11 refuses (its status hint: 400 or 431)."""
    import h11

    loop = asyncio.get_running_loop()
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_header_bytes)
    try:
        if not leftover:
            async with asyncio.timeout_at(deadline if deadline is not None else loop.time() + limits.idle_timeout):
                chunk = await stream.read(limits.read_chunk)
            if not chunk:
                return None, b""
            leftover = chunk
        conn.receive_data(leftover)
        held = len(leftover)
        if deadline is None:
            deadline = loop.time() + limits.header_timeout
        async with asyncio.timeout_at(deadline):
            while True:
                try:
                    event = conn.next_event()
                except h11.RemoteProtocolError as exc:
                    raise Refused(431 if exc.error_status_hint == 431 else 400) from None
                if event is not h11.NEED_DATA:
                    break
                hold(held)
                chunk = await stream.read(limits.read_chunk)
                if not chunk:
                    return None, b""
                conn.receive_data(chunk)
                held += len(chunk)
    except TimeoutError:
        return None, b""
    if not isinstance(event, h11.Request):
        raise Refused(400)
    if len(event.headers) > limits.max_header_lines:
        raise Refused(431)
    connection: set[bytes] = set()
    body = False
    for name, value in event.headers:
        if name == b"connection":
            connection |= {t.strip() for t in value.lower().split(b",")}
        elif name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            body = True
    keep_alive = (b"close" not in connection) if event.http_version == b"1.1" else (b"keep-alive" in connection)
    rest = b"" if body else bytes(conn.trailing_data[0])
    path = event.target.split(b"?", 1)[0].decode("latin-1")
    return Request(event.method, path, keep_alive and not body), rest


def have_h11() -> bool:
    try:
        import h11  # noqa: F401
    except ImportError:
        return False
    return True


READERS: dict[str, Reader] = {"hand": http1.read_request, "h11": h11_read_request}


# -- inputs ---------------------------------------------------------------------------------------------

PROBE = b"GET /healthz HTTP/1.1\r\nHost: 10.0.0.1:9099\r\nUser-Agent: kube-probe/1.31\r\nAccept: */*\r\n\r\n"
# (name, the bytes a client sends): the serving tests' requests and the attacks' heads, completed.
CASES: list[tuple[str, bytes]] = [
    ("probe", PROBE),
    ("HTTP/1.0, no Host", b"GET /healthz HTTP/1.0\r\n\r\n"),
    ("HTTP/1.1, no Host", b"GET /healthz HTTP/1.1\r\n\r\n"),
    ("LF line ends", b"GET /healthz HTTP/1.1\nHost: x\n\n"),
    ("1,000 header lines", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"a: b\r\n" * 999 + b"\r\n"),
    ("1,001 header lines", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"a: b\r\n" * 1000 + b"\r\n"),
    ("16 headers of 60 KB (960 KB)", stuffed_headers(count=16, size=60_000) + b"\r\n"),
    ("20 headers of 60 KB (1.2 MB)", stuffed_headers(count=20, size=60_000) + b"\r\n"),
    ("garbage", b"GARBAGE\r\n\r\n"),
    ("HTTP/9.9", b"GET /healthz HTTP/9.9\r\n\r\n"),
    ("folded line", b"GET /healthz HTTP/1.1\r\n folded: x\r\n\r\n"),
    ("no colon", b"GET /healthz HTTP/1.1\r\nno colon\r\n\r\n"),
    ("ESC in the method", b"G\x1bT /healthz HTTP/1.1\r\n\r\n"),
    ("space before the colon", b"GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n"),
    ("control byte in a value", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n"),
    ("two Host headers", b"GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"),
    ("Content-Length: 5", b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
    ("bad Content-Length", b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n"),
    ("POST, no Host", b"POST / HTTP/1.1\r\n\r\n"),
    ("POST", b"POST / HTTP/1.1\r\nHost: x\r\n\r\n"),
]


class Chunks(Stream):
    """A connection that delivers `data` in reads of `size` bytes."""

    def __init__(self, data: bytes, size: int) -> None:
        self._data = data
        self._size = size
        self._at = 0

    async def read(self, size: int) -> bytes:
        piece = self._data[self._at : self._at + min(size, self._size)]
        self._at += len(piece)
        return piece


async def verdict(reader: Reader, data: bytes, size: int = 1 << 16) -> str:
    try:
        request, _ = await reader(Chunks(data, size), DEFAULT_LIMITS, lambda _n: None, b"", None)
    except Refused as refused:
        return str(refused.code)
    return "end" if request is None else f"ok{'' if request.keep_alive else ' (close)'}"


# -- Go's net/http on the same bytes -------------------------------------------------------------------

GO_SERVER = Path(goprogram.__file__).parent / "gohttpserver" / "main.go"


@contextmanager
def go_server() -> Iterator[int | None]:
    """Go's net/http serving /healthz on a free port (None without Go)."""
    with tempfile.TemporaryDirectory() as work:
        try:
            binary = goprogram.compile_program(GO_SERVER, Path(work))
        except goprogram.GoMissing:
            yield None
            return
        child = subprocess.Popen([str(binary)], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        try:
            yield int(child.stdout.readline())
        finally:
            child.kill()
            child.wait()
            child.stdout.close()


def go_verdict(port: int, data: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass
        answer = b""
        try:
            while len(answer) < 64 and (chunk := sock.recv(4096)):
                answer += chunk
        except OSError:
            pass
    status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/1.") else "closed"
    return "ok" if status == "200" else status


def verdicts() -> None:
    names = [n for n in READERS if n == "hand" or have_h11()]
    print("\n== verdicts (ok: answered; 400, 431: refused)")
    with go_server() as port:
        heads = [*names, *(["Go net/http"] if port else [])]  # Go: its status (404: answered, no such page)
        print(f"{'request':<32}" + "".join(f"{h:>16}" for h in heads))
        for name, data in CASES:
            row = [asyncio.run(verdict(READERS[r], data)) for r in names]
            if port:
                row.append(go_verdict(port, data))
            print(f"{name:<32}" + "".join(f"{v:>16}" for v in row))


# -- parse cost -----------------------------------------------------------------------------------------

PARSE_CASES: list[tuple[str, bytes, int]] = [
    ("probe", PROBE, 1 << 16),
    ("1,000 header lines", CASES[4][1], 1 << 16),
    ("960 KB of headers", CASES[6][1], 1 << 16),
    ("960 KB of headers, 1 KB reads", CASES[6][1], 1 << 10),
    ("1.2 MB of headers (431)", CASES[7][1], 1 << 16),
]


async def cost(reader: Reader, data: bytes, size: int, repeat: int) -> tuple[float, int]:
    """(median CPU seconds of one read, peak traced bytes of one read)."""
    times = []
    for _ in range(repeat):
        stream = Chunks(data, size)
        start = time.process_time()
        try:
            await reader(stream, DEFAULT_LIMITS, lambda _n: None, b"", None)
        except Refused:
            pass
        times.append(time.process_time() - start)
    tracemalloc.start()
    try:
        await reader(Chunks(data, size), DEFAULT_LIMITS, lambda _n: None, b"", None)
    except Refused:
        pass
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(times), peak


def parse() -> None:
    names = [n for n in READERS if n == "hand" or have_h11()]
    print("\n== parse: CPU per request (median) and peak Python allocations while reading it")
    print(f"{'request':<32}" + "".join(f"{n + ' time':>14}{n + ' peak':>14}" for n in names))
    for name, data, size in PARSE_CASES:
        repeat = 2000 if len(data) < 1 << 12 else 200 if size >= 1 << 16 else 20
        cells = []
        for reader in names:
            seconds, peak = asyncio.run(cost(READERS[reader], data, size, repeat))
            unit = f"{seconds * 1e6:.0f} µs" if seconds < 1e-2 else f"{seconds * 1e3:.1f} ms"
            cells.append(f"{unit:>14}{peak / 1024:>11.0f} KB")
        print(f"{name:<32}" + "".join(cells))


# -- endpoints under attack ----------------------------------------------------------------------------

def serve_child(cert: str, key: str, reader: str) -> None:
    """The child's side of `server_child` (this file run with `--serve-child`): both readers'
    children load the same modules, so their RSS compares."""
    from prometheus_client import CollectorRegistry

    from cvo_py.runtime.serving import server as served
    from cvo_py.runtime.serving.certificates import ServingContext

    if reader == "h11":
        import h11  # noqa: F401  (loaded before serving, as the other reader's modules are)

        setattr(served, "read_request", h11_read_request)  # noqa: B010  (the server's one reader)
    serving = ServingContext(cert, key, client_auth=True) if cert else None
    server = served.MetricsServer("127.0.0.1:0", CollectorRegistry(), serving=serving).start()
    print(server.port, flush=True)
    sys.stdin.read()
    print(server.evicted, flush=True)


@contextmanager
def server_child(certificate: tuple[str, str] | None, reader: str) -> Iterator[tuple[int, int, list[int]]]:
    """(port, pid, [evicted, set at the end]) of the metrics server in a child under a 1 GiB
    address space, reading requests with `reader`."""
    import resource

    cert, key = certificate or ("", "")
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve-child", cert, key, reader],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)),
    )
    assert child.stdin is not None and child.stdout is not None
    evicted = [-1]
    try:
        yield int(child.stdout.readline()), child.pid, evicted
        child.stdin.close()
        evicted[0] = int(child.stdout.readline() or -1)
    finally:
        if not child.stdin.closed:
            child.stdin.close()
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        child.stdout.close()


def endpoints(certificate: tuple[str, str], seconds: float) -> None:
    names = [n for n in READERS if n == "hand" or have_h11()]
    print(f"\n== endpoints: 120 connections per kind, /healthz every 0.25 s for {seconds:g} s")
    insecure = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    for scheme in ("http", "https"):
        for kinds in (("idle",), ("slow-loris",), ("header-stuffing",), ("idle", "slow-loris", "header-stuffing")):
            for reader in names:  # the readers' runs interleaved: both meet the same machine
                tls = insecure if scheme == "https" else None
                with server_child(certificate if scheme == "https" else None, reader) as (port, pid, evicted):
                    with attacking(port, [(k, 120) for k in kinds], tls=tls is not None) as refused:
                        probes = probe_for(f"{scheme}://127.0.0.1:{port}/healthz", seconds, tls)
                    rss = peak_rss(pid)
                latencies = sorted(p.seconds for p in probes)
                failed = sum(p.status != 200 for p in probes)
                p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
                print(f"{scheme:<6}{'+'.join(kinds):<32}{reader:<6}{len(probes):>4} probes, {failed} failed, "
                      f"p50 {statistics.median(latencies) * 1000:.0f} ms p99 {p99 * 1000:.0f} ms "
                      f"max {latencies[-1] * 1000:.0f} ms; evicted {evicted[0]}, refused {refused}; "
                      f"peak RSS {rss >> 20} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated: {', '.join(SECTIONS)}")
    parser.add_argument("--attack-seconds", type=float, default=8.0, help="how long to probe under each attack")
    args = parser.parse_args()
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    load = os.getloadavg()
    print(f"load: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (1, 5, 15 min); h11: "
          + (__import__("h11").__version__ if have_h11() else "not installed (pip install h11==0.16.0 to compare)"))
    if "verdicts" in chosen:
        verdicts()
    if "parse" in chosen:
        parse()
    if "endpoints" in chosen:
        with tempfile.TemporaryDirectory() as pki:
            endpoints(self_signed(Path(pki)), args.attack_seconds)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve-child"]:
        serve_child(*sys.argv[2:5])
        sys.exit(0)
    sys.exit(main())

