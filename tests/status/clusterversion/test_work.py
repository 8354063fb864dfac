"""What the status loop hands the sync worker after a sync: which payload, in which first mode,
with which apply-time selection (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from payload.acceptance import payload_loaded, retrieving
from payload.release import Acceptance, Release
from status.clusterversion.work import apply_selection, handover
from syncworker.load import Payload
from syncworker.manifest import parse_manifests
from syncworker.modes import Mode
from syncworker.select import Selection

A = Release("4.99.0", "registry.local/release@sha256:" + "a" * 64)
B = Release("4.99.1", "registry.local/release@sha256:" + "b" * 64)
CLUSTER_ID = "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13"
LOCAL = Payload("/", A, {}, "", (), "local-hash==")
TARGET = Payload("/etc/cvo/updatepayloads/x", B, {}, "", (), "target-hash=")


def cv(history: list[tuple[Release, str]], update: Release | None = None, **spec: Any) -> dict[str, Any]:
    desired = {"desiredUpdate": {"version": update.version, "image": update.image}} if update else {}
    return {
        "metadata": {"name": "version", "uid": "cv-uid", "generation": 7},
        "spec": {"clusterID": CLUSTER_ID, **desired, **spec},
        "status": {"history": [{"version": r.version, "image": r.image, "state": s} for r, s in history]},
    }


def accepted(payload: Payload | None = TARGET) -> Acceptance:
    return Acceptance(B, payload_loaded(B.version, B.image, "amd64"), payload=payload)


def given(obj: dict[str, Any], acceptance: Acceptance | None = None, applying: Payload | None = None) -> Any:
    return handover(obj, running=A, local=LOCAL, acceptance=acceptance, applying=applying, selection=Selection())


@pytest.mark.parametrize(
    ("history", "mode"),
    [
        ([], Mode.INITIALIZING),
        ([(A, "Partial")], Mode.INITIALIZING),  # an install that never completed resumes installing
        ([(A, "Completed")], Mode.RECONCILING),
        ([(A, "Partial"), (B, "Completed")], Mode.UPDATING),  # the incoming release of a handover
    ],
)
def test_the_running_release_is_applied_in_the_mode_history_says(
    history: list[tuple[Release, str]], mode: Mode
) -> None:
    found = given(cv(history))
    assert found.work is not None and found.work.payload is LOCAL and found.mode is mode
    assert (found.work.generation, found.work.cluster_version_uid) == (7, "cv-uid")


def test_an_accepted_target_is_applied_and_a_pending_one_keeps_what_is_applied() -> None:
    settled = cv([(A, "Completed")], B)
    pending = Acceptance(B, retrieving(B.version, B.image))
    assert given(settled, pending, applying=LOCAL).work.payload is LOCAL
    found = given(settled, accepted(), applying=LOCAL)
    assert found.work.payload is TARGET and found.note == ""


def test_a_restarted_operator_waits_for_the_release_it_was_updating_to() -> None:
    """The spec names a release other than this process's own and none is applied yet: nothing
    is handed until that release's payload is retrieved (its own, older payload is not applied
    over the update)."""
    assert given(cv([(B, "Partial"), (A, "Completed")], B)).work is None
    assert given(cv([(B, "Partial"), (A, "Completed")], B), accepted()).work.payload is TARGET


def test_a_new_release_is_ignored_while_installing() -> None:
    found = given(cv([(A, "Partial")], B), accepted(), applying=LOCAL)
    assert found.work.payload is LOCAL
    assert found.note == "Ignoring detected version change from 4.99.0 to 4.99.1 during payload initialization"


def test_an_acceptance_about_another_request_or_without_a_payload_hands_nothing_new() -> None:
    other = Acceptance(Release("4.99.2", "registry.local/release@sha256:" + "c" * 64), payload_loaded("4.99.2", "c"))
    assert given(cv([(A, "Completed")], B), other, applying=LOCAL).work.payload is LOCAL
    assert given(cv([(A, "Completed")], B), accepted(None), applying=LOCAL).work.payload is LOCAL


def test_force_and_the_apply_time_selection() -> None:
    obj = cv([(A, "Completed")], B)
    obj["spec"]["desiredUpdate"]["force"] = True
    assert given(obj, accepted(), applying=LOCAL).work.force is True
    overrides = [{"kind": "ConfigMap", "group": "", "namespace": "ns", "name": "x", "unmanaged": True}, "junk"]
    selection = apply_selection(
        Selection(profile="single-node-developer"), cv([], overrides=overrides), ("Build", "Console"), ("Console",)
    )
    assert selection.profile == "single-node-developer"
    assert selection.known_capabilities == {"Build", "Console"} and selection.enabled_capabilities == {"Console"}
    assert list(selection.overrides) == [overrides[0]]


def _payload(release: Release, capability: str | None) -> Payload:
    annotations = 'include.release.openshift.io/self-managed-high-availability: "true"'
    if capability:
        annotations += f'\n    capability.openshift.io/name: "{capability}"'
    text = (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: ns\n  annotations:\n    {annotations}\n"
    )
    manifests = parse_manifests(text.encode(), directory="release-manifests", file="0000_50_x_00_cm.yaml")
    return Payload("/p", release, {}, "", tuple(manifests), release.version)


def test_a_resource_moving_into_a_disabled_capability_implicitly_enables_it() -> None:
    before, after = _payload(A, None), _payload(B, "Console")
    selection = Selection(known_capabilities=frozenset({"Console"}))
    acceptance = Acceptance(B, payload_loaded(B.version, B.image, "amd64"), payload=after)
    found = handover(
        cv([(A, "Completed")], B), running=A, local=before, acceptance=acceptance, applying=before, selection=selection
    )
    assert found.implicit == {"Console"}
    assert found.work is not None and "Console" in found.work.selection.enabled_capabilities
