"""The keys of the ConfigMap API the controller owns. What its caches keep of each object (the
informers' transforms) and which changes matter are `status.updatestatus.insights.inputs`, shared
with `upgrade-status --watch`.
"""

from __future__ import annotations

from collections.abc import Mapping

from status.updatestatus.api import metadata
from status.updatestatus.api.wire import OWNED_PREFIX


def owned(data: Mapping[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in (data or {}).items() if k.startswith(OWNED_PREFIX)}


def insight_keys(data: Mapping[str, str] | None) -> dict[str, str]:
    """The owned keys but the metadata key."""
    return {k: v for k, v in (data or {}).items() if k.startswith(OWNED_PREFIX) and k != metadata.META_KEY}
