"""Per-object fault isolation: an object that cannot be assessed becomes a health insight.

One unusable object (a MachineConfigPool whose nodeSelector has an unknown operator, a Node with
an unparsable annotation or time, a ClusterOperator with an odd condition) must not stop every
other insight from being computed. The computation (`status.updatestatus.insights.compute`) assesses each
such object on its own; when that fails, the object is left out of the insights it would have
fed and this health insight takes its place, naming the object and the reason. Live and offline
(snapshot) assessments both go through it, so both show the same insight.

The insight: level `Error`, impact type `Unknown` (what the object means for the update cannot
be told), no start time of its own (shown as starting when looked at), uid
`unassessable-<resource>-<name>` (hashed when needed, see `health.health_uid`).
"""

from __future__ import annotations

from status.updatestatus.insights.health import health, health_uid
from status.updatestatus.insights.kinds import ImpactLevel, ImpactType, ScopeType
from status.updatestatus.insights.objects import JSON, InputError
from status.updatestatus.insights.plain import HealthInsight, ResourceRef

# What assessing one malformed object can raise; anything else is a defect of ours and propagates.
FAULTS: tuple[type[Exception], ...] = (InputError, ValueError, TypeError, KeyError, AttributeError, IndexError)

DOC_UNASSESSABLE = "https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/"
REASON_LIMIT = 512  # the reason is the exception's text: bounded, on one line


def object_name(obj: object) -> str:
    """The object's `metadata.name` when it is a non-empty string, else `<unnamed>`."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else "<unnamed>"


def reason_of(exc: BaseException) -> str:
    """One bounded line: an InputError's own text, otherwise the exception's type and text."""
    text = str(exc) if isinstance(exc, InputError) else f"unexpected content ({type(exc).__name__}: {exc})"
    text = " ".join(text.split())
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"


def unassessable(kind: str, ref: ResourceRef, scope: ScopeType, reason: str) -> HealthInsight:
    """The health insight that stands for an object that could not be assessed."""
    insight = health(
        health_uid("unassessable", ref.resource, ref.name),
        None,
        scope,
        [ref],
        ImpactLevel.ERROR,
        ImpactType.UNKNOWN,
        f"{kind} {ref.name} cannot be assessed; insights about it are missing",
        f"The update status controller could not assess {kind} {ref.name}: {reason}",
        DOC_UNASSESSABLE,
    )
    assert insight is not None  # summary, description and reference are never empty
    return insight


def unassessable_object(
    kind: str, group: str, resource: str, obj: JSON, exc: BaseException, scope: ScopeType
) -> HealthInsight:
    return unassessable(kind, ResourceRef(group, resource, object_name(obj)), scope, reason_of(exc))
