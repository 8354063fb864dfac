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

These models are the one hand-written definition of the API (its vocabulary, the enums and
reasons, is in `status.updatestatus.insights.vocabulary`). `hack/gen_plain_insights.py` generates
from them, without pydantic: the shapes they derive from (`status.updatestatus.insights.kinds`),
the plain classes the computation builds and clients read (`status.updatestatus.insights.plain`),
and the readers and writers of their JSON (`status.updatestatus.api.plain`, `.writers`). So a field is added
here only, then the generator is run. The models validate whatever the plain readers do not take;
their JSON (`to_api`) is what the generated writers give, byte for byte.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, model_serializer
from pydantic.alias_generators import to_camel

from cvo_py.runtime.gotext.durations import duration_string, parse_duration
from cvo_py.runtime.gotext.times import from_datetime, parse_time
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


def _time_in(value: Any) -> int:
    if type(value) is str:  # what JSON holds: checked first, this runs for every condition read
        return parse_time(value)
    if isinstance(value, bool):
        raise ValueError("a time must be an RFC 3339 string, not a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return parse_time(value)
    if isinstance(value, datetime):
        return from_datetime(value)
    raise ValueError(f"a time must be an RFC 3339 string, not {type(value).__name__}")


def _duration_in(value: Any) -> int:
    if type(value) is str:
        return parse_duration(value)
    if isinstance(value, bool):
        raise ValueError("a duration must be a Go duration string such as 10m0s, not a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return parse_duration(value)
    raise ValueError(f"a duration must be a Go duration string such as 10m0s, not {type(value).__name__}")


Time = Annotated[int, BeforeValidator(_time_in), PlainSerializer(time_string, when_used="json")]
Duration = Annotated[int, BeforeValidator(_duration_in), PlainSerializer(duration_string, when_used="json")]


class _OmitEmpty:
    """Marks a string field left out of the JSON when it is empty (upstream's `omitempty`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OMIT_EMPTY"


OMIT_EMPTY = _OmitEmpty()


class ApiModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", use_enum_values=False, defer_build=True
    )

    def to_api(self) -> dict[str, Any]:
        """The JSON form: camelCase names, times and durations as strings, unset options omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in _omitted_when_empty(type(self)):
                if data.get(name) == "":
                    del data[name]
        return data


_OMITTED_WHEN_EMPTY: dict[type[BaseModel], tuple[str, ...]] = {}


def _omitted_when_empty(model: type[BaseModel]) -> tuple[str, ...]:
    """The names (and aliases) of the model's fields marked `OMIT_EMPTY`."""
    names = _OMITTED_WHEN_EMPTY.get(model)
    if names is None:
        marked = [
            (name, info.alias or name) for name, info in model.model_fields.items() if OMIT_EMPTY in info.metadata
        ]
        names = _OMITTED_WHEN_EMPTY[model] = tuple(n for pair in marked for n in dict.fromkeys(pair))
    return names


# --- building blocks ---------------------------------------------------------------------------


class Condition(ApiModel, ConditionShape):
    type: str
    status: ConditionStatus
    reason: str
    message: str = ""
    last_transition_time: Time


class ResourceRef(ApiModel, ResourceRefShape):
    group: Annotated[str, OMIT_EMPTY] = ""
    resource: str
    name: str
    namespace: Annotated[str, OMIT_EMPTY] = ""


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
    version: Annotated[str, OMIT_EMPTY] = ""  # upstream: at most 64 characters; read in full (see the module docstring)
    est_to_complete: Duration | None = None
    message: Annotated[str, OMIT_EMPTY] = Field(default="", max_length=NODE_MESSAGE_MAX)


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
