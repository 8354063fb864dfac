"""The renderer with the fast tab writer prints exactly what it prints with the plain port of Go's
writer (`testkit.oracles.gotabwriter`), on random insights whose node, operator and health
messages span several lines and hold tabs, carriage returns, wide and combining characters."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cvo_py.runtime.gotext.times import parse_time
from status.updatestatus.client.render import NOT_UPDATING, RenderError, controlplane, health, render, shows_update
from status.updatestatus.client.render import nodes as node_tables
from status.updatestatus.client.render import pools as pool_table
from status.updatestatus.insights import compute
from testkit.objects.insight_objects import VERSIONS, at, clusterversion, node, operator, pool
from testkit.oracles.gotabwriter import ReferenceTabWriter

NOW = parse_time(at(45))
PIECES = ["", "a", "node", "failed to drain", "日本語", "e\u0301", "👍🏽", "\x1b[31m", "\u202e", "x" * 25]
CONTROLS = ["\n", "\n", "\t", "\r", "\v", "\f", "\n\n"]
messages = st.lists(st.sampled_from(PIECES) | st.sampled_from(CONTROLS), max_size=8).map("".join)
names = st.lists(st.sampled_from(["w", "worker-", "节点", "n\u0303", "long-node-name-"]), min_size=1, max_size=3).map(
    "".join
)
STATES = ["Done", "Working", "Degraded", "Unavailable"]


@st.composite
def cluster(draw: st.DrawFn) -> tuple[Any, ...]:
    cv = clusterversion(progressing=draw(st.sampled_from(["True", "True", "False", None])))
    ops = [
        operator(f"op-{i}", version=draw(st.sampled_from(["4.14.0", "4.14.1"])),
                 progressing=draw(st.sampled_from(["True", "False"])), reason=draw(messages),
                 message=draw(messages))
        for i in range(draw(st.integers(1, 4)))
    ]  # fmt: skip
    nodes = []
    for role in ("master", "worker"):
        for i, name in enumerate(draw(st.lists(names, max_size=13, unique=True))):
            nodes.append(
                node(f"{role}-{name}-{i}", role=role, desired=f"rendered-{role}-new",
                     current=draw(st.sampled_from([f"rendered-{role}-old", f"rendered-{role}-new"])),
                     state=draw(st.sampled_from(STATES)), reason=draw(messages),
                     ready=draw(st.sampled_from(["True", "True", "False"])), ready_ltt=at(-60))
            )  # fmt: skip
    alerts = [
        {
            "labels": {"alertname": f"Alert{i}", "severity": draw(st.sampled_from(["warning", "critical"]))},
            "annotations": {"summary": draw(messages), "description": draw(messages)},
            "state": "firing",
            "activeAt": at(draw(st.integers(1, 40))),
        }
        for i in range(draw(st.integers(0, 4)))
    ]
    return cv, ops, nodes, [pool("master"), pool("worker")], {"status": "success", "data": {"alerts": alerts}}


@given(cluster(), st.sampled_from(["none", "all", "nodes", "health", "operators"]))
def test_the_fast_writer_renders_what_the_reference_writer_renders(objects: tuple[Any, ...], details: str) -> None:
    cv, ops, nodes, pools, alerts = objects
    insights = compute.all_insights(cv, ops, nodes, pools, VERSIONS, NOW, alerts=alerts)
    fast = _rendered(insights, details)
    with pytest.MonkeyPatch.context() as patch:
        for writer in (controlplane, health, node_tables, pool_table):  # every module that writes a table
            patch.setattr(writer, "TabWriter", ReferenceTabWriter)
        reference = _rendered(insights, details)
    assert fast == reference


def _rendered(insights: Any, details: str) -> str:
    """The text, or the error the renderer stops with (a ClusterVersion without Progressing)."""
    try:
        return render(insights, NOW, details)
    except RenderError as exc:
        return f"error: {exc}"


@given(cluster())
def test_whether_an_update_is_shown_is_decided_as_the_renderer_decides_it(objects: tuple[Any, ...]) -> None:
    """`shows_update` (whether the alerts are read) against what `render` prints: the update, the
    line that the cluster is not updating, or an error (no Progressing condition)."""
    cv, ops, nodes, pools, _ = objects
    insights = compute.all_insights(cv, ops, nodes, pools, VERSIONS, NOW)
    try:
        shown = render(insights, NOW, "none") != NOT_UPDATING
    except RenderError:
        shown = False
    assert shows_update(insights) is shown
