"""The `Upgradeable` condition, as upstream computes it from 4.23 on (pure).

Each source gives risks that block minor and major updates (patch updates stay allowed, see
`status.clusterversion.preconditions`); they are collected in upstream's source order and sorted
within a source:

1. the cluster version is updating (`Progressing=True`): `ClusterVersionUpdating`;
2. `spec.overrides` with `unmanaged: true`: `ClusterVersionOverrides`;
3. resource deletions in progress (objects of manifests annotated `release.openshift.io/delete`
   whose removal the sync worker asked for and that are still there):
   `ResourceDeletionInProgress`, naming them sorted;
4. admin-ack gates of the running version (`openshift-config-managed/admin-gates`) not acked in
   `openshift-config/admin-acks`: `AdminAck-<gate>`; a gate named wrongly or without text is a
   risk of that name too, and a ConfigMap that cannot be read (missing included) or a running
   version that is not semver is `AdminAckUnknown`;
5. ClusterOperators with `Upgradeable=False`: `ClusterOperatorUpgradeable-<name>`; a running
   version that is not semver is `ClusterOperatorUpgradeableUnknown`.

A source that cannot be evaluated blocks, as upstream's does: not knowing whether an update is safe
is a risk. No risk: no condition (upstream never writes `Upgradeable=True`). One risk: its name as
the reason (when it can be one), its message. Several: `MultipleReasons` and a bulleted list.
Upstream writes `Unknown`/`EvaluationFailed` only for a source error that gave no risk; every error
of the sources cvo-py runs gives one. Releases up to 4.22 also wrote `Upgradeable=False` for these
errors, with reasons of their own (`UnableToAccessAdminGatesConfigMap`,
`AdminAckConfigMapGateNameError`, ...), and added `Upgradeable<Check>` sub-conditions; 4.23+
removes those, and so does cvo-py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cvo_py.runtime.urls import url_problem
from updateservice import semver

UPGRADEABLE = "Upgradeable"
# The sub-conditions releases up to 4.22 wrote beside Upgradeable; 4.23+ removes them.
LEGACY_CONDITIONS = (
    "UpgradeableAdminAckRequired",
    "UpgradeableDeletesInProgress",
    "UpgradeableClusterOperators",
    "UpgradeableClusterVersionOverrides",
    "UpgradeableUpgradeInProgress",
)

ADMIN_GATES = ("openshift-config-managed", "admin-gates")
ADMIN_ACKS = ("openshift-config", "admin-acks")
GATE_KEY = re.compile(r"^ack-([4-5][.][0-9]{1,})-[^-]")

MULTIPLE_REASONS = "MultipleReasons"
INCOMPATIBLE_NAME = "RiskNameNotCompatibleWithReasonProperty"
_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")

ADMIN_ACK = "AdminAck"
CLUSTER_OPERATOR_UPGRADEABLE = "ClusterOperatorUpgradeable"
# A source that could not be evaluated: `<source>Unknown`.
UNKNOWN_SUFFIX = "Unknown"

UPDATING_MESSAGE = "An update is already in progress and the details are in the Progressing condition."
OVERRIDES_MESSAGE = (
    "Disabling ownership via cluster version overrides prevents updates between minor or major versions. "
    "Please remove overrides before requesting a minor or major version update."
)
MULTIPLE_MESSAGE = "Cluster should not be upgraded between minor or major versions for multiple reasons:"

# The product documentation: a gate's URL when its text names none, and the root of the pages below.
DOCS_ROOT = "https://docs.redhat.com/en/documentation/openshift_container_platform/"
DOCS = DOCS_ROOT + "{}/html/"
CONDITION_TYPES_DOC = (
    "updating_clusters/understanding-openshift-updates-1"
    "#understanding_clusteroperator_conditiontypes_understanding-openshift-updates"
)
OVERRIDES_DOC = "config_apis/clusterversion-config-openshift-io-v1#spec-8"
DELETION_DOC = "updating_clusters/understanding-openshift-updates-1#update-manifest-application_how-updates-work"
DELETION_MESSAGE = (
    "Cluster minor or major version upgrades are not allowed while resource deletions are in progress; resources="
)


@dataclass(frozen=True)
class Risk:
    """Something that blocks minor and major updates (upstream's risk: name, message, URL)."""

    name: str
    message: str
    url: str


@dataclass(frozen=True)
class ConfigMapRead:
    """A ConfigMap as read for a source: its data, or why it could not be read."""

    data: Mapping[str, str] | None = None
    error: str = ""


@dataclass(frozen=True)
class Sources:
    """What the sources read. `admin_gates`/`admin_acks` None: that source is not consulted."""

    version: str  # the running release's version: gates of its major.minor apply
    updating: bool
    overrides: Sequence[Mapping[str, Any]] = ()
    cluster_operators: Sequence[Mapping[str, Any]] = ()
    admin_gates: ConfigMapRead | None = None
    admin_acks: ConfigMapRead | None = None
    # Objects whose removal the sync worker asked for and that are still there (`deployment "ns/n"`).
    deletions: Sequence[str] = ()


def _docs(major_minor: str, page: str) -> str:
    return DOCS.format(major_minor) + page


def _major_minor(version: str) -> tuple[str, str]:
    """(`<M>.<m>`, "") or ("", the parse error)."""
    try:
        parsed = semver.parse(version)
    except semver.SemverError as exc:
        return "", str(exc)
    return f"{parsed.major}.{parsed.minor}", ""


def _first_url(text: str) -> str:
    """The first `https://` token of a gate's text that parses as a URL, else the docs root."""
    for token in text.split():
        if token.startswith("https://") and len(token) > len("https://") and not url_problem(token):
            return token
    return DOCS_ROOT


def _unknown(source: str, message: str) -> Risk:
    return Risk(source + UNKNOWN_SUFFIX, message, DOCS_ROOT)


def _gate_name_error(key: str) -> str:
    return (f'admin-gates configmap gate "{key}" is invalid: admin-gates configmap gate name {key} has invalid '
            f'format; must comply with "{GATE_KEY.pattern}"')


def admin_ack_risks(sources: Sources) -> list[Risk]:
    """Gates of the running major.minor that are not acked with exactly "true"; a gate named
    wrongly or without text; `AdminAckUnknown` when the version or a ConfigMap cannot be read
    (the first such problem, in upstream's order: version, gates, acks)."""
    gates, acks = sources.admin_gates, sources.admin_acks
    if gates is None or acks is None:
        return []
    major_minor, problem = _major_minor(sources.version)
    if problem:
        return [_unknown(ADMIN_ACK, f"Failed to parse cluster version to check admin-acks: {problem}")]
    for read, (namespace, name) in ((gates, ADMIN_GATES), (acks, ADMIN_ACKS)):
        if read.data is None:
            failed = f"Failed to retrieve ConfigMap {name} from namespace {namespace}: {read.error}"
            return [_unknown(ADMIN_ACK, failed)]
    assert gates.data is not None and acks.data is not None
    risks: list[Risk] = []
    for key in sorted(gates.data):
        value = str(gates.data[key] or "")
        match = GATE_KEY.match(key)
        if match is None:
            risks.append(Risk(f"{ADMIN_ACK}-{key}", _gate_name_error(key), DOCS_ROOT))
            continue
        if match.group(1) != major_minor:
            continue  # a gate for another version
        if not value:
            risks.append(Risk(f"{ADMIN_ACK}-{key}", f"admin-gates configmap gate {key} must contain a non-empty value.",
                              DOCS_ROOT))
            continue
        if acks.data.get(key) == "true":
            continue
        risks.append(Risk(f"{ADMIN_ACK}-{key}", value, _first_url(value)))
    return risks


def operator_risks(sources: Sources) -> list[Risk]:
    """ClusterOperators reporting Upgradeable=False, by name, with their message verbatim;
    `ClusterOperatorUpgradeableUnknown` when the running version, which names their documentation,
    is not semver."""
    blocking = []
    for co in sources.cluster_operators:
        for condition in (co.get("status") or {}).get("conditions") or []:
            if isinstance(condition, Mapping) and condition.get("type") == UPGRADEABLE:
                if condition.get("status") == "False":
                    blocking.append((str((co.get("metadata") or {}).get("name") or ""), condition))
                break
    if not blocking:
        return []
    major_minor, problem = _major_minor(sources.version)
    if problem:
        return [_unknown(CLUSTER_OPERATOR_UPGRADEABLE,
                         f"Failed to parse cluster version to check Upgradeable conditions: {problem}")]
    url = _docs(major_minor, CONDITION_TYPES_DOC)
    return [
        Risk(f"{CLUSTER_OPERATOR_UPGRADEABLE}-{name}", str(condition.get("message") or ""), url)
        for name, condition in sorted(blocking, key=lambda pair: pair[0])
    ]


def risks(sources: Sources) -> list[Risk]:
    """Every risk, in upstream's source order."""
    found: list[Risk] = []
    major_minor, _problem = _major_minor(sources.version)
    if sources.updating:
        found.append(Risk("ClusterVersionUpdating", UPDATING_MESSAGE, _docs(major_minor, CONDITION_TYPES_DOC)))
    if any(isinstance(o, Mapping) and o.get("unmanaged") is True for o in sources.overrides):
        found.append(Risk("ClusterVersionOverrides", OVERRIDES_MESSAGE, _docs(major_minor, OVERRIDES_DOC)))
    if sources.deletions:
        message = DELETION_MESSAGE + ",".join(sorted(sources.deletions))
        found.append(Risk("ResourceDeletionInProgress", message, _docs(major_minor, DELETION_DOC)))
    return found + admin_ack_risks(sources) + operator_risks(sources)


@dataclass(frozen=True)
class UpgradeableState:
    status: str
    reason: str
    message: str


def condition(found: Sequence[Risk]) -> UpgradeableState | None:
    """The Upgradeable condition for these risks; None: no condition."""
    if len(found) == 1:
        risk = found[0]
        return UpgradeableState("False", risk.name if _REASON.match(risk.name) else INCOMPATIBLE_NAME, risk.message)
    if found:
        return UpgradeableState(
            "False", MULTIPLE_REASONS, MULTIPLE_MESSAGE + "".join(f"\n* {r.message}" for r in found)
        )
    return None
