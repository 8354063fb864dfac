"""ClusterVersion / ClusterOperator insights and control-plane health, rule by rule (oc's rules)."""

from __future__ import annotations

import pytest

from cvo_py.runtime.gotext.durations import HOUR, MINUTE, SECOND, round_duration
from status.updatestatus.client import snapshot
from status.updatestatus.insights import compute, controlplane
from status.updatestatus.insights.estimate import estimate_completion, time_remaining, timewise_complete
from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterVersionAssessment,
    ClusterVersionInsightShape,
    ConditionStatus,
    HealthInsightShape,
    ImpactLevel,
    ImpactType,
    VersionMetadataKey,
    find_condition,
)
from status.updatestatus.insights.operators import assess_operator
from status.updatestatus.insights.plain import ClusterOperatorStatusInsight, ClusterVersionStatusInsight, HealthInsight
from testkit.checkout import EXAMPLES
from testkit.objects.insight_objects import T0, T0_NS, at, clusterversion, entry, ns, operator


@pytest.mark.parametrize(
    "baseline,to_last,updating_for,x,want",
    [  # oc's worked values
        (HOUR, 30 * MINUTE, 30 * MINUTE, 0.0, 36 * MINUTE),
        (HOUR, 30 * MINUTE, 31 * MINUTE, 0.0, 35 * MINUTE),
        (HOUR, 30 * MINUTE, 30 * MINUTE, 0.2, HOUR + 9 * MINUTE),
        (HOUR, 30 * MINUTE, 35 * MINUTE, 0.2, HOUR + 3 * MINUTE),
        (HOUR, 30 * MINUTE, 30 * MINUTE, 0.75, 50 * MINUTE),
        (HOUR, 20 * MINUTE, 20 * MINUTE, 0.99, 4 * MINUTE + 50 * SECOND),
        (80 * MINUTE, 4 * MINUTE, 10 * MINUTE, 0.05, HOUR + 24 * MINUTE),
        (HOUR, HOUR, HOUR, 1.0, 0),
    ],
)
def test_estimate_completion(baseline: int, to_last: int, updating_for: int, x: float, want: int) -> None:
    assert estimate_completion(baseline, to_last, updating_for, x) == want


def test_negative_estimates_are_not_rounded_to_minutes() -> None:
    est = estimate_completion(HOUR, 0, 2 * HOUR + 7 * SECOND, 0.5)
    assert est == -3005 * SECOND  # (3600 - 7207) / 1.2, truncated toward zero
    assert est < 0 and est % SECOND == 0 and est % MINUTE != 0


@pytest.mark.parametrize(
    "history,want",
    [
        ([entry("4.14.1", "Partial", T0)], HOUR),  # fewer than 3 entries
        ([entry("4.14.1", "Partial", T0), entry("4.14.0", "Completed", at(-60), at(-50))], HOUR),
        (
            [
                entry("4.14.1", "Partial", T0),
                entry("4.14.0", "Completed", at(-60), at(-20)),
                entry("4.13", "Completed", at(-90), at(-89)),
            ],
            40 * MINUTE,
        ),
        (  # skips the current entry and the install entry
            [
                entry("4.14.1", "Partial", T0),
                entry("4.14.0", "Partial", at(-60)),
                entry("4.13", "Completed", at(-90), at(-89)),
            ],
            HOUR,
        ),
    ],
)
def test_baseline_is_the_last_completed_update(history: list[dict[str, object]], want: int) -> None:
    assert controlplane.baseline_duration(history, clusterversion(history)) == want


def _cv_insight(cv: dict[str, object], operators: list[dict[str, object]], now: int) -> ClusterVersionStatusInsight:
    out = compute.controlplane_insights(cv, operators, now)
    first = out[0]
    assert isinstance(first, ClusterVersionInsightShape)
    return first


def test_only_operators_with_release_annotations_count() -> None:
    ops = [
        operator("a"),
        operator("b", version="4.14.0"),
        operator("hidden", version="4.14.0", counted=False),
    ]
    insights = compute.controlplane_insights(clusterversion(), ops, ns(5))
    names = [i.name for i in insights if isinstance(i, ClusterOperatorInsightShape)]
    assert names == ["a", "b"]
    assert _cv_insight(clusterversion(), ops, ns(5)).completion == 50


