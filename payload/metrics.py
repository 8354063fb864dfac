"""Payload retrieval and release verification metrics.

Upstream has no retrieval metrics; the names follow its `cluster_version_*` prefix. Everything is
registered on the registry the process passes in, never on the global default registry.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

# Retrievals take seconds (already fetched) to minutes (slow registries, our overall deadline).
RETRIEVAL_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 180, 240, 300)
FETCH_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class PayloadMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.retrieval_duration = Histogram(
            "cluster_version_payload_retrieval_duration_seconds",
            "Time to retrieve a release payload (verification, version Pod, manifests in place), by result.",
            ["result"],
            buckets=RETRIEVAL_BUCKETS,
            registry=self.registry,
        )
        self.retrieval_failures = Counter(
            "cluster_version_payload_retrieval_failures",
            "Failed payload retrievals by reason (the kubelet's or the Pod's reason, or the retrieval step).",
            ["reason"],
            registry=self.registry,
        )
        self.verifications = Counter(
            "cluster_version_release_verifications",
            "Release image verifications, each counted once by outcome: verified, cached, failed, "
            "not_configured, or forced (failed or not configured, and the forced update went on).",
            ["outcome"],
            registry=self.registry,
        )
        self.store_fetch_duration = Histogram(
            "cluster_version_signature_store_fetch_duration_seconds",
            "Latency of one signature fetch from a signature store.",
            ["store"],
            buckets=FETCH_BUCKETS,
            registry=self.registry,
        )
        self.store_fetch_errors = Counter(
            "cluster_version_signature_store_fetch_errors",
            "Failed signature fetches by store and error kind (timeout, connection, http_<code>, garbage).",
            ["store", "error"],
            registry=self.registry,
        )
