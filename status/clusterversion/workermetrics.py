"""The sync worker's metrics, computed at scrape time, with upstream's names and labels:
`cluster_version_payload{version,type="applied"|"pending"}` and
`cluster_operator_payload_errors{version}`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from syncworker.channel import PayloadCounts


def sync_worker_families(counts: Mapping[str, PayloadCounts], errors: Mapping[str, int]) -> list[Metric]:
    """`cluster_version_payload{version,type}`: manifests applied in the current pass of each
    version's payload and those pending (the total less them: at a pass's end, those the
    apply-time selection skipped), as the last report said; `cluster_operator_payload_errors{version}`:
    failed tries of manifests, retries included. Both keep the versions seen since the process
    started, as upstream's."""
    payload = GaugeMetricFamily(
        "cluster_version_payload",
        "Manifests of the payload of each version applied in its current pass (applied) and not yet (pending).",
        labels=["version", "type"],
    )
    for version in sorted(counts):
        payload.add_metric([version, "applied"], float(counts[version].applied))
        payload.add_metric([version, "pending"], float(counts[version].pending))
    failed = GaugeMetricFamily(
        "cluster_operator_payload_errors",
        "Failed tries of applying a manifest of the payload of each version, retries included.",
        labels=["version"],
    )
    for version in sorted(errors):
        failed.add_metric([version], float(errors[version]))
    return [payload, failed]


class SyncWorkerCollector(Collector):
    """The sync worker's metrics at scrape time, from its report channel and its applier."""

    def __init__(
        self, counts: Callable[[], Mapping[str, PayloadCounts]], errors: Callable[[], Mapping[str, int]]
    ) -> None:
        self._counts = counts
        self._errors = errors

    def collect(self) -> Iterable[Metric]:
        return sync_worker_families(self._counts(), self._errors())
