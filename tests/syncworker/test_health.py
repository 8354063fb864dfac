"""The health checks on applied objects, condition by condition, with upstream's messages: which
fail the task at once, which are retried, and that Initializing checks nothing."""

from __future__ import annotations

from typing import Any

import pytest

from syncworker.errors import Effect, TaskRef
from syncworker.health import check
from syncworker.modes import Mode

JSON = dict[str, Any]
TASK = TaskRef("Deployment", "ns", "op", 3, 19)


def deployment(*conditions: tuple[str, str, str, str], deleting: bool = False, **status: int) -> JSON:
    metadata: JSON = {"name": "op", "namespace": "ns"}
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "status": {
            **status,
            "conditions": [{"type": t, "status": s, "reason": r, "message": m} for t, s, r, m in conditions],
        },
    }


AVAILABLE = ("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
UNAVAILABLE = ("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
PROGRESSING = ("Progressing", "True", "ReplicaSetUpdated", 'ReplicaSet "op-1" is progressing.')
STALLED = ("Progressing", "False", "ProgressDeadlineExceeded", 'ReplicaSet "op-1" has timed out progressing.')
NOT_PROGRESSING = ("Progressing", "False", "Paused", "Deployment is paused")
REPLICA_FAILURE = ("ReplicaFailure", "True", "FailedCreate", 'pods "op-1" is forbidden: quota exceeded')

# (conditions, reason or None when healthy, message, fails at once)
DEPLOYMENT_ROWS = [
    ((AVAILABLE, PROGRESSING), None, "", False),
    ((UNAVAILABLE, PROGRESSING), None, "", False),  # a rollout in progress is not waited for
    ((), None, "", False),  # no conditions yet: unknown, passes
    (
        (AVAILABLE, PROGRESSING, REPLICA_FAILURE),
        "WorkloadNotProgressing",
        'deployment ns/op has a replica failure FailedCreate: pods "op-1" is forbidden: quota exceeded',
        True,
    ),
    (
        (UNAVAILABLE, STALLED),
        "WorkloadNotAvailable",
        "deployment ns/op is not available MinimumReplicasUnavailable (Deployment does not have minimum "
        'availability.) or progressing ProgressDeadlineExceeded (ReplicaSet "op-1" has timed out progressing.)',
        True,
    ),
    (
        (UNAVAILABLE, NOT_PROGRESSING),
        "WorkloadNotAvailable",
        "deployment ns/op is not available MinimumReplicasUnavailable (Deployment does not have minimum "
        "availability.) or progressing Paused (Deployment is paused)",
        True,
    ),
    (
        (AVAILABLE, STALLED),
        "WorkloadNotProgressing",
        'deployment ns/op is Progressing=False: ProgressDeadlineExceeded: ReplicaSet "op-1" has timed out progressing.',
        True,
    ),
    ((AVAILABLE, NOT_PROGRESSING), None, "", False),  # not progressing for another reason while available
    ((UNAVAILABLE,), None, "", False),  # not available, but no Progressing=False
]


@pytest.mark.parametrize(("conditions", "reason", "message", "at_once"), DEPLOYMENT_ROWS)
def test_a_deployment_fails_only_when_it_cannot_roll_out(
    conditions: tuple[tuple[str, str, str, str], ...], reason: str | None, message: str, at_once: bool
) -> None:
    error = check(deployment(*conditions), Mode.UPDATING, TASK)
    if reason is None:
        assert error is None
        return
    assert error is not None
    assert (error.reason, error.message, error.retry, error.effect) == (reason, message, not at_once, Effect.FAIL)
    assert error.name == "ns/op" and error.task == TASK


def test_the_last_condition_of_a_type_counts() -> None:
    healed = deployment(REPLICA_FAILURE, ("ReplicaFailure", "False", "", ""))
    assert check(healed, Mode.RECONCILING, TASK) is None


def test_a_deployment_being_deleted_is_retried_then_could_not_be_updated() -> None:
    error = check(deployment(AVAILABLE, deleting=True), Mode.UPDATING, TASK)
    assert error is not None
    assert (error.reason, error.message, error.retry) == (
        "UpdatePayloadFailed",
        'Could not update deployment "ns/op" (3 of 19)',
        True,
    )
    assert error.detail == "deployment ns/op is being deleted"


@pytest.mark.parametrize("mode", [Mode.UPDATING, Mode.RECONCILING])
def test_checks_run_while_updating_and_reconciling(mode: Mode) -> None:
    assert check(deployment(UNAVAILABLE, STALLED), mode, TASK) is not None


def test_nothing_is_checked_while_initializing() -> None:
    assert check(deployment(UNAVAILABLE, STALLED, deleting=True), Mode.INITIALIZING, TASK) is None


def test_a_daemon_set_fails_only_while_being_deleted() -> None:
    task = TaskRef("DaemonSet", "ns", "agent", 1, 2)
    ds: JSON = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "ns"},
        "status": {"numberUnavailable": 3},
    }
    assert check(ds, Mode.UPDATING, task) is None
    ds["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    error = check(ds, Mode.UPDATING, task)
    assert error is not None and error.detail == "daemonset ns/agent is being deleted" and error.retry


def job(**status: Any) -> JSON:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "migrate", "namespace": "ns"},
        "status": status,
    }


