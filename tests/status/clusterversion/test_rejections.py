"""Which sent values a rejected status write names, and what leaving them out gives (pure)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from status.clusterversion import rejections as rej
from status.clusterversion.conditions import CAPABILITIES_PRUNED, find_condition
from status.clusterversion.writer import MAX_DETAIL, StatusRejected

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
JSON = dict[str, Any]

A = {"version": "4.15.2", "image": "img-2"}
B = {"version": "4.15.1", "image": "img-1"}
C1 = {"release": {"version": "4.15.3", "image": "img-3"}, "risks": [{"name": "R"}]}
C2 = {"release": {"version": "4.15.4", "image": "img-4"}, "risks": [{"name": "S"}]}
SENT: JSON = {
    "desired": {"version": "4.15.0", "image": "img-0", "url": "not a url", "channels": ["a", "a", "b"]},
    "availableUpdates": [A, B],
    "conditionalUpdates": [C1, C2],
    "history": [{"image": "img-0"}],
    "conditions": [{"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": "2024-03-01T00:00:00Z"}],
}


def invalid(*causes: JSON) -> JSON:
    return {"kind": "Status", "status": "Failure", "reason": "Invalid", "code": 422, "message": "is invalid",
            "details": {"causes": list(causes)}}


def cause(field: str, reason: str = "FieldValueInvalid", message: str = "Invalid value") -> JSON:
    return {"field": field, "reason": reason, "message": message}


@pytest.mark.parametrize("prefix", ["status.", ""], ids=["status-prefix", "k8s-1.28-1.30"])
def test_a_cause_anywhere_inside_an_update_names_that_whole_update(prefix: str) -> None:
    rejection = rej.parse_rejection(
        invalid(
            cause(f"{prefix}conditionalUpdates[1].risks[0].message"),
            cause(f"{prefix}availableUpdates[0].channels[1]", "FieldValueDuplicate", 'Duplicate value: "x"'),
            cause(f"{prefix}desired.channels[1]", "FieldValueDuplicate", 'Duplicate value: "a"'),
            cause(f"{prefix}desired.url", message="Invalid value: must be a URI"),
        ),
        SENT,
    )
    assert rejection.prunable
    assert [(v.field, v.value, v.index, v.duplicate) for v in rejection.values] == [
        ("conditionalUpdates", C2, 1, False),
        ("availableUpdates", A, 0, False),  # a repeat inside the update: the update goes
        ("desired.channels", "a", 1, True),  # a repeat of the set itself: its first occurrence stays
        ("desired.url", "not a url", None, False),
    ]
    assert rejection.fields() == [
        "status.conditionalUpdates", "status.availableUpdates", "status.desired.channels", "status.desired.url"
    ]
    assert [v.label() for v in rejection.values] == ["4.15.4", "4.15.2", '"a"', '"not a url"']


def test_too_many_items_keeps_the_first_that_are_allowed() -> None:
    rejection = rej.parse_rejection(
        invalid(cause("status.availableUpdates", "FieldValueTooMany", "Too many: 2: must have at most 1 items")), SENT
    )
    assert [(v.value, v.index) for v in rejection.values] == [(B, 1)]


def gated(names_per_update: list[list[str]]) -> JSON:
    """A gated status: conditional updates (newest first) with these risk names, and
    conditionalUpdateRisks listing each name once, sorted."""
    updates = [{"release": {"version": f"4.16.{9 - i}", "image": f"img-{9 - i}"},
                "riskNames": sorted(names), "risks": [{"name": n} for n in names]}
               for i, names in enumerate(names_per_update)]
    names = sorted({n for listed in names_per_update for n in listed})
    return {**SENT, "conditionalUpdates": updates, "conditionalUpdateRisks": [{"name": n} for n in names]}


def test_too_many_risk_names_keeps_the_risks_of_the_newest_updates() -> None:
    """A 422 `status.conditionalUpdateRisks: Too many` (the CRD takes 500) can be left out: the
    updates past the limit go whole, with the risks no kept update names; status lands."""
    sent = gated([["A", "B"], ["C", "D"], ["A"], ["E"]])
    rejection = rej.parse_rejection(
        invalid(cause("status.conditionalUpdateRisks", "FieldValueTooMany", "Too many: 5: must have at most 3 items")),
        sent,
    )
    assert rejection.prunable
    out = rej.prune(sent, {}, rejection.values)
    # C and D would make 4 names: that update goes; older ones still fit.
    assert [u["release"]["version"] for u in out["conditionalUpdates"]] == ["4.16.9", "4.16.7", "4.16.6"]
    assert [r["name"] for r in out["conditionalUpdateRisks"]] == ["A", "B", "E"]
    message = rej.outside_message(rejection.values)
    assert "conditionalUpdates 4.16.8 (status.conditionalUpdateRisks: Too many: 5: must have at most 3 items)" in (
        message)
    assert "conditionalUpdateRisks C (status.conditionalUpdateRisks: Too many" in message


def test_a_rejected_risk_takes_the_updates_that_name_it() -> None:
    sent = gated([["A", "B"], ["C"], ["B"]])
    rejection = rej.parse_rejection(invalid(cause("status.conditionalUpdateRisks[1].url")), sent)
    assert rejection.prunable
    out = rej.prune(sent, {}, rejection.values)
    assert [u["release"]["version"] for u in out["conditionalUpdates"]] == ["4.16.8"]
    assert [r["name"] for r in out["conditionalUpdateRisks"]] == ["A", "C"]
    assert not rej.parse_rejection(invalid(cause("status.conditionalUpdateRisks[9].url")), sent).prunable


@pytest.mark.parametrize(
    "bad",
    [
        cause("status.history[0].image", "FieldValueRequired", "Required value"),  # ours
        cause("status.conditionalUpdates[7].risks"),  # not what was sent
        cause("status.availableUpdates", "FieldValueTooMany", "Too many"),  # no limit given
        cause("status.observedGeneration"),
    ],
)
def test_a_cause_on_what_cvo_py_computes_is_not_left_out(bad: JSON) -> None:
    rejection = rej.parse_rejection(invalid(cause("status.desired.url"), bad), SENT)
    assert not rejection.prunable and rejection.other == (bad,)


def test_leaving_out_keeps_everything_else() -> None:
    rejection = rej.parse_rejection(
        invalid(
            cause("status.conditionalUpdates[0].risks[0].name"),
            cause("status.availableUpdates[1].url"),
            cause("status.desired.channels[1]", "FieldValueDuplicate"),
            cause("status.desired.url"),
        ),
        SENT,
    )
    out = rej.prune(SENT, {}, rejection.values)
    assert out["availableUpdates"] == [A] and out["conditionalUpdates"] == [C2]
    assert out["desired"] == {"version": "4.15.0", "image": "img-0", "channels": ["a", "b"]}
    assert {k: v for k, v in out.items() if k not in ("availableUpdates", "conditionalUpdates", "desired")} == {
        k: v for k, v in SENT.items() if k not in ("availableUpdates", "conditionalUpdates", "desired")
    }
    assert SENT["desired"]["channels"] == ["a", "a", "b"]  # the input is untouched
    everything = rej.parse_rejection(
        invalid(cause("status.availableUpdates[0]"), cause("status.availableUpdates[1]"),
                cause("status.conditionalUpdates[0]"), cause("status.conditionalUpdates[1]")),
        SENT,
    )
    emptied = rej.prune(SENT, {}, everything.values)
    assert emptied["availableUpdates"] is None and "conditionalUpdates" not in emptied  # required, nullable


def test_too_large_names_each_update_list_whole() -> None:
    rejection = rej.too_large(SENT, "Request entity too large: limit is 3145728")
    assert rejection.prunable and rejection.too_large and rejection.fields() == ["request"]
    assert [(v.field, v.value) for v in rejection.values] == [
        ("availableUpdates", [A, B]), ("conditionalUpdates", [C1, C2])
    ]
    out = rej.prune(SENT, {}, rejection.values)
    assert out["availableUpdates"] is None and "conditionalUpdates" not in out
    # A list that changed is no longer the one refused.
    assert rej.prune({**SENT, "availableUpdates": [A]}, {}, rejection.values)["availableUpdates"] == [A]
    assert not rej.too_large({"availableUpdates": None}, "too large").prunable


def test_memory_forgets_what_is_no_longer_offered() -> None:
    memory = rej.PrunedValues()
    first = rej.RejectedValue("availableUpdates", A, 0, "status.availableUpdates[0].url: Invalid value")
    name = rej.RejectedValue("enabledCapabilities", "Build", 0)
    assert memory.add([first, name]) == [first, name]
    assert memory.add([first]) == []  # logged once
    memory.retain(SENT)
    assert memory.outside() == [first] and memory.state() == {"enabledCapabilities": ("Build",)}
    memory.retain({**SENT, "availableUpdates": [B]})
    assert memory.outside() == [] and memory.state() == {"enabledCapabilities": ("Build",)}  # names stay
    assert memory.clear() == {"enabledCapabilities": ("Build",)} and not memory


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (("True", None, None), ("True", rej.UPDATES_OMITTED)),
        (("False", "RemoteFailed", "Unable to retrieve available updates: x"), ("False", "RemoteFailed")),
    ],
)
def test_what_is_left_out_from_outside_is_said_in_retrieved_updates(
    before: tuple[str, str | None, str | None], after: tuple[str, str]
) -> None:
    status, reason, message = before
    condition: JSON = {"type": "RetrievedUpdates", "status": status, "lastTransitionTime": "2024-03-01T00:00:00Z"}
    if reason:
        condition.update(reason=reason, message=message)
    sent = {**SENT, "conditions": [condition]}
    rejection = rej.parse_rejection(invalid(cause("status.availableUpdates[1].url", message="bad URL")), sent)
    out = rej.apply_pruned(sent, {}, NOW, rejection.values)
    found = find_condition(out["conditions"], "RetrievedUpdates")
    assert found is not None and (found["status"], found["reason"]) == after
    assert found["lastTransitionTime"] == "2024-03-01T00:00:00Z"  # the status did not flip
    said = "status leaves them out: availableUpdates 4.15.1 (status.availableUpdates[1].url: bad URL)"
    assert said in found["message"]
    assert found["message"].startswith(message or "The API server rejected")
    assert find_condition(out["conditions"], CAPABILITIES_PRUNED) is None


def test_what_a_rejection_quotes_is_bounded() -> None:
    huge = "x" * 1_000_000
    sent = {**SENT, "availableUpdates": [{"version": huge, "image": "img"}]}
    rejection = rej.parse_rejection(
        invalid(cause("status.availableUpdates[0].version", message=f'Invalid value: "{huge}"'),
                cause("status.history[0].image", message=f"Required value {huge}")),
        sent,
    )
    (value,) = rejection.values
    assert len(value.cause) <= rej.CAUSE_TEXT and len(value.label()) <= rej.LABEL_TEXT
    said = rej.outside_message(rejection.values)
    assert len(said) < 1_000 and "\n" not in said
    assert len(str(StatusRejected(rejection))) < MAX_DETAIL + 100