@pytest.mark.parametrize(
    "kwargs,status,reason",
    [
        ({}, ConditionStatus.FALSE, "Updated"),
        ({"version": "4.14.0", "progressing": "True"}, ConditionStatus.TRUE, "Progressing"),
        ({"version": "4.14.0", "progressing": "False"}, ConditionStatus.FALSE, "Pending"),
        ({"version": "4.14.0", "progressing": None}, ConditionStatus.UNKNOWN, "CannotDetermine"),
        ({"version": "4.14.0", "progressing": "Unknown"}, ConditionStatus.UNKNOWN, "CannotDetermine"),
    ],
)
def test_operator_updating_condition(kwargs: dict[str, object], status: ConditionStatus, reason: str) -> None:
    co = compute.controlplane_insights(clusterversion(), [operator("x", **kwargs)], ns(1))[1]  # type: ignore[arg-type]
    assert isinstance(co, ClusterOperatorInsightShape)
    updating = find_condition(co.conditions, "Updating")
    assert updating is not None and (updating.status, updating.reason) == (status, reason)


@pytest.mark.parametrize(
    "available,degraded,status,reason",
    [
        ("True", "False", ConditionStatus.TRUE, "AsExpected"),
        ("False", "False", ConditionStatus.FALSE, "Unavailable"),
        ("Unknown", "True", ConditionStatus.FALSE, "Unavailable"),
        ("True", "True", ConditionStatus.FALSE, "Degraded"),
        (None, "False", ConditionStatus.UNKNOWN, "CannotDetermine"),
    ],
)
def test_operator_healthy_condition(available: str | None, degraded: str, status: ConditionStatus, reason: str) -> None:
    co = compute.controlplane_insights(
        clusterversion(), [operator("x", available=available, degraded=degraded)], ns(1)
    )[1]
    assert isinstance(co, ClusterOperatorInsightShape)
    healthy = find_condition(co.conditions, "Healthy")
    assert healthy is not None and (healthy.status, healthy.reason) == (status, reason)


@pytest.mark.parametrize(
    "image_version,mco_image,updated",
    [
        (None, "", True),  # no operator-image entry
        ("quay.io/mco@sha256:1", "", False),  # snapshot without the MCO deployment: never updated
        ("quay.io/mco@sha256:1", "quay.io/mco@sha256:1", True),
        ("quay.io/mco@sha256:1", "quay.io/mco@sha256:2", False),  # multi-arch migration in progress
    ],
)
def test_machine_config_operator_image_rule(image_version: str | None, mco_image: str, updated: bool) -> None:
    extra = [{"name": "operator-image", "version": image_version}] if image_version else []
    co = operator("machine-config", extra_versions=extra)
    state = assess_operator(co, "4.14.1", mco_image)
    assert state.updated is updated


@pytest.mark.parametrize(
    "history,target,previous,prev_meta,target_meta",
    [
        (
            [entry("4.14.1", "Completed", T0, at(30))],
            "4.14.1",
            "<none>",
            [VersionMetadataKey.INSTALLATION],
            [],
        ),
        (
            [entry("4.14.1", "Partial", T0), entry("4.14.0", "Partial", at(-60))],
            "4.14.1",
            "4.14.0",
            [VersionMetadataKey.PARTIAL],
            [],
        ),
        (
            [
                entry("4.14.1", "Partial", T0, image="b"),
                entry("4.14.1", "Completed", at(-60), at(-1), image="a"),
            ],
            "4.14.1",
            "4.14.1",
            [],
            [VersionMetadataKey.ARCHITECTURE],
        ),
        (
            [entry("4.14.1", "Partial", T0), entry("4.14.0", "Completed", at(-60), at(-1))],
            "4.14.1",
            "4.14.0",
            [],
            [],
        ),
        ([], "unknown", "unknown", [], []),
    ],
)
def test_versions_from_history(
    history: list[dict[str, object]], target: str, previous: str, prev_meta: list[str], target_meta: list[str]
) -> None:
    v = controlplane.versions_from_history(history)
    assert (v.target.version, v.previous.version) == (target, previous)
    assert [m.key for m in v.previous.metadata] == prev_meta
    assert [m.key for m in v.target.metadata] == target_meta


@pytest.mark.parametrize(
    "history,progressing,status,reason",
    [
        (None, "True", ConditionStatus.TRUE, "ClusterVersionProgressing"),
        (
            [entry("4.14.1", "Completed", at(-60), at(-1))],
            "False",
            ConditionStatus.FALSE,
            "ClusterVersionNotProgressing",
        ),
        (
            [entry("4.14.1", "Completed", at(-60), at(-1))],
            "True",
            ConditionStatus.UNKNOWN,
            "CannotDetermineUpdating",
        ),
        ([entry("4.14.1", "Partial", at(-60))], "False", ConditionStatus.UNKNOWN, "CannotDetermineUpdating"),
        ([], "True", ConditionStatus.UNKNOWN, "CannotDetermineUpdating"),
        (None, None, ConditionStatus.UNKNOWN, "CannotDetermineUpdating"),
    ],
)
def test_clusterversion_updating_condition(
    history: list[dict[str, object]] | None, progressing: str | None, status: ConditionStatus, reason: str
) -> None:
    cv = _cv_insight(clusterversion(history, progressing=progressing), [operator("a")], ns(1))
    updating = find_condition(cv.conditions, "Updating")
    assert updating is not None and (updating.status, updating.reason) == (status, reason)
    # the ClusterVersion's own Progressing rides along for clients that reproduce oc's output
    assert (find_condition(cv.conditions, "Progressing") is not None) is (progressing is not None)


