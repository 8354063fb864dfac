"""Health insights: how every insight kind builds one, and the stable uid that names it."""

from __future__ import annotations

import functools
import hashlib
import re

from status.updatestatus.insights.kinds import ImpactLevel, ImpactType, ScopeType
from status.updatestatus.insights.plain import (
    HealthInsight,
    InsightImpact,
    InsightRemediation,
    InsightScope,
    ResourceRef,
)

_UID = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@functools.lru_cache(maxsize=16384)
def health_uid(kind: str, *parts: str, identity: str = "") -> str:
    """A stable identifier valid as an API uid (≤ 63, `[a-z0-9-]`) and inside a ConfigMap key.

    Readable when the parts already fit; otherwise a sanitized prefix plus a hash of the parts and
    `identity` (hashed only), so distinct objects never collide (`a.b` and `a-b` hash differently).
    Cached: node names have dots, so every node's uid is hashed, and every computation asks again
    for the same unhealthy nodes.
    """
    plain = "-".join((kind, *parts))
    if not identity and len(plain) <= 63 and _UID.match(plain):
        return plain
    digest = hashlib.sha256("\x00".join((*parts, identity)).encode()).hexdigest()[:12]
    readable = re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")
    room = 63 - len(kind) - len(digest) - 2
    readable = readable[:room].strip("-")
    return f"{kind}-{readable}-{digest}" if readable else f"{kind}-{digest}"


# --- the insight ------------------------------------------------------------------------------------


def health(
    uid: str,
    started_at: int | None,
    scope: ScopeType,
    resources: list[ResourceRef],
    level: ImpactLevel,
    impact: ImpactType,
    summary: str,
    description: str,
    reference: str,
) -> HealthInsight | None:
    """A health insight, or None when oc would drop it (empty summary, description or reference).

    `started_at` None: the problem has no start time of its own and lasts as long as the objects
    show it; clients show it as starting at the moment they look (oc assesses it at `now`).
    """
    if not summary or not description or not reference:
        return None
    return HealthInsight(
        uid=uid,
        started_at=started_at,
        scope=InsightScope(scope, resources),
        impact=InsightImpact(level, impact, summary, description),
        remediation=InsightRemediation(reference, None),
    )
