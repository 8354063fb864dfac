"""What a change of the ClusterVersion CRD means for the capability names the writer pruned (pure).

A new CRD (e.g. re-applied by a newer release) may accept names the old one rejected: on a change
of its spec every pruned name is forgotten and written again. The API server may validate with the
old schema for a moment after the new CRD is visible (storage is swapped asynchronously, and per
API server), so names rejected again although the new schema lists them are retried on a short
schedule after the change; names the schema does not list are not (no futile writes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from status.clusterversion import capabilities

JSON = dict[str, Any]

# Where the slimmed CRD in the cache keeps what its schema accepts in each capability list.
CAPABILITY_ENUMS = "capabilityEnums"
# Seconds after a ClusterVersion CRD change at which names it rejected again are retried.
CRD_SETTLE_RETRIES = (1.0, 3.0, 10.0, 30.0)


@dataclass(frozen=True)
class CrdRevision:
    """One revision of the ClusterVersion CRD's spec (its schema among it)."""

    uid: str
    generation: str  # metadata.generation; the resourceVersion where a server sets no generation

    def label(self) -> str:
        return f"generation {self.generation}"


def crd_revision(crd: Mapping[str, Any] | None) -> CrdRevision | None:
    """The revision of a (slimmed) CRD object; None when there is none."""
    if not crd:
        return None
    meta = crd.get("metadata") or {}
    generation = meta.get("generation")
    return CrdRevision(
        str(meta.get("uid") or ""),
        str(generation) if generation is not None else str(meta.get("resourceVersion") or ""),
    )


def crd_changed(seen: CrdRevision | None, observed: CrdRevision | None) -> bool:
    """Whether the CRD's spec changed since `seen`: a new generation, or a recreated object.

    Status-only updates of the CRD (conditions, accepted names) change its resourceVersion but not
    its generation: the schema is the same, so names it rejected would only be rejected again. The
    first sighting and a deletion are not changes (there is nothing to compare, or nothing new).
    """
    return seen is not None and observed is not None and observed != seen


def slim_crd(obj: JSON) -> JSON:
    """What the CRD cache keeps: what `crd_revision` reads and the capability enums, not the (large) schema."""
    meta = obj.get("metadata") or {}
    keep = ("name", "uid", "generation", "resourceVersion")
    enums = capabilities.crd_enums(obj)
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta[k] for k in keep if k in meta},
        CAPABILITY_ENUMS: {f: sorted(names) if names is not None else None for f, names in enums.items()},
    }


def settle_deadlines(now: float) -> list[float]:
    """When, after a CRD change seen at `now` (monotonic seconds), rejected names are retried."""
    return [now + delay for delay in CRD_SETTLE_RETRIES]


def settle_due(deadlines: Sequence[float], now: float) -> tuple[bool, list[float]]:
    """Whether a retry is due at `now`, and the deadlines still ahead (those passed are spent)."""
    return any(t <= now for t in deadlines), [t for t in deadlines if t > now]


def schema_accepts(pruned: Mapping[str, Sequence[str]], crd: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """The pruned names the (slimmed) CRD's schema lists, per capability list (all of a list whose
    schema has no enum)."""
    enums = (crd or {}).get(CAPABILITY_ENUMS) or {}
    return {
        list_name: [n for n in names if enums.get(list_name) is None or n in enums[list_name]]
        for list_name, names in pruned.items()
    }


def change_label(seen: CrdRevision, observed: CrdRevision) -> str:
    """How a change reads in the log: `generation 3, recreated, was generation 2`."""
    return f"{observed.label()}{', recreated' if observed.uid != seen.uid else ''}, was {seen.label()}"


def names_text(forgotten: Mapping[str, Sequence[str]]) -> str:
    return "; ".join(f"{f} {', '.join(names)}" for f, names in sorted(forgotten.items()))
