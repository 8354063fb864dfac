"""The insight API as a reader takes it, without pydantic: the vocabulary (enums, condition types,
reasons: `status.updatestatus.insights.vocabulary`, re-exported here) and the shape of each
insight type, generated from the pydantic models by hack/gen_plain_insights.py: do not edit.

A shape declares a type's fields for the type checker. The models
(`status.updatestatus.insights.models`, the definition) and the plain classes generated from them
(`status.updatestatus.insights.plain`: what the computation builds and the ConfigMap API's readers
give) both derive from it, so the renderer, the writers and the controller take either (test by
shape, never by class).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from status.updatestatus.insights.vocabulary import NODE_MESSAGE_MAX as NODE_MESSAGE_MAX
from status.updatestatus.insights.vocabulary import ClusterOperatorHealthyReason as ClusterOperatorHealthyReason
from status.updatestatus.insights.vocabulary import ClusterOperatorUpdatingReason as ClusterOperatorUpdatingReason
from status.updatestatus.insights.vocabulary import ClusterVersionAssessment as ClusterVersionAssessment
from status.updatestatus.insights.vocabulary import ClusterVersionUpdatingReason as ClusterVersionUpdatingReason
from status.updatestatus.insights.vocabulary import ConditionStatus as ConditionStatus
from status.updatestatus.insights.vocabulary import ConditionType as ConditionType
from status.updatestatus.insights.vocabulary import ImpactLevel as ImpactLevel
from status.updatestatus.insights.vocabulary import ImpactType as ImpactType
from status.updatestatus.insights.vocabulary import NodeAvailableReason as NodeAvailableReason
from status.updatestatus.insights.vocabulary import NodeDegradedReason as NodeDegradedReason
from status.updatestatus.insights.vocabulary import NodeSummaryType as NodeSummaryType
from status.updatestatus.insights.vocabulary import NodeUpdatingReason as NodeUpdatingReason
from status.updatestatus.insights.vocabulary import PoolAssessment as PoolAssessment
from status.updatestatus.insights.vocabulary import PoolUpdatingReason as PoolUpdatingReason
from status.updatestatus.insights.vocabulary import ScopeType as ScopeType
from status.updatestatus.insights.vocabulary import VersionMetadataKey as VersionMetadataKey
from status.updatestatus.insights.vocabulary import find_condition as find_condition
from status.updatestatus.insights.vocabulary import time_string as time_string


class ConditionShape:
    """What a Condition holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        type: str
        status: ConditionStatus
        reason: str
        message: str
        last_transition_time: int


class ResourceRefShape:
    """What a ResourceRef holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        group: str
        resource: str
        name: str
        namespace: str


class VersionMetadataShape:
    """What a VersionMetadata holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        key: VersionMetadataKey
        value: str


class VersionShape:
    """What a Version holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        version: str
        metadata: Sequence[VersionMetadataShape]


class ControlPlaneUpdateVersionsShape:
    """What a ControlPlaneUpdateVersions holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        previous: VersionShape
        target: VersionShape


class NodeSummaryShape:
    """What a NodeSummary holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        type: NodeSummaryType
        count: int


class InsightScopeShape:
    """What a InsightScope holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        type: ScopeType
        resources: Sequence[ResourceRefShape]


class InsightImpactShape:
    """What a InsightImpact holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        level: ImpactLevel
        type: ImpactType
        summary: str
        description: str


class InsightRemediationShape:
    """What a InsightRemediation holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        reference: str
        estimated_finish: int | None


class ClusterVersionInsightShape:
    """What a ClusterVersionStatusInsight holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        conditions: Sequence[ConditionShape]
        resource: ResourceRefShape
        assessment: ClusterVersionAssessment
        versions: ControlPlaneUpdateVersionsShape
        completion: int
        started_at: int
        completed_at: int | None
        estimated_completed_at: int | None


class ClusterOperatorInsightShape:
    """What a ClusterOperatorStatusInsight holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        conditions: Sequence[ConditionShape]
        name: str
        resource: ResourceRefShape


class PoolInsightShape:
    """What a MachineConfigPoolStatusInsight holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        conditions: Sequence[ConditionShape]
        name: str
        resource: ResourceRefShape
        scope_type: ScopeType
        assessment: PoolAssessment
        completion: int
        summaries: Sequence[NodeSummaryShape]


class NodeInsightShape:
    """What a NodeStatusInsight holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        conditions: Sequence[ConditionShape]
        name: str
        resource: ResourceRefShape
        pool_resource: ResourceRefShape
        scope_type: ScopeType
        version: str
        est_to_complete: int | None
        message: str


class HealthInsightShape:
    """What a HealthInsight holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        uid: str
        started_at: int | None
        scope: InsightScopeShape
        impact: InsightImpactShape
        remediation: InsightRemediationShape


InsightShape = (
    ClusterVersionInsightShape | ClusterOperatorInsightShape | PoolInsightShape | NodeInsightShape | HealthInsightShape
)
