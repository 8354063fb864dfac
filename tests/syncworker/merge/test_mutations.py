"""What the CVO changes in a manifest before applying it: the cluster's proxy in the containers a
Deployment or DaemonSet names, its own Deployment's API server address, and the TLS profile in
operator configs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from syncworker.merge import cvo_service_env, inject_proxy, inject_tls
from syncworker.merge.mutations import TLSSettings, split_host_port, tls_settings
from syncworker.merge.values import ApplyProblem

JSON = dict[str, Any]


def workload(kind: str = "Deployment", annotation: str | None = "a,init", **metadata: Any) -> JSON:
    annotations = {"config.openshift.io/inject-proxy": annotation} if annotation is not None else {}
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "d", "namespace": "ns", "annotations": annotations, **metadata},
        "spec": {
            "template": {
                "spec": {
                    "initContainers": [{"name": "init"}],
                    "containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}, {"name": "b"}],
                }
            }
        },
    }


PROXY_ENV = [
    {"name": "HTTP_PROXY", "value": "http://p:3128"},
    {"name": "HTTPS_PROXY", "value": ""},
    {"name": "NO_PROXY", "value": ".cluster.local"},
]


@pytest.mark.parametrize("kind", ["Deployment", "DaemonSet"])
def test_the_proxy_is_appended_to_the_named_containers(kind: str) -> None:
    obj = workload(kind)
    out = inject_proxy(obj, "http://p:3128", "", ".cluster.local")
    spec = out["spec"]["template"]["spec"]
    assert spec["containers"][0]["env"] == [{"name": "X", "value": "1"}, *PROXY_ENV]
    assert "env" not in spec["containers"][1]
    assert spec["initContainers"][0]["env"] == PROXY_ENV
    assert obj["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "X", "value": "1"}], "input unchanged"


def test_no_proxy_configured_changes_nothing() -> None:
    obj = workload()
    assert inject_proxy(obj, "", "", "") is obj


def test_other_kinds_and_unannotated_workloads_are_left_alone() -> None:
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"annotations": {"config.openshift.io/inject-proxy": "a"}},
    }
    assert inject_proxy(config_map, "http://p", "", "") is config_map
    plain = workload(annotation=None)
    assert inject_proxy(plain, "http://p", "", "") is plain


def test_a_proxy_for_a_container_that_does_not_exist_fails_the_task() -> None:
    with pytest.raises(ApplyProblem) as caught:
        inject_proxy(workload(annotation="a, b"), "http://p", "", "")
    assert str(caught.value) == 'requested injection for non-existent container: " b"'


def cvo(env: list[JSON] | None = None) -> JSON:
    container: JSON = {"name": "cluster-version-operator"}
    if env is not None:
        container["env"] = env
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "cluster-version-operator", "namespace": "openshift-cluster-version"},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }


def cvo_env(obj: JSON) -> list[JSON]:
    env: list[JSON] = obj["spec"]["template"]["spec"]["containers"][0]["env"]
    return env


def test_the_cvo_deployment_reaches_the_api_server_through_the_internal_load_balancer() -> None:
    out = cvo_service_env(
        cvo([{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"}, {"name": "A", "value": "a"}]),
        "https://api-int.example.com:6443",
    )
    assert cvo_env(out) == [
        {"name": "KUBERNETES_SERVICE_HOST", "value": "api-int.example.com"},
        {"name": "A", "value": "a"},
        {"name": "KUBERNETES_SERVICE_PORT", "value": "6443"},
    ]


def test_a_url_without_a_port_gives_443() -> None:
    assert cvo_env(cvo_service_env(cvo(), "https://api-int.example.com")) == [
        {"name": "KUBERNETES_SERVICE_HOST", "value": "api-int.example.com"},
        {"name": "KUBERNETES_SERVICE_PORT", "value": "443"},
    ]


@pytest.mark.parametrize("url", [None, ""])
def test_no_infrastructure_url_substitutes_nothing(url: str | None) -> None:
    obj = cvo()
    assert cvo_service_env(obj, url) is obj


def test_another_deployment_is_not_the_cvo() -> None:
    other = workload()
    assert cvo_service_env(other, "https://api-int:6443") is other


def test_an_unparsable_internal_url_fails_the_task_with_go_words() -> None:
    with pytest.raises(ApplyProblem, match=r'^parse "https://api\\x7f": net/url: invalid control character in URL$'):
        cvo_service_env(cvo(), "https://api\x7f")


@pytest.mark.parametrize(
    ("url", "host", "port"),
    [
        ("https://[fd00::1]:6443", "fd00::1", "6443"),
        ("https://[fd00::1]", "fd00::1", ""),
        ("https://user@api:443/path", "api", "443"),
        ("https://API.Example.com", "API.Example.com", ""),
        ("https://api:", "api", ""),
    ],
)
def test_host_and_port_are_split_as_go_splits_them(url: str, host: str, port: str) -> None:
    assert split_host_port(url) == (host, port)


def tls_config_map(**data: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "annotations": {"config.openshift.io/inject-tls": "true"}},
        "data": data,
    }


OPERATOR_CONFIG = (
    "apiVersion: operator.openshift.io/v1alpha1\nkind: GenericOperatorConfig\nservingInfo:\n  bindAddress: :8443\n"
)
INTERMEDIATE = TLSSettings("VersionTLS12", ("TLS_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"))


def test_the_tls_profile_is_set_in_operator_configs_and_other_values_keep_their_text() -> None:
    out = inject_tls(tls_config_map(**{"config.yaml": OPERATOR_CONFIG, "other": "kind: Something\n"}), INTERMEDIATE)
    config = json.loads(out["data"]["config.yaml"])
    assert config["servingInfo"] == {
        "bindAddress": ":8443",
        "minTLSVersion": "VersionTLS12",
        "cipherSuites": ["TLS_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
    }
    assert out["data"]["other"] == "kind: Something\n"
    assert inject_tls(out, INTERMEDIATE) is out, "a value that already holds the profile keeps its text"


def test_no_profile_clears_the_tls_fields() -> None:
    set_ = inject_tls(tls_config_map(**{"config.yaml": OPERATOR_CONFIG}), INTERMEDIATE)
    cleared = inject_tls(set_, None)
    assert json.loads(cleared["data"]["config.yaml"])["servingInfo"] == {"bindAddress": ":8443"}


def test_an_unannotated_config_map_is_left_alone() -> None:
    obj = tls_config_map(**{"config.yaml": OPERATOR_CONFIG})
    obj["metadata"]["annotations"] = {}
    assert inject_tls(obj, INTERMEDIATE) is obj


def test_a_value_that_is_not_a_document_keeps_its_text() -> None:
    obj = tls_config_map(**{"bad": "{unclosed: [", "config.yaml": OPERATOR_CONFIG})
    assert inject_tls(obj, INTERMEDIATE)["data"]["bad"] == "{unclosed: ["


def api_server(profile: JSON | None) -> JSON:
    return {"apiVersion": "config.openshift.io/v1", "kind": "APIServer", "spec": {"tlsSecurityProfile": profile}}


def test_the_api_servers_profile_in_go_names_without_the_suites_go_lacks() -> None:
    intermediate = tls_settings(api_server({"type": "Intermediate", "intermediate": {}}))
    assert intermediate is not None and intermediate.min_tls_version == "VersionTLS12"
    assert intermediate.cipher_suites[:4] == (
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    )
    assert not [s for s in intermediate.cipher_suites if "DHE_RSA" in s and "ECDHE" not in s], "no DHE suite"
    assert tls_settings(api_server(None)) == intermediate, "no profile is Intermediate"
    assert tls_settings(api_server({"type": "Modern"})) == TLSSettings(
        "VersionTLS13", ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
    )
    old = tls_settings(api_server({"type": "Old"}))
    assert old is not None and old.min_tls_version == "VersionTLS10"
    assert "TLS_RSA_WITH_3DES_EDE_CBC_SHA" in old.cipher_suites


def test_a_custom_profile_and_no_api_server() -> None:
    custom = {"type": "Custom", "custom": {"minTLSVersion": "VersionTLS11", "ciphers": ["ECDHE-RSA-AES128-SHA", "x"]}}
    assert tls_settings(api_server(custom)) == TLSSettings("VersionTLS11", ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",))
    assert tls_settings(None) is None


def test_a_profile_of_the_wrong_type_is_one_line() -> None:
    with pytest.raises(ApplyProblem, match=r"^spec.tlsSecurityProfile: expected an object, found string$"):
        tls_settings(api_server("Modern"))  # type: ignore[arg-type]
