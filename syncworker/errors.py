"""What a task reports when it fails, worded as upstream words it, and how a pass's errors are
condensed into the one the status shows.

    TaskRef(kind, namespace, name, number, total)  a task's identity; str() is upstream's
                                                   `deployment "ns/name" (3 of 19)`
    TaskError                                      reason, message, effect, names, ...
    Effect                                         Fail > FailAfterInterval > None > Report
    from_api_error(task, code, reason, ...)        an API error → UpdatePayload* reason and
                                                   `Could not update <task>: <cause>`
    from_missing_mapping(task, detail)             the server does not serve the kind
    from_other(task, detail)                       any other error (a health check's, a manifest
                                                   problem, an unreachable server): UpdatePayloadFailed
    summarize(errors) -> TaskError | None          a pass's errors as one: ClusterOperator errors
                                                   merged by reason, several as MultipleErrors

A task's attempt either succeeds or ends in a TaskError. One with `retry` True (an API error, a
CRD not yet Established, a ClusterOperator not yet in the cache) is tried again by the pass loop
within the task's back-off, and the last attempt's error is the task's; one with `retry` False
(upstream's UpdateError from a check: a ClusterOperator not available, a Deployment that cannot
roll out) fails the task at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from cvo_py.runtime.gotext.quoting import escape, go_quote


class TaskRef(NamedTuple):
    """A task by its manifest's kind, namespace ("" when cluster-scoped) and name, and its place
    in the payload: task `number` (from 1) of `total`."""

    kind: str
    namespace: str
    name: str
    number: int
    total: int

    def __str__(self) -> str:
        where = go_quote(f"{self.namespace}/{self.name}" if self.namespace else self.name)
        return f"{escape(self.kind.lower())} {where} ({self.number} of {self.total})"


class Effect(Enum):
    """How an error holds up an update (upstream's UpdateEffect)."""

    FAIL = "Fail"  # Failing=True at once
    FAIL_AFTER_INTERVAL = "FailAfterInterval"  # Failing=True after the grace period (Degraded)
    NONE = "None"  # waiting, not failing (a ClusterOperator updating)
    REPORT = "Report"  # recorded; the pass goes on (a Degraded ClusterOperator while installing)

    @property
    def strength(self) -> int:
        return _STRENGTH[self]


_STRENGTH = {Effect.FAIL: 3, Effect.FAIL_AFTER_INTERVAL: 2, Effect.NONE: 1, Effect.REPORT: 0}

UPDATE_PAYLOAD_FAILED = "UpdatePayloadFailed"
MULTIPLE_ERRORS = "MultipleErrors"


@dataclass(frozen=True)
class TaskError:
    """One failed task, or several condensed (`errors` holds what MultipleErrors and a merged
    ClusterOperator error stand for).

    `name` is what upstream's summaries name (a ClusterOperator, `ns/name` of a workload, the
    names joined when merged); `names` the ClusterOperators, sorted; `detail` the underlying
    error for the log (the API server's message, the condition that failed a check)."""

    reason: str
    message: str
    effect: Effect = Effect.FAIL
    retry: bool = False
    task: TaskRef | None = None
    name: str = ""
    names: tuple[str, ...] = ()
    detail: str = ""
    errors: tuple[TaskError, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return self.message


# -- one task: API errors ------------------------------------------------------------------------------

# The reasons Kubernetes defines (metav1.StatusReason). Go's apierrors predicates decide by the
# Status reason, and by the HTTP code only when the reason is not one of these.
KNOWN_REASONS = frozenset(
    {
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
        "ServiceUnavailable",
    }
)

CLUSTER_DOWN = ("UpdatePayloadClusterDown", "the server is down or not responding")
# Upstream's reason and cause for an API error, checked in this order: the Status reasons that
# match, and the HTTP codes that match when the reason is not a known one.
_API_CAUSES: tuple[tuple[frozenset[str], frozenset[int], tuple[str, str]], ...] = (
    (
        frozenset({"NotFound", "AlreadyExists"}),
        frozenset({404}),
        ("UpdatePayloadResourceNotFound", "resource may have been deleted"),
    ),
    (
        frozenset({"Conflict"}),
        frozenset({409}),
        ("UpdatePayloadResourceConflict", "someone else is updating this resource"),
    ),
    (frozenset({"Timeout", "ServiceUnavailable"}), frozenset({504, 503}), CLUSTER_DOWN),
    (
        frozenset({"InternalError"}),
        frozenset({500}),
        ("UpdatePayloadClusterError", "the server is reporting an internal error"),
    ),
    (
        frozenset({"Invalid"}),
        frozenset({422}),
        ("UpdatePayloadResourceInvalid", "the object is invalid, possibly due to local cluster configuration"),
    ),
    (
        frozenset({"Unauthorized"}),
        frozenset({401}),
        ("UpdatePayloadClusterUnauthorized", "could not authenticate to the server"),
    ),
    (
        frozenset({"Forbidden"}),
        frozenset({403}),
        ("UpdatePayloadResourceForbidden", "the server has forbidden updates to this resource"),
    ),
    (
        frozenset({"ServerTimeout", "TooManyRequests"}),
        frozenset({429}),
        ("UpdatePayloadClusterOverloaded", "the server is overloaded and is not accepting updates"),
    ),
)
_UNEXPECTED_FROM = 2  # a response that is not a Status is "down" from the third check on


def api_reason(code: int, reason: str, *, unexpected: bool = False) -> tuple[str, str]:
    """Upstream's (reason, cause) for an API error with HTTP status `code` and Status `reason`.
    `unexpected`: the response body was not a Status object (a proxy's error page); upstream
    counts that as the server being down, unless it is a 404 or a conflict."""
    by_code = reason not in KNOWN_REASONS
    for index, (reasons, codes, result) in enumerate(_API_CAUSES):
        if index == _UNEXPECTED_FROM and unexpected:
            return CLUSTER_DOWN
        if reason in reasons or (by_code and code in codes):
            return result
    return UPDATE_PAYLOAD_FAILED, ""


def from_api_error(
    task: TaskRef, code: int, reason: str = "", *, unexpected: bool = False, detail: str = ""
) -> TaskError:
    """A request that the API server answered with an error (retried by the pass loop)."""
    ours, cause = api_reason(code, reason, unexpected=unexpected)
    return _could_not_update(task, ours, cause, detail)


def from_missing_mapping(task: TaskRef, detail: str = "") -> TaskError:
    """The server does not serve the manifest's group, version and kind (no REST mapping)."""
    cause = "the server does not recognize this resource, check extension API servers"
    return _could_not_update(task, "UpdatePayloadResourceTypeMissing", cause, detail)


def from_other(task: TaskRef, detail: str) -> TaskError:
    """Any other error of an attempt: upstream's UpdatePayloadFailed, with no cause in the message."""
    return _could_not_update(task, UPDATE_PAYLOAD_FAILED, "", detail)


def _could_not_update(task: TaskRef, reason: str, cause: str, detail: str) -> TaskError:
    message = f"Could not update {task}" + (f": {cause}" if cause else "")
    return TaskError(reason, message, Effect.FAIL, retry=True, task=task, detail=detail)


# -- a pass: condensing ------------------------------------------------------------------------------

# The ClusterOperator reasons that merge when several operators share one: plural reason and the
# message with the names.
CLUSTER_OPERATOR_PLURALS = {
    "ClusterOperatorNoVersions": (
        "ClusterOperatorsNoVersions",
        "Cluster operators {} do not declare expected versions",
    ),
    "ClusterOperatorNotAvailable": ("ClusterOperatorsNotAvailable", "Cluster operators {} are not available"),
    "ClusterOperatorDegraded": ("ClusterOperatorsDegraded", "Cluster operators {} are degraded"),
    "ClusterOperatorUpdating": ("ClusterOperatorsUpdating", "Cluster operators {} are updating versions"),
}


def strongest(effects: Iterable[Effect]) -> Effect:
    """The effect that holds an update up most (Report for none)."""
    return max(effects, key=lambda effect: effect.strength, default=Effect.REPORT)


def summarize(errors: Sequence[TaskError]) -> TaskError | None:
    """A pass's errors as the one the status shows (cancellations are not TaskErrors, so the loop
    leaves them out): ClusterOperator errors sharing a reason merged into one naming them all
    (sorted, the strongest effect), then one error as it is, or several as MultipleErrors with
    their messages sorted and unique."""
    condensed = _condense_cluster_operators(errors)
    if not condensed:
        return None
    if len(condensed) == 1:
        return condensed[0]
    messages = sorted({e.message for e in condensed})
    return TaskError(
        MULTIPLE_ERRORS,
        "Multiple errors are preventing progress:\n* " + "\n* ".join(messages),
        strongest(e.effect for e in condensed),
        names=tuple(sorted({n for e in condensed for n in e.names})),
        errors=tuple(condensed),
    )


def _condense_cluster_operators(errors: Sequence[TaskError]) -> list[TaskError]:
    out: list[TaskError] = []
    by_reason: dict[str, list[TaskError]] = {}
    for error in errors:
        if error.reason in CLUSTER_OPERATOR_PLURALS:
            by_reason.setdefault(error.reason, []).append(error)
        else:
            out.append(error)
    for reason in sorted(by_reason):
        group = by_reason[reason]
        if len(group) == 1:
            out.append(group[0])
            continue
        plural, text = CLUSTER_OPERATOR_PLURALS[reason]
        names = tuple(sorted(n for e in group for n in (e.names or (e.name,))))
        joined = ", ".join(names)
        out.append(
            TaskError(
                plural,
                text.format(joined),
                strongest(e.effect for e in group),
                name=joined,
                names=names,
                errors=tuple(group),
            )
        )
    return out


# -- what status says of an error -------------------------------------------------------------------

# The summary after "Unable to apply <v>: " for a ClusterOperator reason, by name (one or several).
_OPERATOR_SUMMARIES = {
    "ClusterOperatorNoVersions": "the cluster operator {} does not declare expected versions",
    "ClusterOperatorsNoVersions": "the cluster operators {} do not declare expected versions",
    "ClusterOperatorNotAvailable": "the cluster operator {} is not available",
    "ClusterOperatorsNotAvailable": "the cluster operators {} are not available",
    "ClusterOperatorDegraded": "the cluster operator {} is degraded",
    "ClusterOperatorsDegraded": "the cluster operators {} are degraded",
    "ClusterOperatorUpdating": "the cluster operator {} is updating versions",
    "ClusterOperatorsUpdating": "the cluster operators {} are updating versions",
}
# A workload's check: the Deployment named `ns/name`.
_WORKLOAD_SUMMARIES = {
    "WorkloadNotProgressing": "the workload {} cannot roll out",
    "WorkloadNotAvailable": "the workload {} has not yet successfully rolled out",
}
_PAYLOAD_PREFIX = "UpdatePayload"


def summary(error: TaskError) -> str:
    """What Progressing says after `Unable to apply <v>: ` (upstream's summary for a reason): a
    ClusterOperator's and a workload's name what holds the update; any `UpdatePayload*` reason
    "the update could not be applied"; a Report-effect error its own message; anything else
    `<name> has an unknown error: <reason>`, or `an unknown error has occurred: <reason>`."""
    if error.effect is Effect.REPORT:
        return error.message
    name = ", ".join(error.names) if error.names else error.name
    for table in (_OPERATOR_SUMMARIES, _WORKLOAD_SUMMARIES):
        text = table.get(error.reason)
        if text is not None and name:
            return text.format(name)
    if error.reason.startswith(_PAYLOAD_PREFIX):
        return "the update could not be applied"
    if name and error.reason != MULTIPLE_ERRORS:
        return f"{name} has an unknown error: {error.reason}"
    return f"an unknown error has occurred: {error.reason}"
