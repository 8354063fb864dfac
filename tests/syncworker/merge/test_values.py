"""How the merges compare and read values: Go's semantic equality on typed objects (absent and
zero are one, a bool is not a number), pointer fields, strict JSON equality for the generic rule,
quantities by value, and a wrong JSON type named by its path."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from syncworker.merge.values import ApplyProblem, exact, mapping, objects, quantity, same, same_pointer, string_map

SAME = [
    ({}, {"a": None}, True),
    ({"a": {}}, {}, True),
    ({"a": []}, {"a": None}, True),
    ({"a": False}, {}, True),  # a non-pointer bool absent from the JSON is false
    ({"a": 0}, {}, True),
    ({"a": ""}, {}, True),
    ({"a": 1}, {"a": 1.0}, True),
    ({"a": True}, {"a": 1}, False),  # never a number
    ({"a": 0}, {"a": False}, True),  # both zero
    ({"a": [1, 2]}, {"a": [2, 1]}, False),
    ({"a": {"b": "x"}}, {"a": {"b": "x", "c": None}}, True),
    ({"a": "x"}, {"a": "y"}, False),
    ({"a": [{"b": 0}]}, {"a": [{}]}, True),
    ({"a": "1"}, {"a": 1}, False),
]


@pytest.mark.parametrize(("a", "b", "equal"), SAME)
def test_semantic_equality_treats_absent_and_zero_as_one(a: Any, b: Any, equal: bool) -> None:
    assert same(a, b) is equal
    assert same(b, a) is equal


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [(None, False, False), (False, False, True), (None, None, True), (0, None, False), ({}, None, False), (2, 2, True)],
)
def test_a_pointer_field_tells_absent_from_zero(a: Any, b: Any, equal: bool) -> None:
    assert same_pointer(a, b) is equal


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ({"a": {}}, {}, False),
        ({"a": None}, {}, False),
        ({"a": 1}, {"a": 1.0}, True),
        ({"a": True}, {"a": 1}, False),
        ({"a": [1]}, {"a": [1]}, True),
        ({"a": ""}, {}, False),
    ],
)
def test_strict_equality_tells_a_present_empty_value_from_an_absent_key(a: Any, b: Any, equal: bool) -> None:
    assert exact(a, b) is equal


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("100m", Fraction(1, 10)),
        ("0.1", Fraction(1, 10)),
        ("1Gi", Fraction(2**30)),
        ("1024Mi", Fraction(2**30)),
        ("1e3", Fraction(1000)),
        ("1k", Fraction(1000)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("0", Fraction(0)),
        (2, Fraction(2)),
        ("1E-3", Fraction(1, 1000)),
        ("12Zi", None),
        ("", None),
        ("1e999", None),
        (True, None),
        (None, None),
    ],
)
def test_a_quantity_is_read_by_value_and_an_unreadable_one_is_none(text: Any, value: Fraction | None) -> None:
    assert quantity(text) == value


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mapping({"spec": []}, "spec", ""), "spec: expected an object, found array"),
        (
            lambda: objects({"c": [1]}, "c", "spec.template.spec"),
            "spec.template.spec.c[0]: expected an object, found number",
        ),
        (
            lambda: string_map({"labels": {"a": True}}, "labels", "metadata"),
            "metadata.labels[a]: expected a string, found bool",
        ),
    ],
)
def test_a_field_of_the_wrong_type_is_one_line_naming_its_path(call: Any, message: str) -> None:
    with pytest.raises(ApplyProblem) as caught:
        call()
    assert str(caught.value) == message
