"""status.clusterversion.workermetrics: the sync worker's series as a scrape shows them."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from status.clusterversion.workermetrics import SyncWorkerCollector
from syncworker.channel import PayloadCounts


def test_the_sync_workers_metrics_keep_every_version_seen() -> None:
    """`cluster_version_payload{version,type}` is N applied and M - N pending, by version as the
    last report of each said; `cluster_operator_payload_errors{version}` counts failed tries."""
    counts = {"4.99.0": PayloadCounts(19, 0), "4.99.1": PayloadCounts(14, 6)}
    registry = CollectorRegistry()
    registry.register(SyncWorkerCollector(lambda: counts, lambda: {"4.99.1": 3}))
    text = generate_latest(registry).decode()
    assert 'cluster_version_payload{type="applied",version="4.99.0"} 19.0' in text
    assert 'cluster_version_payload{type="pending",version="4.99.0"} 0.0' in text
    assert 'cluster_version_payload{type="applied",version="4.99.1"} 14.0' in text
    assert 'cluster_version_payload{type="pending",version="4.99.1"} 6.0' in text
    assert 'cluster_operator_payload_errors{version="4.99.1"} 3.0' in text
    assert "# TYPE cluster_operator_payload_errors gauge" in text  # upstream's are gauges
