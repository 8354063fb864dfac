"""The metrics and health endpoint served on `--listen`: /metrics, /healthz, /readyz.

Metric values are computed at scrape time by collectors registered on the process's registry
(the prometheus client's Collector protocol), so they always reflect the controllers' caches.
TLS settings are in `cvo_py.runtime.serving.tls`, certificate reload and client-CA authorization in
`cvo_py.runtime.serving.certificates`, the serving flags in `cvo_py.runtime.serving.options`.

Anyone who can reach the port can connect (the probes and the TLS handshake need no credentials),
so what a connection may hold is bounded (`ServingLimits`), as Go's `net/http` server bounds it
and more: the request line and headers at most 1 MB (Go's `DefaultMaxHeaderBytes`) and 1,000
lines, else `431 Request Header Fields Too Large`; the TLS handshake and the headers within 10 s
of connecting, a kept-alive connection's next request within 90 s, a response written within 10 s,
else the connection is closed; at most 128 connections, of which those still waiting for their
request (handshaking, sending headers, idle) may take all but 16: the reserve, so a probe that
connects while others stall gets in, and the longest-waiting stalled connection makes room.
Header bytes held across all connections are bounded too (8 MB): past it the connection holding
the most is closed. Connections cost no thread: one event loop on its own thread reads them all;
/metrics is rendered on a small thread pool, so a slow scrape never delays a probe.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import email.utils
import logging
import re
import resource
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from cvo_py.runtime import klog
from cvo_py.runtime.errors import ServerError
from cvo_py.runtime.serving.certificates import ServingContext, authorize_scraper
from cvo_py.runtime.serving.options import parse_listen
from cvo_py.runtime.serving.stream import Stream, TLSStream
from cvo_py.runtime.serving.tls import TLSOptions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServingLimits:
    """What one client, or all of them together, may make the server hold (see the module docstring)."""

    max_header_bytes: int = 1 << 20  # request line and headers, as Go's http.DefaultMaxHeaderBytes
    max_header_lines: int = 1000
    header_timeout: float = 10.0  # from connecting (TLS handshake included) to the end of the headers
    idle_timeout: float = 90.0  # a kept-alive connection until its next request starts (scrapes: 30 s apart)
    write_timeout: float = 10.0
    max_connections: int = 128
    reserve: int = 16  # connections only ever open to newcomers: stalled ones make room beyond the rest
    max_buffered_bytes: int = 8 << 20  # unparsed header bytes across all connections
    read_chunk: int = 1 << 16


DEFAULT_LIMITS = ServingLimits()
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}
# A blank line ends the headers (CRLF, or LF as Go also takes it). Starting with the literal `\n`
# lets the regex engine skip to each newline: a leading `\r?` makes it try every byte, 25× slower.
_END_OF_HEADERS = re.compile(rb"\n\r?\n")
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


class _Evicted(ServerError):
    """This connection was closed to keep the bounds (raised in its own task)."""


class _Refused(ServerError):
    """A request answered with an error and the connection closed (400, 431)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass(eq=False)
class _Connection:
    """One client connection, as the admission and eviction rules see it."""

    stream: Stream
    task: asyncio.Task[Any] | None
    waiting_since: float  # when it started waiting for its next request (or its handshake)
    busy: bool = False  # a whole request read: answering it
    buffered: int = 0  # header bytes held for it

    def close(self) -> None:
        """Abort the connection and end its task (from another connection's task or the server's)."""
        self.stream.abort()
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()


@dataclass(frozen=True)
class _Request:
    method: bytes
    path: str
    keep_alive: bool


