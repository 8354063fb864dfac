"""One bounded HTTP GET for the clients of other services (the update service, Prometheus/Thanos,
release signature stores).

`get()` returns the status, reason and body of a GET, or raises `GetError`. What bounds it: the
whole request — connecting, the headers, the body — ends by `total_timeout` seconds, however
slowly a server drips its answer (a watchdog shuts the request's sockets at the deadline: a
per-read timeout alone lets a server that sends a byte now and then hold a caller for ever); the
body is at most `max_bytes`; at most `redirects` redirects are followed (as Go's client does, 10),
each hop checked as a URL first (a Location that does not parse is an error naming it, not a
traceback), sensitive headers dropped when a hop changes host, as Go does. A failure names the hop
that failed and words its cause as Go's client does (`cause`). `environment_proxy` names the
proxy for a hop as Go's ProxyFromEnvironment does (`proxy_for` for explicit settings).

Two HTTP stacks, each for what it does best: the API server is reached through the project's own
HTTP/1.1 transport (`cvo_py.runtime.connections`), because its watches are long-lived streams read
a line at a time on kept-alive connections, where a whole-request deadline would be wrong, and a
short-lived command starts sooner without `http.client`'s import; every other service is reached
here, through urllib3 (already installed with the kubernetes client), which brings proxies and
pooled connections whose sockets the watchdog can shut.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

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

from cvo_py.runtime.connections import go_cause, os_text
from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.gotext.quoting import escape, go_quote
from cvo_py.runtime.urls import http_url_problem, url_problem

CONNECT_TIMEOUT = 10.0


class GetError(ClientError):
    """A GET that did not produce an answer: `phase` is "request" (no answer: connecting, TLS,
    the headers) or "body" (the answer's body could not be read); `url` is the hop that failed
    (a redirect's target, when one was followed); str() is one line in the shape Go's client
    gives (`dial tcp 127.0.0.1:9: connect: connection refused`, `context deadline exceeded …`)."""

    def __init__(self, phase: str, message: str, url: str = "", *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.phase = phase
        self.url = url
        self.timed_out = timed_out  # the deadline (or the connect timeout) ended it, not the server


class BodyTooLarge(GetError):
    """The body passed `max_bytes`; `status` and `reason` are the answer's status line."""

    def __init__(self, message: str, url: str, status: int, reason: str) -> None:
        super().__init__("body", message, url)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Answer:
    status: int
    reason: str  # the status line's reason phrase, escaped (it is shown) and bounded
    body: bytes


MAX_REASON_CHARS = 200


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
    """A transport failure as Go's client words its cause, on one line: never Python's own wording
    (no exception reprs, no `('Connection aborted.', …)`); urllib3's wrappers are looked through
    and the standard library's errors worded by `connections.go_cause`. `connect_host`: the
    address dialled instead of the URL's host, named where Go names the dialled address."""
    reason: BaseException = exc.reason if isinstance(exc, MaxRetryError) and exc.reason is not None else exc
    # urllib3 wraps what http.client raised: ProtocolError("Connection aborted.", <the cause>)
    while isinstance(reason, ProtocolError) and len(reason.args) > 1 and isinstance(reason.args[1], BaseException):
        reason = reason.args[1]
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname or ""
    target = f"{connect_host or host}:{port}"
    if isinstance(reason, NameResolutionError):
        return f"dial tcp: lookup {host}: no such host"
    if isinstance(reason, NewConnectionError):  # before ConnectTimeoutError, its base class
        text = str(reason)
        if "refused" in text.lower():
            return f"dial tcp {target}: connect: connection refused"
        return f"dial tcp {target}: connect: {os_text(text.rsplit(': ', 1)[-1])}"
    if isinstance(reason, ConnectTimeoutError):
        return f"dial tcp {target}: i/o timeout"
    if isinstance(reason, SSLError):
        text = str(reason)
        if "CERTIFICATE_VERIFY_FAILED" in text:
            return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        return f"tls: {os_text(text.rsplit('] ', 1)[-1].rstrip(')'))}"
    if isinstance(reason, ProxyError):
        return f"proxyconnect tcp: {cause(reason.original_error, url) if reason.original_error else 'failed'}"
    if isinstance(reason, ReadTimeoutError | socket.timeout):
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    if isinstance(reason, urllib3.exceptions.IncompleteRead):
        return "unexpected EOF"
    if isinstance(reason, urllib3.exceptions.InvalidChunkLength):
        return "invalid byte in chunk length"
    if isinstance(reason, urllib3.exceptions.LocationParseError | urllib3.exceptions.LocationValueError):
        return f"parse {go_quote(url)}: invalid URL"
    return go_cause(reason, connect_host or host, port)


def proxy_for(url: str, http_proxy: str, https_proxy: str, no_proxy: str) -> str:
    """The proxy for `url` by the proxy rules Go clients follow: the scheme's proxy unless the host
    is loopback or matches noProxy (exact host, domain suffix, IP, CIDR or `*`)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    proxy = https_proxy if parts.scheme == "https" else http_proxy
    if not proxy or host == "localhost":
        return ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None and address.is_loopback:
        return ""
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return ""
        if address is not None and "/" in entry:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return ""
            except ValueError:
                continue
        name = entry.split(":", 1)[0] if entry.count(":") == 1 else entry
        if host == name.lstrip(".") or host.endswith("." + name.lstrip(".")):
            return ""
    return proxy if "://" in proxy else "http://" + proxy


def environment_proxy(url: str) -> str:
    """The proxy for `url` named by the environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, or their
    lower-case forms), as Go's ProxyFromEnvironment reads it."""

    def env(name: str) -> str:
        return os.environ.get(name) or os.environ.get(name.lower()) or ""

    return proxy_for(url, env("HTTP_PROXY"), env("HTTPS_PROXY"), env("NO_PROXY"))


_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_SENSITIVE = ("authorization", "www-authenticate", "cookie", "cookie2")
# One try per hop: a redirect is followed here (each hop checked first), nothing is retried.
_NO_RETRIES = urllib3.Retry(
    total=0, connect=0, read=0, status=0, other=0, redirect=0, raise_on_redirect=False, raise_on_status=False
)


def get(
    url: str,
    *,
    headers: Mapping[str, str],
    context: ssl.SSLContext | None = None,
    proxy: str | Callable[[str], str] = "",
    total_timeout: float,
    max_bytes: int,
    redirects: int = 10,
    connect_host: str = "",
) -> Answer:
    """GET `url`, following at most `redirects` redirects (each hop through `proxy`, or the
    proxy `proxy(url)` names for it). A failure names the hop that failed (`GetError.url`), as
    Go's client does. `connect_host`: the address to connect to instead of `url`'s host (e.g. a
    Service's cluster IP), for every hop to that host and port; the certificate must still name
    the URL's host."""
    deadline = time.monotonic() + total_timeout
    context = context or ssl.create_default_context()
    connect = min(CONNECT_TIMEOUT, total_timeout)
    current, sent = url, dict(headers)
    dial = _dial(url, connect_host)
    with _Watchdog(total_timeout) as watchdog:
        for hop in range(max(redirects, 1)):
            problem = http_url_problem(current)
            if problem:
                raise GetError("request", problem, current)
            hop_proxy = proxy(current) if callable(proxy) else proxy
            manager = _manager(watchdog, context, hop_proxy, dial)
            dialled = connect_host if dial is not None and _dial(current, connect_host) == dial else ""
            try:
                try:
                    response: Any = manager.request(
                        "GET", current, headers=sent, preload_content=False, redirect=False, retries=_NO_RETRIES,
                        timeout=urllib3.Timeout(connect=connect, read=total_timeout),
                    )
                except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError, ValueError) as exc:
                    if watchdog.expired:
                        raise _headers_deadline(current) from None
                    raise GetError("request", cause(exc, current, dialled), current,
                                   timed_out=_is_timeout(exc)) from None
                if watchdog.expired:  # the headers "ended" only because the deadline shut the socket
                    response.release_conn()
                    raise _headers_deadline(current)
                location = response.headers.get("Location") if response.status in _REDIRECTS else None
                if location is None:
                    return _read(response, watchdog, deadline, total_timeout, max_bytes, current, dialled)
                response.drain_conn()
                response.release_conn()
            finally:
                manager.clear()
            current, sent = _follow(current, location, sent)
            if hop == redirects - 1:
                raise GetError("request", f"stopped after {redirects} redirects", current)
    raise AssertionError("unreachable")


