"""What the CVO changes in a manifest before applying it, as pure functions of the manifest and of
the cluster configuration the applier read (Proxy, Infrastructure and APIServer `cluster`).

    inject_proxy(obj, http_proxy, https_proxy, no_proxy) -> JSON
        A Deployment or DaemonSet annotated `config.openshift.io/inject-proxy: c1,c2`: HTTP_PROXY,
        HTTPS_PROXY and NO_PROXY (from the Proxy's status) appended to the env of each named
        container and init container, when any of the three is set.
    cvo_service_env(obj, api_server_internal_url) -> JSON
        The CVO's own Deployment: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT of its
        container set to the Infrastructure's apiServerInternalURL (port 443 when it has none), so
        the CVO reaches the API server through the load balancer, not a local one that restarts.
        None (no Infrastructure, no URL) changes nothing.
    inject_tls(obj, tls) -> JSON
        A ConfigMap annotated `config.openshift.io/inject-tls: "true"`: in each data value that is
        a GenericOperatorConfig (operator.openshift.io/v1alpha1) or GenericControllerConfig
        (config.openshift.io/v1), servingInfo's minTLSVersion and cipherSuites set from `tls` (the
        APIServer's profile, `tls_settings`) or removed when `tls` is None.
    tls_settings(api_server) -> TLSSettings | None
        The APIServer `cluster`'s `spec.tlsSecurityProfile` as servingInfo takes it (None when
        there is no APIServer).

Each returns a new object (the input is not changed) or raises ApplyProblem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cvo_py.runtime.docbounds import DocumentError
from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.jsondata import copy_json
from cvo_py.runtime.safeload import load_document
from cvo_py.runtime.serving.tls import GO_CIPHER_SUITES
from cvo_py.runtime.urls import url_problem
from syncworker.merge.metadata import annotations_of
from syncworker.merge.values import JSON, ApplyProblem, mapping, objects

INJECT_PROXY = "config.openshift.io/inject-proxy"
INJECT_TLS = "config.openshift.io/inject-tls"
PROXY_KINDS = (("apps/v1", "Deployment"), ("apps/v1", "DaemonSet"))
CVO_NAMESPACE = "openshift-cluster-version"
CVO_NAME = "cluster-version-operator"
CVO_CONTAINER = "cluster-version-operator"
DEFAULT_API_PORT = "443"
TLS_CONFIG_KINDS = (
    ("operator.openshift.io/v1alpha1", "GenericOperatorConfig"),
    ("config.openshift.io/v1", "GenericControllerConfig"),
)


def _pod_spec(obj: JSON) -> JSON:
    template = mapping(mapping(obj, "spec", ""), "template", "spec")
    return mapping(template, "spec", "spec.template")


def _containers_named(spec: JSON, name: str) -> list[JSON]:
    return [
        container
        for key in ("containers", "initContainers")
        for container in objects(spec, key, "spec.template.spec")
        if container.get("name") == name
    ]


def inject_proxy(obj: JSON, http_proxy: str, https_proxy: str, no_proxy: str) -> JSON:
    """The object with the cluster's proxy in the containers its inject-proxy annotation names."""
    if (str(obj.get("apiVersion")), str(obj.get("kind"))) not in PROXY_KINDS:
        return obj
    names = annotations_of(obj).get(INJECT_PROXY, "")
    if not names or not (http_proxy or https_proxy or no_proxy):
        return obj
    out: JSON = copy_json(obj)
    spec = _pod_spec(out)
    for name in names.split(","):
        found = _containers_named(spec, name)
        if not found:
            raise ApplyProblem(f"requested injection for non-existent container: {go_quote(name)}")
        for container in found:
            container["env"] = [
                *objects(container, "env", "container"),
                {"name": "HTTP_PROXY", "value": http_proxy},
                {"name": "HTTPS_PROXY", "value": https_proxy},
                {"name": "NO_PROXY", "value": no_proxy},
            ]
    return out


def is_cvo_deployment(obj: JSON) -> bool:
    metadata = mapping(obj, "metadata", "")
    return (
        obj.get("apiVersion") == "apps/v1"
        and obj.get("kind") == "Deployment"
        and metadata.get("namespace") == CVO_NAMESPACE
        and metadata.get("name") == CVO_NAME
    )


def split_host_port(url: str) -> tuple[str, str]:
    """Go's url.URL Hostname() and Port() of a URL that parses: the host without brackets, and the
    port ("" when none)."""
    rest = url.split("://", 1)[1] if "://" in url else ""
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    host, port = authority, ""
    colon = authority.rfind(":")
    if colon != -1 and authority[colon + 1 :].isdigit() and authority[colon + 1 :].isascii():
        host, port = authority[:colon], authority[colon + 1 :]
    elif colon != -1 and colon == len(authority) - 1:
        host = authority[:colon]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def cvo_service_env(obj: JSON, api_server_internal_url: str | None) -> JSON:
    """The CVO's own Deployment with its API server address set (module docstring); any other
    object, or no URL, is returned as it is."""
    if api_server_internal_url is None or not is_cvo_deployment(obj):
        return obj
    problem = url_problem(api_server_internal_url)
    if problem:
        raise ApplyProblem(problem)
    host, port = split_host_port(api_server_internal_url)
    if not host:
        return obj
    values = {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port or DEFAULT_API_PORT}
    out: JSON = copy_json(obj)
    found = _containers_named(_pod_spec(out), CVO_CONTAINER)
    if not found:
        raise ApplyProblem(f"requested injection for non-existent container: {go_quote(CVO_CONTAINER)}")
    for container in found:
        env = []
        for item in objects(container, "env", "container"):
            if item.get("name") in values:
                item = {**item, "value": values[str(item["name"])]}
            env.append(item)
        present = {item.get("name") for item in env}
        env += [{"name": name, "value": value} for name, value in values.items() if name not in present]
        container["env"] = env
    return out


