"""What to leave out of ClusterVersion status when the API server rejects it (pure).

A status write can be rejected for values cvo-py does not control: capability names an older
ClusterVersion CRD does not accept (after a rollback), and values copied from outside, from the
update service's graph (available and conditional updates, the current release's channels and URL)
or the release's metadata. Either would stop every status write, and with it every condition,
for as long as the value is offered. So the writer leaves out exactly what was rejected and writes
the rest:

* a 422 Invalid: each cause in `details.causes` is tied to the value sent at its field path
  (`status.` prefix or not, as Kubernetes versions differ). A capability name is an item of
  `capabilities.{enabled,known}Capabilities` (only `FieldValueNotSupported`, with its quoted value
  checked against the item sent). From outside, the unit left out is the whole item of
  `availableUpdates` or `conditionalUpdates` the path points into (half an update, e.g. without
  one of its risks, would look safer than it is), an item of `desired.channels`, or
  `desired.url`; a list with too many items (`FieldValueTooMany`, "must have at most N items")
  keeps its first N (lists are newest first). A risk of `conditionalUpdateRisks` (the
  ClusterUpdateAcceptRisks gate) goes with the conditional updates that name it, so no update is
  shown without one of its risks; too many of them keeps the risks of the newest updates, at most
  N names (`updateservice.bounds.within_risk_names`). Any other cause (a field cvo-py computes)
  makes the rejection unprunable: it is an error to report, not to hide;
* a request too large (413, or the storage's own limit): every item of the two update lists.

Left-out values are remembered so later writes leave them out at once: capability names until the
CRD changes, values from outside while they are still offered unchanged (an item that changes is
tried again). They are reported: capability names in the `CapabilitiesPruned` condition (they stay
enabled), values from outside in `RetrievedUpdates`, which says what the update service offered
and status does not show.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cvo_py.runtime.gotext.messages import bounded
from status.clusterversion.capabilities import ENABLED, KNOWN
from status.clusterversion.conditions import (
    CAPABILITIES_PRUNED,
    RETRIEVED_UPDATES,
    find_condition,
    remove_condition,
    set_condition,
)
from updateservice.bounds import risk_names, within_risk_names
from updateservice.retrieval import UPDATES_OMITTED

JSON = dict[str, Any]

AVAILABLE = "availableUpdates"
CONDITIONAL = "conditionalUpdates"
RISKS = "conditionalUpdateRisks"
DESIRED_CHANNELS = "desired.channels"
DESIRED_URL = "desired.url"
CAPABILITY_LISTS = (ENABLED, KNOWN)  # under status.capabilities
OUTSIDE_LISTS = (AVAILABLE, CONDITIONAL, RISKS, DESIRED_CHANNELS)
OUTSIDE_FIELDS = (DESIRED_URL,)
OUTSIDE = (*OUTSIDE_LISTS, *OUTSIDE_FIELDS)
# How many left-out values a message names (the rest are counted), and how long a name may be.
NAMED = 5
LABEL_TEXT = 100

# Added by the API server next to schema errors when CEL rules were skipped because of them: a
# consequence of the other causes, not a problem of its own (field "<nil>").
_CEL_SKIPPED = "some validation rules were not checked because the object was invalid"
_CAPABILITY_ITEM = re.compile(r"^capabilities\.(enabledCapabilities|knownCapabilities)\[(\d+)\]$")
_OUTSIDE_ITEM = re.compile(r"^(availableUpdates|conditionalUpdates|desired\.channels)\[(\d+)\]([.\[].*)?$")
_OUTSIDE_LIST = re.compile(r"^(availableUpdates|conditionalUpdates|desired\.channels)$")
_RISK_ITEM = re.compile(r"^conditionalUpdateRisks\[(\d+)\]([.\[].*)?$")
_AT_MOST = re.compile(r"must have at most (\d+) items")
_VALUE = re.compile(r'Unsupported value: ("(?:[^"\\]|\\.)*")')


@dataclass(frozen=True)
class RejectedValue:
    field: str  # ENABLED or KNOWN (capability names), or one of OUTSIDE
    value: Any  # the item (or field value) as sent
    index: int | None = None  # its index in the list as sent
    cause: str = ""  # `<field path>: <message>`, as the API server said it
    too_large: bool = False  # the value is a whole list, refused with the request as too large
    duplicate: bool = False  # a repeat in a set: its first occurrence stays

    def label(self) -> str:
        """How a message names the value: a release by its version, else the value itself."""
        value = self.value
        if isinstance(value, dict):
            inner = value.get("release")
            release: Mapping[str, Any] = inner if isinstance(inner, dict) else value
            label = release.get("version") or release.get("image") or value.get("name") or "?"
            return bounded(str(label), LABEL_TEXT)
        return bounded(json.dumps(value) if isinstance(value, str) else str(value), LABEL_TEXT)


@dataclass(frozen=True)
class Rejection:
    """A rejected status write, split into what leaving values out can fix and what it cannot."""

    values: tuple[RejectedValue, ...] = ()
    other: tuple[JSON, ...] = ()  # causes about fields cvo-py computes itself
    message: str = ""
    consequential: tuple[JSON, ...] = ()  # "validation rules were not checked" notes
    too_large: bool = False

    @property
    def prunable(self) -> bool:
        """Leaving values out makes the write land only when every cause is such a value."""
        return bool(self.values) and not self.other

    def fields(self) -> list[str]:
        """One normalized field path per cause (no index, `status.` prefix), for metrics."""
        if self.too_large:
            return ["request"]
        out = [normalize_field(f"status.{_path(v.field)}") for v in self.values]
        for cause in self.other:
            out.append(normalize_field(str(cause.get("field") or "")))
        return out or [""]


def _path(field_name: str) -> str:
    return f"capabilities.{field_name}" if field_name in CAPABILITY_LISTS else field_name


def normalize_field(path: str) -> str:
    """`capabilities.enabledCapabilities[3]` → `status.capabilities.enabledCapabilities`."""
    path = re.sub(r"\[\d+\]", "", path)
    if path and not path.startswith(("status", "spec", "metadata")):
        path = "status." + path
    return path


def _at(status: Mapping[str, Any], dotted: str) -> Any:
    value: Any = status
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def parse_rejection(status_body: Mapping[str, Any], sent_status: Mapping[str, Any]) -> Rejection:
    """Classify the causes of a 422 Invalid Status answering a write of `sent_status` to /status."""
    details = status_body.get("details") if isinstance(status_body.get("details"), dict) else {}
    raw_causes = details.get("causes") if isinstance(details, dict) else None
    causes = [c for c in raw_causes if isinstance(c, dict)] if isinstance(raw_causes, list) else []
    values: list[RejectedValue] = []
    other: list[JSON] = []
    consequential: list[JSON] = []
    for cause in causes:
        if _CEL_SKIPPED in str(cause.get("message") or ""):
            consequential.append(dict(cause))
            continue
        found = _rejected_values(cause, sent_status)
        if found is None:
            other.append(dict(cause))
        else:
            values.extend(found)
    return Rejection(tuple(values), tuple(other), str(status_body.get("message") or ""), tuple(consequential))


def too_large(sent_status: Mapping[str, Any], message: str) -> Rejection:
    """A write refused for its size: what can go is each of the two update lists, whole (its items
    may be fine one by one; the list changing is what may make it fit)."""
    values = [
        RejectedValue(name, sent_status[name], None, bounded(f"status.{name}: {message}", CAUSE_TEXT), True)
        for name in (AVAILABLE, CONDITIONAL)
        if isinstance(sent_status.get(name), list) and sent_status[name]
    ]
    return Rejection(tuple(values), (), message, too_large=True)


def _rejected_values(cause: Mapping[str, Any], sent: Mapping[str, Any]) -> list[RejectedValue] | None:
    """The sent values a cause rejects, or None when it is not about values that may be left out."""
    path = str(cause.get("field") or "")
    path = path.removeprefix("status.")
    text = describe(cause)
    match = _CAPABILITY_ITEM.match(path)
    if match:
        found = _capability_cause(cause, match.group(1), int(match.group(2)), sent)
        return None if found is None else [found]
    match = _OUTSIDE_ITEM.match(path)
    if match:
        list_name, index = match.group(1), int(match.group(2))
        items = _at(sent, list_name)
        if not isinstance(items, list) or index >= len(items):
            return None  # not what we sent: leaving out a guess could drop the wrong value
        duplicate = cause.get("reason") == "FieldValueDuplicate" and not match.group(3)
        return [RejectedValue(list_name, items[index], index, text, duplicate=duplicate)]
    match = _OUTSIDE_LIST.match(path)
    if match and cause.get("reason") == "FieldValueTooMany":
        at_most = _AT_MOST.search(str(cause.get("message") or ""))
        items = _at(sent, match.group(1))
        if at_most is None or not isinstance(items, list):
            return None
        keep = int(at_most.group(1))
        return [RejectedValue(match.group(1), item, i, text) for i, item in enumerate(items) if i >= keep] or None
    match = _RISK_ITEM.match(path)
    if match:
        items = _at(sent, RISKS)
        index = int(match.group(1))
        if not isinstance(items, list) or index >= len(items) or not isinstance(items[index], Mapping):
            return None
        return _risks_with_their_updates(sent, [index], text)
    if path == RISKS and cause.get("reason") == "FieldValueTooMany":
        at_most = _AT_MOST.search(str(cause.get("message") or ""))
        return _over_risk_names(sent, int(at_most.group(1)), text) if at_most else None
    if path == DESIRED_URL and _at(sent, DESIRED_URL) is not None:
        return [RejectedValue(DESIRED_URL, _at(sent, DESIRED_URL), None, text)]
    return None


def _updates(sent: Mapping[str, Any]) -> list[Any]:
    updates = sent.get(CONDITIONAL)
    return updates if isinstance(updates, list) else []


def _risks_with_their_updates(sent: Mapping[str, Any], indexes: Sequence[int], text: str) -> list[RejectedValue]:
    """The risks of `conditionalUpdateRisks` at `indexes`, and every conditional update naming one
    (shown without it, an update would look safer than it is)."""
    risks: list[Any] = sent[RISKS]
    names = {str(risks[i].get("name", "")) for i in indexes}
    out = [RejectedValue(RISKS, risks[i], i, text) for i in indexes]
    out += [RejectedValue(CONDITIONAL, update, i, text) for i, update in enumerate(_updates(sent))
            if isinstance(update, Mapping) and risk_names(update) & names]
    return out


def _over_risk_names(sent: Mapping[str, Any], limit: int, text: str) -> list[RejectedValue] | None:
    """Too many risks in `conditionalUpdateRisks`: the conditional updates past `limit` distinct
    names (the newest kept first), and the risks no kept update names."""
    risks = sent.get(RISKS)
    if not isinstance(risks, list) or not all(isinstance(r, Mapping) for r in risks):
        return None
    updates = [u for u in _updates(sent) if isinstance(u, dict)]
    kept, _left_out = within_risk_names(updates, limit)
    kept_ids = {id(update) for update in kept}
    named = set().union(*(risk_names(update) for update in kept))
    out = [RejectedValue(CONDITIONAL, update, i, text) for i, update in enumerate(_updates(sent))
           if isinstance(update, dict) and id(update) not in kept_ids]
    out += [RejectedValue(RISKS, risk, i, text) for i, risk in enumerate(risks)
            if str(risk.get("name", "")) not in named]
    return out or None


def _capability_cause(
    cause: Mapping[str, Any], list_name: str, index: int, sent: Mapping[str, Any]
) -> RejectedValue | None:
    """A capability name the CRD's enum does not accept, tied to what was sent."""
    if cause.get("reason") != "FieldValueNotSupported":
        return None
    caps = sent.get("capabilities") if isinstance(sent.get("capabilities"), dict) else {}
    names = (caps or {}).get(list_name)
    at_index = names[index] if isinstance(names, list) and index < len(names) else None
    quoted = _VALUE.search(str(cause.get("message") or ""))
    value: str | None = None
    if quoted:
        try:
            decoded = json.loads(quoted.group(1))
            value = decoded if isinstance(decoded, str) else None
        except ValueError:
            value = None
    if value is None:
        value = at_index if isinstance(at_index, str) else None
    if value is None or (isinstance(at_index, str) and at_index != value):
        # The cause does not describe what we sent; pruning by guess could drop the wrong name.
        return None
    return RejectedValue(list_name, value, index, describe(cause))


