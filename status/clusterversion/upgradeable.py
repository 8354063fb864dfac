"""The `Upgradeable` condition, as upstream computes it from 4.23 on (pure).

Each source gives risks that block minor and major updates (patch updates stay allowed, see
`status.clusterversion.preconditions`); they are collected in upstream's source order and sorted
within a source:

1. the cluster version is updating (`Progressing=True`): `ClusterVersionUpdating`;
2. `spec.overrides` with `unmanaged: true`: `ClusterVersionOverrides`;
3. resource deletions in progress: cvo-py applies no manifests, so it never deletes one and this
   source never gives a risk;
4. admin-ack gates of the running version (`openshift-config-managed/admin-gates`) not acked in
   `openshift-config/admin-acks`: `AdminAck-<gate>`;
5. ClusterOperators with `Upgradeable=False`: `ClusterOperatorUpgradeable-<name>`.

No risk: no condition (upstream never writes `Upgradeable=True`), or `Unknown`/`EvaluationFailed`
when a source could not be read. One risk: its name as the reason (when it can be one), its message.
Several: `MultipleReasons` and a bulleted list. Releases up to 4.22 named the reasons differently and
added `Upgradeable<Check>` sub-conditions; 4.23+ removes those, and so does cvo-py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
EVALUATION_FAILED = "EvaluationFailed"
INCOMPATIBLE_NAME = "RiskNameNotCompatibleWithReasonProperty"
_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")

UPDATING_MESSAGE = "An update is already in progress and the details are in the Progressing condition."
OVERRIDES_MESSAGE = (
    "Disabling ownership via cluster version overrides prevents updates between minor or major versions. "
    "Please remove overrides before requesting a minor or major version update."
)
MULTIPLE_MESSAGE = "Cluster should not be upgraded between minor or major versions for multiple reasons:"

DOCS = "https://docs.redhat.com/en/documentation/openshift_container_platform/{}/html/"
CONDITION_TYPES_DOC = (
    "updating_clusters/understanding-openshift-updates-1"
    "#understanding_clusteroperator_conditiontypes_understanding-openshift-updates"
)
OVERRIDES_DOC = "config_apis/clusterversion-config-openshift-io-v1#spec-8"


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


def _docs(major_minor: str, page: str) -> str:
    return DOCS.format(major_minor) + page


def _major_minor(version: str) -> tuple[str, str]:
    """(`<M>.<m>`, "") or ("", the parse error)."""
    try:
        parsed = semver.parse(version)
    except semver.SemverError as exc:
        return "", str(exc)
    return f"{parsed.major}.{parsed.minor}", ""


def _first_url(text: str, fallback: str) -> str:
    for token in text.split():
        if token.startswith("https://") and len(token) > len("https://"):
            return token
    return fallback


def admin_ack_risks(sources: Sources) -> tuple[list[Risk], list[str]]:
    """Gates of the running major.minor that are not acked with exactly "true"."""
    gates, acks = sources.admin_gates, sources.admin_acks
    if gates is None or acks is None:
        return [], []
    errors: list[str] = []
    if gates.data is None:
        errors.append(f"Failed to retrieve ConfigMap {ADMIN_GATES[1]} from namespace {ADMIN_GATES[0]}: {gates.error}")
    if acks.data is None:
        errors.append(f"Failed to retrieve ConfigMap {ADMIN_ACKS[1]} from namespace {ADMIN_ACKS[0]}: {acks.error}")
    major_minor, problem = _major_minor(sources.version)
    if problem:
        errors.append(f"Failed to parse cluster version to check admin-acks: {problem}")
    if errors or gates.data is None or acks.data is None:
        return [], errors
    risks: list[Risk] = []
    for key in sorted(gates.data):
        value = str(gates.data[key] or "")
        match = GATE_KEY.match(key)
        if match is None:
            errors.append(f'admin-gates configmap gate "{key}" is invalid: the name must match {GATE_KEY.pattern}')
            continue
        if match.group(1) != major_minor:
            continue  # a gate for another version
        if not value:
            errors.append(f'admin-gates configmap gate "{key}" is invalid: it must contain a non-empty value')
            continue
        if acks.data.get(key) == "true":
            continue
        risks.append(Risk(f"AdminAck-{key}", value, _first_url(value, DOCS.format(major_minor))))
    return risks, errors


def operator_risks(sources: Sources) -> tuple[list[Risk], list[str]]:
    """ClusterOperators reporting Upgradeable=False, by name, with their message verbatim."""
    blocking = []
    for co in sources.cluster_operators:
        for condition in (co.get("status") or {}).get("conditions") or []:
            if isinstance(condition, Mapping) and condition.get("type") == UPGRADEABLE:
                if condition.get("status") == "False":
                    blocking.append((str((co.get("metadata") or {}).get("name") or ""), condition))
                break
    if not blocking:
        return [], []
    major_minor, problem = _major_minor(sources.version)
    if problem:
        return [], [f"Failed to parse cluster version to check Upgradeable conditions: {problem}"]
    url = _docs(major_minor, CONDITION_TYPES_DOC)
    return [
        Risk(f"ClusterOperatorUpgradeable-{name}", str(condition.get("message") or ""), url)
        for name, condition in sorted(blocking, key=lambda pair: pair[0])
    ], []


def risks(sources: Sources) -> tuple[list[Risk], list[str]]:
    """Every risk, in upstream's source order, and the errors of sources that could not be read."""
    found: list[Risk] = []
    errors: list[str] = []
    major_minor, _problem = _major_minor(sources.version)
    if sources.updating:
        found.append(Risk("ClusterVersionUpdating", UPDATING_MESSAGE, _docs(major_minor, CONDITION_TYPES_DOC)))
    if any(isinstance(o, Mapping) and o.get("unmanaged") is True for o in sources.overrides):
        found.append(Risk("ClusterVersionOverrides", OVERRIDES_MESSAGE, _docs(major_minor, OVERRIDES_DOC)))
    for source in (admin_ack_risks, operator_risks):
        more, failed = source(sources)
        found += more
        errors += failed
    return found, errors


@dataclass(frozen=True)
class UpgradeableState:
    status: str
    reason: str
    message: str


def condition(found: Sequence[Risk], errors: Sequence[str]) -> UpgradeableState | None:
    """The Upgradeable condition for these risks; None: no condition."""
    if len(found) == 1:
        risk = found[0]
        return UpgradeableState("False", risk.name if _REASON.match(risk.name) else INCOMPATIBLE_NAME, risk.message)
    if found:
        return UpgradeableState(
            "False", MULTIPLE_REASONS, MULTIPLE_MESSAGE + "".join(f"\n* {r.message}" for r in found)
        )
    if errors:
        return UpgradeableState("Unknown", EVALUATION_FAILED, "\n".join(errors))
    return None
