"""The ConfigMap API: insights ↔ ConfigMap `data`, and how node insights are sharded at scale.

Where: namespace `openshift-update-status-controller`, ConfigMap `status-api-cm-prototype`. The
controller never creates it; an administrator opts in by creating it (empty) and out by deleting
it. Keys the controller does not own (anything not starting with `usc-`) are left alone.

Keys (every key matches `[-._a-zA-Z0-9]+` and is at most 253 characters):

    usc-cv-<clusterversion>      ClusterVersion insight
    usc-co-<clusteroperator>     ClusterOperator insight
    usc-mcp-<pool>               MachineConfigPool insight
    usc-node-<node>              Node insight
    usc-health-<uid>             Health insight; <uid> is also the insight's `uid` field
    usc-shards                   (only when sharded) the names of the shard ConfigMaps, a YAML list

A name too long for its key (node names may have 253 characters) is cut and followed by `-` and
12 hex digits of its SHA-256, so keys stay unique; the full name is always inside the value.

Values: the insight as YAML with the API's JSON field names (camelCase), times as RFC 3339
strings with nanoseconds, durations as Go duration strings (`10m0s`), unset optional fields
omitted. Node insights, the bulk at scale, are written as compact JSON on one line (JSON is YAML's
flow style, so this is still YAML) to keep them small and fast to write; everything else in YAML
block style. Any YAML parser reads both; `decode()` here returns the typed insights.

Sharding: a ConfigMap holds at most 1 MiB of data. Control-plane, pool and health insights stay
in `status-api-cm-prototype`. When everything does not fit in one ConfigMap under the budget
(`SHARD_BUDGET`, headroom left for metadata), node insights move to shard ConfigMaps
`status-api-cm-prototype-nodes-<i>` (i = 0 … S-1, S a power of two): a node key goes to shard
`crc32(key) mod S`, and S is the smallest power of two for which every shard fits. Growing S
moves about half the keys; a single node's change touches one shard. The main ConfigMap's
`usc-shards` key lists the shard names in use; a client reads the main ConfigMap, then every
shard listed, and decodes the union of their `data`. If even `MAX_SHARDS` shards cannot hold the
insights, or the main ConfigMap alone is too big, `plan()` reports it in `ShardPlan.problems`
instead of producing a write that the API server would reject.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import ValidationError

from status.insights.models import (
    ClusterOperatorStatusInsight,
    ClusterVersionStatusInsight,
    HealthInsight,
    ImpactType,
    Insight,
    MachineConfigPoolStatusInsight,
    NodeStatusInsight,
    ScopeType,
)

NAMESPACE = "openshift-update-status-controller"
CONFIGMAP = "status-api-cm-prototype"
SHARD_PREFIX = CONFIGMAP + "-nodes-"
SHARDS_KEY = "usc-shards"
OWNED_PREFIX = "usc-"
DATA_LIMIT = 1_048_576  # the API server's limit on a ConfigMap's data (keys + values)
SHARD_BUDGET = 900_000  # what we fill a ConfigMap to, leaving room for metadata
MAX_SHARDS = 64
MAX_KEY = 253

PREFIX_CV = "usc-cv-"
PREFIX_CO = "usc-co-"
PREFIX_MCP = "usc-mcp-"
PREFIX_NODE = "usc-node-"
PREFIX_HEALTH = "usc-health-"

_PREFIXES: dict[str, type[Any]] = {
    PREFIX_CV: ClusterVersionStatusInsight,
    PREFIX_CO: ClusterOperatorStatusInsight,
    PREFIX_MCP: MachineConfigPoolStatusInsight,
    PREFIX_NODE: NodeStatusInsight,
    PREFIX_HEALTH: HealthInsight,
}
_KEY_CHARS = re.compile(r"^[-._a-zA-Z0-9]+$")


class DecodeError(ValueError):
    """A ConfigMap value that is not a valid insight; the message names the key."""


def _key(prefix: str, name: str) -> str:
    key = prefix + name
    if len(key) <= MAX_KEY and _KEY_CHARS.match(key):
        return key
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    safe = re.sub(r"[^-._a-zA-Z0-9]", "-", name)[: MAX_KEY - len(prefix) - len(digest) - 1]
    return f"{prefix}{safe}-{digest}"


def key_of(insight: Insight) -> str:
    """The ConfigMap key of an insight."""
    if isinstance(insight, ClusterVersionStatusInsight):
        return _key(PREFIX_CV, insight.resource.name)
    if isinstance(insight, ClusterOperatorStatusInsight):
        return _key(PREFIX_CO, insight.name)
    if isinstance(insight, MachineConfigPoolStatusInsight):
        return _key(PREFIX_MCP, insight.name)
    if isinstance(insight, NodeStatusInsight):
        return _key(PREFIX_NODE, insight.name)
    if isinstance(insight, HealthInsight):
        return _key(PREFIX_HEALTH, insight.uid)
    raise TypeError(f"not an insight: {type(insight).__name__}")


def encode_value(insight: Insight) -> str:
    doc = insight.to_api()
    if isinstance(insight, NodeStatusInsight):
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return yaml.dump(doc, Dumper=_Dumper, default_flow_style=False, width=1 << 30, sort_keys=False)


def encode(insights: Iterable[Insight]) -> dict[str, str]:
    """Insights → ConfigMap data (one key per insight). Duplicate keys are an error."""
    data: dict[str, str] = {}
    for insight in insights:
        key = key_of(insight)
        if key in data:
            raise ValueError(f"two insights share the ConfigMap key {key}")
        data[key] = encode_value(insight)
    return data


def decode(data: Mapping[str, str]) -> list[Insight]:
    """ConfigMap data (the union of the main ConfigMap's and its shards') → insights.

    Keys the controller does not own are ignored. The result is in a canonical order that
    matches the order oc collects insights in when objects are listed by name.
    """
    out: list[Insight] = []
    for key in sorted(data):
        if key == SHARDS_KEY or not key.startswith(OWNED_PREFIX):
            continue
        model = next((m for p, m in _PREFIXES.items() if key.startswith(p)), None)
        if model is None:
            continue  # a newer kind of insight: not ours to read
        value = data[key]
        try:
            doc = yaml.load(value, Loader=_Loader)
        except yaml.YAMLError as exc:
            raise DecodeError(f"ConfigMap key {key}: not YAML: {_one_line(str(exc))}") from None
        if not isinstance(doc, dict):
            raise DecodeError(f"ConfigMap key {key}: expected a mapping, got {type(doc).__name__}")
        try:
            out.append(model.model_validate(doc))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "value"
            raise DecodeError(f"ConfigMap key {key}: {where}: {first['msg']}") from None
    return canonical_order(out)


def shard_names(main_data: Mapping[str, str]) -> list[str]:
    """The shard ConfigMaps a client must also read, from the main ConfigMap's data."""
    raw = main_data.get(SHARDS_KEY)
    if not raw:
        return []
    try:
        names = yaml.load(raw, Loader=_Loader)
    except yaml.YAMLError:
        raise DecodeError(f"ConfigMap key {SHARDS_KEY}: not a YAML list") from None
    if not isinstance(names, list) or not all(
        isinstance(n, str) and n.startswith(SHARD_PREFIX) for n in names
    ):
        raise DecodeError(f"ConfigMap key {SHARDS_KEY}: expected a list of {SHARD_PREFIX}<i> names")
    return names


