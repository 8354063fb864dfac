"""Fetching a graph from the update service (I/O).

As the CVO does: `GET` with `Accept: application/json` and the CVO's User-Agent, through the
cluster-wide proxy, trusting only the cluster's trusted CA bundle when it has one. Unlike the CVO
(one hour per request), a request is bounded to `total_timeout` seconds (30 s by default: a healthy
service answers in well under a second, and the next poll is only minutes away, so a stalled
service must not hold on to the attempt) and the body to `graph.MAX_BODY_BYTES`.

Failures are `FetchError`s carrying the `RetrievedUpdates` reason (RemoteFailed, ResponseFailed)
and a message in the CVO's shape (`Get "<url>": <cause>`).
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import urllib3
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

from cvo_py.gotext import go_quote
from updates.graph import MAX_BODY_BYTES
from updates.retrieval import http_status_text

DEFAULT_TOTAL_TIMEOUT = 30.0
CONNECT_TIMEOUT = 10.0


class FetchError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class TransportError(Exception):
    """The proxy or trusted CA configuration could not be read or used; str() says which, in one line."""


@dataclass(frozen=True)
class Transport:
    """How to reach the service: the cluster's proxy settings (Proxy/cluster status) and trusted CA
    bundle (PEM; when non-empty, the only roots trusted, as the CVO does)."""

    http_proxy: str = ""
    https_proxy: str = ""
    no_proxy: str = ""
    ca_bundle: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)


def proxy_for(url: str, transport: Transport) -> str:
    """The proxy for `url` by the proxy rules Go clients follow: the scheme's proxy unless the host
    is loopback or matches noProxy (exact host, domain suffix, IP, CIDR or `*`)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    proxy = transport.https_proxy if parts.scheme == "https" else transport.http_proxy
    if not proxy or host == "localhost":
        return ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None and address.is_loopback:
        return ""
    for entry in (e.strip().lower() for e in transport.no_proxy.split(",")):
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


def _ssl_context(ca_bundle: str) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca_bundle.strip():
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(cadata=ca_bundle)
    return context


def _cause(exc: BaseException, url: str) -> str:
    reason = exc.reason if isinstance(exc, MaxRetryError) and exc.reason is not None else exc
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = f"{parts.hostname}:{port}"
    if isinstance(reason, NameResolutionError):
        return f"dial tcp: lookup {parts.hostname}: no such host"
    if isinstance(reason, NewConnectionError):
        text = str(reason).lower()
        if "refused" in text:
            return f"dial tcp {target}: connect: connection refused"
        return f"dial tcp {target}: {str(reason).rsplit(': ', 1)[-1]}"
    if isinstance(reason, ConnectTimeoutError):  # after NewConnectionError, its subclass
        return f"dial tcp {target}: i/o timeout"
    if isinstance(reason, SSLError):
        text = str(reason)
        if "CERTIFICATE_VERIFY_FAILED" in text:
            return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        return f"tls: {text.rsplit('] ', 1)[-1].rstrip(')')}"
    if isinstance(reason, ProxyError):
        return f"proxyconnect tcp: {reason}"
    if isinstance(reason, ReadTimeoutError | TimeoutError | socket.timeout):
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    return str(reason).splitlines()[0] if str(reason) else type(reason).__name__


def fetch_graph(
    url: str,
    *,
    user_agent: str,
    transport: Transport = Transport(),
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT,
    max_bytes: int = MAX_BODY_BYTES,
) -> bytes:
    """The body of a 200 answer, or FetchError (RemoteFailed / ResponseFailed)."""
    deadline = time.monotonic() + total_timeout
    proxy = proxy_for(url, transport)
    try:
        context = _ssl_context(transport.ca_bundle)
    except (ssl.SSLError, ValueError) as exc:
        raise FetchError("RemoteFailed", f"the trusted CA bundle cannot be used: {exc}") from None
    pool: urllib3.PoolManager = (
        urllib3.ProxyManager(proxy, ssl_context=context) if proxy else urllib3.PoolManager(ssl_context=context)
    )
    headers = {"Accept": "application/json", "User-Agent": user_agent}
    try:
        try:
            response = pool.request(
                "GET", url, headers=headers, preload_content=False, redirect=True,
                # Redirects followed as Go's client does (up to 10); nothing else retried.
                retries=urllib3.Retry(total=None, connect=0, read=0, status=0, other=0, redirect=10),
                timeout=urllib3.Timeout(connect=min(CONNECT_TIMEOUT, total_timeout), read=total_timeout),
            )
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise FetchError("RemoteFailed", f"Get {go_quote(url)}: {_cause(exc, url)}") from None
        try:
            if response.status != 200:
                raise FetchError("ResponseFailed", http_status_text(response.status, response.reason or ""))
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise FetchError("ResponseFailed", f"response body of {declared} bytes is larger than the "
                                                   f"{max_bytes} bytes accepted")
            chunks: list[bytes] = []
            size = 0
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise FetchError("ResponseFailed", "context deadline exceeded (Client.Timeout or context "
                                                       f"cancellation while reading body) after {total_timeout:g}s")
                sock = getattr(response.connection, "sock", None)  # bound each wait by what is left
                if isinstance(sock, socket.socket):
                    sock.settimeout(max(0.05, min(left, total_timeout)))
                chunk = response.read1(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > max_bytes:
                    raise FetchError("ResponseFailed", f"response body larger than the {max_bytes} bytes accepted")
                chunks.append(chunk)
            return b"".join(chunks)
        except (ReadTimeoutError, ProtocolError, OSError) as exc:
            raise FetchError("ResponseFailed", f"reading the response body: {_cause(exc, url)}") from None
        finally:
            response.release_conn()
    finally:
        pool.clear()
