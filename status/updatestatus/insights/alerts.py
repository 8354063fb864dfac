"""Firing alerts (the Thanos `/api/v1/alerts` response) → health insights, as oc selects them."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from cvo_py.runtime.gotext.durations import TimeFormatError
from cvo_py.runtime.gotext.messages import bounded
from cvo_py.runtime.gotext.times import ZERO_TIME, format_time, parse_time
from status.updatestatus.insights.health import health, health_uid
from status.updatestatus.insights.kinds import ImpactLevel, ImpactType, ScopeType
from status.updatestatus.insights.objects import InputError
from status.updatestatus.insights.operators import CONFIG_GROUP
from status.updatestatus.insights.plain import HealthInsight, ResourceRef

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


class Alert(NamedTuple):
    """One alert as oc reads it from the alerts API."""

    name: str  # labels["alertname"]; "" when absent (oc skips such alerts)
    labels: dict[str, str]
    annotations: dict[str, str]
    state: str
    active_at: int  # ns; ZERO_TIME when activeAt is empty


# How much of a bad value a problem quotes.
QUOTED = 80


def read_alert(raw: Any) -> Alert:
    """One alert of `data.alerts`, or InputError saying in one line what is malformed: the alert or
    its labels or annotations not an object, `alertname` not a string, `state` not a string,
    `activeAt` not an RFC 3339 string (other label and annotation values are read as text)."""
    if not isinstance(raw, dict):
        raise InputError(f"alert: expected an object, not {_shown(raw)}")
    for key in ("labels", "annotations"):
        if raw.get(key) is not None and not isinstance(raw[key], dict):
            raise InputError(f"alert: {key}: expected an object, not {_shown(raw[key])}")
    name = (raw.get("labels") or {}).get("alertname")
    if name is not None and not isinstance(name, str):
        raise InputError(f"alert: labels.alertname: expected a string, not {_shown(name)}")
    label = bounded(name or "", QUOTED)
    state = raw.get("state")
    if state is not None and not isinstance(state, str):
        raise InputError(f"alert {label}: state: expected a string, not {_shown(state)}")
    active = raw.get("activeAt")
    if active is not None and not isinstance(active, str):
        raise InputError(f"alert {label}: activeAt: expected an RFC 3339 string, not {_shown(active)}")
    try:
        active_at = parse_time(active) if active else ZERO_TIME
    except TimeFormatError as exc:
        raise InputError(f"alert {label}: activeAt: {bounded(str(exc), 2 * QUOTED)}") from None
    return Alert(name or "", _strings(raw.get("labels")), _strings(raw.get("annotations")), state or "", active_at)


def _shown(value: Any) -> str:
    """A bad value in a problem: its JSON kind and, for a scalar, a bounded quote of it."""
    if value is None:
        return "null"
    if isinstance(value, dict | list):
        return "an object" if isinstance(value, dict) else "an array"
    kind = "boolean" if isinstance(value, bool) else "number" if isinstance(value, int | float) else "string"
    return f"{kind} {bounded(json.dumps(value, default=str), QUOTED)}"


def alert_insights(response: Any, update_started_at: int, note: str = "") -> list[HealthInsight]:
    """oc's alert insights; `note` (if any) is appended to each description. A malformed alert is
    an InputError (a snapshot's file is refused as oc refuses it)."""
    return _insights([read_alert(a) for a in alerts_list(response)], update_started_at, note)


def _insights(alerts: list[Alert], update_started_at: int, note: str = "") -> list[HealthInsight]:
    out: list[HealthInsight] = []
    seen: dict[str, int] = {}
    for alert in alerts:
        labels, annotations, name = alert.labels, alert.annotations, alert.name
        if not name:
            continue
        active_at = alert.active_at
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
        if alert.state == "pending":
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
            [ResourceRef(CONFIG_GROUP, "alerts", name, labels.get("namespace", ""))],
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


def readable_alerts(alerts: list[Any]) -> tuple[list[Alert], list[str]]:
    """The alerts that can be read, and one line per alert that cannot (skipped, not fatal: one
    malformed alert must not hide the others or stop the controller)."""
    good: list[Alert] = []
    problems: list[str] = []
    for raw in alerts:
        try:
            good.append(read_alert(raw))
        except InputError as exc:
            problems.append(str(exc))
    return good, problems


# -- alerts read live from the alerts API ----------------------------------------------------------

UNREADABLE_UID = "alerts-api-unreadable"


class AlertsReading(NamedTuple):
    """What the alerts API gave so far: the last good alerts (None: none read yet) and when they
    were read, and the current failure ("" when the last read succeeded) since when."""

    source: str
    alerts: list[Alert] | None = None
    read_at: int = 0  # ns
    error: str = ""
    failing_since: int = 0  # ns
    malformed: int = 0  # alerts of the last good read skipped as malformed


def live_alert_insights(reading: AlertsReading, update_started_at: int) -> list[HealthInsight]:
    """Alert insights as oc words them. While the API fails: the last good alerts, each marked
    with when it was read, plus one insight saying the API cannot be read (stable while the
    failure lasts, so a client sees it once rather than once per poll)."""
    if not reading.error:
        return _insights(reading.alerts or [], update_started_at)
    read = format_time(reading.read_at, nanos=False)
    note = f" (As of {read}: the alerts API cannot be read now.)" if reading.alerts is not None else ""
    out = _insights(reading.alerts or [], update_started_at, note)
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
