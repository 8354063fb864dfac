"""A small client of the Prometheus HTTP API as Prometheus and Thanos Querier serve it.

    api = PrometheusAPI("https://thanos-querier.openshift-monitoring.svc:9091",
                        ca_file="/etc/tls/service-ca/service-ca.crt",
                        token_file="/var/run/secrets/kubernetes.io/serviceaccount/token")
    api.alerts()                      # GET /api/v1/alerts -> the `data.alerts` list
    api.query('up{job="x"}')          # GET /api/v1/query  -> the `data.result` vector

One URL, an optional CA bundle (else the system's), an optional bearer token file (both read at
each request, so rotated files are picked up; each a regular file within bounds, see
`cvo_py.runtime.safeload.read_file`), a bounded time per request and a bounded response size; optionally
the address to connect to, asked before each request (a Service's cluster IP, as the CVO reaches
Thanos from the host network). Every failure is an `APIError` whose message is one line naming the
URL, at most `MAX_ERROR_CHARS` characters of what the server said (a 12 MB error text is not a
12 MB log line).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from cvo_py.runtime import httpget, safeload, tlstrust
from cvo_py.runtime.errors import ClientError, ConfigError
from cvo_py.runtime.gotext.jsoncodec import decode_json
from cvo_py.runtime.gotext.messages import bounded
from cvo_py.runtime.gotext.quoting import escape, go_quote
from cvo_py.runtime.urls import http_url_problem

DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_BYTES = 16 << 20
MAX_ERROR_CHARS = 512  # of the server's own error text in an APIError


class APIError(ClientError):
    """The API could not be read; `str()` is one line fit for a log or an insight."""


# A URL, CA file or token file that cannot be used is a ConfigError, one line naming the value;
# its `field` says which: "url", "ca_file" or "token_file".


@dataclass(frozen=True)
class PrometheusAPI:
    url: str
    ca_file: str = ""
    token_file: str = ""
    timeout: float = DEFAULT_TIMEOUT
    max_bytes: int = DEFAULT_MAX_BYTES
    # Asked before every request: the address to connect to instead of the URL's host (a
    # Service's cluster IP, for a caller whose resolver cannot resolve Service names); the
    # certificate must still name the URL's host. Raises APIError when it cannot say.
    connect_host: Callable[[], str] | None = None

    def __post_init__(self) -> None:
        problem = http_url_problem(self.url)
        if problem:
            raise ConfigError(f"invalid URL {go_quote(self.url)}: {problem}: want http(s)://host[:port][/path]", "url")
        if self.timeout <= 0 or self.max_bytes <= 0:
            raise ConfigError("the timeout and the response size limit must be positive", "url")

    def alerts(self) -> list[Any]:
        """The active (pending and firing) alerts: `data.alerts` of `GET /api/v1/alerts`, as sent
        (one malformed alert is the reader's to skip, not a reason to drop them all)."""
        data = self.get("/api/v1/alerts")
        alerts = data.get("alerts") if isinstance(data, dict) else None
        if not isinstance(alerts, list):
            raise APIError(f"{self._endpoint('/api/v1/alerts')}: data.alerts is not a list of objects")
        return alerts

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """An instant query's samples (`{"metric": {...}, "value": [t, "v"]}`); vectors only."""
        params = {"query": expr} | ({"time": f"{at:.3f}"} if at is not None else {})
        data = self.get("/api/v1/query", params)
        if not isinstance(data, dict) or data.get("resultType") != "vector" or not isinstance(data.get("result"), list):
            kind = data.get("resultType") if isinstance(data, dict) else type(data).__name__
            raise APIError(f"{self._endpoint('/api/v1/query')}: expected a vector result, got {kind}")
        result: list[dict[str, Any]] = data["result"]
        return result

    def get(self, path: str, params: dict[str, str] | None = None, timeout: float | None = None) -> Any:
        """`data` of a successful API response to `GET path` (the whole request bounded by
        `timeout`, the client's own by default)."""
        timeout = self.timeout if timeout is None else timeout
        endpoint = self._endpoint(path)
        url = endpoint + ("?" + urlencode(params) if params else "")
        headers = {"Accept": "application/json"}
        try:
            token = self._token()
            context = self._context()
        except ConfigError as exc:
            raise APIError(str(exc)) from None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        connect_host = self.connect_host() if self.connect_host is not None else ""
        try:
            answer = httpget.get(url, headers=headers, context=context, total_timeout=timeout,
                                 max_bytes=self.max_bytes, connect_host=connect_host)
        except httpget.BodyTooLarge:
            raise APIError(f"{endpoint}: response larger than {self.max_bytes} bytes") from None
        except httpget.GetError as exc:
            if "deadline exceeded" in str(exc):
                raise APIError(f"{endpoint}: no response within {timeout:g}s") from None
            raise APIError(f"{endpoint}: {exc}") from None
        body, status = answer.body, answer.status
        try:
            decoded: Any = decode_json(body.decode("utf-8"))  # as Go reads it: no NaN, no UTF-16
        except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            decoded = None
        if not isinstance(decoded, dict):
            snippet = body[:200].decode("utf-8", "replace").strip().replace("\n", " ")
            raise APIError(f"{endpoint}: HTTP {status}: not an API response: {go_quote(snippet)}")
        if status != 200 or decoded.get("status") != "success":
            error = decoded.get("error") or decoded.get("errorType") or "request failed"
            said = escape(bounded(" ".join(str(error).split()), MAX_ERROR_CHARS))
            raise APIError(f"{endpoint}: HTTP {status}: {said}")
        return decoded.get("data")

    def _endpoint(self, path: str) -> str:
        return self.url.rstrip("/") + path

    def _token(self) -> str:
        """The bearer token file's token ("" without a file); ConfigError when it cannot be one."""
        if not self.token_file:
            return ""
        try:
            data = safeload.read_file(self.token_file, max_bytes=safeload.CREDENTIAL_MAX_BYTES)
        except safeload.DocumentError as exc:
            raise ConfigError(f"cannot read the bearer token file {exc}", "token_file") from None
        token = data.strip()
        if not all(0x21 <= b <= 0x7E for b in token):  # what a header value may carry, as a bearer token
            raise ConfigError(
                f"the bearer token file {escape(self.token_file)} holds characters a bearer token cannot have "
                "(want printable ASCII without spaces)",
                "token_file",
            )
        return token.decode("ascii")

    def _context(self) -> ssl.SSLContext:
        """TLS trusting the CA file (else the system's CAs); ConfigError when the file cannot be used."""
        try:
            return tlstrust.client_context(self.ca_file)
        except tlstrust.TrustError as exc:
            raise ConfigError(str(exc), "ca_file") from None

    def check_files(self) -> None:
        """Raise ConfigError when the CA file does not load or the token file cannot be read as a
        token (for validating flags at start-up)."""
        self._context()
        self._token()
