"""Alerts from a snapshot's alerts.json become health insights the way oc selects them."""

from __future__ import annotations

from typing import Any

import pytest

from status.updatestatus.insights import alerts
from status.updatestatus.insights.kinds import ImpactLevel, ImpactType, ScopeType
from testkit.objects.insight_objects import at, malformed_alerts, ns

STARTED = ns(0)


def alert(
    name: str = "KubeNodeNotReady",
    active: str = at(5),
    severity: str = "warning",
    state: str = "firing",
    namespace: str = "openshift-x",
    **annotations: str,
) -> dict[str, Any]:
    return {
        "labels": {"alertname": name, "severity": severity, "namespace": namespace},
        "annotations": annotations,
        "state": state,
        "activeAt": active,
    }


def one(a: dict[str, Any]) -> list[Any]:
    return alerts.alert_insights({"status": "success", "data": {"alerts": [a]}}, STARTED)


@pytest.mark.parametrize(
    "kwargs,description_start",
    [
        ({}, "Alert started firing during the update."),
        ({"active": at(-5)}, None),  # before the update, not allowlisted
        (
            {"name": "PodDisruptionBudgetAtLimit"},
            "Alert known to affect updates started firing during the update.",
        ),
        (
            {"name": "PodDisruptionBudgetLimit", "active": at(-5)},
            "Alert known to affect updates has been firing since before the update started.",
        ),
        ({"state": "pending"}, None),
        ({"severity": "info"}, None),
        ({"severity": "none"}, None),
        ({"active": at(0)}, None),  # not strictly after the start
    ],
)
def test_which_alerts_are_reported(kwargs: dict[str, Any], description_start: str | None) -> None:
    found = one(alert(**kwargs))
    if description_start is None:
        assert found == []
    else:
        assert [h.impact.description.startswith(description_start) for h in found] == [True]


@pytest.mark.parametrize(
    "annotations,suffix",
    [
        ({"description": "d", "message": "m"}, " The alert description is: d | m"),
        ({"description": "d"}, " The alert description is: d"),
        ({"message": "m"}, " The alert description is: m"),
        ({}, " The alert has no description."),
    ],
)
def test_description_suffix(annotations: dict[str, str], suffix: str) -> None:
    (h,) = one(alert(**annotations))
    assert h.impact.description == "Alert started firing during the update." + suffix


def test_fields() -> None:
    (h,) = one(alert(severity="critical", summary="Node is down", runbook_url="https://runbooks/x"))
    assert (h.impact.summary, h.impact.level, h.impact.type) == (
        "Alert is firing: Node is down",
        ImpactLevel.CRITICAL,
        ImpactType.UNKNOWN,
    )
    assert (h.remediation.reference, h.started_at, h.scope.type) == (
        "https://runbooks/x",
        ns(5),
        ScopeType.CLUSTER,
    )
    (ref,) = h.scope.resources
    assert (ref.group, ref.resource, ref.namespace, ref.name) == (
        "config.openshift.io",
        "alerts",
        "openshift-x",
        "KubeNodeNotReady",
    )
    (plain,) = one(alert())
    assert plain.impact.summary == "Alert is firing: KubeNodeNotReady"
    assert plain.remediation.reference == "<alert does not have a runbook_url annotation>"


def test_same_alert_twice_gets_distinct_ids() -> None:
    found = alerts.alert_insights([alert(), alert()], STARTED)
    assert len({h.uid for h in found}) == 2


def test_alerts_without_a_name_are_skipped() -> None:
    assert one(alert(name="")) == []


@pytest.mark.parametrize("bad", ["text", {"data": "x"}, {"data": {"alerts": [1]}}])
def test_malformed_alerts_are_a_clear_error(bad: Any) -> None:
    with pytest.raises(alerts.InputError, match="alerts"):
        alerts.alert_insights(bad, STARTED)


# -- alerts read live ----------------------------------------------------------------------------

SOURCE = "https://thanos-querier.openshift-monitoring.svc:9091/api/v1/alerts"


def test_live_alerts_while_the_api_answers_are_exactly_ocs() -> None:
    firing = [alert(), alert("PodDisruptionBudgetAtLimit", active=at(-5))]
    reading = alerts.AlertsReading(SOURCE, [alerts.read_alert(a) for a in firing], read_at=ns(10))
    assert alerts.live_alert_insights(reading, STARTED) == alerts.alert_insights(firing, STARTED)


def test_live_alerts_while_the_api_fails_keep_the_last_ones_marked_and_say_so_once() -> None:
    firing = [alert(summary="Something")]
    read_before = [alerts.read_alert(a) for a in firing]
    reading = alerts.AlertsReading(
        SOURCE, read_before, read_at=ns(10), error="connection refused", failing_since=ns(11)
    )
    got = alerts.live_alert_insights(reading, STARTED)
    assert len(got) == 2
    kept, failure = got
    assert kept.impact.summary == "Alert is firing: Something"
    read = at(10)  # whole seconds: the same text either way
    assert kept.impact.description.endswith(f" (As of {read}: the alerts API cannot be read now.)")
    assert failure.uid == alerts.UNREADABLE_UID
    assert failure.started_at == ns(11)
    assert failure.impact.level == ImpactLevel.WARNING
    assert failure.impact.summary == "Unable to fetch alerts: connection refused"
    assert failure.impact.description == (
        f"Alerts in 'Update Health' are those read at {read}; newer alerts are not shown."
    )
    assert failure.remediation.reference == SOURCE
    # the same outage later: the same insight, so a client sees one line, not one per poll
    assert alerts.live_alert_insights(reading, STARTED)[1] == failure


def test_live_alerts_failing_before_any_read() -> None:
    reading = alerts.AlertsReading(SOURCE, None, error="HTTP 403: Forbidden", failing_since=ns(1))
    (failure,) = alerts.live_alert_insights(reading, STARTED)
    assert failure.impact.description == "No alerts have been read yet, so 'Update Health' shows none."


@pytest.mark.parametrize(("case", "bad"), list(malformed_alerts(at(5)).items()))
def test_each_malformed_alert_is_one_bounded_line(case: str, bad: Any) -> None:
    good = alert("Shown")
    readable, problems = alerts.readable_alerts([bad, good])
    assert [a.name for a in readable] == ["Shown"]
    (problem,) = problems
    assert problem.startswith("alert") and "\n" not in problem and len(problem) < 400, case
    # A snapshot's alerts file with it is refused, in one line.
    with pytest.raises(alerts.InputError) as refused:
        alerts.alert_insights([good, bad], STARTED)
    expected = problem if isinstance(bad, dict) else "alerts: data.alerts must be a list of objects"
    assert str(refused.value) == expected


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ({"activeAt": "yesterday"}, 'alert Malformed: activeAt: invalid RFC 3339 timestamp "yesterday"'),
        ({"activeAt": 17}, "alert Malformed: activeAt: expected an RFC 3339 string, not number 17"),
        ({"labels": {"alertname": 7}}, "alert: labels.alertname: expected a string, not number 7"),
        ({"state": True}, "alert Malformed: state: expected a string, not boolean true"),
        ({"annotations": ["x"]}, "alert: annotations: expected an object, not an array"),
        (None, "alert: expected an object, not null"),
    ],
)
def test_what_is_malformed_is_named(bad: dict[str, Any] | None, problem: str) -> None:
    raw = None if bad is None else {**malformed_alerts(at(5))["activeAt a number"], "activeAt": at(1), **bad}
    _, problems = alerts.readable_alerts([raw])
    assert problems == [problem]
