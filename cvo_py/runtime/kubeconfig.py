"""A kubeconfig's fields checked as client-go decodes them (pure).

    problem = type_problem(doc)   # "" when every field client-go reads has a type it takes
    problem = usable_problem(doc, context)   # "" when client-go can use the selected context

client-go decodes a kubeconfig into its `clientcmd/api/v1` types with Go's JSON rules: a field of
the wrong type, or `certificate-authority-data` that is not base64, is an error in Go's words
(`json: cannot unmarshal number into Go struct field Cluster.clusters.cluster.server of type
string`, `illegal base64 data at input byte 8`). The first such field in document order is the
one reported, as Go's decoder reports it. Fields client-go does not know are ignored, and null
stands for an absent field, as in Go. The official Python loader would instead fail somewhere
later in Python's words, or decode what Go refuses (its base64 reader skips what is not base64);
this check runs before it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from cvo_py.runtime.gotext.base64std import Base64Error, go_base64_decode
from cvo_py.runtime.gotext.jsoncodec import json_kind
from cvo_py.runtime.gotext.quoting import go_quote

__all__ = ["PEM_BEGIN", "pem_missing", "type_problem", "usable_problem"]


class _Struct(NamedTuple):
    name: str  # Go's name of the type (as its errors print it)
    fields: dict[str, Any]  # JSON name → type


class _Slice(NamedTuple):
    elem: Any


class _Map(NamedTuple):  # string keys
    elem: Any


_STRING, _BOOL, _BYTES, _RAW = "string", "bool", "[]uint8", "raw"
_EXTENSIONS = _Slice(_Struct("NamedExtension", {"name": _STRING, "extension": _RAW}))

_CLUSTER = _Struct(
    "Cluster",
    {
        "server": _STRING,
        "tls-server-name": _STRING,
        "insecure-skip-tls-verify": _BOOL,
        "certificate-authority": _STRING,
        "certificate-authority-data": _BYTES,
        "proxy-url": _STRING,
        "disable-compression": _BOOL,
        "extensions": _EXTENSIONS,
    },
)
_AUTH_INFO = _Struct(
    "AuthInfo",
    {
        "client-certificate": _STRING,
        "client-certificate-data": _BYTES,
        "client-key": _STRING,
        "client-key-data": _BYTES,
        "token": _STRING,
        "tokenFile": _STRING,
        "as": _STRING,
        "as-uid": _STRING,
        "as-groups": _Slice(_STRING),
        "as-user-extra": _Map(_Slice(_STRING)),
        "username": _STRING,
        "password": _STRING,
        "auth-provider": _Struct("AuthProviderConfig", {"name": _STRING, "config": _Map(_STRING)}),
        "exec": _Struct(
            "ExecConfig",
            {
                "command": _STRING,
                "args": _Slice(_STRING),
                "env": _Slice(_Struct("ExecEnvVar", {"name": _STRING, "value": _STRING})),
                "apiVersion": _STRING,
                "installHint": _STRING,
                "provideClusterInfo": _BOOL,
                "interactiveMode": _STRING,
            },
        ),
        "extensions": _EXTENSIONS,
    },
)
_CONTEXT = _Struct(
    "Context", {"cluster": _STRING, "user": _STRING, "namespace": _STRING, "extensions": _EXTENSIONS}
)
CONFIG = _Struct(
    "Config",
    {
        "kind": _STRING,
        "apiVersion": _STRING,
        "preferences": _Struct("Preferences", {"colors": _BOOL, "extensions": _EXTENSIONS}),
        "clusters": _Slice(_Struct("NamedCluster", {"name": _STRING, "cluster": _CLUSTER})),
        "users": _Slice(_Struct("NamedAuthInfo", {"name": _STRING, "user": _AUTH_INFO})),
        "contexts": _Slice(_Struct("NamedContext", {"name": _STRING, "context": _CONTEXT})),
        "current-context": _STRING,
        "extensions": _EXTENSIONS,
    },
)
_PACKAGE = "v1"  # the types' package, as Go's errors name them (v1.Cluster)


def _go_type(kind: Any) -> str:
    if isinstance(kind, _Struct):
        return f"{_PACKAGE}.{kind.name}"
    if isinstance(kind, _Slice):
        return "[]" + _go_type(kind.elem)
    if isinstance(kind, _Map):
        return "map[string]" + _go_type(kind.elem)
    return str(kind)


class _Mismatch(Exception):
    """The first field Go's decoder refuses; the argument is Go's message."""


def type_problem(doc: Any) -> str:
    """Go's error for the first field of the kubeconfig `doc` whose value client-go cannot decode
    into its type ("" when there is none; see the module docstring)."""
    try:
        _check(doc, CONFIG, "", "")
    except _Mismatch as exc:
        return str(exc)
    return ""


def _check(value: Any, kind: Any, struct: str, path: str) -> None:
    """`value` against `kind`; `struct` and `path` name the field as Go does ("" at the top)."""
    if value is None or kind == _RAW:
        return

    def refuse(what: str, go_type: str) -> _Mismatch:
        if not path:
            return _Mismatch(f"json: cannot unmarshal {what} into Go value of type {go_type}")
        return _Mismatch(f"json: cannot unmarshal {what} into Go struct field {struct}.{path} of type {go_type}")

    if isinstance(kind, _Struct):
        if not isinstance(value, dict):
            raise refuse(json_kind(value), _go_type(kind))
        for key, item in value.items():
            field = kind.fields.get(key) if isinstance(key, str) else None
            if field is not None:
                _check(item, field, kind.name, f"{path}.{key}" if path else key)
    elif isinstance(kind, _Slice):
        if not isinstance(value, list):
            raise refuse(json_kind(value), _go_type(kind))
        for item in value:
            _check(item, kind.elem, struct, path)
    elif isinstance(kind, _Map):
        if not isinstance(value, dict):
            raise refuse(json_kind(value), _go_type(kind))
        for item in value.values():
            _check(item, kind.elem, struct, path)
    elif kind == _STRING:
        if not isinstance(value, str):
            raise refuse(json_kind(value), _STRING)
    elif kind == _BOOL:
        if not isinstance(value, bool):
            raise refuse(json_kind(value), _BOOL)
    elif kind == _BYTES:
        if isinstance(value, str):
            try:
                go_base64_decode(value)
            except Base64Error as exc:
                raise _Mismatch(str(exc)) from None
        elif isinstance(value, list):  # Go decodes an array of small numbers into bytes too
            for item in value:
                if item is not None and not (type(item) is int and 0 <= item <= 255):
                    number = isinstance(item, int | float) and not isinstance(item, bool)
                    what = f"number {item!r}" if number else json_kind(item)
                    raise refuse(what, "uint8")
        else:
            raise refuse(json_kind(value), _BYTES)


# --- the selected context, as client-go confirms it is usable -------------------------------------

# client-go's words for a configuration without a usable cluster (its ErrEmptyCluster), and for
# that alone, which it reports as no configuration at all.
_EMPTY_CLUSTER = "cluster has no server defined"
_EMPTY_CONFIG = "no configuration has been provided, try setting KUBERNETES_MASTER environment variable"
# Exec plugin API versions whose interactiveMode defaults to IfAvailable; others must set it.
_INTERACTIVE_DEFAULTED = ("client.authentication.k8s.io/v1beta1", "client.authentication.k8s.io/v1alpha1")
_INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
PEM_BEGIN = b"-----BEGIN "


def usable_problem(doc: Any, context: str | None = None) -> str:
    """What client-go says of a kubeconfig (already free of `type_problem`s) whose selected context
    (`context`, else `current-context`) it cannot use: a context, cluster or user it lacks, a
    cluster without a server, a CA given twice, a client certificate without its key or not PEM, an
    exec plugin without its command or API version, more than one way to authenticate. "" when
    none; several as client-go joins them (`invalid configuration: [a, b]`). Then, as loading the
    TLS pair would next, client certificate or key data without a PEM block. Files it names are
    checked where they are read."""
    config = doc if isinstance(doc, dict) else {}
    problems: list[str] = []
    name = context or config.get("current-context") or ""
    ctx = _named(config, "contexts", "context", name) if name else None
    if name and ctx is None:
        problems.append(f"context was not found for specified context: {name}")
    ctx = ctx or {}
    user_name = ctx.get("user") or ""
    problems += _user_problems(user_name, (_named(config, "users", "user", user_name) if user_name else None) or {})
    cluster_name = ctx.get("cluster") or ""
    cluster = (_named(config, "clusters", "cluster", cluster_name) if cluster_name else None) or {}
    problems += _cluster_problems(cluster_name, cluster)
    if problems == [_EMPTY_CLUSTER]:
        problems = [_EMPTY_CONFIG]
    if problems:
        return "invalid configuration: " + (problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
    user = (_named(config, "users", "user", user_name) if user_name else None) or {}
    for field, what in (("client-certificate-data", "certificate"), ("client-key-data", "key")):
        if user.get(field) and PEM_BEGIN not in _bytes_of(user[field]):  # what loading the TLS pair says next
            return pem_missing(what)
    return ""


def pem_missing(what: str) -> str:
    """Go's words (crypto/tls) for a client certificate or key (`what`) without a PEM block."""
    return f"tls: failed to find any PEM data in {what} input"


