"""The generated readers and writers (`status.updatestatus.api.plain`, `.writers`) against the
models, their oracle: on random insights of every type the writers give the models' JSON byte for
byte; on what the controller writes and on structural and textual edits of it, a client reading
with `wire.decode_readable` gets exactly what the models give from the text (the bounded loader,
then the model), insights and errors alike."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from cvo_py.runtime import safeload
from cvo_py.runtime.gotext.times import ZERO_TIME, parse_time
from status.updatestatus.api import configmap, metadata, wire, writers
from status.updatestatus.insights import compute, kinds, models
from status.updatestatus.insights import plain as plain_insights
from testkit.checkout import REPO
from testkit.objects.insight_models import constraints, is_enum, is_model, optional_inner, plain_of
from testkit.objects.insight_objects import ns, sample_insights
from testkit.objects.synthetic import synthetic_cluster


def sample_data() -> dict[str, str]:
    """Every kind of insight and field the controller writes, encoded as it writes them."""
    return configmap.encode(sample_insights())


def models_read(data: dict[str, str]) -> tuple[list[Any], list[str]]:
    """The oracle: every value read alone, from its text, by the bounded loader and its model."""
    insights, errors = [], []
    for key in sorted(data):
        prefix = wire.kind_prefix(key)
        if prefix is None:
            continue
        try:
            insights.append(wire.decode_value(key, data[key], prefix))
        except wire.DecodeError as exc:
            errors.append(str(exc))
    return wire.canonical_order(insights), errors


def test_the_generated_module_is_what_the_models_give() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "hack" / "gen_plain_insights.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_what_the_controller_writes_is_read_plain_and_equals_the_models() -> None:
    cv, nodes, pools, versions = synthetic_cluster(300, 4)
    data = configmap.encode(compute.all_insights(cv, [], nodes, pools, versions, ns(1)))
    data.update(sample_data())
    for key, value in data.items():
        prefix = wire.kind_prefix(key)
        if prefix is not None:
            assert wire.read_plain(value, wire._PLAIN_READERS[prefix]) is not None, (key, value)
    insights, errors = wire.decode_readable(data)
    expected, expected_errors = models_read(data)
    assert errors == [] and expected_errors == []
    assert all(type(i).__module__ == models.__name__ for i in expected)
    assert insights == expected
    assert all(type(i).__module__ == plain_insights.__name__ for i in insights)
    assert all(isinstance(i, kinds.NodeInsightShape) for i in insights if type(i).__name__ == "NodeStatusInsight")


# Values a mutation puts in place of another: every JSON type, and strings a model reads specially.
REPLACEMENTS = [
    None,
    True,
    False,
    0,
    -1,
    101,
    2**63,
    1.5,
    2.0,
    "",
    "x",
    "x" * 300,
    "True",
    "Unknown",
    "Progressing",
    "2024-01-01T00:00:00Z",
    "2024-01-01T00:00:00.123456789+02:00",
    "2024-01-01 00:00:00",
    "10m0s",
    "1h",
    "-5s",
    "bad-duration",
    "a.b",
    "UPPER",
    [],
    [{}],
    ["x"],
    {},
    {"type": "Updating"},
]


def paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: keys of mappings and indexes of lists."""
    found = [here]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(paths(item, (*here, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(paths(item, (*here, index)))
    return found


def mutate(doc: Any, path: tuple[Any, ...], how: str, replacement: Any) -> Any:
    if not path:
        return replacement if how == "replace" else doc
    *parent_path, last = path
    parent = doc
    for step in parent_path:
        parent = parent[step]
    if how == "replace":
        parent[last] = replacement
    elif how == "delete":
        del parent[last]
    elif how == "rename" and isinstance(last, str):
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in last)
        parent[snake if snake != last else last + "X"] = parent.pop(last)
    elif how == "add" and isinstance(parent, dict):
        parent["unknownField"] = replacement
    elif how == "duplicate" and isinstance(parent, list):
        parent.extend([parent[last]] * 12)
    return doc


def read_one(key: str, value: str) -> tuple[Any, str]:
    """(The insight or None, the error or "") as `wire.decode_readable` reads one value."""
    insights, errors = wire.decode_readable({key: value})
    return (insights[0] if insights else None), (str(errors[0]) if errors else "")


def model_one(key: str, value: str) -> tuple[Any, str]:
    prefix = wire.kind_prefix(key)
    assert prefix is not None
    try:
        return wire.decode_value(key, value, prefix), ""
    except wire.DecodeError as exc:
        return None, str(exc)


def test_every_single_mutation_of_every_field_reads_as_the_models_read_it() -> None:
    """Exhaustively, one value at a time: every place in every value the controller writes,
    replaced by each of REPLACEMENTS, deleted, renamed to snake case, given an unknown sibling,
    or (a list) made longer."""
    checked = 0
    for key, value in sorted(sample_data().items()):
        if wire.kind_prefix(key) is None:
            continue
        for path in paths(json.loads(value)):
            for how in ("replace", "delete", "rename", "add", "duplicate"):
                for replacement in REPLACEMENTS if how in ("replace", "add") else [None]:
                    mutated = json.dumps(mutate(json.loads(value), path, how, replacement))
                    got, expected = read_one(key, mutated), model_one(key, mutated)
                    assert got == expected, (key, path, how, replacement)
                    checked += 1
    assert checked > 10_000


@settings(max_examples=300)
@given(st.data())
def test_structural_mutations_read_as_the_models_read_them(data: st.DataObject) -> None:
    values = sample_data()
    keys = sorted(k for k in values if wire.kind_prefix(k) is not None)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        key = data.draw(st.sampled_from(keys), label="key")
        doc = json.loads(values[key])
        path = data.draw(st.sampled_from(paths(doc)), label="path")
        how = data.draw(st.sampled_from(["replace", "delete", "rename", "add", "duplicate"]), label="how")
        replacement = data.draw(st.sampled_from(REPLACEMENTS), label="replacement")
        values[key] = json.dumps(mutate(doc, path, how, replacement), ensure_ascii=data.draw(st.booleans()))
    insights, errors = wire.decode_readable(values)
    expected, expected_errors = models_read(values)
    assert [str(e) for e in errors] == expected_errors
    assert insights == expected


@settings(max_examples=300)
@given(st.data())
def test_publication_metadata_reads_as_the_model_reads_it(data: st.DataObject) -> None:
    paced = data.draw(st.booleans(), label="paced")
    meta = metadata.build(ns(5), "controller-1_abc", "0.1.0", 30 * 10**9, ["usc-co-a", "usc-node-b"], paced)
    doc = json.loads(metadata.encode(meta))
    if data.draw(st.booleans(), label="mutate"):
        path = data.draw(st.sampled_from(paths(doc)), label="path")
        how = data.draw(st.sampled_from(["replace", "delete", "rename", "add"]), label="how")
        doc = mutate(doc, path, how, data.draw(st.sampled_from(REPLACEMENTS), label="replacement"))
    value = json.dumps(doc)
    read = wire.read_metadata_plain(value)
    try:
        expected: Any = metadata.decode(value)
    except metadata.MetadataError:
        expected = None
    if read is not None:
        assert read == expected
    if expected is None:
        assert read is None


# The text-level gate `wire.read_plain` had before (a regular expression over every value), kept
# here as the comparison for the one that replaced it.
_OLD_GATE = re.compile(
    f":[-+.eE0-9 \t\r\n]{{{wire.VALUE_LIMITS.max_number_chars + 1}}}|\\\\u[dD][89a-fA-F]|[\ud800-\udfff]"
)


def old_read_plain(value: str, reader: Any) -> Any:
    if len(value) > wire._PLAIN_MAX_CHARS or _OLD_GATE.search(value):
        return None
    try:
        return reader(json.loads(value))
    except Exception:
        return None


# Texts put in place of a value or inserted before one: what each gate looks for, and what only
# looks like it.
TEXT_EDITS = [
    "1" * 100,
    "1" * 101,
    "-" + "1" * 100,
    "1." + "0" * 99,
    "1e" + "1" * 99,
    " " * 120 + "1",
    "\t" * 101,
    "NaN",
    "Infinity",
    "-Infinity",
    '"\\ud800"',
    '"\\uD83D\\uDE00"',
    '"\\udc00x"',
    '"\\u00e9"',
    '"\\\\ud800"',
    '"\ud800"',
    '"caf\u00e9"',
    '"\u2603"',
    "0",
    "-0",
    "1e5",
    "1.5",
]


@settings(max_examples=500)
@given(st.data())
def test_the_plain_gate_reads_what_the_old_one_read_and_more_only_as_the_models_read_it(data: st.DataObject) -> None:
    values = sample_data()
    key = data.draw(st.sampled_from(sorted(k for k in values if wire.kind_prefix(k) is not None)), label="key")
    value = values[key]
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        colons = [i for i, c in enumerate(value) if c == ":"]
        at = data.draw(st.sampled_from(colons), label="after colon") + 1
        edit = data.draw(st.sampled_from(TEXT_EDITS), label="edit")
        if data.draw(st.booleans(), label="replace a string"):
            end = value.find('"', at + 1) + 1 if value[at] == '"' else at
            value = value[:at] + edit + value[end:]
        else:
            value = value[:at] + edit + "," + value[at:] if value[at] == "{" else value[:at] + edit + value[at:]
    reader = wire._PLAIN_READERS[wire.kind_prefix(key) or ""]
    new, old = wire.read_plain(value, reader), old_read_plain(value, reader)
    if old is not None:
        assert new == old
    if new is not None:
        assert (new, "") == model_one(key, value)


# --- random insights of every type, from the models' fields -------------------------------------

# Free text as cluster objects hold it (any character but a surrogate, which UTF-8 cannot carry),
# with the characters JSON escapes and those YAML reads differently drawn often.
ODD = '"\\/\x00\x01\x1f\x7f\x85\x9f\u2028\u2029\ufeff\ufffe\uffff\n\t é✓😀'
text = st.text(st.sampled_from(ODD) | st.characters(exclude_categories=("Cs",)), max_size=40)
TIMES = st.sampled_from([ZERO_TIME, 0, -1]) | st.integers(
    parse_time("1900-01-01T00:00:00Z"), parse_time("2300-01-01T00:00:00Z")
)
DURATIONS = st.integers(-(10**16), 10**16)


def field_values(annotation: Any, meta: list[Any]) -> st.SearchStrategy[Any]:
    """Values a field of this type and these constraints takes, drawn from its declaration."""
    inner = optional_inner(annotation)
    if inner is not None:
        return st.none() | field_values(inner[0], [*meta, *inner[1]])
    bounds = constraints(meta)
    if bounds.get("kind") == "time":
        return TIMES
    if bounds.get("kind") == "duration":
        return DURATIONS
    if annotation is str and "pattern" in bounds:
        size = bounds.get("max_length", 100)
        return st.from_regex(bounds["pattern"], fullmatch=True).filter(lambda v: 0 < len(v) <= size)
    if annotation is str:
        sized = st.text(
            st.sampled_from(ODD) | st.characters(exclude_categories=("Cs",)),
            min_size=bounds.get("min_length", 0),
            max_size=min(bounds.get("max_length", 40), 40),
        )
        return st.just("") | sized if bounds.get("min_length", 0) == 0 else sized
    if annotation is int:
        return st.integers(bounds.get("ge", -(2**40)), bounds.get("le", 2**40))
    if is_enum(annotation):
        return st.sampled_from(list(annotation))
    if is_model(annotation):
        return model_values(annotation)
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return st.lists(field_values(item, []), max_size=min(bounds.get("max_length", 4), 4))
    if typing.get_origin(annotation) is dict:
        return st.dictionaries(text, st.integers(0, 2**40), max_size=3)
    raise AssertionError(f"no values for {annotation!r}: extend field_values with the models")


def model_values(model: type[BaseModel]) -> st.SearchStrategy[Any]:
    """Valid instances of the model, each field drawn from its declaration (a new field is drawn too)."""
    fields = {name: field_values(info.annotation, info.metadata) for name, info in model.model_fields.items()}
    return st.fixed_dictionaries(fields).map(lambda values: model(**values))


INSIGHT_MODELS = [getattr(models, name) for name in wire.KINDS.values()]
insights = st.one_of([model_values(m) for m in INSIGHT_MODELS])


def models_json(model: BaseModel) -> str:
    """What the models write: their JSON, compact, with the characters YAML reads differently escaped."""
    text = json.dumps(
        model.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":"), ensure_ascii=False
    )
    return writers.YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@settings(max_examples=400)
@given(insights)
def test_the_writers_give_the_models_json_byte_for_byte(model: Any) -> None:
    value = configmap.encode_value(plain_of(model))
    assert value == models_json(model)
    assert configmap.encode_value(model) == value  # a model is written by its shape too


@settings(max_examples=400)
@given(insights)
def test_the_readers_give_back_what_the_writers_wrote(model: Any) -> None:
    plain = plain_of(model)
    key = configmap.key_of(plain)
    value = configmap.encode_value(plain)
    read, errors = wire.decode_readable({key: value})
    assert errors == [] and read == [model] and type(read[0]).__module__ == plain_insights.__name__
    assert read == models_read({key: value})[0]


@settings(max_examples=400)
@given(st.data())
def test_edited_random_insights_read_as_the_models_read_them(data: st.DataObject) -> None:
    """Random insights of every type, one field replaced, deleted, renamed or added: the plain
    readers (and the model, on what they refuse) give what the models give from the text."""
    model = data.draw(insights, label="insight")
    plain = plain_of(model)
    key = configmap.key_of(plain)
    doc = json.loads(configmap.encode_value(plain))
    path = data.draw(st.sampled_from(paths(doc)), label="path")
    how = data.draw(st.sampled_from(["replace", "delete", "rename", "add", "duplicate", "keep"]), label="how")
    if how != "keep":
        doc = mutate(doc, path, how, data.draw(st.sampled_from(REPLACEMENTS), label="replacement"))
    values = {key: json.dumps(doc, ensure_ascii=data.draw(st.booleans(), label="ascii"))}
    read, errors = wire.decode_readable(values)
    expected, expected_errors = models_read(values)
    assert [str(e) for e in errors] == expected_errors
    assert read == expected


# --- the fallback: the model judges the value as decoded ----------------------------------------


def test_a_json_value_the_plain_reader_refuses_is_judged_by_the_model_without_loading_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = sample_data()
    key = next(k for k in sorted(values) if k.startswith(configmap.PREFIX_NODE))
    snake = values[key].replace('"scopeType":', '"scope_type":')  # the model takes names in snake case too
    operator = next(k for k in sorted(values) if k.startswith(configmap.PREFIX_CO))
    unknown = values[operator].replace('"name":', '"bogus":1,"name":')
    expected, expected_errors = models_read({key: snake, "usc-co-x": unknown})

    def no_second_parse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a decoded JSON value was parsed again")

    monkeypatch.setattr(safeload, "load_document", no_second_parse)
    read, errors = wire.decode_readable({key: snake, "usc-co-x": unknown})
    assert [type(i).__module__ for i in read] == [models.__name__]  # the model's, validated
    assert read == expected and [str(e) for e in errors] == expected_errors
    assert "bogus" in expected_errors[0]


def test_values_that_are_not_json_mappings_are_still_loaded_from_their_text() -> None:
    values = sample_data()
    key = next(k for k in sorted(values) if k.startswith(configmap.PREFIX_CO))
    deep = values[key][:-1] + ',"bogus":' + "[" * 200 + "]" * 200 + "}"  # past the loader's nesting bound
    edited = {
        key: json.dumps(json.loads(values[key]), indent=2).replace("{", "{ # a comment\n", 1),  # YAML
        "usc-co-deep": deep,
        "usc-co-number": values[key].replace('"name":', '"x":' + "1" * 101 + ',"name":'),
        "usc-co-list": "[1, 2]",
    }
    read, errors = wire.decode_readable(edited)
    expected, expected_errors = models_read(edited)
    assert read == expected and len(read) == 1
    assert [str(e) for e in errors] == expected_errors
    assert any("nested more than" in e for e in expected_errors), expected_errors
