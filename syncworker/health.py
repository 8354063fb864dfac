"""Upstream's health checks on an applied object, with its messages.

    check(obj, mode, task) -> TaskError | None

`obj` is what the create or update returned, or the live object when nothing was sent (not for a
create-only object that existed: upstream stops before the check). Nothing is checked while
Initializing. Rollouts are not waited for: a Deployment that is progressing passes.

- Deployment being deleted (retried): `deployment <ns>/<n> is being deleted`.
- Deployment ReplicaFailure=True (at once, WorkloadNotProgressing):
  `deployment <ns>/<n> has a replica failure <reason>: <message>`.
- Deployment Available=False and Progressing=False (at once, WorkloadNotAvailable):
  `deployment <ns>/<n> is not available <reason> (<message>) or progressing <reason> (<message>)`.
- Deployment Progressing=False for ProgressDeadlineExceeded (at once, WorkloadNotProgressing):
  `deployment <ns>/<n> is Progressing=False: ProgressDeadlineExceeded: <message>`.
- DaemonSet being deleted (retried): `daemonset <ns>/<n> is being deleted`.
- Job with no Pod active, and a Pod failed or Failed=True for DeadlineExceeded (retried):
  `deadline exceeded, reason: "<r>", message: "<m>"`.
- CRD whose Established condition is not True (retried):
  `CustomResourceDefinition <n> Established=<s>, <reason>: <message>`, or without one
  `CustomResourceDefinition <n> does not declare an Established status condition: [<conditions>]`.

A retried error ends, once the task's tries are spent, as `Could not update <task>` with reason
UpdatePayloadFailed; its text above is the error's `detail`, for the log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cvo_py.runtime.gotext.durations import TimeFormatError
from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.gotext.times import ZERO_TIME, parse_time, time_string
from syncworker.errors import Effect, TaskError, TaskRef, from_other
from syncworker.modes import Mode

JSON = dict[str, Any]


def _conditions(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = obj.get("status")
    found = status.get("conditions") if isinstance(status, dict) else None
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _field(condition: Mapping[str, Any] | None, key: str) -> str:
    value = condition.get(key) if condition is not None else None
    return "" if value is None else str(value)


def _count(obj: Mapping[str, Any], key: str) -> int:
    status = obj.get("status")
    value = status.get(key) if isinstance(status, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _identity(obj: Mapping[str, Any]) -> str:
    metadata = _metadata(obj)
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"


def _being_deleted(obj: Mapping[str, Any]) -> bool:
    return bool(_metadata(obj).get("deletionTimestamp"))


def _workload(reason: str, message: str, name: str, task: TaskRef, detail: str) -> TaskError:
    return TaskError(reason, message, Effect.FAIL, task=task, name=name, detail=detail)


def check_deployment(obj: JSON, task: TaskRef) -> TaskError | None:
    name = _identity(obj)
    if _being_deleted(obj):
        return from_other(task, f"deployment {name} is being deleted")
    by_type: dict[str, Mapping[str, Any]] = {}
    for condition in _conditions(obj):
        by_type[_field(condition, "type")] = condition  # the last of a type counts, as upstream
    available, progressing = by_type.get("Available"), by_type.get("Progressing")
    replica_failure = by_type.get("ReplicaFailure")
    if replica_failure is not None and _field(replica_failure, "status") == "True":
        message = (
            f"deployment {name} has a replica failure {_field(replica_failure, 'reason')}: "
            f"{_field(replica_failure, 'message')}"
        )
        detail = f"deployment {name} has failing pods; unavailable replicas={_count(obj, 'unavailableReplicas')}"
        return _workload("WorkloadNotProgressing", message, name, task, detail)
    if _field(available, "status") == "False" and _field(progressing, "status") == "False":
        message = (
            f"deployment {name} is not available {_field(available, 'reason')} ({_field(available, 'message')}) "
            f"or progressing {_field(progressing, 'reason')} ({_field(progressing, 'message')})"
        )
        detail = (
            f"deployment {name} is neither available nor progressing; updated replicas="
            f"{_count(obj, 'updatedReplicas')} of {_count(obj, 'replicas')}, available replicas="
            f"{_count(obj, 'availableReplicas')} of {_count(obj, 'replicas')}"
        )
        return _workload("WorkloadNotAvailable", message, name, task, detail)
    if _field(progressing, "status") == "False" and _field(progressing, "reason") == "ProgressDeadlineExceeded":
        message = f"deployment {name} is Progressing=False: ProgressDeadlineExceeded: {_field(progressing, 'message')}"
        return _workload("WorkloadNotProgressing", message, name, task, message)
    return None


def check_daemon_set(obj: JSON, task: TaskRef) -> TaskError | None:
    if _being_deleted(obj):
        return from_other(task, f"daemonset {_identity(obj)} is being deleted")
    return None


def check_job(obj: JSON, task: TaskRef) -> TaskError | None:
    """A Job that succeeded once, or still runs, passes: a Job node only orders what comes after it."""
    if _count(obj, "succeeded") > 0 or _count(obj, "active") > 0:
        return None
    failed = next(
        (c for c in _conditions(obj) if _field(c, "type") == "Failed" and _field(c, "status") == "True"), None
    )
    reason, message = _field(failed, "reason"), _field(failed, "message")
    if _count(obj, "failed") > 0:
        if failed is None:
            reason, message = "DeadlineExceeded", "Job was active longer than specified deadline"
    elif failed is None or reason != "DeadlineExceeded":
        return None
    return from_other(task, f"deadline exceeded, reason: {go_quote(reason)}, message: {go_quote(message)}")


def check_custom_resource_definition(obj: JSON, task: TaskRef) -> TaskError | None:
    name = str(_metadata(obj).get("name") or "")
    conditions = _conditions(obj)
    for condition in conditions:
        if _field(condition, "type") == "Established":
            status = _field(condition, "status")
            if status == "True":
                return None
            detail = (
                f"CustomResourceDefinition {name} Established={status}, "
                f"{_field(condition, 'reason')}: {_field(condition, 'message')}"
            )
            return from_other(task, detail)
    listed = " ".join(_go_condition(c) for c in conditions)
    return from_other(
        task, f"CustomResourceDefinition {name} does not declare an Established status condition: [{listed}]"
    )


def _go_condition(condition: Mapping[str, Any]) -> str:
    """A CRD condition as Go's `%v` prints the struct: {Type Status LastTransitionTime Reason Message}."""
    when = _field(condition, "lastTransitionTime")
    try:
        shown = time_string(parse_time(when) if when else ZERO_TIME)
    except TimeFormatError:
        shown = when
    fields = (_field(condition, "type"), _field(condition, "status"), shown)
    return "{" + " ".join((*fields, _field(condition, "reason"), _field(condition, "message"))) + "}"


CHECKS: dict[tuple[str, str], Callable[[JSON, TaskRef], TaskError | None]] = {
    ("apps/v1", "Deployment"): check_deployment,
    ("apps/v1", "DaemonSet"): check_daemon_set,
    ("batch/v1", "Job"): check_job,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): check_custom_resource_definition,
}


def check(obj: JSON, mode: Mode, task: TaskRef) -> TaskError | None:
    """The object's health as upstream judges it in `mode` (module docstring); None is healthy or
    a kind upstream does not check."""
    if mode is Mode.INITIALIZING:
        return None
    rule = CHECKS.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
    return rule(obj, task) if rule is not None else None