def _named(config: dict[str, Any], section: str, key: str, name: str) -> dict[str, Any] | None:
    """The `key` body of the `section` entry called `name` (the last, as client-go keeps it)."""
    found: dict[str, Any] | None = None
    for item in config.get(section) or ():
        if isinstance(item, dict) and (item.get("name") or "") == name:
            found = item.get(key) or {}
    return found


def _cluster_problems(name: str, cluster: dict[str, Any]) -> list[str]:
    if all(value in (None, "", False, []) for value in cluster.values()):
        return [_EMPTY_CLUSTER]
    problems = []
    if not cluster.get("server"):
        problems.append(
            f"no server found for cluster {go_quote(name)}" if name else "default cluster has no server defined"
        )
    if cluster.get("certificate-authority") and cluster.get("certificate-authority-data"):
        problems.append(
            f"certificate-authority-data and certificate-authority are both specified for {name}. "
            "certificate-authority-data will override."
        )
    return problems


def _user_problems(name: str, user: dict[str, Any]) -> list[str]:
    problems = []
    methods = []
    if user.get("token"):
        methods.append("token")
    if user.get("username") or user.get("password"):
        methods.append("basicAuth")
    cert, cert_data = user.get("client-certificate"), user.get("client-certificate-data")
    key, key_data = user.get("client-key"), user.get("client-key-data")
    if cert or cert_data:
        if cert and cert_data:
            problems.append(
                f"client-cert-data and client-cert are both specified for {name}. client-cert-data will override."
            )
        if key and key_data:
            problems.append(
                f"client-key-data and client-key are both specified for {name}; client-key-data will override"
            )
        if not key and not key_data:
            problems.append(
                f"client-key-data or client-key must be specified for {name} to use the clientCert "
                "authentication method."
            )
    plugin = user.get("exec")
    if isinstance(plugin, dict):
        if user.get("auth-provider"):
            problems.append(f"authProvider cannot be provided in combination with an exec plugin for {name}")
        if not plugin.get("command"):
            problems.append(f"command must be specified for {name} to use exec authentication plugin")
        api_version = plugin.get("apiVersion") or ""
        if not api_version:
            problems.append(f"apiVersion must be specified for {name} to use exec authentication plugin")
        for variable in plugin.get("env") or ():
            if not isinstance(variable, dict) or not variable.get("name"):
                problems.append(f"env variable name must be specified for {name} to use exec authentication plugin")
        mode = plugin.get("interactiveMode") or ("IfAvailable" if api_version in _INTERACTIVE_DEFAULTED else "")
        if not mode:
            problems.append(f"interactiveMode must be specified for {name} to use exec authentication plugin")
        elif mode not in _INTERACTIVE_MODES:
            problems.append(f"invalid interactiveMode for {name}: {go_quote(mode)}")
    if len(methods) > 1:
        found = " ".join(methods)
        problems.append(f"more than one authentication method found for {name}; found [{found}], only one is allowed")
    return problems


def _bytes_of(data: Any) -> bytes:
    """What a `*-data` field holds, as Go decoded it (`type_problem` checked it decodes)."""
    if isinstance(data, list):
        return bytes(item or 0 for item in data)
    return go_base64_decode(data) if isinstance(data, str) else b""
