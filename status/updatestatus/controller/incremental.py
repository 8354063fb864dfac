"""Recompute and re-encode only what changed between two syncs of the controller.

At 5,000 nodes a full `status.updatestatus.insights.compute.all_insights` plus
`status.updatestatus.api.encoding.encode` takes a second, while one node's change alters one node
insight, its pool's insight and perhaps a health insight. The node insights are recomputed only for
the nodes that changed (`status.updatestatus.insights.incremental`, which `upgrade-status --watch`
uses too); this module keeps, with each node's entry, its key and encoded value while the entry
is the same, and re-encodes other insights only when they differ from the previous ones. The results
equal the full computation's (tests/status/updatestatus/controller/test_incremental.py checks that on
many states). Shard layout: `status.updatestatus.api.sharding.ShardPlanner`, given `node_health`
(which health insights travel with their node).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from cvo_py.runtime.gotext.times import to_now
from status.updatestatus.api.encoding import encode_value
from status.updatestatus.api.keys import key_of, node_key
from status.updatestatus.api.sharding import node_of
from status.updatestatus.insights import compute
from status.updatestatus.insights.incremental import IncrementalNodes, NodeAssessed
from status.updatestatus.insights.kinds import (
    ClusterVersionInsightShape,
    HealthInsightShape,
    InsightShape,
    PoolInsightShape,
)
from status.updatestatus.insights.objects import JSON
from status.updatestatus.insights.plain import Insight


@dataclass
class _Node:
    entry: NodeAssessed
    insight: Insight  # the entry's, its transition times stamped
    key: str
    value: str
    label: tuple[str, str]  # (type, assessment) for the metrics


class IncrementalInsights:
    def __init__(self) -> None:
        self._nodes = IncrementalNodes()
        self._by_entry: dict[int, _Node] = {}  # id(node entry) → what is published of it; holds the entry
        self._by_key: dict[str, _Node] = {}
        self._others: dict[str, tuple[Insight, str]] = {}  # non-node insights: key → (insight, value)
        self._seeded: dict[str, InsightShape] = {}  # published by an earlier process
        self.insights: list[Insight] = []  # the last result
        self.counts: dict[tuple[str, str], int] = {}  # the last result by (type, assessment)
        self.node_health: dict[str, str] = {}  # the last result's node health keys → node keys (sharding)
        self.recomputed_nodes = 0  # node assessments redone in the last update

    def seed(self, previous: Sequence[InsightShape]) -> None:
        """Insights an earlier process published: their transition times carry over."""
        for insight in previous:
            self._seeded.setdefault(key_of(insight), insight)

    def update(
        self,
        cv: JSON | None,
        operators: list[JSON],
        nodes: list[JSON],
        pools: list[JSON],
        versions: Mapping[str, str],
        now: compute.Now,
        mco_image: str = "",
        alerts: Sequence[Insight] = (),
    ) -> dict[str, str]:
        """The ConfigMap data for this state: control plane and health first, then pools, nodes."""
        t = to_now(now)
        assessor = compute.NodeAssessor(pools, versions, cv)
        entries = self._node_entries(assessor, nodes, t)
        pool_insights, health = assessor.pools_and_health(self._nodes.by_pool, t)
        others: list[Insight] = list(compute.controlplane_insights(cv, operators, t, mco_image=mco_image))
        others.extend(health)
        others.extend(alerts)
        others.extend(pool_insights)

        data: dict[str, str] = {}
        node_health: dict[str, str] = {}
        previous = self._others
        self._others = {}
        stamp: list[Insight] = [i for i in others if not isinstance(i, HealthInsightShape)]
        before = [p for p in (self._previous(key_of(i), previous) for i in stamp) if p is not None]
        compute.stamp_transition_times(stamp, before, t)
        for insight in others:
            key = key_of(insight)
            if key in data:
                raise ValueError(f"two insights share the ConfigMap key {key}")
            cached = previous.get(key)
            value = cached[1] if cached is not None and cached[0] == insight else encode_value(insight)
            data[key] = value
            self._others[key] = (insight, value)
            about = node_of(insight) if isinstance(insight, HealthInsightShape) else None
            if about is not None:
                node_health[key] = node_key(about)
        counts = count_insights(others)
        for entry in entries:
            if entry.key in data:
                raise ValueError(f"two insights share the ConfigMap key {entry.key}")
            data[entry.key] = entry.value
            counts[entry.label] = counts.get(entry.label, 0) + 1
        self.insights = [*others, *(e.insight for e in entries)]
        self.counts = counts
        self.node_health = node_health
        self._seeded = {}
        return data

    def _node_entries(self, assessor: compute.NodeAssessor, nodes: list[JSON], now: int) -> list[_Node]:
        """What is published of each node in a pool, in oc's order; made again only for the nodes
        assessed again (`IncrementalNodes`)."""
        by_entry: dict[int, _Node] = {}
        entries: list[_Node] = []
        for assessed in self._nodes.update(assessor, nodes):
            entry = self._by_entry.get(id(assessed))
            if entry is None or entry.entry is not assessed:
                entry = self._published(assessed, now)
            by_entry[id(assessed)] = entry
            entries.append(entry)
        self.recomputed_nodes = self._nodes.recomputed
        self._by_entry, self._by_key = by_entry, {e.key: e for e in entries}
        return entries

    def _previous(self, key: str, others: Mapping[str, tuple[Insight, str]]) -> InsightShape | None:
        cached = others.get(key)
        if cached is not None:
            return cached[0]
        node = self._by_key.get(key)
        return node.insight if node is not None else self._seeded.get(key)

    def _published(self, assessed: NodeAssessed, now: int) -> _Node:
        """What is published of a node assessed again: its insight (the entry's, this cache's own)
        with transition times carried over from the previous one, its key and value."""
        insight = assessed.insight
        key = key_of(insight)
        old = self._by_key.get(key)
        previous = old.insight if old is not None else self._seeded.get(key)
        compute.stamp_transition_times([insight], [previous] if previous is not None else [], now)
        value = old.value if old is not None and old.insight == insight else encode_value(insight)
        label = next(iter(count_insights([insight])))
        return _Node(assessed, insight, key, value, label)


def count_insights(insights: Iterable[InsightShape]) -> dict[tuple[str, str], int]:
    """(insight type, assessment) → count. Insights without an assessment are counted by their
    Updating reason (nodes, operators) or impact level (health)."""
    counts: dict[tuple[str, str], int] = {}
    for insight in insights:
        kind = type(insight).__name__.removesuffix("StatusInsight").removesuffix("Insight")
        assessment: object = None
        if isinstance(insight, ClusterVersionInsightShape | PoolInsightShape):
            assessment = insight.assessment
        elif isinstance(insight, HealthInsightShape):
            assessment = insight.impact.level
        else:
            assessment = next((c.reason for c in insight.conditions if c.type == "Updating"), None)
        label = "" if assessment is None else str(getattr(assessment, "value", assessment))
        counts[(kind, label)] = counts.get((kind, label), 0) + 1
    return counts
