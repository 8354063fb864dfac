"""The controller's alerts poller against a real HTTP server: what changes, what is said once."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler

import pytest

from cvo_py.runtime.gotext.times import from_datetime
from cvo_py.runtime.promapi import PrometheusAPI
from status.updatestatus.controller.alerts import AlertsPoller
from status.updatestatus.insights.alerts import live_alert_insights
from testkit.fakes.httpserve import Handler
from testkit.objects.insight_objects import firing_alert, malformed_alerts

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def firing(value: str) -> dict[str, object]:
    return {
        "labels": {"alertname": "PodDisruptionBudgetAtLimit", "severity": "warning"},
        "annotations": {"summary": "PDB at limit"},
        "state": "firing",
        "activeAt": "2026-01-01T00:00:00Z",
        "value": value,
    }


def test_poller_reports_changes_and_an_outage_once(
    http_server: Callable[[Handler], str], caplog: pytest.LogCaptureFixture
) -> None:
    answers: list[tuple[int, bytes]] = []

    def handler(_req: BaseHTTPRequestHandler) -> tuple[int, bytes]:
        return answers.pop(0)

    def ok(*alerts: object) -> tuple[int, bytes]:
        return 200, json.dumps({"status": "success", "data": {"alerts": list(alerts)}}).encode()

    clock = [T0]
    changes: list[int] = []
    poller = AlertsPoller(PrometheusAPI(http_server(handler)), 30, lambda: changes.append(1), now=lambda: clock[0])
    caplog.set_level(logging.INFO, logger="status.updatestatus.controller.alerts")

    answers.append(ok(firing("1")))
    poller.poll()
    assert len(changes) == 1 and poller.reading.alerts is not None and not poller.reading.error
    answers.append(ok(firing("2")))  # only the value changed: nothing the insights show
    clock[0] = T0 + timedelta(seconds=30)
    poller.poll()
    assert len(changes) == 1
    assert poller.reading.read_at == from_datetime(T0 + timedelta(seconds=30))

    for minute in (1, 2, 3):
        answers.append((503, b"unavailable"))
        clock[0] = T0 + timedelta(minutes=minute)
        poller.poll()
    reading = poller.reading
    assert len(changes) == 2, "the outage is one change, not one per poll"
    assert reading.error.endswith("/api/v1/alerts: HTTP 503: not an API response: \"unavailable\"")
    assert reading.failing_since == from_datetime(T0 + timedelta(minutes=1))
    assert reading.alerts is not None and reading.read_at == from_datetime(T0 + timedelta(seconds=30))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "Unable to fetch alerts" in warnings[0].getMessage()

    answers.append(ok())
    poller.poll()
    assert len(changes) == 3 and poller.reading.alerts == [] and not poller.reading.error
    assert "can be read again" in caplog.records[-1].getMessage()


def test_the_first_read_happens_at_start_not_one_interval_later(http_server: Callable[[Handler], str]) -> None:
    body = json.dumps({"status": "success", "data": {"alerts": [firing("1")]}}).encode()
    changed = threading.Event()
    poller = AlertsPoller(PrometheusAPI(http_server(lambda _req: (200, body))), 3600, changed.set).start()
    try:
        assert changed.wait(30), "no read within 30 s of start with a one-hour interval"
        assert poller.reading.alerts is not None and len(poller.reading.alerts) == 1
    finally:
        poller.stop()


@pytest.mark.parametrize("case", list(malformed_alerts("2026-01-01T00:00:00Z")))
def test_a_malformed_alert_is_skipped_counted_and_said_once(
    http_server: Callable[[Handler], str], caplog: pytest.LogCaptureFixture, case: str
) -> None:
    bad = malformed_alerts("2026-01-01T00:00:00Z")[case]
    good = firing_alert("StillShown", "2026-01-01T00:10:00Z", summary="Shown despite the other")
    body = json.dumps({"status": "success", "data": {"alerts": [bad, good]}}).encode()
    caplog.set_level(logging.WARNING, logger="status.updatestatus.controller.alerts")
    poller = AlertsPoller(PrometheusAPI(http_server(lambda _req: (200, body))), 30, lambda: None, now=lambda: T0)
    for _ in range(3):
        poller.poll()
    reading = poller.reading
    assert not reading.error and reading.malformed == 1
    (insight,) = live_alert_insights(reading, from_datetime(T0))  # the sync goes on, with the good one
    assert insight.impact.summary == "Alert is firing: Shown despite the other"
    (warning,) = [r.getMessage() for r in caplog.records]  # said once, not once per poll
    assert warning.startswith("Skipping 1 malformed alerts from http://127.0.0.1:")
    assert "\n" not in warning and len(warning) < 600
