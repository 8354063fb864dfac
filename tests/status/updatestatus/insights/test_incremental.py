"""Node insights recomputed incrementally (`IncrementalNodes`) equal the full computation's
(`compute.node_insights`), on oc's snapshots and on changes to them: whole updates, and pages of
a LIST assessed ahead of the update that reads them all."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from status.updatestatus.client import snapshot
from status.updatestatus.insights import compute
from status.updatestatus.insights.incremental import IncrementalNodes
from status.updatestatus.insights.objects import JSON
from testkit.checkout import EXAMPLES

CASES = sorted(EXAMPLES.glob("*-cv.yaml")) if EXAMPLES.is_dir() else []
MCO = "machineconfiguration.openshift.io/"


def incremental(nodes: IncrementalNodes, snap: snapshot.Snapshot, items: list[JSON], now: int) -> list[object]:
    assessor = compute.NodeAssessor(snap.pools, snap.machineconfig_versions(), snap.clusterversion)
    entries = nodes.update(assessor, items)
    pools, health = assessor.pools_and_health(nodes.by_pool, now)
    return [*pools, *(entry.insight for entry in entries), *health]


def full(snap: snapshot.Snapshot, items: list[JSON], now: int) -> list[object]:
    return list(compute.node_insights(items, snap.pools, snap.machineconfig_versions(), now, cv=snap.clusterversion))


def changed(items: list[JSON], index: int) -> list[JSON]:
    """A new list whose node `index` is a new object with another Machine Config Daemon reason."""
    out = list(items)
    node = copy.deepcopy(out[index])
    node["metadata"].setdefault("annotations", {})[f"{MCO}reason"] = f"changed {index}"
    node["metadata"]["annotations"][f"{MCO}state"] = "Degraded"
    out[index] = node
    return out


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_updates_equal_the_full_computation_after_each_change(path: Path) -> None:
    snap = snapshot.load(path)
    now = snap.mock_now()
    nodes = IncrementalNodes()
    items = list(snap.nodes)
    assert incremental(nodes, snap, items, now) == full(snap, items, now)
    for index in range(0, len(items), max(1, len(items) // 3)):
        items = changed(items, index)
        assert incremental(nodes, snap, items, now) == full(snap, items, now)
        assert nodes.recomputed == 1  # only the node that changed


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
@pytest.mark.parametrize("page", [1, 2, 7])
def test_pages_assessed_ahead_then_updated_equal_the_full_computation(path: Path, page: int) -> None:
    snap = snapshot.load(path)
    now = snap.mock_now()
    items = list(snap.nodes)
    nodes = IncrementalNodes()
    assessor = compute.NodeAssessor(snap.pools, snap.machineconfig_versions(), snap.clusterversion)
    for start in range(0, len(items), page):
        nodes.assess_ahead(assessor, items[start : start + page])
    assert incremental(nodes, snap, items, now) == full(snap, items, now)
    in_pools = sum(len(assessed) for assessed in nodes.by_pool.values())
    assert nodes.recomputed == len(items) - in_pools  # the nodes assessed ahead are not assessed again


def test_pages_assessed_with_other_inputs_are_assessed_again() -> None:
    snap = snapshot.load(CASES[0])
    now = snap.mock_now()
    items = list(snap.nodes)
    nodes = IncrementalNodes()
    nodes.assess_ahead(compute.NodeAssessor(snap.pools, {}, snap.clusterversion), items)  # versions not read yet
    assert incremental(nodes, snap, items, now) == full(snap, items, now)
    assert nodes.recomputed == sum(len(assessed) for assessed in nodes.by_pool.values())
