"""Reads firing alerts from the platform's alerts API (Prometheus/Thanos `/api/v1/alerts`) every
`interval` seconds for the update status controller; what they become is decided by
`status.updatestatus.insights.alerts.live_alert_insights`."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from cvo_py.runtime import klog
from cvo_py.runtime.gotext.times import from_datetime
from cvo_py.runtime.loop import SyncLoop
from cvo_py.runtime.promapi import APIError, PrometheusAPI
from status.updatestatus.insights.alerts import Alert, AlertsReading, readable_alerts

log = logging.getLogger(__name__)

def relevant(alerts: list[Alert]) -> list[Alert]:
    """The alerts in a stable order: the API lists alerts in no particular order from one response
    to the next, which must not count as a change (and fields oc does not read, e.g. `value`, are
    not kept)."""
    return sorted(alerts, key=_order)


def _order(alert: Alert) -> str:
    return json.dumps(
        [alert.name, alert.labels, alert.annotations, alert.state, alert.active_at], sort_keys=True, default=str
    )


# How many distinct malformed alerts a poll names in the log (the rest are counted).
NAMED_PROBLEMS = 5


class AlertsPoller:
    """Polls `api.alerts()`; `reading` is the current AlertsReading; `on_change()` is called when
    what the insights depend on changes (other alerts, the API failing or recovering)."""

    def __init__(
        self,
        api: PrometheusAPI,
        interval: float,
        on_change: Callable[[], None],
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.api = api
        self.on_change = on_change
        self._now = now
        self._lock = threading.Lock()
        self._reading = AlertsReading(source=api.url.rstrip("/") + "/api/v1/alerts")
        self.polls = 0
        self._malformed: list[str] = []  # the problems of the last read, as logged
        self.loop = SyncLoop("alerts-poll", self.poll, resync=interval)

    @property
    def reading(self) -> AlertsReading:
        with self._lock:
            return self._reading

    def poll(self) -> None:
        now = from_datetime(self._now())
        self.polls += 1
        problems: list[str] = []
        try:
            readable, problems = readable_alerts(self.api.alerts())
            alerts: list[Alert] | None = relevant(readable)
            error = ""
        except APIError as exc:
            alerts, error = None, str(exc)
        self._report_malformed(problems)
        with self._lock:
            before = self._reading
            if not error:
                after = before._replace(
                    alerts=alerts, read_at=now, error="", failing_since=0, malformed=len(problems)
                )
                if before.error:
                    log.info("The alerts API can be read again: %s", before.source)
            elif before.error:
                after = before  # still failing: said once already
            else:
                # Said once per failure; the last good alerts stay, marked with when they were read.
                log.warning("Unable to fetch alerts, keeping the last alerts read in 'Update Health': %s", error)
                after = before._replace(error=error, failing_since=now)
            self._reading = after
        if error:
            klog.v(4).info("Alerts poll failed: %s", error)
        changed = (after.alerts, after.error) != (before.alerts, before.error)
        if changed:
            klog.v(2).info("Alerts changed: %d alerts, error %r", len(after.alerts or []), after.error)
            self.on_change()

    def _report_malformed(self, problems: list[str]) -> None:
        """Log the malformed alerts when they change (skipped, not fatal: the others are shown)."""
        if sorted(problems) == self._malformed:
            return
        self._malformed = sorted(problems)
        if not problems:
            return
        named = "; ".join(problems[:NAMED_PROBLEMS])
        more = f"; and {len(problems) - NAMED_PROBLEMS} more" if len(problems) > NAMED_PROBLEMS else ""
        log.warning(
            "Skipping %d malformed alerts from %s, not shown in 'Update Health': %s%s",
            len(problems),
            self._reading.source,
            named,
            more,
        )

    def start(self) -> AlertsPoller:
        self.loop.start()
        self.loop.poke()  # the first read now, not one interval later
        return self

    def stop(self) -> None:
        self.loop.stop()
