"""The available-updates metrics: names, labels and values."""

from __future__ import annotations

from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from updateservice.metrics import UpdatesCollector
from updateservice.poller import UpdatesState
from updateservice.retrieval import succeeded

AT = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(state: UpdatesState | None, cv: dict[str, object] | None) -> Samples:
    registry = CollectorRegistry()
    registry.register(UpdatesCollector(lambda: state, lambda: cv))
    text = generate_latest(registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_nothing_before_the_first_attempt() -> None:
    assert scrape(None, {"status": {}}) == {}


def test_retrieval_timestamp_and_recommended_transitions() -> None:
    state = UpdatesState("", "stable-4.16", succeeded(), sync_or_config_change=AT)
    cv = {"status": {"conditionalUpdates": [{
        "release": {"version": "4.16.9", "image": "x"},
        "conditions": [{"type": "Recommended", "status": "Unknown", "reason": "EvaluationFailed",
                        "lastTransitionTime": "2026-11-23T11:00:00Z"}]}]}}
    assert scrape(state, cv) == {
        ("cluster_version_operator_update_retrieval_timestamp_seconds", (("name", ""),)): AT.timestamp(),
        ("cluster_version_conditional_update_condition_seconds",
         (("condition", "Recommended"), ("reason", "EvaluationFailed"), ("status", "Unknown"), ("version", "4.16.9"))):
            AT.timestamp() - 3600,
    }


def test_the_available_updates_upstream_label_names_the_service_asked() -> None:
    from payload.release import Release
    from status.clusterversion.metrics import WriteCounts, families

    cv = {"metadata": {"name": "version"}, "spec": {"channel": "stable-4.16", "upstream": "http://spec/graph"},
          "status": {"availableUpdates": [{"version": "4.16.5", "image": "x"}]}}

    def label(update_service: str, spec_upstream: str | None) -> str:
        doc = {**cv, "spec": {**cv["spec"], "upstream": spec_upstream}}
        (family,) = [f for f in families(doc, [], Release("4.16.3", "i"), WriteCounts(), (), update_service)
                     if f.name == "cluster_version_available_updates"]
        return str(family.samples[0].labels["upstream"])

    assert label("http://flag/graph", "http://spec/graph") == "http://flag/graph"
    assert label("", "http://spec/graph") == "http://spec/graph"
    assert label("", None) == "<default>"


def test_only_the_recommended_condition_is_reported() -> None:
    cv = {"status": {"conditionalUpdates": [{
        "release": {"version": "4.16.9", "image": "x"},
        "conditions": [
            {"type": "Recommended", "status": "False", "reason": "Risky",
             "lastTransitionTime": "2026-11-23T11:00:00Z"},
            {"type": "Other", "status": "True", "reason": "X", "lastTransitionTime": "2026-11-23T10:00:00Z"},
        ]}]}}
    got = scrape(None, cv)
    assert [dict(labels)["condition"] for _, labels in got] == ["Recommended"]


RISKS_CV = {"status": {"conditionalUpdateRisks": [
    {"name": "ApplyingRisk", "conditions": [{"type": "Applies", "status": "True", "reason": "Alert:firing"}]},
    {"name": "NotApplying", "conditions": [{"type": "Applies", "status": "False", "reason": "NotMatch"}]},
    {"name": "Unsure", "conditions": [{"type": "Applies", "status": "Unknown", "reason": "EvaluationFailed"}]},
    {"name": "NoCondition", "conditions": []},
]}}


def test_risk_conditions_behind_the_accept_risks_gate() -> None:
    registry = CollectorRegistry()
    registry.register(UpdatesCollector(lambda: None, lambda: RISKS_CV, lambda: True))
    text = generate_latest(registry).decode()
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for family in text_string_to_metric_families(text) for s in family.samples}
    risk = {dict(labels)["risk"]: (dict(labels)["reason"], value) for (name, labels), value in got.items()}
    assert {name for name, _ in got} == {"cluster_version_risk_conditions"}
    assert risk == {
        "ApplyingRisk": ("Alert:firing", 1.0),
        "NotApplying": ("NotMatch", 0.0),
        "Unsure": ("EvaluationFailed", -1.0),
    }
    assert scrape(None, RISKS_CV) == {}, "the gate is off by default"
