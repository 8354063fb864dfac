"""The ConfigMap API: insights ↔ ConfigMap `data`, and how the insights of nodes are sharded at scale.

Where: namespace `openshift-update-status-controller`, ConfigMap `status-api-cm-prototype`. The
controller never creates it; an administrator opts in by creating it (empty) and out by deleting
it. Keys the controller does not own (anything not starting with `usc-`) are left alone.

Keys (every key matches `[-._a-zA-Z0-9]+` and is at most 253 characters):

    usc-cv-<clusterversion>      ClusterVersion insight
    usc-co-<clusteroperator>     ClusterOperator insight
    usc-mcp-<pool>               MachineConfigPool insight
    usc-node-<node>              Node insight
    usc-health-<uid>             Health insight; <uid> is also the insight's `uid` field
    usc-shards                   (only when sharded, in the main ConfigMap) the names of the shard
                                 ConfigMaps, a JSON list

A name too long for its key (node names may have 253 characters) is cut and followed by `-` and
12 hex digits of its SHA-256, so keys stay unique; the full name is always inside the value.

Values: the insight with the API's JSON field names (camelCase), times as RFC 3339 strings with
nanoseconds, durations as Go duration strings (`10m0s`), unset optional fields omitted, written as
compact JSON on one line (JSON is YAML's flow style, so a value is still YAML; the characters YAML
reads differently from JSON, C1 controls, NEL, LS, PS and non-characters, are \\u escapes): JSON
is what clients parse fastest. Values in YAML block style, as earlier versions wrote all but node
insights, decode the same.

Sharding: the API server rejects a ConfigMap holding more than 1 MiB of data (`DATA_LIMIT`), but
ConfigMaps are filled only to `SHARD_BUDGET` (256 KiB): a one-key patch costs the API server time
in proportion to the ConfigMap's size (about 25 ms at 225 KB, 100 ms at 900 KB on a small control
plane), and every watcher receives the whole object again. When everything does not fit in
`status-api-cm-prototype`, the insights of nodes move to shard ConfigMaps
`status-api-cm-prototype-nodes-<i>` (i = 0 … S-1, S a power of two, at most `MAX_SHARDS` = 32:
`shard_names_allowed()` lists every name, which the controller's RBAC Role grants and nothing
more): node insights, and the health insights whose scope is a single node (a degraded or
unavailable node). Both are placed by the node's key, `usc-node-<node>`: shard
`crc32(node key) mod S`, so a node's health insights share its shard and a single node's change
touches one shard (plus its pool's insight in the main ConfigMap). Control-plane, pool and every
other health insight stay in `status-api-cm-prototype`. S is the smallest power of two for which
every shard fits, so 32 shards hold about 8 MiB (~10,000 nodes); growing S moves about half the
keys. The main ConfigMap's `usc-shards` key lists the shard names in use; a client reads the main
ConfigMap and every shard listed (`status.updatestatus.client.live` lists the namespace: one request,
one consistent view) and decodes the union of their `data` (a key may be in any of them; only
where a key lives differs, never its name or value). If even `MAX_SHARDS` shards
cannot hold the insights within the budget, or the main ConfigMap alone is too big, `plan()`
reports it in `ShardPlan.problems` (the writer then fills up to `DATA_LIMIT`, never beyond).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any, cast

from cvo_py.runtime import gotext
from status.updatestatus.api import wire
from status.updatestatus.api.names import CONFIGMAP as CONFIGMAP  # re-exported: the wire format's names
from status.updatestatus.api.names import NAMESPACE as NAMESPACE
from status.updatestatus.api.names import SHARD_PREFIX as SHARD_PREFIX
from status.updatestatus.api.names import SHARDS_KEY as SHARDS_KEY
from status.updatestatus.api.wire import (  # re-exported: reading the format
    DATA_LIMIT as DATA_LIMIT,
)
from status.updatestatus.api.wire import KINDS, MAX_KEY
from status.updatestatus.api.wire import OWNED_PREFIX as OWNED_PREFIX
from status.updatestatus.api.wire import PREFIX_CO as PREFIX_CO
from status.updatestatus.api.wire import PREFIX_CV as PREFIX_CV
from status.updatestatus.api.wire import PREFIX_HEALTH as PREFIX_HEALTH
from status.updatestatus.api.wire import PREFIX_MCP as PREFIX_MCP
from status.updatestatus.api.wire import PREFIX_NODE as PREFIX_NODE
from status.updatestatus.api.wire import VALUE_LIMITS as VALUE_LIMITS
from status.updatestatus.api.wire import DecodeError as DecodeError
from status.updatestatus.api.wire import canonical_order as canonical_order
from status.updatestatus.api.wire import decode_value as decode_value
from status.updatestatus.api.wire import shard_names as shard_names
from status.updatestatus.insights import models
from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterVersionInsightShape,
    HealthInsightShape,
    InsightShape,
    NodeInsightShape,
    PoolInsightShape,
)
from status.updatestatus.insights.models import (
    HealthInsight,
    Insight,
    NodeStatusInsight,
    ResourceRef,
    time_string,
)

SHARD_BUDGET = 256 * 1024  # what a ConfigMap is filled to (see the module docstring)
MAX_SHARDS = 32  # a power of two; the RBAC Role names exactly `shard_names_allowed()`

_PREFIXES: dict[str, type[Any]] = {prefix: getattr(models, name) for prefix, name in KINDS.items()}
_KEY_CHARS = re.compile(r"^[-._a-zA-Z0-9]+$")


def _key(prefix: str, name: str) -> str:
    key = prefix + name
    if len(key) <= MAX_KEY and _KEY_CHARS.match(key):
        return key
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    safe = re.sub(r"[^-._a-zA-Z0-9]", "-", name)[: MAX_KEY - len(prefix) - len(digest) - 1]
    return f"{prefix}{safe}-{digest}"


def decode(data: Mapping[str, str]) -> list[Insight]:
    """ConfigMap data → insights as the models read them (what the controller and the tests take);
    see `status.updatestatus.api.wire.decode`, which a client reads with, without pydantic, and which
    gives plain objects equal to these."""
    return cast(list[Insight], wire.decode(data, plain=False))  # plain=False: every one a model


def decode_readable(data: Mapping[str, str]) -> tuple[list[Insight], list[DecodeError]]:
    """`decode()` that reads every key it can (see `status.updatestatus.api.wire.decode_readable`)."""
    insights, errors = wire.decode_readable(data, plain=False)
    return cast(list[Insight], insights), errors


def key_of(insight: InsightShape) -> str:
    """The ConfigMap key of an insight (a model's or a plain one: by its shape)."""
    if isinstance(insight, NodeInsightShape):  # first: most insights are nodes'
        return node_key(insight.name)
    if isinstance(insight, ClusterVersionInsightShape):
        return _key(PREFIX_CV, insight.resource.name)
    if isinstance(insight, ClusterOperatorInsightShape):
        return _key(PREFIX_CO, insight.name)
    if isinstance(insight, PoolInsightShape):
        return _key(PREFIX_MCP, insight.name)
    if isinstance(insight, HealthInsightShape):
        return _key(PREFIX_HEALTH, insight.uid)
    raise TypeError(f"not an insight: {type(insight).__name__}")


def encode_value(insight: Insight) -> str:
    """An insight's ConfigMap value: compact, YAML-safe JSON on one line (`node_value` writes the
    bulk, node insights, by hand; every other kind goes through the JSON encoder)."""
    if isinstance(insight, NodeStatusInsight):
        return node_value(insight)
    text = json.dumps(insight.to_api(), ensure_ascii=False, separators=(",", ":"))
    # Only strings can hold these characters: escaping them anywhere in the text escapes them there.
    return _YAML_UNSAFE.sub(_escape_unsafe, text) if _YAML_UNSAFE.search(text) else text


def node_value(n: NodeStatusInsight) -> str:
    """`json.dumps(n.to_api(), ensure_ascii=False, separators=(",", ":"))`, written out (with the
    few characters YAML reads differently escaped, see `_q`).

    Node insights are the bulk at scale, and pydantic's generic serializer plus the JSON encoder
    cost most of their time; tests/status/updatestatus/test_insights_configmap.py checks that this gives the
    same bytes for every kind of node insight.
    """
    conditions = ",".join(
        [_condition_json(c.type, c.status, c.reason, c.message, c.last_transition_time) for c in n.conditions]
    )
    out = [
        f'{{"conditions":[{conditions}],"name":{_q(n.name)},"resource":{_ref(n.resource)},'
        f'"poolResource":{_ref(n.pool_resource)},"scopeType":{_q(n.scope_type)}'
    ]
    if n.version:
        out.append(f',"version":{_q(n.version)}')
    if n.est_to_complete is not None:
        out.append(f',"estToComplete":{_q(gotext.duration_string(n.est_to_complete))}')
    if n.message:
        out.append(f',"message":{_q(n.message)}')
    out.append("}")
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def _condition_json(type_: str, status: str, reason: str, message: str, ltt: int) -> str:
    # cached: most nodes of a pool share their conditions (and a few transition times)
    return (
        f'{{"type":{_q(type_)},"status":{_q(status)},"reason":{_q(reason)},"message":{_q(message)},'
        f'"lastTransitionTime":{_q(time_string(ltt))}}}'
    )


def _ref(r: ResourceRef) -> str:
    group = f'"group":{_q(r.group)},' if r.group else ""
    namespace = f',"namespace":{_q(r.namespace)}' if r.namespace else ""
    return f'{{{group}"resource":{_q(r.resource)},"name":{_q(r.name)}{namespace}}}'


def encode(insights: Iterable[Insight]) -> dict[str, str]:
    """Insights → ConfigMap data (one key per insight). Duplicate keys are an error."""
    data: dict[str, str] = {}
    for insight in insights:
        key = key_of(insight)
        if key in data:
            raise ValueError(f"two insights share the ConfigMap key {key}")
        data[key] = encode_value(insight)
    return data


# --- sharding ----------------------------------------------------------------------------------


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


def node_of(insight: HealthInsight) -> str | None:
    """The node a health insight is about when its scope is that one node, else None."""
    resources = insight.scope.resources
    if len(resources) == 1 and resources[0].resource == "nodes" and not resources[0].group:
        return resources[0].name
    return None


def node_key(node: str) -> str:
    """The key of a node's insight, which also places its health insights (see `plan`)."""
    return _key(PREFIX_NODE, node)


def node_health_keys(insights: Iterable[Insight]) -> dict[str, str]:
    """Key of each node health insight → the key of its node's insight (what `plan` takes)."""
    out: dict[str, str] = {}
    for insight in insights:
        if isinstance(insight, HealthInsight):
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

    def plan(self, data: Mapping[str, str], node_health: Mapping[str, str] | None = None) -> ShardPlan:
        """See `plan()`."""
        node_health = node_health or {}
        sizes = {k: self._size(k, v) for k, v in data.items()}
        if len(self._sizes) > 2 * len(data) + 64:  # forget keys that are gone
            self._sizes = {k: self._sizes[k] for k in data}
            self._hashes = {k: h for k, h in self._hashes.items() if k in data}
        total = sum(sizes.values())
        if total <= self.budget:
            return ShardPlan({CONFIGMAP: dict(data)}, 0, {CONFIGMAP: total})
        # a node's insight and its health insights are placed by the node's key: one shard per node
        homes = {k: k if k.startswith(PREFIX_NODE) else node_health.get(k) for k in data}
        main = {k: v for k, v in data.items() if homes[k] is None}
        sharded = sorted((k, home) for k, home in homes.items() if home is not None)
        hashes = [self._hash(home) for _, home in sharded]
        shards = 1
        while True:
            totals = [0] * shards
            for (k, _), h in zip(sharded, hashes, strict=True):
                totals[shard_index(h, shards)] += sizes[k]
            if max(totals) <= self.budget or shards >= self.max_shards:
                break
            shards *= 2
        names = [shard_name(i) for i in range(shards)]
        configmaps: dict[str, dict[str, str]] = {name: {} for name in names}
        for (k, _), h in zip(sharded, hashes, strict=True):
            configmaps[names[shard_index(h, shards)]][k] = data[k]
        # Only a shard that holds insights is created, so only such shards are listed: a reader
        # never finds a listed shard missing. With none (what overflows is not about nodes), the
        # main ConfigMap holds what fits and lists none.
        used = [name for name in names if configmaps[name]]
        if used:
            main[SHARDS_KEY] = json.dumps(used, separators=(",", ":"))  # JSON like every value written
        result = ShardPlan({CONFIGMAP: main, **{name: configmaps[name] for name in used}}, shards if used else 0)
        result.sizes = {CONFIGMAP: data_size(main), **{n: t for n, t in zip(names, totals, strict=True) if n in used}}
        for name, size in result.sizes.items():
            if size > self.budget:
                result.problems.append(
                    f"ConfigMap {NAMESPACE}/{name} would hold {size} bytes of insights, over the budget of "
                    f"{self.budget} bytes (the API server rejects more than {DATA_LIMIT})"
                    + (f"; already at the maximum of {self.max_shards} node shards" if name != CONFIGMAP else "")
                )
        return result


# --- YAML dialect ------------------------------------------------------------------------------


# Characters JSON leaves raw but YAML reads differently: C1 controls and DEL are not allowed in a
# YAML stream, and NEL, LS and PS are line breaks that YAML folds into spaces inside a quoted
# scalar. They are written as \uXXXX escapes, which JSON and YAML both read back exactly.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def _q(text: str) -> str:
    """JSON string quoting, C accelerated, non-ASCII kept (as `ensure_ascii=False`), YAML-safe."""
    quoted: str = encode_basestring(text)
    if _YAML_UNSAFE.search(quoted) is None:
        return quoted
    return _YAML_UNSAFE.sub(_escape_unsafe, quoted)


def _escape_unsafe(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
