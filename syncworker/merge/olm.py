"""OperatorGroups (operators.coreos.com/v1)."""

from __future__ import annotations

from typing import Any

from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.values import (
    JSON,
    Changes,
    child,
    enforce,
    enforce_if_set,
    mapping,
    text,
    with_default,
)

DEFAULT_UPGRADE_STRATEGY = "Default"


def merge_operator_group(changes: Changes, live: JSON, required: JSON) -> None:
    """selector, targetNamespaces, serviceAccountName (when set), staticProvidedAPIs and
    upgradeStrategy (Default)."""
    ensure_metadata(changes, live, required)
    spec = mapping(required, "spec", "")
    have = child(live, "spec")
    enforce(changes, have, "selector", spec.get("selector"), "spec.selector", pointer=True)
    for key in ("targetNamespaces", "staticProvidedAPIs"):
        enforce(changes, have, key, spec.get(key), f"spec.{key}")
    account = text(spec, "serviceAccountName", "spec") or None
    enforce_if_set(changes, have, "serviceAccountName", account, "spec.serviceAccountName")
    strategy = _upgrade_strategy_defaults(spec.get("upgradeStrategy"))
    enforce(changes, have, "upgradeStrategy", strategy, "spec.upgradeStrategy", _upgrade_strategy_defaults)


def _upgrade_strategy_defaults(strategy: Any) -> Any:
    return with_default({} if strategy is None else strategy, {"name": DEFAULT_UPGRADE_STRATEGY})
