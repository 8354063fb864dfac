"""Status insight types: the update status API's JSON (camelCase) field names, enums and reasons.

The field names follow the UpdateStatus API as the cluster-version-operator's copy defines them
(`update.openshift.io/v1alpha1`): ClusterVersion, ClusterOperator, MachineConfigPool, Node and
Health insights. Times are ints of nanoseconds since the Unix epoch in Python (oc's output depends
on sub-microsecond remainders) and RFC 3339 strings with nanoseconds in JSON/YAML; durations are
ints of nanoseconds in Python and Go duration strings (`10m0s`) in JSON/YAML.

Additions to the upstream types, each needed so a client can print everything oc prints from the
insights alone:

- ClusterVersion insight: the ClusterVersion's own `Progressing` condition is copied into
  `conditions` next to `Updating` (oc decides "is the cluster updating" from it).
- ClusterOperator insight: the operator's own `Progressing` condition is copied into
  `conditions` (oc's operators table shows its age, reason and message).
- Node insight: `Updating` is `Unknown`/`CannotDetermine` when the Machine Config Daemon reports
  `Done` for a node that does not run the target configuration yet (oc prints that node as
  `Updated` but does not count it as updated).
- Health insight: `uid`, the stable identifier also used in its ConfigMap key; scope type
  `Cluster` for alerts (as oc uses it); `startedAt` omitted for a problem without a start time of
  its own (a ClusterVersion without a `Failing` condition: oc dates it "now", which clients do at
  the moment they show it, so the stored insight does not change with the clock).
- ClusterVersion insight: `estimatedCompletedAt` is a function of the cluster's objects, not of
  the clock (see `status.updatestatus.insights.controlplane.clusterversion_insight`).

One schema for writer and reader: strings the controller copies from cluster objects (versions,
condition reasons and messages) are published in full and read in full; the upstream types'
length limits on versions (64) and version metadata values (32) are not enforced on read,
because the API server does not bound those fields in ClusterVersions, Nodes or MachineConfigs
and oc prints them whole. Nothing is truncated on either side (so a client shows what oc shows);
what bounds a value is the ConfigMap's size limit. Limits that computed values always meet
(condition counts, uids, names of objects the API server bounds to 253) stay enforced.

These models are the one definition of the API; `hack/gen_plain_insights.py` generates from them
the plain classes (`status.updatestatus.insights.plain`) the computation builds and clients read
without pydantic. The models validate whatever the plain readers do not take, and write the JSON
(`to_api`; `status.updatestatus.api.encoding` gives them the plain insights it encodes).
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, model_serializer
from pydantic.alias_generators import to_camel

from cvo_py.runtime import gotext
from status.updatestatus.insights.kinds import (  # re-exported: the API's enums, types and reasons
    NODE_MESSAGE_MAX as NODE_MESSAGE_MAX,
)
from status.updatestatus.insights.kinds import (
    ClusterOperatorHealthyReason as ClusterOperatorHealthyReason,
)
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
from status.updatestatus.insights.kinds import ClusterOperatorUpdatingReason as ClusterOperatorUpdatingReason
from status.updatestatus.insights.kinds import ClusterVersionAssessment as ClusterVersionAssessment
from status.updatestatus.insights.kinds import ClusterVersionUpdatingReason as ClusterVersionUpdatingReason
from status.updatestatus.insights.kinds import ConditionStatus as ConditionStatus
from status.updatestatus.insights.kinds import ConditionType as ConditionType
from status.updatestatus.insights.kinds import ImpactLevel as ImpactLevel
from status.updatestatus.insights.kinds import ImpactType as ImpactType
from status.updatestatus.insights.kinds import NodeAvailableReason as NodeAvailableReason
from status.updatestatus.insights.kinds import NodeDegradedReason as NodeDegradedReason
from status.updatestatus.insights.kinds import NodeSummaryType as NodeSummaryType
from status.updatestatus.insights.kinds import NodeUpdatingReason as NodeUpdatingReason
from status.updatestatus.insights.kinds import PoolAssessment as PoolAssessment
from status.updatestatus.insights.kinds import PoolUpdatingReason as PoolUpdatingReason
from status.updatestatus.insights.kinds import ScopeType as ScopeType
from status.updatestatus.insights.kinds import VersionMetadataKey as VersionMetadataKey
from status.updatestatus.insights.kinds import find_condition as find_condition


def _time_in(value: Any) -> int:
    if type(value) is str:  # what JSON holds: checked first, this runs for every condition read
        return gotext.parse_time(value)
    if isinstance(value, bool):
        raise ValueError("a time must be an RFC 3339 string, not a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return gotext.parse_time(value)
    if isinstance(value, datetime):
        return gotext.from_datetime(value)
    raise ValueError(f"a time must be an RFC 3339 string, not {type(value).__name__}")


def _duration_in(value: Any) -> int:
    if type(value) is str:
        return gotext.parse_duration(value)
    if isinstance(value, bool):
        raise ValueError("a duration must be a Go duration string such as 10m0s, not a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return gotext.parse_duration(value)
    raise ValueError(f"a duration must be a Go duration string such as 10m0s, not {type(value).__name__}")


_M = TypeVar("_M", bound=BaseModel)


@functools.lru_cache(maxsize=16384)
def time_string(ns: int) -> str:
    """A Time's JSON form (cached: the insights of one cluster share few distinct instants)."""
    return gotext.format_time(ns)


