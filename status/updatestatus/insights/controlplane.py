"""ClusterVersion and ClusterOperator insights, and the control-plane health insights, as oc computes them.

Rules: which operators count, when one is updated / updating / waiting, completion, assessment
(including the estimate-based "stalled"), the estimate from update history, and the health
insights for a failing ClusterVersion, unavailable/degraded operators (with oc's thresholds measured
from the injected `now`) and an incomplete previous update.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cvo_py.runtime.gotext.durations import MINUTE, SECOND, go_percent, sub_times
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.insights.estimate import (  # re-exported: the estimate as oc makes it
    MCO_NAME as MCO_NAME,
)
from status.updatestatus.insights.estimate import estimate_completion as estimate_completion
from status.updatestatus.insights.estimate import expected_duration as expected_duration
from status.updatestatus.insights.estimate import last_observed_progress as last_observed_progress
from status.updatestatus.insights.estimate import operator_is_updated as operator_is_updated
from status.updatestatus.insights.estimate import time_remaining as time_remaining
from status.updatestatus.insights.estimate import timewise_complete as timewise_complete
from status.updatestatus.insights.health import health, health_uid
from status.updatestatus.insights.kinds import (
    ClusterOperatorHealthyReason,
    ClusterOperatorUpdatingReason,
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

CONFIG_GROUP = "config.openshift.io"
NO_PREVIOUS = "<none>"
UNKNOWN_VERSION = "unknown"
MULTI_ARCH = "Multi"

RUNBOOK_DEGRADED = (
    "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDegraded.md"
)
RUNBOOK_DOWN = (
    "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDown.md"
)
DOC_HISTORY = (
    "https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/"
    "gathering-data-cluster-update.html#gathering-clusterversion-history-cli_troubleshooting_updates"
)

# oc's thresholds for operator health insights (measured from `now`)
CO_UNAVAILABLE_WARNING_AFTER = 5 * MINUTE
CO_UNAVAILABLE_ERROR_AFTER = 20 * MINUTE
CO_DEGRADED_WARNING_AFTER = 5 * MINUTE
CO_DEGRADED_ERROR_AFTER = 40 * MINUTE


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


# --- operators ---------------------------------------------------------------------------------


def is_counted(co: JSON) -> bool:
    """oc counts only operators that the release payload includes or excludes by annotation."""
    annotations = get(co, "metadata", "annotations")
    return any(
        str(k).startswith(("exclude.release.openshift.io/", "include.release.openshift.io/")) for k in annotations
    )


@dataclass
class OperatorState:
    name: str
    updated: bool
    progressing: JSON | None
    available: JSON | None
    degraded: JSON | None

    @property
    def updating(self) -> bool:
        return not self.updated and cond_str(self.progressing, "status") == "True"

    @property
    def waiting(self) -> bool:
        return not self.updated and cond_str(self.progressing, "status") == "False"

    @property
    def unavailable(self) -> bool:
        return cond_str(self.available, "status") != "True"

    @property
    def degraded_only(self) -> bool:
        return not self.unavailable and cond_str(self.degraded, "status") == "True"


def assess_operator(co: JSON, target: str, mco_image: str) -> OperatorState:
    name = name_of(co)
    versions = get(co, "status", "versions", want=list)
    updated = False
    image_upgrading = name == MCO_NAME and any(
        isinstance(v, dict) and v.get("name") == "operator-image" and str(v.get("version") or "") != mco_image
        for v in versions
    )
    if not image_upgrading:
        updated = any(
            isinstance(v, dict) and v.get("name") == "operator" and str(v.get("version") or "") == target
            for v in versions
        )
    conds = conditions_by_type(co)
    return OperatorState(
        name=name,
        updated=updated,
        progressing=conds.get("Progressing"),
        available=conds.get("Available"),
        degraded=conds.get("Degraded"),
    )


@dataclass
class ControlPlaneFacts:
    """What oc derives about the control plane before printing it (also used by node insights)."""

    target: str
    operators: list[tuple[JSON, OperatorState]] = field(default_factory=list)
    updated: int = 0

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


# --- ClusterVersion ----------------------------------------------------------------------------


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


def copy_condition(cond: JSON, obj: JSON) -> Condition:
    status = cond_str(cond, "status")
    return Condition(
        cond_str(cond, "type"),
        ConditionStatus(status) if status in ("True", "False") else ConditionStatus.UNKNOWN,
        cond_str(cond, "reason"),
        cond_str(cond, "message"),
        cond_time(cond, obj),
    )


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


def clusteroperator_insight(co: JSON, state: OperatorState, target: str, now: int) -> ClusterOperatorStatusInsight:
    progressing = state.progressing
    source_times = [cond_time(c, co) for c in (state.progressing, state.available, state.degraded) if c]
    fallback = max(source_times) if source_times else ZERO_TIME
    if state.updated:
        updating = Condition(
            ConditionType.UPDATING,
            ConditionStatus.FALSE,
            ClusterOperatorUpdatingReason.UPDATED,
            f"The operator is updated to {target}",
            cond_time(progressing, co) if progressing else fallback,
        )
    elif state.updating:
        updating = Condition(
            ConditionType.UPDATING,
            ConditionStatus.TRUE,
            ClusterOperatorUpdatingReason.PROGRESSING,
            cond_str(progressing, "message"),
            cond_time(progressing, co),
        )
    elif state.waiting:
        updating = Condition(
            ConditionType.UPDATING,
            ConditionStatus.FALSE,
            ClusterOperatorUpdatingReason.PENDING,
            cond_str(progressing, "message"),
            cond_time(progressing, co),
        )
    else:
        updating = Condition(
            ConditionType.UPDATING,
            ConditionStatus.UNKNOWN,
            ClusterOperatorUpdatingReason.CANNOT_DETERMINE,
            "The operator is not updated and its Progressing condition is missing or Unknown",
            fallback,
        )
    if state.available is None:
        healthy = Condition(
            ConditionType.HEALTHY,
            ConditionStatus.UNKNOWN,
            ClusterOperatorHealthyReason.CANNOT_DETERMINE,
            "The cluster operator is unavailable because the available condition is not found in the "
            "cluster operator's status",
            fallback,
        )
    elif state.unavailable:
        healthy = Condition(
            ConditionType.HEALTHY,
            ConditionStatus.FALSE,
            ClusterOperatorHealthyReason.UNAVAILABLE,
            cond_str(state.available, "message"),
            cond_time(state.available, co),
        )
    elif state.degraded_only:
        healthy = Condition(
            ConditionType.HEALTHY,
            ConditionStatus.FALSE,
            ClusterOperatorHealthyReason.DEGRADED,
            cond_str(state.degraded, "message"),
            cond_time(state.degraded, co),
        )
    else:
        healthy = Condition(
            ConditionType.HEALTHY,
            ConditionStatus.TRUE,
            ClusterOperatorHealthyReason.AS_EXPECTED,
            "",
            cond_time(state.available, co),
        )
    conditions = [updating, healthy]
    if progressing is not None:
        conditions.append(copy_condition(progressing, co))
    return ClusterOperatorStatusInsight(
        conditions=conditions,
        name=state.name,
        resource=ResourceRef(CONFIG_GROUP, "clusteroperators", state.name),
    )


# --- health ------------------------------------------------------------------------------------


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


# operator health insights: (condition, its bad status, what it means, warning after, error after, runbook)
_OPERATOR_HEALTH = (
    ("available", "False", "unavailable", CO_UNAVAILABLE_WARNING_AFTER, CO_UNAVAILABLE_ERROR_AFTER, RUNBOOK_DOWN),
    ("degraded", "True", "degraded", CO_DEGRADED_WARNING_AFTER, CO_DEGRADED_ERROR_AFTER, RUNBOOK_DEGRADED),
)


def clusteroperator_health(co: JSON, state: OperatorState, now: int) -> list[HealthInsight]:
    out: list[HealthInsight] = []
    ref = [ResourceRef(CONFIG_GROUP, "clusteroperators", state.name)]
    for attr, bad, what, warning_after, error_after, runbook in _OPERATOR_HEALTH:
        cond: JSON | None = getattr(state, attr)
        if cond is None or cond_str(cond, "status") != bad:
            continue
        since = cond_time(cond, co)
        if not now > since + warning_after:
            continue
        insight = health(
            health_uid("co", state.name, what),
            since,
            ScopeType.CONTROL_PLANE,
            ref,
            ImpactLevel.ERROR if now > since + error_after else ImpactLevel.WARNING,
            ImpactType.API_AVAILABILITY,
            f"Cluster Operator {state.name} is {what} ({cond_str(cond, 'reason')})",
            cond_str(cond, "message") or "<no message>",
            runbook,
        )
        if insight:
            out.append(insight)
    return out


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


@dataclass
class ControlPlaneResult:
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
