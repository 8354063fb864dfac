"""Upstream's precondition checks (Rollback, GiantHop, Upgradeable, RecommendedUpdate), their
summary, `force`, and the view of the ClusterVersion they read (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from payload.acceptance import PreconditionOutcome, precondition_blocked
from payload.release import Acceptance, Release
from status.clusterversion import desired as cs
from status.clusterversion import preconditions as pc
from status.clusterversion.preconditions import PreconditionError
from status.clusterversion.upgradeable import ConfigMapRead
from testkit.harness.clusterversion import release_co

IMG = "quay.io/openshift-release-dev/ocp-release@sha256:"


def entry(version: str, state: str = "Completed") -> dict[str, Any]:
    return {"version": version, "image": IMG + version, "state": state, "startedTime": "t", "completionTime": None}


def condition(type_: str, status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": "t"}


def cv(
    current: str = "4.14.1",
    history: list[str] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    spec: dict[str, Any] | None = None,
    **status: Any,
) -> dict[str, Any]:
    """A ClusterVersion whose current target is `current` (the history: newest first, all Completed)."""
    versions = history if history is not None else [current]
    return {
        "metadata": {"name": "version"},
        "spec": {"clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13", "channel": "stable-4.15", **(spec or {})},
        "status": {
            "desired": {"version": current, "image": IMG + current},
            "history": [entry(v) for v in versions],
            "conditions": conditions if conditions is not None else [condition("RetrievedUpdates", "True")],
            **status,
        },
    }


# -- ClusterVersionRollback --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("history", "target", "expected"),
    [
        (["4.14.5", "4.14.3"], "4.14.3", None),  # back to the previous release, same minor
        (["4.14.5", "4.14.3"], "4.14.6", None),  # not a rollback at all
        (
            ["4.14.5", "4.13.9"],
            "4.13.9",
            "4.13.9 is less than the current target 4.14.5 and matches the cluster's previous version, but rollbacks "
            "that change major or minor versions are not recommended",
        ),
        (
            ["4.14.5", "4.14.3", "4.14.1"],
            "4.14.1",
            "4.14.1 is less than the current target 4.14.5, and the only supported rollback is to the cluster's "
            f"previous version 4.14.3 ({IMG}4.14.3)",
        ),
        (
            ["4.14.5"],
            "4.14.1",
            "4.14.1 is less than the current target 4.14.5, and the cluster has no previous Semantic Version",
        ),
    ],
)
def test_rollback(history: list[str], target: str, expected: str | None) -> None:
    found = pc.rollback(cv(history[0], history), target)
    if expected is None:
        assert found is None
    else:
        assert found == PreconditionError(pc.ROLLBACK, "LowDesiredVersion", expected)


def test_an_unparseable_current_version_only_warns_and_a_target_blocks() -> None:
    assert pc.rollback(cv("4.14"), "4.14.1") == PreconditionError(
        pc.ROLLBACK, "InvalidCurrentVersion", "No Major.Minor.Patch elements found", blocking=False
    )
    assert pc.giant_hop(cv(), "x.y.z") == PreconditionError(
        pc.GIANT_HOP, "InvalidDesiredVersion", 'Invalid character(s) found in major number "x"'
    )


# -- ClusterVersionGiantHop --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "target", "reason", "message"),
    [
        ("4.14.1", "4.15.3", None, None),
        ("4.14.1", "4.13.0", None, None),
        (
            "4.14.1",
            "4.16.0",
            "MultipleMinorVersionsUpdate",
            "4.16.0 is more than one minor version beyond the current target 4.14.1 (4.16 > 4.15), and only updates "
            "within the current minor version or to the next minor version are supported.",
        ),
        ("4.22.4", "5.0.1", None, None),  # 4 → 5.0 is allowed from 4.22 on
        (
            "4.22.4",
            "5.1.0",
            "MajorVersionUpdate",
            "5.1.0 has a larger major version than the current target 4.22.4 (5 > 4), and only updates within the "
            "current major version or to 5.0 are supported.",
        ),
        (
            "5.3.0",
            "6.0.0",
            "MajorVersionUpdate",
            "6.0.0 has a larger major version than the current target 5.3.0 (6 > 5), and only updates within the "
            "current major version are supported.",
        ),
    ],
)
def test_giant_hop(current: str, target: str, reason: str | None, message: str | None) -> None:
    found = pc.giant_hop(cv(current), target)
    assert found == (None if reason is None else PreconditionError(pc.GIANT_HOP, reason, str(message)))


# -- ClusterVersionUpgradeable -----------------------------------------------------------------------

BLOCKED = condition("Upgradeable", "False", "ClusterVersionOverrides", "Please remove overrides.")


@pytest.mark.parametrize("target", ["4.14.9", "4.14.0", "4.13.2"])
def test_upgradeable_false_allows_patch_updates_and_rollbacks(target: str) -> None:
    assert pc.upgradeable_check(cv(conditions=[BLOCKED]), target) is None


@pytest.mark.parametrize("target", ["4.15.0", "5.0.0"])
def test_upgradeable_false_blocks_minor_and_major_updates_with_its_reason(target: str) -> None:
    assert pc.upgradeable_check(cv(conditions=[BLOCKED]), target) == PreconditionError(
        pc.UPGRADEABLE, "ClusterVersionOverrides", "Please remove overrides."
    )


@pytest.mark.parametrize("status", [None, "True", "Unknown"])
def test_only_upgradeable_false_blocks(status: str | None) -> None:
    conditions = [] if status is None else [condition("Upgradeable", status, "R", "m")]
    assert pc.upgradeable_check(cv(conditions=conditions), "4.15.0") is None


def test_a_patch_update_with_overrides_set_warns() -> None:
    found = pc.upgradeable_check(cv(conditions=[BLOCKED], spec={"overrides": [{"unmanaged": True}]}), "4.14.9")
    assert found is not None and not found.blocking and found.reason == "ClusterVersionOverridesSet"
    assert found.message.startswith(
        "Retarget from 4.14.1 to 4.14.9 is not blocked by ClusterVersionOverridesSet. But the cluster-version "
        "operator is not managing these resources; they are currently the responsibility of the agent that set the "
        "overrides: Disabling ownership via cluster version overrides prevents updates"
    )


@pytest.mark.parametrize(
    ("history", "target", "reason", "message"),
    [
        (
            ["4.14.1", "4.13.9"],
            "4.14.3",
            "MinorVersionClusterUpdateInProgress",
            "Retarget to 4.14.3 while a minor version update from 4.13.9 to 4.14.1 is in progress",
        ),
        (
            ["5.0.0", "4.22.9"],
            "5.0.1",
            "MajorVersionClusterUpdateInProgress",
            "Retarget to 5.0.1 while a major version update from 4.22.9 to 5.0.0 is in progress",
        ),
    ],
)
def test_a_patch_retarget_during_a_minor_update_warns(
    history: list[str], target: str, reason: str, message: str
) -> None:
    updating = condition("Upgradeable", "False", "ClusterVersionUpdating", "An update is already in progress")
    status = cv(history[0], history, [updating, condition("Progressing", "True")])
    status["status"]["history"][0]["state"] = "Partial"
    assert pc.upgradeable_check(status, target) == PreconditionError(pc.UPGRADEABLE, reason, message, blocking=False)


# -- ClusterVersionRecommendedUpdate -----------------------------------------------------------------


def conditional(version: str, *conditions: dict[str, Any]) -> dict[str, Any]:
    return {"release": {"version": version, "image": IMG + version}, "risks": [], "conditions": list(conditions)}


@pytest.mark.parametrize(
    ("given", "reason", "message"),
    [
        ({"availableUpdates": [{"version": "4.15.2", "image": "i"}]}, None, None),
        (
            {"conditionalUpdates": [conditional("4.15.2", condition("Recommended", "True", "NotExposedToRisks"))]},
            None,
            None,
        ),
        (
            {
                "conditionalUpdates": [
                    conditional("4.15.2", condition("Recommended", "False", "DriverX", "Hangs. https://x"))
                ]
            },
            "DriverX",
            "Update from 4.14.1 to 4.15.2 is not recommended:\n\nHangs. https://x",
        ),
        (
            {
                "conditionalUpdates": [
                    conditional("4.15.2", condition("Recommended", "Unknown", "EvaluationFailed", "?"))
                ]
            },
            "EvaluationFailed",
            "Update from 4.14.1 to 4.15.2 is Recommended=Unknown: EvaluationFailed: ?",
        ),
        (
            {"conditionalUpdates": [conditional("4.15.2")]},
            "UnknownConditionType",
            "Update from 4.14.1 to 4.15.2 has a status.conditionalUpdates entry, but no Recommended condition.",
        ),
        (
            {},
            "UnknownUpdate",
            "RetrievedUpdates=True (), so the update from 4.14.1 to 4.15.2 is probably neither recommended nor "
            "supported.",
        ),
        (
            {"conditions": [condition("RetrievedUpdates", "False", "RemoteFailed", "boom")]},
            "UnknownUpdate",
            "RetrievedUpdates=False (RemoteFailed), so the recommended status of updating from 4.14.1 to 4.15.2 is "
            "unknown.",
        ),
        (
            {"conditions": []},
            "UnknownUpdate",
            "No RetrievedUpdates, so the recommended status of updating from 4.14.1 to 4.15.2 is unknown.",
        ),
        (
            {"spec": {"channel": ""}},
            "NoChannel",
            "Configured channel is unset, so the recommended status of updating from 4.14.1 to 4.15.2 is unknown.",
        ),
    ],
    ids=[
        "available",
        "recommended",
        "not recommended",
        "unknown",
        "no condition",
        "not in the graph",
        "retrieval failed",
        "never retrieved",
        "no channel",
    ],  # fmt: skip
)
def test_recommended_update_never_blocks(given: dict[str, Any], reason: str | None, message: str | None) -> None:
    obj = cv(**given)
    found = pc.recommended_update(obj, "4.15.2")
    assert found == (None if reason is None else PreconditionError(pc.RECOMMENDED_UPDATE, reason, str(message), False))


# -- the summary ---------------------------------------------------------------------------------------

ROLLBACK_ERROR = PreconditionError(pc.ROLLBACK, "LowDesiredVersion", "4.13.0 is less than the current target 4.14.1")
UNKNOWN_UPDATE = PreconditionError(pc.RECOMMENDED_UPDATE, "UnknownUpdate", "No RetrievedUpdates, so ...", False)


def test_summaries_block_warn_and_force() -> None:
    assert pc.summarize([], False) == PreconditionOutcome(False, "")
    one = (
        'Precondition "ClusterVersionRollback" failed because of "LowDesiredVersion": '
        "4.13.0 is less than the current target 4.14.1"
    )
    assert pc.summarize([ROLLBACK_ERROR], False) == PreconditionOutcome(True, one)
    several = (
        "Multiple precondition checks failed:\n* " + one + "\n* "
        'Precondition "ClusterVersionRecommendedUpdate" failed because of "UnknownUpdate": No RetrievedUpdates, so ...'
    )
    assert pc.summarize([ROLLBACK_ERROR, UNKNOWN_UPDATE], False) == PreconditionOutcome(True, several)
    assert pc.summarize([ROLLBACK_ERROR, UNKNOWN_UPDATE], True) == PreconditionOutcome(
        False, "Forced through blocking failures: " + several
    )
    # Warnings alone never block, forced or not, and are not said to be forced.
    warning = (
        'Precondition "ClusterVersionRecommendedUpdate" failed because of "UnknownUpdate": No RetrievedUpdates, so ...'
    )
    assert (
        pc.summarize([UNKNOWN_UPDATE], False)
        == pc.summarize([UNKNOWN_UPDATE], True)
        == PreconditionOutcome(False, warning)
    )


def test_the_refusal_in_release_accepted() -> None:
    refused = precondition_blocked("4.16.0", IMG + "4.16.0", 'Precondition "X" failed because of "Y": z')
    assert (refused.status, refused.reason) == ("False", "PreconditionChecks")
    assert refused.message == (
        f'Preconditions failed for payload loaded version="4.16.0" image="{IMG}4.16.0": '
        'Precondition "X" failed because of "Y": z'
    )


def test_every_check_runs_in_upstream_order() -> None:
    blocked = cv("4.14.1", ["4.14.1", "4.13.0"], [BLOCKED, condition("RetrievedUpdates", "True")])
    found = pc.run(blocked, "4.16.0")
    assert [(e.name, e.reason) for e in found] == [
        (pc.GIANT_HOP, "MultipleMinorVersionsUpdate"),
        (pc.UPGRADEABLE, "ClusterVersionOverrides"),
        (pc.RECOMMENDED_UPDATE, "UnknownUpdate"),
    ]


def test_the_view_carries_upgradeable_as_its_sources_say_now() -> None:
    # The stored status says nothing blocks; a ClusterOperator has turned Upgradeable=False since.
    operator = release_co("storage", "4.14.1")
    operator["status"]["conditions"].append(condition("Upgradeable", "False", "Why", "CSI migration pending"))
    inputs = cs.StatusInputs(
        Release("4.14.1", IMG + "4.14.1"), admin_gates=ConfigMapRead({}), admin_acks=ConfigMapRead({})
    )
    view = cs.precondition_view(cv(), [operator], inputs)
    assert pc.upgradeable_check(view, "4.15.0") == PreconditionError(
        pc.UPGRADEABLE, "RiskNameNotCompatibleWithReasonProperty", "CSI migration pending"
    )
    assert cs.precondition_view(cv(), [release_co("storage", "4.14.1")], inputs)["status"]["conditions"] == [
        condition("RetrievedUpdates", "True")
    ]


# -- acceptedRisks in history ---------------------------------------------------------------------------


def test_accepted_risks_go_into_the_new_history_entry_and_stay() -> None:
    from datetime import UTC, datetime, timedelta

    from payload.acceptance import payload_loaded

    now = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    running = Release("4.14.1", IMG + "4.14.1")
    target = Release("4.15.0", IMG + "4.15.0")
    obj = cv(spec={"desiredUpdate": {"version": "4.15.0", "image": target.image}})
    warned = cs.StatusInputs(
        running, Acceptance(target, payload_loaded("4.15.0", target.image, "amd64"), True, "risky")
    )
    status = cs.desired_status(obj, [release_co("etcd", "4.14.1")], warned, now)
    assert status["history"][0]["version"] == "4.15.0" and status["history"][0]["acceptedRisks"] == "risky"
    assert "acceptedRisks" not in status["history"][1]
    # A later sync without the acceptance (e.g. after a restart) keeps what was recorded.
    later = cs.desired_status(
        {**obj, "status": status}, [release_co("etcd", "4.14.1")], cs.StatusInputs(running), now + timedelta(minutes=1)
    )
    assert later["history"][0]["acceptedRisks"] == "risky"


def _accepted_update(image: str, reason: str = "AllExposedRisksAccepted") -> dict[str, Any]:
    recommended = condition("Recommended", "True" if reason != "DriverX" else "False", reason)
    return {"release": {"version": "4.15.0", "image": image}, "riskNames": ["DriverX", "Alpha"],
            "risks": [{"name": "Alpha"}, {"name": "DriverX"}], "conditions": [recommended]}


@pytest.mark.parametrize(
    ("gate", "reason", "warned", "before", "after"),
    [
        (True, "AllExposedRisksAccepted", False, "",
         "The target release {image} is exposed to the risks [Alpha,DriverX] which were all explicitly accepted by "
         "the cluster administrator."),
        (True, "AllExposedRisksAccepted", False, "forced",
         "forced\nThe target release {image} is exposed to the risks [Alpha,DriverX] which were all explicitly "
         "accepted by the cluster administrator."),
        (True, "AllExposedRisksAccepted", True, "a warning",
         "a warning; It is exposed to the risks [Alpha,DriverX] which were all explicitly accepted by the cluster "
         "administrator."),
        (True, "NotExposedToRisks", False, "", ""),  # no risk applies: nothing was accepted
        (True, "DriverX", False, "", ""),  # not recommended (the update was forced through)
        (False, "AllExposedRisksAccepted", False, "", ""),  # without the gate, no third part
    ],
)
def test_accepted_risks_name_the_accepted_conditional_update_risks_with_the_gate(
    gate: bool, reason: str, warned: bool, before: str, after: str
) -> None:
    from datetime import UTC, datetime

    from payload.acceptance import payload_loaded

    now = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    running = Release("4.14.1", IMG + "4.14.1")
    target = Release("4.15.0", IMG + "4.15.0")
    obj = cv(spec={"desiredUpdate": {"version": "4.15.0", "image": target.image}})
    updates = {
        "availableUpdates": None,
        "condition": {"type": "RetrievedUpdates", "status": "True"},
        "current": None,
        "conditionalUpdates": [_accepted_update(IMG + "4.14.9"), _accepted_update(target.image, reason)],
    }
    acceptance = Acceptance(target, payload_loaded("4.15.0", target.image, "amd64"), True, before, warned=warned)
    inputs = cs.StatusInputs(running, acceptance, updates=updates, accept_risks=gate)
    status = cs.desired_status(obj, [release_co("etcd", "4.14.1")], inputs, now)
    assert status["history"][0].get("acceptedRisks", "") == after.format(image=target.image)