Time = Annotated[int, BeforeValidator(_time_in), PlainSerializer(time_string, when_used="json")]
Duration = Annotated[int, BeforeValidator(_duration_in), PlainSerializer(gotext.duration_string, when_used="json")]


_FIELDS_SET: dict[type[BaseModel], set[str]] = {}
_set_slot = object.__setattr__  # a model's own __setattr__ validates; these are its plain slots


def construct_fast(cls: type[_M], values: dict[str, Any]) -> _M:
    """An unvalidated instance from computed values; `values` must hold every field.

    What `model_construct` does without its per-field default handling: the controller writes a
    computed (plain) insight through its model (`status.updatestatus.api.encoding.as_model`), one
    model per part, for every insight but nodes'.
    """
    # every field is set, so instances can share one set (pydantic only ever adds field names)
    fields_set = _FIELDS_SET.get(cls)
    if fields_set is None:
        fields_set = _FIELDS_SET[cls] = set(cls.model_fields)
    obj = cls.__new__(cls)
    _set_slot(obj, "__dict__", values)
    _set_slot(obj, "__pydantic_fields_set__", fields_set)
    _set_slot(obj, "__pydantic_extra__", None)
    _set_slot(obj, "__pydantic_private__", None)
    return obj


class ApiModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", use_enum_values=False, defer_build=True
    )

    def to_api(self) -> dict[str, Any]:
        """The JSON form: camelCase names, times and durations as strings, unset options omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


# --- building blocks ---------------------------------------------------------------------------


class Condition(ApiModel, ConditionShape):
    type: str
    status: ConditionStatus
    reason: str
    message: str = ""
    last_transition_time: Time


class ResourceRef(ApiModel, ResourceRefShape):
    group: str = ""
    resource: str
    name: str
    namespace: str = ""

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            if not data.get("group"):
                data.pop("group", None)
            if not data.get("namespace"):
                data.pop("namespace", None)
        return data


class VersionMetadata(ApiModel, VersionMetadataShape):
    key: VersionMetadataKey
    value: str = ""  # upstream: at most 32 characters; read in full (see the module docstring)


class Version(ApiModel, VersionShape):
    version: str  # upstream: at most 64 characters; read in full (see the module docstring)
    metadata: list[VersionMetadata] = Field(default_factory=list, max_length=5)


class ControlPlaneUpdateVersions(ApiModel, ControlPlaneUpdateVersionsShape):
    previous: Version
    target: Version


class NodeSummary(ApiModel, NodeSummaryShape):
    type: NodeSummaryType
    count: int = Field(ge=0)


class InsightScope(ApiModel, InsightScopeShape):
    type: ScopeType
    resources: list[ResourceRef] = Field(default_factory=list)


class InsightImpact(ApiModel, InsightImpactShape):
    level: ImpactLevel
    type: ImpactType
    summary: str
    description: str = ""


class InsightRemediation(ApiModel, InsightRemediationShape):
    reference: str
    estimated_finish: Time | None = None


# --- insights ----------------------------------------------------------------------------------


class ClusterVersionStatusInsight(ApiModel, ClusterVersionInsightShape):
    conditions: list[Condition] = Field(default_factory=list, max_length=10)
    resource: ResourceRef
    assessment: ClusterVersionAssessment
    versions: ControlPlaneUpdateVersions
    completion: int = Field(ge=0, le=100)
    started_at: Time
    completed_at: Time | None = None
    estimated_completed_at: Time | None = None


class ClusterOperatorStatusInsight(ApiModel, ClusterOperatorInsightShape):
    conditions: list[Condition] = Field(default_factory=list, max_length=10)
    name: str = Field(min_length=1, max_length=253)
    resource: ResourceRef


class MachineConfigPoolStatusInsight(ApiModel, PoolInsightShape):
    conditions: list[Condition] = Field(default_factory=list, max_length=10)
    name: str = Field(min_length=1, max_length=253)
    resource: ResourceRef
    scope_type: ScopeType
    assessment: PoolAssessment
    completion: int = Field(ge=0, le=100)
    summaries: list[NodeSummary] = Field(default_factory=list, max_length=16)


class NodeStatusInsight(ApiModel, NodeInsightShape):
    conditions: list[Condition] = Field(default_factory=list, max_length=10)
    name: str = Field(min_length=1, max_length=253)
    resource: ResourceRef
    pool_resource: ResourceRef
    scope_type: ScopeType
    version: str = ""  # upstream: at most 64 characters; read in full (see the module docstring)
    est_to_complete: Duration | None = None
    message: str = Field(default="", max_length=NODE_MESSAGE_MAX)

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in ("version", "message"):
                if data.get(key) == "":
                    data.pop(key)
        return data


class HealthInsight(ApiModel, HealthInsightShape):
    uid: str = Field(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    started_at: Time | None = None  # None: no start of its own, shown as starting "now"
    scope: InsightScope
    impact: InsightImpact
    remediation: InsightRemediation


Insight = (
    ClusterVersionStatusInsight
    | ClusterOperatorStatusInsight
    | MachineConfigPoolStatusInsight
    | NodeStatusInsight
    | HealthInsight
)


def build_schemas() -> None:
    """Build every insight model's validator and serializer now (they are deferred: a one-shot
    `upgrade-status` that never validates a type should not pay for it). A long-running
    controller calls this once at start-up, so no worker thread builds one on first use."""
    _build(ApiModel)


def _build(model: type[BaseModel]) -> None:
    model.model_rebuild()
    for sub in model.__subclasses__():
        _build(sub)
