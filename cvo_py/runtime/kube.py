"""A small, dict-based Kubernetes REST client.

Every object is the plain JSON dict the API server sends, for core types and custom resources
alike, so pure functions elsewhere never depend on generated model classes. Credentials and TLS
come from the official client's configuration loaders (kubeconfig, in-cluster, exec plugins).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import ssl
import sys
import threading
import time
from collections.abc import Callable, Generator, Mapping
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode, urlsplit

from cvo_py.runtime.connections import ConnectionPool, Stream, go_cause
from cvo_py.runtime.gotext import Base64Error, go_base64_decode, network_phrase
from cvo_py.runtime.jsondata import encode_json
from cvo_py.runtime.kubeconfig import PEM_BEGIN, pem_missing, type_problem, usable_problem

JSON = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
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


class ApiError(Exception):
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


class ServerUnreachable(Exception):
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


class ConfigError(Exception):
    """No usable client configuration."""


class ClientConfig(NamedTuple):
    host: str
    ca_file: str | None = None
    ca_data: bytes | None = None  # the PEM of a kubeconfig's certificate-authority-data (kept, not written to a file)
    cert_file: str | None = None
    key_file: str | None = None
    verify: bool = True
    token: str | None = None
    # The official loaders refresh short-lived credentials (in-cluster tokens, exec plugins).
    official: Any = None

    def authorization(self) -> str | None:
        if self.official is not None:
            # Calls the loaders' refresh hook (rotated in-cluster tokens, exec plugins) first.
            value = self.official.get_api_key_with_prefix("BearerToken", alias="authorization")
            if value:
                return str(value) if " " in str(value) else f"Bearer {value}"
        return f"Bearer {self.token}" if self.token else None


# Bounds of the files a configuration names: far above real ones (a kubeconfig with embedded
# certificates takes kilobytes, a CA bundle the system's size), far below what hurts.
KUBECONFIG_MAX_BYTES = 16 << 20


def load_config(kubeconfig: str | None = None, context: str | None = None) -> ClientConfig:
    """Explicit kubeconfig, else in-cluster, else $KUBECONFIG, else ~/.kube/config.

    A kubeconfig whose context needs only a server, its CA and a bearer token (what `oc login`
    and the local cluster write) is read directly; anything else (client certificates, exec
    plugins, auth providers, in-cluster credentials, and every file that is not read directly)
    goes through the official client's loaders, whose import alone costs a short-lived command
    such as `upgrade-status` a fifth of a second.

    Whatever the source, the result is checked before it is used: the kubeconfig and every file
    its context names are regular files within bounds (`cvo_py.runtime.safeload.read_file`: a FIFO or
    `/dev/zero` is refused, never read), the server is a URL a request can go to, and the CA and
    client certificate load. Any problem is one ConfigError line.
    """
    source = ""
    try:
        if kubeconfig or not _in_cluster():
            if kubeconfig:
                path = kubeconfig
            else:
                path = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or os.path.expanduser("~/.kube/config")
                if not os.path.lexists(path):
                    raise ConfigError(
                        f"no Kubernetes configuration: not running in a pod, and kubeconfig {path!r} does not "
                        "exist (pass --kubeconfig)"
                    )
            source = path
            doc = _read_kubeconfig(path)
            # what client-go refuses, in its words, before the official loader
            problem = type_problem(doc) or usable_problem(doc, context)
            if problem:
                raise ConfigError(f"cannot load Kubernetes configuration from {path}: {problem}")
            entries = _context_entries(doc, context)
            _check_named_files(entries, path)
            config = _static_config(entries, path)
            if config is None:
                config = _official_config(path, context)
        else:
            source = "in-cluster configuration"
            config = _official_config(None, context)
        _check_config(config, source)
    except ConfigError:
        raise
    except Exception as exc:  # the loaders raise many unrelated types for a bad file
        raise ConfigError(f"cannot load Kubernetes configuration from {source}: {exc}") from exc
    return config


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.exists(
        "/var/run/secrets/kubernetes.io/serviceaccount/token"
    )


def _official_config(path: str | None, context: str | None) -> ClientConfig:
    """What the official loaders make of the kubeconfig at `path` (None: the in-cluster configuration)."""
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    official = k8s_client.Configuration()
    if path is None:
        k8s_config.load_incluster_config(client_configuration=official)  # type: ignore[no-untyped-call]
    else:
        k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=path, context=context, client_configuration=official
        )
    return ClientConfig(
        host=official.host.rstrip("/"),
        ca_file=official.ssl_ca_cert,
        cert_file=official.cert_file,
        key_file=official.key_file,
        verify=bool(official.verify_ssl),
        official=official,
    )


def _read_kubeconfig(path: str) -> Any:
    """The kubeconfig document, read and parsed within bounds."""
    from cvo_py.runtime import safeload

    try:
        return safeload.load_document(safeload.read_file(path, max_bytes=KUBECONFIG_MAX_BYTES), source=path)
    except safeload.DocumentError as exc:
        raise ConfigError(f"cannot load Kubernetes configuration from {exc}") from None


def read_credential(path: str, what: str) -> bytes:
    """A CA bundle, client certificate, key or token file, read within bounds; ConfigError naming it."""
    from cvo_py.runtime import safeload

    try:
        return safeload.read_file(path, max_bytes=safeload.CREDENTIAL_MAX_BYTES)
    except safeload.DocumentError as exc:
        raise ConfigError(f"{what} {exc}") from None


def _check_config(config: ClientConfig, source: str) -> None:
    """The server can be requested and the TLS files load (what each connection will do)."""
    from cvo_py.runtime.urls import http_url_problem

    problem = http_url_problem(config.host)
    if problem:
        raise ConfigError(
            f"cannot load Kubernetes configuration from {source}: the API server URL cannot be used: {problem}"
        )
    try:
        _ssl_context(config)
    except OSError as exc:
        raise ConfigError(f"cannot load Kubernetes configuration from {source}: {exc}") from None
    token = config.token or ""
    if config.official is not None:  # what the loader read, without running its refresh hooks
        token = str(config.official.api_key.get("authorization") or "")
    if not all(c == " " or 0x21 <= ord(c) <= 0x7E for c in token):
        raise ConfigError(
            f"cannot load Kubernetes configuration from {source}: the bearer token holds characters an HTTP "
            "header cannot carry (want printable ASCII)"
        )


_CONTEXT_KEYS = {"cluster": "clusters", "user": "users"}
# The files a context's cluster and user may name (what the official loader would open).
_FILE_KEYS = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}


class _Entries(NamedTuple):
    """The selected context and its cluster and user entries (each None when not one mapping)."""

    context: dict[str, Any] | None
    cluster: dict[str, Any] | None
    user: dict[str, Any] | None


def _context_entries(doc: Any, context: str | None) -> _Entries:
    if not isinstance(doc, dict):
        return _Entries(None, None, None)
    name = context or doc.get("current-context")

    def entry(section: str, key: str, wanted: object) -> dict[str, Any] | None:
        items = doc.get(section)
        found = [i for i in items if isinstance(i, dict) and i.get("name") == wanted] if isinstance(items, list) else []
        body = found[0].get(key) if len(found) == 1 else None
        return body if isinstance(body, dict) else None

    ctx = entry("contexts", "context", name) if isinstance(name, str) and name else None
    if ctx is None:
        return _Entries(None, None, None)
    return _Entries(ctx, entry("clusters", "cluster", ctx.get("cluster")), entry("users", "user", ctx.get("user")))


def _check_named_files(entries: _Entries, path: str) -> None:
    """Every file the context names is a regular file within bounds (relative names are relative
    to the kubeconfig, as the loaders take them)."""
    base = os.path.dirname(os.path.abspath(path))
    for kind, keys in _FILE_KEYS.items():
        body = getattr(entries, kind)
        for key in keys if body else ():
            named = body.get(key)
            if isinstance(named, str) and named and f"{key}-data" not in body:
                read_credential(os.path.join(base, named), f"kubeconfig {path}: {kind} {key}")


_STATIC_CLUSTER_KEYS = frozenset(
    {"server", "certificate-authority", "certificate-authority-data", "insecure-skip-tls-verify"}
)
_STATIC_USER_KEYS = frozenset({"token"})
_STATIC_CONTEXT_KEYS = frozenset({"cluster", "user", "namespace"})


def _static_config(entries: _Entries, path: str) -> ClientConfig | None:
    """The configuration of a kubeconfig whose context uses only a server, a CA (file, data or
    insecure) and a token; None for anything else, or anything unexpected (the official loader
    then reads the file and reports its problems)."""
    ctx, cluster, user = entries.context, entries.cluster, entries.user
    if ctx is None or cluster is None or user is None:
        return None
    if not set(ctx) <= _STATIC_CONTEXT_KEYS or not set(cluster) <= _STATIC_CLUSTER_KEYS:
        return None
    if not set(user) <= _STATIC_USER_KEYS:
        return None
    server, token = cluster.get("server"), user.get("token")
    insecure = cluster.get("insecure-skip-tls-verify", False)
    if not isinstance(server, str) or not server.startswith("https://") or not isinstance(token, str) or not token:
        return None
    if not isinstance(insecure, bool):
        return None
    ca_file: str | None = None
    ca_data: bytes | None = None
    if "certificate-authority-data" in cluster:
        ca_data = _ca_data(cluster["certificate-authority-data"])
        if ca_data is None:
            return None
    elif "certificate-authority" in cluster:
        ca = cluster["certificate-authority"]
        if not isinstance(ca, str) or not ca:
            return None
        ca_file = os.path.join(os.path.dirname(os.path.abspath(path)), ca)  # relative to the file
    return ClientConfig(host=server.rstrip("/"), ca_file=ca_file, ca_data=ca_data, verify=not insecure, token=token)


def _ca_data(data: object) -> bytes | None:
    """The PEM a kubeconfig's `certificate-authority-data` holds, or None when it is not base64."""
    if not isinstance(data, str):
        return None
    try:
        return go_base64_decode(data)  # as client-go decodes it (line breaks skipped)
    except Base64Error:
        return None


