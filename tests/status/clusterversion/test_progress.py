"""Failing and Progressing during an update, by upstream's decision table, on a clock the test sets:
waiting on operators (30 minutes, machine-config 90), a Degraded operator's 40-minute grace, errors
that fail at once, several reasons, the first install, and after completion."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cvo_py.runtime.gotext.times import metav1_time
from payload.acceptance import payload_loaded
from payload.release import Acceptance, Release
from status.clusterversion import desired as cs
from status.clusterversion import progress
from status.clusterversion.conditions import find_condition
from testkit.harness.clusterversion import release_co

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)  # the update to 4.14.2 is accepted
IMG_A = "quay.io/openshift-release-dev/ocp-release@sha256:" + "a" * 64
IMG_B = "quay.io/openshift-release-dev/ocp-release@sha256:" + "b" * 64
RUNNING = Release("4.14.1", IMG_A)
TARGET = Release("4.14.2", IMG_B)
ACCEPTED = cs.StatusInputs(RUNNING, Acceptance(TARGET, payload_loaded("4.14.2", IMG_B, "amd64")))
SPEC = {"clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13", "desiredUpdate": {"image": IMG_B, "version": "4.14.2"}}


def minutes(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def co(
    name: str,
    version: str,
    *,
    available: str = "True",
    degraded: str = "False",
    progressing: str = "False",
    since: datetime = T0 - timedelta(days=1),
) -> dict[str, Any]:
    """A release ClusterOperator whose conditions last changed at `since`."""
    return release_co(name, version, available, degraded, progressing, metav1_time(since))


def cv(status: dict[str, Any] | None, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "version", "generation": 2}, "spec": spec or SPEC}
    if status is not None:
        obj["status"] = status
    return obj


def installed() -> dict[str, Any]:
    done = [co("etcd", "4.14.1"), co("dns", "4.14.1")]
    return cs.desired_status(
        cv(None, {"clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13"}),
        done,
        cs.StatusInputs(RUNNING),
        T0 - timedelta(days=1),
    )


def updating() -> dict[str, Any]:
    """4.14.2 accepted at T0: a Partial history entry started then."""
    status = cs.desired_status(cv(installed()), [co("etcd", "4.14.1"), co("dns", "4.14.1")], ACCEPTED, T0)
    assert status["history"][0]["state"] == "Partial" and status["history"][0]["startedTime"] == metav1_time(T0)
    return status


def cond(status: dict[str, Any], type_: str) -> tuple[str, str, str]:
    found = find_condition(status["conditions"], type_)
    assert found is not None
    return str(found["status"]), str(found.get("reason", "")), str(found.get("message", ""))


def at(now: datetime, operators: list[dict[str, Any]], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return cs.desired_status(cv(status or updating()), operators, ACCEPTED, now)


# -- waiting on operators ---------------------------------------------------------------------------


def test_an_operator_working_on_the_update_is_waited_on_then_slow_after_30_minutes() -> None:
    operators = [co("etcd", "4.14.2"), co("dns", "4.14.1", progressing="True", since=minutes(2))]
    inside = at(minutes(31), operators)  # 29 minutes since dns started working
    assert cond(inside, "Failing") == ("False", "", "")
    assert cond(inside, "Progressing") == (
        "True",
        "ClusterOperatorUpdating",
        "Working towards 4.14.2: 1 of 2 done (50% complete), waiting on dns",
    )
    past = at(minutes(33), operators, inside)  # 31 minutes
    slow = "waiting on dns over 30 minutes which is longer than expected"
    assert cond(past, "Failing") == ("Unknown", "SlowClusterOperator", slow)
    assert cond(past, "Progressing") == (
        "True",
        "ClusterOperatorUpdating",
        f"Working towards 4.14.2: 1 of 2 done (50% complete), {slow}",
    )
    failing = find_condition(past["conditions"], "Failing")
    assert failing is not None and failing["lastTransitionTime"] == metav1_time(minutes(33))


def test_machine_config_gets_90_minutes_and_both_are_named() -> None:
    def operators(dns_since: datetime) -> list[dict[str, Any]]:
        return [
            co("dns", "4.14.1", progressing="True", since=dns_since),
            co("machine-config", "4.14.1", progressing="True", since=T0),
        ]

    waiting = at(minutes(80), operators(minutes(70)))
    assert cond(waiting, "Progressing")[1:] == (
        "ClusterOperatorsUpdating",
        "Working towards 4.14.2: waiting on dns, machine-config",
    )
    assert cond(waiting, "Failing")[0] == "False"
    mco_slow = at(minutes(91), operators(minutes(70)))
    assert cond(mco_slow, "Failing") == (
        "Unknown",
        "SlowClusterOperator",
        "waiting on machine-config over 90 minutes which is longer than expected",
    )
    both = at(minutes(91), operators(minutes(10)))
    assert cond(both, "Failing")[2] == (
        "waiting on dns over 30 minutes and machine-config over 90 minutes which is longer than expected"
    )
    assert cond(both, "Progressing")[2].endswith(
        ": waiting on dns over 30 minutes and machine-config over 90 minutes which is longer than expected"
    )


def test_the_clock_never_starts_before_the_update_and_idle_operators_are_not_waited_on() -> None:
    # dns has been Progressing since long before the update: its clock starts at the update (T0).
    # kube-scheduler is neither at 4.14.2 nor working on it: counted as not done, not named.
    operators = [co("dns", "4.14.1", progressing="True", since=T0 - timedelta(hours=5)), co("kube-scheduler", "4.14.1")]
    assert cond(at(minutes(29), operators), "Failing")[0] == "False"
    assert cond(at(minutes(29), operators), "Progressing")[2] == "Working towards 4.14.2: waiting on dns"
    assert cond(at(minutes(31), operators), "Failing")[0] == "Unknown"
    idle = at(minutes(300), [co("dns", "4.14.2"), co("kube-scheduler", "4.14.1")])
    assert cond(idle, "Failing") == ("False", "", "")
    assert cond(idle, "Progressing") == ("True", "", "Working towards 4.14.2: 1 of 2 done (50% complete)")


def test_working_since_reads_the_earliest_working_condition() -> None:
    start = minutes(0)
    worker = co("dns", "4.14.1", progressing="True", since=minutes(20))
    worker["status"]["conditions"][1] = {
        "type": "Degraded",
        "status": "True",
        "lastTransitionTime": metav1_time(minutes(5)),
    }
    assert progress.working_since(worker, start, minutes(60)) == minutes(5)
    no_time = co("dns", "4.14.1", progressing="True")
    del no_time["status"]["conditions"][2]["lastTransitionTime"]
    assert progress.working_since(no_time, start, minutes(60)) == start  # unknown: since the update began
    assert progress.working_since(co("dns", "4.14.1"), start, minutes(60)) == minutes(60)  # not working: now


# -- a Degraded operator's grace ---------------------------------------------------------------------


def test_degraded_during_an_update_waits_40_minutes_then_fails() -> None:
    operators = [co("etcd", "4.14.2", degraded="True", since=minutes(5)), co("kube-apiserver", "4.14.1")]
    inside = at(minutes(44), operators)
    assert cond(inside, "Failing") == ("False", "", "")
    assert cond(inside, "Progressing") == (
        "True",
        "ClusterOperatorDegraded",
        "Working towards 4.14.2: 1 of 2 done (50% complete), waiting up to 40 minutes on etcd",
    )
    past = at(minutes(46), operators, inside)
    assert cond(past, "Failing") == ("True", "ClusterOperatorDegraded", "Cluster operator etcd is degraded")
    assert cond(past, "Progressing") == (
        "True",
        "ClusterOperatorDegraded",
        "Unable to apply 4.14.2: wait has exceeded 40 minutes for these operators: etcd",
    )


def test_several_degraded_operators_name_only_those_past_the_grace() -> None:
    operators = [
        co("etcd", "4.14.2", degraded="True", since=minutes(1)),
        co("kube-apiserver", "4.14.2", degraded="True", since=minutes(30)),
    ]
    status = at(minutes(45), operators)
    assert cond(status, "Failing") == (
        "True",
        "ClusterOperatorsDegraded",
        "Cluster operators etcd, kube-apiserver are degraded",
    )
    assert (
        cond(status, "Progressing")[2]
        == "Unable to apply 4.14.2: wait has exceeded 40 minutes for these operators: etcd"
    )


# -- failing at once ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operators", "failing", "progressing"),
    [
        (
            [co("dns", "4.14.2", available="False", since=minutes(1))],
            ("True", "ClusterOperatorNotAvailable", "Cluster operator dns is not available"),
            (
                "True",
                "ClusterOperatorNotAvailable",
                "Unable to apply 4.14.2: the cluster operator dns is not available",
            ),
        ),
        (
            # A missing Available counts as not available, a missing Degraded as degraded.
            [{**co("dns", "4.14.2"), "status": {"versions": [{"name": "operator", "version": "4.14.2"}]}}],
            ("True", "ClusterOperatorNotAvailable", "Cluster operator dns is not available"),
            (
                "True",
                "ClusterOperatorNotAvailable",
                "Unable to apply 4.14.2: the cluster operator dns is not available",
            ),
        ),
        (
            # No grace for a Degraded operator beside another reason; waiting reasons never fail.
            [
                co("etcd", "4.14.2", degraded="True", since=minutes(1)),
                co("dns", "4.14.1", progressing="True", since=minutes(1)),
            ],
            ("True", "ClusterOperatorDegraded", "Cluster operator etcd is degraded"),
            ("True", "MultipleErrors", "Unable to apply 4.14.2: an unknown error has occurred: MultipleErrors"),
        ),
        (
            [
                co("etcd", "4.14.2", degraded="True", since=minutes(1)),
                co("dns", "4.14.2", available="False", since=minutes(1)),
                co("ingress", "4.14.1", progressing="True", since=minutes(1)),
            ],
            (
                "True",
                "MultipleErrors",
                "Multiple errors are preventing progress:\n* Cluster operator dns is not available\n"
                "* Cluster operator etcd is degraded",
            ),
            ("True", "MultipleErrors", "Unable to apply 4.14.2: an unknown error has occurred: MultipleErrors"),
        ),
    ],
    ids=["not available", "conditions missing", "degraded beside waiting", "several reasons"],
)
def test_errors_that_fail_at_once_during_an_update(
    operators: list[dict[str, Any]], failing: tuple[str, str, str], progressing: tuple[str, str, str]
) -> None:
    status = at(minutes(2), operators)
    assert cond(status, "Failing") == failing
    assert cond(status, "Progressing") == progressing


def test_while_installing_degraded_fails_at_once_and_versions_are_not_waited_on() -> None:
    fresh = cv(None, {"clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13"})
    operators = [co("etcd", "4.14.0", degraded="True", since=T0), co("dns", "4.14.0", progressing="True", since=T0)]
    status = cs.desired_status(fresh, operators, cs.StatusInputs(RUNNING), minutes(1))
    assert cond(status, "Failing") == ("True", "ClusterOperatorDegraded", "Cluster operator etcd is degraded")
    assert cond(status, "Progressing") == (
        "True",
        "ClusterOperatorDegraded",
        "Unable to apply 4.14.1: Cluster operator etcd is degraded",
    )
    healthy = cs.desired_status(fresh, [co("dns", "4.14.0", progressing="True")], cs.StatusInputs(RUNNING), minutes(99))
    assert cond(healthy, "Failing") == ("False", "", "")
    assert cond(healthy, "Progressing") == ("True", "", "Working towards 4.14.1")


def test_after_completion_every_error_fails_at_once() -> None:
    done = installed()
    status = cs.desired_status(
        cv(done, {"clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13"}),
        [co("etcd", "4.14.1"), co("dns", "4.14.0", progressing="True", since=T0)],
        cs.StatusInputs(RUNNING),
        minutes(1),
    )
    assert cond(status, "Failing") == ("True", "ClusterOperatorUpdating", "Cluster operator dns is updating versions")
    assert cond(status, "Progressing") == (
        "False",
        "ClusterOperatorUpdating",
        "Error while reconciling 4.14.1: the cluster operator dns is updating versions",
    )


def test_the_decision_depends_only_on_its_inputs() -> None:
    """No memory: the same objects and `now` give the same status, whoever computes it (a restarted
    `start` included)."""
    operators = [co("dns", "4.14.1", progressing="True", since=minutes(3))]
    first = at(minutes(40), operators)
    assert at(minutes(40), operators) == first
    assert cs.desired_status(cv(first), operators, ACCEPTED, minutes(40)) == first


@pytest.mark.parametrize("value", ["0000-01-01T00:00:00Z", "0000-12-31T23:59:59Z", "not a time", "", None])
def test_a_condition_time_before_year_1_or_unreadable_is_no_time(value: object) -> None:
    """Year 0 is RFC 3339 that Go (and so the API server) takes, and before what a datetime holds."""
    assert progress.parse_time_or_none(value) is None
    assert progress.parse_time_or_none("0001-01-01T00:00:00Z") == datetime(1, 1, 1, tzinfo=UTC)
