"""What of the update service's answer status holds: for any selection, both lists stay within
their budget, a conditional update keeps all its risks or is left out, long texts are cut, and
what was left out is counted and said."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from updateservice import bounds, recommend, retrieval
from updateservice import graph as g
from updateservice.recommend import RiskOutcome

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
JSON = dict[str, Any]


def release(i: int, channels: int = 2, url: int = 40, image: int = 64) -> JSON:
    out: JSON = {"version": f"4.15.{i}", "image": "r@sha256:" + f"{i}".rjust(image, "0")}
    if url:
        out["url"] = "https://e.example/" + "u" * url
    if channels:
        out["channels"] = [f"channel-{c}" for c in range(channels)]
    return out


def risk(i: int, message: int = 20, name: str = "") -> JSON:
    return {"name": name or f"R{i}", "url": f"https://r.example/{i}", "message": "m" * message,
            "matchingRules": [{"type": "Always"}]}


# (risks, message length) of a conditional update: small, medium, long messages, too many risks
SHAPES = [(1, 20), (3, 500), (2, 20_000), (201, 20)]


@st.composite
def selections(draw: st.DrawFn) -> g.Updates:
    available = [release(i, draw(st.sampled_from([0, 3, 5_000])), draw(st.sampled_from([0, 40, 5_000])),
                         draw(st.sampled_from([64, 64, 300_000])))
                 for i in range(1, draw(st.integers(0, 1_500)))]
    conditional = []
    for i in range(draw(st.integers(0, 600))):
        count, length = draw(st.sampled_from(SHAPES))
        conditional.append({"release": release(10_000 + i), "risks": [risk(r, length) for r in range(count)]})
    return g.Updates(release(0, draw(st.sampled_from([1, 50_000]))), tuple(available), tuple(conditional))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(selection=selections(), applies=st.booleans())
def test_any_selection_fits_and_what_is_left_out_is_counted(selection: g.Updates, applies: bool) -> None:
    bounded, omitted = bounds.bound(selection)
    outcomes = {f"R{r}": RiskOutcome(applies) for r in range(201)}
    available, conditional = recommend.with_recommendations(bounded.available, bounded.conditional, outcomes,
                                                            now=NOW)
    available, conditional, omitted = bounds.fit(available, conditional, omitted)
    for items in (available, conditional):
        assert bounds.size(items) <= bounds.LIST_BUDGET
    assert len(conditional or ()) <= bounds.MAX_CONDITIONAL_UPDATES
    offered = {u["release"]["version"]: u for u in selection.conditional}
    for update in conditional or ():
        original = offered[update["release"]["version"]]
        # every risk, by name and rules: an update never looks safer than it is
        assert [(r["name"], r["matchingRules"]) for r in update["risks"]] == [
            (r["name"], r["matchingRules"]) for r in original["risks"]
        ]
        assert all(len(r["message"]) <= bounds.MAX_RISK_MESSAGE for r in update["risks"])
        assert len(update["conditions"][0]["message"]) <= recommend.MAX_MESSAGE
    assert bounds.size(bounded.current.get("channels", [])) <= bounds.MAX_CHANNELS_BYTES
    assert omitted.conditional == len(selection.conditional) - len(conditional or ())
    assert omitted.conditional_offered == len(selection.conditional)
    assert omitted.too_many_risks == tuple(u["release"]["version"] for u in selection.conditional
                                           if len(u["risks"]) > bounds.MAX_RISKS)
    assert bool(omitted.message()) == bool(omitted)
    if len(available or ()) < len(selection.available):
        assert omitted.available >= len(selection.available) - len(available or ())


def test_a_selection_that_fits_is_kept_as_it_is() -> None:
    selection = g.Updates(release(0), (release(2), release(1)),
                          ({"release": release(3), "risks": [risk(0)]},))
    bounded, omitted = bounds.bound(selection)
    assert bounded == selection and not omitted and omitted.message() == ""


def test_the_message_counts_and_names() -> None:
    selection = g.Updates(release(0, channels=2_000), tuple(release(i) for i in range(1, 20_000)),
                          ({"release": release(30_001), "risks": [risk(i) for i in range(201)]},
                           {"release": release(30_000), "risks": [risk(0, message=9_000)]}))
    bounded, omitted = bounds.bound(selection)
    shown = len(bounded.available)
    assert 0 < shown < 19_999
    assert omitted.message() == (
        "The updates found hold more than status does (at most 256 KiB of each list, 500 conditional updates "
        f"of at most 200 risks), so status leaves out {19_999 - shown} of 19999 available updates; 1 of 2 "
        "conditional updates (1 with more than 200 risks: 4.15.30001); the middle of 1 risk messages over 4096 "
        "characters; channels or URLs of 1 releases (over 8 KiB of channels, URLs over 2048 characters)."
    )
    (kept,) = bounded.conditional
    cut = kept["risks"][0]["message"]
    assert len(cut) == bounds.MAX_RISK_MESSAGE and cut.startswith("mmm") and cut.endswith("mmm") and "[…]" in cut


def names_update(version: int, *names: str) -> dict[str, Any]:
    return {"release": release(version), "risks": [risk(0, name=n) for n in names]}


@given(st.lists(st.lists(st.sampled_from([f"R{i}" for i in range(12)]), max_size=6), max_size=12),
       st.integers(min_value=0, max_value=12))
def test_within_risk_names_keeps_the_newest_updates_and_at_most_the_limit(
    names: list[list[str]], limit: int
) -> None:
    conditional = [names_update(100 - i, *listed) for i, listed in enumerate(names)]
    kept, left_out = bounds.within_risk_names(conditional, limit)
    assert len(set().union(*(bounds.risk_names(u) for u in kept))) <= limit
    assert sorted(map(id, kept + left_out)) == sorted(map(id, conditional))  # nothing lost, nothing twice
    assert [u for u in conditional if any(u is k for k in kept)] == kept  # newest first, as given
    for update in left_out:  # each left out because, at its turn, it would have passed the limit
        before = [u for u in kept if conditional.index(u) < conditional.index(update)]
        assert len(set().union(bounds.risk_names(update), *(bounds.risk_names(u) for u in before))) > limit


def test_risk_names_past_500_leave_out_the_oldest_updates_and_say_so() -> None:
    conditional = [names_update(30 - i, *(f"U{i}R{j}" for j in range(200))) for i in range(3)]
    conditional.append(names_update(10, "U0R0", "U1R5"))  # names already counted: kept
    kept, omitted = bounds.with_risk_name_limit(conditional, bounds.Omitted())
    assert [u["release"]["version"] for u in kept] == ["4.15.30", "4.15.29", "4.15.10"]
    assert omitted.message() == (
        "The updates found hold more than status does (at most 256 KiB of each list, 500 conditional updates "
        "of at most 200 risks), so status leaves out 1 of 4 conditional updates (1 whose risks would take "
        "conditionalUpdateRisks past 500 names: 4.15.28)."
    )
    assert bounds.with_risk_name_limit(kept, bounds.Omitted()) == (kept, bounds.Omitted())


def test_a_long_url_goes_and_channels_are_cut_to_what_fits() -> None:
    long = release(1, channels=5_000, url=5_000)
    cut = bounds.bounded_release(long)
    assert "url" not in cut and cut["channels"] == long["channels"][: len(cut["channels"])]
    assert 0 < len(cut["channels"]) and bounds.size(cut["channels"]) <= bounds.MAX_CHANNELS_BYTES
    assert bounds.bounded_release(release(2)) == release(2)


def test_recommended_keeps_the_condition_within_the_api_limits() -> None:
    long_name = "R" * (recommend.MAX_REASON + 1)
    risks = [risk(i, message=10_000) for i in range(10)] + [risk(99, name=long_name)]
    outcomes = {r["name"]: RiskOutcome(True) for r in risks}
    condition = recommend.recommended(risks, outcomes, now=NOW)
    assert condition["status"] == "False" and condition["reason"] == recommend.MULTIPLE
    assert len(condition["message"]) <= recommend.MAX_MESSAGE
    only_long = recommend.recommended([risk(99, name=long_name)], outcomes, now=NOW)
    assert only_long["reason"] == recommend.EXPOSED  # a reason over 1024 characters would be rejected


def test_a_failure_quoting_the_answer_is_bounded() -> None:
    detail = "invalid character(s) in " + "x" * 5_000_000 + " at the end"
    condition = retrieval.failure("ResponseInvalid", detail)
    assert len(condition.message) <= len(retrieval.UNABLE) + retrieval.MAX_DETAIL
    assert condition.message.startswith(retrieval.UNABLE + "invalid character(s) in xxx")
    assert condition.message.endswith("xxx at the end")


def test_a_repeated_channel_is_listed_once() -> None:
    node = g.Node(g.semver.parse("4.15.1"), "img", {g.CHANNELS_METADATA: "stable-4.15,fast-4.15,stable-4.15"})
    assert g.release_of(node)["channels"] == ["fast-4.15", "stable-4.15"]


def test_size_is_what_the_client_sends() -> None:
    value = {"message": "é\n\"x\""}
    assert bounds.size(value) == len(json.dumps(value).encode())
