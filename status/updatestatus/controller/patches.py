"""Pure decisions of the ConfigMap writer: what to patch, whether it fits, what to log.

The controller owns only the keys with the `usc-` prefix: it adds and changes those it computes,
removes those whose object is gone, and never touches any other key. An empty plan means no write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from status.updatestatus.api.sharding import data_size, omission_rank
from status.updatestatus.api.wire import DATA_LIMIT, OWNED_PREFIX

__all__ = [
    "DATA_LIMIT",
    "OWNED_PREFIX",
    "SizedPlan",
    "apply_patch",
    "data_size",
    "fit_patch",
    "plan_patch",
    "resource_version_newer",
]


def plan_patch(
    current: Mapping[str, str] | None, desired: Mapping[str, str], prefix: str = OWNED_PREFIX
) -> dict[str, str | None]:
    """The merge-patch `data` that turns `current` into `desired` for the owned keys only.

    A value of None deletes the key (JSON merge patch). Keys in `desired` must be owned.
    """
    for key in desired:
        if not key.startswith(prefix):
            raise ValueError(f"insight key {key!r} does not start with {prefix!r}: not the controller's key")
    current = current or {}
    patch: dict[str, str | None] = {k: v for k, v in desired.items() if current.get(k) != v}
    for key in current:
        if key.startswith(prefix) and key not in desired:
            patch[key] = None
    return patch


def apply_patch(current: Mapping[str, str] | None, patch: Mapping[str, str | None]) -> dict[str, str]:
    result = dict(current or {})
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


@dataclass(frozen=True)
class SizedPlan:
    patch: dict[str, str | None]
    size: int  # bytes of the ConfigMap data after the patch
    omitted: tuple[str, ...]  # desired keys left out so the ConfigMap stays under the limit


def fit_patch(
    current: Mapping[str, str] | None,
    desired: Mapping[str, str],
    limit: int = DATA_LIMIT,
    prefix: str = OWNED_PREFIX,
) -> SizedPlan:
    """`plan_patch`, but never producing a ConfigMap over `limit` bytes.

    When everything does not fit, keys are kept in `desired`'s order (the planner orders them by
    importance, `sharding.by_importance`) while they fit; the rest are omitted and reported, not
    written. Once a key is left out, no less important key (`sharding.omission_rank`) is kept,
    though equally important smaller ones may be: what is left out is always the least important.
    Keys the controller does not own count against the budget first: they are someone else's.
    """
    full = plan_patch(current, desired, prefix)
    merged = apply_patch(current, full)
    size = data_size(merged)
    if size <= limit:
        return SizedPlan(full, size, ())
    budget = limit - data_size({k: v for k, v in (current or {}).items() if not k.startswith(prefix)})
    kept: dict[str, str] = {}
    omitted: list[str] = []
    cutoff: int | None = None  # the most important rank left out so far
    for key, value in desired.items():
        cost = len(key.encode()) + len(value.encode())
        rank = omission_rank(key)
        if cost <= budget and (cutoff is None or rank <= cutoff):
            kept[key] = value
            budget -= cost
        else:
            omitted.append(key)
            cutoff = rank if cutoff is None else min(cutoff, rank)
    patch = plan_patch(current, kept, prefix)
    return SizedPlan(patch, data_size(apply_patch(current, patch)), tuple(omitted))


def resource_version_newer(candidate: str | None, than: str | None) -> bool:
    """Whether `candidate` is a later resourceVersion than `than` (etcd revisions are integers)."""
    if not candidate:
        return False
    if not than:
        return True
    try:
        return int(candidate) > int(than)
    except ValueError:
        # Opaque versions: only "different" is known; prefer the candidate, which is the fresher read.
        return candidate != than
