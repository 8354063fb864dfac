"""The ClusterVersion conditions cvo-py sets, and upstream's way of setting one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cvo_py.runtime.gotext.times import metav1_time

JSON = dict[str, Any]

AVAILABLE = "Available"
PROGRESSING = "Progressing"
FAILING = "Failing"
RELEASE_ACCEPTED = "ReleaseAccepted"
INVALID = "Invalid"
IMPLICITLY_ENABLED = "ImplicitlyEnabledCapabilities"
RETRIEVED_UPDATES = "RetrievedUpdates"

# Our own condition: capability names the installed CRD rejected (see status/clusterversion/writer.py).
CAPABILITIES_PRUNED = "CapabilitiesPruned"


@dataclass(frozen=True)
class Verdict:
    """What one condition says (set with upstream's setter: the transition time moves on a flip)."""

    status: str
    reason: str = ""
    message: str = ""


def find_condition(conditions: Sequence[Mapping[str, Any]], type_: str) -> Mapping[str, Any] | None:
    for condition in conditions:
        if condition.get("type") == type_:
            return condition
    return None


def set_condition(conditions: list[JSON], type_: str, status: str, reason: str, message: str, now: datetime) -> None:
    """Upstream's setter: lastTransitionTime moves only when status flips; reason and message are
    always overwritten; a new type is appended at the end."""
    for condition in conditions:
        if condition.get("type") == type_:
            if condition.get("status") != status or not condition.get("lastTransitionTime"):
                condition["lastTransitionTime"] = metav1_time(now)
            condition["status"] = status
            _set_or_drop(condition, "reason", reason)
            _set_or_drop(condition, "message", message)
            return
    new: JSON = {"type": type_, "status": status, "lastTransitionTime": metav1_time(now)}
    _set_or_drop(new, "reason", reason)
    _set_or_drop(new, "message", message)
    conditions.append(new)


def remove_condition(conditions: list[JSON], type_: str) -> None:
    conditions[:] = [c for c in conditions if c.get("type") != type_]


def _set_or_drop(condition: JSON, key: str, value: str) -> None:
    if value:
        condition[key] = value
    else:
        condition.pop(key, None)
