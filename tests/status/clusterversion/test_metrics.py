"""CVO metric families computed from plain ClusterVersion / ClusterOperator dicts."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
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
    assert not [k for k in got if k[0] in ("cluster_version_payload", "cluster_version_release_operators")]
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
    # Only the running release, as upstream reports it without a ClusterVersion.
    assert [k for k in got if k[0] == "cluster_version"] == [
        key("cluster_version", type="current", version="4.14.2", image="img-b", from_version="")
    ]


def test_exposition_renders_all_names() -> None:
    registry = CollectorRegistry()
    registry.register(_Fixed(sm.families(CV, [co("etcd", "4.14.2")], RUNNING, sm.WriteCounts(writes=1))))
    text = generate_latest(registry).decode()
    for name in (
        "cluster_version{",
        "cluster_version_capability{",
        "cluster_operator_up{",
        "cluster_operator_conditions{",
        "cluster_version_status_writes_total 1.0",
    ):
        assert name in text, name


def _cv(history: list[dict[str, Any]], **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "version", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {},
        "status": {"desired": {"version": "4.14.2", "image": "img-b"}, "history": history, **status},
    }


INSTALLED = {"state": "Completed", "version": "4.14.0", "image": "img-0", "completionTime": "2024-01-01T01:00:00Z"}


def test_cluster_series_counts_the_installation_as_completed() -> None:
    got = samples([sm.cluster_version_family(_cv([INSTALLED]), RUNNING)])
    assert got[key("cluster_version", type="cluster", version="4.14.2", image="img-b", from_version="4.14.0")] == ts(
        "2024-01-01T00:00:00Z"
    )
    partial = {**INSTALLED, "state": "Partial", "completionTime": None}
    got = samples([sm.cluster_version_family(_cv([partial]), RUNNING)])
    assert key("cluster_version", type="cluster", version="4.14.2", image="img-b", from_version="") in got


def test_current_is_the_running_release_and_its_payload_creation_time() -> None:
    # status.desired names another release (a new operator not yet writing its own): current does not.
    cv = _cv([INSTALLED])
    cv["status"]["desired"] = {"version": "4.14.3", "image": "img-c"}
    got = samples([sm.cluster_version_family(cv, RUNNING, payload_created=1700000000.0)])
    assert got[key("cluster_version", type="current", version="4.14.2", image="img-b", from_version="4.14.0")] == (
        1700000000.0
    )
    assert key("cluster_version", type="cluster", version="4.14.2", image="img-b", from_version="4.14.0") in got


def test_initial_without_history_and_desired_for_a_version_only_update() -> None:
    cv = _cv([])
    cv["spec"]["desiredUpdate"] = {"version": "4.14.3"}
    got = samples([sm.cluster_version_family(cv, RUNNING)])
    assert key("cluster_version", type="initial", version="", image="", from_version="") in got
    assert key("cluster_version", type="desired", version="4.14.3", image="", from_version="") in got
    cv["spec"]["desiredUpdate"] = {"version": "4.14.2", "image": "img-b"}  # the running one: not desired
    assert not [k for k in samples([sm.cluster_version_family(cv, RUNNING)]) if dict(k[1])["type"] == "desired"]


def test_version_up_only_while_available_is_true_or_false() -> None:
    for status, want in (("True", 1.0), ("False", 0.0), ("Unknown", None), (None, None)):
        conditions = [] if status is None else [{"type": "Available", "status": status, "reason": "R"}]
        got = samples(sm.families(_cv([INSTALLED], conditions=conditions), [], RUNNING, sm.WriteCounts()))
        found = {k: v for k, v in got.items() if k[0] == "cluster_operator_up" and dict(k[1])["name"] == "version"}
        if want is None:
            assert found == {}, status
        else:
            assert found == {key("cluster_operator_up", name="version", version="4.14.0", reason="R"): want}


def _configmap(**data: str) -> dict[str, Any]:
    return {"metadata": {"name": "x", "namespace": "openshift-config"}, "data": data}


def test_cluster_installer() -> None:
    def installer(state: sm.InstallerConfigMaps) -> dict[Any, float]:
        return samples([f for f in [sm.installer_family(state)] if f is not None])

    install = _configmap(version="v4.14.0", invoker="openshift-internal-ci/e2e")
    assert installer(sm.InstallerConfigMaps(True, install, _configmap(version="x"))) == {
        key("cluster_installer", type="openshift-install", version="v4.14.0", invoker="openshift-internal-ci/e2e"): 1.0
    }
    assert installer(sm.InstallerConfigMaps(True, None, _configmap(invoker="hive"))) == {
        key("cluster_installer", type="other", version="<missing>", invoker="hive"): 1.0
    }
    assert installer(sm.InstallerConfigMaps(True, None, None)) == {
        key("cluster_installer", type="", version="", invoker=""): 1.0
    }
    assert installer(sm.InstallerConfigMaps(False, install, None)) == {}, "not read yet: no series"


def test_condition_transitions_count_changes_appearances_and_removals() -> None:
    transitions = sm.ConditionTransitions()
    first = co("dns", "4.14.1")
    degraded = co("dns", "4.14.1")
    degraded["status"]["conditions"][0]["status"] = "True"
    without_upgradeable = co("dns", "4.14.1")
    del without_upgradeable["status"]["conditions"][1]
    transitions.observe("ADDED", first, None)  # not an update
    transitions.observe("MODIFIED", degraded, first)
    transitions.observe("MODIFIED", degraded, degraded)  # a relist of the same object
    transitions.observe("MODIFIED", without_upgradeable, degraded)  # Degraded back, Upgradeable gone
    transitions.observe("DELETED", first, None)
    got = samples([sm.transitions_family(transitions.counts())])
    assert got == {
        key("cluster_operator_condition_transitions", name="dns", condition="Degraded"): 2.0,
        key("cluster_operator_condition_transitions", name="dns", condition="Upgradeable"): 1.0,
    }


def test_payload_creation_time(tmp_path: Path) -> None:
    assert sm.payload_creation_time(str(tmp_path)) == 0.0
    refs = tmp_path / "release-manifests" / "image-references"
    refs.parent.mkdir()
    refs.write_text('{"kind": "ImageStream", "metadata": {"creationTimestamp": "2024-05-01T10:00:00Z"}}')
    assert sm.payload_creation_time(str(tmp_path)) == ts("2024-05-01T10:00:00Z")
    refs.write_text("not json")
    assert sm.payload_creation_time(str(tmp_path)) == 0.0


def test_capabilities_known_only_with_their_feature_gates_are_counted_as_status_says() -> None:
    """`cluster_version_capability` 0 for a feature-gated capability the status loop knew with the
    cluster's gates (TechPreview, DevPreview), 1 once enabled; without them it is not known."""
    running = Release("4.23.0", RUNNING.image)
    status = {**CV["status"], "capabilities": {"enabledCapabilities": ["Console"],
                                               "knownCapabilities": ["ClusterAPI", "Console"]}}
    cv = {**CV, "spec": {**CV["spec"], "capabilities": {"baselineCapabilitySet": "None",
                                                        "additionalEnabledCapabilities": ["Console"]}},
          "status": status}
    got = samples(sm.families(cv, [], running, sm.WriteCounts()))
    assert got[key("cluster_version_capability", name="ClusterAPI")] == 0.0
    assert got[key("cluster_version_capability", name="Console")] == 1.0
    assert key("cluster_version_capability", name="CompatibilityRequirements") not in got
