"""The ground the typed merges stand on: reading a manifest's fields with their JSON types checked,
comparing values as the API machinery compares typed objects, and Kubernetes quantities.

    same(a, b) -> bool            Go's semantic equality on typed objects as JSON shows them: an
                                  absent key, null, {}, [], false, 0 and "" are one zero; a bool is
                                  never a number; 1 == 1.0
    same_pointer(a, b) -> bool    the same for a pointer field, where absent and zero differ
    exact(a, b) -> bool           strict JSON equality (the generic rule): a key present as {} is not
                                  an absent key
    quantity(text) -> Fraction    a resource.Quantity's value ("100m" == "0.1"), None when unreadable
    Changes                       the enforced fields a merge found different, as paths
    ApplyProblem                  what stops one object from being applied, as one line (a manifest
                                  field of the wrong JSON type names its path)

    enforce, enforce_if_set, enforce_default, merge_strings, ensure_list_by_key
                                  the ways a field of the live object takes the manifest's value

A typed merge changes a copy of the live object (`copy_json`) in place and records each field it
had to set in `Changes`; `changed` is `bool(changes)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from cvo_py.runtime.gotext.jsoncodec import json_kind

JSON = dict[str, Any]


class ApplyProblem(ValueError):
    """What stops one object from being applied, as one line (a manifest field of the wrong type, an
    invalid delete annotation, a proxy injected into a container that does not exist). The task
    fails with it as with any error that is not the API server's."""


class Changes:
    """The fields a merge set, by path ("spec.replicas", "spec.template.spec.containers[name=c].image")."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def note(self, path: str) -> None:
        self.paths.append(path)

    def __bool__(self) -> bool:
        return bool(self.paths)


# -- reading with types checked ------------------------------------------------------------------------


def _wrong(path: str, want: str, value: Any) -> ApplyProblem:
    found = "null" if value is None else json_kind(value)
    return ApplyProblem(f"{path}: expected {want}, found {found}")


def at(path: str, key: str) -> str:
    """The path of `key` inside the object at `path` ("" is the top level)."""
    return f"{path}.{key}" if path else key


def mapping(obj: Mapping[str, Any], key: str, path: str) -> JSON:
    """obj[key] as an object; absent or null is {} (a new dict, not stored back)."""
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _wrong(at(path, key), "an object", value)
    return value


def sequence(obj: Mapping[str, Any], key: str, path: str) -> list[Any]:
    """obj[key] as an array; absent or null is []."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _wrong(at(path, key), "an array", value)
    return value


def objects(obj: Mapping[str, Any], key: str, path: str) -> list[JSON]:
    """obj[key] as an array of objects."""
    items = sequence(obj, key, path)
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _wrong(f"{at(path, key)}[{index}]", "an object", item)
    return items


def text(obj: Mapping[str, Any], key: str, path: str) -> str:
    """obj[key] as a string; absent or null is ""."""
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _wrong(at(path, key), "a string", value)
    return value


def string_map(obj: Mapping[str, Any], key: str, path: str) -> dict[str, str]:
    """obj[key] as an object of strings (labels, annotations, ConfigMap data, a node selector)."""
    value = mapping(obj, key, path)
    for name, item in value.items():
        if not isinstance(item, str):
            raise _wrong(f"{at(path, key)}[{name}]", "a string", item)
    return value


def keyed(items: list[JSON], key: str) -> dict[str, list[JSON]]:
    """Objects grouped by the string at `key` ("" when absent), in order, for pairing by name."""
    out: dict[str, list[JSON]] = {}
    for item in items:
        value = item.get(key)
        out.setdefault(value if isinstance(value, str) else "", []).append(item)
    return out


# -- comparing ---------------------------------------------------------------------------------------


def _empty(value: Any) -> bool:
    """Go's zero value as JSON shows it: absent, null, {}, [], false, 0 or ""."""
    if value is None or value is False or value == "":
        return True
    if isinstance(value, dict | list):
        return not value
    return isinstance(value, int | float | Fraction) and not isinstance(value, bool) and value == 0


def same(a: Any, b: Any) -> bool:
    """Go's `equality.Semantic.DeepEqual` on two typed objects decoded from JSON: a field absent from
    one side holds its zero value there, and nil equals empty, so an absent key, null, {}, [],
    false, 0 and "" are one "zero"; a bool is never a number; numbers compare by value. A pointer
    field, where absent and zero differ (`allowPrivilegeEscalation`), is compared with
    `same_pointer`."""
    if _empty(a) and _empty(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return all(same(a.get(key), b.get(key)) for key in a.keys() | b.keys())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return _scalar_equal(a, b)


def same_pointer(a: Any, b: Any) -> bool:
    """A pointer field: absent (or null) and present differ even when the value is a zero."""
    if (a is None) != (b is None):
        return False
    return same(a, b)


def exact(a: Any, b: Any) -> bool:
    """Equality of JSON data as Go's DeepEqual sees unstructured objects: keys must match, a present
    {} is not an absent key, a bool is never a number."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(exact(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(exact(x, y) for x, y in zip(a, b, strict=True))
    return _scalar_equal(a, b)


def _scalar_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float | Fraction) and isinstance(b, int | float | Fraction):
        return a == b
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return type(a) is type(b) and bool(a == b)


# -- enforcing one field -------------------------------------------------------------------------------


def enforce(
    changes: Changes,
    live: JSON,
    key: str,
    value: Any,
    path: str,
    compare: Callable[[Any], Any] = lambda v: v,
    *,
    pointer: bool = False,
) -> None:
    """Make live[key] the manifest's `value` (None: absent) unless they are already `same` (each side
    seen through `compare`, which fills defaults or reads quantities; `pointer`: `same_pointer`)."""
    equal = same_pointer if pointer else same
    if equal(compare(live.get(key)), compare(value)):
        return
    changes.note(path)
    if value is None:
        live.pop(key, None)
    else:
        live[key] = value


def enforce_if_set(changes: Changes, live: JSON, key: str, value: Any, path: str) -> None:
    """Upstream's "set if set": a manifest value that is absent or empty leaves live alone."""
    if value is None or value == "":
        return
    enforce(changes, live, key, value, path)


