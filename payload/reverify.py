"""A retrieval that failed verification is tried again as soon as what verification reads changes,
not a retry interval later: a ConfigMap of the verification namespace that configures verification
or holds signatures (a signature just published, a key added), or the ClusterVersion's
spec.signatureStores. The failure stays visible meanwhile."""

from __future__ import annotations

import logging
from typing import Any

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import JSON
from payload import acceptance as acc
from payload.acceptance import ReleaseAcceptance
from payload.coordinator import RetrievalCoordinator
from payload.verify.config import CONFIG_ANNOTATION, SIGNATURES_LABEL

log = logging.getLogger(__name__)


def slim_configmap(obj: JSON) -> JSON:
    """Verification ConfigMaps are watched for changes only: keep what identifies them."""
    meta = obj.get("metadata") or {}
    keep = ("name", "namespace", "resourceVersion", "annotations", "labels")
    return {"metadata": {k: meta[k] for k in keep if k in meta}}


def is_verification_input(obj: JSON | None) -> bool:
    meta = (obj or {}).get("metadata") or {}
    return CONFIG_ANNOTATION in (meta.get("annotations") or {}) or SIGNATURES_LABEL in (meta.get("labels") or {})


def failed_verification(final: ReleaseAcceptance) -> bool:
    """Only failures of verification itself are retried: a signature we just stored is a change too."""
    return acc.NOT_VERIFIED in final.message


def _signature_stores(cv: JSON | None) -> Any:
    return ((cv or {}).get("spec") or {}).get("signatureStores")


def retry_on_verification_changes(
    coordinator: RetrievalCoordinator, configmaps: Informer, clusterversions: Informer
) -> None:
    """Tell `coordinator` to retry a failed verification when `configmaps` (those of the
    verification namespace) or spec.signatureStores in `clusterversions` change."""

    def retry(why: str) -> None:
        if coordinator.retry_failed(failed_verification):
            log.info("Release verification input changed (%s): retrying the failed payload retrieval now", why)

    def on_configmap(_type: str, obj: JSON, old: JSON | None) -> None:
        if not configmaps.has_synced:
            return  # the first list is what the first attempt reads, not a change
        if is_verification_input(obj) or is_verification_input(old):
            retry(f"ConfigMap {(obj.get('metadata') or {}).get('name')} changed")

    def on_clusterversion(_type: str, obj: JSON, old: JSON | None) -> None:
        if old is not None and _signature_stores(obj) != _signature_stores(old):
            retry("spec.signatureStores changed")

    configmaps.add_handler(on_configmap)
    clusterversions.add_handler(on_clusterversion)
