"""The ClusterVersion insight and the control plane's health insights, as oc computes them.

Completion, assessment (including the estimate-based "stalled"), the estimate from update history,
and the health insights for a failing ClusterVersion and an incomplete previous update; the
operators' insights, counted here, are `operators`'. `assess_control_plane` gives them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from cvo_py.runtime.gotext.durations import MINUTE, SECOND, go_percent, sub_times
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.insights.estimate import expected_duration, last_observed_progress, time_remaining
from status.updatestatus.insights.health import health, health_uid
from status.updatestatus.insights.kinds import (
    ClusterVersionAssessment,
    ClusterVersionUpdatingReason,
    ConditionStatus,
    ConditionType,
    ImpactLevel,
    ImpactType,
    ScopeType,
    VersionMetadataKey,
)
from status.updatestatus.insights.objects import (
    JSON,
    InputError,
    cond_str,
    cond_time,
    conditions_by_type,
    history,
    name_of,
    time_of,
)
from status.updatestatus.insights.objects import field as get
from status.updatestatus.insights.operators import (
    CONFIG_GROUP,
    RUNBOOK_DEGRADED,
    OperatorState,
    assess_operator,
    clusteroperator_health,
    clusteroperator_insight,
    copy_condition,
    is_counted,
)
from status.updatestatus.insights.plain import (
    ClusterOperatorStatusInsight,
    ClusterVersionStatusInsight,
    Condition,
    ControlPlaneUpdateVersions,
    HealthInsight,
    ResourceRef,
    Version,
    VersionMetadata,
)

NO_PREVIOUS = "<none>"
UNKNOWN_VERSION = "unknown"
MULTI_ARCH = "Multi"
DOC_HISTORY = (
    "https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/"
    "gathering-data-cluster-update.html#gathering-clusterversion-history-cli_troubleshooting_updates"
)


def baseline_duration(hist: list[JSON], cv: JSON) -> int:
    """Duration of the last completed update (not the current one, not the install), else 1 h."""
    if len(hist) < 3:
        return 60 * MINUTE
    for item in hist[1 : len(hist) - 1]:
        if item.get("state") == "Completed":
            started = time_of(item.get("startedTime"), cv, "history startedTime")
            completed = time_of(item.get("completionTime"), cv, "history completionTime")
            if completed < started:  # inconsistent: no baseline rather than a negative one
                return 60 * MINUTE
            return sub_times(completed, started)
    return 60 * MINUTE


class ControlPlaneFacts:
    """What oc derives about the control plane before printing it (also used by node insights)."""

    __slots__ = ("target", "operators", "updated")

    def __init__(self, target: str) -> None:
        self.target = target
        self.operators: list[tuple[JSON, OperatorState]] = []
        self.updated = 0  # operators at the target version

    @property
    def total(self) -> int:
        return len(self.operators)

    @property
    def completed(self) -> bool:
        return self.updated == self.total


def control_plane_facts(cv: JSON, operators: list[JSON], mco_image: str) -> ControlPlaneFacts:
    target = str(get(cv, "status", "desired", "version", want=str))
    facts = ControlPlaneFacts(target=target)
    for co in operators:
        if not isinstance(co, dict):
            raise InputError(f"a ClusterOperator must be an object, not {type(co).__name__}")
        if not is_counted(co):
            continue
        state = assess_operator(co, target, mco_image)
        facts.operators.append((co, state))
        if state.updated:
            facts.updated += 1
    return facts


def versions_from_history(hist: list[JSON]) -> ControlPlaneUpdateVersions:
    if not hist:
        return ControlPlaneUpdateVersions(
            previous=Version(version=UNKNOWN_VERSION, metadata=[]),
            target=Version(version=UNKNOWN_VERSION, metadata=[]),
        )
    target = Version(version=str(hist[0].get("version") or ""), metadata=[])
    if len(hist) == 1:
        previous = Version(version=NO_PREVIOUS, metadata=[VersionMetadata(key=VersionMetadataKey.INSTALLATION)])
    else:
        previous = Version(version=str(hist[1].get("version") or ""), metadata=[])
        if hist[1].get("state") == "Partial":
            previous.metadata.append(VersionMetadata(key=VersionMetadataKey.PARTIAL))
        if hist[0].get("version") == hist[1].get("version") and hist[0].get("image") != hist[1].get("image"):
            target.metadata.append(VersionMetadata(key=VersionMetadataKey.ARCHITECTURE, value=MULTI_ARCH))
    return ControlPlaneUpdateVersions(previous=previous, target=target)


def is_multi_arch_migration(hist: list[JSON]) -> bool:
    return (
        len(hist) > 1
        and hist[0].get("version") == hist[1].get("version")
        and (hist[0].get("image") != hist[1].get("image"))
    )


def updating_condition(cv: JSON, hist: list[JSON], progressing: JSON | None) -> Condition:
    """The `Updating` condition as upstream defines it (reasons and Unknown cases)."""

    def updating(status: ConditionStatus, reason: str, message: str, ltt: int) -> Condition:
        return Condition(ConditionType.UPDATING, status, reason, message, ltt)

    unknown, cannot = ConditionStatus.UNKNOWN, ClusterVersionUpdatingReason.CANNOT_DETERMINE
    if progressing is None:
        # no source time: `compute.stamp_transition_times` gives it one
        return updating(unknown, cannot, "No Progressing condition in ClusterVersion", ZERO_TIME)
    ltt = cond_time(progressing, cv)
    if not hist:
        return updating(unknown, cannot, "Empty history in ClusterVersion", ltt)
    status = cond_str(progressing, "status")
    message = (
        f"ClusterVersion has Progressing={status}(Reason={cond_str(progressing, 'reason')}) | "
        f"Message='{cond_str(progressing, 'message')}'"
    )
    last = hist[0]
    if status == "True":
        if last.get("state") != "Partial":
            why = "Progressing=True in ClusterVersion but last history item is not Partial"
            return updating(unknown, cannot, why, ltt)
        if last.get("completionTime"):
            why = "Progressing=True in ClusterVersion but last history item has completion time"
            return updating(unknown, cannot, why, ltt)
        return updating(ConditionStatus.TRUE, ClusterVersionUpdatingReason.PROGRESSING, message, ltt)
    if status == "False":
        if last.get("state") != "Completed":
            why = "Progressing=False in ClusterVersion but last history item is not completed"
            return updating(unknown, cannot, why, ltt)
        if not last.get("completionTime"):
            why = "Progressing=False in ClusterVersion but there is no completion time in last history item"
            return updating(unknown, cannot, why, ltt)
        return updating(ConditionStatus.FALSE, ClusterVersionUpdatingReason.NOT_PROGRESSING, message, ltt)
    return updating(unknown, cannot, message, ltt)


def clusterversion_insight(
    cv: JSON, facts: ControlPlaneFacts, operators: Sequence[ClusterOperatorStatusInsight], now: int
) -> ClusterVersionStatusInsight:
    """The ClusterVersion insight; `operators` are the counted operators' insights.

    `estimatedCompletedAt` is the instant the update is expected to complete: `startedAt` plus the
    expected total duration (`expected_duration`): the time from the start to the last observed
    operator progress divided by the share of an update's duration that oc's curve assigns to the
    current operator completion, once more than 5 minutes of progress were observed; before that
    (or without any progress since the start), the duration of the last completed update (1 h
    without one). It depends on the cluster's objects only, never on the clock, so an unchanged
    cluster gives an unchanged insight; it is absent once every operator is updated. oc's
    "Est. Time Remaining" at a given instant is `time_remaining(insight, operators, now)`, which
    also stretches the estimate as oc does when the update runs past it. `now` decides only the
    assessment: `Degraded` (oc's "Stalled") once that remaining time is below -10 minutes.
    """
    name = name_of(cv)
    hist = history(cv)
    progressing = conditions_by_type(cv).get("Progressing")
    conditions = [updating_condition(cv, hist, progressing)]
    if progressing is not None:
        conditions.append(copy_condition(progressing, cv))

    started = ZERO_TIME
    completed_at: int | None = None
    if hist:
        started = time_of(hist[0].get("startedTime"), cv, "history[0].startedTime")
        if hist[0].get("state") == "Completed" and hist[0].get("completionTime"):
            completed_at = time_of(hist[0].get("completionTime"), cv, "history[0].completionTime")

    co_completion = facts.updated / facts.total if facts.total else 1.0
    estimated: int | None = None
    if not facts.completed:
        last_progress = last_observed_progress(operators)
        progressed = started != ZERO_TIME and last_progress > started
        to_last = sub_times(last_progress, started) if progressed else 0
        total = expected_duration(baseline_duration(hist, cv), to_last, co_completion)
        estimated = started + round(total * SECOND)
    insight = ClusterVersionStatusInsight(
        conditions=conditions,
        resource=ResourceRef(CONFIG_GROUP, "clusterversions", name),
        assessment=ClusterVersionAssessment.COMPLETED if facts.completed else ClusterVersionAssessment.PROGRESSING,
        versions=versions_from_history(hist),
        completion=go_percent(co_completion * 100),
        started_at=started,
        completed_at=completed_at,
        estimated_completed_at=estimated,
    )
    if estimated is not None and time_remaining(insight, operators, now) < -10 * MINUTE:
        insight.assessment = ClusterVersionAssessment.DEGRADED  # oc prints "Stalled"
    return insight


def clusterversion_failing_insight(cv: JSON) -> HealthInsight | None:
    name = name_of(cv)
    ref = [ResourceRef(CONFIG_GROUP, "clusterversions", name)]
    failing = conditions_by_type(cv).get("Failing")
    if failing is None:
        return health(
            health_uid("cv", name, "failing"),
            None,  # oc: "now"; a stored `now` would change the insight on every assessment
            ScopeType.CONTROL_PLANE,
            ref,
            ImpactLevel.WARNING,
            ImpactType.UPDATE_STALLED,
            f"Cluster Version {name} has no Failing condition",
            "Current status of Cluster Version reconciliation is unclear.  See "
            "'oc -n openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1' to debug.",
            RUNBOOK_DEGRADED,
        )
    status = cond_str(failing, "status")
    if status == "False":
        return None
    verb = "may be failing" if status == "Unknown" else "is failing"
    return health(
        health_uid("cv", name, "failing"),
        cond_time(failing, cv),
        ScopeType.CONTROL_PLANE,
        ref,
        ImpactLevel.WARNING,
        ImpactType.UPDATE_STALLED,
        f"Cluster Version {name} {verb} to proceed with the update ({cond_str(failing, 'reason')})",
        cond_str(failing, "message"),
        RUNBOOK_DEGRADED,
    )


def previous_incomplete_insight(cv: JSON, facts: ControlPlaneFacts) -> HealthInsight | None:
    hist = history(cv)
    if len(hist) <= 1 or hist[1].get("state") != "Partial" or facts.completed:
        return None
    name = name_of(cv)
    previous = str(hist[1].get("version") or "")
    last_complete = next(
        (str(h.get("version") or "") for h in hist[2:] if h.get("state") == "Completed"), UNKNOWN_VERSION
    )
    target = str(hist[0].get("version") or "")
    return health(
        health_uid("cv", name, "previous-incomplete"),
        time_of(hist[0].get("startedTime"), cv, "history[0].startedTime"),
        ScopeType.CONTROL_PLANE,
        [ResourceRef(CONFIG_GROUP, "clusterversions", name)],
        ImpactLevel.WARNING,
        ImpactType.NONE,
        f"Previous update to {previous} never completed, last complete update was {last_complete}",
        f"Current update to {target} was initiated while the previous update to version {previous} "
        "was still in progress",
        DOC_HISTORY,
    )


class ControlPlaneResult(NamedTuple):
    clusterversion: ClusterVersionStatusInsight
    operators: list[ClusterOperatorStatusInsight]
    failing: HealthInsight | None
    operator_health: list[HealthInsight]
    previous_incomplete: HealthInsight | None


def assess_control_plane(cv: JSON, operators: list[JSON], now: int, mco_image: str = "") -> ControlPlaneResult:
    if not isinstance(cv, dict):
        raise InputError(f"the ClusterVersion must be an object, not {type(cv).__name__}")
    facts = control_plane_facts(cv, operators, mco_image)
    co_insights = []
    co_health: list[HealthInsight] = []
    for co, state in facts.operators:
        co_insights.append(clusteroperator_insight(co, state, facts.target, now))
        co_health.extend(clusteroperator_health(co, state, now))
    return ControlPlaneResult(
        clusterversion=clusterversion_insight(cv, facts, co_insights, now),
        operators=co_insights,
        failing=clusterversion_failing_insight(cv),
        operator_health=co_health,
        previous_incomplete=previous_incomplete_insight(cv, facts),
    )


def update_started_at(cv: JSON) -> int:
    """oc's start of the update: history[0].startedTime, else the Progressing transition time."""
    hist = history(cv)
    if hist:
        return time_of(hist[0].get("startedTime"), cv, "history[0].startedTime")
    return cond_time(conditions_by_type(cv).get("Progressing"), cv)
