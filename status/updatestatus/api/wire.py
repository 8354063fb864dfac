"""Reading the ConfigMap API's data: insights, the shard list, the publication metadata.

What a client needs to read the insights, without pydantic: `status.updatestatus.api.configmap`
(which writes them, and re-exports all of this) documents the format. A value that is a JSON
mapping (what the controller writes) is decoded once, by the bounded loader's JSON decoder, and
read by the plain reader of its kind (`status.updatestatus.api.plain`, generated from the models),
which takes it only when it is exactly what the controller writes; anything else (names in snake
case, an unknown field, any value a model may judge otherwise) is validated, as decoded, by the
model, which is then imported. A value that is not such JSON (YAML block style, a number of more
digits than `cvo_py.runtime.safeload` takes, a lone surrogate escape) is read by the bounded loader
and the model. The insight or the one-line error is the model's either way
(tests/status/updatestatus/api/test_plain.py compares the two on random and edited values).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from cvo_py.runtime import safeload
from cvo_py.runtime.gotext.quoting import escape
from status.updatestatus.api import plain
from status.updatestatus.api.names import MAX_SHARDS, SHARD_PREFIX, SHARDS_KEY, is_shard_name
from status.updatestatus.api.staleness import PublicationMetadataShape
from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterVersionInsightShape,
    HealthInsightShape,
    ImpactType,
    InsightShape,
    NodeInsightShape,
    PoolInsightShape,
    ScopeType,
)

OWNED_PREFIX = "usc-"
DATA_LIMIT = 1_048_576  # the API server's limit on a ConfigMap's data (keys + values)
MAX_KEY = 253
# A value is at most what a ConfigMap holds; the other bounds are the loader's defaults.
VALUE_LIMITS = safeload.Limits(max_bytes=DATA_LIMIT)

PREFIX_CV = "usc-cv-"
PREFIX_CO = "usc-co-"
PREFIX_MCP = "usc-mcp-"
PREFIX_NODE = "usc-node-"
PREFIX_HEALTH = "usc-health-"

# The model of each kind of key, by name (in `status.updatestatus.insights.models`).
KINDS = {
    PREFIX_CV: "ClusterVersionStatusInsight",
    PREFIX_CO: "ClusterOperatorStatusInsight",
    PREFIX_MCP: "MachineConfigPoolStatusInsight",
    PREFIX_NODE: "NodeStatusInsight",
    PREFIX_HEALTH: "HealthInsight",
}
_PLAIN_READERS: dict[str, Callable[[Any], InsightShape]] = {
    PREFIX_CV: plain.read_cluster_version_status_insight,
    PREFIX_CO: plain.read_cluster_operator_status_insight,
    PREFIX_MCP: plain.read_machine_config_pool_status_insight,
    PREFIX_NODE: plain.read_node_status_insight,
    PREFIX_HEALTH: plain.read_health_insight,
}

# What the plain path leaves to the models: a number of more characters than the loader takes, NaN
# and Infinity (the loader's decoder refuses them here too), escapes of UTF-16 surrogates (the loader
# makes a lone one U+FFFD) and surrogates themselves (not UTF-8: the loader refuses them). The text
# is searched only where it can hold them (surrogates in non-ASCII text, their escapes after `\u`):
# a regular expression over every value cost a third of reading them.
_PLAIN_JSON = safeload.json_decoder(VALUE_LIMITS)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_PLAIN_MAX_CHARS = VALUE_LIMITS.max_bytes // 4  # UTF-8 needs at most 4 bytes a character


class DecodeError(ValueError):
    """A ConfigMap value that is not a valid insight; the message names the key."""


def kind_prefix(key: str) -> str | None:
    """The prefix of an owned insight key (`usc-<kind>-`), or None for any other key."""
    if not key.startswith(OWNED_PREFIX):
        return None
    # every prefix is `usc-<kind>-` with no dash in <kind> (a test checks): up to the second dash
    prefix = key[: key.find("-", len(OWNED_PREFIX)) + 1]
    return prefix if prefix in KINDS else None


def decode(data: Mapping[str, str], *, plain: bool = True) -> list[InsightShape]:
    """ConfigMap data (the union of the main ConfigMap's and its shards') → insights.

    Keys the controller does not own are ignored. The result is in a canonical order that
    matches the order oc collects insights in when objects are listed by name. The first
    unreadable key is a `DecodeError`; `decode_readable()` keeps going past them.
    """
    insights, errors = decode_readable(data, plain=plain)
    if errors:
        raise errors[0]
    return insights


# What each key read to: its value, and the insight, the error, or None (not a key of ours).
Reads = dict[str, tuple[object, "InsightShape | DecodeError | None"]]


def decode_readable(
    data: Mapping[str, str], *, plain: bool = True, cache: Reads | None = None
) -> tuple[list[InsightShape], list[DecodeError]]:
    """`decode()` that reads every key it can: (the readable insights, one error per unreadable
    key, in key order). Each value is read as the module docstring says (`plain=False`: by the
    models alone, which gives models equal to the plain objects); an error's one-line message
    names its key. With a `cache` (of the previous call's reads, updated in place) only the values
    that changed are read again, as a reader that follows the insights does."""
    reads: Reads = cache if cache is not None else {}
    known = reads.get
    out: list[InsightShape] = []
    failed: list[DecodeError] = []
    for key in sorted(data):  # key order: the order of health insights oc's sort keeps
        value = data[key]
        entry = known(key)
        if entry is None or (entry[0] is not value and entry[0] != value):
            prefix = kind_prefix(key)
            # usc-shards, usc-meta, or a newer kind of insight: not ours to read
            entry = reads[key] = (value, None if prefix is None else _read(key, value, prefix, plain))
        result = entry[1]
        if result is None:
            continue
        if type(result) is DecodeError:
            failed.append(result)
        else:
            out.append(result)  # type: ignore[arg-type]
    if len(reads) > len(data):  # keys gone since the last call
        for key in [k for k in reads if k not in data]:
            del reads[key]
    return canonical_order(out), failed


def _read(key: str, value: object, prefix: str, plain: bool) -> InsightShape | DecodeError:
    doc = json_mapping(value)
    if doc is not None and plain:
        try:
            insight: InsightShape = _PLAIN_READERS[prefix](doc)
            return insight
        except Exception:  # anything at all: the model judges it, as decoded
            pass
    try:
        if doc is None or _may_nest_deeper(value):
            return decode_value(key, value, prefix)  # the loader's judgement, from the text
        return validate(key, doc, prefix)
    except DecodeError as exc:
        return exc


def json_mapping(value: object) -> dict[str, Any] | None:
    """The mapping a value holds, decoded by the bounded loader's JSON decoder as the loader
    decodes it; None for anything the loader may read otherwise (not a JSON mapping, too long for
    the plain path, a surrogate or its escape, a number of more characters than it takes)."""
    if type(value) is not str or len(value) > _PLAIN_MAX_CHARS:
        return None
    if not value.isascii() and _SURROGATE.search(value) is not None:
        return None
    if "\\u" in value and _SURROGATE_ESCAPE.search(value) is not None:
        return None
    try:
        doc = _PLAIN_JSON.decode(value)
    except Exception:  # not JSON, a number the loader refuses, NaN, nesting past the recursion guard
        return None
    return doc if type(doc) is dict else None


def _may_nest_deeper(text: object) -> bool:
    """Whether the text has brackets enough to nest past the loader's bound (which it then refuses)."""
    return type(text) is str and text.count("[") + text.count("{") > VALUE_LIMITS.max_depth


def read_plain(value: object, reader: Callable[[Any], Any]) -> Any:
    """`reader`'s object for a value exactly as the controller writes it, else None."""
    doc = json_mapping(value)
    if doc is None:
        return None
    try:
        return reader(doc)
    except Exception:  # anything at all: the models judge it
        return None


def read_metadata_plain(value: object) -> PublicationMetadataShape | None:
    """The publication metadata as the controller writes it, else None (then read it with
    `status.updatestatus.api.metadata.decode`, which judges it)."""
    meta: PublicationMetadataShape | None = read_plain(value, plain.read_publication_metadata)
    return meta


def decode_value(key: str, value: object, prefix: str) -> InsightShape:
    """One ConfigMap value → its insight as the model reads it (bounded loader, pydantic), or a
    `DecodeError` naming the key."""
    where = f"ConfigMap key {safe_key(key)}"
    if not isinstance(value, str):
        raise DecodeError(f"{where}: the value is {type(value).__name__}, not a string")
    try:
        doc = safeload.load_document(value, source=where, limits=VALUE_LIMITS)
    except safeload.DocumentError as exc:
        raise DecodeError(str(exc)) from None
    if not isinstance(doc, dict):
        raise DecodeError(f"{where}: expected a mapping, got {type(doc).__name__}")
    return validate(key, doc, prefix)


def validate(key: str, doc: dict[str, Any], prefix: str) -> InsightShape:
    """A decoded value → its insight as the model validates it, or a `DecodeError` naming the key."""
    from pydantic import ValidationError  # only for values the plain readers do not take

    from status.updatestatus.insights import models

    try:
        insight: InsightShape = getattr(models, KINDS[prefix]).model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "value"
        where = f"ConfigMap key {safe_key(key)}"
        raise DecodeError(f"{where}: {escape(loc)[:200]}: {one_line(first['msg'])[:200]}") from None
    return insight


def safe_key(key: str) -> str:
    return escape(key[: MAX_KEY + 1])


def one_line(text: str) -> str:
    return " ".join(text.split())


def shard_names(main_data: Mapping[str, str]) -> list[str]:
    """The shard ConfigMaps a client must also read, from the main ConfigMap's data."""
    raw = main_data.get(SHARDS_KEY)
    if not raw:
        return []
    try:
        names = safeload.load_document(raw, source=f"ConfigMap key {SHARDS_KEY}", limits=VALUE_LIMITS)
    except safeload.DocumentError as exc:
        raise DecodeError(str(exc)) from None
    # Only the API's own shards: a reader would otherwise read, and the controller watch, whatever
    # ConfigMaps a forged list names, as many as it names.
    if not isinstance(names, list) or not all(isinstance(n, str) and is_shard_name(n) for n in names):
        raise DecodeError(
            f"ConfigMap key {SHARDS_KEY}: expected a list of {SHARD_PREFIX}<i> names, i from 0 to {MAX_SHARDS - 1}"
        )
    return list(dict.fromkeys(names))  # each once


_ORDER = (
    ClusterVersionInsightShape,
    ClusterOperatorInsightShape,
    PoolInsightShape,
    NodeInsightShape,
    HealthInsightShape,
)


def canonical_order(insights: list[InsightShape]) -> list[InsightShape]:
    """CV, operators and pools by name, nodes by pool then name, health in oc's collection order."""
    by_kind: dict[type[Any], list[Any]] = {kind: [] for kind in _ORDER}
    kind_of: dict[type[Any], type[Any] | None] = {}
    for insight in insights:  # one pass: this sorts every insight a client reads
        cls = type(insight)
        if cls not in kind_of:  # the plain class or the model of a kind: its shape
            kind_of[cls] = next((k for k in _ORDER if isinstance(insight, k)), None)
        kind = kind_of[cls]
        if kind is not None:
            by_kind[kind].append(insight)
    cvs: list[ClusterVersionInsightShape] = sorted(by_kind[ClusterVersionInsightShape], key=lambda i: i.resource.name)
    cos: list[ClusterOperatorInsightShape] = sorted(by_kind[ClusterOperatorInsightShape], key=lambda i: i.name)
    pools: list[PoolInsightShape] = sorted(by_kind[PoolInsightShape], key=lambda i: i.name)
    pool_index = {p.name: n for n, p in enumerate(pools)}
    nodes: list[NodeInsightShape] = by_kind[NodeInsightShape]
    nodes.sort(key=lambda i: (pool_index.get(i.pool_resource.name, len(pools)), i.name))
    node_pool = {n.name: pool_index.get(n.pool_resource.name, len(pools)) for n in nodes}
    health: list[HealthInsightShape] = by_kind[HealthInsightShape]

    def rank(h: HealthInsightShape) -> tuple[Any, ...]:
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
