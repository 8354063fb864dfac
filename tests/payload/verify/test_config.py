"""Where verification gets its keys, stores and signatures from: cluster objects → configuration
or one clear problem (pure; `load_config` only lists and gets these objects)."""

from __future__ import annotations

from typing import Any

from payload.verify.config import CONFIG_ANNOTATION, SIGNATURES_LABEL, Store, config_from_objects

NS = "openshift-config-managed"
KEY = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n...\n-----END PGP PUBLIC KEY BLOCK-----\n"


def configmap(name: str, data: dict[str, str] | None = None, *, config: bool = False, signatures: bool = False) -> Any:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if config:
        meta["annotations"] = {CONFIG_ANNOTATION: ""}
    if signatures:
        meta["labels"] = {SIGNATURES_LABEL: ""}
    return {"metadata": meta, "data": data or {}}


def cv(stores: Any) -> Any:
    return {"metadata": {"name": "version"}, "spec": {"signatureStores": stores}}


RELEASE = configmap(
    "release-verification",
    {
        "verifier-public-key-redhat": KEY,
        "verifier-public-key-beta": KEY,
        "store-openshift-official-release": "https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release",
        "store-b-mirror": "http://mirror.example.com/sigs",
        "unrelated": "ignored",
    },
    config=True,
)


def test_keyrings_stores_and_signature_configmaps() -> None:
    sigs = configmap("sha256-abc", signatures=True)
    config = config_from_objects([configmap("other"), RELEASE, sigs], None, NS)
    assert config.problem == ""
    assert config.source == f"ConfigMap {NS}/release-verification"
    assert list(config.keyrings) == ["verifier-public-key-beta", "verifier-public-key-redhat"]
    assert config.stores == (
        Store("store-b-mirror", "http://mirror.example.com/sigs"),
        Store(
            "store-openshift-official-release",
            "https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release",
        ),
    )
    assert config.signature_configmaps == (sigs,)


def test_the_clusterversion_signature_stores_replace_the_configmap_stores() -> None:
    config = config_from_objects([RELEASE], cv([{"url": "https://a.example/s"}, {"url": "http://b.example"}]), NS)
    assert config.stores == (
        Store("spec.signatureStores[0]", "https://a.example/s"),
        Store("spec.signatureStores[1]", "http://b.example"),
    )
    assert config_from_objects([RELEASE], cv([]), NS).stores == config_from_objects([RELEASE], None, NS).stores


def test_the_first_annotated_configmap_by_name_is_used() -> None:
    second = configmap("z-verification", {"verifier-public-key-z": KEY}, config=True)
    assert config_from_objects([second, RELEASE], None, NS).source == f"ConfigMap {NS}/release-verification"


def test_problems_are_one_clear_sentence() -> None:
    sigs = configmap("sha256-abc", signatures=True)
    assert config_from_objects([sigs], None, NS).problem == f"no ConfigMap in {NS} is annotated {CONFIG_ANNOTATION}"
    # signatures published in ConfigMaps are still found without a configuration
    assert config_from_objects([sigs], None, NS).signature_configmaps == (sigs,)
    no_keys = configmap("release-verification", {"store-a": "https://a.example"}, config=True)
    assert config_from_objects([no_keys], None, NS).problem == (
        f"ConfigMap {NS}/release-verification has no verifier-public-key-* keyring"
    )
    bad_store = configmap("release-verification", {"verifier-public-key-a": KEY, "store-a": "ftp://x"}, config=True)
    assert config_from_objects([bad_store], None, NS).problem == (
        f"ConfigMap {NS}/release-verification key store-a 'ftp://x' is not an http(s) URL"
    )
    assert config_from_objects([RELEASE], cv([{"url": "quay.io/sigs"}]), NS).problem == (
        "ClusterVersion spec.signatureStores[0].url 'quay.io/sigs' is not an http(s) URL"
    )
    assert config_from_objects([RELEASE], cv(["https://a.example"]), NS).problem == (
        "ClusterVersion spec.signatureStores[0].url '' is not an http(s) URL"
    )
    assert config_from_objects([RELEASE], cv("https://a.example"), NS).problem == (
        "ClusterVersion spec.signatureStores is not a list"
    )
