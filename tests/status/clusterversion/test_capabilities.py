"""Capability lists per release, and reading 422 rejections of capability names."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from status.clusterversion import capabilities as caps
from status.clusterversion import rejections as rej

V413 = (
    "openshift-samples",
    "baremetal",
    "marketplace",
    "Console",
    "Insights",
    "Storage",
    "CSISnapshot",
    "NodeTuning",
)


@pytest.mark.parametrize(
    ("version", "expected_last", "count"),
    [
        ("4.11.0", "marketplace", 3),
        ("4.12.3", "CSISnapshot", 7),
        ("4.13.0-rc.1", "NodeTuning", 8),
        ("4.14.1", "ImageRegistry", 12),
        ("4.15.0", "CloudCredential", 14),
        ("4.16.2", "CloudControllerManager", 16),
        ("4.17.0", "CloudControllerManager", 16),
        ("4.18.1", "OperatorLifecycleManagerV1", 17),
        ("4.22.0", "OperatorLifecycleManagerV1", 17),
        ("", "OperatorLifecycleManagerV1", 17),  # unknown: the newest lists
        ("5.1.0", "OperatorLifecycleManagerV1", 17),
    ],
)
def test_known_capabilities_follow_the_crd_enum(version: str, expected_last: str, count: int) -> None:
    known = caps.known_capabilities(version)
    assert known[-1] == expected_last
    assert len(known) == count == len(set(known))
    assert known[: len(V413)] == V413[: len(known)]


def test_release_before_capabilities_is_an_error() -> None:
    with pytest.raises(ValueError, match="predates cluster capabilities"):
        caps.known_capabilities("4.10.3")


@pytest.mark.parametrize(
    ("version", "set_name", "has_machine_api", "size"),
    [
        ("4.13.5", "v4.11", False, 3),  # 4.13 evaluates the old definition
        ("4.14.1", "v4.11", True, 4),  # retro-edited from release-4.14 on
        ("4.14.1", "v4.13", True, 9),
        ("4.14.1", "vCurrent", True, 12),
        ("4.17.0", "v4.17", True, 16),
        ("4.18.0", "v4.18", True, 17),
        ("4.18.0", "None", False, 0),
    ],
)
def test_capability_sets(version: str, set_name: str, has_machine_api: bool, size: int) -> None:
    expanded = caps.capability_sets(version)[set_name]
    assert ("MachineAPI" in expanded) is has_machine_api
    assert len(expanded) == size


def test_baseline_sets_stop_at_v4_18() -> None:
    assert tuple(caps.capability_sets("4.13.0")) == ("None", "v4.11", "v4.12", "v4.13", "vCurrent")
    names = set(caps.capability_sets("4.23.0"))
    assert {"v4.17", "v4.18", "vCurrent"} <= names
    assert not {n for n in names if n.startswith(("v4.19", "v4.2"))}


@pytest.mark.parametrize(
    ("spec", "version", "prior", "always", "enabled", "implicit"),
    [
        (None, "4.13.0", [], [], sorted(V413), []),
        ({"baselineCapabilitySet": "None"}, "4.14.0", [], [], [], []),
        (
            {"baselineCapabilitySet": "None", "additionalEnabledCapabilities": ["baremetal"]},
            "4.14.0",
            ["Console"],
            [],
            ["Console", "baremetal"],
            ["Console"],
        ),
        # Rollback 4.14 -> 4.13: the names 4.13 does not know stay enabled (never silently disabled).
        (
            None,
            "4.13.0",
            ["MachineAPI", "Build"],
            [],
            sorted({*V413, "MachineAPI", "Build"}),
            ["Build", "MachineAPI"],
        ),
        (
            {"baselineCapabilitySet": "v4.11"},
            "4.14.0",
            [],
            ["Ingress"],
            sorted({"baremetal", "marketplace", "openshift-samples", "MachineAPI", "Ingress"}),
            ["Ingress"],
        ),
        # A set name newer than the release expands to nothing, as upstream.
        ({"baselineCapabilitySet": "v4.18"}, "4.13.0", ["Console"], [], ["Console"], ["Console"]),
    ],
)
def test_compute(
    spec: dict[str, Any] | None,
    version: str,
    prior: list[str],
    always: list[str],
    enabled: list[str],
    implicit: list[str],
) -> None:
    result = caps.compute(spec, version, prior, always)
    assert list(result.enabled) == enabled
    assert list(result.implicitly_enabled) == implicit
    assert list(result.known) == sorted(caps.known_capabilities(version))


CLUSTER_API_GATE = "ClusterAPIMachineManagement"
COMPATIBILITY_GATE = "CRDCompatibilityRequirementOperator"


@pytest.mark.parametrize(
    ("version", "gates", "gated"),
    [
        ("4.23.0", set(), []),
        ("4.23.0", {"SomethingElse"}, []),
        ("4.23.0", {COMPATIBILITY_GATE}, ["CompatibilityRequirements"]),
        ("4.23.0", {CLUSTER_API_GATE}, ["CompatibilityRequirements", "ClusterAPI"]),  # the enum's order
        ("5.1.0", {CLUSTER_API_GATE, COMPATIBILITY_GATE}, ["CompatibilityRequirements", "ClusterAPI"]),
        ("4.22.3", {CLUSTER_API_GATE, COMPATIBILITY_GATE}, []),  # the release does not know them
    ],
)
def test_gated_capabilities_are_known_and_in_vcurrent_when_their_gates_are_on(
    version: str, gates: set[str], gated: list[str]
) -> None:
    """As upstream's featureGatedCapabilities: on TechPreview and DevPreview (whose FeatureGate
    enables ClusterAPIMachineManagement and CRDCompatibilityRequirementOperator), a 4.23+ cluster
    knows and enables ClusterAPI and CompatibilityRequirements by default (vCurrent)."""
    assert caps.known_capabilities(version, gates)[len(caps.known_capabilities(version)):] == tuple(gated)
    assert caps.capability_sets(version, gates)["vCurrent"] - caps.capability_sets(version)["vCurrent"] == set(gated)
    result = caps.compute(None, version, enabled_gates=gates)
    assert set(gated) <= set(result.known) and set(gated) <= set(result.enabled)
    assert not result.implicitly_enabled
    # An older baseline set does not include them, but they are known.
    older = caps.compute({"baselineCapabilitySet": "v4.18"}, version, enabled_gates=gates)
    assert set(gated) <= set(older.known) and not set(gated) & set(older.enabled)


def test_a_gated_capability_enabled_before_stays_enabled_when_its_gate_is_off() -> None:
    """Never silently disabled: the CRD decides whether status can carry it (pruning says so)."""
    result = caps.compute(None, "4.23.0", prior_enabled=["ClusterAPI"])
    assert "ClusterAPI" in result.enabled and "ClusterAPI" not in result.known
    assert result.implicitly_enabled == ("ClusterAPI",)


def test_compute_rejects_a_non_list_additional() -> None:
    with pytest.raises(ValueError, match="additionalEnabledCapabilities must be a list"):
        caps.compute({"additionalEnabledCapabilities": "Console"}, "4.14.0")


def test_enabled_lists_sort_bytewise_like_upstream() -> None:
    # A 4.14 vCurrent cluster writes this order; 4.13 rejects indexes 0, 3, 4 and 6.
    enabled = caps.compute(None, "4.14.1").enabled
    assert [i for i, name in enumerate(enabled) if name not in V413] == [0, 3, 4, 6]


# -- rejections -------------------------------------------------------------------------------------


def _not_supported(path: str, value: str) -> dict[str, str]:
    supported = ", ".join(json.dumps(v) for v in V413)
    return {
        "reason": "FieldValueNotSupported",
        "message": f"Unsupported value: {json.dumps(value)}: supported values: {supported}",
        "field": path,
    }


def _invalid(*causes: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": "Invalid",
        "code": 422,
        "message": 'ClusterVersion.config.openshift.io "version" is invalid',
        "details": {"name": "version", "group": "config.openshift.io", "kind": "ClusterVersion"},
    }
    if causes:
        body["details"]["causes"] = list(causes)
    return body


SENT: dict[str, Any] = {
    "capabilities": {
        "enabledCapabilities": list(caps.compute(None, "4.14.1").enabled),
        "knownCapabilities": list(caps.compute(None, "4.14.1").known),
    }
}


@pytest.mark.parametrize("prefix", ["status.", ""], ids=["k8s<=1.27-or->=1.31", "k8s-1.28-1.30"])
def test_capability_rejection_in_both_field_path_forms(prefix: str) -> None:
    body = _invalid(
        _not_supported(f"{prefix}capabilities.enabledCapabilities[0]", "Build"),
        _not_supported(f"{prefix}capabilities.enabledCapabilities[6]", "MachineAPI"),
        _not_supported(f"{prefix}capabilities.knownCapabilities[3]", "DeploymentConfig"),
    )
    rejection = rej.parse_rejection(body, SENT)
    assert rejection.prunable
    assert [(c.field, c.value, c.index) for c in rejection.values] == [
        ("enabledCapabilities", "Build", 0),
        ("enabledCapabilities", "MachineAPI", 6),
        ("knownCapabilities", "DeploymentConfig", 3),
    ]
    assert rejection.fields() == [
        "status.capabilities.enabledCapabilities",
        "status.capabilities.enabledCapabilities",
        "status.capabilities.knownCapabilities",
    ]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (_invalid(), "422 without causes (e.g. a JSON-patch test failure)"),
        (
            _invalid(
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value",
                    "field": "status.history[0].image",
                }
            ),
            "another field",
        ),
        (_invalid(_not_supported("spec.capabilities.baselineCapabilitySet", "v4.14")), "a spec enum"),
        (
            _invalid(
                {
                    "reason": "FieldValueInvalid",
                    "message": 'Invalid value: "x"',
                    "field": "status.capabilities.enabledCapabilities[0]",
                }
            ),
            "other reason on a capability",
        ),
        (
            _invalid(_not_supported("status.capabilities.enabledCapabilities[1]", "Build")),
            "value does not match what was sent at that index",
        ),
    ],
)
def test_rejections_that_pruning_must_not_touch(body: dict[str, Any], why: str) -> None:
    rejection = rej.parse_rejection(body, SENT)
    assert not rejection.prunable, why


def test_index_beyond_the_sent_list_still_counts_when_the_value_is_quoted() -> None:
    rejection = rej.parse_rejection(_invalid(_not_supported("capabilities.knownCapabilities[99]", "Build")), SENT)
    assert rejection.prunable
    assert [(c.field, c.value) for c in rejection.values] == [("knownCapabilities", "Build")]


CEL_SKIPPED = {
    "reason": "FieldValueInvalid",
    "message": "Invalid value: null: some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation",
    "field": "<nil>",
}


def test_skipped_cel_rules_note_does_not_block_pruning() -> None:
    # CRDs with x-kubernetes-validations (4.14+) add this note next to the enum errors.
    body = _invalid(_not_supported("status.capabilities.enabledCapabilities[0]", "Build"), CEL_SKIPPED)
    rejection = rej.parse_rejection(body, SENT)
    assert rejection.prunable
    assert rejection.consequential == (CEL_SKIPPED,)
    assert rejection.fields() == ["status.capabilities.enabledCapabilities"]


def test_skipped_cel_rules_note_alone_is_not_prunable() -> None:
    assert not rej.parse_rejection(_invalid(CEL_SKIPPED), SENT).prunable


def test_mixed_rejection_is_not_prunable_but_names_are_known() -> None:
    body = _invalid(
        _not_supported("status.capabilities.enabledCapabilities[0]", "Build"),
        _not_supported("spec.capabilities.baselineCapabilitySet", "v4.14"),
    )
    rejection = rej.parse_rejection(body, SENT)
    assert not rejection.prunable
    assert [c.value for c in rejection.values] == ["Build"]
    assert rejection.fields() == [
        "status.capabilities.enabledCapabilities",
        "spec.capabilities.baselineCapabilitySet",
    ]


def test_value_read_by_index_when_message_has_no_quoted_value() -> None:
    cause = {
        "reason": "FieldValueNotSupported",
        "message": "Unsupported value",
        "field": "capabilities.enabledCapabilities[4]",
    }
    rejection = rej.parse_rejection(_invalid(cause), SENT)
    assert [c.value for c in rejection.values] == ["ImageRegistry"]


def test_prune_removes_exactly_the_named_values() -> None:
    status: dict[str, Any] = {"conditions": [{"type": "Available"}], **copy.deepcopy(SENT)}
    pruned = rej.prune(status, {"enabledCapabilities": {"Build", "MachineAPI"}, "knownCapabilities": set()})
    assert pruned["capabilities"]["enabledCapabilities"] == [
        v for v in SENT["capabilities"]["enabledCapabilities"] if v not in ("Build", "MachineAPI")
    ]
    assert pruned["capabilities"]["knownCapabilities"] == SENT["capabilities"]["knownCapabilities"]
    assert pruned["conditions"] == status["conditions"]
    assert status["capabilities"]["enabledCapabilities"][0] == "Build"  # input untouched


def test_pruned_memory_reports_each_name_once() -> None:
    memory = rej.PrunedValues()
    first = rej.RejectedValue("enabledCapabilities", "Build", 0)
    assert memory.add([first]) == [first]
    assert memory.add([rej.RejectedValue("enabledCapabilities", "Build", 2)]) == []
    assert memory.state() == {"enabledCapabilities": ("Build",)}
    assert "enabledCapabilities Build" in rej.pruned_message(memory.state())


@pytest.mark.parametrize(
    ("path", "normal"),
    [
        ("capabilities.enabledCapabilities[3]", "status.capabilities.enabledCapabilities"),
        ("status.history[0].image", "status.history.image"),
        ("spec.capabilities.baselineCapabilitySet", "spec.capabilities.baselineCapabilitySet"),
        ("", ""),
    ],
)
def test_normalize_field(path: str, normal: str) -> None:
    assert rej.normalize_field(path) == normal


def test_unknown_names_know_the_feature_gated_names_from_4_23() -> None:
    names = ["ClusterAPI", "CompatibilityRequirements", "Ingress", "Zed"]
    assert caps.unknown_names(names) == ["Zed"]  # the newest release
    assert caps.unknown_names(names, "4.23.0") == ["Zed"]
    assert caps.unknown_names(names, "4.22.3") == ["ClusterAPI", "CompatibilityRequirements", "Zed"]
    assert caps.unknown_names(names, "4.15.0") == ["ClusterAPI", "CompatibilityRequirements", "Ingress", "Zed"]


def test_crd_enums_read_what_each_status_list_accepts() -> None:
    crds = Path(__file__).resolve().parents[2] / "crds"
    old = caps.crd_enums(yaml.safe_load((crds / "clusterversion-4.13.yaml").read_text()))
    new = caps.crd_enums(yaml.safe_load((crds / "clusterversion.yaml").read_text()))
    for enums in (old, new):
        assert set(enums) == {caps.ENABLED, caps.KNOWN}
    assert old[caps.ENABLED] is not None and "MachineAPI" not in old[caps.ENABLED]
    assert "NodeTuning" in old[caps.ENABLED]
    assert new[caps.ENABLED] is not None and "MachineAPI" in new[caps.ENABLED]
    assert caps.crd_enums(None) == {caps.ENABLED: None, caps.KNOWN: None}  # nothing known: anything goes


def test_pruned_names_can_be_forgotten_selectively() -> None:
    pruned = rej.PrunedValues()
    pruned.add(rej.RejectedValue(caps.ENABLED, name, i) for i, name in enumerate(["Build", "MachineAPI"]))
    assert pruned.discard({caps.ENABLED: ["MachineAPI", "Console"]}) == {caps.ENABLED: ("MachineAPI",)}
    assert pruned.state() == {caps.ENABLED: ("Build",)}
