"""What the process takes from the FeatureGate (pure): the gates of its own version, its feature set,
and how a later FeatureGate differs from it in what the process uses."""

from __future__ import annotations

from typing import Any

import pytest

from status.clusterversion.featuregates import Features, changed, enabled, features


def featuregate(feature_set: str | None, gates: dict[str, list[str]]) -> dict[str, Any]:
    """A FeatureGate: its feature set (None: no spec.featureSet) and the gates enabled by version."""
    spec = {} if feature_set is None else {"featureSet": feature_set}
    entries = [{"version": v, "enabled": [{"name": g} for g in names], "disabled": []} for v, names in gates.items()]
    return {"metadata": {"name": "cluster"}, "spec": spec, "status": {"featureGates": entries}}


def test_only_the_entry_of_the_running_version_counts() -> None:
    fg = featuregate("TechPreviewNoUpgrade", {"4.14.0": ["Old"], "4.14.1": ["A", "B"]})
    assert enabled(fg, "4.14.1") == {"A", "B"}
    assert enabled(fg, "4.15.0") == frozenset()
    assert features(fg, "4.14.1") == Features("TechPreviewNoUpgrade", frozenset({"A", "B"}))
    assert features(featuregate(None, {"4.14.1": ["A"]}), "4.14.1") == Features("", frozenset({"A"}))


@pytest.mark.parametrize("featuregate_object", [None, {}, {"spec": None}, {"spec": {"featureSet": 7}}, {"status": []}])
def test_no_or_odd_featuregate_is_default_with_no_gates(featuregate_object: Any) -> None:
    assert features(featuregate_object, "4.14.1") == Features()


@pytest.mark.parametrize(
    "before,after,told",
    [
        (Features(), Features(), None),
        (Features("", frozenset({"A"})), Features("", frozenset({"A"})), None),
        (Features(), Features("TechPreviewNoUpgrade"), "feature set Default is now TechPreviewNoUpgrade"),
        (Features("CustomNoUpgrade"), Features(), "feature set CustomNoUpgrade is now Default"),
        (Features("", frozenset({"A"})), Features("", frozenset({"B", "C"})), "enabled B, C; disabled A"),
        (
            Features("", frozenset()),
            Features("TechPreviewNoUpgrade", frozenset({"ClusterUpdateAcceptRisks"})),
            "feature set Default is now TechPreviewNoUpgrade; enabled ClusterUpdateAcceptRisks",
        ),
    ],
)
def test_what_changed_is_told_in_one_line(before: Features, after: Features, told: str | None) -> None:
    assert changed(before, after) == told
