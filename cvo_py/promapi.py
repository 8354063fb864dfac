"""A small client of the Prometheus HTTP API as Prometheus and Thanos Querier serve it.

    api = PrometheusAPI("https://thanos-querier.openshift-monitoring.svc:9091",
                        ca_file="/etc/tls/service-ca/service-ca.crt",
                        token_file="/var/run/secrets/kubernetes.io/serviceaccount/token")
    api.alerts()                      # GET /api/v1/alerts -> the `data.alerts` list
    api.query('up{job="x"}')          # GET /api/v1/query  -> the `data.result` vector

One URL, an optional CA bundle (else the system's), an optional bearer token file (read at each
request, so a rotated token is picked up), a bounded time per request and a bounded response
size; optionally the address to connect to, asked before each request (a Service's cluster IP,
as the CVO reaches Thanos from the host network). Every failure is an `APIError` whose message is
one line naming the URL.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from cvo_py import httpget
from cvo_py.gotext import escape

DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_BYTES = 16 << 20


class APIError(Exception):
    """The API could not be read; `str()` is one line fit for a log or an insight."""


class ConfigError(ValueError):
    """A URL, CA file or token file that cannot be used; one line naming the flag's value."""


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
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"invalid URL {self.url!r}: want http(s)://host[:port][/path]")
        if self.timeout <= 0 or self.max_bytes <= 0:
            raise ConfigError("the timeout and the response size limit must be positive")

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

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        """`data` of a successful API response to `GET path` (the whole request bounded by `timeout`)."""
        endpoint = self._endpoint(path)
        url = endpoint + ("?" + urlencode(params) if params else "")
        headers = {"Accept": "application/json"}
        token = self._token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            context = ssl.create_default_context(cafile=self.ca_file or None)
        except (OSError, ssl.SSLError) as exc:
            raise APIError(f"{endpoint}: the CA file {self.ca_file} cannot be used: {exc}") from None
        connect_host = self.connect_host() if self.connect_host is not None else ""
        try:
            answer = httpget.get(url, headers=headers, context=context, total_timeout=self.timeout,
                                 max_bytes=self.max_bytes, connect_host=connect_host)
        except httpget.BodyTooLarge:
            raise APIError(f"{endpoint}: response larger than {self.max_bytes} bytes") from None
        except httpget.GetError as exc:
            if "deadline exceeded" in str(exc):
                raise APIError(f"{endpoint}: no response within {self.timeout:g}s") from None
            raise APIError(f"{endpoint}: {exc}") from None
        body, status = answer.body, answer.status
        try:
            decoded: Any = json.loads(body)
        except (ValueError, RecursionError):
            decoded = None
        if not isinstance(decoded, dict):
            snippet = escape(body[:200].decode("utf-8", "replace").strip().replace("\n", " "))
            raise APIError(f"{endpoint}: HTTP {status}: not an API response: {snippet!r}")
        if status != 200 or decoded.get("status") != "success":
            error = decoded.get("error") or decoded.get("errorType") or "request failed"
            raise APIError(f"{endpoint}: HTTP {status}: {escape(' '.join(str(error).split()))}")
        return decoded.get("data")

    def _endpoint(self, path: str) -> str:
        return self.url.rstrip("/") + path

    def _token(self) -> str:
        if not self.token_file:
            return ""
        try:
            with open(self.token_file, encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError as exc:
            raise APIError(f"cannot read the bearer token file {self.token_file}: {exc.strerror}") from None

    def check_files(self) -> None:
        """Raise ConfigError when the CA or token file cannot be read (for validating flags)."""
        for what, path in (("CA file", self.ca_file), ("token file", self.token_file)):
            if path:
                try:
                    with open(path, "rb"):
                        pass
                except OSError as exc:
                    raise ConfigError(f"cannot read the {what} {path}: {exc.strerror}") from None
