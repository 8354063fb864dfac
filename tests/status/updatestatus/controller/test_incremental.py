"""The controller's incremental recomputation gives exactly what `all_insights` + `encode` give.

Each case is a sequence of cluster states (the shared oc snapshots, then changes to them); after
every step the incremental ConfigMap data must equal the full computation's, carried forward
with `previous` the same way.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from cvo_py.runtime.gotext.durations import MINUTE, SECOND
from cvo_py.runtime.gotext.times import format_time
from status.updatestatus.api import configmap
from status.updatestatus.api.configmap import ShardPlanner
from status.updatestatus.client import snapshot
from status.updatestatus.controller.incremental import IncrementalInsights, count_insights
from status.updatestatus.insights import compute
from status.updatestatus.insights.inputs import node_transform
from status.updatestatus.insights.objects import JSON
from testkit.checkout import EXAMPLES

SHARED = EXAMPLES
MCO = "machineconfiguration.openshift.io/"

State = dict[str, object]
Step = Callable[[State], None]


def examples() -> list[Path]:
    if not SHARED.is_dir():
        return []
    return sorted(SHARED.glob("*-cv.yaml"))


def state_of(path: Path) -> State:
    snap = snapshot.load(path)
    return {
        "cv": snap.clusterversion,
        "operators": snap.operators,
        "nodes": snap.nodes,
        "pools": snap.pools,
        "versions": snap.machineconfig_versions(),
        "now": snap.mock_now(),
    }


def replaced(items: list[JSON], index: int, change: Callable[[JSON], None]) -> list[JSON]:
    """A new list whose item `index` is a changed copy (as an informer delivers a new object)."""
    out = list(items)
    obj = copy.deepcopy(out[index])
    change(obj)
    out[index] = obj
    return out


def node_starts_updating(state: State) -> None:
    nodes = state["nodes"]
    assert isinstance(nodes, list)

    def change(node: JSON) -> None:
        ann = node["metadata"].setdefault("annotations", {})
        ann[MCO + "state"] = "Working"
        ann[MCO + "desiredConfig"] = ann.get(MCO + "desiredConfig", "") + "-next"

    state["nodes"] = replaced(nodes, len(nodes) - 1, change)


def node_goes_away(state: State) -> None:
    nodes = state["nodes"]
    assert isinstance(nodes, list)
    state["nodes"] = nodes[1:]


def node_unschedulable(state: State) -> None:
    nodes = state["nodes"]
    assert isinstance(nodes, list)
    state["nodes"] = replaced(nodes, 0, lambda n: n.setdefault("spec", {}).update(unschedulable=True))


def pool_paused(state: State) -> None:
    pools = state["pools"]
    assert isinstance(pools, list)
    state["pools"] = replaced(pools, len(pools) - 1, lambda p: p.setdefault("spec", {}).update(paused=True))


def machineconfig_version_changes(state: State) -> None:
    versions = dict(state["versions"])  # type: ignore[call-overload]
    if versions:
        first = sorted(versions)[0]
        versions[first] = versions[first] + "-rebuilt"
    state["versions"] = versions


def time_passes(state: State) -> None:
    now = state["now"]
    assert isinstance(now, int)
    state["now"] = now + 45 * MINUTE


def update_completes(state: State) -> None:
    cv = copy.deepcopy(state["cv"])
    assert isinstance(cv, dict)
    hist = cv["status"]["history"]
    hist[0]["state"] = "Completed"
    hist[0]["completionTime"] = format_time(state["now"])  # type: ignore[arg-type]
    for cond in cv["status"]["conditions"]:
        if cond["type"] == "Progressing":
            cond["status"] = "False"
    state["cv"] = cv


def nothing(state: State) -> None:
    pass


STEPS: list[Step] = [
    nothing,
    node_starts_updating,
    node_unschedulable,
    time_passes,
    pool_paused,
    machineconfig_version_changes,
    node_goes_away,
    update_completes,
    nothing,
]


@pytest.mark.parametrize("example", examples(), ids=lambda p: p.name.removesuffix("-cv.yaml"))
def test_incremental_equals_full_computation(example: Path) -> None:
    state = state_of(example)
    incremental = IncrementalInsights()
    previous: list[object] | None = []
    for step in STEPS:
        step(state)
        full = compute.all_insights(
            state["cv"],
            state["operators"],
            state["nodes"],
            state["pools"],  # type: ignore[arg-type]
            state["versions"],
            state["now"],
            previous=previous,  # type: ignore[arg-type]
        )
        previous = list(full)
        want = configmap.encode(full)
        got = incremental.update(
            state["cv"],
            state["operators"],
            state["nodes"],
            state["pools"],  # type: ignore[arg-type]
            state["versions"],
            state["now"],  # type: ignore[arg-type]
        )
        assert got == want, f"{example.name} after {step.__name__}"
        assert incremental.node_health == configmap.node_health_keys(full), step.__name__


def test_examples_are_present() -> None:
    if not examples():
        pytest.skip(f"../shared/oc-examples not found at {SHARED}")
    assert len(examples()) >= 5


@pytest.mark.parametrize("example", examples(), ids=lambda p: p.name.removesuffix("-cv.yaml"))
def test_the_controllers_node_cache_keeps_what_insights_read(example: Path) -> None:
    # The controller stores Nodes through `node_transform`: insights must not change.
    state = state_of(example)
    args = (state["cv"], state["operators"])
    rest = (state["pools"], state["versions"], state["now"])
    full = configmap.encode(compute.all_insights(*args, state["nodes"], *rest))  # type: ignore[arg-type]
    slim = [node_transform(n) for n in state["nodes"]]  # type: ignore[attr-defined]
    assert configmap.encode(compute.all_insights(*args, slim, *rest)) == full  # type: ignore[arg-type]


def test_only_changed_nodes_are_recomputed() -> None:
    if not examples():
        pytest.skip(f"../shared/oc-examples not found at {SHARED}")
    state = state_of(examples()[0])
    incremental = IncrementalInsights()

    def args() -> tuple[object, ...]:
        keys = ("cv", "operators", "nodes", "pools", "versions", "now")
        return tuple(state[k] for k in keys)

    incremental.update(*args())  # type: ignore[arg-type]
    assert incremental.recomputed_nodes == len(state["nodes"])  # type: ignore[arg-type]
    incremental.update(*args())  # type: ignore[arg-type]
    assert incremental.recomputed_nodes == 0
    node_starts_updating(state)
    incremental.update(*args())  # type: ignore[arg-type]
    assert incremental.recomputed_nodes == 1
    pool_paused(state)
    incremental.update(*args())  # type: ignore[arg-type]
    assert incremental.recomputed_nodes == len(state["nodes"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("budget", "max_shards"), [(10_000_000, 64), (5_000, 64), (2_000, 64), (700, 64), (700, 2), (100, 64)]
)
def test_shard_planner_equals_configmap_plan(budget: int, max_shards: int) -> None:
    data = {"usc-cv-version": "c" * 300, "usc-co-dns": "o" * 120, "usc-health-mcp-worker-paused": "p" * 80}
    data.update({f"usc-node-node-{i:03d}": ("n" * (50 + i % 40)) for i in range(60)})
    node_health = {f"usc-health-node-node-{i:03d}-x": f"usc-node-node-{i:03d}" for i in range(0, 60, 7)}
    data.update({key: "h" * 200 for key in node_health})
    planner = ShardPlanner(budget=budget, max_shards=max_shards)
    for round_ in range(3):
        want = configmap.plan(data, budget=budget, max_shards=max_shards, node_health=node_health)
        got = planner.plan(data, node_health)
        assert (got.configmaps, got.shards, got.sizes, got.problems) == (
            want.configmaps,
            want.shards,
            want.sizes,
            want.problems,
        ), f"budget {budget}, round {round_}"
        # One node's value changes, one node goes: sizes are remembered only for unchanged values.
        data[f"usc-node-node-{round_:03d}"] = "x" * 90
        data.pop(f"usc-node-node-{59 - round_:03d}")


def test_counts_by_type_and_assessment() -> None:
    if not examples():
        pytest.skip(f"../shared/oc-examples not found at {SHARED}")
    state = state_of(SHARED / "4.14.1-workers-started-updating-multiple-pools-cv.yaml")
    incremental = IncrementalInsights()
    incremental.update(
        state["cv"],
        state["operators"],
        state["nodes"],
        state["pools"],  # type: ignore[arg-type]
        state["versions"],
        state["now"],  # type: ignore[arg-type]
    )
    counts = incremental.counts
    assert counts == count_insights(incremental.insights)
    assert counts[("ClusterVersion", "Progressing")] == 1
    assert sum(n for (kind, _), n in counts.items() if kind == "Node") == len(state["nodes"])  # type: ignore[arg-type]
    assert sum(n for (kind, _), n in counts.items() if kind == "MachineConfigPool") == len(state["pools"])  # type: ignore[arg-type]
    assert all(label for kind, label in counts if kind in ("Node", "ClusterOperator", "Health"))


@pytest.mark.parametrize("example", examples(), ids=lambda p: p.name.removesuffix("-cv.yaml"))
def test_an_unchanged_cluster_gives_unchanged_data_as_time_passes(example: Path) -> None:
    # Resyncs of a static cluster must not rewrite the ConfigMap: no value may follow the clock
    # (only crossing a threshold, such as an operator unavailable for 5 minutes, changes one).
    state = state_of(example)
    keys = ("cv", "operators", "nodes", "pools", "versions")
    incremental = IncrementalInsights()
    first = incremental.update(*(state[k] for k in keys), state["now"])  # type: ignore[arg-type]
    for later in (SECOND, 30 * SECOND):
        now = state["now"] + later  # type: ignore[operator]
        again = incremental.update(*(state[k] for k in keys), now)  # type: ignore[arg-type]
        changed = sorted(k for k in first if again.get(k) != first[k])
        assert again == first, f"{example.name}: changed {changed}"