def canonical_order(insights: list[Insight]) -> list[Insight]:
    """CV, operators and pools by name, nodes by pool then name, health in oc's collection order."""
    cvs = sorted(
        (i for i in insights if isinstance(i, ClusterVersionStatusInsight)), key=lambda i: i.resource.name
    )
    cos = sorted((i for i in insights if isinstance(i, ClusterOperatorStatusInsight)), key=lambda i: i.name)
    pools = sorted(
        (i for i in insights if isinstance(i, MachineConfigPoolStatusInsight)), key=lambda i: i.name
    )
    pool_index = {p.name: n for n, p in enumerate(pools)}
    nodes = [i for i in insights if isinstance(i, NodeStatusInsight)]
    nodes.sort(key=lambda i: (pool_index.get(i.pool_resource.name, len(pools)), i.name))
    node_pool = {n.name: pool_index.get(n.pool_resource.name, len(pools)) for n in nodes}
    health = [i for i in insights if isinstance(i, HealthInsight)]

    def rank(h: HealthInsight) -> tuple[Any, ...]:
        res = h.scope.resources[0] if h.scope.resources else None
        resource = res.resource if res else ""
        name = res.name if res else ""
        if resource == "nodes":
            return (0, node_pool.get(name, len(pools)), 0, name, h.impact.type != ImpactType.UPDATE_SPEED)
        if resource == "machineconfigpools":
            return (0, pool_index.get(name, len(pools)), 1, name, 0)
        if h.scope.type == ScopeType.CLUSTER or resource == "alerts":
            return (1, 0, 0, h.uid, 0)
        if resource == "clusterversions":
            return (4, 0, 0, name, 0) if h.impact.type == ImpactType.NONE else (2, 0, 0, name, 0)
        if resource == "clusteroperators":
            return (3, 0, 0, name, "ClusterOperatorDown" not in h.remediation.reference)
        return (5, 0, 0, h.uid, 0)

    health.sort(key=rank)
    return [*cvs, *cos, *pools, *nodes, *health]


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