@dataclass(frozen=True)
class TLSSettings:
    """servingInfo's TLS fields as the APIServer's profile gives them."""

    min_tls_version: str  # "VersionTLS12"
    cipher_suites: tuple[str, ...]


# openshift/api's predefined profiles (TLSProfiles), ciphers in OpenSSL's names as it lists them.
_MODERN_CIPHERS = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
_INTERMEDIATE_CIPHERS = (
    *_MODERN_CIPHERS,
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-RSA-CHACHA20-POLY1305",
    "DHE-RSA-AES128-GCM-SHA256",
    "DHE-RSA-AES256-GCM-SHA384",
)
TLS_PROFILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Old": (
        "VersionTLS10",
        (
            *_INTERMEDIATE_CIPHERS,
            "DHE-RSA-CHACHA20-POLY1305",
            "ECDHE-ECDSA-AES128-SHA256",
            "ECDHE-RSA-AES128-SHA256",
            "ECDHE-ECDSA-AES128-SHA",
            "ECDHE-RSA-AES128-SHA",
            "ECDHE-ECDSA-AES256-SHA384",
            "ECDHE-RSA-AES256-SHA384",
            "ECDHE-ECDSA-AES256-SHA",
            "ECDHE-RSA-AES256-SHA",
            "DHE-RSA-AES128-SHA256",
            "DHE-RSA-AES256-SHA256",
            "AES128-GCM-SHA256",
            "AES256-GCM-SHA384",
            "AES128-SHA256",
            "AES256-SHA256",
            "AES128-SHA",
            "AES256-SHA",
            "DES-CBC3-SHA",
        ),
    ),
    "Intermediate": ("VersionTLS12", _INTERMEDIATE_CIPHERS),
    "Modern": ("VersionTLS13", _MODERN_CIPHERS),
}
DEFAULT_TLS_PROFILE = "Intermediate"
# OpenSSL's cipher names → Go's (IANA's); the first Go name of an OpenSSL one wins (Go's
# CHACHA20 aliases come after their _SHA256 names).
_GO_NAMES: dict[str, str] = {}
for _go, (_, _openssl) in GO_CIPHER_SUITES.items():
    _GO_NAMES.setdefault(_openssl, _go)


def tls_settings(api_server: JSON | None) -> TLSSettings | None:
    """The TLS profile of the APIServer `cluster` (None: there is none): `spec.tlsSecurityProfile`
    of type Old, Intermediate, Modern, or Custom with its own `minTLSVersion` and `ciphers`; no
    profile, or a type not known, is Intermediate, every OpenShift component's default. Ciphers
    are given in Go's names, as servingInfo takes them: OpenSSL's names converted, those Go does
    not implement (the DHE suites) left out."""
    if api_server is None:
        return None
    profile = mapping(mapping(api_server, "spec", ""), "tlsSecurityProfile", "spec")
    kind = profile.get("type")
    if kind == "Custom":
        custom = mapping(profile, "custom", "spec.tlsSecurityProfile")
        version = custom.get("minTLSVersion")
        ciphers = custom.get("ciphers")
        listed = tuple(c for c in ciphers if isinstance(c, str)) if isinstance(ciphers, list) else ()
        return TLSSettings(version if isinstance(version, str) else "", _go_cipher_names(listed))
    version, listed = TLS_PROFILES.get(kind if isinstance(kind, str) else "", TLS_PROFILES[DEFAULT_TLS_PROFILE])
    return TLSSettings(version, _go_cipher_names(listed))


def _go_cipher_names(ciphers: tuple[str, ...]) -> tuple[str, ...]:
    names = (_GO_NAMES.get(c, c if c in GO_CIPHER_SUITES else "") for c in ciphers)
    return tuple(dict.fromkeys(n for n in names if n))


def inject_tls(obj: JSON, tls: TLSSettings | None) -> JSON:
    """The ConfigMap with the cluster's TLS profile in its operator and controller configs (module
    docstring). A value that is not such a config, or already holds the profile, keeps its text."""
    if (obj.get("apiVersion"), obj.get("kind")) != ("v1", "ConfigMap") or annotations_of(obj).get(INJECT_TLS) != "true":
        return obj
    data = mapping(obj, "data", "")
    rewritten = {key: _with_tls(key, value, tls) for key, value in data.items()}
    if rewritten == data:
        return obj
    out: JSON = copy_json(obj)
    out["data"] = rewritten
    return out


def _with_tls(key: str, value: Any, tls: TLSSettings | None) -> Any:
    if not isinstance(value, str):
        return value
    try:
        config = load_document(value.encode("utf-8", "surrogateescape"), source=f"data[{key}]")
    except DocumentError:
        return value  # not a document: nothing to inject into
    if not isinstance(config, dict) or (config.get("apiVersion"), config.get("kind")) not in TLS_CONFIG_KINDS:
        return value
    serving = config.get("servingInfo")
    serving = dict(serving) if isinstance(serving, dict) else {}
    if tls is None:
        serving.pop("minTLSVersion", None)
        serving.pop("cipherSuites", None)
    else:
        serving["minTLSVersion"] = tls.min_tls_version
        serving["cipherSuites"] = list(tls.cipher_suites)
    if serving == (config.get("servingInfo") or {}):
        return value
    config["servingInfo"] = serving
    return json.dumps(config, sort_keys=True)
