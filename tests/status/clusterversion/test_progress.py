"""Failing and Progressing from the sync worker's reports: upstream's decision table on a pass's
condensed failure, and the status side's ClusterOperator clocks (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from payload.release import Release
from status.clusterversion import progress
from status.clusterversion.progress import Clock, decide, judge, operator_clock
from syncworker.errors import Effect, TaskError, TaskRef, from_api_error, summarize
from syncworker.modes import Mode
from syncworker.operators import check
from syncworker.passes import Report

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
RELEASE = Release("4.99.1", "registry.local/release@sha256:" + "1" * 64)


def operator(name: str, *, available: str = "True", degraded: str = "False", version: str = "4.99.1") -> dict:
    return {
        "metadata": {"name": name},
        "status": {
            "conditions": [
                {"type": "Available", "status": available},
                {"type": "Degraded", "status": degraded},
            ],
            "versions": [{"name": "operator", "version": version}],
        },
    }


def co_error(name: str, mode: Mode = Mode.UPDATING, **live: str) -> TaskError:
    """What the worker's ClusterOperator check says of `name` as it is live."""
    manifest = {"metadata": {"name": name}, "status": {"versions": [{"name": "operator", "version": "4.99.1"}]}}
    found = check(manifest, operator(name, **live), mode, TaskRef("ClusterOperator", "", name, 12, 20))
    assert found is not None
    return found


def failed(*errors: TaskError) -> TaskError:
    found = summarize(list(errors))
    assert found is not None
    return found


def report(
    failure: TaskError | None = None, *, mode: Mode = Mode.UPDATING, attempt: int = 0, **extra: object
) -> Report:
    values: dict = dict(release=RELEASE, version_hash="h", generation=2, mode=mode, attempt=attempt, total=20, done=14)
    values.update(extra)
    return Report(at=values.pop("at", T0), failure=failure, started=values.pop("started", T0), **values)


def test_an_operator_updating_is_waited_on_then_slow_after_30_minutes() -> None:
    waiting = co_error("etcd", version="4.99.0")
    since = {"etcd": T0}
    now = decide(waiting, False, since, T0 + timedelta(minutes=30))
    assert now == progress.Decision(progress.NOT_FAILING, True, "ClusterOperatorUpdating", "waiting on etcd")
    slow = decide(waiting, False, since, T0 + timedelta(minutes=31))
    tail = "waiting on etcd over 30 minutes which is longer than expected"
    assert slow == progress.Decision(("Unknown", "SlowClusterOperator", tail), True, "ClusterOperatorUpdating", tail)


def test_machine_config_gets_90_minutes_and_both_are_named() -> None:
    both = failed(co_error("etcd", version="4.99.0"), co_error("machine-config", version="4.99.0"))
    assert both.reason == "ClusterOperatorsUpdating" and both.effect is Effect.NONE
    since = {"etcd": T0, "machine-config": T0}
    at_60 = decide(both, False, since, T0 + timedelta(minutes=60))
    assert at_60.tail == "waiting on etcd over 30 minutes which is longer than expected"
    at_91 = decide(both, False, since, T0 + timedelta(minutes=91))
    assert at_91.tail == (
        "waiting on etcd over 30 minutes and machine-config over 90 minutes which is longer than expected"
    )
    only_mc = decide(co_error("machine-config", version="4.99.0"), False, since, T0 + timedelta(minutes=91))
    assert only_mc.tail == "waiting on machine-config over 90 minutes which is longer than expected"


def test_degraded_during_an_update_waits_40_minutes_then_fails() -> None:
    degraded = co_error("etcd", degraded="True")
    assert degraded.effect is Effect.FAIL_AFTER_INTERVAL
    since = {"etcd": T0}
    waiting = decide(degraded, False, since, T0 + timedelta(minutes=39))
    assert waiting == progress.Decision(
        progress.NOT_FAILING, True, "ClusterOperatorDegraded", "waiting up to 40 minutes on etcd"
    )
    over = decide(degraded, False, since, T0 + timedelta(minutes=40))
    assert over.failing == ("True", "ClusterOperatorDegraded", "Cluster operator etcd is degraded")
    assert not over.working and over.tail == "wait has exceeded 40 minutes for these operators: etcd"


def test_several_degraded_operators_name_only_those_past_the_grace() -> None:
    both = failed(co_error("etcd", degraded="True"), co_error("dns", degraded="True"))
    since = {"dns": T0 + timedelta(minutes=20), "etcd": T0}
    decided = decide(both, False, since, T0 + timedelta(minutes=45))
    assert decided.failing == ("True", "ClusterOperatorsDegraded", "Cluster operators dns, etcd are degraded")
    assert decided.tail == "wait has exceeded 40 minutes for these operators: etcd"


