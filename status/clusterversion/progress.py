"""How the release's ClusterOperators hold up the cluster version: upstream's per-operator checks,
how their errors are condensed, and its decision table for `Failing` and `Progressing` (pure; `now`
is injected).

Upstream checks the ClusterOperator of each manifest it applies, in this order: `Available` not
True (fail at once), `Degraded` not False (fail after 40 minutes; reported at once while
installing), an operator version other than the payload's (wait; ignored while installing). While
an update runs, a lone waiting reason becomes `waiting on <names>` in Progressing, and an operator
waited on for more than 30 minutes (machine-config: 90) turns `Failing` to `Unknown`
(`SlowClusterOperator`). After completion ("reconciling") every error fails at once.

cvo-py applies no manifests, so it checks every ClusterOperator of the release (annotated
`include.release.openshift.io/...` or `exclude.release.openshift.io/...`) and compares the
`operator` version with the target. Two consequences, said plainly:

- Upstream waits on the operators of the manifests it has reached; cvo-py cannot know which those
  are. It waits on an operator that is not at the target only once the operator shows it is
  working on it (`Progressing=True`); one that is neither done nor working is not named, and
  `Available`/`Degraded` problems count whatever the operator's place in the release.
- Upstream's clock for an operator starts when its manifest is first applied and restarts with
  the CVO. cvo-py's starts at the `lastTransitionTime` of the condition that shows the operator
  working or unwell (`Progressing=True`, `Degraded` not False, `Available` not True; the earliest
  of them), but never before the update began (`history[0].startedTime`). It needs no memory, so
  a restart of `start` does not reset it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from cvo_py.runtime.gotext.durations import TimeFormatError
from cvo_py.runtime.gotext.times import parse_time

JSON = dict[str, Any]

RELEASE_ANNOTATION_PREFIXES = ("include.release.openshift.io/", "exclude.release.openshift.io/")

# Upstream's update effects, strongest first.
FAIL = "Fail"
FAIL_AFTER_INTERVAL = "FailAfterInterval"
NONE = "None"
REPORT = "Report"
_STRENGTH = {FAIL: 3, FAIL_AFTER_INTERVAL: 2, NONE: 1, REPORT: 0}

# Where the cluster is: the first install (nothing completed yet), an update, or after completion.
INSTALLING = "installing"
UPDATING = "updating"
RECONCILING = "reconciling"

SLOW_AFTER = timedelta(minutes=30)
SLOW_MACHINE_CONFIG_AFTER = timedelta(minutes=90)
DEGRADED_GRACE = timedelta(minutes=40)
MACHINE_CONFIG = "machine-config"

MULTIPLE_ERRORS = "MultipleErrors"
SLOW_CLUSTER_OPERATOR = "SlowClusterOperator"


# -- reading ClusterOperators ------------------------------------------------------------------------


def _name(co: Mapping[str, Any]) -> str:
    return str((co.get("metadata") or {}).get("name") or "")


def is_release_operator(co: Mapping[str, Any]) -> bool:
    annotations = (co.get("metadata") or {}).get("annotations") or {}
    return any(str(key).startswith(RELEASE_ANNOTATION_PREFIXES) for key in annotations)


def operator_version(co: Mapping[str, Any]) -> str:
    for entry in (co.get("status") or {}).get("versions") or []:
        if isinstance(entry, dict) and entry.get("name") == "operator":
            return str(entry.get("version") or "")
    return ""


def _conditions(co: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for condition in (co.get("status") or {}).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type"):
            out.setdefault(str(condition["type"]), condition)
    return out


def co_condition(co: Mapping[str, Any], type_: str) -> str:
    """The status of the ClusterOperator's `type_` condition, "" when it has none."""
    found = _conditions(co).get(type_)
    return str(found.get("status") or "") if found is not None else ""


