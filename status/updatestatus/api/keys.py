"""The ConfigMap API's keys: `usc-<kind>-<name>`, each matching `[-._a-zA-Z0-9]+` and at most 253
characters; a name too long or not fit for a key is cut and followed by `-` and 12 hex digits of
its SHA-256, so keys stay unique (see `status.updatestatus.api.configmap` for the whole format)."""

from __future__ import annotations

import hashlib
import re

from status.updatestatus.api.wire import MAX_KEY, PREFIX_CO, PREFIX_CV, PREFIX_HEALTH, PREFIX_MCP, PREFIX_NODE
from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterVersionInsightShape,
    HealthInsightShape,
    InsightShape,
    NodeInsightShape,
    PoolInsightShape,
)

_KEY_CHARS = re.compile(r"^[-._a-zA-Z0-9]+$")


def _key(prefix: str, name: str) -> str:
    key = prefix + name
    if len(key) <= MAX_KEY and _KEY_CHARS.match(key):
        return key
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    safe = re.sub(r"[^-._a-zA-Z0-9]", "-", name)[: MAX_KEY - len(prefix) - len(digest) - 1]
    return f"{prefix}{safe}-{digest}"


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


def node_key(node: str) -> str:
    """The key of a node's insight, which also places its health insights (see `plan`)."""
    return _key(PREFIX_NODE, node)
