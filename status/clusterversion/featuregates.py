"""Which feature gates are enabled for a release, from the FeatureGate `cluster` (pure).

The cluster's FeatureGate lists, per release version, the gates enabled and disabled
(`status.featureGates[].{version, enabled[].name, disabled[].name}`); the CVO reads the entry of its
own version. No entry, or no FeatureGate (a cluster without the API): every gate is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FEATUREGATE_NAME = "cluster"


def enabled(featuregate: Mapping[str, Any] | None, version: str) -> frozenset[str]:
    """The gates enabled for `version`."""
    for entry in ((featuregate or {}).get("status") or {}).get("featureGates") or []:
        if isinstance(entry, Mapping) and entry.get("version") == version:
            return frozenset(
                str(g.get("name")) for g in entry.get("enabled") or [] if isinstance(g, Mapping) and g.get("name")
            )
    return frozenset()
