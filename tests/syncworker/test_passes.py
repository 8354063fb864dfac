"""syncworker.passes: upstream's per-task back-off, the pass back-off, the modes a pass runs in,
what makes new work, and which reports reach status."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from payload.release import Release
from syncworker.errors import Effect, TaskError
from syncworker.load import Payload
from syncworker.modes import Mode
from syncworker.passes import (
    INSTALL_TASK_BACKOFF,
    TASK_BACKOFF,
    Report,
    TaskBackoff,
    Timing,
    Work,
    gate,
    incomplete,
    mode_for_new_work,
    new_work,
    parallelism,
    reconcile_interval,
    starting_mode,
    starts_pass,
)
from syncworker.select import Selection

T0 = datetime(2026, 7, 1, tzinfo=UTC)
RELEASE = Release(version="4.99.0", image="registry.local/release@sha256:" + "ab" * 32)


def test_a_task_is_tried_four_times_while_installing_one_two_and_four_seconds_apart() -> None:
    assert INSTALL_TASK_BACKOFF.schedule() == (4, (1.0, 2.0, 4.0))


def test_otherwise_a_task_is_tried_twice_ten_seconds_apart_then_fails_thirteen_seconds_later() -> None:
    """apimachinery's Backoff{10 s, ×1.3, 3 steps, cap 15 s}: reaching the cap ends the steps."""
    tries, sleeps = TASK_BACKOFF.schedule()
    assert tries == 2
    assert sleeps == pytest.approx((10.0, 13.0))


@given(
    st.floats(0.01, 100),
    st.floats(1.0, 3.0),
    st.integers(1, 10),
    st.one_of(st.just(0.0), st.floats(0.01, 1000)),
)
def test_a_back_off_never_sleeps_more_than_once_per_try_nor_past_its_steps(
    duration: float, factor: float, steps: int, cap: float
) -> None:
    tries, sleeps = TaskBackoff(duration, factor, steps, cap).schedule()
    assert 1 <= tries <= steps
    assert tries - 1 <= len(sleeps) <= tries
    assert all(b >= a for a, b in zip(sleeps, sleeps[1:], strict=False)), "sleeps never shrink"


def test_a_failed_pass_is_retried_after_an_eighth_a_quarter_a_half_then_the_whole_interval() -> None:
    timing = Timing(interval=160.0)
    assert [timing.next_pass_after(attempt, 0.0) for attempt in range(6)] == [160.0, 20.0, 40.0, 80.0, 160.0, 160.0]


@given(st.integers(1, 50), st.floats(0.0, 0.999))
def test_the_pass_back_off_jitter_only_adds_up_to_a_fifth(attempt: int, jitter: float) -> None:
    timing = Timing(interval=100.0)
    plain = timing.next_pass_after(attempt, 0.0)
    assert plain <= timing.next_pass_after(attempt, jitter) < plain * 1.2


def test_the_interval_is_two_minutes_times_a_factor_in_one_to_two() -> None:
    assert reconcile_interval(0.0) == 120.0
    assert reconcile_interval(0.5) == 180.0
    assert reconcile_interval(0.999) < 240.0


def test_a_pass_may_last_the_interval_while_installing_else_twice_it() -> None:
    timing = Timing(interval=150.0)
    assert timing.pass_timeout(Mode.INITIALIZING) == 150.0
    assert timing.pass_timeout(Mode.UPDATING) == timing.pass_timeout(Mode.RECONCILING) == 300.0
    assert timing.backoff(Mode.INITIALIZING) == INSTALL_TASK_BACKOFF
    assert timing.backoff(Mode.UPDATING) == timing.backoff(Mode.RECONCILING) == TASK_BACKOFF


def test_workers_one_per_node_while_installing_sixteen_while_updating_two_while_reconciling() -> None:
    assert parallelism(Mode.INITIALIZING, 37) == 37
    assert parallelism(Mode.UPDATING, 37) == 16
    assert parallelism(Mode.RECONCILING, 37) == 2


@pytest.mark.parametrize(
    ("history", "mode"),
    [
        ([], Mode.INITIALIZING),
        ([{"state": "Partial", "image": "a"}], Mode.INITIALIZING),
        ([{"state": "Completed", "image": "a"}], Mode.RECONCILING),
        ([{"state": "Completed", "image": "b"}], Mode.UPDATING),
        ([{"state": "Partial", "image": "a"}, {"state": "Completed", "image": "b"}], Mode.UPDATING),
    ],
)
def test_the_first_pass_mode_comes_from_the_history(history: list[dict[str, str]], mode: Mode) -> None:
    assert starting_mode(history, "a") is mode