def release_operators(cluster_operators: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The release's ClusterOperators, by name."""
    return sorted((co for co in cluster_operators if is_release_operator(co)), key=_name)


def unwell(co: Mapping[str, Any]) -> bool:
    """Not Available, or Degraded (a missing condition counts, as upstream)."""
    return co_condition(co, "Available") != "True" or co_condition(co, "Degraded") != "False"


@dataclass(frozen=True)
class OperatorProgress:
    total: int
    done: int  # at the target version
    unwell: int = 0  # not Available or Degraded, whatever their version

    @property
    def completed(self) -> bool:
        """Every operator at the target and well (upstream completes a pass only without errors);
        with no release ClusterOperators there is nothing to judge progress from."""
        return self.total > 0 and self.done == self.total and self.unwell == 0


def operator_progress(cluster_operators: Sequence[Mapping[str, Any]], target_version: str) -> OperatorProgress:
    """cvo-py's "N of M done": the release's ClusterOperators reporting the target as their
    `operator` version, out of all of them (upstream counts manifests applied)."""
    release = release_operators(cluster_operators)
    done = sum(1 for co in release if target_version and operator_version(co) == target_version)
    return OperatorProgress(total=len(release), done=done, unwell=sum(1 for co in release if unwell(co)))


def working_since(co: Mapping[str, Any], update_start: datetime | None, now: datetime) -> datetime:
    """When the operator started working on (or became unwell during) the update, by the
    transition times of its conditions, never before `update_start` (module docstring)."""
    conditions = _conditions(co)
    floor = update_start or now
    times: list[datetime] = []
    for type_, healthy in (("Progressing", None), ("Degraded", "False"), ("Available", "True")):
        condition = conditions.get(type_)
        status = str(condition.get("status") or "") if condition is not None else ""
        working = status == "True" if healthy is None else status != healthy
        if not working:
            continue
        when = parse_time_or_none(condition.get("lastTransitionTime")) if condition is not None else None
        times.append(when or floor)
    return max(floor, min(times)) if times else now


def parse_time_or_none(value: Any) -> datetime | None:
    """A metav1.Time, or None when absent or unreadable (or, like year 0, which Go and the API
    server take, before the first year a datetime holds)."""
    try:
        return datetime.fromtimestamp(parse_time(str(value)) / 1e9, UTC) if value else None
    except (TimeFormatError, ValueError, OverflowError):
        return None


# -- errors ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OperatorError:
    """One reason holding up the cluster version (one operator's, or several condensed)."""

    reason: str
    message: str
    names: tuple[str, ...]
    effect: str
    summary: str  # for "Unable to apply <v>: <summary>"


_CHECKS = {
    # singular reason: (plural reason, singular text, plural text)
    "ClusterOperatorNotAvailable": ("ClusterOperatorsNotAvailable", "is not available", "are not available"),
    "ClusterOperatorDegraded": ("ClusterOperatorsDegraded", "is degraded", "are degraded"),
    "ClusterOperatorUpdating": ("ClusterOperatorsUpdating", "is updating versions", "are updating versions"),
}


def _error(reason: str, names: Sequence[str], effect: str) -> OperatorError:
    plural_reason, one, several = _CHECKS[reason]
    joined = ", ".join(names)
    if len(names) == 1:
        return OperatorError(
            reason, f"Cluster operator {joined} {one}", tuple(names), effect, f"the cluster operator {joined} {one}"
        )
    return OperatorError(
        plural_reason,
        f"Cluster operators {joined} {several}",
        tuple(names),
        effect,
        f"the cluster operators {joined} {several}",
    )


def operator_errors(
    cluster_operators: Sequence[Mapping[str, Any]], target_version: str, mode: str
) -> list[OperatorError]:
    """Each release ClusterOperator's first failing check (upstream's order), condensed: one error
    per reason, names sorted."""
    by_reason: dict[str, list[str]] = {}
    effects: dict[str, str] = {}
    for co in release_operators(cluster_operators):
        name = _name(co)
        if co_condition(co, "Available") != "True":
            reason, effect = "ClusterOperatorNotAvailable", FAIL
        elif co_condition(co, "Degraded") != "False":
            reason, effect = "ClusterOperatorDegraded", REPORT if mode == INSTALLING else FAIL_AFTER_INTERVAL
        elif target_version and operator_version(co) != target_version and mode != INSTALLING:
            if mode == UPDATING and co_condition(co, "Progressing") != "True":
                continue  # not working on the update (yet): not waited on (module docstring)
            reason, effect = "ClusterOperatorUpdating", NONE
        else:
            continue
        by_reason.setdefault(reason, []).append(name)
        effects[reason] = effect
    return [_error(reason, names, effects[reason]) for reason, names in by_reason.items()]


def combine(errors: Sequence[OperatorError]) -> OperatorError | None:
    """One error for the status: the only one, or upstream's MultipleErrors (sorted unique messages)."""
    if not errors:
        return None
    if len(errors) == 1:
        return errors[0]
    messages = sorted({e.message for e in errors if e.message})
    return OperatorError(
        MULTIPLE_ERRORS,
        "Multiple errors are preventing progress:\n* " + "\n* ".join(messages),
        tuple(sorted({n for e in errors for n in e.names})),
        max((e.effect for e in errors), key=_STRENGTH.__getitem__),
        f"an unknown error has occurred: {MULTIPLE_ERRORS}",
    )


# -- the decision table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What Failing and Progressing say about the operators.

    `failing` is (status, reason, message). `working` True: Progressing is "Working towards <v>"
    with `progress_reason` and the optional `tail`; False: the update cannot go on ("Unable to apply
    <v>: <tail>", or "Error while reconciling <v>: <tail>" after completion)."""

    failing: tuple[str, str, str]
    working: bool
    progress_reason: str = ""
    tail: str = ""


NOT_FAILING = ("False", "", "")


def decide(
    errors: Sequence[OperatorError],
    mode: str,
    since: Mapping[str, datetime],
    now: datetime,
) -> Decision:
    """Upstream's decision table; `since` is each named operator's `working_since`."""
    error = combine(errors)
    if error is None:
        return Decision(NOT_FAILING, True)
    if mode == RECONCILING:
        return Decision(("True", error.reason, error.message), False, error.reason, error.summary)
    if error.reason == MULTIPLE_ERRORS:
        # Waiting reasons do not fail; the rest do at once (no grace for a Degraded operator here).
        failing = combine([e for e in errors if e.effect != NONE])
        if failing is None:
            return Decision(NOT_FAILING, True)
        return Decision(("True", failing.reason, failing.message), False, error.reason, error.summary)
    if error.effect == NONE:
        return _waiting(error, since, now)
    if error.effect == FAIL_AFTER_INTERVAL:
        exceeded = [n for n in error.names if now - since.get(n, now) > DEGRADED_GRACE]
        if not exceeded:
            return Decision(NOT_FAILING, True, error.reason, f"waiting up to 40 minutes on {', '.join(error.names)}")
        tail = f"wait has exceeded 40 minutes for these operators: {', '.join(exceeded)}"
        return Decision(("True", error.reason, error.message), False, error.reason, tail)
    tail = error.message if error.effect == REPORT else error.summary
    return Decision(("True", error.reason, error.message), False, error.reason, tail)


def _waiting(error: OperatorError, since: Mapping[str, datetime], now: datetime) -> Decision:
    slow: list[str] = []
    machine_config = False
    for name in error.names:
        limit = SLOW_MACHINE_CONFIG_AFTER if name == MACHINE_CONFIG else SLOW_AFTER
        if now - since.get(name, now) > limit:
            if name == MACHINE_CONFIG:
                machine_config = True
            else:
                slow.append(name)
    if not slow and not machine_config:
        return Decision(NOT_FAILING, True, error.reason, f"waiting on {', '.join(error.names)}")
    if slow and machine_config:
        tail = (
            f"waiting on {', '.join(slow)} over 30 minutes and machine-config over 90 minutes which is longer "
            "than expected"
        )
    elif slow:
        tail = f"waiting on {', '.join(slow)} over 30 minutes which is longer than expected"
    else:
        tail = "waiting on machine-config over 90 minutes which is longer than expected"
    return Decision(("Unknown", SLOW_CLUSTER_OPERATOR, tail), True, error.reason, tail)


def judge(
    cluster_operators: Sequence[Mapping[str, Any]],
    target_version: str,
    mode: str,
    update_start: datetime | None,
    now: datetime,
) -> Decision:
    """The decision for the release's ClusterOperators at `now`, the update having started at
    `update_start` (None when unknown)."""
    errors = operator_errors(cluster_operators, target_version, mode)
    named = {n for e in errors for n in e.names}
    since = {_name(co): working_since(co, update_start, now) for co in cluster_operators if _name(co) in named}
    return decide(errors, mode, since, now)
