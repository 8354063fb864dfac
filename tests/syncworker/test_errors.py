"""Task errors worded as upstream words them: each API error's reason and cause, the task as it is
named, and a pass's errors condensed (ClusterOperators merged by reason with sorted names and the
strongest effect, several errors as MultipleErrors)."""

from __future__ import annotations

import pytest

from syncworker.errors import (
    Effect,
    TaskError,
    TaskRef,
    from_api_error,
    from_missing_mapping,
    from_other,
    strongest,
    summarize,
)

DEPLOYMENT = TaskRef("Deployment", "openshift-x", "op", 7, 19)
CRD = TaskRef("CustomResourceDefinition", "", "widgets.example.com", 4, 19)

NOT_FOUND = ("UpdatePayloadResourceNotFound", "resource may have been deleted")
CONFLICT = ("UpdatePayloadResourceConflict", "someone else is updating this resource")
DOWN = ("UpdatePayloadClusterDown", "the server is down or not responding")
INTERNAL = ("UpdatePayloadClusterError", "the server is reporting an internal error")
INVALID = ("UpdatePayloadResourceInvalid", "the object is invalid, possibly due to local cluster configuration")
UNAUTHORIZED = ("UpdatePayloadClusterUnauthorized", "could not authenticate to the server")
FORBIDDEN = ("UpdatePayloadResourceForbidden", "the server has forbidden updates to this resource")
OVERLOADED = ("UpdatePayloadClusterOverloaded", "the server is overloaded and is not accepting updates")
FAILED = ("UpdatePayloadFailed", "")

API_ROWS = [
    # (code, reason, the body was not a Status, (our reason, cause))
    (404, "NotFound", False, NOT_FOUND),
    (409, "AlreadyExists", False, NOT_FOUND),
    (409, "Conflict", False, CONFLICT),
    (504, "Timeout", False, DOWN),
    (503, "ServiceUnavailable", False, DOWN),
    (500, "InternalError", False, INTERNAL),
    (422, "Invalid", False, INVALID),
    (401, "Unauthorized", False, UNAUTHORIZED),
    (403, "Forbidden", False, FORBIDDEN),
    (500, "ServerTimeout", False, OVERLOADED),
    (429, "TooManyRequests", False, OVERLOADED),
    (400, "BadRequest", False, FAILED),  # a webhook's refusal
    (410, "Gone", False, FAILED),
    # an unknown or empty reason: the code decides
    (404, "", False, NOT_FOUND),
    (409, "", False, CONFLICT),
    (422, "SomethingNew", False, INVALID),
    (503, "", False, DOWN),
    (500, "", False, INTERNAL),
    (429, "", False, OVERLOADED),
    (502, "", False, FAILED),
    # a known reason wins over the code
    (500, "NotFound", False, NOT_FOUND),
    (404, "BadRequest", False, FAILED),
    # a body that is not a Status: down, unless it says not found or conflict
    (500, "InternalError", True, DOWN),
    (422, "Invalid", True, DOWN),
    (404, "NotFound", True, NOT_FOUND),
    (409, "Conflict", True, CONFLICT),
]


@pytest.mark.parametrize(("code", "reason", "unexpected", "expected"), API_ROWS)
def test_each_api_error_has_upstreams_reason_and_cause(
    code: int, reason: str, unexpected: bool, expected: tuple[str, str]
) -> None:
    ours, cause = expected
    error = from_api_error(DEPLOYMENT, code, reason, unexpected=unexpected, detail="the server's words")
    suffix = f": {cause}" if cause else ""
    assert error.reason == ours
    assert error.message == f'Could not update deployment "openshift-x/op" (7 of 19){suffix}'
    assert (error.retry, error.effect, error.task, error.detail) == (
        True,
        Effect.FAIL,
        DEPLOYMENT,
        "the server's words",
    )


def test_a_cluster_scoped_task_is_named_by_its_name_alone() -> None:
    assert str(CRD) == 'customresourcedefinition "widgets.example.com" (4 of 19)'


def test_a_task_name_is_escaped() -> None:
    assert str(TaskRef("ConfigMap", "ns", "a\nb", 1, 2)) == 'configmap "ns/a\\nb" (1 of 2)'


def test_an_unserved_kind_says_so() -> None:
    error = from_missing_mapping(TaskRef("Widget", "ns", "w", 13, 19))
    assert error.reason == "UpdatePayloadResourceTypeMissing"
    assert error.message == (
        'Could not update widget "ns/w" (13 of 19): '
        "the server does not recognize this resource, check extension API servers"
    )