class KubeClient:
    """Thread-safe REST client returning plain dicts."""

    def __init__(self, config: ClientConfig, user_agent: str = "cvo-py", timeout: float = 30.0) -> None:
        self.config = config
        self.timeout = timeout
        try:
            # TLS files are read for each new connection (a rotated CA or client certificate is used)
            self._pool = ConnectionPool(config.host, lambda: _ssl_context(config))
        except ValueError as exc:  # not an http(s) URL
            raise ConfigError(f"cannot use the Kubernetes API server at {config.host}: {exc}") from exc
        self._user_agent = user_agent
        self._lock = threading.Lock()

    @property
    def server(self) -> str:
        return self.config.host

    def close(self) -> None:
        """Close the idle kept-alive connections (a request after this opens a new one)."""
        self._pool.clear()

    def with_token(self, token: str) -> KubeClient:
        """The same server and TLS trust, authenticated as someone else (e.g. a ServiceAccount)."""
        cfg = ClientConfig(
            host=self.config.host,
            ca_file=self.config.ca_file,
            ca_data=self.config.ca_data,
            verify=self.config.verify,
            token=token,
        )
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
    ) -> Any:
        """One API request; a 429 is retried `busy_retries` times before the caller gets it.
        `encoded`: the body already encoded (by `encode_json`), sent in place of `body`; `decode`:
        reads a successful answer's body in place of the JSON decoding below (a ValueError from it:
        that decoding after all); `compressed`: the answer asked for gzipped (the API server
        compresses those over 128 KiB: a large LIST is read in fewer bytes and less CPU)."""
        target = path
        if query:
            target += "?" + urlencode({k: _query_value(v) for k, v in query.items() if v is not None})
        data = encoded if encoded is not None else encode_json(body) if body is not None else None
        # 429 (API priority and fairness, storage initializing) asks to come back later: honour
        # Retry-After a few times before giving the error to the caller.
        for attempt in range(busy_retries + 1):
            try:
                return self._request_once(
                    method, path, target, data, content_type, timeout, accept, decode, compressed
                )
            except ApiError as exc:
                if exc.status != 429 or attempt == busy_retries:
                    raise
                time.sleep(min(exc.retry_after() or 1.0, 5.0) * (0.5 + random.random() / 2))
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
    ) -> Any:
        headers = self._headers(content_type if data is not None else None)
        headers["Accept"] = accept
        if compressed:
            headers["Accept-Encoding"] = "gzip"
        try:
            resp = self._pool.request(
                method,
                target,
                headers,
                data,
                read_timeout=timeout or self.timeout,
            )
        except (http.client.HTTPException, OSError) as exc:
            raise ServerUnreachable(self.config.host, exc) from exc
        body = resp.data
        if compressed and resp.headers.get("Content-Encoding") == "gzip":
            body = _gunzip(body, method, path)
        if resp.status >= 300:
            error = ApiError(resp.status, body.decode("utf-8", errors="replace"), method, path)
            if error.retry_after() is None and resp.headers.get("Retry-After", "").isdigit():
                error.details["retryAfterSeconds"] = int(resp.headers["Retry-After"])
            raise error
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
        except (http.client.HTTPException, OSError) as exc:
            raise ServerUnreachable(self.config.host, exc) from exc
        if on_open is not None:
            on_open(resp)
        try:
            if resp.status >= 300:
                raise ApiError(resp.status, resp.read().decode("utf-8", errors="replace"), "WATCH", path)
            buffer = b""
            for chunk in resp.chunks():
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        yield line
            if buffer.strip():
                yield buffer
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
        result: JSON = self.request("GET", res.path(namespace, name, subresource), accept=accept)
        return result

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
    ) -> JSON:
        """`decode`, `compressed`: how the answer is read (see `request`)."""
        query = {
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "resourceVersion": resource_version,
            "limit": limit,
            "continue": continue_token,
        }
        result: JSON = self.request("GET", res.path(namespace), query=query, decode=decode, compressed=compressed)
        return result

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


