"""Sharding the ConfigMap API at scale: the one rule that places a node's insights in a shard, the
planner that fills ConfigMaps to their budget, and the order to write them in when the layout
changes (see `status.updatestatus.api.configmap` for the whole format)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from status.updatestatus.api.keys import key_of, node_key
from status.updatestatus.api.names import CONFIGMAP, MAX_SHARDS, NAMESPACE, SHARD_PREFIX, SHARDS_KEY
from status.updatestatus.api.wire import DATA_LIMIT, PREFIX_CO, PREFIX_CV, PREFIX_HEALTH, PREFIX_MCP, PREFIX_NODE
from status.updatestatus.insights.kinds import HealthInsightShape, InsightShape

SHARD_BUDGET = 256 * 1024  # what a ConfigMap is filled to (see status.updatestatus.api.configmap)


def data_size(data: Mapping[str, str]) -> int:
    """Bytes the API server counts against the 1 MiB limit: keys plus values."""
    return sum(len(k.encode()) + len(v.encode()) for k, v in data.items())


@dataclass
class ShardPlan:
    configmaps: dict[str, dict[str, str]]  # ConfigMap name → its owned data
    shards: int  # 0: everything in the main ConfigMap
    sizes: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # non-empty: a limit would be crossed

    @property
    def ok(self) -> bool:
        return not self.problems


# What a ConfigMap that cannot hold every insight keeps longest (rank 0) and leaves out first (the
# highest rank): the shard list, the control plane, pools and nodes come before any health
# insight; among health insights, those about the control plane and pools (and the objects that
# cannot be assessed) before those about one node, and the alerts' last: a noisy Prometheus can
# only crowd out other alerts. The kind of a health insight is the first word of its uid.
_NODE_RANK, _HEALTH_RANK, _NODE_HEALTH_RANK, _ALERT_RANK, _OTHER_RANK = 4, 5, 6, 7, 8
_OMISSION_RANKS = ((SHARDS_KEY, 0), (PREFIX_CV, 1), (PREFIX_CO, 2), (PREFIX_MCP, 3))
_HEALTH_KINDS = len(PREFIX_HEALTH)


def omission_rank(key: str) -> int:
    """How late `key` is left out when its ConfigMap cannot hold everything (see above)."""
    if key.startswith(PREFIX_NODE):  # first: most keys are nodes'
        return _NODE_RANK
    if key.startswith(PREFIX_HEALTH):
        if key.startswith("alert-", _HEALTH_KINDS):
            return _ALERT_RANK
        return _NODE_HEALTH_RANK if key.startswith("node-", _HEALTH_KINDS) else _HEALTH_RANK
    for prefix, rank in _OMISSION_RANKS:
        if key.startswith(prefix):
            return rank
    return _OTHER_RANK


def by_importance(data: Mapping[str, str]) -> dict[str, str]:
    """`data` with the keys kept longest first (`omission_rank`), in their order within a rank."""
    buckets: list[list[str]] = [[] for _ in range(_OTHER_RANK + 1)]
    for key in data:
        buckets[omission_rank(key)].append(key)
    return {key: data[key] for bucket in buckets for key in bucket}


def key_hash(key: str) -> int:
    """The hash that places a node's key (and its health insights) in a shard."""
    return zlib.crc32(key.encode())


def shard_index(hashed: int, shards: int) -> int:
    """The sharding rule: a key's shard is its hash mod the shard count (a power of two, so halving
    or doubling the count moves keys only between a shard and its twin; see `layout_write_order`)."""
    return hashed % shards


def shard_of(key: str, shards: int) -> int:
    """The shard of a node's key among `shards`; `ShardPlanner` places every key by this rule."""
    return shard_index(key_hash(key), shards)


def shard_name(index: int) -> str:
    return f"{SHARD_PREFIX}{index}"


def shard_names_allowed() -> list[str]:
    """Every ConfigMap name of the API: the main ConfigMap and all `MAX_SHARDS` possible shards."""
    return [CONFIGMAP, *(shard_name(i) for i in range(MAX_SHARDS))]


def plan(
    data: Mapping[str, str],
    budget: int = SHARD_BUDGET,
    max_shards: int = MAX_SHARDS,
    *,
    node_health: Mapping[str, str] | None = None,
) -> ShardPlan:
    """Spread encoded insights over the main ConfigMap and, if needed, node shards (see above).

    `node_health` maps the key of each node health insight to its node's key (`node_health_keys`);
    those travel with their node into the shards, every other health insight stays in the main
    ConfigMap.
    """
    return ShardPlanner(budget, max_shards).plan(data, node_health)


def layout_write_order(in_use: list[str], listed: list[str], stale: list[str]) -> list[str]:
    """The order to write the ConfigMaps in when the shard layout changes, so that a client reading
    between any two writes (the main ConfigMap's `usc-shards`, then the shards it names) finds every
    insight both layouts hold: a ConfigMap that gains keys is written before the main ConfigMap
    points clients at it, one that loses keys after the main ConfigMap stops pointing there.

    `in_use`: the shards of the new layout; `listed`: those of the old one; `stale`: old shards no
    longer used. A key's shard is its hash mod S, so with more shards keys move from the kept
    shards to new ones; with fewer, from the stale shards (or from the main ConfigMap) to the kept
    ones. The main ConfigMap is `CONFIGMAP`.
    """
    new = [name for name in in_use if name not in listed]
    kept = [name for name in in_use if name in listed]
    if new:  # more shards (or the first ones): the new gain, the kept and the main ConfigMap lose
        return [*new, CONFIGMAP, *kept, *stale]
    return [*kept, CONFIGMAP, *stale]  # fewer shards (or none): the kept and the main ConfigMap gain


