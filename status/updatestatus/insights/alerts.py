"""Firing alerts (the Thanos `/api/v1/alerts` response) → health insights, as oc selects them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cvo_py import gotext
from status.updatestatus.insights.controlplane import CONFIG_GROUP, health, health_uid
from status.updatestatus.insights.models import HealthInsight, ImpactLevel, ImpactType, ResourceRef, ScopeType
from status.updatestatus.insights.objects import InputError

# alerts oc knows to affect updates, reported even when they started before the update
ALLOWLISTED = frozenset({"PodDisruptionBudgetLimit", "PodDisruptionBudgetAtLimit"})
NO_RUNBOOK = "<alert does not have a runbook_url annotation>"

_LEVELS = {"warning": ImpactLevel.WARNING, "critical": ImpactLevel.CRITICAL}


def alerts_list(response: Any) -> list[dict[str, Any]]:
    """The alerts of a response `{"status":…, "data": {"alerts": [...]}}` (or a bare list)."""
    alerts: Any
    if isinstance(response, list):
        alerts = response
    elif isinstance(response, dict):
        data = response.get("data")
        if data is not None and not isinstance(data, dict):
            raise InputError("alerts: data must be an object holding alerts")
        alerts = (data or {}).get("alerts") or []
    else:
        raise InputError(f"alerts: expected an object with data.alerts, not {type(response).__name__}")
    if not isinstance(alerts, list) or not all(isinstance(a, dict) for a in alerts):
        raise InputError("alerts: data.alerts must be a list of objects")
    return alerts


def from_alertmanager(alerts: Any) -> dict[str, Any]:
    """Alertmanager API v2 alerts (a list, as an Insights archive's `config/alerts.json` holds them)
    → the Prometheus `/api/v1/alerts` response oc reads.

    Alertmanager holds only firing alerts (Prometheus sends none while pending); its `active`,
    `suppressed` (silenced or inhibited) and `unprocessed` alerts all fire in Prometheus, so each
    becomes `state: firing`. `startsAt` stands for Prometheus' `activeAt`, which is earlier by the
    alerting rule's `for` duration (Alertmanager does not know it).
    """
    if not isinstance(alerts, list) or not all(isinstance(a, dict) for a in alerts):
        raise InputError("alerts: expected a list of Alertmanager alerts (API v2)")
    converted = []
    for alert in alerts:
        converted.append(
            {
                "labels": alert.get("labels") or {},
                "annotations": alert.get("annotations") or {},
                "state": "firing",
                "activeAt": alert.get("startsAt") or "",
            }
        )
    return {"status": "success", "data": {"alerts": converted}}


def alert_insights(response: Any, update_started_at: int, note: str = "") -> list[HealthInsight]:
    """oc's alert insights; `note` (if any) is appended to each description."""
    out: list[HealthInsight] = []
    seen: dict[str, int] = {}
    for alert in alerts_list(response):
        labels = _strings(alert.get("labels"))
        annotations = _strings(alert.get("annotations"))
        name = labels.get("alertname", "")
        if not name:
            continue
        active_text = str(alert.get("activeAt") or "")
        try:
            active_at = gotext.parse_time(active_text) if active_text else gotext.ZERO_TIME
        except gotext.TimeFormatError as exc:
            raise InputError(f"alert {name}: activeAt: {exc}") from None
        during_update = update_started_at < active_at
        allowlisted = name in ALLOWLISTED
        if allowlisted:
            description = (
                "Alert known to affect updates started firing during the update."
                if during_update
                else "Alert known to affect updates has been firing since before the update started."
            )
        elif during_update:
            description = "Alert started firing during the update."
        else:
            continue
        if alert.get("state") == "pending":
            continue
        level = _LEVELS.get(labels.get("severity", ""), ImpactLevel.INFO)
        if level.severity < ImpactLevel.WARNING.severity:
            continue
        reference = annotations.get("runbook_url") or NO_RUNBOOK
        desc, msg = annotations.get("description", ""), annotations.get("message", "")
        if desc and msg:
            description += f" The alert description is: {desc} | {msg}"
        elif desc or msg:
            description += f" The alert description is: {desc or msg}"
        else:
            description += " The alert has no description."
        description += note
        summary = f"Alert is firing: {annotations.get('summary') or name}"
        identity = json.dumps(labels, sort_keys=True)
        uid = health_uid("alert", name, identity=identity)
        seen[uid] = seen.get(uid, 0) + 1
        if seen[uid] > 1:  # the same labels twice: keep both, with distinct ids
            uid = health_uid("alert", name, identity=f"{identity}#{seen[uid]}")
        insight = health(
            uid,
            active_at,
            ScopeType.CLUSTER,
            [ResourceRef.of(CONFIG_GROUP, "alerts", name, labels.get("namespace", ""))],
            level,
            ImpactType.UNKNOWN,
            summary,
            description,
            reference,
        )
        if insight:
            out.append(insight)
    return out


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


# -- alerts read live from the alerts API ----------------------------------------------------------

UNREADABLE_UID = "alerts-api-unreadable"


@dataclass(frozen=True)
class AlertsReading:
    """What the alerts API gave so far: the last good alerts (None: none read yet) and when they
    were read, and the current failure ("" when the last read succeeded) since when."""

    source: str
    alerts: list[dict[str, Any]] | None = None
    read_at: int = 0  # ns
    error: str = ""
    failing_since: int = 0  # ns


def live_alert_insights(reading: AlertsReading, update_started_at: int) -> list[HealthInsight]:
    """Alert insights as oc words them. While the API fails: the last good alerts, each marked
    with when it was read, plus one insight saying the API cannot be read (stable while the
    failure lasts, so a client sees it once rather than once per poll)."""
    if not reading.error:
        return alert_insights(reading.alerts or [], update_started_at)
    read = gotext.format_time(reading.read_at, nanos=False)
    note = f" (As of {read}: the alerts API cannot be read now.)" if reading.alerts is not None else ""
    out = alert_insights(reading.alerts or [], update_started_at, note)
    known = (
        f"Alerts in 'Update Health' are those read at {read}; newer alerts are not shown."
        if reading.alerts is not None
        else "No alerts have been read yet, so 'Update Health' shows none."
    )
    failure = health(
        UNREADABLE_UID,
        reading.failing_since,
        ScopeType.CLUSTER,
        [],
        ImpactLevel.WARNING,
        ImpactType.UNKNOWN,
        f"Unable to fetch alerts: {reading.error}",
        known,
        reading.source,
    )
    if failure:
        out.append(failure)
    return out