def shard_of(key: str, shards: int) -> int:
    return zlib.crc32(key.encode()) % shards


def shard_name(index: int) -> str:
    return f"{SHARD_PREFIX}{index}"


def plan(data: Mapping[str, str], budget: int = SHARD_BUDGET, max_shards: int = MAX_SHARDS) -> ShardPlan:
    """Spread encoded insights over the main ConfigMap and, if needed, node shards (see above)."""
    if data_size(data) <= budget:
        return ShardPlan({CONFIGMAP: dict(data)}, 0, {CONFIGMAP: data_size(data)})
    main = {k: v for k, v in data.items() if not k.startswith(PREFIX_NODE)}
    node_keys = sorted(k for k in data if k.startswith(PREFIX_NODE))
    node_sizes = {k: len(k.encode()) + len(data[k].encode()) for k in node_keys}
    shards = 1
    while True:
        totals = [0] * shards
        for k in node_keys:
            totals[shard_of(k, shards)] += node_sizes[k]
        if max(totals) <= budget or shards >= max_shards:
            break
        shards *= 2
    configmaps: dict[str, dict[str, str]] = {shard_name(i): {} for i in range(shards)}
    for k in node_keys:
        configmaps[shard_name(shard_of(k, shards))][k] = data[k]
    main[SHARDS_KEY] = yaml.safe_dump([shard_name(i) for i in range(shards)], default_flow_style=True).strip()
    result = ShardPlan({CONFIGMAP: main, **configmaps}, shards)
    result.sizes = {name: data_size(d) for name, d in result.configmaps.items()}
    for name, size in result.sizes.items():
        if size > budget:
            result.problems.append(
                f"ConfigMap {NAMESPACE}/{name} would hold {size} bytes of insights, "
                f"over the budget of {budget} "
                f"bytes (the API server rejects more than {DATA_LIMIT})"
                + (f"; already at the maximum of {max_shards} node shards" if name != CONFIGMAP else "")
            )
    return result


# --- YAML dialect ------------------------------------------------------------------------------


_SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Dumper(_SafeDumper):  # type: ignore[valid-type,misc]
    """Safe dumper without aliases (values are independent documents)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class _Loader(_SafeLoader):  # type: ignore[valid-type,misc]
    """Safe loader that keeps timestamps as strings (the models parse them with nanoseconds)."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _one_line(text: str) -> str:
    return " ".join(text.split())
