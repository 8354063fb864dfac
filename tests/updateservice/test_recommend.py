"""Recommended conditions from evaluated risks, and the PromQL cache and throttle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from updateservice import recommend as rc

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)


def risk(name: str, message: str = "It hurts.", url: str = "https://example.com/r") -> dict[str, Any]:
    return {"name": name, "message": message, "url": url, "matchingRules": [{"type": "Always"}]}


def test_no_applying_risk_is_recommended() -> None:
    cond = rc.recommended([risk("A")], {"A": rc.RiskOutcome(False)}, now=NOW)
    assert cond == {"type": "Recommended", "status": "True", "reason": "NotExposedToRisks",
                    "message": rc.NOT_EXPOSED_MESSAGE, "lastTransitionTime": "2026-11-23T12:00:00Z"}


def test_an_applying_risk_is_named_and_its_message_and_url_given() -> None:
    cond = rc.recommended([risk("DriverX", "Driver X may hang.", "https://e/1")], {"DriverX": rc.RiskOutcome(True)},
                          now=NOW)
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "DriverX", "Driver X may hang. https://e/1")


def test_a_risk_name_that_is_not_a_valid_reason_becomes_exposed_to_risks() -> None:
    cond = rc.recommended([risk("has space")], {"has space": rc.RiskOutcome(True)}, now=NOW)
    assert cond["reason"] == "ExposedToRisks"


def test_evaluation_failures_are_unknown_with_the_cvo_wording() -> None:
    cond = rc.recommended([risk("A", "m", "u")], {"A": rc.RiskOutcome(None, "boom")}, now=NOW)
    assert cond["status"] == "Unknown" and cond["reason"] == "EvaluationFailed"
    assert cond["message"] == "Could not evaluate exposure to update risk A (boom)\n  A description: m\n  A URL: u"


def test_false_beats_unknown_and_reasons_merge() -> None:
    cond = rc.recommended([risk("A"), risk("B")], {"A": rc.RiskOutcome(None, "x"), "B": rc.RiskOutcome(True)}, now=NOW)
    assert cond["status"] == "False"
    assert cond["reason"] == "MultipleReasons"
    assert "\n\n" in cond["message"]
    two = rc.recommended([risk("A"), risk("B")], {"A": rc.RiskOutcome(True), "B": rc.RiskOutcome(True)}, now=NOW)
    assert two["reason"] == "MultipleReasons"


def test_accepted_risks_keep_the_update_recommended() -> None:
    cond = rc.recommended([risk("A")], {"A": rc.RiskOutcome(True)}, accepted=frozenset({"A"}), now=NOW)
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "AllExposedRisksAccepted",
                                                                 rc.ALL_ACCEPTED_MESSAGE)


@pytest.mark.parametrize(
    ("cur", "new", "out"),
    [
        ("NotExposedToRisks", "X", "X"),
        ("AllExposedRisksAccepted", "EvaluationFailed", "EvaluationFailed"),
        ("AllExposedRisksAccepted", "NotExposedToRisks", "AllExposedRisksAccepted"),
        ("EvaluationFailed", "ExposedToRisks", "ExposedToRisks"),
        ("EvaluationFailed", "AllExposedRisksAccepted", "EvaluationFailed"),
        ("ExposedToRisks", "EvaluationFailed", "ExposedToRisks"),
        ("ExposedToRisks", "AllExposedRisksAccepted", "ExposedToRisks"),
        ("A", "A", "A"),
        ("A", "B", "MultipleReasons"),
        ("A", "EvaluationFailed", "MultipleReasons"),
    ],
)
def test_reason_merge_table(cur: str, new: str, out: str) -> None:
    assert rc.merge_reason(cur, new) == out


def test_transition_time_is_kept_while_the_status_is_unchanged() -> None:
    before = {"status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    same = rc.recommended([risk("A")], {"A": rc.RiskOutcome(True)}, previous=before, now=NOW)
    assert same["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    changed = rc.recommended([risk("A")], {"A": rc.RiskOutcome(False)}, previous=before, now=NOW)
    assert changed["lastTransitionTime"] == "2026-11-23T12:00:00Z"


def test_recommended_conditional_updates_are_also_available() -> None:
    conditional = [{"release": {"version": "4.16.6", "image": "six"}, "risks": [risk("A")]},
                   {"release": {"version": "4.16.7", "image": "seven"}, "risks": [risk("B")]}]
    available, updates = rc.with_recommendations(
        [{"version": "4.16.5", "image": "five"}], conditional,
        {"A": rc.RiskOutcome(False), "B": rc.RiskOutcome(True)}, now=NOW)
    assert available is not None and updates is not None
    assert [r["version"] for r in available] == ["4.16.6", "4.16.5"]
    assert [u["conditions"][0]["status"] for u in updates] == ["True", "False"]
    assert rc.with_recommendations([], [], {}, now=NOW) == (None, None)


def test_decisive_outcome_takes_the_first_rule_that_evaluates() -> None:
    def evaluate(rule: Any) -> bool:
        if rule["promql"]["promql"] == "bad":
            raise rc.EvaluationError("bad query")
        return True

    rules = [{"type": "PromQL", "promql": {"promql": "bad"}}, {"type": "PromQL", "promql": {"promql": "ok"}}]
    assert rc.decisive_outcome(rules, evaluate) == rc.RiskOutcome(True)
    assert rc.decisive_outcome(rules[:1], evaluate) == rc.RiskOutcome(None, "bad query")


def test_promql_cache_throttles_refreshes_and_expires() -> None:
    calls: list[str] = []

    def query(q: str) -> bool:
        calls.append(q)
        return q == "match"

    cache = rc.PromQLCache(query)
    a = {"type": "PromQL", "promql": {"promql": "match"}}
    b = {"type": "PromQL", "promql": {"promql": "other"}}
    assert cache.evaluate(a, NOW) is True
    with pytest.raises(rc.EvaluationError, match=r"evaluation is throttled until 12:00:01Z"):
        cache.evaluate(b, NOW + timedelta(milliseconds=500))
    assert cache.evaluate(a, NOW + timedelta(milliseconds=500)) is True  # cached, no query
    assert cache.evaluate(b, NOW + timedelta(seconds=2)) is False
    assert calls == ["match", "other"]
    assert cache.evaluate(a, NOW + timedelta(minutes=30)) is True and len(calls) == 2
    cache.evaluate(a, NOW + timedelta(hours=1, seconds=5))  # refreshed after an hour
    assert calls[-1] == "match" and len(calls) == 3
    cache.evaluate(b, NOW + timedelta(hours=30))  # expired entries are queried again
    assert calls[-1] == "other"


def vector(*values: Any) -> dict[str, Any]:
    return {"resultType": "vector", "result": [{"metric": {}, "value": [0, v]} for v in values]}


@pytest.mark.parametrize(("data", "match"), [(vector("1"), True), (vector("0"), False), (vector("1.0"), True),
                                              (vector("0e3"), False)])
def test_a_query_matches_with_one_sample_of_1_and_not_with_0(data: dict[str, Any], match: bool) -> None:
    assert rc.vector_verdict(data) is match


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (vector(), "invalid PromQL result length must be one, but is 0"),
        (vector("1", "0"), "invalid PromQL result length must be one, but is 2"),
        (vector("2"), "invalid PromQL result (must be 0 or 1): 2"),
        (vector("0.5"), "invalid PromQL result (must be 0 or 1): 0.5"),
        (vector("1e21"), "invalid PromQL result (must be 0 or 1): 1000000000000000000000"),
        (vector("NaN"), "invalid PromQL result (must be 0 or 1): NaN"),
        (vector("+Inf"), "invalid PromQL result (must be 0 or 1): +Inf"),
        (vector("x"), "invalid PromQL result (must be 0 or 1): x"),
        ({"resultType": "scalar", "result": [0, "1"]}, "invalid PromQL result type is scalar, not vector"),
        ({"resultType": "matrix", "result": []}, "invalid PromQL result type is matrix, not vector"),
    ],
)
def test_a_query_answer_that_is_not_a_match_says_why_in_upstreams_words(data: dict[str, Any], error: str) -> None:
    with pytest.raises(rc.EvaluationError) as raised:
        rc.vector_verdict(data)
    assert str(raised.value) == error


# -- With the ClusterUpdateAcceptRisks gate: riskNames, each risk's Applies, conditionalUpdateRisks ----


def test_gated_updates_name_their_risks_and_say_whether_each_applies() -> None:
    conditional = [{"release": {"version": "4.16.7", "image": "seven"}, "risks": [risk("B"), risk("A", "m", "u")]},
                   {"release": {"version": "4.16.6", "image": "six"}, "risks": [risk("C"), risk("A", "m", "u")]}]
    outcomes = {"A": rc.RiskOutcome(True), "B": rc.RiskOutcome(False), "C": rc.RiskOutcome(None, "boom")}
    _, updates = rc.with_recommendations([], conditional, outcomes, accepted=frozenset({"A"}), now=NOW, gated=True)
    assert updates is not None
    assert [u["riskNames"] for u in updates] == [["A", "B"], ["A", "C"]]
    seven, six = updates
    assert [(r["name"], r["conditions"]) for r in seven["risks"]] == [
        ("B", [{"type": "Applies", "status": "False", "reason": "NotMatch",
                "message": "The risk B does not apply to this cluster.",
                "lastTransitionTime": "2026-11-23T12:00:00Z"}]),
        ("A", [{"type": "Applies", "status": "True", "reason": "Match",
                "message": "The risk A applies to this cluster.", "lastTransitionTime": "2026-11-23T12:00:00Z"}]),
    ]
    (c_applies,) = six["risks"][0]["conditions"]
    assert (c_applies["status"], c_applies["reason"]) == ("Unknown", "EvaluationFailed")
    assert c_applies["message"] == (
        "Could not evaluate exposure to update risk C (boom)\n  C description: It hurts.\n"
        "  C URL: https://example.com/r"
    )
    # Accepted A and B not applying: recommended because every exposed risk is accepted.
    assert (seven["conditions"][0]["status"], seven["conditions"][0]["reason"]) == ("True", "AllExposedRisksAccepted")

    # Each risk once, sorted by name, with its Applies condition.
    risks = rc.conditional_update_risks(updates)
    assert risks is not None
    statuses = [(r["name"], r["conditions"][0]["status"]) for r in risks]
    assert statuses == [("A", "True"), ("B", "False"), ("C", "Unknown")]
    assert risks[0] == {**risk("A", "m", "u"), "conditions": seven["risks"][1]["conditions"]}
    assert rc.conditional_update_risks(None) is None and rc.conditional_update_risks([]) is None


def test_applies_keeps_its_transition_time_while_unchanged_and_without_the_gate_nothing_is_added() -> None:
    conditional = [{"release": {"version": "4.16.7", "image": "seven"}, "risks": [risk("A")]}]
    _, before = rc.with_recommendations([], conditional, {"A": rc.RiskOutcome(True)}, now=NOW, gated=True)
    assert before is not None
    later = NOW + timedelta(hours=1)
    _, same = rc.with_recommendations([], conditional, {"A": rc.RiskOutcome(True)}, previous=before, now=later,
                                      gated=True)
    _, flipped = rc.with_recommendations([], conditional, {"A": rc.RiskOutcome(False)}, previous=before, now=later,
                                         gated=True)
    assert same is not None and flipped is not None
    assert same[0]["risks"][0]["conditions"][0]["lastTransitionTime"] == "2026-11-23T12:00:00Z"
    assert flipped[0]["risks"][0]["conditions"][0]["lastTransitionTime"] == "2026-11-23T13:00:00Z"

    _, ungated = rc.with_recommendations([], conditional, {"A": rc.RiskOutcome(True)}, accepted=frozenset({"A"}),
                                         now=NOW)
    assert ungated is not None and "riskNames" not in ungated[0] and ungated[0]["risks"] == [risk("A")]


def test_transition_time_is_written_in_utc_whatever_the_zone_of_now() -> None:
    east = NOW.astimezone(timezone(timedelta(hours=5, minutes=30)))
    cond = rc.recommended([risk("A")], {"A": rc.RiskOutcome(False)}, now=east)
    assert cond["lastTransitionTime"] == "2026-11-23T12:00:00Z"