def test_completed_assessment_when_every_counted_operator_is_updated() -> None:
    cv = _cv_insight(clusterversion(), [operator("a"), operator("b")], ns(10))
    assert (cv.assessment, cv.completion, cv.estimated_completed_at) == (
        ClusterVersionAssessment.COMPLETED,
        100,
        None,
    )


def _operator_insights(
    cv: dict[str, object], ops: list[dict[str, object]], now: int
) -> list[ClusterOperatorStatusInsight]:
    out = compute.controlplane_insights(cv, ops, now)
    return [i for i in out if isinstance(i, ClusterOperatorInsightShape)]


def test_estimate_is_anchored_to_the_start_and_does_not_move_with_the_clock() -> None:
    # 1 of 4 updated, progress last observed 30m after the start; baseline: the 4.14.0 update took 1h
    ops = [
        operator("a", ltt=at(30)),
        *(operator(n, version="4.14.0", progressing="True", ltt=at(1)) for n in "bcd"),
    ]
    x = 0.25
    at_40, at_50 = _cv_insight(clusterversion(), ops, ns(40)), _cv_insight(clusterversion(), ops, ns(50))
    assert at_40 == at_50, "an unchanged cluster gives an unchanged insight"
    assert at_40.assessment == ClusterVersionAssessment.PROGRESSING and at_40.completion == 25
    expected_total = 30 * 60 / timewise_complete(x)  # seconds, extrapolated from progress
    assert at_40.estimated_completed_at == T0_NS + round(expected_total * SECOND)
    # oc's time remaining is computed from the insights at the moment they are shown
    co_insights = _operator_insights(clusterversion(), ops, ns(40))
    for minutes in (40, 50):
        want = estimate_completion(HOUR, 30 * MINUTE, minutes * MINUTE, x)
        assert time_remaining(at_40, co_insights, ns(minutes)) == want


@pytest.mark.parametrize(
    "progress_minutes,now_minutes,to_last_minutes",
    [
        (None, 3, 3),  # no progress since the start: oc extrapolates from the time elapsed ...
        (None, 20, 20),  # ... which takes over from the baseline after 5 minutes
        (4, 20, 4),  # progress observed, but too little to extrapolate: the baseline
    ],
)
def test_time_remaining_reproduces_oc_without_observed_progress(
    progress_minutes: int | None, now_minutes: int, to_last_minutes: int
) -> None:
    updated_ltt = at(-10) if progress_minutes is None else at(progress_minutes)
    ops = [
        operator("a", ltt=updated_ltt),
        *(operator(n, version="4.14.0", progressing="True", ltt=at(-5)) for n in "bc"),
    ]
    now = ns(now_minutes)
    cv = _cv_insight(clusterversion(), ops, now)
    assert cv.estimated_completed_at == T0_NS + HOUR  # the baseline: the last update took 1h
    assert _cv_insight(clusterversion(), ops, now + MINUTE) == cv
    want = estimate_completion(HOUR, to_last_minutes * MINUTE, now_minutes * MINUTE, 1 / 3)
    assert time_remaining(cv, _operator_insights(clusterversion(), ops, now), now) == want


def test_stalled_update_is_assessed_degraded() -> None:
    ops = [operator("a"), operator("b", version="4.14.0", progressing="True", ltt=at(1))]
    cv = _cv_insight(clusterversion(), ops, ns(5 * 60))  # 5 hours into a 1-hour update
    assert cv.assessment == ClusterVersionAssessment.DEGRADED
    co_insights = _operator_insights(clusterversion(), ops, ns(5 * 60))
    assert time_remaining(cv, co_insights, ns(5 * 60)) < -10 * MINUTE
    assert _cv_insight(clusterversion(), ops, ns(30)).assessment == ClusterVersionAssessment.PROGRESSING


def _health(cv: dict[str, object], ops: list[dict[str, object]], now: int) -> list[HealthInsight]:
    return [i for i in compute.controlplane_insights(cv, ops, now) if isinstance(i, HealthInsightShape)]