def node_of(insight: HealthInsightShape) -> str | None:
    """The node a health insight is about when its scope is that one node, else None."""
    resources = insight.scope.resources
    if len(resources) == 1 and resources[0].resource == "nodes" and not resources[0].group:
        return resources[0].name
    return None


def node_health_keys(insights: Iterable[InsightShape]) -> dict[str, str]:
    """Key of each node health insight → the key of its node's insight (what `plan` takes)."""
    out: dict[str, str] = {}
    for insight in insights:
        if isinstance(insight, HealthInsightShape):
            node = node_of(insight)
            if node is not None:
                out[key_of(insight)] = node_key(node)
    return out


class ShardPlanner:
    """`plan()` that remembers per-key sizes and hashes between calls (a controller replans on every
    change; at 5,000 nodes re-measuring every value would cost more than the change itself)."""

    def __init__(self, budget: int = SHARD_BUDGET, max_shards: int = MAX_SHARDS) -> None:
        if max_shards < 1 or max_shards & (max_shards - 1):
            raise ValueError(f"max_shards must be a power of two, not {max_shards}")
        self.budget = budget
        self.max_shards = max_shards
        self._sizes: dict[str, tuple[str, int]] = {}  # key → (value, bytes of key + value)
        self._hashes: dict[str, int] = {}  # key → crc32 (its shard is hash mod S)
        self._ranks: dict[str, int] = {}  # key → omission_rank

    def _size(self, key: str, value: str) -> int:
        cached = self._sizes.get(key)
        if cached is not None and cached[0] is value:
            return cached[1]
        size = len(key.encode()) + len(value.encode())
        self._sizes[key] = (value, size)
        return size

    def _hash(self, key: str) -> int:
        h = self._hashes.get(key)
        if h is None:
            h = self._hashes[key] = key_hash(key)
        return h

    def _rank(self, key: str) -> int:
        rank = self._ranks.get(key)
        if rank is None:
            rank = self._ranks[key] = omission_rank(key)
        return rank

    def plan(self, data: Mapping[str, str], node_health: Mapping[str, str] | None = None) -> ShardPlan:
        """See `plan()`."""
        node_health = node_health or {}
        sizes = {k: self._size(k, v) for k, v in data.items()}
        if len(self._sizes) > 2 * len(data) + 64:  # forget keys that are gone
            self._sizes = {k: self._sizes[k] for k in data}
            self._hashes = {k: h for k, h in self._hashes.items() if k in data}
            self._ranks = {k: r for k, r in self._ranks.items() if k in data}
        total = sum(sizes.values())
        if total <= self.budget:
            return ShardPlan({CONFIGMAP: by_importance(data)}, 0, {CONFIGMAP: total})
        # a node's insight and its health insights are placed by the node's key: one shard per node
        homes = {k: k if k.startswith(PREFIX_NODE) else node_health.get(k) for k in data}
        main = {k: v for k, v in data.items() if homes[k] is None}
        # by importance, then by key: each shard gets its keys in the order `fit_patch` keeps them
        sharded = sorted((self._rank(k), k, home) for k, home in homes.items() if home is not None)
        hashes = [self._hash(home) for _, _, home in sharded]
        shards = 1
        while True:
            totals = [0] * shards
            for (_, k, _), h in zip(sharded, hashes, strict=True):
                totals[shard_index(h, shards)] += sizes[k]
            if max(totals) <= self.budget or shards >= self.max_shards:
                break
            shards *= 2
        names = [shard_name(i) for i in range(shards)]
        configmaps: dict[str, dict[str, str]] = {name: {} for name in names}
        for (_, k, _), h in zip(sharded, hashes, strict=True):
            configmaps[names[shard_index(h, shards)]][k] = data[k]
        # Only a shard that holds insights is created, so only such shards are listed: a reader
        # never finds a listed shard missing. With none (what overflows is not about nodes), the
        # main ConfigMap holds what fits and lists none.
        used = [name for name in names if configmaps[name]]
        if used:
            main[SHARDS_KEY] = json.dumps(used, separators=(",", ":"))  # JSON like every value written
        # each in the order a ConfigMap that cannot hold it all keeps its keys (`fit_patch`)
        result = ShardPlan(
            {CONFIGMAP: by_importance(main), **{name: configmaps[name] for name in used}},
            shards if used else 0,
        )
        result.sizes = {CONFIGMAP: data_size(main), **{n: t for n, t in zip(names, totals, strict=True) if n in used}}
        for name, size in result.sizes.items():
            if size > self.budget:
                result.problems.append(
                    f"ConfigMap {NAMESPACE}/{name} would hold {size} bytes of insights, over the budget of "
                    f"{self.budget} bytes (the API server rejects more than {DATA_LIMIT})"
                    + (f"; already at the maximum of {self.max_shards} node shards" if name != CONFIGMAP else "")
                )
        return result
