"""The Upgradeable condition as upstream computes it from 4.23 on: every source, its reasons and
messages, the combination rule, absent when nothing blocks, recomputed on every status sync."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from payload.release import Release
from status.clusterversion import desired as cs
from status.clusterversion import upgradeable
from status.clusterversion.conditions import find_condition
from status.clusterversion.upgradeable import ConfigMapRead, Risk, Sources
from testkit.harness.clusterversion import release_co, worker_state

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
IMG = "quay.io/openshift-release-dev/ocp-release@sha256:" + "a" * 64
RUNNING = Release("4.20.3", IMG)
NO_GATES = ConfigMapRead({})
NO_ACKS = ConfigMapRead({})
SIGSTORE = "ack-4.20-sigstore-in-4.21"
SIGSTORE_TEXT = (
    "4.21 will require Sigstore signatures for quay.io/openshift-release-dev/ocp-release release verification. "
    "See https://access.redhat.com/articles/7010000 for details."
)


def blocked_co(name: str, message: str) -> dict[str, Any]:
    co = release_co(name, "4.20.3")
    co["status"]["conditions"].append(
        {"type": "Upgradeable", "status": "False", "reason": "Why", "message": message, "lastTransitionTime": "x"}
    )
    return co


def sources(**overrides: Any) -> Sources:
    return Sources(
        **{"version": "4.20.3", "updating": False, "admin_gates": NO_GATES, "admin_acks": NO_ACKS, **overrides}
    )


def state(**overrides: Any) -> upgradeable.UpgradeableState | None:
    return upgradeable.condition(upgradeable.risks(sources(**overrides)))


# -- each source -------------------------------------------------------------------------------------


def test_nothing_blocks_means_no_condition() -> None:
    assert upgradeable.risks(sources()) == []
    assert state() is None
    # Not consulted at all (no ConfigMaps read): no error either.
    assert state(admin_gates=None, admin_acks=None) is None


@pytest.mark.parametrize(
    ("given", "reason", "message"),
    [
        (
            {"updating": True},
            "ClusterVersionUpdating",
            "An update is already in progress and the details are in the Progressing condition.",
        ),
        (
            {"overrides": [{"kind": "Deployment", "name": "x", "namespace": "y", "group": "apps", "unmanaged": True}]},
            "ClusterVersionOverrides",
            "Disabling ownership via cluster version overrides prevents updates between minor or major versions. "
            "Please remove overrides before requesting a minor or major version update.",
        ),
        (
            # A ClusterOperator's risk name has a `-`: not a valid condition reason.
            {"cluster_operators": [blocked_co("machine-config", "One or more machine config pools are updating")]},
            "RiskNameNotCompatibleWithReasonProperty",
            "One or more machine config pools are updating",
        ),
        (
            {"admin_gates": ConfigMapRead({SIGSTORE: SIGSTORE_TEXT})},
            "RiskNameNotCompatibleWithReasonProperty",
            SIGSTORE_TEXT,
        ),
    ],
    ids=["updating", "overrides", "cluster operator", "admin ack"],
)
def test_one_risk_gives_its_reason_and_message(given: dict[str, Any], reason: str, message: str) -> None:
    assert state(**given) == upgradeable.UpgradeableState("False", reason, message)


def test_overrides_that_are_managed_do_not_block() -> None:
    assert state(overrides=[{"kind": "Deployment", "name": "x", "unmanaged": False}]) is None


@pytest.mark.parametrize(
    ("acks", "blocked"),
    [({}, True), ({SIGSTORE: "True"}, True), ({SIGSTORE: "yes"}, True), ({SIGSTORE: "true"}, False)],
)
def test_a_gate_is_acked_only_by_exactly_true(acks: dict[str, str], blocked: bool) -> None:
    found = upgradeable.admin_ack_risks(sources(admin_gates=ConfigMapRead({SIGSTORE: SIGSTORE_TEXT}),
                                                admin_acks=ConfigMapRead(acks)))  # fmt: skip
    expected = [Risk(f"AdminAck-{SIGSTORE}", SIGSTORE_TEXT, "https://access.redhat.com/articles/7010000")]
    assert found == (expected if blocked else [])


def test_gates_of_other_versions_are_ignored_and_the_major_counts() -> None:
    gates = {"ack-4.19-old": "old news", "ack-5.20-next-major": "not for 4.20", "ack-4.20-now": "read this"}
    found = upgradeable.admin_ack_risks(sources(admin_gates=ConfigMapRead(gates)))
    assert [r.name for r in found] == ["AdminAck-ack-4.20-now"]
    # Without an https:// token that parses, the URL is the product documentation's root.
    assert found[0].url == "https://docs.redhat.com/en/documentation/openshift_container_platform/"
    bad_url = upgradeable.admin_ack_risks(sources(admin_gates=ConfigMapRead({"ack-4.20-x": "See https://a%zz."})))
    assert bad_url[0].url == "https://docs.redhat.com/en/documentation/openshift_container_platform/"


DOCS_ROOT = "https://docs.redhat.com/en/documentation/openshift_container_platform/"
CO_DOCS = ("https://docs.redhat.com/en/documentation/openshift_container_platform/4.20/html/updating_clusters/"
           "understanding-openshift-updates-1#understanding_clusteroperator_conditiontypes_understanding-openshift-"
           "updates")


@pytest.mark.parametrize(
    ("given", "risk"),
    [
        (
            {"admin_gates": ConfigMapRead(error='configmap "admin-gates" not found')},
            Risk("AdminAckUnknown", "Failed to retrieve ConfigMap admin-gates from namespace openshift-config-managed: "
                 'configmap "admin-gates" not found', DOCS_ROOT),
        ),
        (
            {"admin_acks": ConfigMapRead(error='configmap "admin-acks" not found')},
            Risk("AdminAckUnknown", "Failed to retrieve ConfigMap admin-acks from namespace openshift-config: "
                 'configmap "admin-acks" not found', DOCS_ROOT),
        ),
        (
            # Both missing: the gates are read first, and one risk says so.
            {"admin_gates": ConfigMapRead(error="boom"), "admin_acks": ConfigMapRead(error="bang")},
            Risk("AdminAckUnknown", "Failed to retrieve ConfigMap admin-gates from namespace openshift-config-managed: "
                 "boom", DOCS_ROOT),
        ),
        (
            {"admin_gates": ConfigMapRead({"ack-4.21": "x"})},
            Risk("AdminAck-ack-4.21", 'admin-gates configmap gate "ack-4.21" is invalid: admin-gates configmap gate '
                 'name ack-4.21 has invalid format; must comply with "^ack-([4-5][.][0-9]{1,})-[^-]"', DOCS_ROOT),
        ),
        (
            {"admin_gates": ConfigMapRead({"ack-4.20-b": ""})},
            Risk("AdminAck-ack-4.20-b", "admin-gates configmap gate ack-4.20-b must contain a non-empty value.",
                 DOCS_ROOT),
        ),
        (
            {"version": "4.20", "admin_gates": ConfigMapRead({SIGSTORE: "x"})},
            Risk("AdminAckUnknown", "Failed to parse cluster version to check admin-acks: No Major.Minor.Patch "
                 "elements found", DOCS_ROOT),
        ),
        (
            {"version": "4.20", "admin_gates": None, "cluster_operators": [blocked_co("etcd", "Backup missing")]},
            Risk("ClusterOperatorUpgradeableUnknown", "Failed to parse cluster version to check Upgradeable "
                 "conditions: No Major.Minor.Patch elements found", DOCS_ROOT),
        ),
    ],
    ids=["gates missing", "acks missing", "both missing", "bad gate name", "empty gate", "running version not semver",
         "operators with a running version not semver"],
)
def test_a_source_that_cannot_be_read_blocks_with_a_risk(given: dict[str, Any], risk: Risk) -> None:
    """As upstream (4.23+): an unreadable source is a risk, so Upgradeable is False, minor and major
    updates are blocked and, with the gate, guarded; never Unknown."""
    assert upgradeable.risks(sources(**given)) == [risk]
    reason = risk.name if "-" not in risk.name else "RiskNameNotCompatibleWithReasonProperty"
    assert state(**given) == upgradeable.UpgradeableState("False", reason, risk.message)


def test_a_failed_source_joins_the_other_risks() -> None:
    found = state(updating=True, admin_gates=ConfigMapRead(error="boom"))
    assert found is not None and (found.status, found.reason) == ("False", "MultipleReasons")
    assert found.message.endswith(
        "\n* Failed to retrieve ConfigMap admin-gates from namespace openshift-config-managed: boom")


def test_a_bad_gate_does_not_hide_the_gates_that_need_an_ack() -> None:
    found = upgradeable.risks(sources(admin_gates=ConfigMapRead({"ack-4.20": "x", SIGSTORE: SIGSTORE_TEXT})))
    assert [r.name for r in found] == ["AdminAck-ack-4.20", f"AdminAck-{SIGSTORE}"]
    assert found[1].url == "https://access.redhat.com/articles/7010000"


def test_operators_document_their_risk_under_the_running_minor() -> None:
    (risk,) = upgradeable.risks(sources(cluster_operators=[blocked_co("etcd", "Backup missing")]))
    assert risk == Risk("ClusterOperatorUpgradeable-etcd", "Backup missing", CO_DOCS)


def test_several_risks_in_source_order_operators_by_name() -> None:
    found = state(
        updating=True,
        overrides=[{"unmanaged": True}],
        admin_gates=ConfigMapRead({SIGSTORE: "Sigstore ahead."}),
        cluster_operators=[blocked_co("storage", "CSI migration pending"), blocked_co("etcd", "Backup missing")],
    )
    assert found == upgradeable.UpgradeableState(
        "False",
        "MultipleReasons",
        "Cluster should not be upgraded between minor or major versions for multiple reasons:\n"
        "* An update is already in progress and the details are in the Progressing condition.\n"
        f"* {upgradeable.OVERRIDES_MESSAGE}\n"
        "* Sigstore ahead.\n"
        "* Backup missing\n"
        "* CSI migration pending",
    )


# -- in the status ----------------------------------------------------------------------------------


def cv(status: dict[str, Any] | None = None, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": "version", "generation": 1},
        "spec": spec or {"clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13"},
    }
    if status is not None:
        obj["status"] = status
    return obj


def inputs(gates: dict[str, str] | None = None, *, completed: bool = True) -> cs.StatusInputs:
    """The running release applied (`completed`), or its install under way."""
    return cs.StatusInputs(
        RUNNING,
        admin_gates=ConfigMapRead(gates or {}),
        admin_acks=ConfigMapRead({}),
        worker=worker_state(RUNNING, done=3, completed=completed),
    )


def cond(status: dict[str, Any], type_: str) -> dict[str, Any] | None:
    found = find_condition(status["conditions"], type_)
    return dict(found) if found is not None else None


def test_written_while_blocked_removed_when_not_and_older_wording_cleared() -> None:
    operators = [release_co("etcd", "4.20.3")]
    done = cs.desired_status(cv(), operators, inputs(), T0)
    assert cond(done, "Upgradeable") is None
    # What an older release left: Upgradeable=True and a sub-condition.
    done["conditions"] += [
        {"type": "Upgradeable", "status": "True", "lastTransitionTime": "x"},
        {"type": "UpgradeableAdminAckRequired", "status": "False", "lastTransitionTime": "x"},
    ]
    cleared = cs.desired_status(cv(done), operators, inputs(), T0 + timedelta(minutes=1))
    assert cond(cleared, "Upgradeable") is None and cond(cleared, "UpgradeableAdminAckRequired") is None

    gated = cs.desired_status(cv(cleared), operators, inputs({SIGSTORE: SIGSTORE_TEXT}), T0 + timedelta(minutes=2))
    assert cond(gated, "Upgradeable") == {
        "type": "Upgradeable",
        "status": "False",
        "lastTransitionTime": "2024-05-01T12:02:00Z",
        "reason": "RiskNameNotCompatibleWithReasonProperty",
        "message": SIGSTORE_TEXT,
    }
    # A blocked ClusterOperator joins: the reason changes, the transition time does not.
    operators.append(blocked_co("etcd-2", "second"))
    both = cs.desired_status(cv(gated), operators, inputs({SIGSTORE: SIGSTORE_TEXT}), T0 + timedelta(minutes=3))
    upgradeable_now = cond(both, "Upgradeable")
    assert upgradeable_now is not None and upgradeable_now["reason"] == "MultipleReasons"
    assert upgradeable_now["lastTransitionTime"] == "2024-05-01T12:02:00Z"
    acked = cs.StatusInputs(
        RUNNING, admin_gates=ConfigMapRead({SIGSTORE: SIGSTORE_TEXT}), admin_acks=ConfigMapRead({SIGSTORE: "true"})
    )
    assert cond(cs.desired_status(cv(both), operators[:1], acked, T0 + timedelta(minutes=4)), "Upgradeable") is None


def test_an_update_in_progress_blocks_until_it_completes() -> None:
    fresh = cs.desired_status(cv(), [], inputs(completed=False), T0)  # installing: Progressing=True
    found = cond(fresh, "Upgradeable")
    assert found is not None and found["reason"] == "ClusterVersionUpdating"
    done = cs.desired_status(cv(fresh), [release_co("etcd", "4.20.3")], inputs(), T0 + timedelta(minutes=5))
    assert cond(done, "Upgradeable") is None


def test_the_metric_the_clusternotupgradeable_alert_reads() -> None:
    """`cluster_operator_conditions{name="version",condition="Upgradeable"}` is 0 while blocked (what
    install/'s ClusterNotUpgradeable alert fires on), and absent when nothing blocks."""
    from status.clusterversion import metrics

    def series(operators: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
        obj = cv()
        obj["status"] = cs.desired_status(obj, operators, inputs(), T0)
        found = {}
        for family in metrics.families(obj, operators, RUNNING, metrics.WriteCounts()):
            for sample in family.samples:
                labels = sample.labels
                if sample.name == "cluster_operator_conditions" and labels.get("name") == "version":
                    found[(labels["condition"], labels["reason"])] = sample.value
        return found

    done = release_co("etcd", "4.20.3")
    blocked = series([done, blocked_co("storage", "CSI migration pending")])
    assert blocked[("Upgradeable", "RiskNameNotCompatibleWithReasonProperty")] == 0.0
    assert not [k for k in series([done]) if k[0] == "Upgradeable"]


@given(
    st.dictionaries(st.sampled_from(["ack-4.20-a", "ack-4.20-b", "ack-4.21-c", "ack-4.20", "bad", "ack-5.20-d"]),
                    st.sampled_from(["", "Read https://x.example/a first.", "text"])),
    st.dictionaries(st.sampled_from(["ack-4.20-a", "ack-4.20-b", "bad"]), st.sampled_from(["true", "True", ""])),
    st.sampled_from(["4.20.3", "4.20", ""]),
    st.booleans(),
)
def test_every_gate_blocks_until_acked_and_nothing_passes_unseen(
    gates: dict[str, str], acks: dict[str, str], version: str, acks_readable: bool
) -> None:
    """Whatever the ConfigMaps hold: no risk means nothing blocks, and every risk blocks; an
    unreadable source or version is one AdminAckUnknown, never a silent pass."""
    found = upgradeable.admin_ack_risks(sources(
        version=version, admin_gates=ConfigMapRead(gates),
        admin_acks=ConfigMapRead(acks) if acks_readable else ConfigMapRead(error="boom")))
    if version != "4.20.3" or not acks_readable:
        assert [r.name for r in found] == ["AdminAckUnknown"]
    else:
        badly_named = {k for k in gates if k in ("ack-4.20", "bad")}
        this_minor = {k for k in gates if k.startswith("ack-4.20-") and (not gates[k] or acks.get(k) != "true")}
        wanted = badly_named | this_minor  # gates of other versions never block
        assert {r.name for r in found} == {f"AdminAck-{k}" for k in wanted}
    assert (upgradeable.condition(found) is None) == (not found)
    assert all(r.url.startswith("https://") for r in found)
