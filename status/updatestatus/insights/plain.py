"""Plain classes of the insight types, generated from the pydantic models by
hack/gen_plain_insights.py: do not edit.

What the pure computation (`status.updatestatus.insights.compute`) builds and the ConfigMap API's
plain readers (`status.updatestatus.api.plain`) return: slots holding the model's fields, and `==`
by shape (`status.updatestatus.insights.kinds`), so a plain object equals the model holding the
same values (the models, `status.updatestatus.insights.models`, remain the definition: they
validate what the plain readers refuse).
"""

from __future__ import annotations

from status.updatestatus.insights.kinds import (
    ClusterOperatorInsightShape,
    ClusterVersionInsightShape,
    ConditionShape,
    ControlPlaneUpdateVersionsShape,
    HealthInsightShape,
    InsightImpactShape,
    InsightRemediationShape,
    InsightScopeShape,
    NodeInsightShape,
    NodeSummaryShape,
    PoolInsightShape,
    ResourceRefShape,
    VersionMetadataShape,
    VersionShape,
)
from status.updatestatus.insights.vocabulary import (
    ClusterVersionAssessment,
    ConditionStatus,
    ImpactLevel,
    ImpactType,
    NodeSummaryType,
    PoolAssessment,
    ScopeType,
    VersionMetadataKey,
)

__all__ = [
    "ClusterOperatorStatusInsight",
    "ClusterVersionStatusInsight",
    "Condition",
    "ControlPlaneUpdateVersions",
    "HealthInsight",
    "Insight",
    "InsightImpact",
    "InsightRemediation",
    "InsightScope",
    "MachineConfigPoolStatusInsight",
    "NodeStatusInsight",
    "NodeSummary",
    "ResourceRef",
    "Version",
    "VersionMetadata",
]


def equal_by_shape(obj: object, other: object, shape: type, names: tuple[str, ...]) -> bool:
    """Equal to anything of the same shape holding equal values: a plain object and the
    model read from the same value compare equal (a model's own `==` defers to this)."""
    return isinstance(other, shape) and all(getattr(obj, n) == getattr(other, n) for n in names)


def repr_of_slots(obj: object, names: tuple[str, ...]) -> str:
    return f"{type(obj).__name__}({', '.join(f'{n}={getattr(obj, n)!r}' for n in names)})"


