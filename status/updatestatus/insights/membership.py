"""Which pool a node belongs to, as oc finds it (master, then custom pools in list order, then
worker, each by its node selector), and what node assessment reads from that pool."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from status.updatestatus.insights.mco import LAYERING_ENABLED, MASTER, NEWEST_IMAGE, WORKER
from status.updatestatus.insights.objects import JSON, InputError, name_of
from status.updatestatus.insights.selectors import Selector


class PoolIndex:
    """Pools in the order oc tries them: master, then custom pools in list order, then worker."""

    def __init__(self, pools: list[JSON]) -> None:
        named = [(name_of(p), p) for p in pools]
        order = [x for x in named if x[0] == MASTER]
        order += [x for x in named if x[0] not in (MASTER, WORKER)]
        order += [x for x in named if x[0] == WORKER]
        self._order: list[tuple[PoolFacts, JSON, Selector]] = []
        self.unusable: list[tuple[JSON, InputError]] = []  # pools that cannot be used, and why
        for name, pool in order:
            try:
                self._order.append((PoolFacts.of(pool), pool, Selector.parse(_selector(pool), name)))
            except InputError as exc:
                self.unusable.append((pool, exc))

    def match(self, node_labels: Mapping[str, str]) -> tuple[PoolFacts, JSON] | None:
        for facts, pool, selector in self._order:
            # cheap pre-check on the first required label: most pools do not match most nodes
            if selector.match_labels and selector.match_labels[0][0] not in node_labels:
                continue
            if selector.matches(node_labels):
                return facts, pool
        return None


def _selector(pool: JSON) -> object:
    spec = pool.get("spec")
    return spec.get("nodeSelector") if isinstance(spec, dict) else None


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class PoolFacts(NamedTuple):
    """What node assessment reads from a pool, extracted once per pool instead of once per node."""

    name: str
    target_config: str
    paused: bool
    layered_image: str  # the newest image of a layered pool, "" when not layered

    @classmethod
    def of(cls, pool: JSON) -> PoolFacts:
        spec = _mapping(pool.get("spec"))
        meta = _mapping(pool.get("metadata"))
        configuration = _mapping(spec.get("configuration"))
        layered = LAYERING_ENABLED in _mapping(meta.get("labels"))
        image = str((meta.get("annotations") or {}).get(NEWEST_IMAGE) or "") if layered else ""
        return cls(name_of(pool), str(configuration.get("name") or ""), bool(spec.get("paused")), image)