FAILED_CONDITION = {
    "type": "Failed",
    "status": "True",
    "reason": "BackoffLimitExceeded",
    "message": "Job has reached the specified backoff limit",
}
DEADLINE_CONDITION = {
    "type": "Failed",
    "status": "True",
    "reason": "DeadlineExceeded",
    "message": "Job was active longer than specified deadline",
}
JOB_ROWS = [
    ({"succeeded": 1, "failed": 3}, None),
    ({"active": 1}, None),  # running: the Job node only orders creation
    ({}, None),  # just created
    (
        {"failed": 2},
        'deadline exceeded, reason: "DeadlineExceeded", message: "Job was active longer than specified deadline"',
    ),
    (
        {"failed": 7, "conditions": [FAILED_CONDITION]},
        'deadline exceeded, reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit"',
    ),
    (
        {"conditions": [DEADLINE_CONDITION]},
        'deadline exceeded, reason: "DeadlineExceeded", message: "Job was active longer than specified deadline"',
    ),
    ({"conditions": [FAILED_CONDITION]}, None),  # failed for another reason without a failed Pod count
    ({"active": 1, "failed": 2}, None),
    (
        {"failed": 1, "conditions": [{**FAILED_CONDITION, "message": 'bad "quote"\n'}]},
        'deadline exceeded, reason: "BackoffLimitExceeded", message: "bad \\"quote\\"\\n"',
    ),
]


@pytest.mark.parametrize(("status", "detail"), JOB_ROWS)
def test_a_failed_job_fails_its_task_and_a_running_one_passes(status: JSON, detail: str | None) -> None:
    task = TaskRef("Job", "ns", "migrate", 11, 19)
    error = check(job(**status), Mode.UPDATING, task)
    if detail is None:
        assert error is None
        return
    assert error is not None
    assert (error.reason, error.message, error.detail, error.retry) == (
        "UpdatePayloadFailed",
        'Could not update job "ns/migrate" (11 of 19)',
        detail,
        True,
    )


def crd(*conditions: JSON) -> JSON:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "status": {"conditions": list(conditions)},
    }


NAMES_ACCEPTED = {
    "type": "NamesAccepted",
    "status": "True",
    "lastTransitionTime": "2026-07-24T10:00:05Z",
    "reason": "NoConflicts",
    "message": "no conflicts found",
}
CRD_ROWS = [
    (crd({"type": "Established", "status": "True"}), None),
    (
        crd(
            {
                "type": "Established",
                "status": "False",
                "reason": "Installing",
                "message": "the initial names have been accepted",
            }
        ),
        "CustomResourceDefinition widgets.example.com Established=False, Installing: "
        "the initial names have been accepted",
    ),
    (crd(), "CustomResourceDefinition widgets.example.com does not declare an Established status condition: []"),
    (
        crd(NAMES_ACCEPTED),
        "CustomResourceDefinition widgets.example.com does not declare an Established status condition: "
        "[{NamesAccepted True 2026-07-24 10:00:05 +0000 UTC NoConflicts no conflicts found}]",
    ),
    (
        crd(
            {"type": "NamesAccepted", "status": "True"},
            {"type": "Other", "status": "False", "lastTransitionTime": "garbage"},
        ),
        "CustomResourceDefinition widgets.example.com does not declare an Established status condition: "
        "[{NamesAccepted True 0001-01-01 00:00:00 +0000 UTC  } {Other False garbage  }]",
    ),
    (
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "w.example.com"},
        },
        "CustomResourceDefinition w.example.com does not declare an Established status condition: []",
    ),
]


@pytest.mark.parametrize(("obj", "detail"), CRD_ROWS)
def test_a_crd_must_be_established(obj: JSON, detail: str | None) -> None:
    task = TaskRef("CustomResourceDefinition", "", "widgets.example.com", 4, 19)
    error = check(obj, Mode.RECONCILING, task)
    if detail is None:
        assert error is None
        return
    assert error is not None
    assert (error.message, error.detail, error.retry) == (
        'Could not update customresourcedefinition "widgets.example.com" (4 of 19)',
        detail,
        True,
    )


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
        {
            "apiVersion": "apps/v1beta2",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "status": {
                "conditions": [dict(zip(("type", "status", "reason", "message"), REPLICA_FAILURE, strict=True))]
            },
        },
    ],
)
def test_other_kinds_are_not_checked(obj: JSON) -> None:
    assert check(obj, Mode.UPDATING, TASK) is None
