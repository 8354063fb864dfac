"""The plain readers (generated from the models, read without pydantic) against the models, their
oracle: on what the controller writes and on structural mutations of it, a client reading with
`wire.decode_readable` gets exactly what the models give, insights and errors alike."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from status.updatestatus.api import configmap, metadata, wire
from status.updatestatus.insights import compute, kinds, models
from status.updatestatus.insights import plain as plain_insights
from testkit.checkout import REPO
from testkit.objects.insight_objects import ns, sample_insights
from testkit.objects.synthetic import synthetic_cluster


def sample_data() -> dict[str, str]:
    """Every kind of insight and field the controller writes, encoded as it writes them."""
    return configmap.encode(sample_insights())


def models_read(data: dict[str, str]) -> tuple[list[Any], list[str]]:
    """The oracle: every value read alone by the bounded loader and its model."""
    insights, errors = wire.decode_readable(data, plain=False)
    return insights, [str(e) for e in errors]


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
    "1" * 100, "1" * 101, "-" + "1" * 100, "1." + "0" * 99, "1e" + "1" * 99, " " * 120 + "1", "\t" * 101,
    "NaN", "Infinity", "-Infinity", '"\\ud800"', '"\\uD83D\\uDE00"', '"\\udc00x"', '"\\u00e9"', '"\\\\ud800"',
    '"\ud800"', '"caf\u00e9"', '"\u2603"', "0", "-0", "1e5", "1.5",
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
