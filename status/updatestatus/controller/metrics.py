"""The Update Status Controller's Prometheus metrics: gauges read from its state at scrape time,
and the counters and histograms it updates as it writes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from status.updatestatus.controller.alerts import AlertsPoller


class ControllerState(Protocol):
    """What the gauges read from the controller at scrape time."""

    counts: Mapping[tuple[str, str], int]
    last_publish: float | None
    alerts: AlertsPoller | None

    @property
    def omitted(self) -> tuple[str, ...]: ...

    @property
    def configmap_exists(self) -> bool | None: ...

    @property
    def sizes(self) -> Mapping[str, int]: ...


class Metrics(Collector):
    """Scrape-time gauges from the controller's state, plus counters/histograms it updates."""

    def __init__(self, controller: ControllerState, registry: CollectorRegistry) -> None:
        self.controller = controller
        self.writes = Counter(
            "update_status_controller_configmap_writes",
            "Writes (patches, shard creations) of the ConfigMap API, by result.",
            ["result"],
            registry=registry,
        )
        self.reaction = Histogram(
            "update_status_controller_reaction_seconds",
            "From the first unprocessed change of a watched object to the ConfigMap writes that reflect it.",
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
            registry=registry,
        )
        self.sync_seconds = Histogram(
            "update_status_controller_sync_seconds",
            "Time to recompute, encode and publish the insights once.",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
            registry=registry,
        )
        registry.register(self)

    def collect(self) -> Iterator[Metric]:
        c = self.controller
        insights = GaugeMetricFamily(
            "update_status_controller_insights",
            "Insights currently computed, by type and assessment (nodes and operators: Updating reason; "
            "health: impact level).",
            labels=["type", "assessment"],
        )
        for (kind, assessment), count in sorted(c.counts.items()):
            insights.add_metric([kind, assessment], count)
        yield insights
        sizes = GaugeMetricFamily(
            "update_status_controller_configmap_bytes",
            "Size of each ConfigMap's data after the last sync (the API server's limit is 1 MiB).",
            labels=["configmap"],
        )
        for name, size in sorted(c.sizes.items()):
            sizes.add_metric([name], size)
        yield sizes
        yield GaugeMetricFamily(
            "update_status_controller_insights_omitted",
            "Insights left out of the ConfigMap API because a ConfigMap would exceed its size limit.",
            value=len(c.omitted),
        )
        if c.last_publish is not None:
            yield GaugeMetricFamily(
                "update_status_controller_last_publish_timestamp_seconds",
                "When the ConfigMap API last matched the computed insights (after a sync that wrote or found "
                "nothing to write), Unix seconds.",
                value=c.last_publish,
            )
        if c.alerts is not None:
            yield GaugeMetricFamily(
                "update_status_controller_alerts_malformed",
                "Alerts of the last read of the alerts API skipped as malformed (the others are shown).",
                value=c.alerts.reading.malformed,
            )
        yield GaugeMetricFamily(
            "update_status_controller_configmap_present",
            "1 when the ConfigMap API exists (an administrator opted in), else 0.",
            value=1 if c.configmap_exists else 0,
        )
