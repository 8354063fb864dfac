"""Forgetting pruned capability names when the ClusterVersion CRD changes (pure parts)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from payload.release import Release
from status.clusterversion import crdpolicy, desired, rejections
from status.clusterversion.caches import CLUSTERVERSION_CRD
from status.clusterversion.capabilities import ENABLED, KNOWN
from status.clusterversion.conditions import CAPABILITIES_PRUNED, IMPLICITLY_ENABLED, find_condition
from status.clusterversion.crdpolicy import CrdRevision, crd_changed, crd_revision
from status.clusterversion.crdpolicy import slim_crd as _slim_crd
from status.clusterversion.desired import StatusInputs
from status.clusterversion.rejections import PrunedValues, RejectedValue
from status.clusterversion.writer import ClusterVersionStatusWriter

NOW = datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC)
NEWER = ("Build", "DeploymentConfig", "ImageRegistry", "MachineAPI")


def crd(uid: str = "u1", generation: int | None = 1, rv: str = "100") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": CLUSTERVERSION_CRD, "uid": uid, "resourceVersion": rv}
    if generation is not None:
        meta["generation"] = generation
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": meta}


def test_the_crd_name_is_the_clusterversion_resource() -> None:
    assert CLUSTERVERSION_CRD == "clusterversions.config.openshift.io"


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (None, None),
        ({}, None),
        (crd(), CrdRevision("u1", "1")),
        (crd(generation=7, rv="555"), CrdRevision("u1", "7")),
        # A server that sets no generation: the resourceVersion stands in for it.
        (crd(generation=None, rv="555"), CrdRevision("u1", "555")),
    ],
)
def test_crd_revision(obj: dict[str, Any] | None, expected: CrdRevision | None) -> None:
    assert crd_revision(obj) == expected


@pytest.mark.parametrize(
    ("seen", "observed", "changed"),
    [
        (None, crd(), False),  # first sighting: the baseline, nothing to forget
        (crd(), None, False),  # deleted: nothing new to try
        (None, None, False),
        (crd(), crd(), False),
        # Status-only update (conditions, accepted names): new resourceVersion, same schema.
        (crd(rv="100"), crd(rv="101"), False),
        (crd(generation=1), crd(generation=2, rv="101"), True),  # re-applied with a new spec
        (crd(uid="u1"), crd(uid="u2"), True),  # deleted and created again (generation 1 again)
        # Without generations, any new resourceVersion counts.
        (crd(generation=None, rv="100"), crd(generation=None, rv="101"), True),
    ],
)
def test_crd_changed(seen: dict[str, Any] | None, observed: dict[str, Any] | None, changed: bool) -> None:
    assert crd_changed(crd_revision(seen), crd_revision(observed)) is changed


def test_slim_crd_keeps_the_revision_and_the_capability_enums_and_drops_the_schema() -> None:
    full = crd(generation=3, rv="900")
    enabled = {"type": "array", "items": {"type": "string", "enum": ["baremetal", "Console"]}}
    capabilities = {"type": "object", "properties": {"enabledCapabilities": enabled}}
    status = {"type": "object", "properties": {"capabilities": capabilities}}
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"status": status}}}
    full["spec"] = {"versions": [{"name": "v1", "served": True, "schema": schema}]}
    full["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    full["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    slim = _slim_crd(full)
    assert slim == {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CLUSTERVERSION_CRD, "uid": "u1", "generation": 3, "resourceVersion": "900"},
        # What each list accepts (None: no enum, anything goes), for retries after a CRD change.
        "capabilityEnums": {"enabledCapabilities": ["Console", "baremetal"], "knownCapabilities": None},
    }
    assert crd_revision(slim) == crd_revision(full) == CrdRevision("u1", "3")
    assert CrdRevision("u1", "3").label() == "generation 3"


def test_pruned_capabilities_clear_returns_what_it_forgets() -> None:
    pruned = PrunedValues()
    pruned.add([RejectedValue(ENABLED, "MachineAPI", 6), RejectedValue(KNOWN, "Build", 0)])
    pruned.add([RejectedValue(ENABLED, "Build", 0)])
    assert pruned.clear() == {ENABLED: ("Build", "MachineAPI"), KNOWN: ("Build",)}
    assert not pruned and pruned.state() == {}
    assert pruned.clear() == {}
    # Forgotten names are new again: a CRD that still rejects them gets them logged and pruned again.
    assert pruned.add([RejectedValue(ENABLED, "MachineAPI", 6)]) == [RejectedValue(ENABLED, "MachineAPI", 6)]


class NoClient:
    """The writer is given no calls to make here; any would be a bug."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"unexpected client call {name}")


