"""The insight API's enums, condition types and reasons, and the shape of each insight type:
everything a reader of insights needs, without pydantic.

`status.updatestatus.insights.models` defines the API (pydantic models; its docstring says what
each type holds) and re-exports all of this. The computation and every `upgrade-status` (live,
snapshot, dump) use this module and the plain classes generated from the models
(`status.updatestatus.insights.plain`), and so run without loading pydantic.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, TypeVar

# --- enums -------------------------------------------------------------------------------------


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class ScopeType(StrEnum):
    CONTROL_PLANE = "ControlPlane"
    WORKER_POOL = "WorkerPool"
    CLUSTER = "Cluster"  # used by oc for alerts; not in the upstream enum


class ClusterVersionAssessment(StrEnum):
    UNKNOWN = "Unknown"
    PROGRESSING = "Progressing"
    COMPLETED = "Completed"
    DEGRADED = "Degraded"


class PoolAssessment(StrEnum):
    PENDING = "Pending"
    COMPLETED = "Completed"
    DEGRADED = "Degraded"
    EXCLUDED = "Excluded"
    PROGRESSING = "Progressing"


class NodeSummaryType(StrEnum):
    TOTAL = "Total"
    AVAILABLE = "Available"
    PROGRESSING = "Progressing"
    OUTDATED = "Outdated"
    DRAINING = "Draining"
    EXCLUDED = "Excluded"
    DEGRADED = "Degraded"


class VersionMetadataKey(StrEnum):
    INSTALLATION = "Installation"
    PARTIAL = "Partial"
    ARCHITECTURE = "Architecture"


class ImpactLevel(StrEnum):
    UNKNOWN = "Unknown"
    INFO = "Info"
    WARNING = "Warning"
    ERROR = "Error"
    CRITICAL = "Critical"

    @property
    def severity(self) -> int:
        """Sort rank, increasing with severity (oc sorts Update Health by it, descending)."""
        return _LEVEL_RANK[self]


_LEVEL_RANK = {
    ImpactLevel.UNKNOWN: -1,
    ImpactLevel.INFO: 0,
    ImpactLevel.WARNING: 1,
    ImpactLevel.ERROR: 2,
    ImpactLevel.CRITICAL: 3,
}


class ImpactType(StrEnum):
    NONE = "None"
    UNKNOWN = "Unknown"
    API_AVAILABILITY = "API Availability"
    CLUSTER_CAPACITY = "Cluster Capacity"
    APPLICATION_AVAILABILITY = "Application Availability"
    APPLICATION_OUTAGE = "Application Outage"
    DATA_LOSS = "Data Loss"
    UPDATE_SPEED = "Update Speed"
    UPDATE_STALLED = "Update Stalled"


NODE_MESSAGE_MAX = 100  # a node insight's message, in characters (longer ones end with "…")


# --- condition types and reasons ---------------------------------------------------------------


class ConditionType:
    UPDATING = "Updating"
    HEALTHY = "Healthy"
    AVAILABLE = "Available"
    DEGRADED = "Degraded"
    PROGRESSING = "Progressing"  # copied from the ClusterVersion / ClusterOperator


class ClusterVersionUpdatingReason:
    PROGRESSING = "ClusterVersionProgressing"
    NOT_PROGRESSING = "ClusterVersionNotProgressing"
    CANNOT_DETERMINE = "CannotDetermineUpdating"


class ClusterOperatorUpdatingReason:
    UPDATED = "Updated"
    PENDING = "Pending"
    PROGRESSING = "Progressing"
    CANNOT_DETERMINE = "CannotDetermine"


class ClusterOperatorHealthyReason:
    AS_EXPECTED = "AsExpected"
    UNAVAILABLE = "Unavailable"
    DEGRADED = "Degraded"
    CANNOT_DETERMINE = "CannotDetermine"


class NodeUpdatingReason:
    DRAINING = "Draining"
    UPDATING = "Updating"
    REBOOTING = "Rebooting"
    PAUSED = "Paused"
    PENDING = "Pending"
    COMPLETED = "Completed"
    CANNOT_DETERMINE = "CannotDetermine"


class NodeAvailableReason:
    """`Available` reasons; several unavailability causes are joined with `,`."""

    AS_EXPECTED = "AsExpected"
    NOT_READY = "NotReady"
    DISK_PRESSURE = "DiskPressure"
    NETWORK_UNAVAILABLE = "NetworkUnavailable"
    UNSCHEDULABLE = "Unschedulable"
    MCD_PROCESSING = "MachineConfigDaemonProcessing"
    UNEXPECTED_IMAGE = "UnexpectedImage"


class NodeDegradedReason:
    AS_EXPECTED = "AsExpected"
    # otherwise the Machine Config Daemon state: Degraded or Unreconcilable


class PoolUpdatingReason:
    UPDATED = "Updated"
    PENDING = "Pending"
    PAUSED = "Paused"
    PROGRESSING = "Progressing"
    CANNOT_DETERMINE = "CannotDetermine"


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
    ClusterVersionInsightShape
    | ClusterOperatorInsightShape
    | PoolInsightShape
    | NodeInsightShape
    | HealthInsightShape
)
