"""Property tests over the ConfigMap decoder, the insight functions and the renderer: for any input only
the documented errors escape, and rendered output never holds a raw control or bidi character."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cvo_py.runtime.gotext.times import parse_time
from status.updatestatus.api import configmap
from status.updatestatus.client import snapshot
from status.updatestatus.client.render import RenderError, render, warning_text
from status.updatestatus.insights import compute
from status.updatestatus.insights.objects import InputError
from testkit.objects.insight_objects import VERSIONS, clusterversion, node, operator, pool

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
NOW = parse_time("2024-01-01T11:00:00Z")
SPECIAL = st.sampled_from(["\x1b", "\x07", "\r", "\n", "\t", "\x00", "\x85", "\u202e", "\u2066", "\u2028", '"', "é"])
hostile_text = st.lists(st.text(max_size=5) | SPECIAL, max_size=6).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(hostile_text, children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200)
@given(
    st.dictionaries(
        st.sampled_from(["usc-cv-", "usc-co-", "usc-mcp-", "usc-node-", "usc-health-", "usc-shards", "other"]).flatmap(
            lambda p: st.text(max_size=5).map(lambda s: p + s)
        ),
        st.text(max_size=200) | json_values.map(str),
        max_size=6,
    )
)
def test_configmap_decoder_reads_what_it_can_and_names_the_rest(data: dict[str, str]) -> None:
    insights, errors = configmap.decode_readable(data)
    assert len(insights) + len(errors) <= len(data)
    for exc in errors:
        assert isinstance(exc, configmap.DecodeError)
        assert str(exc).startswith("ConfigMap key ") and "\n" not in str(exc)
    assert not RAW.search(warning_text([str(e) for e in errors]))


def _objects(text: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    cv = clusterversion(failing="True", failing_reason="R" + text, failing_message="m" + text)
    cv["status"]["history"][0]["version"] = "4.14.1" + text
    ops = [
        operator("a" + text, version="4.14.0", progressing="True", reason="r" + text, message=text + "\n" + text),
        operator("b", degraded="True"),
    ]
    nodes = [node("w" + text, state="Degraded", extra_annotations={"machineconfiguration.openshift.io/reason": text})]
    nodes.append(node("m" + text, role="master"))
    return cv, ops, nodes, [pool("master"), pool("worker")]


@settings(max_examples=150)
@given(hostile_text)
def test_rendered_output_escapes_every_displayed_string(text: str) -> None:
    cv, ops, nodes, pools = _objects(text)
    insights = compute.all_insights(cv, ops, nodes, pools, VERSIONS, NOW)
    for details in ("none", "all"):
        out = render(insights, NOW, details)
        assert not RAW.search(out), out
    # and what the controller publishes reads back the same
    assert configmap.decode(configmap.encode(insights)) == configmap.canonical_order(insights)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


@settings(max_examples=300)
@given(st.data())
def test_insight_functions_raise_only_input_errors_for_any_field_value(data: st.DataObject) -> None:
    cv, ops, nodes, pools = copy.deepcopy(_objects("x"))
    objects = {"cv": cv, "ops": ops, "nodes": nodes, "pools": pools}
    for _ in range(data.draw(st.integers(1, 3))):
        which = data.draw(st.sampled_from(sorted(objects)))
        paths = [p for p in _paths(objects[which]) if p]
        path = data.draw(st.sampled_from(paths))
        target: Any = objects[which]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = data.draw(json_values)
    try:
        # what every reader checks first (the API server's schema, for live objects)
        for kind, objs in (
            ("ClusterVersion", [cv]),
            ("ClusterOperator", ops),
            ("Node", nodes),
            ("MachineConfigPool", pools),
        ):
            for obj in objs:
                if not isinstance(obj, dict):
                    return  # a list item that is no object: the readers' _items() refuses it
                snapshot.check_shape(Path("f"), kind, obj)
    except snapshot.SnapshotError as exc:
        assert "\n" not in str(exc)
        return
    try:
        insights = compute.all_insights(cv, ops, nodes, pools, VERSIONS, NOW)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    for details in ("none", "all"):
        try:
            out = render(insights, NOW, details)
        except RenderError:
            continue
        assert not RAW.search(out), out
