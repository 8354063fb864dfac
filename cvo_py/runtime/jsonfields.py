"""JSON objects read down to the fields a caller uses, from one description of those fields.

    NODE = {"metadata": {"name": STR, "labels": STR_MAP, "annotations": Prefixed("mco/")}, "spec": ANY}
    trim(obj, NODE)          # a decoded object with only those fields (what a cache keeps)
    decoder(NODE)(body)      # the same read straight from the JSON bytes, the rest skipped unbuilt

A description maps each kept key to its shape: `STR` (a string), `ANY` (kept whole), `STR_MAP` (an
object of strings), `Prefixed(p)` (an object of strings, only the keys starting with `p` kept),
`Only(keys)` (an object of strings, only those keys kept), a description of its own (an object:
only its keys kept), a one-item list of one (a list of such objects) or `Typed(types, item)` (a
list of such objects, only those whose "type" is one of `types` kept: the conditions a reader
looks at). Keys that are absent stay absent. `trim` keeps a value whose type differs from its
description as it is, so the reader of the object judges it.

`decoder` reads the bytes with msgspec, typed from the description: the fields it does not name
are skipped by the parser without building them (a Node LIST of 5,000 nodes decodes in a sixth of
`json.loads`' time, and takes a fraction of its memory). It keeps every key of a `Prefixed`
object, of an `Only` object and of a `Typed` list (`trim` removes the others where a cache keeps
the result). A body it cannot type (a value of another type than described, invalid UTF-8) is
decoded by `json.loads` instead, as the API client decodes every body, and trimmed: the result is
the same either way
(tests/cvo_py/runtime/test_jsonfields.py compares the two on random documents). msgspec is
imported when the first decoder is used, not with this module.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

STR = "str"
ANY = "any"
STR_MAP = "str-map"


class Prefixed(NamedTuple):
    """An object of strings of which only the keys starting with `prefix` are kept."""

    prefix: str


class Only(NamedTuple):
    """An object of strings of which only these keys are kept."""

    keys: frozenset[str]


class Typed(NamedTuple):
    """A list of objects of which only those whose "type" is one of `types` are kept, read as `item`."""

    types: frozenset[str]
    item: Mapping[str, Any]


Fields = Mapping[str, Any]  # key → STR | ANY | STR_MAP | Prefixed | Only | Fields | [Fields] | Typed


def trim(value: Any, shape: Any) -> Any:
    """`value` with only the fields `shape` describes (a value of another type kept as is)."""
    if isinstance(shape, Mapping):
        if not isinstance(value, dict):
            return value
        return {key: trim(value[key], sub) for key, sub in shape.items() if key in value}
    if isinstance(shape, list):
        if not isinstance(value, list):
            return value
        return [trim(item, shape[0]) for item in value]
    if isinstance(shape, Prefixed):
        if not isinstance(value, dict):
            return value
        return {k: v for k, v in value.items() if isinstance(k, str) and k.startswith(shape.prefix)}
    if isinstance(shape, Only):
        if not isinstance(value, dict):
            return value
        return {k: v for k, v in value.items() if k in shape.keys}
    if isinstance(shape, Typed):
        if not isinstance(value, list):
            return value
        return [trim(item, shape.item) for item in value if _typed(item, shape.types)]
    return value


def _typed(item: Any, types: frozenset[str]) -> bool:
    """Whether a `Typed` list keeps `item`: one of `types`, or not an object (kept as it is, for
    its reader to judge)."""
    if not isinstance(item, dict):
        return True
    kind = item.get("type")
    return isinstance(kind, str) and kind in types


def decoder(shape: Fields) -> Callable[[bytes], Any]:
    """A function of JSON bytes giving what `trim(json.loads(body), shape)` gives, but for
    `Prefixed` and `Only` objects and `Typed` lists, which it keeps whole (see the module's docstring)."""
    typed: Any = None

    def decode(body: bytes) -> Any:
        nonlocal typed
        import msgspec

        if typed is None:
            typed = msgspec.json.Decoder(_type_of(shape, "Object"))
        try:
            return typed.decode(body)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return trim(json.loads(body.decode("utf-8", errors="replace")), shape)

    return decode


def _type_of(shape: Any, name: str) -> Any:
    """The type msgspec decodes `shape` as: TypedDicts of optional keys for objects."""
    from typing import TypedDict

    if isinstance(shape, Mapping):
        fields = {key: _type_of(sub, f"{name}_{i}") for i, (key, sub) in enumerate(shape.items())}
        return TypedDict(name, fields, total=False)  # type: ignore[operator]
    if isinstance(shape, list | Typed):
        return list[_type_of(shape[0] if isinstance(shape, list) else shape.item, name)]  # type: ignore[misc]
    if shape == STR:
        return str
    if shape == STR_MAP or isinstance(shape, Prefixed | Only):
        return dict[str, str]
    return Any
