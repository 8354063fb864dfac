"""oc's estimate of the time an update has left, from the insights alone (pure, without pydantic):
its curve and arithmetic, float64 order of operations kept. The controller states the estimate in
the ClusterVersion insight; `upgrade-status` prints the time remaining from it at `now`, as oc.
"""

from __future__ import annotations

from collections.abc import Sequence

from cvo_py.runtime.gotext.durations import (
    MINUTE,
    SECOND,
    float_to_int64,
    round_duration,
    seconds,
    sub_times,
    wrap_int64,
)
from cvo_py.runtime.gotext.times import ZERO_TIME
from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterOperatorUpdatingReason,
    ClusterVersionInsightShape,
    ConditionStatus,
    ConditionType,
    find_condition,
)

MCO_NAME = "machine-config"




def timewise_complete(x: float) -> float:
    """Fraction of the update's duration elapsed when a fraction x of operators is updated."""
    x2 = x * x
    x3 = x * x2
    x4 = x2 * x2
    if x < 0.25:
        return -0.03078788 + 2.62886 * x - 3.823954 * x2
    if x < 0.9:
        return 0.1851215 + 1.64994 * x - 4.676898 * x2 + 5.451824 * x3 - 2.125286 * x4
    return 25053.32 - 107394.3 * x + 172527.2 * x2 - 123107 * x3 + 32921.81 * x4


def expected_duration(baseline: int, to_last_observed_progress: int, x: float) -> float:
    """The update's expected total duration in seconds: extrapolated from the time to the last
    observed operator progress once that exceeds 5 minutes (and the curve allows), else `baseline`."""
    c = timewise_complete(x)
    if x > 0 and c > 0 and to_last_observed_progress > 5 * MINUTE:
        return seconds(to_last_observed_progress) / c
    return seconds(baseline)


def estimate_completion(baseline: int, to_last_observed_progress: int, updating_for: int, x: float) -> int:
    """Remaining time (ns) from the baseline duration, observed progress and completion fraction."""
    if x >= 1:
        return 0
    remaining = expected_duration(baseline, to_last_observed_progress, x) - seconds(updating_for)
    factor = 1.2 if remaining >= 0 else 1 / 1.2
    # Go converts to int64 (toward zero), then multiplies by a second in int64 arithmetic
    est = wrap_int64(float_to_int64(remaining * factor) * SECOND)
    if est > 10 * MINUTE:
        return round_duration(est, MINUTE)
    return est


def operator_is_updated(co: ClusterOperatorInsightShape) -> bool:
    updating = find_condition(co.conditions, ConditionType.UPDATING)
    return (
        updating is not None
        and updating.status == ConditionStatus.FALSE
        and updating.reason == ClusterOperatorUpdatingReason.UPDATED
    )


def last_observed_progress(operators: Sequence[ClusterOperatorInsightShape]) -> int:
    """oc's last observed progress: the newest Progressing transition among the counted operators,
    or when only machine-config is left updating, when it started (daemon sets flipping Progressing
    while nodes reboot are no progress of the update)."""
    last = ZERO_TIME
    mco_started: int | None = None
    updated = 0
    for co in operators:
        if operator_is_updated(co):
            updated += 1
        progressing = find_condition(co.conditions, ConditionType.PROGRESSING)
        if progressing is None:
            continue
        last = max(last, progressing.last_transition_time)
        updating = find_condition(co.conditions, ConditionType.UPDATING)
        if co.name == MCO_NAME and updating is not None and updating.status == ConditionStatus.TRUE:
            mco_started = progressing.last_transition_time
    if mco_started is not None and len(operators) - updated == 1:
        return mco_started
    return last


def time_remaining(cv: ClusterVersionInsightShape, operators: Sequence[ClusterOperatorInsightShape], now: int) -> int:
    """oc's estimated time remaining (ns, negative when late) at `now`; 0 without an estimate.

    From the insights alone, so a client reading the ConfigMap API prints what oc prints.
    """
    if cv.estimated_completed_at is None or not operators:
        return 0
    x = sum(operator_is_updated(co) for co in operators) / len(operators)
    started = cv.started_at
    baseline = cv.estimated_completed_at - started  # what the estimate falls back to, exactly
    if started == ZERO_TIME:
        return estimate_completion(baseline, 0, 0, x)
    completion_at = cv.completed_at if cv.completed_at is not None else now
    last_progress = last_observed_progress(operators)
    if not last_progress > started:
        last_progress = now  # oc: no progress yet extrapolates from the time elapsed
    return estimate_completion(
        baseline, sub_times(last_progress, started), sub_times(completion_at, started), x
    )