@pytest.mark.parametrize(
    ("failure", "reason", "message", "tail"),
    [
        (
            co_error("dns", available="False"),
            "ClusterOperatorNotAvailable",
            "Cluster operator dns is not available",
            "the cluster operator dns is not available",
        ),
        (
            from_api_error(TaskRef("ConfigMap", "ns", "plain", 5, 20), 422, "Invalid"),
            "UpdatePayloadResourceInvalid",
            'Could not update configmap "ns/plain" (5 of 20): the object is invalid, possibly due to local '
            "cluster configuration",
            "the update could not be applied",
        ),
        (
            failed(
                co_error("etcd", degraded="True"),
                co_error("dns", version="4.99.0"),
                from_api_error(TaskRef("ConfigMap", "ns", "x", 3, 20), 403, "Forbidden"),
            ),
            "MultipleErrors",
            "Multiple errors are preventing progress:\n* Cluster operator etcd is degraded\n"
            '* Could not update configmap "ns/x" (3 of 20): the server has forbidden updates to this resource',
            "an unknown error has occurred: MultipleErrors",
        ),
    ],
    ids=["not available", "an API refusal", "several reasons, the waiting one dropped"],
)
def test_errors_that_fail_at_once_during_an_update(failure: TaskError, reason: str, message: str, tail: str) -> None:
    decided = decide(failure, False, {}, T0)
    assert decided.failing == ("True", reason, message)
    assert not decided.working and decided.tail == tail


def test_multiple_errors_that_only_wait_do_not_fail() -> None:
    # A MultipleErrors of waiting parts alone (not condensable into one reason) fails nothing.
    waiting = TaskError("MultipleErrors", "m", Effect.NONE, errors=(co_error("etcd", version="4.99.0"),))
    assert decide(waiting, False, {}, T0) == progress.Decision(progress.NOT_FAILING, True)


def test_while_installing_a_degraded_operator_is_reported_at_once_with_its_message() -> None:
    degraded = co_error("f-op", Mode.INITIALIZING, degraded="True")
    assert degraded.effect is Effect.REPORT
    decided = decide(degraded, False, {}, T0)
    assert decided.failing == ("True", "ClusterOperatorDegraded", "Cluster operator f-op is degraded")
    assert decided.tail == "Cluster operator f-op is degraded"  # Report: its own message


def test_while_reconciling_every_error_fails_at_once() -> None:
    waiting = co_error("etcd", Mode.RECONCILING, version="4.99.0")
    decided = judge(report(waiting, mode=Mode.RECONCILING), {"etcd": T0}, T0)
    assert decided.failing == ("True", "ClusterOperatorUpdating", "Cluster operator etcd is updating versions")
    assert not decided.working and decided.tail == "the cluster operator etcd is updating versions"


def test_a_completed_pass_has_no_failure() -> None:
    assert judge(report(completed=True), {}, T0) == progress.Decision(progress.NOT_FAILING, True)


def test_clocks_start_when_a_failure_names_an_operator_and_restart_with_a_pass_at_attempt_0() -> None:
    waiting = co_error("etcd", version="4.99.0")
    first = operator_clock(Clock(), report(waiting, at=T0 + timedelta(seconds=30)))
    assert first == Clock({"etcd": T0 + timedelta(seconds=30)}, T0)
    # The retry (attempt 1) keeps the clock, and a later failure naming it does not move it.
    later = T0 + timedelta(minutes=5)
    retried = operator_clock(first, report(waiting, attempt=1, at=later, started=later))
    assert retried.since == {"etcd": T0 + timedelta(seconds=30)}
    # A new pass at attempt 0 (new work, or after a success) restarts every clock.
    fresh = T0 + timedelta(minutes=10)
    restarted = operator_clock(retried, report(None, attempt=0, at=fresh, started=fresh, done=0))
    assert restarted == Clock({}, fresh)
    assert operator_clock(first, report(completed=True, attempt=1, started=later)).since == {}
    assert operator_clock(first, None) is first


def test_the_decision_depends_only_on_its_inputs() -> None:
    failure = co_error("etcd", degraded="True")
    assert decide(failure, False, {"etcd": T0}, T0) == decide(failure, False, {"etcd": T0}, T0)


@pytest.mark.parametrize("value", ["0000-01-01T00:00:00Z", "yesterday", "", None, 5])
def test_a_condition_time_before_year_1_or_unreadable_is_no_time(value: object) -> None:
    assert progress.parse_time_or_none(value) is None
