"""Reading Kubernetes objects (plain dicts as the API server sends them) the way Go's zero values do.

A missing field reads as its zero value, as in the Go structs oc decodes into; a field that is
present with the wrong type is a clear `InputError` naming the object and the field.
"""

from __future__ import annotations

from typing import Any

from cvo_py.runtime.gotext.durations import TimeFormatError
from cvo_py.runtime.gotext.quoting import escape, go_quote
from cvo_py.runtime.gotext.times import ZERO_TIME, parse_time

JSON = dict[str, Any]


class InputError(ValueError):
    """A Kubernetes object that cannot be read (wrong type, unparsable time).

    The message starts with the object's kind (see `describe`) unless `kind` names it."""

    kind: str | None = None


def describe(obj: JSON) -> str:
    kind = obj.get("kind") or "object"
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{kind} {go_quote(str(name))}" if name else escape(str(kind))


def field(obj: JSON, *path: str, want: type = dict, owner: JSON | None = None) -> Any:
    """obj[path...], or the zero value of `want` when absent or null."""
    cur: Any = obj
    for i, key in enumerate(path):
        if not isinstance(cur, dict):
            where = ".".join(path[:i])
            raise InputError(f"{describe(owner or obj)}: {where} is {type(cur).__name__}, not an object")
        cur = cur.get(key)
        if cur is None:
            return want()
    if not isinstance(cur, want) or (want is int and isinstance(cur, bool)):
        raise InputError(f"{describe(owner or obj)}: {'.'.join(path)} is {type(cur).__name__}, not {want.__name__}")
    return cur


def name_of(obj: JSON) -> str:
    name = field(obj, "metadata", "name", want=str)
    if not name:
        raise InputError(f"{describe(obj)} has no metadata.name")
    return str(name)


def labels(obj: JSON) -> dict[str, str]:
    value = field(obj, "metadata", "labels")
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def time_of(value: Any, obj: JSON, what: str) -> int:
    """A metav1.Time field → ns; absent/empty is Go's zero time."""
    if value is None or value == "":
        return ZERO_TIME
    if not isinstance(value, str):
        raise InputError(f"{describe(obj)}: {what} is {type(value).__name__}, not a string")
    try:
        return parse_time(value)
    except TimeFormatError as exc:
        raise InputError(f"{describe(obj)}: {what}: {exc}") from None


def conditions_by_type(obj: JSON) -> dict[str, JSON]:
    """status.conditions keyed by type; for duplicate types the last one wins (as oc's loops do)."""
    out: dict[str, JSON] = {}
    for cond in field(obj, "status", "conditions", want=list):
        if not isinstance(cond, dict):
            raise InputError(f"{describe(obj)}: status.conditions holds a {type(cond).__name__}")
        strings(cond, obj, "status.conditions[]", CONDITION_STRINGS)
        out[str(cond.get("type", ""))] = cond
    return out


CONDITION_STRINGS = ("type", "status", "reason", "message", "lastTransitionTime")
HISTORY_STRINGS = ("state", "version", "image", "startedTime", "completionTime")


def strings(item: JSON, obj: JSON, where: str, keys: tuple[str, ...]) -> None:
    """Fields that Go decodes into strings: present and not a string (a mapping, a number) is an error."""
    for key in keys:
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise InputError(f"{describe(obj)}: {where}.{key} is {type(value).__name__}, not a string")


def cond_str(cond: JSON | None, key: str) -> str:
    if cond is None:
        return ""
    value = cond.get(key)
    return "" if value is None else str(value)


def cond_time(cond: JSON | None, obj: JSON) -> int:
    if cond is None:
        return ZERO_TIME
    return time_of(cond.get("lastTransitionTime"), obj, f"condition {cond.get('type')} lastTransitionTime")


def history(cv: JSON) -> list[JSON]:
    items: list[JSON] = []
    for item in field(cv, "status", "history", want=list):
        if not isinstance(item, dict):
            raise InputError(f"{describe(cv)}: status.history holds a {type(item).__name__}")
        strings(item, cv, f"status.history[{len(items)}]", HISTORY_STRINGS)
        items.append(item)
    return items