class MetricsServer:
    """A small HTTP(S) server on its own event-loop thread; `ready` decides /readyz.

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
        limits: ServingLimits = DEFAULT_LIMITS,
    ) -> None:
        """HTTPS with `serving`, or with `cert_file` (and `tls` settings, else OpenSSL's); else HTTP.
        Binds now: an address that cannot be listened on is a ServerError (one line naming it), a
        `listen` that is not HOST:PORT a ListenAddressError."""
        host, port = parse_listen(listen)
        if serving is None and cert_file:
            serving = ServingContext(cert_file, key_file, tls)
        self.registry = registry
        self.ready = ready
        self.serving = serving
        self.limits = _fit_to_descriptors(limits)
        self._socket = _bind(listen, host, port)
        self._connections: dict[int, _Connection] = {}
        self._buffered = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._renderer = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="metrics-render")
        self._thread = threading.Thread(target=self._run, name="metrics", daemon=True)
        self._started = threading.Event()
        self.evicted = 0  # connections closed to make room or to stay within the header-byte bound

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    def start(self) -> MetricsServer:
        self._thread.start()
        self._started.wait(30)
        scheme = "https" if self.serving is not None else "http"
        log.info("Serving metrics and health on %s://%s:%d", scheme, self._socket.getsockname()[0], self.port)
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=30)
            self._thread.join(timeout=30)
        else:
            self._socket.close()
        self._renderer.shutdown(wait=True, cancel_futures=True)
        if not self._loop.is_closed() and not self._loop.is_running():
            self._loop.close()

    # -- the loop ------------------------------------------------------------------------------

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._listen())
            self._started.set()
            self._loop.run_forever()
        finally:
            self._started.set()
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._serve, sock=self._socket, limit=self.limits.read_chunk, backlog=self.limits.max_connections
        )

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections.values()):
            connection.close()
        tasks = [c.task for c in self._connections.values() if c.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=10)
        if self._server is not None:
            await self._server.wait_closed()
        self._loop.call_soon(self._loop.stop)

    # -- admission and eviction ------------------------------------------------------------------

    def _admit(self, connection: _Connection) -> bool:
        """Room for a new connection: stalled ones beyond all but the reserve make room, oldest first."""
        waiting = sorted((c for c in self._connections.values() if not c.busy), key=lambda c: c.waiting_since)
        room = self.limits.max_connections - self.limits.reserve
        for stalled in waiting[: max(0, len(waiting) - room + 1)]:
            self._evict(stalled, "to make room for a new connection")
        if len(self._connections) >= self.limits.max_connections:
            return False  # every one busy answering: refuse rather than grow
        self._connections[id(connection)] = connection
        return True

    def _evict(self, connection: _Connection, why: str) -> None:
        self.evicted += 1
        klog.v(4).info("Closing a metrics connection that has not sent its request %s", why)
        self._forget(connection)
        connection.close()

    def _forget(self, connection: _Connection) -> None:
        if self._connections.pop(id(connection), None) is not None:
            self._buffered -= connection.buffered
            connection.buffered = 0

    def _hold(self, connection: _Connection, size: int) -> None:
        """Account `size` header bytes held for `connection`; past the bound for all connections,
        the one holding the most is closed (perhaps this one)."""
        if id(connection) not in self._connections:
            raise _Evicted  # closed meanwhile: holds nothing any more
        self._buffered += size - connection.buffered
        connection.buffered = size
        while self._buffered > self.limits.max_buffered_bytes:
            largest = max(
                (c for c in self._connections.values() if not c.busy), key=lambda c: c.buffered, default=None
            )
            if largest is None or largest.buffered == 0:
                return
            self._evict(largest, "to keep the header bytes of all connections bounded")
            if largest is connection:
                raise _Evicted

    # -- one connection --------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        stream = Stream(reader, writer)
        connection = _Connection(stream, asyncio.current_task(), time.monotonic())
        if not self._admit(connection):
            stream.abort()
            return
        # The handshake and the first request's headers are due within the header timeout.
        deadline: float | None = loop.time() + self.limits.header_timeout
        try:
            if self.serving is not None:
                try:
                    async with asyncio.timeout_at(deadline):
                        stream = await TLSStream.accept(reader, writer, self.serving.current())
                except (OSError, TimeoutError) as exc:  # ssl.SSLError included
                    peer = writer.get_extra_info("peername") or ("?",)
                    klog.v(4).info("TLS handshake with %s failed: %s", peer[0], exc or type(exc).__name__)
                    return
            leftover = b""
            while True:
                connection.busy = False
                connection.waiting_since = time.monotonic()
                try:
                    request, leftover = await self._read_request(stream, connection, leftover, deadline)
                except _Refused as refused:
                    await self._answer(stream, refused.code, _error_body(refused.code), "text/plain",
                                       keep_alive=False, head=False)
                    return
                if request is None:
                    return
                connection.busy = True
                self._hold(connection, 0)
                if not await self._respond(request, stream):
                    return
                deadline = None  # a kept-alive connection's next request may wait for the idle timeout
        except (OSError, TimeoutError, ssl.SSLError, _Evicted):
            return
        except asyncio.CancelledError:
            if id(connection) in self._connections:
                raise  # the server stops
            return  # evicted: the loop carries on
        finally:
            self._forget(connection)
            stream.abort()

    async def _read_request(
        self, stream: Stream, connection: _Connection, leftover: bytes, deadline: float | None
    ) -> tuple[_Request | None, bytes]:
        """The next request's line and headers (None at the end of the connection, or when they
        do not come in time) and what followed them; `_Refused` for a request that breaks the
        bounds or HTTP/1.1's syntax. `deadline` bounds the whole request (a new connection's
        first); without it the first byte may take the idle timeout, the rest the header timeout."""
        limits = self.limits
        loop = asyncio.get_running_loop()
        buffer = bytearray(leftover)
        try:
            if not buffer:
                async with asyncio.timeout_at(deadline if deadline is not None else loop.time() + limits.idle_timeout):
                    chunk = await stream.read(limits.read_chunk)
                if not chunk:
                    return None, b""
                buffer += chunk
            if deadline is None:
                deadline = loop.time() + limits.header_timeout
            async with asyncio.timeout_at(deadline):
                searched = 0
                while (end := _END_OF_HEADERS.search(buffer, max(0, searched - 3))) is None:
                    if len(buffer) > limits.max_header_bytes:
                        raise _Refused(431)
                    searched = len(buffer)
                    self._hold(connection, len(buffer))
                    chunk = await stream.read(limits.read_chunk)
                    if not chunk:
                        return None, b""
                    buffer += chunk
        except TimeoutError:
            klog.v(4).info("Closing a metrics connection that sent no complete request in time")
            return None, b""
        if end.start() > limits.max_header_bytes:
            raise _Refused(431)
        head, rest = bytes(buffer[: end.start()]), bytes(buffer[end.end() :])
        return _parse(head, limits.max_header_lines), rest

    async def _respond(self, request: _Request, stream: Stream) -> bool:
        """Answer one request; whether the connection may be kept for another."""
        if request.method not in (b"GET", b"HEAD"):
            await self._answer(stream, 405, b"method not allowed", "text/plain", keep_alive=False,
                               head=False, extra=(("Allow", "GET, HEAD"),))
            return False
        extra: tuple[tuple[str, str], ...] = ()
        if request.path == "/metrics":
            denied = self._deny_scraper(stream)
            if denied is not None:
                code, message = denied
                body, ctype = f"{message}\n".encode(), "text/plain; charset=utf-8"
                extra = (("X-Content-Type-Options", "nosniff"),)
            else:
                loop = asyncio.get_running_loop()
                body = await loop.run_in_executor(self._renderer, generate_latest, self.registry)
                ctype, code = CONTENT_TYPE_LATEST, 200
        elif request.path in ("/healthz", "/livez"):
            body, ctype, code = b"ok", "text/plain", 200
        elif request.path == "/readyz":
            ok = self.ready()
            body, ctype, code = (b"ok" if ok else b"not ready"), "text/plain", (200 if ok else 503)
        else:
            body, ctype, code = b"not found", "text/plain", 404
        await self._answer(stream, code, body, ctype, keep_alive=request.keep_alive,
                           head=request.method == b"HEAD", extra=extra)
        return request.keep_alive

    async def _answer(
        self,
        stream: Stream,
        code: int,
        body: bytes,
        ctype: str,
        *,
        keep_alive: bool,
        head: bool,
        extra: tuple[tuple[str, str], ...] = (),
    ) -> None:
        lines = [
            f"HTTP/1.1 {code} {_REASONS.get(code, '')}",
            f"Content-Type: {ctype}",
            f"Content-Length: {len(body)}",
            f"Date: {email.utils.formatdate(usegmt=True)}",
            *(f"{name}: {value}" for name, value in extra),
        ]
        if not keep_alive:
            lines.append("Connection: close")
        stream.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head else body))
        async with asyncio.timeout(self.limits.write_timeout):
            await stream.drain()
            if not keep_alive:
                await stream.close()

    def _deny_scraper(self, stream: Stream) -> tuple[int, str] | None:
        if self.serving is None or not self.serving.client_auth:
            return None
        denied = authorize_scraper(stream.peercert(), self.serving.client_ca_loaded)
        if denied is not None:
            klog.v(2).info("Refused a metrics scrape: %d %s", *denied)
        return denied


def _parse(head: bytes, max_lines: int) -> _Request:
    """A request line and its headers (without the blank line) → _Request; _Refused when malformed."""
    lines = head.split(b"\n")
    if len(lines) - 1 > max_lines:
        raise _Refused(431)
    parts = lines[0].rstrip(b"\r").split(b" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise _Refused(400)
    method, target, version = parts
    connection = b""
    body = False
    for raw in lines[1:]:
        line = raw.rstrip(b"\r")
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.fullmatch(name):  # also a folded line (leading space), as Go refuses
            raise _Refused(400)
        lowered = name.lower()
        if lowered == b"connection":
            connection += b"," + value.strip().lower()
        elif lowered == b"transfer-encoding" or (lowered == b"content-length" and value.strip() != b"0"):
            body = True  # never read: answered, then the connection is closed
    tokens = {t.strip() for t in connection.split(b",")}
    keep_alive = (b"close" not in tokens) if version == b"HTTP/1.1" else (b"keep-alive" in tokens)
    path = target.split(b"?", 1)[0].decode("latin-1")
    return _Request(method, path, keep_alive and not body)


def _error_body(code: int) -> bytes:
    return f"{code} {_REASONS.get(code, '')}".encode()


def _bind(listen: str, host: str, port: int) -> socket.socket:
    """The listening socket (IPv4 or IPv6, as the host resolves), bound now."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ServerError(f"cannot listen on {listen}: {exc.strerror or exc}") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise ServerError(f"cannot listen on {listen}: {exc.strerror or exc}") from exc
    return sock


def _fit_to_descriptors(limits: ServingLimits) -> ServingLimits:
    """At most a quarter of the process's file descriptors go to metrics connections: the
    informers, the API client and the files it reads keep the rest."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft // 4 >= limits.max_connections:
        return limits
    most = max(8, soft // 4)
    return dataclasses.replace(limits, max_connections=most, reserve=min(limits.reserve, max(2, most // 8)))
