"""Where the verifier's keys and signatures come from: ConfigMaps and the ClusterVersion.

`config_from_objects` is pure (objects in, configuration or a clear problem out); `load_config`
reads the objects, fresh for every verification, so a changed ConfigMap applies at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from cvo_py.runtime.kube import CLUSTERVERSIONS, CONFIGMAPS, ApiError, KubeClient

JSON = dict[str, Any]

CONFIG_ANNOTATION = "release.openshift.io/verification-config-map"
SIGNATURES_LABEL = "release.openshift.io/verification-signatures"
KEYRING_PREFIX = "verifier-public-key-"
STORE_PREFIX = "store-"
DEFAULT_NAMESPACE = "openshift-config-managed"


@dataclass(frozen=True)
class Store:
    name: str  # "store-openshift-official-release" or "spec.signatureStores[0]"
    url: str


@dataclass(frozen=True)
class VerifierConfig:
    source: str = ""
    keyrings: dict[str, str] = field(default_factory=dict)  # key name → armored certificates
    stores: tuple[Store, ...] = ()
    signature_configmaps: tuple[JSON, ...] = ()
    # Non-empty when nothing can be verified; the text follows "verification is not possible: ".
    problem: str = ""


def _store_url(url: Any, where: str) -> str:
    text = str(url or "").strip()
    parsed = urlparse(text)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"{where} {text!r} is not an http(s) URL")
    return text


def config_from_objects(configmaps: list[JSON], clusterversion: JSON | None, namespace: str) -> VerifierConfig:
    signatures = tuple(cm for cm in configmaps if SIGNATURES_LABEL in ((cm.get("metadata") or {}).get("labels") or {}))
    annotated = sorted(
        (cm for cm in configmaps if CONFIG_ANNOTATION in ((cm.get("metadata") or {}).get("annotations") or {})),
        key=lambda cm: str(cm["metadata"].get("name")),
    )
    if not annotated:
        return VerifierConfig(
            signature_configmaps=signatures,
            problem=f"no ConfigMap in {namespace} is annotated {CONFIG_ANNOTATION}",
        )
    cm = annotated[0]
    source = f"ConfigMap {namespace}/{cm['metadata']['name']}"
    data = {str(k): str(v) for k, v in (cm.get("data") or {}).items()}
    keyrings = {k: v for k, v in sorted(data.items()) if k.startswith(KEYRING_PREFIX)}
    if not keyrings:
        return VerifierConfig(
            source=source, signature_configmaps=signatures, problem=f"{source} has no {KEYRING_PREFIX}* keyring"
        )
    try:
        stores = [
            Store(k, _store_url(v, f"{source} key {k}")) for k, v in sorted(data.items()) if k.startswith(STORE_PREFIX)
        ]
        # The ClusterVersion's stores replace the defaults, as the API documents.
        spec_stores = ((clusterversion or {}).get("spec") or {}).get("signatureStores") or []
        if spec_stores:
            if not isinstance(spec_stores, list):
                raise ValueError("ClusterVersion spec.signatureStores is not a list")
            stores = [
                Store(
                    f"spec.signatureStores[{i}]",
                    _store_url(
                        s.get("url") if isinstance(s, dict) else None, f"ClusterVersion spec.signatureStores[{i}].url"
                    ),
                )
                for i, s in enumerate(spec_stores)
            ]
    except ValueError as exc:
        return VerifierConfig(source=source, keyrings=keyrings, signature_configmaps=signatures, problem=str(exc))
    return VerifierConfig(source=source, keyrings=keyrings, stores=tuple(stores), signature_configmaps=signatures)


def load_config(client: KubeClient, namespace: str = DEFAULT_NAMESPACE, cv_name: str = "version") -> VerifierConfig:
    try:
        configmaps = list(client.list(CONFIGMAPS, namespace).get("items") or [])
    except ApiError as exc:
        if not exc.is_not_found():
            raise
        configmaps = []
    try:
        cv: JSON | None = client.get(CLUSTERVERSIONS, cv_name)
    except ApiError as exc:
        if not exc.is_not_found():
            raise
        cv = None
    return config_from_objects(configmaps, cv, namespace)
