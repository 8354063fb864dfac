"""Which feature gates are enabled for a release, from the FeatureGate `cluster` (pure).

The cluster's FeatureGate lists, per release version, the gates enabled and disabled
(`status.featureGates[].{version, enabled[].name, disabled[].name}`); the CVO reads the entry of its
own version. No entry, or no FeatureGate (a cluster without the API): every gate is off. The
process reads them once and exits when the feature set or those gates change (`changed`), as
upstream, so that the restarted process applies them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FEATUREGATE_NAME = "cluster"
# Writes status.desired.architecture (upstream's StatusReleaseArchitecture follows this gate).
RELEASE_ARCHITECTURE_GATE = "ImageStreamImportMode"


def enabled(featuregate: Mapping[str, Any] | None, version: str) -> frozenset[str]:
    """The gates enabled for `version`."""
    for entry in ((featuregate or {}).get("status") or {}).get("featureGates") or []:
        if isinstance(entry, Mapping) and entry.get("version") == version:
            return frozenset(
                str(g.get("name")) for g in entry.get("enabled") or [] if isinstance(g, Mapping) and g.get("name")
            )
    return frozenset()


@dataclass(frozen=True)
class Features:
    """What the process takes from the FeatureGate: its feature set and the gates of its version."""

    feature_set: str = ""  # spec.featureSet; "" is Default
    gates: frozenset[str] = frozenset()


def features(featuregate: Mapping[str, Any] | None, version: str) -> Features:
    """The feature set and the gates enabled for `version` (no FeatureGate: Default, none)."""
    spec = (featuregate or {}).get("spec")
    feature_set = spec.get("featureSet") if isinstance(spec, Mapping) else None
    return Features(feature_set if isinstance(feature_set, str) else "", enabled(featuregate, version))


def changed(before: Features, after: Features) -> str | None:
    """How `after` differs from `before`, in one line (None: in nothing the process uses)."""
    parts = []
    if after.feature_set != before.feature_set:
        parts.append(f"feature set {before.feature_set or 'Default'} is now {after.feature_set or 'Default'}")
    if on := sorted(after.gates - before.gates):
        parts.append(f"enabled {', '.join(on)}")
    if off := sorted(before.gates - after.gates):
        parts.append(f"disabled {', '.join(off)}")
    return "; ".join(parts) or None
