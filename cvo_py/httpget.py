"""One bounded HTTP GET for the clients of other services (the update service, Prometheus/Thanos).

`get()` returns the status, reason and body of a GET, or raises `GetError`. What bounds it: the
whole request — connecting, the headers, the body — ends by `total_timeout` seconds, however
slowly a server drips its answer (a watchdog shuts the request's sockets at the deadline: a
per-read timeout alone lets a server that sends a byte now and then hold a caller for ever); the
body is at most `max_bytes`; at most `redirects` redirects are followed (as Go's client does, 10).
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    SSLError,
)

CONNECT_TIMEOUT = 10.0


class GetError(Exception):
    """A GET that did not produce an answer: `phase` is "request" (no answer: connecting, TLS,
    the headers) or "body" (the answer's body could not be read); str() is one line in the shape
    Go's client gives (`dial tcp 127.0.0.1:9: connect: connection refused`, `context deadline
    exceeded …`)."""

    def __init__(self, phase: str, message: str) -> None:
        super().__init__(message)
        self.phase = phase


class BodyTooLarge(GetError):
    pass


@dataclass(frozen=True)
class Answer:
    status: int
    reason: str
    body: bytes


class _Watchdog:
    """Records the request's sockets; at the deadline, shuts them (and any opened after)."""

    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.name = "http-deadline"
        self._timer.daemon = True

    def watch(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._timer.cancel()
        self._timer.join()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _manager(
    watchdog: _Watchdog, context: ssl.SSLContext, proxy: str, dial: tuple[str, int, str] | None
) -> urllib3.PoolManager:
    """`dial` = (host, port, address): connections to host:port go to address:port instead, with
    the TLS server name and the Host header still naming host (a Service reached by its IP)."""

    def new_conn(conn: HTTPConnection, make: Callable[[], socket.socket]) -> socket.socket:
        if dial is None or (conn.host, conn.port) != dial[:2]:
            return make()
        named = conn.host
        conn.host = dial[2]  # what the socket connects to; restored before TLS names the server
        try:
            return make()
        finally:
            conn.host = named

    class WatchedHTTP(HTTPConnection):
        def _new_conn(self) -> socket.socket:
            return new_conn(self, super()._new_conn)

        def connect(self) -> None:
            super().connect()
            watchdog.watch(self.sock)

    class WatchedHTTPS(HTTPSConnection):
        def _new_conn(self) -> socket.socket:
            return new_conn(self, super()._new_conn)

        def connect(self) -> None:
            super().connect()
            watchdog.watch(self.sock)

    class HTTPPool(urllib3.HTTPConnectionPool):
        ConnectionCls = WatchedHTTP

    class HTTPSPool(urllib3.HTTPSConnectionPool):
        ConnectionCls = WatchedHTTPS

    manager: urllib3.PoolManager = (
        urllib3.ProxyManager(proxy, ssl_context=context) if proxy else urllib3.PoolManager(ssl_context=context)
    )
    manager.pool_classes_by_scheme = {"http": HTTPPool, "https": HTTPSPool}
    return manager


def cause(exc: BaseException, url: str, connect_host: str = "") -> str:
    """A transport failure as Go's client words its cause, on one line."""
    reason = exc.reason if isinstance(exc, MaxRetryError) and exc.reason is not None else exc
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = f"{connect_host or parts.hostname}:{port}"
    if isinstance(reason, NameResolutionError):
        return f"dial tcp: lookup {parts.hostname}: no such host"
    if isinstance(reason, NewConnectionError):  # before ConnectTimeoutError, its base class
        text = str(reason)
        if "refused" in text.lower():
            return f"dial tcp {target}: connect: connection refused"
        return f"dial tcp {target}: {text.rsplit(': ', 1)[-1]}"
    if isinstance(reason, ConnectTimeoutError):
        return f"dial tcp {target}: i/o timeout"
    if isinstance(reason, SSLError):
        text = str(reason)
        if "CERTIFICATE_VERIFY_FAILED" in text:
            return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        return f"tls: {text.rsplit('] ', 1)[-1].rstrip(')')}"
    if isinstance(reason, ProxyError):
        return f"proxyconnect tcp: {' '.join(str(reason).split())}"
    if isinstance(reason, ReadTimeoutError | TimeoutError | socket.timeout):
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    text = " ".join(str(reason).split())
    return text or type(reason).__name__


def get(
    url: str,
    *,
    headers: Mapping[str, str],
    context: ssl.SSLContext | None = None,
    proxy: str = "",
    total_timeout: float,
    max_bytes: int,
    redirects: int = 10,
    connect_host: str = "",
) -> Answer:
    """`connect_host`: the address to connect to instead of the URL's host (e.g. a Service's
    cluster IP); the certificate must still name the URL's host."""
    deadline = time.monotonic() + total_timeout
    context = context or ssl.create_default_context()
    connect = min(CONNECT_TIMEOUT, total_timeout)
    parts = urlsplit(url)
    dial = None
    if connect_host and parts.hostname:
        dial = (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80), connect_host)
    with _Watchdog(total_timeout) as watchdog:
        manager = _manager(watchdog, context, proxy, dial)
        try:
            try:
                response: Any = manager.request(
                    "GET", url, headers=dict(headers), preload_content=False, redirect=True,
                    retries=urllib3.Retry(total=None, connect=0, read=0, status=0, other=0, redirect=redirects),
                    timeout=urllib3.Timeout(connect=connect, read=total_timeout),
                )
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                if watchdog.expired:
                    raise _headers_deadline() from None
                raise GetError("request", cause(exc, url, connect_host)) from None
            if watchdog.expired:  # the headers "ended" only because the deadline shut the socket
                response.release_conn()
                raise _headers_deadline()
            try:
                declared = response.headers.get("Content-Length")
                if declared and declared.isdigit() and int(declared) > max_bytes:
                    raise BodyTooLarge("body", f"response body of {declared} bytes is larger than the {max_bytes} "
                                               "bytes accepted")
                chunks: list[bytes] = []
                size = 0
                while True:
                    chunk = response.read1(65536)
                    if not chunk:
                        break
                    size += len(chunk)
                    if size > max_bytes:
                        raise BodyTooLarge("body", f"response body larger than the {max_bytes} bytes accepted")
                    chunks.append(chunk)
                if watchdog.expired or time.monotonic() > deadline:
                    raise _body_deadline(total_timeout)
                return Answer(response.status, response.reason or "", b"".join(chunks))
            except (ReadTimeoutError, ProtocolError, OSError, urllib3.exceptions.HTTPError) as exc:
                if watchdog.expired:
                    raise _body_deadline(total_timeout) from None
                raise GetError("body", f"reading the response body: {cause(exc, url, connect_host)}") from None
            finally:
                response.release_conn()
        finally:
            manager.clear()


def _headers_deadline() -> GetError:
    return GetError("request", "context deadline exceeded (Client.Timeout exceeded while awaiting headers)")


def _body_deadline(total_timeout: float) -> GetError:
    return GetError("body", "context deadline exceeded (Client.Timeout or context cancellation while reading body) "
                            f"after {total_timeout:g}s")