def _ssl_context(config: ClientConfig) -> ssl.SSLContext:
    """TLS as the configuration asks: the server verified against its CA (the system's when none
    is named) by its subjectAltNames only, as Go does, or not at all (insecure-skip-tls-verify); a
    client certificate when there is one. Files are read within bounds (`read_credential`); one
    that cannot be read or loaded is an OSError naming it."""
    if config.verify:
        from cvo_py.runtime import tlstrust

        try:
            context = tlstrust.client_context(config.ca_file, data=config.ca_data)
        except tlstrust.TrustError as exc:
            raise OSError(f"cannot load the {exc}") from None
        context.hostname_checks_common_name = False
    else:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if config.cert_file:
        what = f"the client certificate {config.cert_file} (key {config.key_file})"
        for path, kind in ((config.cert_file, "certificate"), (config.key_file, "key")):
            if not path:
                continue
            try:  # regular and bounded before OpenSSL opens it
                data = read_credential(path, "file")
            except ConfigError as exc:
                raise OSError(f"cannot load {what}: {exc}") from None
            if PEM_BEGIN not in data:  # said in Go's words, not OpenSSL's ("PEM lib")
                raise OSError(f"cannot load {what}: {pem_missing(kind)}")
        try:
            context.load_cert_chain(config.cert_file, config.key_file)
        except ssl.SSLError as exc:
            if "KEY_VALUES_MISMATCH" in str(exc):
                raise OSError(f"cannot load {what}: tls: private key does not match public key") from None
            raise OSError(f"cannot load {what}: {_load_problem(exc)}") from exc
        except (OSError, ValueError) as exc:
            raise OSError(f"cannot load {what}: {_load_problem(exc)}") from exc
    return context


def _load_problem(exc: BaseException) -> str:
    from cvo_py.runtime.tlstrust import ssl_detail

    return exc.strerror if isinstance(exc, OSError) and exc.strerror else ssl_detail(exc) or type(exc).__name__


def _gunzip(body: bytes, method: str, path: str) -> bytes:
    """A gzipped answer's bytes; one that does not decompress is the server's error (a 500 as an
    ApiError naming the request), as a malformed answer would be."""
    import zlib

    try:
        return zlib.decompress(body, 31)
    except zlib.error as exc:
        raise ApiError(500, f"the answer's gzip encoding cannot be read: {exc}", method, path) from None


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _with_type(res: Resource, body: JSON) -> JSON:
    if "apiVersion" in body and "kind" in body:
        return body
    return {"apiVersion": res.api_version, "kind": res.kind, **body}


def connect(kubeconfig: str | None = None, user_agent: str = "cvo-py") -> KubeClient:
    return KubeClient(load_config(kubeconfig), user_agent=user_agent)
