"""The API client's configuration: where the API server is and how to trust and authenticate to it.

`load_config` reads it from an explicit kubeconfig, else in-cluster, else $KUBECONFIG, else
~/.kube/config, and checks it before any request (client-go's own checks of a kubeconfig's fields
are in `cvo_py.runtime.kubeconfig`); `ssl_context` is the TLS each new connection of the client
(`cvo_py.runtime.kube`) uses.
"""

from __future__ import annotations

import os
import ssl
from typing import Any, NamedTuple

from cvo_py.runtime.errors import ConfigError
from cvo_py.runtime.gotext.base64std import Base64Error, go_base64_decode
from cvo_py.runtime.kubeconfig import PEM_BEGIN, pem_missing, type_problem, usable_problem


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
        ssl_context(config)
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


def ssl_context(config: ClientConfig) -> ssl.SSLContext:
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
