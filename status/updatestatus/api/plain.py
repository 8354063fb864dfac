"""The ConfigMap API's plain readers, and the shapes and plain classes of its publication metadata,
generated from the pydantic models by hack/gen_plain_insights.py (whose docstring says what they
take): do not edit.

A reader takes a JSON value (as `json.loads` gives it) and returns the plain object (an insight's
class is in `status.updatestatus.insights.plain`), or raises `NotPlain` (or KeyError, TypeError,
ValueError) for anything it does not take.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cvo_py.runtime.gotext.durations import parse_duration
from cvo_py.runtime.gotext.times import parse_time
from status.updatestatus.insights.plain import (
    ClusterOperatorStatusInsight,
    ClusterVersionStatusInsight,
    Condition,
    ControlPlaneUpdateVersions,
    HealthInsight,
    InsightImpact,
    InsightRemediation,
    InsightScope,
    MachineConfigPoolStatusInsight,
    NodeStatusInsight,
    NodeSummary,
    ResourceRef,
    Version,
    VersionMetadata,
    equal_by_shape,
    repr_of_slots,
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


class NotPlain(Exception):
    """A value the plain readers do not take: the models judge it."""


_DEFAULT: Any = object()  # a field left out

_CLUSTERVERSIONASSESSMENT = {member.value: member for member in ClusterVersionAssessment}
_CONDITIONSTATUS = {member.value: member for member in ConditionStatus}
_IMPACTLEVEL = {member.value: member for member in ImpactLevel}
_IMPACTTYPE = {member.value: member for member in ImpactType}
_NODESUMMARYTYPE = {member.value: member for member in NodeSummaryType}
_POOLASSESSMENT = {member.value: member for member in PoolAssessment}
_SCOPETYPE = {member.value: member for member in ScopeType}
_VERSIONMETADATAKEY = {member.value: member for member in VersionMetadataKey}
_PATTERN_0 = re.compile("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_KEYS_CONDITION = frozenset({"lastTransitionTime", "message", "reason", "status", "type"})
_KEYS_RESOURCE_REF = frozenset({"group", "name", "namespace", "resource"})
_KEYS_VERSION_METADATA = frozenset({"key", "value"})
_KEYS_VERSION = frozenset({"metadata", "version"})
_KEYS_CONTROL_PLANE_UPDATE_VERSIONS = frozenset({"previous", "target"})
_KEYS_NODE_SUMMARY = frozenset({"count", "type"})
_KEYS_INSIGHT_SCOPE = frozenset({"resources", "type"})
_KEYS_INSIGHT_IMPACT = frozenset({"description", "level", "summary", "type"})
_KEYS_INSIGHT_REMEDIATION = frozenset({"estimatedFinish", "reference"})
_KEYS_CLUSTER_VERSION_STATUS_INSIGHT = frozenset(
    {
        "assessment",
        "completedAt",
        "completion",
        "conditions",
        "estimatedCompletedAt",
        "resource",
        "startedAt",
        "versions",
    }
)
_KEYS_CLUSTER_OPERATOR_STATUS_INSIGHT = frozenset({"conditions", "name", "resource"})
_KEYS_MACHINE_CONFIG_POOL_STATUS_INSIGHT = frozenset(
    {"assessment", "completion", "conditions", "name", "resource", "scopeType", "summaries"}
)
_KEYS_NODE_STATUS_INSIGHT = frozenset(
    {"conditions", "estToComplete", "message", "name", "poolResource", "resource", "scopeType", "version"}
)
_KEYS_HEALTH_INSIGHT = frozenset({"impact", "remediation", "scope", "startedAt", "uid"})
_KEYS_CONTROLLER_IDENTITY = frozenset({"identity", "version"})
_KEYS_OMITTED = frozenset({"count", "keys", "kinds"})
_KEYS_PUBLICATION_METADATA = frozenset({"computedAt", "controller", "omitted", "paced", "resyncPeriod"})


class ControllerIdentityShape:
    """What a ControllerIdentity holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        identity: str
        version: str


