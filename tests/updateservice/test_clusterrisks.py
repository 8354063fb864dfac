"""In-cluster risks (the ClusterUpdateAcceptRisks gate) on plain data: which firing alerts are
risks and their exact texts, the bump targets of the Upgradeable risks, and the merge into the
graph's updates with the Recommended and Applies conditions that follow."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from updateservice import recommend
from updateservice.clusterrisks import ClusterRisk, alert_risks, checked, is_bump, merged
from updateservice.graph import sort_releases
from updateservice.semver import descending

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
RUNBOOK = "https://example.com/runbooks/X.md"


def alert(name: str, severity: str = "critical", state: str = "firing", active_at: str = "2026-11-23T10:00:00Z",
          **labels: str) -> dict[str, Any]:
    return {"labels": {"alertname": name, "severity": severity, **labels},
            "annotations": {"summary": f"{name} summary", "description": f"{name} description",
                            "runbook_url": RUNBOOK},
            "state": state, "activeAt": active_at, "value": "1e+00"}


def test_a_firing_critical_alert_is_a_risk_with_upstreams_texts() -> None:
    (risk,) = alert_risks([alert("EtcdDown")])
    assert (risk.name, risk.message, risk.url, risk.reason) == ("EtcdDown", "EtcdDown summary.", RUNBOOK,
                                                                "Alert:firing")
    assert risk.detail == ("critical alert EtcdDown firing, suggesting significant cluster issues worth "
                           f"investigating. EtcdDown summary The alert description is: EtcdDown description {RUNBOOK}")
    assert risk.since == datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("name", "severity", "labels", "impact"), [
    ("PodDisruptionBudgetAtLimit", "warning", {}, "which might slow node drains"),
    ("KubeNodeNotReady", "warning", {}, "which may slow workload redistribution during rolling node updates"),
    ("VMCannotBeEvicted", "warning", {}, "which may slow workload redistribution during rolling node updates"),
    ("SomeCheck", "warning", {"openShiftUpdatePrecheck": "true"},
     "suggesting issues worth investigating before updating the cluster"),
    ("PodDisruptionBudgetLimit", "critical", {"namespace": "ns1", "poddisruptionbudget": "pdb1"},
     "suggesting significant cluster issues worth investigating. Namespace=ns1, PodDisruptionBudget=pdb1"),
])
def test_each_selected_kind_of_alert_says_its_impact(name: str, severity: str, labels: dict[str, str],
                                                     impact: str) -> None:
    (risk,) = alert_risks([alert(name, severity, **labels)])
    assert risk.detail.startswith(f"{severity} alert {name} firing, {impact}. {name} summary The alert")


def test_pending_and_unselected_alerts_are_not_risks() -> None:
    assert alert_risks([
        alert("EtcdDown", state="pending"),
        alert("Watchdog", severity="none"),
        alert("SomeWarning", severity="warning"),
        alert("NotPrecheck", severity="warning", openShiftUpdatePrecheck="false"),
        "not an alert", {"labels": None}, {"state": "firing", "labels": {"severity": "critical"}},
    ]) == []


def test_without_a_runbook_the_url_is_upstreams_not_found_page_and_a_message_annotation_is_added() -> None:
    raw = alert("EtcdDown")
    raw["annotations"] = {"summary": "S", "description": "D", "message": "M"}
    (risk,) = alert_risks([raw])
    assert risk.url == "https://github.com/openshift/runbooks/tree/master/alerts?runbook=notfound"
    assert risk.detail.endswith(". S The alert description is: D | M ")


def test_alerts_of_one_name_join_their_messages_and_keep_the_earliest_start() -> None:
    later = alert("EtcdDown", active_at="2026-11-23T11:00:00Z", instance="b")
    earlier = alert("EtcdDown", active_at="2026-11-23T09:30:00.5Z", instance="a")
    another, risk = alert_risks([later, alert("Another"), earlier])
    assert another.name == "Another"
    single = alert_risks([later])[0].detail
    assert risk.detail == f"{single}; {single}"
    assert risk.since == datetime(2026, 11, 23, 9, 30, 0, 500000, tzinfo=UTC)
    assert [r.name for r in alert_risks([alert("B"), alert("A"), alert("B")])] == ["A", "B"]


def test_names_that_cannot_be_merged_are_dropped_with_a_reason() -> None:
    kept, errors = checked([ClusterRisk("Good-1.2", "m", "u"), ClusterRisk("lowercase", "m", "u"),
                            ClusterRisk("Has Space", "m", "u"), ClusterRisk("A" * 257, "m", "u")])
    assert [r.name for r in kept] == ["Good-1.2"]
    assert len(errors) == 3
    assert errors[0] == ("in-cluster risk name 'lowercase' does not match ^[A-Z][A-Za-z0-9.-]*$ (at most 256 "
                         "characters): not merged into the conditional updates")


@pytest.mark.parametrize(("current", "target", "bump"), [
    ("4.16.3", "4.16.9", False), ("4.16.3", "4.17.0", True), ("4.16.3", "5.0.0", True),
    ("4.16.3", "4.15.9", False), ("4.16.3", "3.99.0", False), ("4.16.3", "not-semver", True),
    ("4.16.3", "4.17.0-rc.1", True), ("5.1.0", "4.99.0", False),
])
def test_bump_targets_are_a_higher_major_or_minor(current: str, target: str, bump: bool) -> None:
    assert is_bump(current, target) is bump


def release(version: str) -> dict[str, Any]:
    return {"version": version, "image": f"reg.example/rel@{version}"}


ALERT = ClusterRisk("EtcdDown", "EtcdDown summary.", RUNBOOK, "Alert:firing", "critical alert EtcdDown firing",
                    datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC))
ACK = ClusterRisk("AdminAck-ack-4.16-x", "Ack me.", "https://docs.example.com/ack")
GRAPH_RISK = {"name": "DriverX", "url": "https://example.com/DriverX", "message": "Driver X may hang.",
              "matchingRules": [{"type": "Always"}]}


def test_the_upgradeable_risks_move_bump_targets_to_the_conditional_updates_only() -> None:
    available, conditional = merged(
        [release("4.17.1"), release("4.16.8")], [{"release": release("4.16.9"), "risks": [GRAPH_RISK]}],
        current="4.16.3", bump_targets=[ACK])
    assert [r["version"] for r in available] == ["4.16.8"]
    assert [(u["release"]["version"], [r["name"] for r in u["risks"]]) for u in conditional] == [
        ("4.17.1", ["AdminAck-ack-4.16-x"]), ("4.16.9", ["DriverX"])]
    assert conditional[0]["risks"][0] == {"url": "https://docs.example.com/ack", "name": "AdminAck-ack-4.16-x",
                                          "message": "Ack me.", "matchingRules": [{"type": "Always"}]}


def outcomes(conditional: list[dict[str, Any]], in_cluster: list[ClusterRisk]) -> dict[str, recommend.RiskOutcome]:
    out = {name: recommend.decisive_outcome(r["matchingRules"], lambda _rule: False)
           for name, r in recommend.distinct_risks(conditional).items()}
    out.update({r.name: recommend.RiskOutcome(True, reason=r.reason, detail=r.detail, since=r.since)
                for r in in_cluster})
    return out


def test_a_firing_alert_makes_every_update_conditional_and_accepting_it_recommends_them() -> None:
    available, conditional = merged([release("4.16.8"), release("4.17.1")],
                                    [{"release": release("4.16.9"), "risks": [GRAPH_RISK]}],
                                    current="4.16.3", every_target=[ALERT], bump_targets=[ACK])
    assert available == []
    results = outcomes(conditional, [ALERT, ACK])
    out_available, out_conditional = recommend.with_recommendations(
        available, conditional, results, now=NOW, gated=True)
    assert out_available is None and out_conditional is not None
    assert [(u["release"]["version"], u["riskNames"]) for u in out_conditional] == [
        ("4.17.1", ["AdminAck-ack-4.16-x", "EtcdDown"]), ("4.16.9", ["DriverX", "EtcdDown"]),
        ("4.16.8", ["EtcdDown"])]
    recommended = out_conditional[2]["conditions"][0]
    assert (recommended["status"], recommended["reason"], recommended["message"]) == (
        "False", "EtcdDown", f"EtcdDown summary. {RUNBOOK}")
    assert out_conditional[0]["conditions"][0]["reason"] == "MultipleReasons"
    (applies,) = out_conditional[2]["risks"][0]["conditions"]
    assert applies == {"type": "Applies", "status": "True", "reason": "Alert:firing",
                       "message": "critical alert EtcdDown firing", "lastTransitionTime": "2026-11-23T10:00:00Z"}
    risks = recommend.conditional_update_risks(out_conditional)
    assert [r["name"] for r in risks or ()] == ["AdminAck-ack-4.16-x", "DriverX", "EtcdDown"]

    accepted = frozenset({"EtcdDown", "AdminAck-ack-4.16-x"})
    out_available, out_conditional = recommend.with_recommendations(
        available, conditional, results, accepted=accepted, now=NOW, gated=True)
    assert [r["version"] for r in out_available or ()] == ["4.17.1", "4.16.8"]  # 4.16.9 still has DriverX
    # 4.16.9: DriverX applies and EtcdDown is accepted, which upstream's reason merge calls MultipleReasons.
    assert [u["conditions"][0]["reason"] for u in out_conditional or ()] == [
        "AllExposedRisksAccepted", "MultipleReasons", "AllExposedRisksAccepted"]
    assert out_conditional is not None and out_conditional[0]["conditions"][0]["message"] == (
        recommend.ALL_ACCEPTED_MESSAGE)


def test_without_in_cluster_risks_nothing_changes() -> None:
    available = [release("4.17.1"), release("4.16.8")]
    conditional = [{"release": release("4.16.9"), "risks": [GRAPH_RISK]}]
    assert merged(available, conditional, current="4.16.3") == (available, conditional)
    assert merged(available, conditional, current="4.16.3", bump_targets=[ACK])[0] == [release("4.16.8")]


VERSIONS = st.sampled_from(["4.16.4", "4.16.9", "4.17.0", "4.17.2", "5.0.0", "bad", "4.15.1"])
RISKS = st.lists(st.sampled_from([ALERT, ACK, ClusterRisk("DriverX", "m", "https://u")]), max_size=3)


@given(st.lists(VERSIONS, unique=True), st.lists(VERSIONS, unique=True), RISKS, RISKS)
def test_the_merge_loses_no_update_and_adds_each_risk_once(
    plain: list[str], guarded: list[str], every: list[ClusterRisk], bump: list[ClusterRisk]
) -> None:
    guarded = descending([v for v in guarded if v not in plain])  # newest first, as the graph gives them
    plain = descending(plain)
    conditional_in = [{"release": release(v), "risks": [GRAPH_RISK]} for v in guarded]
    available, conditional = merged([release(v) for v in plain], conditional_in, current="4.16.3",
                                    every_target=every, bump_targets=bump)
    versions = [r["version"] for r in available] + [u["release"]["version"] for u in conditional]
    assert sorted(versions) == sorted(plain + guarded)
    for update in conditional:
        names = [r["name"] for r in update["risks"]]
        assert len(names) == len(set(names))
        wanted = {r.name for r in every} | ({r.name for r in bump} if is_bump("4.16.3", update["release"]["version"])
                                            else set())
        assert wanted <= set(names)
    for plain_release in available:
        assert not every and not (bump and is_bump("4.16.3", plain_release["version"]))
    assert sort_releases([u["release"] for u in conditional]) == [u["release"] for u in conditional]
