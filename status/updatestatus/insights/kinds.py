"""The insight API's enums, condition types and reasons, and the shape of each insight type:
everything a reader of insights needs, without pydantic.

`status.updatestatus.insights.models` defines the API (pydantic models; its docstring says what
each type holds) and re-exports all of this. The computation and every `upgrade-status` (live,
snapshot, dump) use this module and the plain classes generated from the models
(`status.updatestatus.insights.plain`), and so run without loading pydantic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from status.updatestatus.insights.vocabulary import NODE_MESSAGE_MAX as NODE_MESSAGE_MAX
from status.updatestatus.insights.vocabulary import ClusterOperatorHealthyReason as ClusterOperatorHealthyReason
from status.updatestatus.insights.vocabulary import ClusterOperatorUpdatingReason as ClusterOperatorUpdatingReason
from status.updatestatus.insights.vocabulary import ClusterVersionAssessment as ClusterVersionAssessment
from status.updatestatus.insights.vocabulary import ClusterVersionUpdatingReason as ClusterVersionUpdatingReason

# The vocabulary (`status.updatestatus.insights.vocabulary`), re-exported: the reader's one import.
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

# --- shapes ------------------------------------------------------------------------------------
#
# What each insight type holds and can tell, without pydantic. The pydantic models
# (`status.updatestatus.insights.models`, the one definition of the API) and the plain classes
# generated from them (`status.updatestatus.insights.plain`: what the computation builds and the
# ConfigMap API's plain readers give) both derive from these, so the renderer, the encoder and the
# controller take either (test by shape, never by class). The attributes are declared for
# the type checker only: each subclass defines them (a model as fields, a plain class in slots).


class ConditionShape:
    __slots__ = ()
    if TYPE_CHECKING:
        type: str
        status: ConditionStatus
        reason: str
        message: str
        last_transition_time: int


C = TypeVar("C", bound=ConditionShape)


def find_condition(conditions: Sequence[C], type_: str) -> C | None:
    for c in conditions:
        if c.type == type_:
            return c
    return None


class ResourceRefShape:
    __slots__ = ()
    if TYPE_CHECKING:
        group: str
        resource: str
        name: str
        namespace: str

    @property
    def kind_label(self) -> str:
        """How oc names the resource type: `<resource>.<group>` (or just `<resource>`)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


class VersionMetadataShape:
    __slots__ = ()
    if TYPE_CHECKING:
        key: VersionMetadataKey
        value: str


class VersionShape:
    __slots__ = ()
    if TYPE_CHECKING:
        version: str
        metadata: Sequence[VersionMetadataShape]

    def has(self, key: VersionMetadataKey) -> bool:
        return any(m.key == key for m in self.metadata)


class ControlPlaneUpdateVersionsShape:
    __slots__ = ()
    if TYPE_CHECKING:
        previous: VersionShape
        target: VersionShape


class NodeSummaryShape:
    __slots__ = ()
    if TYPE_CHECKING:
        type: NodeSummaryType
        count: int


class InsightScopeShape:
    __slots__ = ()
    if TYPE_CHECKING:
        type: ScopeType
        resources: Sequence[ResourceRefShape]


class InsightImpactShape:
    __slots__ = ()
    if TYPE_CHECKING:
        level: ImpactLevel
        type: ImpactType
        summary: str
        description: str


class InsightRemediationShape:
    __slots__ = ()
    if TYPE_CHECKING:
        reference: str
        estimated_finish: int | None


class ClusterVersionInsightShape:
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
    __slots__ = ()
    if TYPE_CHECKING:
        conditions: Sequence[ConditionShape]
        name: str
        resource: ResourceRefShape


class PoolInsightShape:
    __slots__ = ()
    if TYPE_CHECKING:
        conditions: Sequence[ConditionShape]
        name: str
        resource: ResourceRefShape
        scope_type: ScopeType
        assessment: PoolAssessment
        completion: int
        summaries: Sequence[NodeSummaryShape]

    def count(self, type_: NodeSummaryType) -> int:
        for s in self.summaries:
            if s.type == type_:
                return s.count
        return 0


class NodeInsightShape:
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
