"""A small, dict-based Kubernetes REST client.

Every object is the plain JSON dict the API server sends, for core types and custom resources
alike, so pure functions elsewhere never depend on generated model classes. Where the API server
is and how to trust and authenticate to it is the configuration's (`cvo_py.runtime.clientconfig`):
credentials and TLS come from a kubeconfig read directly or from the official client's loaders
(in-cluster, exec plugins).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, cast
from urllib.parse import quote, urlencode, urlsplit

from cvo_py.runtime.clientconfig import ClientConfig, load_config, ssl_context
from cvo_py.runtime.connections import ConnectionPool, Stream, go_cause
from cvo_py.runtime.errors import ClientError, ConfigError
from cvo_py.runtime.gotext.messages import network_phrase
from cvo_py.runtime.httpwire import HTTPError
from cvo_py.runtime.jsondata import encode_json
from cvo_py.runtime.streamedbody import BodyReader, StreamedBody

JSON = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
AS_JSON = "application/json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
TOO_MANY_REQUESTS_RETRIES = 5
LARGE_RESPONSE = 1 << 16  # bytes of a response body worth pydantic-core's JSON parser
# What `get(..., accept=METADATA_ONLY)` asks for: the object's metadata only (a PartialObjectMetadata).
METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


# The records here are NamedTuples, not dataclasses: `upgrade-status` would load dataclasses (with
# inspect, ast and dis) for them alone, off its fast path (see cvo_py.compose.upgrade_status; what
# it cost is in bench/README.md).
class Resource(NamedTuple):
    """Where a kind lives in the REST API."""

    api_version: str  # "v1" or "group/version"
    kind: str
    plural: str
    namespaced: bool

    @property
    def group(self) -> str:
        return self.api_version.split("/")[0] if "/" in self.api_version else ""

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str = "") -> str:
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{quote(name, safe='')}"
        if subresource:
            base += f"/{subresource}"
        return base

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


PODS = Resource("v1", "Pod", "pods", True)
NODES = Resource("v1", "Node", "nodes", False)
CONFIGMAPS = Resource("v1", "ConfigMap", "configmaps", True)
NAMESPACES = Resource("v1", "Namespace", "namespaces", False)
SERVICEACCOUNTS = Resource("v1", "ServiceAccount", "serviceaccounts", True)
EVENTS = Resource("v1", "Event", "events", True)
PODTEMPLATES = Resource("v1", "PodTemplate", "podtemplates", True)
SERVICES = Resource("v1", "Service", "services", True)
LEASES = Resource("coordination.k8s.io/v1", "Lease", "leases", True)
CRDS = Resource("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False)
CLUSTERVERSIONS = Resource("config.openshift.io/v1", "ClusterVersion", "clusterversions", False)
CLUSTEROPERATORS = Resource("config.openshift.io/v1", "ClusterOperator", "clusteroperators", False)
MACHINECONFIGPOOLS = Resource("machineconfiguration.openshift.io/v1", "MachineConfigPool", "machineconfigpools", False)
MACHINECONFIGS = Resource("machineconfiguration.openshift.io/v1", "MachineConfig", "machineconfigs", False)
PROXIES = Resource("config.openshift.io/v1", "Proxy", "proxies", False)
FEATUREGATES = Resource("config.openshift.io/v1", "FeatureGate", "featuregates", False)


class ApiError(ClientError):
    """A non-2xx answer from the API server, with its `Status` fields parsed."""

    def __init__(self, status: int, body: str, method: str = "", path: str = "") -> None:
        self.status = status
        self.body = body
        self.method = method
        self.path = path
        parsed: JSON = {}
        try:
            loaded = json.loads(body) if body else {}
            if isinstance(loaded, dict):
                parsed = loaded
        except ValueError:
            pass
        self.status_object = parsed
        self.reason: str = str(parsed.get("reason", "")) if parsed else ""
        self.message: str = str(parsed.get("message", "")) if parsed else body.strip()[:500]
        details = parsed.get("details") if parsed else None
        self.details: JSON = details if isinstance(details, dict) else {}
        super().__init__(f"{method} {path}: {status} {self.reason}: {self.message}".strip())

    @property
    def causes(self) -> list[JSON]:
        causes = self.details.get("causes")
        return [c for c in causes if isinstance(c, dict)] if isinstance(causes, list) else []

    def is_conflict(self) -> bool:
        return self.status == 409 and self.reason != "AlreadyExists"

    def is_already_exists(self) -> bool:
        return self.status == 409 and self.reason == "AlreadyExists"

    def is_not_found(self) -> bool:
        return self.status == 404

    def is_gone(self) -> bool:
        return self.status == 410

    def is_invalid(self) -> bool:
        return self.status == 422

    def retry_after(self) -> float | None:
        seconds = self.details.get("retryAfterSeconds")
        return float(seconds) if isinstance(seconds, int | float) else None


class ServerUnreachable(ClientError):
    """The API server could not be reached at all (connection refused, DNS, TLS, timeout)."""

    def __init__(self, server: str, cause: BaseException) -> None:
        self.server = server
        self.cause = cause
        # The phrase an admin recognises, else the cause as Go's client words it (never Python's
        # own wording: `[Errno 104]`, `RemoteDisconnected(...)`).
        parts = urlsplit(server)
        reason = network_phrase(str(cause)) or go_cause(
            cause, parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
        )
        super().__init__(f"cannot reach the Kubernetes API server at {server}: {reason}")


class KubeClient:
    """Thread-safe REST client returning plain dicts."""

    def __init__(
        self, config: ClientConfig, user_agent: str = "cvo-py", timeout: float = 30.0, max_requests: int | None = None
    ) -> None:
        self.config, self.timeout = config, timeout
        try:
            # TLS files are read for each new connection (a rotated CA or client certificate is used)
            self._pool = ConnectionPool(config.host, lambda: ssl_context(config), max_requests=max_requests)
        except ValueError as exc:  # not an http(s) URL
            raise ConfigError(f"cannot use the Kubernetes API server at {config.host}: {exc}") from exc
        self._user_agent = user_agent

    @property
    def server(self) -> str:
        return self.config.host

    def close(self) -> None:
        """Close the idle kept-alive connections (a request after this opens a new one)."""
        self._pool.clear()

    def with_token(self, token: str) -> KubeClient:
        """The same server and TLS trust, authenticated as someone else (e.g. a ServiceAccount)."""
        at = self.config
        cfg = ClientConfig(host=at.host, ca_file=at.ca_file, ca_data=at.ca_data, verify=at.verify, token=token)
        return KubeClient(cfg, user_agent=self._user_agent, timeout=self.timeout)

    # -- raw requests -----------------------------------------------------------------------------

    def _headers(self, content_type: str | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": self._user_agent}
        auth = self.config.authorization()
        if auth:
            headers["Authorization"] = auth
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
        busy_retries: int = TOO_MANY_REQUESTS_RETRIES,
        encoded: bytes | None = None,
        accept: str = "application/json",
        decode: Callable[[bytes], Any] | None = None,
        compressed: bool = False,
        progress: Callable[[], BodyReader] | None = None,
    ) -> Any:
        """One API request; a 429 is retried `busy_retries` times before the caller gets it.
        `encoded`: the body already encoded (by `encode_json`), sent in place of `body`; `decode`:
        reads a successful answer's body in place of the JSON decoding below (a ValueError from it:
        that decoding after all); `compressed`: the answer asked for gzipped (the API server
        compresses those over 128 KiB: a large LIST is read in fewer bytes and less CPU);
        `progress`: makes the `BodyReader` a successful answer's body is fed to as it arrives
        (`cvo_py.runtime.streamedbody`), whose result, unless None, is the answer read."""
        target = path
        if query:
            target += "?" + urlencode({k: _query_value(v) for k, v in query.items() if v is not None})
        data = encoded if encoded is not None else encode_json(body) if body is not None else None
        # 429 (API priority and fairness, storage initializing) asks to come back later: honour
        # Retry-After a few times before giving the error to the caller.
        for attempt in range(busy_retries + 1):
            try:
                return self._request_once(
                    method, path, target, data, content_type, timeout, accept, decode, compressed, progress
                )
            except ApiError as exc:
                if exc.status != 429 or attempt == busy_retries:
                    raise
                _wait_as_told(exc)
        raise AssertionError("unreachable")

    def _request_once(
        self,
        method: str,
        path: str,
        target: str,
        data: bytes | None,
        content_type: str,
        timeout: float | None,
        accept: str = "application/json",
        decode: Callable[[bytes], Any] | None = None,
        compressed: bool = False,
        progress: Callable[[], BodyReader] | None = None,
    ) -> Any:
        headers = self._headers(content_type if data is not None else None)
        headers["Accept"] = accept
        if compressed:
            headers["Accept-Encoding"] = "gzip"
        streamed = StreamedBody(progress, compressed) if progress is not None else None
        on_answer = streamed.on_answer if streamed is not None else None
        try:
            resp = self._pool.request(
                method, target, headers, data, read_timeout=timeout or self.timeout, on_answer=on_answer
            )
        except (HTTPError, OSError) as exc:
            raise ServerUnreachable(self.config.host, exc) from exc
        read = streamed.read() if streamed is not None else None
        if read is not None:
            return read
        body = resp.data
        if compressed and resp.headers.get("Content-Encoding") == "gzip":
            body = _gunzip(body, method, path)
        if resp.status >= 300:
            error = _api_error(resp.status, resp.headers.get("Retry-After") or "", body, accept, method, path)
            if error is None:  # a Status in protobuf not worded as its JSON: asked for in JSON
                return self._request_once(
                    method, path, target, data, content_type, timeout, AS_JSON, decode, compressed, progress
                )
            raise error
        return _decoded(body, decode)

    def stream_lines(
        self,
        path: str,
        query: Mapping[str, Any],
        read_timeout: float,
        on_open: Callable[[Stream], None] | None = None,
    ) -> Generator[bytes, None, None]:
        """GET a streaming endpoint (watch) and yield its lines; closes the response when done.

        `on_open` receives the live response so another thread can `shutdown()` it.
        """
        target = path + "?" + urlencode({k: _query_value(v) for k, v in query.items()})
        try:
            resp = self._pool.stream("GET", target, self._headers(), read_timeout=read_timeout)
        except (HTTPError, OSError) as exc:
            raise ServerUnreachable(self.config.host, exc) from exc
        if on_open is not None:
            on_open(resp)
        try:
            if resp.status >= 300:
                raise ApiError(resp.status, resp.read().decode("utf-8", errors="replace"), "WATCH", path)
            yield from _lines(resp.chunks())
        finally:
            # Close, never release: a connection with an unread watch body must not go back
            # to the pool that other requests share.
            resp.close()

    # -- verbs ------------------------------------------------------------------------------------

    def get(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        subresource: str = "",
        *,
        accept: str = "application/json",
    ) -> JSON:
        """`accept`: the representation asked for (`METADATA_ONLY`: the object's metadata alone)."""
        return cast(JSON, self.request("GET", res.path(namespace, name, subresource), accept=accept))

    def list(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        decode: Callable[[bytes], Any] | None = None,
        compressed: bool = False,
        accept: str = "application/json",
        progress: Callable[[], BodyReader] | None = None,
    ) -> JSON:
        """`decode`, `compressed`, `accept`, `progress`: how the answer is asked for and read (see `request`)."""
        query = {
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "resourceVersion": resource_version,
            "limit": limit,
            "continue": continue_token,
        }
        path = res.path(namespace)
        return cast(
            JSON,
            self.request(
                "GET", path, query=query, decode=decode, compressed=compressed, accept=accept, progress=progress
            ),
        )

    def create(self, res: Resource, body: JSON, namespace: str | None = None) -> JSON:
        ns = namespace or body.get("metadata", {}).get("namespace")
        result: JSON = self.request("POST", res.path(ns), body=_with_type(res, body))
        return result

    def replace(self, res: Resource, body: JSON, subresource: str = "", *, encoded: bytes | None = None) -> JSON:
        """PUT `body`; `encoded`: the same body already encoded (used when the body names its
        apiVersion and kind, which are otherwise added)."""
        meta = body.get("metadata", {})
        path = res.path(meta.get("namespace"), meta["name"], subresource)
        if "apiVersion" not in body or "kind" not in body:
            encoded = None
        result: JSON = self.request("PUT", path, body=_with_type(res, body), encoded=encoded)
        return result

    def replace_status(self, res: Resource, body: JSON, *, encoded: bytes | None = None) -> JSON:
        return self.replace(res, body, "status", encoded=encoded)

    def patch(
        self,
        res: Resource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        subresource: str = "",
        content_type: str = MERGE_PATCH,
    ) -> JSON:
        result: JSON = self.request(
            "PATCH", res.path(namespace, name, subresource), body=patch, content_type=content_type
        )
        return result

    def delete(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: JSON | None = None,
    ) -> JSON:
        body: JSON = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        if propagation_policy:
            body["propagationPolicy"] = propagation_policy
        if preconditions:
            body["preconditions"] = preconditions
        result: JSON = self.request("DELETE", res.path(namespace, name), body=body)
        return result

    def server_version(self) -> JSON:
        result: JSON = self.request("GET", "/version")
        return result


def _api_error(status: int, retry_after: str, body: bytes, accept: str, method: str, path: str) -> ApiError | None:
    """A non-2xx answer's error; None for a GET's Status in protobuf (an error answers in the
    encoding asked for) that `cvo_py.runtime.kubeproto` cannot word as its JSON."""
    if "protobuf" in accept and body.startswith(b"k8s\x00"):
        from cvo_py.runtime.kubeproto import status_json

        converted = status_json(body)
        if converted is None and method == "GET":
            return None
        body = converted if converted is not None else b"the API server's error cannot be read"
    error = ApiError(status, body.decode("utf-8", errors="replace"), method, path)
    if error.retry_after() is None and retry_after.isdigit():
        error.details["retryAfterSeconds"] = int(retry_after)
    return error


def _decoded(body: bytes, decode: Callable[[bytes], Any] | None) -> Any:
    """A successful answer's body read: by `decode` when given (a ValueError from it: read as
    below after all), as JSON, or as text when it is not JSON; {} when empty."""
    if not body:
        return {}
    if decode is not None:
        try:
            return decode(body)
        except ValueError:
            pass
    if len(body) >= LARGE_RESPONSE and "pydantic_core" in sys.modules:
        # pydantic-core's parser reads a large body (a LIST) in half the time, and shares its
        # repeated strings; what it refuses (invalid UTF-8, lone surrogates) is read below.
        # Only where it is loaded already (the controllers): a short-lived client such as
        # `upgrade-status` would spend more on importing it than it saves on one response.
        from pydantic_core import from_json

        try:
            return from_json(body)
        except ValueError:
            pass
    text = body.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _gunzip(body: bytes, method: str, path: str) -> bytes:
    """A gzipped answer's bytes; one that does not decompress is the server's error (a 500 as an
    ApiError naming the request), as a malformed answer would be."""
    import zlib

    try:
        return zlib.decompress(body, 31)
    except zlib.error as exc:
        raise ApiError(500, f"the answer's gzip encoding cannot be read: {exc}", method, path) from None


def _lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The non-blank lines of a body arriving in chunks (a watch's events)."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield line
    if buffer.strip():
        yield buffer


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _with_type(res: Resource, body: JSON) -> JSON:
    if "apiVersion" in body and "kind" in body:
        return body
    return {"apiVersion": res.api_version, "kind": res.kind, **body}


def connect(kubeconfig: str | None = None, user_agent: str = "cvo-py", max_requests: int | None = None) -> KubeClient:
    """A client of the kubeconfig's server; `max_requests`: at most that many requests in flight at
    once, on as many connections (`ConnectionPool`); None: as many as the callers send."""
    return KubeClient(load_config(kubeconfig), user_agent=user_agent, max_requests=max_requests)


def _wait_as_told(exc: ApiError) -> None:
    """A 429's wait: its Retry-After (1 s without one, 5 s at most), jittered down to half."""
    import random  # here: a run that is never told to wait does without its import

    time.sleep(min(exc.retry_after() or 1.0, 5.0) * (0.5 + random.random() / 2))