def test_any_other_error_could_not_update_without_a_cause() -> None:
    error = from_other(DEPLOYMENT, "dial tcp 10.0.0.1:6443: connect: connection refused")
    assert (error.reason, error.message) == (
        "UpdatePayloadFailed",
        'Could not update deployment "openshift-x/op" (7 of 19)',
    )
    assert error.detail == "dial tcp 10.0.0.1:6443: connect: connection refused"


def operator_error(reason: str, name: str, effect: Effect) -> TaskError:
    singular = {
        "ClusterOperatorNotAvailable": "is not available",
        "ClusterOperatorDegraded": "is degraded",
        "ClusterOperatorUpdating": "is updating versions",
        "ClusterOperatorNoVersions": "does not declare expected versions",
    }[reason]
    return TaskError(reason, f"Cluster operator {name} {singular}", effect, name=name, names=(name,))


def test_no_errors_summarize_to_none() -> None:
    assert summarize([]) is None


def test_one_error_is_itself() -> None:
    error = from_other(DEPLOYMENT, "x")
    assert summarize([error]) is error


def test_cluster_operators_sharing_a_reason_merge_with_sorted_names_and_the_strongest_effect() -> None:
    errors = [
        operator_error("ClusterOperatorDegraded", "network", Effect.REPORT),
        operator_error("ClusterOperatorDegraded", "dns", Effect.FAIL_AFTER_INTERVAL),
        operator_error("ClusterOperatorDegraded", "ingress", Effect.REPORT),
    ]
    merged = summarize(errors)
    assert merged is not None
    assert (merged.reason, merged.message, merged.effect) == (
        "ClusterOperatorsDegraded",
        "Cluster operators dns, ingress, network are degraded",
        Effect.FAIL_AFTER_INTERVAL,
    )
    assert merged.names == ("dns", "ingress", "network") and merged.name == "dns, ingress, network"
    assert merged.errors == tuple(errors)


@pytest.mark.parametrize(
    ("reason", "plural", "text"),
    [
        ("ClusterOperatorNotAvailable", "ClusterOperatorsNotAvailable", "Cluster operators a, b are not available"),
        ("ClusterOperatorUpdating", "ClusterOperatorsUpdating", "Cluster operators a, b are updating versions"),
        (
            "ClusterOperatorNoVersions",
            "ClusterOperatorsNoVersions",
            "Cluster operators a, b do not declare expected versions",
        ),
    ],
)
def test_each_operator_reason_has_its_plural(reason: str, plural: str, text: str) -> None:
    merged = summarize([operator_error(reason, "b", Effect.NONE), operator_error(reason, "a", Effect.NONE)])
    assert merged is not None and (merged.reason, merged.message) == (plural, text)


def test_several_reasons_are_multiple_errors_with_sorted_unique_messages() -> None:
    workload = TaskError("WorkloadNotAvailable", "deployment ns/op is not available", Effect.FAIL, name="ns/op")
    errors = [
        operator_error("ClusterOperatorUpdating", "kube-apiserver", Effect.NONE),
        workload,
        operator_error("ClusterOperatorDegraded", "dns", Effect.FAIL_AFTER_INTERVAL),
        workload,
    ]
    summary = summarize(errors)
    assert summary is not None
    assert summary.reason == "MultipleErrors"
    assert summary.message == (
        "Multiple errors are preventing progress:\n"
        "* Cluster operator dns is degraded\n"
        "* Cluster operator kube-apiserver is updating versions\n"
        "* deployment ns/op is not available"
    )
    assert summary.effect is Effect.FAIL
    assert summary.names == ("dns", "kube-apiserver")
    assert [e.reason for e in summary.errors] == [
        "WorkloadNotAvailable",
        "WorkloadNotAvailable",
        "ClusterOperatorDegraded",
        "ClusterOperatorUpdating",
    ]


def test_the_same_failure_twice_is_one_error_once_condensed_by_message() -> None:
    a = from_api_error(DEPLOYMENT, 409, "Conflict")
    summary = summarize([a, a])
    assert summary is not None and summary.message.count("someone else") == 1


def test_effects_order_fail_first_report_last() -> None:
    assert strongest([Effect.REPORT, Effect.NONE]) is Effect.NONE
    assert strongest([Effect.NONE, Effect.FAIL_AFTER_INTERVAL]) is Effect.FAIL_AFTER_INTERVAL
    assert strongest([Effect.FAIL_AFTER_INTERVAL, Effect.FAIL, Effect.REPORT]) is Effect.FAIL
    assert strongest([]) is Effect.REPORT


def test_a_task_name_shows_control_characters_escaped() -> None:
    assert str(TaskRef("Config\x1bMap", "ns", "a\nb", 1, 2)) == 'config\\x1bmap "ns/a\\nb" (1 of 2)'
