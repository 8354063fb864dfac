"""One object that cannot be assessed becomes a health insight naming it; every other insight is
computed as if it were absent. The controller's incremental path and the snapshot path agree."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from cvo_py.cli import main as cli
from status.updatestatus.api import configmap
from status.updatestatus.controller.incremental import IncrementalInsights
from status.updatestatus.insights import compute
from status.updatestatus.insights.kinds import HealthInsightShape, ImpactLevel, ImpactType
from status.updatestatus.insights.plain import HealthInsight, Insight
from testkit.objects.insight_objects import VERSIONS, clusterversion, node, ns, operator, pool, write_snapshot

BAD_SELECTOR = {"matchExpressions": [{"key": "node-role.kubernetes.io/infra", "operator": "Near"}]}


def bad_pool() -> dict[str, Any]:
    p = pool("infra")
    p["spec"]["nodeSelector"] = BAD_SELECTOR
    return p


def faults_in(insights: list[Insight]) -> list[HealthInsight]:
    return [i for i in insights if isinstance(i, HealthInsightShape) and i.uid.startswith("unassessable-")]


def without_faults(insights: list[Insight]) -> list[Insight]:
    return [i for i in insights if not (isinstance(i, HealthInsightShape) and i.uid.startswith("unassessable-"))]


def compute_all(cv: Any, operators: Any, nodes: Any, pools: Any) -> list[Insight]:
    return compute.all_insights(cv, operators, nodes, pools, VERSIONS, ns(5))


def test_a_pool_with_an_invalid_selector_is_a_health_insight_and_the_rest_is_computed() -> None:
    cv, ops = clusterversion(), [operator("a"), operator("b")]
    nodes = [node("m1", role="master"), node("w1"), node("w2", state="Working", desired="rendered-worker-new")]
    good_pools = [pool("master"), pool("worker")]
    got = compute_all(cv, ops, nodes, [*good_pools, bad_pool()])
    want = compute_all(cv, ops, nodes, good_pools)
    assert without_faults(got) == want
    [fault] = faults_in(got)
    assert fault.scope.resources[0].resource == "machineconfigpools"
    assert fault.scope.resources[0].name == "infra"
    assert fault.impact.level == ImpactLevel.ERROR and fault.impact.type == ImpactType.UNKNOWN
    assert "MachineConfigPool infra cannot be assessed" in fault.impact.summary
    assert "failed to get label selector from the pool: infra" in fault.impact.description


@pytest.mark.parametrize(
    "breakage",
    [
        lambda n: n["status"]["conditions"][0].update(lastTransitionTime="yesterday"),  # odd timestamp
        lambda n: n["status"].update(conditions="Ready"),  # wrong type
        lambda n: n["metadata"].update(annotations=["not", "a", "map"]),  # bad annotations
    ],
    ids=["timestamp", "conditions", "annotations"],
)
def test_a_node_that_cannot_be_assessed_is_a_health_insight(breakage: Any) -> None:
    cv, ops, pools = clusterversion(), [operator("a")], [pool("master"), pool("worker")]
    good = [node("m1", role="master"), node("w1")]
    bad = node("w-bad")
    breakage(bad)
    got = compute_all(cv, ops, [*good, bad], pools)
    assert without_faults(got) == compute_all(cv, ops, good, pools)
    [fault] = faults_in(got)
    assert fault.scope.resources[0].resource == "nodes" and fault.scope.resources[0].name == "w-bad"
    assert fault.impact.description.startswith("The update status controller could not assess Node w-bad: ")


def test_an_operator_that_cannot_be_assessed_is_a_health_insight() -> None:
    cv, pools, nodes = clusterversion(), [pool("master"), pool("worker")], [node("w1")]
    bad = operator("broken")
    bad["status"]["conditions"][0]["lastTransitionTime"] = "not a time"
    good = [operator("a"), operator("b")]
    got = compute_all(cv, [good[0], bad, good[1]], nodes, pools)
    assert without_faults(got) == compute_all(cv, good, nodes, pools)
    [fault] = faults_in(got)
    assert fault.scope.resources[0].resource == "clusteroperators" and fault.scope.resources[0].name == "broken"


def test_the_controllers_incremental_path_gives_the_same_fault_and_keeps_updating() -> None:
    cv, ops = clusterversion(), [operator("a")]
    pools = [pool("master"), pool("worker"), bad_pool()]
    nodes = [node("m1", role="master"), node("w1")]
    inc = IncrementalInsights()
    data = inc.update(cv, ops, nodes, pools, VERSIONS, ns(5))
    full = configmap.encode(compute.all_insights(cv, ops, nodes, pools, VERSIONS, ns(5)))
    assert set(data) == set(full)  # values differ only by the transition times the controller stamps
    [fault_key] = [k for k in data if k.startswith("usc-health-unassessable-")]
    assert data[fault_key] == full[fault_key]
    # an unrelated node changes: its insight is updated although the bad pool is still there
    changed = copy.deepcopy(nodes[1])
    changed["metadata"]["annotations"]["machineconfiguration.openshift.io/state"] = "Working"
    changed["metadata"]["annotations"]["machineconfiguration.openshift.io/desiredConfig"] = "rendered-worker-new"
    again = inc.update(cv, ops, [nodes[0], changed], pools, VERSIONS, ns(6))
    assert again[configmap.node_key("w1")] != data[configmap.node_key("w1")]
    assert "Updating" in again[configmap.node_key("w1")]


def test_offline_gives_the_same_health_insight_as_live(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = {"apiVersion": "v1", "kind": "List", "items": [pool("master"), pool("worker"), bad_pool()]}
    cv_path = write_snapshot(tmp_path, **{"-mcp.yaml": items})
    code = cli.main(["upgrade-status", "--mock-clusterversion", str(cv_path), "--details", "health"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Message: MachineConfigPool infra cannot be assessed; insights about it are missing" in out
    assert "failed to get label selector from the pool: infra" in out