# A cause quotes the rejected value, which may be as large as what was sent.
CAUSE_TEXT = 500


def describe(cause: Mapping[str, Any]) -> str:
    """`status.<field>: <message>`, in one line of at most CAUSE_TEXT characters."""
    path = str(cause.get("field") or "")
    if path and not path.startswith(("status.", "spec.", "metadata.")) and path != "<nil>":
        path = "status." + path
    return bounded(f"{path}: {cause.get('message') or ''}".strip(": "), CAUSE_TEXT)


def _key(value: Any) -> str:
    """One value's identity: its canonical JSON."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


@dataclass
class PrunedValues:
    """What the API server rejected, per field; kept so later writes leave it out at once."""

    # field → canonical JSON → the rejected value and why it was rejected
    by_field: dict[str, dict[str, RejectedValue]] = field(default_factory=dict)

    def add(self, rejected: Iterable[RejectedValue]) -> list[RejectedValue]:
        """Remember rejections; returns those not seen before (to log once)."""
        new: list[RejectedValue] = []
        for item in rejected:
            held = self.by_field.setdefault(item.field, {})
            key = _key(item.value)
            if key not in held:
                held[key] = item
                new.append(item)
        return new

    def clear(self) -> dict[str, tuple[str, ...]]:
        """Forget everything (the CRD that rejected it changed); returns the capability names forgotten."""
        forgotten = self.state()
        self.by_field.clear()
        return forgotten

    def discard(self, names: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
        """Forget these capability names (per list); returns those that were remembered."""
        forgotten: dict[str, tuple[str, ...]] = {}
        for list_name, values in names.items():
            held = self.by_field.get(list_name, {})
            gone = sorted(v for v in set(values) if _key(v) in held)
            for value in gone:
                del held[_key(value)]
            if gone:
                forgotten[list_name] = tuple(gone)
        return forgotten

    def retain(self, status: Mapping[str, Any]) -> None:
        """Forget values from outside that `status` (as computed, before pruning) no longer offers."""
        for field_name in OUTSIDE:
            held = self.by_field.get(field_name)
            if not held:
                continue
            present = _at(status, field_name)
            offered = {_key(present)}  # a whole list, or a field's value
            if isinstance(present, list):
                offered.update(_key(v) for v in present)
            for key in [k for k in held if k not in offered]:
                del held[key]

    def __bool__(self) -> bool:
        return any(self.by_field.values())

    def state(self) -> dict[str, tuple[str, ...]]:
        """The capability names left out, per list, sorted."""
        return {
            f: tuple(sorted(str(v.value) for v in held.values()))
            for f, held in self.by_field.items()
            if f in CAPABILITY_LISTS and held
        }

    def outside(self) -> list[RejectedValue]:
        """The values from outside left out, in field order, then as rejected."""
        return [v for f in OUTSIDE for v in self.by_field.get(f, {}).values()]


def prune(
    status: Mapping[str, Any], pruned: Mapping[str, Iterable[str]], outside: Sequence[RejectedValue] = ()
) -> JSON:
    """A copy of `status` without the pruned capability names (per list) and values from outside."""
    out = dict(status)
    caps = status.get("capabilities")
    if isinstance(caps, dict):
        new_caps = dict(caps)
        for list_name, names in pruned.items():
            drop = set(names)
            values = caps.get(list_name)
            if drop and isinstance(values, list):
                new_caps[list_name] = [v for v in values if v not in drop]
        out["capabilities"] = new_caps
    by_field: dict[str, dict[str, bool]] = {}  # field → value's key → only ever rejected as a repeat
    for value in outside:
        held = by_field.setdefault(value.field, {})
        value_key = _key(value.value)
        held[value_key] = held.get(value_key, True) and value.duplicate
    for field_name, rejected in by_field.items():
        parent_path, _, name = field_name.rpartition(".")
        parent = out
        if parent_path:  # desired.*: a copy of desired, changed
            inner = out.get(parent_path)
            if not isinstance(inner, dict):
                continue
            parent = out[parent_path] = dict(inner)
        current = parent.get(name)
        if isinstance(current, list) and _key(current) in rejected:  # the whole list, refused as too large
            current = []
        if isinstance(current, list):
            kept, seen = [], set()
            for item in current:
                item_key = _key(item)
                if item_key not in rejected or (rejected[item_key] and item_key not in seen):
                    kept.append(item)
                seen.add(item_key)
            if kept:
                parent[name] = kept
            elif field_name == AVAILABLE:
                parent[name] = None  # required, nullable
            else:
                parent.pop(name, None)
        elif name in parent and _key(current) in rejected:
            parent.pop(name)
    return out


def pruned_message(pruned: Mapping[str, Sequence[str]]) -> str:
    parts = [f"{list_name} {', '.join(names)}" for list_name, names in sorted(pruned.items()) if names]
    return (
        "The installed ClusterVersion CRD does not accept these capability names, so they are left out of "
        "status.capabilities (the capabilities are not disabled): " + "; ".join(parts)
    )


def outside_message(values: Sequence[RejectedValue]) -> str:
    """What status leaves out of what came from outside, because the API server rejected it."""
    too_big = [v for v in values if v.too_large]
    rejected = [v for v in values if not v.too_large]
    parts = []
    for field_name in OUTSIDE:
        named = [v for v in rejected if v.field == field_name]
        if named:
            shown = "; ".join(f"{v.label()} ({v.cause})" for v in named[:NAMED])
            more = f"; and {len(named) - NAMED} more" if len(named) > NAMED else ""
            parts.append(f"{field_name} {shown}{more}")
    sizes = {v.field: len(v.value) if isinstance(v.value, list) else 1 for v in too_big}
    if too_big:
        counts = ", ".join(f"{n} {f}" for f, n in sizes.items() if n)
        parts.append(f"the API server refused the status as too large, so it holds none of these: {counts}")
    return "The API server rejected values the update service or the release offered; status leaves them out: " + (
        "; ".join(parts)
    )


def apply_pruned(
    status: Mapping[str, Any],
    pruned: Mapping[str, Sequence[str]],
    now: datetime,
    outside: Sequence[RejectedValue] = (),
) -> JSON:
    """Leave rejected values out of `status` and say so: capability names in the
    `CapabilitiesPruned` condition (dropped when there are none), values from outside in
    `RetrievedUpdates`. Nothing else changes."""
    out = prune(status, pruned, outside)
    conditions = [dict(c) for c in out.get("conditions") or []]
    if any(pruned.values()):
        message = pruned_message(pruned)
        set_condition(conditions, CAPABILITIES_PRUNED, "True", "RejectedByClusterVersionCRD", message, now)
    else:
        remove_condition(conditions, CAPABILITIES_PRUNED)
    if outside:
        existing = find_condition(conditions, RETRIEVED_UPDATES) or {}
        status_ = str(existing.get("status") or "False")
        reason = str(existing.get("reason") or "")
        if status_ == "True" and not reason:
            reason = UPDATES_OMITTED
        message = " ".join(p for p in (str(existing.get("message") or ""), outside_message(outside)) if p)
        set_condition(conditions, RETRIEVED_UPDATES, status_, reason, message, now)
    out["conditions"] = conditions
    return out
