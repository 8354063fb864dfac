"""The whole ClusterVersion status from (cv, ClusterOperators, release info, acceptance, now)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from cvo_py.runtime.gotext.times import metav1_time
from payload.acceptance import payload_loaded, retrieval_failed, retrieving
from payload.release import Acceptance, Release
from status.clusterversion import desired as cs
from status.clusterversion import rejections
from status.clusterversion.availableupdates import with_available_updates
from status.clusterversion.conditions import find_condition, set_condition
from status.clusterversion.history import merge_history, prune_history
from status.clusterversion.progress import WorkerState
from status.clusterversion.spec import requested_update
from syncworker.errors import TaskError, TaskRef, summarize
from syncworker.modes import Mode
from syncworker.operators import check
from syncworker.passes import Report
from testkit.checkout import EXAMPLES

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=5)
T2 = T0 + timedelta(minutes=30)
IMG_A = "quay.io/openshift-release-dev/ocp-release@sha256:" + "a" * 64
IMG_B = "quay.io/openshift-release-dev/ocp-release@sha256:" + "b" * 64
RUNNING = Release("4.14.1", IMG_A)


def cond(status: dict[str, Any], type_: str) -> dict[str, Any]:
    found = find_condition(status.get("conditions") or [], type_)
    assert found is not None, f"no {type_} condition in {status.get('conditions')}"
    return dict(found)


def co(
    name: str, version: str, available: str = "True", degraded: str = "False", release: bool = True
) -> dict[str, Any]:
    annotations = {"include.release.openshift.io/self-managed-high-availability": "true"} if release else {}
    return {
        "metadata": {"name": name, "annotations": annotations},
        "status": {
            "versions": [{"name": "operator", "version": version}, {"name": "operand", "version": "x"}],
            "conditions": [
                {"type": "Available", "status": available, "lastTransitionTime": "2024-01-01T00:00:00Z"},
                {"type": "Degraded", "status": degraded, "lastTransitionTime": "2024-01-01T00:00:00Z"},
            ],
        },
    }


CLUSTER_ID = "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13"


def cv(status: dict[str, Any] | None = None, spec: dict[str, Any] | None = None, generation: int = 1) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version", "generation": generation, "uid": "u1", "resourceVersion": "10"},
        "spec": {"clusterID": CLUSTER_ID, **(spec or {})},
    }
    if status is not None:
        obj["status"] = status
    return obj


def worker(
    release: Release = RUNNING,
    *,
    done: int = 0,
    total: int = 20,
    mode: Mode = Mode.UPDATING,
    completed: bool = False,
    failure: TaskError | None = None,
    generation: int = 1,
    version_hash: str = "hash-of-a-payload=",
) -> WorkerState:
    """What a sync worker applying `release` reported last."""
    report = Report(
        release,
        version_hash,
        generation,
        mode,
        0,
        total,
        total if completed else done,
        T0,
        failure=failure,
        completed=completed,
        completed_passes=int(completed),
        started=T0,
    )
    return WorkerState(report)


def co_failure(*operators: dict[str, Any], mode: Mode = Mode.RECONCILING) -> TaskError:
    """The condensed failure of a pass that checked these ClusterOperators against 4.14.1."""
    manifest = {"status": {"versions": [{"name": "operator", "version": "4.14.1"}]}}
    found = [
        check(
            {**manifest, "metadata": o["metadata"]},
            o,
            mode,
            TaskRef("ClusterOperator", "", o["metadata"]["name"], 1, 2),
        )
        for o in operators
    ]
    failure = summarize([f for f in found if f is not None])
    assert failure is not None
    return failure


def completed_status() -> dict[str, Any]:
    """4.14.1 installed and done: the worker completed its pass."""
    return cs.desired_status(cv(), [], cs.StatusInputs(RUNNING, worker=worker(completed=True)), T0)


# -- conditions -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("existing", "status", "reason", "message", "transition"),
    [
        (None, "True", "R", "m", T1),  # new condition: now
        (
            {
                "status": "True",
                "reason": "Old",
                "message": "old",
                "lastTransitionTime": "2024-05-01T12:00:00Z",
            },
            "True",
            "New",
            "new",
            T0,
        ),  # same status: time kept, reason/message overwritten
        ({"status": "True", "lastTransitionTime": "2024-05-01T12:00:00Z"}, "False", "", "", T1),  # flip
        ({"status": "Unknown", "lastTransitionTime": "2024-05-01T12:00:00Z"}, "False", "X", "", T1),
        ({"status": "True"}, "True", "", "", T1),  # missing time is filled
    ],
)
def test_set_condition_moves_transition_time_only_on_flip(
    existing: dict[str, Any] | None, status: str, reason: str, message: str, transition: datetime
) -> None:
    conditions: list[dict[str, Any]] = [{"type": "Other", "status": "True", "lastTransitionTime": "x"}]
    if existing is not None:
        conditions.append({"type": "T", **existing})
    set_condition(conditions, "T", status, reason, message, T1)
    got = find_condition(conditions, "T")
    assert got is not None
    assert conditions[-1]["type"] == "T"  # appended at the end, others untouched
    assert conditions[0] == {"type": "Other", "status": "True", "lastTransitionTime": "x"}
    assert got["lastTransitionTime"] == metav1_time(transition)
    assert got["status"] == status
    assert got.get("reason", "") == reason and got.get("message", "") == message


def test_timestamp_needs_aware_time() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        metav1_time(datetime(2024, 1, 1))


# -- history ----------------------------------------------------------------------------------------


def entry(version: str, image: str, state: str, started: str = "s", completion: str | None = None) -> dict[str, Any]:
    return {
        "state": state,
        "startedTime": started,
        "completionTime": completion,
        "version": version,
        "image": image,
        "verified": False,
    }


@pytest.mark.parametrize(
    ("history", "desired", "completed", "expected"),
    [
        # no image: untouched (nil becomes [])
        (None, Release("4.14.1", ""), False, []),
        # empty: a Partial entry started now
        ([], Release("4.14.1", IMG_A), False, [entry("4.14.1", IMG_A, "Partial", "2024-05-01T12:05:00Z")]),
        # same release completes
        (
            [entry("4.14.1", IMG_A, "Partial")],
            Release("4.14.1", IMG_A),
            True,
            [entry("4.14.1", IMG_A, "Completed", "s", "2024-05-01T12:05:00Z")],
        ),
        # same image fills a missing version
        (
            [entry("", IMG_A, "Partial")],
            Release("4.14.1", IMG_A),
            False,
            [entry("4.14.1", IMG_A, "Partial")],
        ),
        # same version fills a missing image
        (
            [entry("4.14.1", "", "Partial")],
            Release("4.14.1", IMG_A),
            False,
            [entry("4.14.1", IMG_A, "Partial")],
        ),
        # new target: old head closed (stays Partial if never completed), new Partial head
        (
            [entry("4.14.1", IMG_A, "Partial")],
            Release("4.14.2", IMG_B),
            False,
            [
                entry("4.14.2", IMG_B, "Partial", "2024-05-01T12:05:00Z"),
                entry("4.14.1", IMG_A, "Partial", "s", "2024-05-01T12:05:00Z"),
            ],
        ),
        # new target already complete: Completed with start = completion = now
        (
            [entry("4.14.1", IMG_A, "Completed", "s", "c")],
            Release("4.14.2", IMG_B),
            True,
            [
                entry("4.14.2", IMG_B, "Completed", "2024-05-01T12:05:00Z", "2024-05-01T12:05:00Z"),
                entry("4.14.1", IMG_A, "Completed", "s", "c"),
            ],
        ),
        # a completed head is not reopened by a later regression
        (
            [entry("4.14.1", IMG_A, "Completed", "s", "c")],
            Release("4.14.1", IMG_A),
            False,
            [entry("4.14.1", IMG_A, "Completed", "s", "c")],
        ),
    ],
)
def test_merge_history(
    history: list[dict[str, Any]] | None, desired: Release, completed: bool, expected: list[dict[str, Any]]
) -> None:
    before = copy.deepcopy(history)
    assert merge_history(history, desired, False, T1, completed) == expected
    assert history == before  # input not modified


def test_merge_history_marks_verified_head() -> None:
    merged = merge_history([], Release("4.14.1", IMG_A), True, T1, False)
    assert merged[0]["verified"] is True


def _history(versions_states: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [entry(v, f"img-{i}", s, f"t{i}", f"t{i}") for i, (v, s) in enumerate(versions_states)]


def test_prune_keeps_at_most_100_and_drops_the_oldest_low_ranked_entry() -> None:
    # 101 Partial z-stream entries between two Completed entries of the same minor: the highest
    # index that is not protected ranks lowest (-20 - 1.01*i), so index 99 goes.
    history = _history([("4.14.1", "Completed")] + [("4.14.2", "Partial")] * 99 + [("4.14.0", "Completed")])
    assert len(history) == 101
    pruned = prune_history(history)
    assert len(pruned) == 100
    assert pruned[-1]["image"] == "img-100"  # the install stays
    assert [e["image"] for e in pruned[:99]] == [f"img-{i}" for i in range(99)]


def test_prune_prefers_partial_entries_that_cross_minors() -> None:
    # Partial entries between Completed 4.13 and 4.14 rank +20; those between two 4.14 z-streams
    # rank -20. Rank = bonus - 1.01*i: index 60 (-20 - 60.6 = -80.6) goes before index 99
    # (+20 - 99.99 = -79.99), although 99 is older.
    states = [("4.14.5", "Completed")] + [("4.14.4", "Partial")] * 60 + [("4.14.3", "Completed")]
    states += [("4.14.0", "Partial")] * 38 + [("4.13.9", "Completed")]
    history = _history(states)
    assert len(history) == 101
    pruned = prune_history(history)
    removed = {e["image"] for e in history} - {e["image"] for e in pruned}
    assert removed == {"img-60"}


def test_prune_protects_the_five_newest_the_newest_completed_and_the_install() -> None:
    history = _history([("4.14.1", "Partial")] * 6 + [("4.14.0", "Completed")] + [("4.13.0", "Partial")] * 94)
    pruned = prune_history(history)
    images = [e["image"] for e in pruned]
    for keep in ("img-0", "img-4", "img-6", "img-100"):
        assert keep in images
    assert len(pruned) == 100


# -- spec.desiredUpdate -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        ({}, {}, None),
        ({"desiredUpdate": {"image": IMG_B, "version": "4.14.2"}}, {}, Release("4.14.2", IMG_B)),
        (
            {"desiredUpdate": {"version": "4.14.2"}},
            {"availableUpdates": [{"version": "4.14.2", "image": IMG_B, "url": "u", "channels": ["stable-4.14"]}]},
            Release("4.14.2", IMG_B, "u", ("stable-4.14",)),
        ),
        # Valid (found in history) but resolved in availableUpdates only: nothing asked for.
        ({"desiredUpdate": {"version": "4.14.0"}}, {"history": [entry("4.14.0", IMG_B, "Completed")]}, None),
    ],
)
def test_requested_update(spec: dict[str, Any], status: dict[str, Any], expected: Release | None) -> None:
    assert requested_update(cv(status, spec)) == expected


# -- the whole status -------------------------------------------------------------------------------


def test_first_status_seeds_desired_from_the_running_release() -> None:
    status = cs.desired_status(cv(generation=3), [co("etcd", "4.14.0")], cs.StatusInputs(RUNNING), T0)
    assert status["desired"] == {"version": "4.14.1", "image": IMG_A}
    assert status["history"] == [entry("4.14.1", IMG_A, "Partial", "2024-05-01T12:00:00Z")]
    assert status["observedGeneration"] == 3
    assert status["availableUpdates"] is None and status["versionHash"] == ""
    assert cond(status, "Available")["status"] == "False"
    assert cond(status, "Progressing") | {"lastTransitionTime": ""} == {
        "type": "Progressing",
        "status": "True",
        "lastTransitionTime": "",
        "message": "Working towards 4.14.1",  # upstream gives the count once something is done
    }
    assert cond(status, "Failing")["status"] == "False"
    accepted = cond(status, "ReleaseAccepted")
    assert (accepted["status"], accepted["reason"]) == ("True", "PayloadLoaded")
    assert accepted["message"] == payload_loaded("4.14.1", IMG_A).message
    assert status["capabilities"]["knownCapabilities"][0] == "Build"


def test_completion_when_the_worker_completes_a_pass_of_the_desired_release() -> None:
    installing = worker(done=10, mode=Mode.INITIALIZING, version_hash="abcdefghijk=")
    partial = cs.desired_status(cv(), [], cs.StatusInputs(RUNNING, worker=installing), T0)
    assert partial["history"][0]["state"] == "Partial"
    assert partial["versionHash"] == "abcdefghijk="
    assert cond(partial, "Progressing")["message"] == "Working towards 4.14.1: 10 of 20 done (50% complete)"

    finished = worker(mode=Mode.INITIALIZING, completed=True)
    done = cs.desired_status(cv(partial), [], cs.StatusInputs(RUNNING, worker=finished), T1)
    head = done["history"][0]
    assert (head["state"], head["completionTime"], head["startedTime"]) == (
        "Completed",
        "2024-05-01T12:05:00Z",
        "2024-05-01T12:00:00Z",
    )
    assert cond(done, "Available") | {"lastTransitionTime": ""} == {
        "type": "Available",
        "status": "True",
        "message": "Done applying 4.14.1",
        "lastTransitionTime": "",
    }
    progressing = cond(done, "Progressing")
    assert (progressing["status"], progressing["message"]) == ("False", "Cluster version is 4.14.1")
    assert progressing["lastTransitionTime"] == "2024-05-01T12:05:00Z"
    # Failing did not flip, so its time is from the first sync.
    assert cond(done, "Failing")["lastTransitionTime"] == "2024-05-01T12:00:00Z"
    # The next pass, reconciling, keeps saying so while it counts.
    steady = cs.desired_status(cv(done), [], cs.StatusInputs(RUNNING, worker=worker(done=3, mode=Mode.RECONCILING)), T2)
    assert cond(steady, "Progressing")["message"] == "Cluster version is 4.14.1"
    assert steady["history"][0]["state"] == "Completed"


def test_without_a_completed_pass_nothing_completes_and_nothing_reported_keeps_what_was_said() -> None:
    status = cs.desired_status(cv(), [co("etcd", "4.14.1")], cs.StatusInputs(RUNNING, worker=WorkerState()), T0)
    assert status["history"][0]["state"] == "Partial"
    assert cond(status, "Progressing")["message"] == "Working towards 4.14.1"
    failing = cs.desired_status(
        cv(status),
        [],
        cs.StatusInputs(
            RUNNING, worker=worker(failure=co_failure(co("etcd", "4.14.1", available="False"), mode=Mode.UPDATING))
        ),
        T1,
    )
    assert cond(failing, "Failing")["status"] == "True"
    # A restarted operator before its worker's first report: Failing and Progressing stay as written.
    restarted = cs.desired_status(cv(failing), [], cs.StatusInputs(RUNNING, worker=WorkerState()), T2)
    assert cond(restarted, "Failing") == cond(failing, "Failing")
    assert cond(restarted, "Progressing") == cond(failing, "Progressing")


def test_recomputing_an_unchanged_cluster_is_a_fixed_point() -> None:
    first = completed_status()
    again = cs.desired_status(cv(first), [], cs.StatusInputs(RUNNING, worker=worker(completed=True)), T2)
    assert again == first


def test_fields_owned_by_others_are_kept() -> None:
    status = completed_status()
    status["availableUpdates"] = [{"version": "4.14.2", "image": IMG_B}]
    status["conditionalUpdates"] = [{"release": {"version": "4.15.0", "image": "i"}, "risks": []}]
    status["conditions"].insert(
        0,
        {
            "type": "ExampleFromAnotherWriter",
            "status": "False",
            "lastTransitionTime": "z",
            "reason": "Because",
            "message": "not ours",
        },
    )
    status["conditions"].append({"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": "y"})
    original = copy.deepcopy(status)
    again = cs.desired_status(cv(status), [], cs.StatusInputs(RUNNING, worker=worker(completed=True)), T2)
    assert again == original
    assert status == original  # input not modified


@pytest.mark.parametrize(
    ("operators", "reason", "message", "summary"),
    [
        (
            [co("etcd", "4.14.1", degraded="True")],
            "ClusterOperatorDegraded",
            "Cluster operator etcd is degraded",
            "the cluster operator etcd is degraded",
        ),
        (
            [co("etcd", "4.14.1", degraded="True"), co("kube-apiserver", "4.14.1", degraded="True")],
            "ClusterOperatorsDegraded",
            "Cluster operators etcd, kube-apiserver are degraded",
            "the cluster operators etcd, kube-apiserver are degraded",
        ),
        (
            [co("dns", "4.14.1", available="False")],
            "ClusterOperatorNotAvailable",
            "Cluster operator dns is not available",
            "the cluster operator dns is not available",
        ),
        (
            [co("dns", "4.14.1", available="False"), co("etcd", "4.14.1", degraded="True")],
            "MultipleErrors",
            "Multiple errors are preventing progress:\n* Cluster operator dns is not available\n"
            "* Cluster operator etcd is degraded",
            "an unknown error has occurred: MultipleErrors",
        ),
    ],
)
def test_failing_while_reconciling_from_the_workers_failure(
    operators: list[dict[str, Any]], reason: str, message: str, summary: str
) -> None:
    done = completed_status()
    state = worker(done=5, mode=Mode.RECONCILING, failure=co_failure(*operators))
    status = cs.desired_status(cv(done), [], cs.StatusInputs(RUNNING, worker=state), T1)
    failing = cond(status, "Failing")
    assert (failing["status"], failing["reason"], failing["message"]) == ("True", reason, message)
    assert failing["lastTransitionTime"] == "2024-05-01T12:05:00Z"
    progressing = cond(status, "Progressing")
    assert (progressing["status"], progressing["message"]) == (
        "False",
        f"Error while reconciling 4.14.1: {summary}",
    )


def test_update_flow_retrieving_failed_then_accepted_then_completed() -> None:
    done = completed_status()
    spec = {"clusterID": CLUSTER_ID, "desiredUpdate": {"version": "4.14.2", "image": IMG_B}}
    target = Release("4.14.2", IMG_B)
    steady = worker(done=20, mode=Mode.RECONCILING)

    # Asked for, retrieval not reported yet: desired, history and Progressing stay at the running
    # release; only ReleaseAccepted names the target (never the state of the release before it).
    asked = cs.desired_status(cv(done, spec, 2), [], cs.StatusInputs(RUNNING, worker=steady), T1)
    assert asked["desired"]["image"] == IMG_A
    accepted = cond(asked, "ReleaseAccepted")
    assert (accepted["status"], accepted["reason"], accepted["message"]) == (
        "Unknown",
        "RetrievePayload",
        retrieving("4.14.2", IMG_B).message,
    )
    assert cond(asked, "Progressing")["message"] == "Cluster version is 4.14.1"
    assert cond(asked, "Progressing")["status"] == "False"
    assert asked["history"] == done["history"]
    assert asked["observedGeneration"] == 1  # the worker's last report was about generation 1

    # Retrieving, then failing.
    inputs = cs.StatusInputs(RUNNING, Acceptance(target, retrieving("4.14.2", IMG_B)), worker=steady)
    during = cs.desired_status(cv(asked, spec, 2), [], inputs, T1)
    accepted = cond(during, "ReleaseAccepted")
    assert (accepted["status"], accepted["reason"]) == ("Unknown", "RetrievePayload")
    assert accepted["lastTransitionTime"] == "2024-05-01T12:05:00Z"
    assert len(during["history"]) == 1
    failed_state = retrieval_failed("4.14.2", IMG_B, "Unable to download and prepare the update: boom")
    failed = cs.desired_status(
        cv(during, spec, 2), [], cs.StatusInputs(RUNNING, Acceptance(target, failed_state), worker=steady), T2
    )
    accepted = cond(failed, "ReleaseAccepted")
    assert (accepted["status"], accepted["message"]) == ("False", failed_state.message)
    assert cond(failed, "Failing")["status"] == "False"  # upstream: retrieval failures do not fail
    assert cond(failed, "Progressing")["message"] == "Cluster version is 4.14.1"
    assert failed["desired"] == done["desired"] and failed["history"] == done["history"]

    # Accepted, the worker not yet on it: desired stays with what the worker applies.
    ok = Acceptance(target, payload_loaded("4.14.2", IMG_B, "amd64"), verified=True)
    loaded = cs.desired_status(cv(failed, spec, 2), [], cs.StatusInputs(RUNNING, ok, worker=steady), T2)
    assert loaded["desired"]["image"] == IMG_A
    assert cond(loaded, "ReleaseAccepted")["status"] == "True"

    # The worker's first report of the target: new desired, a Partial entry started now, the old one closed.
    first = worker(target, done=0, generation=2)
    moving = cs.desired_status(cv(loaded, spec, 2), [], cs.StatusInputs(RUNNING, ok, worker=first), T2)
    assert moving["desired"] == {"version": "4.14.2", "image": IMG_B}
    assert [h["state"] for h in moving["history"]] == ["Partial", "Completed"]
    assert moving["history"][0]["startedTime"] == "2024-05-01T12:30:00Z"
    assert moving["history"][0]["verified"] is True
    assert moving["observedGeneration"] == 2
    assert cond(moving, "ReleaseAccepted")["status"] == "True"
    assert cond(moving, "Progressing")["message"] == "Working towards 4.14.2"
    assert cond(moving, "Available")["message"] == "Done applying 4.14.1"
    counted = cs.desired_status(
        cv(moving, spec, 2), [], cs.StatusInputs(RUNNING, ok, worker=worker(target, done=15, generation=2)), T2
    )
    assert cond(counted, "Progressing")["message"] == "Working towards 4.14.2: 15 of 20 done (75% complete)"

    # The worker completes a pass of the target: Completed.
    finished = cs.desired_status(
        cv(counted, spec, 2),
        [],
        cs.StatusInputs(RUNNING, ok, worker=worker(target, completed=True, generation=2)),
        T2 + timedelta(hours=1),
    )
    assert [h["state"] for h in finished["history"]] == ["Completed", "Completed"]
    assert finished["history"][0]["completionTime"] == "2024-05-01T13:30:00Z"
    assert finished["history"][0]["verified"] is True
    assert cond(finished, "Available")["message"] == "Done applying 4.14.2"
    assert cond(finished, "Progressing")["message"] == "Cluster version is 4.14.2"


def test_a_running_payload_that_cannot_be_loaded_is_one_condition() -> None:
    refused = WorkerState(refused="Error loading manifests from /payload/manifests: parse x.yaml: broken")
    status = cs.desired_status(cv(), [], cs.StatusInputs(RUNNING, worker=refused), T0)
    accepted = cond(status, "ReleaseAccepted")
    assert (accepted["status"], accepted["reason"]) == ("False", "LoadPayload")
    assert accepted["message"] == (
        f'Loading payload failed version="4.14.1" image="{IMG_A}" failure=Error loading manifests from '
        "/payload/manifests: parse x.yaml: broken"
    )
    assert cond(status, "Failing")["status"] == "False"


def test_deletions_in_progress_block_minor_updates() -> None:
    state = WorkerState(worker(completed=True).report, pending_deletions=('deployment "ns/b"', 'Secret "ns/a"'))
    status = cs.desired_status(cv(completed_status()), [], cs.StatusInputs(RUNNING, worker=state), T1)
    upgradeable = cond(status, "Upgradeable")
    assert (upgradeable["status"], upgradeable["reason"]) == ("False", "ResourceDeletionInProgress")
    assert upgradeable["message"] == (
        "Cluster minor or major version upgrades are not allowed while resource deletions are in progress; "
        'resources=Secret "ns/a",deployment "ns/b"'
    )


@pytest.mark.parametrize("gate", [True, False])
def test_a_multi_architecture_target_is_desired_as_multi_only_with_the_gate(gate: bool) -> None:
    """status.desired.architecture: Multi for a multi-architecture payload with ImageStreamImportMode
    on; blank without the gate, and for a single-architecture payload (as upstream)."""
    spec = {"clusterID": CLUSTER_ID, "desiredUpdate": {"version": "4.14.2", "image": IMG_B, "architecture": "Multi"}}
    multi = Release("4.14.2", IMG_B, architecture="Multi")
    loaded = Acceptance(multi, payload_loaded("4.14.2", IMG_B, "Multi"), verified=True)
    inputs = cs.StatusInputs(RUNNING, loaded, release_architecture=gate)
    moving = cs.desired_status(cv(completed_status(), spec, 2), [co("etcd", "4.14.1")], inputs, T2)
    want = {"version": "4.14.2", "image": IMG_B, **({"architecture": "Multi"} if gate else {})}
    assert moving["desired"] == want
    # read back as it was written: the next computation is the same
    again = cs.desired_status(cv(moving, spec, 2), [co("etcd", "4.14.1")], inputs, T2)
    assert again["desired"] == want
    single = Acceptance(Release("4.14.2", IMG_B), payload_loaded("4.14.2", IMG_B, "amd64"), verified=True)
    plain = cs.desired_status(
        cv(completed_status(), {"desiredUpdate": {"version": "4.14.2", "image": IMG_B}}, 2),
        [co("etcd", "4.14.1")],
        cs.StatusInputs(RUNNING, single, release_architecture=gate),
        T2,
    )
    assert plain["desired"] == {"version": "4.14.2", "image": IMG_B}


@pytest.mark.parametrize("gate", [False, True])
def test_available_and_conditional_releases_carry_their_architecture_only_with_the_gate(gate: bool) -> None:
    """A multi-architecture node's release says `architecture: Multi` in availableUpdates and
    conditionalUpdates with ImageStreamImportMode on; without the gate the field is left out, as
    upstream blanks it."""
    multi = {"version": "4.14.2", "image": IMG_B, "architecture": "Multi"}
    updates = {
        "availableUpdates": [multi, {"version": "4.14.3", "image": IMG_C}],
        "conditionalUpdates": [{"release": {**multi, "version": "4.14.4"}, "risks": [], "conditions": []}],
        "condition": {"type": "RetrievedUpdates", "status": "True"},
        "current": {"version": "4.14.1", "image": IMG_A},
    }
    done = with_available_updates(completed_status(), updates, release_architecture=gate)
    arch = {"architecture": "Multi"} if gate else {}
    assert done["availableUpdates"] == [
        {"version": "4.14.2", "image": IMG_B, **arch},
        {"version": "4.14.3", "image": IMG_C},
    ]
    assert done["conditionalUpdates"][0]["release"] == {"version": "4.14.4", "image": IMG_B, **arch}
    assert updates["availableUpdates"][0] == multi  # the poller's findings are not changed


def test_the_running_release_is_multi_when_its_metadata_says_so() -> None:
    from payload.release import release_from_metadata

    multi = {"version": "4.14.1", "metadata": {"release.openshift.io/architecture": "multi"}}
    assert release_from_metadata(IMG_A, multi).architecture == "Multi"
    assert release_from_metadata(IMG_A, {"version": "4.14.1"}).architecture == ""
    assert Release.from_dict({"version": "4.14.1", "image": IMG_A, "architecture": "Multi"}).architecture == "Multi"
    assert Release.from_dict({"version": "4.14.1", "image": IMG_A, "architecture": "arm64"}).architecture == ""


def test_acceptance_for_a_target_no_longer_asked_for_is_ignored() -> None:
    done = completed_status()
    spec = {"desiredUpdate": {"version": "4.14.3", "image": "other"}}
    stale = Acceptance(Release("4.14.2", IMG_B), payload_loaded("4.14.2", IMG_B))
    status = cs.desired_status(cv(done, spec), [co("etcd", "4.14.1")], cs.StatusInputs(RUNNING, stale), T1)
    assert status["desired"]["image"] == IMG_A


def test_release_accepted_resets_when_the_request_is_withdrawn() -> None:
    done = completed_status()
    set_condition(done["conditions"], "ReleaseAccepted", "False", "RetrievePayload", "failed", T1)
    status = cs.desired_status(cv(done, {"desiredUpdate": None}), [co("etcd", "4.14.1")], cs.StatusInputs(RUNNING), T2)
    accepted = cond(status, "ReleaseAccepted")
    assert (accepted["status"], accepted["reason"]) == ("True", "PayloadLoaded")
    assert accepted["lastTransitionTime"] == "2024-05-01T12:30:00Z"


def test_invalid_desired_update_is_reported() -> None:
    done = completed_status()
    status = cs.desired_status(
        cv(done, {"desiredUpdate": {"version": "9.9.9"}}),
        [co("etcd", "4.14.1")],
        cs.StatusInputs(RUNNING),
        T1,
    )
    invalid = cond(status, "Invalid")
    assert invalid["reason"] == "InvalidClusterVersion"
    assert invalid["message"].startswith(
        'The cluster version is invalid: spec.desiredUpdate.version: Invalid value: "9.9.9"'
    )
    # Upstream's words after completion ("Reconciling <v>: ..." is the one while an update runs).
    progressing = cond(status, "Progressing")
    assert (progressing["status"], progressing["reason"], progressing["message"]) == (
        "False",
        "InvalidClusterVersion",
        "Stopped at 4.14.1: the cluster version is invalid",
    )
    fixed = cs.desired_status(cv(status), [co("etcd", "4.14.1")], cs.StatusInputs(RUNNING), T2)
    assert find_condition(fixed["conditions"], "Invalid") is None


def test_capabilities_never_disabled_and_implicit_ones_reported() -> None:
    prior = completed_status()
    prior["capabilities"]["enabledCapabilities"].append("OperatorLifecycleManager")  # from a newer release
    spec = {"capabilities": {"baselineCapabilitySet": "v4.11"}}
    status = cs.desired_status(
        cv(prior, spec), [co("etcd", "4.14.1")], cs.StatusInputs(RUNNING, always_enabled=("Ingress",)), T1
    )
    enabled = status["capabilities"]["enabledCapabilities"]
    assert "OperatorLifecycleManager" in enabled and "Console" in enabled and "Ingress" in enabled
    assert enabled == sorted(enabled)
    implicit = cond(status, "ImplicitlyEnabledCapabilities")
    assert implicit["status"] == "True" and implicit["reason"] == "CapabilitiesImplicitlyEnabled"
    assert implicit["message"].startswith("The following capabilities could not be disabled: Build, CSISnapshot")
    assert "OperatorLifecycleManager" not in status["capabilities"]["knownCapabilities"]


def test_names_the_status_cannot_carry_stay_enabled() -> None:
    # After a rollback the writer left MachineAPI out of status; it is still enabled, implicitly.
    prior = completed_status()
    prior["capabilities"]["enabledCapabilities"] = ["baremetal", "marketplace", "openshift-samples"]
    spec = {"capabilities": {"baselineCapabilitySet": "v4.11"}}
    inputs = cs.StatusInputs(Release("4.13.10", IMG_A), prior_enabled=("MachineAPI",))
    status = cs.desired_status(cv(prior, spec), [co("etcd", "4.13.10")], inputs, T1)
    assert status["capabilities"]["enabledCapabilities"] == [
        "MachineAPI",
        "baremetal",
        "marketplace",
        "openshift-samples",
    ]
    implicit = cond(status, "ImplicitlyEnabledCapabilities")
    assert implicit["message"] == "The following capabilities could not be disabled: MachineAPI"


def test_apply_pruned_touches_only_capabilities_and_its_condition() -> None:
    status = completed_status()
    pruned = rejections.apply_pruned(status, {"enabledCapabilities": ("Build", "MachineAPI")}, T1)
    assert "Build" not in pruned["capabilities"]["enabledCapabilities"]
    assert "Build" in pruned["capabilities"]["knownCapabilities"]
    condition = cond(pruned, "CapabilitiesPruned")
    assert condition["status"] == "True" and "enabledCapabilities Build, MachineAPI" in condition["message"]
    rest = {k: v for k, v in pruned.items() if k not in ("capabilities", "conditions")}
    assert rest == {k: v for k, v in status.items() if k not in ("capabilities", "conditions")}
    assert pruned["conditions"][:-1] == status["conditions"]
    cleared = rejections.apply_pruned(pruned, {}, T2)
    assert find_condition(cleared["conditions"], "CapabilitiesPruned") is None


def test_bad_input_is_an_error() -> None:
    with pytest.raises(ValueError, match="ClusterVersion object with metadata"):
        cs.desired_status({"spec": {}}, [], cs.StatusInputs(RUNNING), T0)


def test_real_degraded_snapshot() -> None:
    path = EXAMPLES / "4.14.1-degraded-cv.yaml"
    if not path.exists():
        pytest.skip("../shared/oc-examples not found")
    cv_obj = yaml.safe_load(path.read_text())
    operators = yaml.safe_load((EXAMPLES / "4.14.1-degraded-co.yaml").read_text())["items"]
    now = datetime(2023, 11, 3, 18, 0, tzinfo=UTC)
    running = Release.from_dict(cv_obj["status"]["desired"])
    status = cs.desired_status(cv_obj, operators, cs.StatusInputs(running), now)
    # The update is still Partial (not every operator reports 4.14.1) and the history is kept.
    assert [h["version"] for h in status["history"]] == ["4.14.1", "4.14.0-rc.3"]
    assert status["history"] == cv_obj["status"]["history"]
    failing = cond(status, "Failing")
    assert failing["status"] == "True"
    assert "etcd" in failing["message"] and "kube-apiserver" in failing["message"]
    assert failing["lastTransitionTime"] == "2023-11-03T17:26:54Z"  # already True: kept
    assert cond(status, "Available")["message"] == "Done applying 4.14.0-rc.3"
    assert cond(status, "Progressing")["message"].startswith("Unable to apply 4.14.1: ")
    # Upgradeable as 4.23+ computes it: the update in progress, then each ClusterOperator's message
    # (the snapshot's own condition is the ≤4.22 wording, with the CO reasons in each line).
    upgradeable = cond(status, "Upgradeable")
    assert (upgradeable["status"], upgradeable["reason"]) == ("False", "MultipleReasons")
    assert upgradeable["message"] == (
        "Cluster should not be upgraded between minor or major versions for multiple reasons:\n"
        "* An update is already in progress and the details are in the Progressing condition.\n"
        "* cluster operator is not upgradable\n"
        "* One or more machine config pools are updating, please see `oc get mcp` for further details"
    )
    assert upgradeable["lastTransitionTime"] == "2023-11-03T16:24:25Z"  # already False: kept


IMG_C = "quay.io/openshift-release-dev/ocp-release@sha256:" + "c" * 64


def _with_accepted(status: dict[str, Any], state: Any) -> dict[str, Any]:
    out = copy.deepcopy(status)
    set_condition(out["conditions"], "ReleaseAccepted", state.status, state.reason, state.message, T0)
    return out


def _towards_and_accepted(status: dict[str, Any]) -> tuple[str, str, str]:
    accepted = cond(status, "ReleaseAccepted")
    return cond(status, "Progressing")["message"], accepted["status"], accepted["message"]


def test_only_release_accepted_names_a_target_before_its_payload_is_accepted() -> None:
    """No acceptance from retrieval yet (just asked for, or `start` just restarted): Progressing
    stays at the running release and ReleaseAccepted names the target asked for, never another."""
    operators = [co("etcd", "4.14.1")]
    spec_b = {"clusterID": CLUSTER_ID, "desiredUpdate": {"image": IMG_B}}
    failed_c = retrieval_failed("", IMG_C, "Unable to download and prepare the update: boom")
    failed_b = retrieval_failed("", IMG_B, "Unable to download and prepare the update: boom")

    # A failure about another target (C) is replaced by "retrieving" the one asked for (B).
    moved = cs.desired_status(
        cv(_with_accepted(completed_status(), failed_c), spec_b, 2), operators, cs.StatusInputs(RUNNING), T1
    )
    assert _towards_and_accepted(moved) == ("Cluster version is 4.14.1", "Unknown", retrieving("", IMG_B).message)

    # A failure of B itself (say, found before a restart) stays until the next attempt ends.
    kept = cs.desired_status(
        cv(_with_accepted(completed_status(), failed_b), spec_b, 2), operators, cs.StatusInputs(RUNNING), T1
    )
    assert _towards_and_accepted(kept) == ("Cluster version is 4.14.1", "False", failed_b.message)

    # Withdrawn, or back to the running release: the running release's payload, whatever was said before.
    for spec in (
        {"clusterID": CLUSTER_ID},
        {"clusterID": CLUSTER_ID, "desiredUpdate": {"image": IMG_A}},
    ):
        for before in (failed_b, retrieving("", IMG_B), payload_loaded("4.14.9", IMG_C)):
            back = cs.desired_status(
                cv(_with_accepted(completed_status(), before), spec, 2), operators, cs.StatusInputs(RUNNING), T1
            )
            assert _towards_and_accepted(back) == (
                "Cluster version is 4.14.1",
                "True",
                payload_loaded("4.14.1", IMG_A).message,
            )


def test_desired_url_and_channels_come_from_the_release_with_its_digest_first_then_its_version() -> None:
    """As upstream: the release of the same digest describes status.desired (the graph's current
    node, an available or a conditional update), else one of the same version; only what desired
    lacks is filled."""
    current = {"version": "4.14.1", "image": IMG_A, "url": "https://e/4.14.1", "channels": ["stable-4.14"]}
    other_payload = {"version": "4.14.1", "image": IMG_C, "url": "https://e/multi", "channels": ["multi-4.14"]}
    status = {**completed_status(), "desired": {"version": "4.14.1", "image": IMG_A}}

    def desired(updates: dict[str, Any], of: dict[str, Any] = status) -> dict[str, Any]:
        full = {"condition": {"type": "RetrievedUpdates", "status": "True"}, **updates}
        return dict(with_available_updates(of, full)["desired"])

    # A version can name another payload (e.g. the other architecture's): the digest wins.
    assert desired({"current": other_payload, "availableUpdates": [current]}) == {**current}
    assert desired({"current": other_payload, "conditionalUpdates": [{"release": current, "risks": []}]}) == current
    # No release of that digest: the one of that version.
    assert desired({"current": other_payload}) == {
        "version": "4.14.1",
        "image": IMG_A,
        "url": "https://e/multi",
        "channels": ["multi-4.14"],
    }
    # What desired has is kept; nothing describes it: unchanged.
    own = {**status, "desired": {"version": "4.14.1", "image": IMG_A, "url": "https://own"}}
    assert desired({"current": current}, own) == {**current, "url": "https://own"}
    assert desired({"current": {"version": "4.14.9", "image": IMG_B, "url": "https://x"}}) == status["desired"]
    # A desired release known by its digest only gets its version too.
    by_image = {**status, "desired": {"image": IMG_A}}
    assert desired({"current": current}, by_image) == current