class Condition(ConditionShape):
    """Condition without pydantic (see the module docstring)."""

    __slots__ = (
        "type",
        "status",
        "reason",
        "message",
        "last_transition_time",
    )

    type: str
    status: ConditionStatus
    reason: str
    message: str
    last_transition_time: int

    def __init__(
        self, type: str, status: ConditionStatus, reason: str, message: str, last_transition_time: int
    ) -> None:
        self.type = type
        self.status = status
        self.reason = reason
        self.message = message
        self.last_transition_time = last_transition_time

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, ConditionShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class ResourceRef(ResourceRefShape):
    """ResourceRef without pydantic (see the module docstring)."""

    __slots__ = (
        "group",
        "resource",
        "name",
        "namespace",
    )

    group: str
    resource: str
    name: str
    namespace: str

    def __init__(self, group: str, resource: str, name: str, namespace: str = "") -> None:
        self.group = group
        self.resource = resource
        self.name = name
        self.namespace = namespace

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, ResourceRefShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class VersionMetadata(VersionMetadataShape):
    """VersionMetadata without pydantic (see the module docstring)."""

    __slots__ = (
        "key",
        "value",
    )

    key: VersionMetadataKey
    value: str

    def __init__(self, key: VersionMetadataKey, value: str = "") -> None:
        self.key = key
        self.value = value

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, VersionMetadataShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class Version(VersionShape):
    """Version without pydantic (see the module docstring)."""

    __slots__ = (
        "version",
        "metadata",
    )

    version: str
    metadata: list[VersionMetadata]

    def __init__(self, version: str, metadata: list[VersionMetadata]) -> None:
        self.version = version
        self.metadata = metadata

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, VersionShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class ControlPlaneUpdateVersions(ControlPlaneUpdateVersionsShape):
    """ControlPlaneUpdateVersions without pydantic (see the module docstring)."""

    __slots__ = (
        "previous",
        "target",
    )

    previous: Version
    target: Version

    def __init__(self, previous: Version, target: Version) -> None:
        self.previous = previous
        self.target = target

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, ControlPlaneUpdateVersionsShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class NodeSummary(NodeSummaryShape):
    """NodeSummary without pydantic (see the module docstring)."""

    __slots__ = (
        "type",
        "count",
    )

    type: NodeSummaryType
    count: int

    def __init__(self, type: NodeSummaryType, count: int) -> None:
        self.type = type
        self.count = count

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, NodeSummaryShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class InsightScope(InsightScopeShape):
    """InsightScope without pydantic (see the module docstring)."""

    __slots__ = (
        "type",
        "resources",
    )

    type: ScopeType
    resources: list[ResourceRef]

    def __init__(self, type: ScopeType, resources: list[ResourceRef]) -> None:
        self.type = type
        self.resources = resources

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, InsightScopeShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class InsightImpact(InsightImpactShape):
    """InsightImpact without pydantic (see the module docstring)."""

    __slots__ = (
        "level",
        "type",
        "summary",
        "description",
    )

    level: ImpactLevel
    type: ImpactType
    summary: str
    description: str

    def __init__(self, level: ImpactLevel, type: ImpactType, summary: str, description: str = "") -> None:
        self.level = level
        self.type = type
        self.summary = summary
        self.description = description

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, InsightImpactShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class InsightRemediation(InsightRemediationShape):
    """InsightRemediation without pydantic (see the module docstring)."""

    __slots__ = (
        "reference",
        "estimated_finish",
    )

    reference: str
    estimated_finish: int | None

    def __init__(self, reference: str, estimated_finish: int | None = None) -> None:
        self.reference = reference
        self.estimated_finish = estimated_finish

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, InsightRemediationShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class ClusterVersionStatusInsight(ClusterVersionInsightShape):
    """ClusterVersionStatusInsight without pydantic (see the module docstring)."""

    __slots__ = (
        "conditions",
        "resource",
        "assessment",
        "versions",
        "completion",
        "started_at",
        "completed_at",
        "estimated_completed_at",
    )

    conditions: list[Condition]
    resource: ResourceRef
    assessment: ClusterVersionAssessment
    versions: ControlPlaneUpdateVersions
    completion: int
    started_at: int
    completed_at: int | None
    estimated_completed_at: int | None

    def __init__(
        self,
        conditions: list[Condition],
        resource: ResourceRef,
        assessment: ClusterVersionAssessment,
        versions: ControlPlaneUpdateVersions,
        completion: int,
        started_at: int,
        completed_at: int | None = None,
        estimated_completed_at: int | None = None,
    ) -> None:
        self.conditions = conditions
        self.resource = resource
        self.assessment = assessment
        self.versions = versions
        self.completion = completion
        self.started_at = started_at
        self.completed_at = completed_at
        self.estimated_completed_at = estimated_completed_at

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, ClusterVersionInsightShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class ClusterOperatorStatusInsight(ClusterOperatorInsightShape):
    """ClusterOperatorStatusInsight without pydantic (see the module docstring)."""

    __slots__ = (
        "conditions",
        "name",
        "resource",
    )

    conditions: list[Condition]
    name: str
    resource: ResourceRef

    def __init__(self, conditions: list[Condition], name: str, resource: ResourceRef) -> None:
        self.conditions = conditions
        self.name = name
        self.resource = resource

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, ClusterOperatorInsightShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class MachineConfigPoolStatusInsight(PoolInsightShape):
    """MachineConfigPoolStatusInsight without pydantic (see the module docstring)."""

    __slots__ = (
        "conditions",
        "name",
        "resource",
        "scope_type",
        "assessment",
        "completion",
        "summaries",
    )

    conditions: list[Condition]
    name: str
    resource: ResourceRef
    scope_type: ScopeType
    assessment: PoolAssessment
    completion: int
    summaries: list[NodeSummary]

    def __init__(
        self,
        conditions: list[Condition],
        name: str,
        resource: ResourceRef,
        scope_type: ScopeType,
        assessment: PoolAssessment,
        completion: int,
        summaries: list[NodeSummary],
    ) -> None:
        self.conditions = conditions
        self.name = name
        self.resource = resource
        self.scope_type = scope_type
        self.assessment = assessment
        self.completion = completion
        self.summaries = summaries

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, PoolInsightShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class NodeStatusInsight(NodeInsightShape):
    """NodeStatusInsight without pydantic (see the module docstring)."""

    __slots__ = (
        "conditions",
        "name",
        "resource",
        "pool_resource",
        "scope_type",
        "version",
        "est_to_complete",
        "message",
    )

    conditions: list[Condition]
    name: str
    resource: ResourceRef
    pool_resource: ResourceRef
    scope_type: ScopeType
    version: str
    est_to_complete: int | None
    message: str

    def __init__(
        self,
        conditions: list[Condition],
        name: str,
        resource: ResourceRef,
        pool_resource: ResourceRef,
        scope_type: ScopeType,
        version: str = "",
        est_to_complete: int | None = None,
        message: str = "",
    ) -> None:
        self.conditions = conditions
        self.name = name
        self.resource = resource
        self.pool_resource = pool_resource
        self.scope_type = scope_type
        self.version = version
        self.est_to_complete = est_to_complete
        self.message = message

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, NodeInsightShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class HealthInsight(HealthInsightShape):
    """HealthInsight without pydantic (see the module docstring)."""

    __slots__ = (
        "uid",
        "started_at",
        "scope",
        "impact",
        "remediation",
    )

    uid: str
    started_at: int | None
    scope: InsightScope
    impact: InsightImpact
    remediation: InsightRemediation

    def __init__(
        self,
        uid: str,
        started_at: int | None,
        scope: InsightScope,
        impact: InsightImpact,
        remediation: InsightRemediation,
    ) -> None:
        self.uid = uid
        self.started_at = started_at
        self.scope = scope
        self.impact = impact
        self.remediation = remediation

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, HealthInsightShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


Insight = (
    ClusterVersionStatusInsight
    | ClusterOperatorStatusInsight
    | MachineConfigPoolStatusInsight
    | NodeStatusInsight
    | HealthInsight
)
