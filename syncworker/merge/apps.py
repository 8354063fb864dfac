"""Deployments and DaemonSets (apps/v1)."""

from __future__ import annotations

from typing import Any

from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.podtemplate import ensure_pod_template
from syncworker.merge.values import (
    JSON,
    Changes,
    child,
    enforce,
    enforce_default,
    enforce_if_set,
    mapping,
    with_default,
)

DEFAULT_REPLICAS = 1
ROLLING_UPDATE = "RollingUpdate"
DEFAULT_ROLLING_UPDATE = {"maxUnavailable": "25%", "maxSurge": "25%"}


def merge_deployment(changes: Changes, live: JSON, required: JSON) -> None:
    """`replicas` (1 when unset, so a scaled Deployment returns to the manifest's count), selector,
    `paused`, `minReadySeconds`, `revisionHistoryLimit` and `progressDeadlineSeconds` when set,
    `strategy` (RollingUpdate 25 %/25 %) and the pod template."""
    ensure_metadata(changes, live, required)
    spec = mapping(required, "spec", "")
    have = child(live, "spec")
    enforce_default(changes, have, "replicas", spec.get("replicas"), DEFAULT_REPLICAS, "spec.replicas")
    enforce(changes, have, "selector", mapping(spec, "selector", "spec") or None, "spec.selector")
    for key in ("paused", "minReadySeconds"):
        enforce(changes, have, key, spec.get(key), f"spec.{key}")
    for key in ("revisionHistoryLimit", "progressDeadlineSeconds"):
        enforce_if_set(changes, have, key, spec.get(key), f"spec.{key}")
    strategy = _strategy_defaults(mapping(spec, "strategy", "spec"))
    enforce(changes, have, "strategy", strategy, "spec.strategy", _strategy_defaults)
    ensure_pod_template(changes, child(have, "template"), mapping(spec, "template", "spec"), "spec.template")


def _strategy_defaults(strategy: Any) -> Any:
    """The server's: type RollingUpdate, and for it maxUnavailable and maxSurge 25 % each."""
    if strategy is not None and not isinstance(strategy, dict):
        return strategy
    out = with_default(dict(strategy or {}), {"type": ROLLING_UPDATE})
    if out["type"] == ROLLING_UPDATE:
        rolling = out.get("rollingUpdate")
        if rolling is None or isinstance(rolling, dict):
            out["rollingUpdate"] = with_default(dict(rolling or {}), DEFAULT_ROLLING_UPDATE)
    return out


def merge_daemon_set(changes: Changes, live: JSON, required: JSON) -> None:
    """The selector and the pod template; `updateStrategy` and `minReadySeconds` keep their live value."""
    ensure_metadata(changes, live, required)
    spec = mapping(required, "spec", "")
    have = child(live, "spec")
    enforce(changes, have, "selector", mapping(spec, "selector", "spec") or None, "spec.selector")
    ensure_pod_template(changes, child(have, "template"), mapping(spec, "template", "spec"), "spec.template")