@pytest.mark.parametrize(
    "minutes,level",
    [(5, None), (5.01, ImpactLevel.WARNING), (20, ImpactLevel.WARNING), (20.01, ImpactLevel.ERROR)],
)
def test_unavailable_operator_thresholds(minutes: float, level: ImpactLevel | None) -> None:
    ops = [operator("etcd", available="False", available_ltt=T0)]
    found = _health(clusterversion(), ops, ns(minutes))
    assert [h.impact.level for h in found] == ([level] if level else [])
    if level:
        assert found[0].impact.summary == "Cluster Operator etcd is unavailable (AvailReason)"
        assert found[0].impact.type == ImpactType.API_AVAILABILITY and found[0].started_at == ns(0)


@pytest.mark.parametrize(
    "minutes,level",
    [(5, None), (6, ImpactLevel.WARNING), (40, ImpactLevel.WARNING), (40.01, ImpactLevel.ERROR)],
)
def test_degraded_operator_thresholds(minutes: float, level: ImpactLevel | None) -> None:
    ops = [operator("etcd", degraded="True", degraded_ltt=T0)]
    found = _health(clusterversion(), ops, ns(minutes))
    assert [h.impact.level for h in found] == ([level] if level else [])


def test_available_unknown_counts_as_unavailable_but_raises_no_insight() -> None:
    assert _health(clusterversion(), [operator("etcd", available="Unknown")], ns(60)) == []


@pytest.mark.parametrize(
    "failing,reason,message,summary",
    [
        (
            "True",
            "ClusterOperatorsDegraded",
            "boom",
            "Cluster Version version is failing to proceed with the update (ClusterOperatorsDegraded)",
        ),
        (
            "Unknown",
            "Slow",
            "hmm",
            "Cluster Version version may be failing to proceed with the update (Slow)",
        ),
        ("True", "NoMessage", "", None),  # an empty description drops the insight
        ("False", "", "", None),
    ],
)
def test_clusterversion_failing_insight(failing: str, reason: str, message: str, summary: str | None) -> None:
    cv = clusterversion(failing=failing, failing_reason=reason, failing_message=message)
    found = _health(cv, [operator("a")], ns(1))
    assert [h.impact.summary for h in found] == ([summary] if summary else [])


def test_missing_failing_condition_has_no_start_of_its_own() -> None:
    # oc dates it "now"; the insight leaves the start out (shown as "now") so it does not change
    found = _health(clusterversion(failing=None), [operator("a")], ns(1))
    assert [(h.impact.summary, h.started_at) for h in found] == [
        ("Cluster Version version has no Failing condition", None)
    ]
    assert found == _health(clusterversion(failing=None), [operator("a")], ns(90))


def test_previous_update_incomplete_insight() -> None:
    history = [
        entry("4.14.2", "Partial", at(0)),
        entry("4.14.1", "Partial", at(-60)),
        entry("4.14.0", "Completed", at(-200), at(-150)),
    ]
    found = _health(clusterversion(history, desired="4.14.2"), [operator("a", version="4.14.1")], ns(1))
    assert [h.impact.summary for h in found] == [
        "Previous update to 4.14.1 never completed, last complete update was 4.14.0"
    ]
    assert found[0].impact.type == ImpactType.NONE and found[0].started_at == ns(0)
    # once the control plane completed, it is no longer reported
    assert _health(clusterversion(history, desired="4.14.2"), [operator("a", version="4.14.2")], ns(1)) == []


# --- the shared oc examples: completion, assessment, estimate and health from the real objects ---------


@pytest.mark.parametrize(
    "name,assessment,completion,est_minutes,health",
    [
        ("4.14.1-degraded", ClusterVersionAssessment.DEGRADED, 97, None, 6),
        ("4.14.1-paused-worker-pool", ClusterVersionAssessment.PROGRESSING, 12, 72, 0),
        ("4.14.1-workers-started-updating-multiple-pools", ClusterVersionAssessment.PROGRESSING, 97, None, 0),
        ("4.16.0-single-node", ClusterVersionAssessment.PROGRESSING, 6, 69, 0),
        ("not-upgrading", ClusterVersionAssessment.COMPLETED, 100, None, 0),
    ],
)
def test_shared_examples(
    name: str, assessment: ClusterVersionAssessment, completion: int, est_minutes: int | None, health: int
) -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found (looked in {EXAMPLES.resolve()})")
    snap = snapshot.load(EXAMPLES / f"{name}-cv.yaml")
    now = snap.mock_now()
    insights = compute.controlplane_insights(snap.clusterversion, snap.operators, now)
    cv = insights[0]
    assert isinstance(cv, ClusterVersionInsightShape)
    assert (cv.assessment, cv.completion) == (assessment, completion)
    if est_minutes is not None:
        operators = [i for i in insights if isinstance(i, ClusterOperatorInsightShape)]
        remaining = time_remaining(cv, operators, now)
        assert round_duration(remaining, MINUTE) == est_minutes * MINUTE
    assert len([i for i in insights if isinstance(i, HealthInsightShape)]) == health