def _follow(current: str, location: str, sent: dict[str, str]) -> tuple[str, dict[str, str]]:
    """The hop a redirect from `current` to `location` goes to, and the headers it is sent (the
    sensitive ones dropped when the host changes, as Go does); a GetError when `location` is not a
    URL."""
    problem = url_problem(location)
    following = ""
    if not problem:
        try:
            following = urljoin(current, location)
        except ValueError:
            problem = f"parse {go_quote(location)}: invalid URL"
    if problem:
        raise GetError("request", f"failed to parse Location header {go_quote(location)}: {problem}", current)
    if urlsplit(following).hostname != urlsplit(current).hostname:
        sent = {k: v for k, v in sent.items() if k.lower() not in _SENSITIVE}
    return following, sent


def _dial(url: str, connect_host: str) -> tuple[str, int, str] | None:
    """(host, port, address) of `url` when its connections go to `connect_host` instead."""
    parts = urlsplit(url)
    if not connect_host or not parts.hostname:
        return None
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80), connect_host


def _read(response: Any, watchdog: _Watchdog, deadline: float, total_timeout: float, max_bytes: int,
          url: str, connect_host: str) -> Answer:
    """The answer's body, within the size bound and the deadline."""
    try:
        reason = escape(" ".join((response.reason or "").split()))[:MAX_REASON_CHARS]
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            raise BodyTooLarge(f"response body of {declared} bytes is larger than the {max_bytes} bytes accepted",
                               url, response.status, reason)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = response.read1(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                raise BodyTooLarge(f"response body larger than the {max_bytes} bytes accepted", url, response.status,
                                   reason)
            chunks.append(chunk)
        if watchdog.expired or time.monotonic() > deadline:
            raise _body_deadline(total_timeout, url)
        return Answer(response.status, reason, b"".join(chunks))
    except (ReadTimeoutError, ProtocolError, OSError, urllib3.exceptions.HTTPError, http.client.HTTPException) as exc:
        if watchdog.expired:
            raise _body_deadline(total_timeout, url) from None
        raise GetError("body", f"reading the response body: {cause(exc, url, connect_host)}", url,
                       timed_out=_is_timeout(exc)) from None
    finally:
        response.release_conn()


def _is_timeout(exc: BaseException) -> bool:
    reason = exc.reason if isinstance(exc, MaxRetryError) and exc.reason is not None else exc
    if isinstance(reason, NewConnectionError):  # a subclass of ConnectTimeoutError, yet a refusal
        return False
    return isinstance(reason, ConnectTimeoutError | ReadTimeoutError | socket.timeout)


def _headers_deadline(url: str) -> GetError:
    return GetError("request", "context deadline exceeded (Client.Timeout exceeded while awaiting headers)", url,
                    timed_out=True)


def _body_deadline(total_timeout: float, url: str) -> GetError:
    return GetError("body", "context deadline exceeded (Client.Timeout or context cancellation while reading body) "
                            f"after {total_timeout:g}s", url, timed_out=True)
