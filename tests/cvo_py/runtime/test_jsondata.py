"""The JSON data helpers against the standard library's generic tools they replace (the oracles):
`copy.deepcopy` for `copy_json`, `json.dumps` for `encode_json`, on random JSON data."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cvo_py.runtime.jsondata import copy_json, encode_json

# Text with anything Python strings hold: non-ASCII, control characters, lone surrogates.
TEXT = st.text(alphabet=st.characters(codec=None), max_size=20)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | TEXT
JSON_DATA = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
    max_leaves=40,
)


def containers(value: Any) -> list[Any]:
    """Every dict and list in `value`, the value itself first."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            stack.extend(item)
    return found


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN (JSON's NaN constant reads back as a NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@settings(max_examples=200)
@given(JSON_DATA)
def test_copy_json_is_deepcopy_without_sharing_a_container(value: Any) -> None:
    copied = copy_json(value)
    assert same(copied, copy.deepcopy(value))
    originals = {id(c) for c in containers(value)}
    assert not any(id(c) in originals for c in containers(copied))


def test_changing_the_copy_leaves_the_original() -> None:
    status = {"conditions": [{"type": "Available", "status": "True"}], "history": [{"version": "4.14.1"}]}
    copied = copy_json(status)
    copied["conditions"][0]["status"] = "False"
    copied["history"].append({"version": "4.14.2"})
    assert status == {"conditions": [{"type": "Available", "status": "True"}], "history": [{"version": "4.14.1"}]}


@settings(max_examples=200)
@given(JSON_DATA)
def test_encode_json_reads_back_as_json_dumps_does(value: Any) -> None:
    encoded = encode_json(value)
    assert isinstance(encoded, bytes)
    assert same(json.loads(encoded), json.loads(json.dumps(value)))


def test_encode_json_keeps_non_ascii_text_and_escapes_what_utf8_cannot_carry() -> None:
    assert encode_json({"message": "é\u2028"}) == '{"message":"é\u2028"}'.encode()
    # A lone surrogate is not Unicode text: json.dumps's escape is what the server reads back.
    assert json.loads(encode_json({"message": "\ud800"})) == {"message": "\ud800"}
    assert encode_json([float("nan"), float("inf")]) == b"[NaN,Infinity]"