def test_writer_forget_pruned() -> None:
    writer = ClusterVersionStatusWriter(NoClient())  # type: ignore[arg-type]
    assert writer.forget_pruned() == {}
    writer.pruned.add([RejectedValue(ENABLED, name, i) for i, name in enumerate(NEWER)])
    assert writer.forget_pruned() == {ENABLED: NEWER}
    assert writer.pruned_state() == {}


def rolled_back_cv(enabled: list[str]) -> dict[str, Any]:
    """Status as the 4.13 operator left it after pruning: the 4.14 names are gone from status."""
    return {
        "metadata": {"name": "version", "generation": 2},
        "spec": {"capabilities": {"baselineCapabilitySet": "v4.11", "additionalEnabledCapabilities": ["Console"]}},
        "status": {
            "desired": {"version": "4.13.10", "image": "img-41310"},
            "history": [],
            "capabilities": {"enabledCapabilities": enabled, "knownCapabilities": []},
            "conditions": [
                {
                    "type": CAPABILITIES_PRUNED,
                    "status": "True",
                    "lastTransitionTime": "2024-02-01T00:00:00Z",
                    "reason": "RejectedByClusterVersionCRD",
                    "message": "…",
                }
            ],
        },
    }


@pytest.mark.parametrize(
    ("carried", "pruned", "enabled_in_status", "condition"),
    [
        # Still pruned: the names stay out of status and the condition says so.
        (NEWER, {ENABLED: NEWER}, ["Console", "baremetal", "marketplace", "openshift-samples"], True),
        # Forgotten after the CRD changed: carried names return, the condition goes away.
        (
            NEWER,
            {},
            sorted(["Console", "baremetal", "marketplace", "openshift-samples", *NEWER]),
            False,
        ),
        # Nothing carried (the spec alone): forgetting restores nothing that was never enabled.
        ((), {}, ["Console", "baremetal", "marketplace", "openshift-samples"], False),
    ],
)
def test_recompute_after_forgetting_restores_carried_names(
    carried: tuple[str, ...],
    pruned: dict[str, tuple[str, ...]],
    enabled_in_status: list[str],
    condition: bool,
) -> None:
    cv = rolled_back_cv(["Console", "baremetal", "marketplace", "openshift-samples"])
    inputs = StatusInputs(running=Release("4.13.10", "img-41310"), prior_enabled=carried)
    status = rejections.apply_pruned(desired.desired_status(cv, [], inputs, NOW), pruned, NOW)
    assert status["capabilities"]["enabledCapabilities"] == enabled_in_status
    found = find_condition(status["conditions"], CAPABILITIES_PRUNED)
    assert (found is not None) is condition
    if condition:
        assert found is not None
        assert found["message"] == rejections.pruned_message(pruned)
    # The carried names are enabled either way (never disabled), so they are reported as implicit.
    implicit = find_condition(status["conditions"], IMPLICITLY_ENABLED)
    assert implicit is not None
    assert (implicit["status"] == "True") is bool(carried)


def test_settle_schedule_retries_at_each_deadline_once() -> None:
    deadlines = crdpolicy.settle_deadlines(100.0)
    assert deadlines == [100.0 + d for d in crdpolicy.CRD_SETTLE_RETRIES]
    assert crdpolicy.settle_due(deadlines, 100.5) == (False, deadlines)
    due, left = crdpolicy.settle_due(deadlines, 103.0)  # the 1s and 3s deadlines passed: one retry
    assert due and left == deadlines[2:]
    assert crdpolicy.settle_due(left, 103.5) == (False, left)
    assert crdpolicy.settle_due(left, 1000.0) == (True, [])
    assert crdpolicy.settle_due([], 1000.0) == (False, [])


def test_only_names_the_schema_lists_are_retried() -> None:
    slim = {crdpolicy.CAPABILITY_ENUMS: {"enabledCapabilities": ["Console", "Ingress"], "knownCapabilities": None}}
    pruned = {"enabledCapabilities": ["Ingress", "Future"], "knownCapabilities": ["Future"]}
    assert crdpolicy.schema_accepts(pruned, slim) == {
        "enabledCapabilities": ["Ingress"],
        "knownCapabilities": ["Future"],  # no enum in the schema: anything goes
    }
    assert crdpolicy.schema_accepts(pruned, None) == pruned


def test_change_label_says_recreated_only_for_a_new_object() -> None:
    assert crdpolicy.change_label(CrdRevision("u1", "2"), CrdRevision("u1", "3")) == "generation 3, was generation 2"
    assert (
        crdpolicy.change_label(CrdRevision("u1", "2"), CrdRevision("u2", "1"))
        == "generation 1, recreated, was generation 2"
    )
    assert crdpolicy.names_text({"knownCapabilities": ["B"], "enabledCapabilities": ["A", "C"]}) == (
        "enabledCapabilities A, C; knownCapabilities B"
    )