class OmittedShape:
    """What a Omitted holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        count: int
        kinds: Mapping[str, int]
        keys: Sequence[str]


class PublicationMetadataShape:
    """What a PublicationMetadata holds: its model and its plain class derive from this."""

    __slots__ = ()
    if TYPE_CHECKING:
        computed_at: int
        controller: ControllerIdentityShape
        resync_period: int
        omitted: OmittedShape
        paced: bool


class ControllerIdentity(ControllerIdentityShape):
    """ControllerIdentity without pydantic (see the module docstring)."""

    __slots__ = (
        "identity",
        "version",
    )

    identity: str
    version: str

    def __init__(self, identity: str = "", version: str = "") -> None:
        self.identity = identity
        self.version = version

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, ControllerIdentityShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class Omitted(OmittedShape):
    """Omitted without pydantic (see the module docstring)."""

    __slots__ = (
        "count",
        "kinds",
        "keys",
    )

    count: int
    kinds: dict[str, int]
    keys: list[str]

    def __init__(self, count: int, kinds: dict[str, int], keys: list[str]) -> None:
        self.count = count
        self.kinds = kinds
        self.keys = keys

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, OmittedShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


class PublicationMetadata(PublicationMetadataShape):
    """PublicationMetadata without pydantic (see the module docstring)."""

    __slots__ = (
        "computed_at",
        "controller",
        "resync_period",
        "omitted",
        "paced",
    )

    computed_at: int
    controller: ControllerIdentity
    resync_period: int
    omitted: Omitted
    paced: bool

    def __init__(
        self,
        computed_at: int,
        controller: ControllerIdentity,
        resync_period: int,
        omitted: Omitted,
        paced: bool = False,
    ) -> None:
        self.computed_at = computed_at
        self.controller = controller
        self.resync_period = resync_period
        self.omitted = omitted
        self.paced = paced

    def __eq__(self, other: object) -> bool:
        return equal_by_shape(self, other, PublicationMetadataShape, self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the models

    def __repr__(self) -> str:
        return repr_of_slots(self, self.__slots__)


def read_condition(v: Any) -> Condition:
    if type(v) is not dict or not _KEYS_CONDITION.issuperset(v):
        raise NotPlain
    f0 = v["type"]
    if type(f0) is not str:
        raise NotPlain
    f1 = v["status"]
    f2 = v["reason"]
    if type(f2) is not str:
        raise NotPlain
    f3 = v["message"] if "message" in v else _DEFAULT
    if f3 is _DEFAULT:
        f3_field = ""
    else:
        if type(f3) is not str:
            raise NotPlain
        f3_field = f3
    f4 = v["lastTransitionTime"]
    if type(f4) is not str:
        raise NotPlain
    return Condition(f0, _CONDITIONSTATUS[f1], f2, f3_field, parse_time(f4))


def read_resource_ref(v: Any) -> ResourceRef:
    if type(v) is not dict or not _KEYS_RESOURCE_REF.issuperset(v):
        raise NotPlain
    f0 = v["group"] if "group" in v else _DEFAULT
    if f0 is _DEFAULT:
        f0_field = ""
    else:
        if type(f0) is not str:
            raise NotPlain
        f0_field = f0
    f1 = v["resource"]
    if type(f1) is not str:
        raise NotPlain
    f2 = v["name"]
    if type(f2) is not str:
        raise NotPlain
    f3 = v["namespace"] if "namespace" in v else _DEFAULT
    if f3 is _DEFAULT:
        f3_field = ""
    else:
        if type(f3) is not str:
            raise NotPlain
        f3_field = f3
    return ResourceRef(f0_field, f1, f2, f3_field)


def read_version_metadata(v: Any) -> VersionMetadata:
    if type(v) is not dict or not _KEYS_VERSION_METADATA.issuperset(v):
        raise NotPlain
    f0 = v["key"]
    f1 = v["value"] if "value" in v else _DEFAULT
    if f1 is _DEFAULT:
        f1_field = ""
    else:
        if type(f1) is not str:
            raise NotPlain
        f1_field = f1
    return VersionMetadata(_VERSIONMETADATAKEY[f0], f1_field)


def read_version(v: Any) -> Version:
    if type(v) is not dict or not _KEYS_VERSION.issuperset(v):
        raise NotPlain
    f0 = v["version"]
    if type(f0) is not str:
        raise NotPlain
    f1 = v["metadata"] if "metadata" in v else _DEFAULT
    if f1 is _DEFAULT:
        f1_field = []
    else:
        if type(f1) is not list or len(f1) > 5:
            raise NotPlain
        f1_field = [read_version_metadata(item) for item in f1]
    return Version(f0, f1_field)


def read_control_plane_update_versions(v: Any) -> ControlPlaneUpdateVersions:
    if type(v) is not dict or not _KEYS_CONTROL_PLANE_UPDATE_VERSIONS.issuperset(v):
        raise NotPlain
    f0 = v["previous"]
    f1 = v["target"]
    return ControlPlaneUpdateVersions(read_version(f0), read_version(f1))


def read_node_summary(v: Any) -> NodeSummary:
    if type(v) is not dict or not _KEYS_NODE_SUMMARY.issuperset(v):
        raise NotPlain
    f0 = v["type"]
    f1 = v["count"]
    if type(f1) is not int or f1 < 0:
        raise NotPlain
    return NodeSummary(_NODESUMMARYTYPE[f0], f1)


def read_insight_scope(v: Any) -> InsightScope:
    if type(v) is not dict or not _KEYS_INSIGHT_SCOPE.issuperset(v):
        raise NotPlain
    f0 = v["type"]
    f1 = v["resources"] if "resources" in v else _DEFAULT
    if f1 is _DEFAULT:
        f1_field = []
    else:
        if type(f1) is not list:
            raise NotPlain
        f1_field = [read_resource_ref(item) for item in f1]
    return InsightScope(_SCOPETYPE[f0], f1_field)


def read_insight_impact(v: Any) -> InsightImpact:
    if type(v) is not dict or not _KEYS_INSIGHT_IMPACT.issuperset(v):
        raise NotPlain
    f0 = v["level"]
    f1 = v["type"]
    f2 = v["summary"]
    if type(f2) is not str:
        raise NotPlain
    f3 = v["description"] if "description" in v else _DEFAULT
    if f3 is _DEFAULT:
        f3_field = ""
    else:
        if type(f3) is not str:
            raise NotPlain
        f3_field = f3
    return InsightImpact(_IMPACTLEVEL[f0], _IMPACTTYPE[f1], f2, f3_field)


def read_insight_remediation(v: Any) -> InsightRemediation:
    if type(v) is not dict or not _KEYS_INSIGHT_REMEDIATION.issuperset(v):
        raise NotPlain
    f0 = v["reference"]
    if type(f0) is not str:
        raise NotPlain
    f1 = v["estimatedFinish"] if "estimatedFinish" in v else _DEFAULT
    if f1 is _DEFAULT:
        f1_field = None
    else:
        if f1 is None:
            f1_value = None
        else:
            if type(f1) is not str:
                raise NotPlain
            f1_value = parse_time(f1)
        f1_field = f1_value
    return InsightRemediation(f0, f1_field)


def read_cluster_version_status_insight(v: Any) -> ClusterVersionStatusInsight:
    if type(v) is not dict or not _KEYS_CLUSTER_VERSION_STATUS_INSIGHT.issuperset(v):
        raise NotPlain
    f0 = v["conditions"] if "conditions" in v else _DEFAULT
    if f0 is _DEFAULT:
        f0_field = []
    else:
        if type(f0) is not list or len(f0) > 10:
            raise NotPlain
        f0_field = [read_condition(item) for item in f0]
    f1 = v["resource"]
    f2 = v["assessment"]
    f3 = v["versions"]
    f4 = v["completion"]
    if type(f4) is not int or f4 < 0 or f4 > 100:
        raise NotPlain
    f5 = v["startedAt"]
    if type(f5) is not str:
        raise NotPlain
    f6 = v["completedAt"] if "completedAt" in v else _DEFAULT
    if f6 is _DEFAULT:
        f6_field = None
    else:
        if f6 is None:
            f6_value = None
        else:
            if type(f6) is not str:
                raise NotPlain
            f6_value = parse_time(f6)
        f6_field = f6_value
    f7 = v["estimatedCompletedAt"] if "estimatedCompletedAt" in v else _DEFAULT
    if f7 is _DEFAULT:
        f7_field = None
    else:
        if f7 is None:
            f7_value = None
        else:
            if type(f7) is not str:
                raise NotPlain
            f7_value = parse_time(f7)
        f7_field = f7_value
    return ClusterVersionStatusInsight(
        f0_field,
        read_resource_ref(f1),
        _CLUSTERVERSIONASSESSMENT[f2],
        read_control_plane_update_versions(f3),
        f4,
        parse_time(f5),
        f6_field,
        f7_field,
    )


def read_cluster_operator_status_insight(v: Any) -> ClusterOperatorStatusInsight:
    if type(v) is not dict or not _KEYS_CLUSTER_OPERATOR_STATUS_INSIGHT.issuperset(v):
        raise NotPlain
    f0 = v["conditions"] if "conditions" in v else _DEFAULT
    if f0 is _DEFAULT:
        f0_field = []
    else:
        if type(f0) is not list or len(f0) > 10:
            raise NotPlain
        f0_field = [read_condition(item) for item in f0]
    f1 = v["name"]
    if type(f1) is not str or len(f1) < 1 or len(f1) > 253:
        raise NotPlain
    f2 = v["resource"]
    return ClusterOperatorStatusInsight(f0_field, f1, read_resource_ref(f2))


def read_machine_config_pool_status_insight(v: Any) -> MachineConfigPoolStatusInsight:
    if type(v) is not dict or not _KEYS_MACHINE_CONFIG_POOL_STATUS_INSIGHT.issuperset(v):
        raise NotPlain
    f0 = v["conditions"] if "conditions" in v else _DEFAULT
    if f0 is _DEFAULT:
        f0_field = []
    else:
        if type(f0) is not list or len(f0) > 10:
            raise NotPlain
        f0_field = [read_condition(item) for item in f0]
    f1 = v["name"]
    if type(f1) is not str or len(f1) < 1 or len(f1) > 253:
        raise NotPlain
    f2 = v["resource"]
    f3 = v["scopeType"]
    f4 = v["assessment"]
    f5 = v["completion"]
    if type(f5) is not int or f5 < 0 or f5 > 100:
        raise NotPlain
    f6 = v["summaries"] if "summaries" in v else _DEFAULT
    if f6 is _DEFAULT:
        f6_field = []
    else:
        if type(f6) is not list or len(f6) > 16:
            raise NotPlain
        f6_field = [read_node_summary(item) for item in f6]
    return MachineConfigPoolStatusInsight(
        f0_field, f1, read_resource_ref(f2), _SCOPETYPE[f3], _POOLASSESSMENT[f4], f5, f6_field
    )


def read_node_status_insight(v: Any) -> NodeStatusInsight:
    if type(v) is not dict or not _KEYS_NODE_STATUS_INSIGHT.issuperset(v):
        raise NotPlain
    f0 = v["conditions"] if "conditions" in v else _DEFAULT
    if f0 is _DEFAULT:
        f0_field = []
    else:
        if type(f0) is not list or len(f0) > 10:
            raise NotPlain
        f0_field = [read_condition(item) for item in f0]
    f1 = v["name"]
    if type(f1) is not str or len(f1) < 1 or len(f1) > 253:
        raise NotPlain
    f2 = v["resource"]
    f3 = v["poolResource"]
    f4 = v["scopeType"]
    f5 = v["version"] if "version" in v else _DEFAULT
    if f5 is _DEFAULT:
        f5_field = ""
    else:
        if type(f5) is not str:
            raise NotPlain
        f5_field = f5
    f6 = v["estToComplete"] if "estToComplete" in v else _DEFAULT
    if f6 is _DEFAULT:
        f6_field = None
    else:
        if f6 is None:
            f6_value = None
        else:
            if type(f6) is not str:
                raise NotPlain
            f6_value = parse_duration(f6)
        f6_field = f6_value
    f7 = v["message"] if "message" in v else _DEFAULT
    if f7 is _DEFAULT:
        f7_field = ""
    else:
        if type(f7) is not str or len(f7) > 100:
            raise NotPlain
        f7_field = f7
    return NodeStatusInsight(
        f0_field, f1, read_resource_ref(f2), read_resource_ref(f3), _SCOPETYPE[f4], f5_field, f6_field, f7_field
    )


def read_health_insight(v: Any) -> HealthInsight:
    if type(v) is not dict or not _KEYS_HEALTH_INSIGHT.issuperset(v):
        raise NotPlain
    f0 = v["uid"]
    if type(f0) is not str or len(f0) < 1 or len(f0) > 63 or _PATTERN_0.fullmatch(f0) is None:
        raise NotPlain
    f1 = v["startedAt"] if "startedAt" in v else _DEFAULT
    if f1 is _DEFAULT:
        f1_field = None
    else:
        if f1 is None:
            f1_value = None
        else:
            if type(f1) is not str:
                raise NotPlain
            f1_value = parse_time(f1)
        f1_field = f1_value
    f2 = v["scope"]
    f3 = v["impact"]
    f4 = v["remediation"]
    return HealthInsight(f0, f1_field, read_insight_scope(f2), read_insight_impact(f3), read_insight_remediation(f4))


def read_controller_identity(v: Any) -> ControllerIdentity:
    if type(v) is not dict or not _KEYS_CONTROLLER_IDENTITY.issuperset(v):
        raise NotPlain
    f0 = v["identity"] if "identity" in v else _DEFAULT
    if f0 is _DEFAULT:
        f0_field = ""
    else:
        if type(f0) is not str or len(f0) > 253:
            raise NotPlain
        f0_field = f0
    f1 = v["version"] if "version" in v else _DEFAULT
    if f1 is _DEFAULT:
        f1_field = ""
    else:
        if type(f1) is not str or len(f1) > 64:
            raise NotPlain
        f1_field = f1
    return ControllerIdentity(f0_field, f1_field)


def read_omitted(v: Any) -> Omitted:
    if type(v) is not dict or not _KEYS_OMITTED.issuperset(v):
        raise NotPlain
    f0 = v["count"] if "count" in v else _DEFAULT
    if f0 is _DEFAULT:
        f0_field = 0
    else:
        if type(f0) is not int or f0 < 0:
            raise NotPlain
        f0_field = f0
    f1 = v["kinds"] if "kinds" in v else _DEFAULT
    if f1 is _DEFAULT:
        f1_field = {}
    else:
        if type(f1) is not dict or any(type(k) is not str or type(n) is not int for k, n in f1.items()):
            raise NotPlain
        f1_field = dict(f1)
    f2 = v["keys"] if "keys" in v else _DEFAULT
    if f2 is _DEFAULT:
        f2_field = []
    else:
        if type(f2) is not list or len(f2) > 100:
            raise NotPlain
        if any(type(item) is not str for item in f2):
            raise NotPlain
        f2_field = list(f2)
    return Omitted(f0_field, f1_field, f2_field)


def read_publication_metadata(v: Any) -> PublicationMetadata:
    if type(v) is not dict or not _KEYS_PUBLICATION_METADATA.issuperset(v):
        raise NotPlain
    f0 = v["computedAt"]
    if type(f0) is not str:
        raise NotPlain
    f1 = v["controller"] if "controller" in v else _DEFAULT
    if f1 is _DEFAULT:
        f1_field = read_controller_identity({})
    else:
        f1_field = read_controller_identity(f1)
    f2 = v["resyncPeriod"]
    if type(f2) is not str:
        raise NotPlain
    f3 = v["omitted"] if "omitted" in v else _DEFAULT
    if f3 is _DEFAULT:
        f3_field = read_omitted({})
    else:
        f3_field = read_omitted(f3)
    f4 = v["paced"] if "paced" in v else _DEFAULT
    if f4 is _DEFAULT:
        f4_field = False
    else:
        if type(f4) is not bool:
            raise NotPlain
        f4_field = f4
    return PublicationMetadata(parse_time(f0), f1_field, parse_duration(f2), f3_field, f4_field)
