"""Fetching a graph from the update service (I/O).

As the CVO does: `GET` with `Accept: application/json` and the CVO's User-Agent, through the
cluster-wide proxy, trusting only the cluster's trusted CA bundle when it has one. Unlike the CVO
(one hour per request), the whole request is bounded to `total_timeout` seconds (30 s by default:
a healthy service answers in well under a second, and the next poll is only minutes away, so a
stalled service must not hold on to the attempt; `cvo_py.runtime.httpget` enforces it however slowly a
server drips its answer) and the body to `graph.MAX_BODY_BYTES`.

Failures are `FetchError`s carrying the `RetrievedUpdates` reason (RemoteFailed, ResponseFailed)
and a message in the CVO's shape (`Get "<url>": <cause>`, the URL of the hop that failed when a
redirect was followed); what the server said (its status line's reason) is escaped and bounded.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

from cvo_py.runtime import httpget
from cvo_py.runtime.errors import ClientError, ConfigError
from cvo_py.runtime.gotext.quoting import go_quote
from updateservice.graph import MAX_BODY_BYTES
from updateservice.retrieval import http_status_text

DEFAULT_TOTAL_TIMEOUT = 30.0


class FetchError(ClientError):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class TransportError(ConfigError):
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
    """The proxy for `url` under the cluster's proxy settings (`httpget.proxy_for`'s rules)."""
    return httpget.proxy_for(url, transport.http_proxy, transport.https_proxy, transport.no_proxy)


def _ssl_context(ca_bundle: str) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca_bundle.strip():
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(cadata=ca_bundle)
    return context


def fetch_graph(
    url: str,
    *,
    user_agent: str,
    transport: Transport = Transport(),
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT,
    max_bytes: int = MAX_BODY_BYTES,
) -> bytes:
    """The body of a 200 answer, or FetchError: RemoteFailed when no answer came (`Get "<url>":
    <cause>`), ResponseFailed for another status or a body that could not be read."""
    try:
        context = _ssl_context(transport.ca_bundle)
    except (ssl.SSLError, ValueError) as exc:
        raise FetchError("RemoteFailed", f"the trusted CA bundle cannot be used: {exc}") from None
    headers = {"Accept": "application/json", "User-Agent": user_agent}
    try:
        answer = httpget.get(url, headers=headers, context=context, proxy=lambda hop: proxy_for(hop, transport),
                             total_timeout=total_timeout, max_bytes=max_bytes)
    except httpget.GetError as exc:
        if exc.phase == "request":  # named by the hop that failed, as Go's url.Error names it
            raise FetchError("RemoteFailed", f"Get {go_quote(exc.url or url)}: {exc}") from None
        raise FetchError("ResponseFailed", str(exc)) from None
    if answer.status != 200:  # the reason phrase comes escaped: it is shown in RetrievedUpdates and logs
        raise FetchError("ResponseFailed", http_status_text(answer.status, answer.reason))
    return answer.body
