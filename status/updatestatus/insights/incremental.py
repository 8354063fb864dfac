"""Node insights recomputed only for the nodes that changed, for whoever keeps the cluster's
objects in caches and computes again at each change: the controller
(`status.updatestatus.controller.incremental`, which also encodes what it publishes) and
`upgrade-status --watch` on the cluster's objects.

    nodes = IncrementalNodes()
    assessor = compute.NodeAssessor(pools, versions, cv)
    entries = nodes.update(assessor, node_objects)       # oc's order: by pool, then list order
    pools, health = assessor.pools_and_health(nodes.by_pool, now)

A node is assessed again only when its object is another one (an informer delivers a new object
for every change, and keeps the same one otherwise) or the assessor's `inputs` (the pools, the
MachineConfig versions, the ClusterVersion's target) changed; its `NodeAssessed` entry is then a
new one, so a caller may keep what it derives from an entry (an encoded value) while the entry is
the same. Node insights do not depend on the time; the health insights about nodes do, and
`pools_and_health` computes them from every assessment at the time given. The results equal the
full computation's (`compute.node_insights`; tests/status/updatestatus/insights/test_incremental.py,
and the controller's in tests/status/updatestatus/controller/test_incremental.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from status.updatestatus.insights import compute
from status.updatestatus.insights.nodes import NodeAssessment
from status.updatestatus.insights.objects import JSON
from status.updatestatus.insights.plain import NodeStatusInsight


class NodeAssessed(NamedTuple):
    obj: JSON  # the node object it was assessed from (held: its identity is the cache's key)
    assessment: NodeAssessment
    insight: NodeStatusInsight


class IncrementalNodes:
    def __init__(self) -> None:
        self._by_id: dict[int, NodeAssessed] = {}  # id(node object) → its entry, which holds the object
        self._inputs: tuple[object, ...] | None = None  # `NodeAssessor.inputs` of the cached entries
        self.by_pool: dict[str, list[NodeAssessment]] = {}  # the last update's assessments per pool
        self.recomputed = 0  # nodes assessed again in the last update

    def assess_ahead(self, assessor: compute.NodeAssessor, nodes: Iterable[JSON]) -> None:
        """Assess `nodes` for a later `update` with equal inputs, keeping every entry already made:
        the parts of a LIST assessed as they come, each node once (`update` then finds them)."""
        cached = self._cache_for(assessor)
        for node in nodes:
            entry = self._entry(assessor, cached, node)
            if entry is not None:  # one outside every pool: `update` says what it is
                cached[id(node)] = entry

    def update(self, assessor: compute.NodeAssessor, nodes: Iterable[JSON]) -> list[NodeAssessed]:
        """The entry of every node in a pool, in oc's order (by pool, then in `nodes`' order)."""
        cached = self._cache_for(assessor)
        by_pool = assessor.new_groups()
        entries: dict[str, list[NodeAssessed]] = {name: [] for name in by_pool}
        by_id: dict[int, NodeAssessed] = {}
        self.recomputed = 0
        for node in nodes:
            entry = self._entry(assessor, cached, node)
            if entry is None:
                continue  # oc ignores nodes outside every pool (or: a health insight stands for it)
            by_id[id(node)] = entry
            by_pool[entry.assessment.pool].append(entry.assessment)
            entries[entry.assessment.pool].append(entry)
        self._by_id = by_id
        self.by_pool = by_pool
        return [entry for pool in entries.values() for entry in pool]

    def _cache_for(self, assessor: compute.NodeAssessor) -> dict[int, NodeAssessed]:
        """The entries still valid for `assessor`: none when a pool, a MachineConfig version or the
        target changed (every node is assessed again)."""
        if assessor.inputs != self._inputs:
            self._by_id = {}
            self._inputs = assessor.inputs
        return self._by_id

    def _entry(
        self, assessor: compute.NodeAssessor, cached: dict[int, NodeAssessed], node: JSON
    ) -> NodeAssessed | None:
        """`node`'s cached entry, or a new one (counted in `recomputed`); None outside every pool."""
        entry = cached.get(id(node))
        if entry is None or entry.obj is not node:
            assessment = assessor.assess(node)
            if assessment is None:
                return None
            entry = NodeAssessed(node, assessment, assessor.insight(assessment))
            self.recomputed += 1
        return entry
