"""Property: whatever the cluster, its must-gather (archive or list files) and its Insights archive
print what its snapshot prints for the same objects at the same time."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cvo_py.cli import main as cli
from cvo_py.runtime.gotext.times import format_time, parse_time
from status.updatestatus.client.render import render
from status.updatestatus.client.snapshot import Snapshot
from testkit.objects import dumps as conv
from testkit.objects.insight_objects import at, clusterversion, machineconfigs, node, operator, pool

GATHERED = parse_time("2024-01-01T11:00:00Z")

node_st = st.builds(
    lambda role, current, desired, state, ready, ready_min, unschedulable, reason: node(
        "",
        role=role,
        current=f"rendered-{role}-{current}",
        desired=f"rendered-{role}-{desired}",
        state=state,
        ready=ready,
        ready_ltt=at(ready_min),
        unschedulable=unschedulable,
        reason=reason,
    ),
    st.sampled_from(["master", "worker", "infra"]),
    st.sampled_from(["old", "new", "gone"]),
    st.sampled_from(["old", "new"]),
    st.sampled_from(["Done", "Working", "Rebooting", "Degraded", "Unreconcilable", ""]),
    st.sampled_from(["True", "False", "Unknown"]),
    st.integers(-30, 60),
    st.booleans(),
    st.sampled_from(["", "drain failed", "line one\nline two"]),
)

operator_st = st.builds(
    lambda version, progressing, available, degraded, minutes: operator(
        "", version=version, progressing=progressing, available=available, degraded=degraded, ltt=at(minutes)
    ),
    st.sampled_from(["4.14.0", "4.14.1"]),
    st.sampled_from(["True", "False", None]),
    st.sampled_from(["True", "False", None]),
    st.sampled_from(["True", "False"]),
    st.integers(-60, 50),
)


@st.composite
def clusters(draw: Any) -> Snapshot:
    nodes = draw(st.lists(node_st, min_size=0, max_size=30))
    for i, n in enumerate(nodes):
        n["metadata"]["name"] = f"node-{draw(st.integers(0, 999)):03d}-{i}"
    operators = draw(st.lists(operator_st, min_size=1, max_size=8))
    for i, o in enumerate(operators):
        o["metadata"]["name"] = f"operator-{i}"
    pools = [pool("master"), pool("worker", paused=draw(st.booleans())), pool("infra", paused=draw(st.booleans()))]
    progressing = draw(st.sampled_from(["True", "False"]))
    failing = draw(st.sampled_from(["True", "False", None]))
    cv = clusterversion(progressing=progressing, failing=failing, failing_reason="R", failing_message="failing")
    return Snapshot(
        name="x",
        clusterversion=cv,
        operators=operators,
        machineconfigs=machineconfigs(),
        pools=pools,
        nodes=nodes,
        alerts=None,
        mco_deployment=None,
    )


def status_after_preamble(path: Path, details: str, capsys: pytest.CaptureFixture[str]) -> str:
    code = cli.main(["upgrade-status", "--from", str(path), "--details", details])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith(f"Assessed at {format_time(GATHERED, nanos=False)}")
    for marker in ("= Control Plane =", "The cluster is not updating."):
        if marker in out:
            return out[out.index(marker) :]
    raise AssertionError(out)


# capsys is read out after each example; the profile's suppressions (tests/conftest.py) are kept
@settings(
    max_examples=40,
    suppress_health_check=[*settings.default.suppress_health_check, HealthCheck.function_scoped_fixture],
)
@given(snap=clusters(), details=st.sampled_from(["none", "all"]))
def test_a_dump_prints_what_its_snapshot_prints(
    snap: Snapshot, details: str, capsys: pytest.CaptureFixture[str]
) -> None:
    insights, now = conv.by_name(snap).insights(GATHERED)
    want = render(insights, now, details)
    in_order, now = snap.insights(GATHERED)
    want_in_order = render(in_order, now, details)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        archive = root / "must-gather.tar.gz"
        archive.write_bytes(conv.tar_bytes(conv.must_gather_files(snap, GATHERED), prefix="must-gather.local.1/"))
        assert status_after_preamble(archive, details, capsys) == want
        lists = conv.write_tree(conv.must_gather_files(snap, GATHERED, lists=True), root / "lists")
        assert status_after_preamble(lists, details, capsys) == want_in_order
        insights_dir = conv.write_tree(conv.insights_files(snap), root / "insights-2024-01-01-110000")
        assert status_after_preamble(insights_dir, details, capsys) == want