def test_new_work_updates_unless_the_install_has_not_completed() -> None:
    assert mode_for_new_work(Mode.INITIALIZING) is Mode.INITIALIZING
    assert mode_for_new_work(Mode.RECONCILING) is Mode.UPDATING
    assert mode_for_new_work(Mode.UPDATING) is Mode.UPDATING


@pytest.mark.parametrize("mode", list(Mode))
def test_a_cluster_operator_change_starts_a_pass_only_when_not_reconciling(mode: Mode) -> None:
    assert starts_pass(mode, new=False, due=False, operator_activity=True) is (mode is not Mode.RECONCILING)
    assert starts_pass(mode, new=True, due=False, operator_activity=False)
    assert starts_pass(mode, new=False, due=True, operator_activity=False)
    assert not starts_pass(mode, new=False, due=False, operator_activity=False)


def test_what_makes_new_work(section8: Payload) -> None:
    work = Work(section8, Selection(), generation=1, cluster_version_uid="u")
    assert new_work(None, work) == "first work"
    assert new_work(work, replace(work, generation=2, cluster_version_uid="v")) == ""
    overridden = Selection(overrides=[{"kind": "ConfigMap", "name": "x", "unmanaged": True}])
    assert new_work(work, replace(work, selection=overridden)) == "changed overrides"
    assert new_work(work, replace(work, selection=Selection(enabled_gates=frozenset({"G"})))) == (
        "changed feature gates"
    )
    capabilities = Selection(known_capabilities=frozenset({"Console"}))
    assert new_work(work, replace(work, selection=capabilities)) == "changed capabilities"
    assert new_work(work, replace(work, force=True)) == "a changed force"
    assert new_work(work, replace(work, payload=replace(section8, version_hash="other"))) == "a new payload"


def report(
    done: int, total: int = 10, failure: TaskError | None = None, image: str = RELEASE.image, at: int = 0
) -> Report:
    return Report(
        release=replace(RELEASE, image=image),
        version_hash="h",
        generation=1,
        mode=Mode.UPDATING,
        attempt=1,
        total=total,
        done=done,
        at=T0 + timedelta(seconds=at),
        failure=failure,
    )


FAILED = TaskError("UpdatePayloadFailed", "Could not update x", Effect.FAIL)


def test_after_a_failed_pass_the_retry_is_dropped_until_it_passes_the_failed_fraction() -> None:
    baseline = replace(report(6, failure=FAILED), last_progress=T0)
    assert gate(baseline, report(0, at=1)) is None
    assert gate(baseline, report(5, at=2)) is None
    shown = gate(baseline, report(6, at=3))
    assert shown is not None and shown.last_progress == T0, "as far as before is no progress"
    shown = gate(baseline, report(7, at=4))
    assert shown is not None and shown.last_progress == T0 + timedelta(seconds=4)


def test_a_failure_a_new_image_and_a_clean_previous_pass_are_never_dropped() -> None:
    baseline = report(6, failure=FAILED)
    assert gate(baseline, report(2, failure=FAILED)) is not None
    assert gate(baseline, report(2, image="other")) is not None
    assert gate(report(6), report(2)) is not None
    assert gate(None, report(0)) == report(0)


@given(st.integers(0, 20), st.integers(0, 20), st.booleans(), st.booleans())
def test_a_report_is_dropped_only_below_a_failed_pass_of_the_same_image(
    before: int, after: int, failed: bool, same_image: bool
) -> None:
    baseline = report(before, total=20, failure=FAILED if failed else None)
    shown = gate(baseline, report(after, total=20, image=RELEASE.image if same_image else "x"))
    assert (shown is None) == (failed and same_image and after < before)


def test_a_pass_cut_short_names_how_many_nodes_did_not_finish_and_the_first_task() -> None:
    error = incomplete(3, 'configmap "ns/a" (4 of 19)')
    assert error.message == '3 incomplete task nodes, beginning with configmap "ns/a" (4 of 19)'
    assert (error.reason, error.effect) == ("UpdatePayloadFailed", Effect.FAIL)
