"""Upstream's validation of the ClusterVersion spec: the cluster ID, acceptRisks behind its feature
gate, what a desired update must name, a version-only request matching only an available update,
and how Invalid reads (one error inline, several as a list)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from payload.release import Release
from status.clusterversion import desired as cs
from status.clusterversion import validation
from status.clusterversion.conditions import find_condition
from status.clusterversion.spec import InvalidSpec, pending_update, requested_update

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
CLUSTER_ID = "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13"
IMG = "quay.io/openshift-release-dev/ocp-release@sha256:"
RUNNING = Release("4.14.1", IMG + "1" * 64)


def cv(update: Any = None, cluster_id: str = CLUSTER_ID, **status: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"clusterID": cluster_id}
    if update is not None:
        spec["desiredUpdate"] = update
    history = [{"version": "4.14.0", "image": IMG + "0" * 64, "state": "Completed"}]
    return {"metadata": {"name": "version", "generation": 1}, "spec": spec, "status": {"history": history, **status}}


@pytest.mark.parametrize(
    ("cluster_id", "problem"),
    [
        (CLUSTER_ID, ""),
        ("urn:uuid:" + CLUSTER_ID, ""),
        ("{" + CLUSTER_ID + "}", ""),
        ("c0ffee", "must be an RFC4122-variant UUID"),
        ("", "must be an RFC4122-variant UUID"),
        ("5a0c8f4e-2f3b-1c7d-9e61-0d4f2b7c9a13", "must be a version-4 UUID"),
        ("5a0c8f4e-2f3b-4c7d-0e61-0d4f2b7c9a13", "must be an RFC4122-variant UUID"),  # the NCS variant
    ],
)
def test_the_cluster_id_must_be_a_version_4_uuid(cluster_id: str, problem: str) -> None:
    assert validation.cluster_id_problem(cluster_id) == problem


AVAILABLE = [{"version": "4.14.2", "image": IMG + "2" * 64}]


@pytest.mark.parametrize(
    ("update", "gate", "status", "errors"),
    [
        ({"version": "4.14.2"}, False, {"availableUpdates": AVAILABLE}, []),
        ({"version": "4.14.0"}, False, {}, []),  # in history: valid, but nothing is asked for
        ({"architecture": "Multi"}, False, {}, []),
        (
            {"version": "4.99.0"},
            False,
            {"availableUpdates": AVAILABLE},
            ['spec.desiredUpdate.version: Invalid value: "4.99.0": when image is empty the update must be an available '
             "update"],
        ),
        (
            {"version": "4.14"},
            False,
            {},
            ['spec.desiredUpdate.version: Invalid value: "4.14": must be a semantic version (1.2.3[-...])'],
        ),
        (
            {"version": "4.14.2"},
            False,
            {"availableUpdates": [*AVAILABLE, {"version": "4.14.2", "image": IMG + "3" * 64}]},
            ['spec.desiredUpdate.version: Invalid value: "4.14.2": there are multiple possible payloads for this '
             "version, specify the exact image"],
        ),
        (
            {"force": True},
            False,
            {},
            ["spec.desiredUpdate: Required value: must specify architecture, version, or image"],
        ),
        (
            {"force": True},
            True,
            {},
            ["spec.desiredUpdate: Required value: must specify architecture, version, image, or acceptRisks"],
        ),
        ({"acceptRisks": [{"name": "DriverX"}]}, True, {}, []),
        (
            # At most one error about the desired update: the first in upstream's order.
            {"acceptRisks": [{"name": "DriverX"}]},
            False,
            {},
            ["spec.desiredUpdate.acceptRisks: Forbidden: acceptRisks must not be specified"],
        ),
        (
            {"version": "4.99", "acceptRisks": [{"name": "DriverX"}]},
            False,
            {},
            ["spec.desiredUpdate.acceptRisks: Forbidden: acceptRisks must not be specified"],
        ),
        (
            # Not semver is invalid even with an image.
            {"version": "4.14", "image": IMG + "2" * 64},
            False,
            {},
            ['spec.desiredUpdate.version: Invalid value: "4.14": must be a semantic version (1.2.3[-...])'],
        ),
        (
            {"image": IMG + "2" * 64, "acceptRisks": [{"name": "DriverX"}]},
            False,
            {},
            ["spec.desiredUpdate.acceptRisks: Forbidden: acceptRisks must not be specified"],
        ),
    ],
)  # fmt: skip
def test_desired_update_validation(
    update: dict[str, Any], gate: bool, status: dict[str, Any], errors: list[str]
) -> None:
    assert validation.validate(cv(update, **status), accept_risks=gate) == errors


@pytest.mark.parametrize(
    ("spec", "errors"),
    [
        ({"clusterID": ""}, []),  # checked only when set
        ({"clusterID": CLUSTER_ID, "upstream": "https://updates.example.com/graph?x=1"}, []),
        ({"clusterID": CLUSTER_ID, "upstream": "updates.example.com"}, []),  # Go's url.Parse takes it
        (
            {"clusterID": CLUSTER_ID, "upstream": "https://updates.example.com/%zz"},
            ['spec.upstream: Invalid value: "https://updates.example.com/%zz": must be a valid URL or empty'],
        ),
        (
            {"clusterID": CLUSTER_ID, "upstream": ":no-scheme"},
            ['spec.upstream: Invalid value: ":no-scheme": must be a valid URL or empty'],
        ),
        (
            {"clusterID": "c0ffee", "upstream": "http://a b", "desiredUpdate": {"version": "4.14"}},
            [
                'spec.clusterID: Invalid value: "c0ffee": must be an RFC4122-variant UUID',
                'spec.desiredUpdate.version: Invalid value: "4.14": must be a semantic version (1.2.3[-...])',
                'spec.upstream: Invalid value: "http://a b": must be a valid URL or empty',
            ],
        ),
    ],
)
def test_the_cluster_id_and_the_upstream_are_checked_when_set(spec: dict[str, Any], errors: list[str]) -> None:
    obj = {"metadata": {"name": "version"}, "spec": spec}
    assert validation.validate(obj) == errors


def test_only_available_updates_resolve_a_version() -> None:
    assert validation.requested(cv({"version": "4.14.2"}, availableUpdates=AVAILABLE)) == Release(
        "4.14.2", AVAILABLE[0]["image"]
    )
    conditional = [{"release": {"version": "4.14.3", "image": IMG + "3" * 64}, "risks": []}]
    assert validation.requested(cv({"version": "4.14.3"}, conditionalUpdates=conditional)) is None
    assert validation.requested(cv({"version": "4.14.0"})) is None  # in history only
    assert validation.requested(cv({"architecture": "Multi"})) is None


def invalid_of(obj: dict[str, Any], gate: bool = False) -> tuple[str, str] | None:
    status = cs.desired_status(obj, [], cs.StatusInputs(RUNNING, accept_risks=gate), T0)
    found = find_condition(status["conditions"], "Invalid")
    return (str(found["reason"]), str(found["message"])) if found is not None else None


def test_invalid_reads_one_error_inline_and_several_as_a_list() -> None:
    assert invalid_of(cv({"version": "4.14"})) == (
        "InvalidClusterVersion",
        'The cluster version is invalid: spec.desiredUpdate.version: Invalid value: "4.14": must be a semantic version '
        "(1.2.3[-...])",
    )
    # The common case: accepted risks alone, on a cluster without the gate: one line, as upstream.
    assert invalid_of(cv({"acceptRisks": [{"name": "DriverX"}]})) == (
        "InvalidClusterVersion",
        "The cluster version is invalid: spec.desiredUpdate.acceptRisks: Forbidden: acceptRisks must not be specified",
    )
    # Several: a list, each line ended, the last too.
    assert invalid_of(cv({"acceptRisks": [{"name": "DriverX"}]}, cluster_id="c0ffee")) == (
        "InvalidClusterVersion",
        "The cluster version is invalid:\n"
        '* spec.clusterID: Invalid value: "c0ffee": must be an RFC4122-variant UUID\n'
        "* spec.desiredUpdate.acceptRisks: Forbidden: acceptRisks must not be specified\n",
    )
    # With the gate, accepted risks alone are a valid desired update that asks for no release.
    assert invalid_of(cv({"acceptRisks": [{"name": "DriverX"}]}), gate=True) is None


def test_an_invalid_spec_asks_for_no_release() -> None:
    # A valid image, but the cluster ID is not: the whole desired update is ignored.
    obj = cv({"image": IMG + "2" * 64, "version": "4.14.2"}, cluster_id="c0ffee")
    assert pending_update(obj, RUNNING) is None
    with pytest.raises(InvalidSpec) as raised:
        requested_update(obj)
    assert raised.value.errors == ['spec.clusterID: Invalid value: "c0ffee": must be an RFC4122-variant UUID']


def test_progressing_while_invalid() -> None:
    """Stopped at the current release after completion; "Reconciling" while an update runs."""
    from testkit.harness.clusterversion import worker_state

    applied = cs.StatusInputs(RUNNING, worker=worker_state(RUNNING, completed=True))
    done = cs.desired_status(cv(), [], applied, T0)
    assert done["history"][0]["state"] == "Completed"
    stopped = cs.desired_status({**cv({"version": "4.14"}), "status": done}, [], applied, T0)
    found = find_condition(stopped["conditions"], "Progressing")
    assert found is not None and (found["status"], found.get("reason"), found["message"]) == (
        "False", "InvalidClusterVersion", "Stopped at 4.14.1: the cluster version is invalid")  # fmt: skip
    installing = cs.desired_status(cv({"version": "4.14"}, history=[]), [],
                                   cs.StatusInputs(RUNNING, worker=worker_state(RUNNING, done=2)), T0)  # fmt: skip
    found = find_condition(installing["conditions"], "Progressing")
    assert found is not None and (found["status"], found.get("reason"), found["message"]) == (
        "True", "InvalidClusterVersion", "Reconciling 4.14.1: the cluster version is invalid")  # fmt: skip
