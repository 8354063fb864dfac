"""The metrics and health endpoint served on `--listen`: /metrics, /healthz, /readyz.

Metric values are computed at scrape time by collectors registered on the process's registry
(the prometheus client's Collector protocol), so they always reflect the controllers' caches.
TLS settings are in `cvo_py.runtime.serving.tls`, certificate reload and client-CA authorization in
`cvo_py.runtime.serving.certificates`, the serving flags in `cvo_py.runtime.serving.options`; which
connections are held is `cvo_py.runtime.serving.admission`'s, how a request is read and answered
`cvo_py.runtime.serving.http1`'s.

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
import logging
import resource
import socket
import ssl
import threading
import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from cvo_py.runtime import klog
from cvo_py.runtime.errors import ServerError
from cvo_py.runtime.serving.admission import DEFAULT_LIMITS, Connection, Connections, Evicted, ServingLimits
from cvo_py.runtime.serving.certificates import ServingContext, authorize_scraper
from cvo_py.runtime.serving.http1 import Refused, Request, error_body, read_request, write_response
from cvo_py.runtime.serving.options import parse_listen
from cvo_py.runtime.serving.stream import Stream, TLSStream
from cvo_py.runtime.serving.tls import TLSOptions

log = logging.getLogger(__name__)


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
        self.connections = Connections(self.limits)
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._renderer = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="metrics-render")
        self._thread = threading.Thread(target=self._run, name="metrics", daemon=True)
        self._started = threading.Event()

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
        for connection in self.connections.all():
            connection.close()
        tasks = [c.task for c in self.connections.all() if c.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=10)
        if self._server is not None:
            await self._server.wait_closed()
        self._loop.call_soon(self._loop.stop)

    # -- one connection --------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        stream = Stream(reader, writer)
        connection = Connection(stream, asyncio.current_task(), time.monotonic())
        if not self.connections.admit(connection):
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
                    request, leftover = await read_request(
                        stream, self.limits, lambda size: self.connections.hold(connection, size), leftover, deadline
                    )
                except Refused as refused:
                    await self._answer(stream, refused.code, error_body(refused.code), "text/plain",
                                       keep_alive=False, head=False)
                    return
                if request is None:
                    return
                connection.busy = True
                self.connections.hold(connection, 0)
                if not await self._respond(request, stream):
                    return
                deadline = None  # a kept-alive connection's next request may wait for the idle timeout
        except (OSError, TimeoutError, ssl.SSLError, Evicted):
            return
        except asyncio.CancelledError:
            # The server stops, or the connection was evicted: either way it ends here. It ends as
            # a task that returned, not one cancelled, because asyncio's client_connected_cb
            # callback (Python 3.11) asks a cancelled task for its exception and logs a traceback.
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            return
        finally:
            self.connections.forget(connection)
            stream.abort()

    async def _respond(self, request: Request, stream: Stream) -> bool:
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
        await write_response(stream, code, body, ctype, keep_alive=keep_alive, head=head,
                             write_timeout=self.limits.write_timeout, extra=extra)

    @property
    def evicted(self) -> int:
        """Connections closed to make room or to stay within the header-byte bound."""
        return self.connections.evicted

    def _deny_scraper(self, stream: Stream) -> tuple[int, str] | None:
        if self.serving is None or not self.serving.client_auth:
            return None
        denied = authorize_scraper(stream.peercert(), self.serving.client_ca_loaded)
        if denied is not None:
            klog.v(2).info("Refused a metrics scrape: %d %s", *denied)
        return denied


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
