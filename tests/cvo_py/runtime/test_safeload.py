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


# Every YAML 1.1 standard tag (short, verbatim), an unknown one and a local one, each on text it
# cannot hold: the loader's own error, never KeyError or IndexError from the constructors.
@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("!!bool maybe", '!!bool cannot hold "maybe"'),
        ("!!bool ''", '!!bool cannot hold ""'),
        ("!!bool yEs", '!!bool cannot hold "yEs"'),
        ("!!int ''", '!!int cannot hold ""'),
        ("!!int '-'", '!!int cannot hold "-"'),
        ("!!int '+'", '!!int cannot hold "+"'),
        ("!!int '_'", '!!int cannot hold "_"'),
        ("!!int 0x_", 'invalid number "0x_"'),
        ("!!int 1.5", '!!int cannot hold "1.5"'),
        ("!!float ''", '!!float cannot hold ""'),
        ("!!float '_'", '!!float cannot hold "_"'),
        ("!!float 1.0e+400", '!!float out of range: "1.0e+400"'),
        ("!!null maybe", '!!null cannot hold "maybe"'),
        ("!!timestamp yesterday", '!!timestamp cannot hold "yesterday"'),
        ("!!merge x", '!!merge cannot hold "x"'),
        ("!!value x", '!!value cannot hold "x"'),
        ("!<tag:yaml.org,2002:int> ''", '!!int cannot hold ""'),
        ("!<tag:yaml.org,2002:bool> maybe", '!!bool cannot hold "maybe"'),
        ("!!binary aGk=", "unsupported tag 'tag:yaml.org,2002:binary'"),
        ("!!omap [a: 1]", "unsupported tag 'tag:yaml.org,2002:omap'"),
        ("!!pairs [a: 1]", "unsupported tag 'tag:yaml.org,2002:pairs'"),
        ("!!set {a}", "unsupported tag 'tag:yaml.org,2002:set'"),
        ("!!seq {a: 1}", "unsupported tag 'tag:yaml.org,2002:seq'"),
        ("!!map [a]", "unsupported tag 'tag:yaml.org,2002:map'"),
        ("!!seq x", "unsupported tag 'tag:yaml.org,2002:seq'"),
        ("!!str [a]", "unsupported tag 'tag:yaml.org,2002:str'"),
        ("!!x 1", "unsupported tag 'tag:yaml.org,2002:x'"),
        ("!x 1", "unsupported tag '!x'"),
        ("!<!x> 1", "unsupported tag '!x'"),
    ],
)
def test_a_tag_on_text_it_cannot_hold_is_a_document_error(value: str, problem: str) -> None:
    for text, line in ((f"a: {value}", 1), (f"- {value}", 1), (value, 1), (f"x: 1\n? {value}\n: y", 2)):
        with pytest.raises(DocumentError) as info:
            load_document(text, source="usc-meta")
        assert str(info.value) == f"usc-meta: {problem} at line {line}", text


def test_tagged_text_a_tag_can_hold_reads_as_that_type() -> None:
    doc = load_document(
        "a: !!bool yes\nb: !!int '0x1f'\nc: !!float '1.5'\nd: !!null ''\ne: !!str 12\nf: !!timestamp 2024-01-01\n"
        "g: !<tag:yaml.org,2002:int> 7\n",
        source="f",
    )
    assert doc == {"a": True, "b": 31, "c": 1.5, "d": None, "e": "12", "f": "2024-01-01", "g": 7}


def test_a_plain_float_past_float64_stays_text_as_in_go() -> None:
    assert load_document("a: 1.0e+400\nb: -1.0e+400\nc: .inf\nd: 0x_", source="f") == {
        "a": "1.0e+400",
        "b": "-1.0e+400",
        "c": float("inf"),  # YAML's own infinity
        "d": "0x_",  # looks like a number, is none: text, as Go's decoder keeps it
    }


_TAGS = [
    "!!bool", "!!int", "!!float", "!!null", "!!str", "!!binary", "!!timestamp", "!!omap", "!!pairs", "!!set", "!!seq",
    "!!map", "!!merge", "!!value", "!!x", "!<tag:yaml.org,2002:int>", "!<tag:yaml.org,2002:bool>",
    "!<tag:yaml.org,2002:float>", "!<tag:yaml.org,2002:null>", "!x", "!", "!<!>", "",
]
_TEXTS = [
    "maybe", "''", "'-'", "'+'", "'.'", "'_'", "0x", "0b", "0x_", "1__", "'1:'", "1e", "+.", "-.inf", ".NaN", "1:2:3.5",
    "190:20:30", "0_", "nan", "1e400", "1.0e+400", "1.2.3", "<<", "=", "~", "null", "yes", "12", "-0", "017",
    "2001-12-14t21:59:43.10-05:00", "x", '"\\u0000"', "&a x", "*a", "[]", "{}",
]
tagged_scalar = st.builds(lambda tag, text: f"{tag} {text}", st.sampled_from(_TAGS), st.sampled_from(_TEXTS))
tagged_documents = st.recursive(
    tagged_scalar,
    lambda inner: st.builds(
        lambda tag, items: f"{tag} [{', '.join(items)}]", st.sampled_from(_TAGS), st.lists(inner, max_size=3)
    )
    | st.builds(
        lambda tag, pairs: f"{tag} {{{', '.join(f'{k}: {v}' for k, v in pairs)}}}",
        st.sampled_from(_TAGS),
        st.lists(st.tuples(inner, inner), max_size=3),
    ),
    max_leaves=8,
)


@settings(max_examples=500)
@given(st.sampled_from(["", "a: ", "- ", "<<: ", "? "]), tagged_documents, st.booleans())
def test_any_tag_on_any_text_loads_or_is_a_document_error(prefix: str, document: str, floats: bool) -> None:
    """The loader's contract for tagged documents: only its own error escapes (the constructors'
    KeyError and IndexError on `!!bool maybe` or `!!int ''` once did)."""
    try:
        load_document(prefix + document, source="f", yaml_floats=floats)
    except DocumentError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("f: ")
