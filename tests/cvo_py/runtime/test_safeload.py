"""cvo_py.runtime.safeload: the bounds hold for any input, and within them it reads what PyYAML and json read."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cvo_py.runtime.safeload import DEFAULT_LIMITS, DocumentError, Limits, load_document, load_go_yaml
from testkit.corpus import values


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (values.deep_flow(30_000), "nested more than 128 levels deep"),
        ("a: " + values.deep_flow(30_000), "nested more than 128 levels deep at line 1"),
        ("".join(" " * i + "- \n" for i in range(200)), "nested more than 128 levels deep at line 129"),
        (values.deep_flow(sys.getrecursionlimit() + 10), "nested more than 128 levels deep"),  # JSON
        (values.deep_flow(129), "nested more than 128 levels deep"),  # JSON the scanner reads whole
        ('{"a": [' + values.deep_flow(128) + "]}", "nested more than 128 levels deep"),
        (values.alias_bomb(), "aliases expand to more than 10000 nodes at line 1"),
        ("x: &a [1]\n" + "".join(f"y{i}: *a\n" for i in range(65)), "more than 64 aliases at line 66"),
        (values.alias_bomb_document("lastTransitionTime"), "aliases expand to more than 10000 nodes at line 5"),
        ("a: " + values.huge_integer(), "a number of 4301 characters (the limit is 100) at line 1"),
        ('{"a": ' + values.huge_integer() + "}", "a number of 4301 characters (the limit is 100)"),
        ('{"a": 1e' + "9" * 200 + "}", "a number of 202 characters (the limit is 100)"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        (
            "a: !!python/object/apply:os.system [ls]",
            "unsupported tag 'tag:yaml.org,2002:python/object/apply:os.system'",
        ),
        ("a: !!binary aGk=", "unsupported tag 'tag:yaml.org,2002:binary'"),
        ("a: 1\n---\nb: 2\n", "more than one document at line 2"),
        ("? [a]\n: b\n", "a mapping key that is not a scalar at line 1"),
        ("a: *nothing", "alias *nothing names no complete anchor at line 1"),
        ("a: &x [*x]", "alias *x names no complete anchor at line 1"),  # recursive
        ("a: [1, 2", "cannot parse at line 2"),
        (b"a: \xff\n", "not UTF-8 (invalid byte at offset 3)"),
        ("<<: 5", "a merge key (<<) whose value is not a mapping or a list of mappings at line 1"),
    ],
)
def test_violations_are_one_line_errors_naming_the_source(data: str | bytes, problem: str) -> None:
    with pytest.raises(DocumentError) as info:
        load_document(data, source="some-file.yaml")
    assert str(info.value).startswith(f"some-file.yaml: {problem}")
    assert "\n" not in str(info.value)
    assert info.value.source == "some-file.yaml"


def test_size_is_bounded_before_parsing() -> None:
    with pytest.raises(DocumentError, match=r"^f: 11 bytes, more than the limit of 10 bytes$"):
        load_document("a: 12345678", source="f", limits=Limits(max_bytes=10))
    assert DEFAULT_LIMITS.max_bytes == 64 * 1024 * 1024


def test_reads_what_kubernetes_yaml_means() -> None:
    doc = load_document(
        "a: 4.14\nb: 2024-01-01T00:00:00Z\nc: yes\nd: 0x1f\ne: ~\nbase: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n",
        source="f",
        yaml_floats=False,
    )
    assert doc == {
        "a": "4.14",  # a version, not a float
        "b": "2024-01-01T00:00:00Z",  # timestamps stay strings
        "c": True,
        "d": 31,
        "e": None,
        "base": {"x": 1, "y": 2},
        "m": {"x": 1, "y": 3},
    }
    assert load_document("a: 4.5", source="f") == {"a": 4.5}
    assert load_document("", source="f") is None


def test_go_yaml_reads_what_a_manifest_means_to_kubernetes() -> None:
    """The reading Kubernetes gives a manifest (go-yaml v2, then JSON keys), beside the default
    (tests/syncworker/test_manifest.py compares it with Go itself)."""
    text = "a: y\nb: 017\nc: 1e3\nd: 0o17\ne: 1_000\non: off\n1.5: x\nbase: &b {x: 1, z: 2}\nm:\n  z: 3\n  <<: *b\n"
    assert load_go_yaml(text, source="f") == {
        "a": True, "b": 15, "c": 1000.0, "d": 15, "e": 1000, "true": False, "1.5": "x",
        "base": {"x": 1, "z": 2}, "m": {"x": 1, "z": 2},  # a merge overrides the keys before it
    }  # fmt: skip
    assert load_go_yaml("a: " + values.huge_integer(), source="f") == {"a": values.huge_integer()}  # as Go: text
    assert load_document(text, source="f")["a"] == "y"  # the default reading is PyYAML's YAML 1.1
    assert load_go_yaml("a: 1\n...\n--- [\n", source="f") == {"a": 1}  # the first document only
    assert load_go_yaml("a: !local text\nb: !!str 5\n", source="f") == {"a": "text", "b": "5"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a: " + values.deep_flow(30_000), "nested more than 128 levels deep at line 1"),
        (values.alias_bomb(), "aliases expand to more than 10000 nodes at line 1"),
        ("~: 1\n", "unsupported map key of type: <nil> at line 1"),
        ("a: !!int x\n", "cannot decode !!str `x` as a !!int at line 1"),
    ],
)
def test_go_yaml_keeps_the_bounds(text: str, problem: str) -> None:
    with pytest.raises(DocumentError) as caught:
        load_go_yaml(text, source="f")
    assert str(caught.value) == f"f: {problem}"


def test_lone_surrogates_become_replacement_characters_as_in_go() -> None:
    assert load_document('{"a": "\\ud800x", "\\udc00": ["\\ud83d"]}', source="f") == {
        "a": "\ufffdx",
        "\ufffd": ["\ufffd"],
    }
    with pytest.raises(DocumentError, match="invalid Unicode character escape"):  # libyaml refuses them
        load_document('a: "\\U0000DBFFx"', source="f")
    assert load_document('{"a": "\\\\ud800"}', source="f") == {"a": "\\ud800"}  # an escaped backslash


def test_nesting_at_the_limit_is_read() -> None:
    doc = load_document(values.deep_flow(128), source="f")
    depth = 0
    while isinstance(doc, list):
        depth, doc = depth + 1, (doc[0] if doc else None)
    assert depth == 128


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


@given(json_values)
def test_json_and_yaml_round_trips_match_the_standard_parsers(value: Any) -> None:
    text = json.dumps(value)
    if "\\ud" not in text.lower():
        assert load_document(text, source="f") == json.loads(text)
    dumped = yaml.safe_dump(value, allow_unicode=True)
    try:
        expected = yaml.load(dumped, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return
    assert load_document(dumped, source="f") == expected


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(list("[]{}:,-&*!|>'\"#?% \n\tab01.<~")) | st.characters(), max_size=300))
def test_any_text_loads_or_is_a_document_error(text: str) -> None:
    try:
        load_document(text, source="f")
    except DocumentError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("f: ")


@given(st.binary(max_size=300))
def test_any_bytes_load_or_are_a_document_error(data: bytes) -> None:
    try:
        load_document(data, source="f")
    except DocumentError as exc:
        assert "\n" not in str(exc)


class _ReferenceLoader(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader, with timestamps kept as strings as `load_document` keeps them."""


_ReferenceLoader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if not tag.endswith(":timestamp")]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
plain_scalars = st.sampled_from(
    [
        "yes",
        "No",
        "off",
        "true",
        "~",
        "null",
        "0x1f",
        "0o17",
        "017",
        "1_000",
        "190:20:30",
        "-1.5e3",
        ".inf",
        "4.14",
        "2024-01-01",
        "2024-01-01T00:00:00Z",
        "a b",
        "node-1",
        "-x",
        "x" * 70,
        "'q'",
        '"x"',
    ]
)


@settings(max_examples=200)
@given(st.lists(st.tuples(plain_scalars, plain_scalars, st.booleans()), min_size=1, max_size=8))
def test_scalars_read_as_the_standard_safe_loader_reads_them(pairs: list[tuple[str, str, bool]]) -> None:
    # Every kind of scalar as a mapping key, a mapping value and a sequence item, plain (typed by
    # its text) and quoted (a string), long and short (the resolved types of short ones are cached).
    text = "\n".join(f"{key}: [{value}, {value}]" if in_list else f"{key}: {value}" for key, value, in_list in pairs)
    expected = yaml.load(text, Loader=_ReferenceLoader)  # noqa: S506 (a safe loader)
    assert load_document(text, source="f") == expected
