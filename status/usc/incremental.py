"""Recompute, re-encode and re-shard only what changed between two syncs of the controller.

At 5,000 nodes a full `status.insights.compute.all_insights` + `configmap.encode` +
`configmap.plan` takes seconds, while one node's change alters one node insight, its pool's
insight and perhaps a health insight. This module calls the same pure functions `all_insights` is
built from, per node, and keeps each node's assessment, insight, key and encoded value while its
inputs (the node object, the pools, the MachineConfig versions, the ClusterVersion's target) are
unchanged; other insights are re-encoded only when they differ from the previous ones; the shard
layout is `configmap.plan`'s, computed from cached per-key sizes and hashes. The results equal the
full computation's (tests/unit/test_usc_incremental.py checks that on many states).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import yaml

from status.insights import compute, configmap, controlplane, gotime
from status.insights import nodes as nodes_mod
from status.insights.models import (
    ClusterVersionStatusInsight,
    HealthInsight,
    Insight,
    MachineConfigPoolStatusInsight,
)
from status.insights.objects import JSON, conditions_by_type, history, labels, name_of


@dataclass
class _Node:
    obj: JSON
    pool: str
    assessment: nodes_mod.NodeAssessment
    insight: Insight
    key: str
    value: str
    label: tuple[str, str]  # (type, assessment) for the metrics


class IncrementalInsights:
    def __init__(self) -> None:
        self._by_id: dict[int, _Node] = {}  # id(node object) → entry; the entry holds the object
        self._by_key: dict[str, _Node] = {}
        self._inputs: tuple[object, ...] | None = None  # what every node assessment depends on
        self._others: dict[str, tuple[Insight, str]] = {}  # non-node insights: key → (insight, value)
        self._seeded: dict[str, Insight] = {}  # published by an earlier process
        self.insights: list[Insight] = []  # the last result
        self.counts: dict[tuple[str, str], int] = {}  # the last result by (type, assessment)
        self.recomputed_nodes = 0  # node assessments redone in the last update

    def seed(self, previous: list[Insight]) -> None:
        """Insights an earlier process published: their transition times carry over."""
        for insight in previous:
            self._seeded.setdefault(configmap.key_of(insight), insight)

    def update(
        self,
        cv: JSON | None,
        operators: list[JSON],
        nodes: list[JSON],
        pools: list[JSON],
        versions: Mapping[str, str],
        now: compute.Now,
        mco_image: str = "",
    ) -> dict[str, str]:
        """The ConfigMap data for this state: control plane and health first, then pools, nodes."""
        t = gotime.to_now(now)
        target, multi_arch = _node_target(cv)
        inputs = (tuple(id(p) for p in pools), dict(versions), target, multi_arch)
        if inputs != self._inputs:
            self._by_id = {}  # a pool, a MachineConfig version or the target changed: reassess all
            self._inputs = inputs
        by_pool: dict[str, list[_Node]] = {name_of(p): [] for p in pools}
        pool_by_name = {name_of(p): p for p in pools}
        by_id: dict[int, _Node] = {}
        by_key: dict[str, _Node] = {}
        self.recomputed_nodes = 0
        for node in nodes:
            entry = self._by_id.get(id(node))
            if entry is None or entry.obj is not node:
                entry = self._assess(node, pools, versions, target, multi_arch, t)
                if entry is None:
                    continue  # oc ignores nodes outside every pool
            by_id[id(node)] = entry
            by_key[entry.key] = entry
            by_pool[entry.pool].append(entry)
        self._by_id, self._by_key = by_id, by_key

        others: list[Insight] = list(compute.controlplane_insights(cv, operators, t, mco_image=mco_image))
        pool_insights: list[Insight] = []
        health: list[Insight] = []
        for name, entries in by_pool.items():
            counters = nodes_mod.PoolCounters()
            for entry in entries:
                counters.add(entry.assessment)
                if entry.assessment.is_degraded or entry.assessment.is_unavailable:
                    health.extend(nodes_mod.node_health(entry.assessment, t))
            paused = nodes_mod.paused_pool_health(pool_by_name[name], counters)
            if paused is not None:
                health.append(paused)
            pool_insights.append(nodes_mod.pool_insight(pool_by_name[name], counters))
        others.extend(health)
        others.extend(pool_insights)

        data: dict[str, str] = {}
        previous = self._others
        self._others = {}
        stamp: list[Insight] = [i for i in others if not isinstance(i, HealthInsight)]
        before = [p for p in (self._previous(configmap.key_of(i), previous) for i in stamp) if p is not None]
        compute.stamp_transition_times(stamp, before, t)
        for insight in others:
            key = configmap.key_of(insight)
            if key in data:
                raise ValueError(f"two insights share the ConfigMap key {key}")
            cached = previous.get(key)
            value = (
                cached[1] if cached is not None and cached[0] == insight else configmap.encode_value(insight)
            )
            data[key] = value
            self._others[key] = (insight, value)
        for entries in by_pool.values():
            for entry in entries:
                if entry.key in data:
                    raise ValueError(f"two insights share the ConfigMap key {entry.key}")
                data[entry.key] = entry.value
        self.insights = [*others, *(e.insight for entries in by_pool.values() for e in entries)]
        counts = count_insights(others)
        for entries in by_pool.values():
            for entry in entries:
                counts[entry.label] = counts.get(entry.label, 0) + 1
        self.counts = counts
        self._seeded = {}
        return data

    def _previous(self, key: str, others: Mapping[str, tuple[Insight, str]]) -> Insight | None:
        cached = others.get(key)
        if cached is not None:
            return cached[0]
        node = self._by_key.get(key)
        return node.insight if node is not None else self._seeded.get(key)

    def _assess(
        self,
        node: JSON,
        pools: list[JSON],
        versions: Mapping[str, str],
        target: str | None,
        multi_arch: bool,
        now: int,
    ) -> _Node | None:
        pool = nodes_mod.which_pool(labels(node), pools)
        if pool is None:
            return None
        self.recomputed_nodes += 1
        assessment = nodes_mod.assess_node(node, pool, versions, target, multi_arch)
        insight = nodes_mod.node_insight(assessment, {})
        key = configmap.key_of(insight)
        old = self._by_key.get(key)
        previous = old.insight if old is not None else self._seeded.get(key)
        compute.stamp_transition_times([insight], [previous] if previous is not None else [], now)
        value = old.value if old is not None and old.insight == insight else configmap.encode_value(insight)
        label = next(iter(count_insights([insight])))
        return _Node(node, name_of(pool), assessment, insight, key, value, label)


def count_insights(insights: Iterable[Insight]) -> dict[tuple[str, str], int]:
    """(insight type, assessment) → count. Insights without an assessment are counted by their
    Updating reason (nodes, operators) or impact level (health)."""
    counts: dict[tuple[str, str], int] = {}
    for insight in insights:
        kind = type(insight).__name__.removesuffix("StatusInsight").removesuffix("Insight")
        assessment: object = None
        if isinstance(insight, ClusterVersionStatusInsight | MachineConfigPoolStatusInsight):
            assessment = insight.assessment
        elif isinstance(insight, HealthInsight):
            assessment = insight.impact.level
        else:
            assessment = next((c.reason for c in insight.conditions if c.type == "Updating"), None)
        label = "" if assessment is None else str(getattr(assessment, "value", assessment))
        counts[(kind, label)] = counts.get((kind, label), 0) + 1
    return counts


def _node_target(cv: JSON | None) -> tuple[str | None, bool]:
    """The ClusterVersion facts every node assessment depends on (as `compute` derives them)."""
    if cv is None:
        return None, False
    hist = history(cv)
    target = str(hist[0].get("version") or "") if hist else None
    progressing = conditions_by_type(cv).get("Progressing")
    multi_arch = controlplane.is_multi_arch_migration(hist) and bool(
        progressing and progressing.get("status") == "True"
    )
    return target, multi_arch


@dataclass
class ShardPlanner:
    """`configmap.plan` with per-key sizes and shard hashes remembered between calls."""

    budget: int = configmap.SHARD_BUDGET
    max_shards: int = configmap.MAX_SHARDS
    _sizes: dict[str, tuple[str, int]] = field(default_factory=dict)  # key → (value, bytes)
    _hashes: dict[str, int] = field(default_factory=dict)

    def _size(self, key: str, value: str) -> int:
        cached = self._sizes.get(key)
        if cached is not None and cached[0] is value:
            return cached[1]
        size = len(key.encode()) + len(value.encode())
        self._sizes[key] = (value, size)
        return size

    def plan(self, data: Mapping[str, str]) -> configmap.ShardPlan:
        sizes = {k: self._size(k, v) for k, v in data.items()}
        if len(self._sizes) > 2 * len(data) + 64:
            self._sizes = {k: self._sizes[k] for k in data}
            self._hashes = {k: h for k, h in self._hashes.items() if k in data}
        total = sum(sizes.values())
        if total <= self.budget:
            return configmap.ShardPlan({configmap.CONFIGMAP: dict(data)}, 0, {configmap.CONFIGMAP: total})
        main = {k: v for k, v in data.items() if not k.startswith(configmap.PREFIX_NODE)}
        node_keys = [k for k in data if k.startswith(configmap.PREFIX_NODE)]
        hashes = [self._hash(k) for k in node_keys]
        shards = 1
        while True:
            totals = [0] * shards
            for k, h in zip(node_keys, hashes, strict=True):
                totals[h % shards] += sizes[k]
            if max(totals) <= self.budget or shards >= self.max_shards:
                break
            shards *= 2
        configmaps: dict[str, dict[str, str]] = {configmap.shard_name(i): {} for i in range(shards)}
        for k, h in zip(node_keys, hashes, strict=True):
            configmaps[configmap.shard_name(h % shards)][k] = data[k]
        names = [configmap.shard_name(i) for i in range(shards)]
        main[configmap.SHARDS_KEY] = yaml.safe_dump(names, default_flow_style=True).strip()
        result = configmap.ShardPlan({configmap.CONFIGMAP: main, **configmaps}, shards)
        result.sizes = {configmap.CONFIGMAP: configmap.data_size(main)}
        for i, size in enumerate(totals):
            result.sizes[names[i]] = size
        for name, size in result.sizes.items():
            if size > self.budget:
                result.problems.append(
                    f"ConfigMap {configmap.NAMESPACE}/{name} would hold {size} bytes of insights, over the "
                    f"budget of {self.budget} bytes (the API server rejects more than {configmap.DATA_LIMIT})"
                    + (
                        f"; already at the maximum of {self.max_shards} node shards"
                        if name != configmap.CONFIGMAP
                        else ""
                    )
                )
        return result

    def _hash(self, key: str) -> int:
        h = self._hashes.get(key)
        if h is None:
            h = self._hashes[key] = configmap.shard_of(key, 1 << 30)
        return h
