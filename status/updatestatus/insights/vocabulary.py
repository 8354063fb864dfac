"""The insight API's vocabulary: its enums, condition types and reasons, the bound on a node
insight's message, how a time is written, and finding a condition; what the models
(`status.updatestatus.insights.models`), the code generated from them and every reader name values
with, without pydantic. `status.updatestatus.insights.kinds` re-exports all of it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol, TypeVar

from cvo_py.runtime.gotext.times import format_time

__all__ = [
    "NODE_MESSAGE_MAX",
    "ClusterOperatorHealthyReason",
    "ClusterOperatorUpdatingReason",
    "ClusterVersionAssessment",
    "ClusterVersionUpdatingReason",
    "ConditionStatus",
    "ConditionType",
    "ImpactLevel",
    "ImpactType",
    "NodeAvailableReason",
    "NodeDegradedReason",
    "NodeSummaryType",
    "NodeUpdatingReason",
    "PoolAssessment",
    "PoolUpdatingReason",
    "ScopeType",
    "VersionMetadataKey",
    "find_condition",
    "time_string",
]

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


# --- times and conditions ----------------------------------------------------------------------


@functools.lru_cache(maxsize=16384)
def time_string(ns: int) -> str:
    """A Time's JSON form (cached: the insights of one cluster share few distinct instants)."""
    return format_time(ns)


class _Typed(Protocol):
    """What `find_condition` needs of a condition (the shapes import this module: no cycle)."""

    @property
    def type(self) -> str: ...


C = TypeVar("C", bound=_Typed)


def find_condition(conditions: Sequence[C], type_: str) -> C | None:
    """The first condition of the type, as oc takes it."""
    for c in conditions:
        if c.type == type_:
            return c
    return None