def merge_strings(changes: Changes, live: JSON, key: str, required: Mapping[str, str], path: str) -> None:
    """Set or overwrite each of the manifest's keys; keys only live has stay (labels, annotations,
    ConfigMap data, node selectors)."""
    if not required:
        return
    current = live.get(key)
    if not isinstance(current, dict):
        current = {}
    for name, value in required.items():
        if current.get(name) != value:
            changes.note(f"{path}[{name}]")
            current[name] = value
    live[key] = current


def with_default(obj: Any, defaults: Mapping[str, Any]) -> Any:
    """`obj` (an object) with `defaults` filled where absent or null; anything else unchanged."""
    if not isinstance(obj, dict):
        return obj
    out = dict(obj)
    for key, value in defaults.items():
        if out.get(key) is None:
            out[key] = value
    return out


def child(live: JSON, key: str) -> JSON:
    """live[key] as an object, created when absent (a live object's shapes are the server's)."""
    value = live.get(key)
    if not isinstance(value, dict):
        value = {}
        live[key] = value
    return value


def enforce_default(changes: Changes, live: JSON, key: str, value: Any, default: Any, path: str) -> None:
    """A field the server defaults: absent on either side is `default` (replicas 1, dnsPolicy
    ClusterFirst); the manifest's value, or the default, is what gets written."""
    wanted = default if value is None else value
    enforce(changes, live, key, wanted, path, lambda v: default if v is None else v)


def ensure_list_by_key(
    changes: Changes,
    live: JSON,
    key: str,
    required: list[JSON],
    match: str,
    path: str,
    fill: Callable[[JSON], JSON],
    view: Callable[[JSON], Any] = lambda item: item,
) -> None:
    """A list paired by the string at `match`: live-only items removed, missing ones appended, and a
    pair whose `view`s (each filled with defaults) differ takes the manifest's item, filled. Live
    order is kept; the n-th item of a name pairs with the n-th of the same name."""
    current = [item for item in sequence(live, key, path) if isinstance(item, dict)]
    wanted: dict[str, list[JSON]] = {}
    for item in required:
        wanted.setdefault(str(item.get(match) or ""), []).append(item)
    taken: dict[str, int] = {}
    out: list[JSON] = []
    for item in current:
        name = str(item.get(match) or "")
        index = taken.get(name, 0)
        candidates = wanted.get(name, [])
        if index >= len(candidates):
            changes.note(f"{at(path, key)}[{match}={name}]")
            continue
        taken[name] = index + 1
        filled = fill(candidates[index])
        if same(view(fill(item)), view(filled)):
            out.append(item)
        else:
            changes.note(f"{at(path, key)}[{match}={name}]")
            out.append(filled)
    for name, candidates in wanted.items():
        for item in candidates[taken.get(name, 0) :]:
            changes.note(f"{at(path, key)}[{match}={name}]")
            out.append(fill(item))
    if out or key in live:
        live[key] = out


# -- quantities ----------------------------------------------------------------------------------------

_QUANTITY = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?[0-9]+))?")
_DECIMAL_EXPONENTS = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX = {
    **{suffix: Fraction(10) ** exponent for suffix, exponent in _DECIMAL_EXPONENTS.items()},
    **{prefix + "i": Fraction(2) ** (10 * power) for power, prefix in enumerate("KMGTPE", start=1)},
}
_MAX_EXPONENT = 64  # larger exponents are not quantities the API server accepts; compared as text


def quantity(value: Any) -> Fraction | None:
    """The value of a resource.Quantity given as a string or a number, None when unreadable (compared
    as written then). The API server rewrites quantities in canonical form ("0.1" → "100m",
    "1024Mi" → "1Gi"), so a manifest and the live object agree by value only."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Fraction(value)
    if not isinstance(value, str):
        return None
    match = _QUANTITY.fullmatch(value)
    if match is None:
        return None
    number, suffix, exponent = match.groups()
    if exponent is not None:
        if abs(int(exponent)) > _MAX_EXPONENT:
            return None
        return Fraction(number) * Fraction(10) ** int(exponent)
    return Fraction(number) * _SUFFIX[suffix or ""]


def quantity_view(value: Any) -> Any:
    """A quantity as its value for comparing, or as written when unreadable."""
    read = quantity(value)
    return value if read is None else read


def quantities_view(value: Any) -> Any:
    """A resource list (name → quantity) with each quantity as its value."""
    if not isinstance(value, dict):
        return value
    return {name: quantity_view(item) for name, item in value.items()}
