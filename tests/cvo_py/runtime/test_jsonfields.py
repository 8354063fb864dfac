"""JSON read down to the fields used: the typed decoder (msgspec) gives what `json.loads` and
`trim` give, on random documents shaped like the objects it reads and on ones that are not."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cvo_py.runtime.jsonfields import ANY, STR, STR_MAP, Only, Prefixed, Typed, decoder, trim
from status.updatestatus.insights.inputs import NODE, NODE_READ_ONCE

SHAPE = {"metadata": {"resourceVersion": STR, "continue": STR}, "items": [NODE]}
SHAPE_READ_ONCE = {"metadata": {"resourceVersion": STR, "continue": STR}, "items": [NODE_READ_ONCE]}
LIST = decoder(SHAPE)

text = st.text(max_size=8)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text
anything = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3))


def shaped(shape: Any) -> st.SearchStrategy[Any]:
    """Values of the described shape (with keys it does not describe), or now and then anything."""
    if isinstance(shape, dict):
        known = st.fixed_dictionaries({}, optional={key: shaped(sub) for key, sub in shape.items()})
        values = st.tuples(known, st.dictionaries(text, anything, max_size=2)).map(lambda kv: {**kv[1], **kv[0]})
    elif isinstance(shape, list):
        values = st.lists(shaped(shape[0]), max_size=3)
    elif isinstance(shape, Typed):
        kinds = st.sampled_from([*sorted(shape.types), "Other"]) | anything
        values = st.lists(st.one_of(st.tuples(shaped(shape.item), kinds).map(_with_type), anything), max_size=3)
    elif shape == STR:
        values = text
    elif shape == STR_MAP or isinstance(shape, Prefixed | Only):
        keys = st.sampled_from(["machineconfiguration.openshift.io/state", "other/x", "a"]) | text
        values = st.dictionaries(keys, text, max_size=4)
    else:
        values = anything
    return st.one_of(values, values, values, anything)  # mostly well shaped


def _with_type(item_and_type: tuple[Any, Any]) -> Any:
    item, kind = item_and_type
    return {**item, "type": kind} if isinstance(item, dict) else item


def trimmed(value: Any) -> Any:
    """`trim`'s result for the list, each item's prefixed objects filtered (the decoder keeps them whole)."""
    return trim(value, SHAPE)


@given(shaped(SHAPE))
def test_the_typed_decoder_reads_what_json_and_trim_read(document: Any) -> None:
    body = json.dumps(document).encode()
    assert trimmed(LIST(body)) == trimmed(json.loads(body))


@given(shaped(SHAPE_READ_ONCE))
def test_the_typed_decoder_reads_what_json_and_trim_read_of_a_shape_keeping_some_keys_and_items(
    document: Any,
) -> None:
    body = json.dumps(document).encode()
    assert trim(decoder(SHAPE_READ_ONCE)(body), SHAPE_READ_ONCE) == trim(json.loads(body), SHAPE_READ_ONCE)


@given(st.binary(max_size=64))
def test_bytes_that_are_not_json_fail_as_json_fails(body: bytes) -> None:
    try:
        expected: Any = trimmed(json.loads(body.decode("utf-8", errors="replace")))
    except ValueError:
        expected = ValueError
    try:
        got: Any = trimmed(LIST(body))
    except ValueError:
        got = ValueError
    assert got == expected


def test_only_keeps_those_keys_and_typed_those_items() -> None:
    shape = {"m": Only(frozenset({"k", "j"})), "l": Typed(frozenset({"Ready"}), {"type": STR, "x": STR})}
    value = {
        "m": {"z": "1", "k": "2", "j": "3"},
        "l": [{"type": "Ready", "x": "a", "y": "b"}, {"type": "Other", "x": "c"}, {"type": ["Ready"]}, "odd", {}],
    }
    # the object's order kept; an item that is not an object kept for its reader to judge
    assert trim(value, shape) == {"m": {"k": "2", "j": "3"}, "l": [{"type": "Ready", "x": "a"}, "odd"]}
    assert list(trim(value, shape)["m"]) == ["k", "j"]
    assert trim({"m": "text", "l": {"not": "a list"}}, shape) == {"m": "text", "l": {"not": "a list"}}
    # the decoder keeps them whole, as it keeps a Prefixed object
    typed = {"m": {"z": "1", "k": "2"}, "l": [{"type": "Other", "x": "c"}]}
    assert decoder(shape)(json.dumps(typed).encode()) == typed


@pytest.mark.parametrize("shape", [{"l": Typed(frozenset({"a"}), {"x": STR})}, {"m": Only(frozenset({"k"}))}])
def test_a_value_of_another_type_than_described_is_kept_by_both(shape: dict[str, Any]) -> None:
    value = {"l": "text", "m": ["list"]}
    assert decoder(shape)(json.dumps(value).encode()) == trim(value, shape)


def test_described_fields_are_kept_and_others_dropped() -> None:
    shape = {"a": STR, "m": Prefixed("k/"), "any": ANY, "l": [{"x": STR}]}
    value = {"a": "1", "b": 2, "m": {"k/1": "x", "z": "y"}, "any": {"deep": [1]}, "l": [{"x": "2", "y": 3}]}
    assert trim(value, shape) == {"a": "1", "m": {"k/1": "x"}, "any": {"deep": [1]}, "l": [{"x": "2"}]}
    assert decoder(shape)(json.dumps(value).encode()) == {
        "a": "1",
        "m": {"k/1": "x", "z": "y"},
        "any": {"deep": [1]},
        "l": [{"x": "2"}],
    }
