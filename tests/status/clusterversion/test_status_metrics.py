"""CVO metric families computed from plain ClusterVersion / ClusterOperator dicts."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from payload.release import Release
from status.clusterversion import metrics as sm

RUNNING = Release("4.14.2", "img-b")


class _Fixed(Collector):
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterable[Metric]:
        return self.families


def samples(families: list[Metric]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in families:
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def key(metric: str, /, **labels: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return (metric, tuple(sorted(labels.items())))


def ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def co(name: str, version: str, available: str | None = "True", reason: str = "AsExpected") -> dict[str, Any]:
    conditions = [
        {"type": "Degraded", "status": "False", "reason": "AsExpected"},
        {"type": "Upgradeable", "status": "Unknown", "reason": "NoData"},
    ]
    if available is not None:
        conditions.append({"type": "Available", "status": available, "reason": reason})
    return {
        "metadata": {
            "name": name,
            "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"},
        },
        "status": {"versions": [{"name": "operator", "version": version}], "conditions": conditions},
    }


CV: dict[str, Any] = {
    "metadata": {"name": "version", "creationTimestamp": "2024-01-01T00:00:00Z"},
    "spec": {"channel": "stable-4.14", "desiredUpdate": {"version": "4.14.3", "image": "img-c"}},
    "status": {
        "desired": {"version": "4.14.2", "image": "img-b"},
        "history": [
            {
                "state": "Partial",
                "version": "4.14.2",
                "image": "img-b",
                "startedTime": "2024-03-01T00:00:00Z",
                "completionTime": None,
            },
            {
                "state": "Completed",
                "version": "4.14.1",
                "image": "img-a",
                "startedTime": "2024-02-01T00:00:00Z",
                "completionTime": "2024-02-01T01:00:00Z",
            },
            {
                "state": "Completed",
                "version": "4.14.0",
                "image": "img-0",
                "startedTime": "2024-01-01T00:00:00Z",
                "completionTime": "2024-01-01T01:00:00Z",
            },
        ],
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "lastTransitionTime": "2024-01-01T01:00:00Z",
                "message": "Done applying 4.14.1",
            },
            {
                "type": "Failing",
                "status": "True",
                "reason": "ClusterOperatorDegraded",
                "lastTransitionTime": "2024-03-02T00:00:00Z",
            },
            {"type": "Progressing", "status": "True", "lastTransitionTime": "2024-03-01T00:00:00Z"},
            {"type": "RetrievedUpdates", "status": "Unknown", "lastTransitionTime": "2024-01-01T00:00:00Z"},
        ],
        "capabilities": {"enabledCapabilities": ["Console", "baremetal"], "knownCapabilities": ["Console"]},
        "availableUpdates": [{"version": "4.14.3", "image": "img-c"}],
    },
}


def test_cluster_version_types() -> None:
    got = samples([sm.cluster_version_family(CV, RUNNING)])
    assert got == {
        key("cluster_version", type="current", version="4.14.2", image="img-b", from_version="4.14.1"): 0.0,
        key("cluster_version", type="initial", version="4.14.0", image="img-0", from_version=""): ts(
            "2024-01-01T00:00:00Z"
        ),
        key("cluster_version", type="cluster", version="4.14.2", image="img-b", from_version="4.14.0"): ts(
            "2024-01-01T00:00:00Z"
        ),
        key("cluster_version", type="completed", version="4.14.1", image="img-a", from_version="4.14.0"): ts(
            "2024-02-01T01:00:00Z"
        ),
        key("cluster_version", type="desired", version="4.14.3", image="img-c", from_version="4.14.1"): ts(
            "2024-03-02T00:00:00Z"
        ),
        key("cluster_version", type="failure", version="4.14.3", image="img-c", from_version="4.14.1"): ts(
            "2024-03-02T00:00:00Z"
        ),
        key("cluster_version", type="updating", version="4.14.2", image="img-b", from_version="4.14.1"): ts(
            "2024-03-01T00:00:00Z"
        ),
    }


def test_operator_and_cluster_version_series() -> None:
    counts = sm.WriteCounts(
        writes=7,
        unchanged=3,
        conflicts=2,
        failures=1,
        rejections={"status.capabilities.enabledCapabilities": 4, "status.history.image": 1},
        pruned={"enabledCapabilities": ("Build", "MachineAPI")},
    )
    operators = [
        co("etcd", "4.14.2"),
        co("dns", "4.14.1", available="False", reason="Restarting"),
        co("bare", "4.14.2", available=None),
    ]
    cv = {**CV, "spec": {**CV["spec"], "capabilities": {"baselineCapabilitySet": "None"}}}
    got = samples(sm.families(cv, operators, RUNNING, counts))
    assert got[key("cluster_operator_up", name="etcd", version="4.14.2", reason="AsExpected")] == 1.0
    assert got[key("cluster_operator_up", name="dns", version="4.14.1", reason="Restarting")] == 0.0
    assert (
        got[key("cluster_operator_up", name="bare", version="4.14.2", reason="NoAvailableCondition")] == 0.0
    )
    assert got[key("cluster_operator_up", name="version", version="4.14.1", reason="")] == 1.0
    assert (
        got[key("cluster_operator_conditions", name="dns", condition="Degraded", reason="AsExpected")] == 0.0
    )
    assert (
        got[
            key(
                "cluster_operator_conditions",
                name="version",
                condition="Failing",
                reason="ClusterOperatorDegraded",
            )
        ]
        == 1.0
    )
    # Unknown conditions are skipped.
    assert not [k for k in got if dict(k[1]).get("condition") in ("Upgradeable", "RetrievedUpdates")]
    # Pruned names are still enabled capabilities.
    assert got[key("cluster_version_capability", name="Build")] == 1.0
    assert got[key("cluster_version_capability", name="Console")] == 1.0
    assert got[key("cluster_version_capability", name="NodeTuning")] == 0.0  # known, not enabled
    assert key("cluster_version_capability", name="OperatorLifecycleManager") not in got  # not in 4.14
    assert got[key("cluster_version_payload", version="4.14.2", type="applied")] == 2.0
    assert got[key("cluster_version_payload", version="4.14.2", type="pending")] == 1.0
    assert got[key("cluster_version_available_updates", upstream="<default>", channel="stable-4.14")] == 1.0
    assert got[key("cluster_version_status_writes_total")] == 7.0
    assert got[key("cluster_version_status_write_unchanged_total")] == 3.0
    assert got[key("cluster_version_status_write_conflicts_total")] == 2.0
    assert got[key("cluster_version_status_write_failures_total")] == 1.0
    assert (
        got[
            key(
                "cluster_version_status_write_rejections_total",
                field="status.capabilities.enabledCapabilities",
            )
        ]
        == 4.0
    )
    assert (
        got[key("cluster_version_status_pruned_capabilities", field="enabledCapabilities", name="MachineAPI")]
        == 1.0
    )


def test_missing_cluster_version() -> None:
    got = samples(sm.families(None, [], RUNNING, sm.WriteCounts()))
    assert got[key("cluster_operator_up", name="version", version="", reason="ClusterVersionNotFound")] == 0.0
    assert (
        got[
            key(
                "cluster_operator_conditions",
                name="version",
                condition="Available",
                reason="ClusterVersionNotFound",
            )
        ]
        == 0.0
    )
    assert not [k for k in got if k[0] == "cluster_version"]


def test_exposition_renders_all_names() -> None:
    registry = CollectorRegistry()
    registry.register(_Fixed(sm.families(CV, [co("etcd", "4.14.2")], RUNNING, sm.WriteCounts(writes=1))))
    text = generate_latest(registry).decode()
    for name in (
        "cluster_version{",
        "cluster_version_capability{",
        "cluster_operator_up{",
        "cluster_operator_conditions{",
        "cluster_version_payload{",
        "cluster_version_status_writes_total 1.0",
    ):
        assert name in text, name
