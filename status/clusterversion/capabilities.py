"""Capabilities per OpenShift release (pure): which capabilities a release knows, what its baseline
sets expand to, which are enabled (baseline + additional + already enabled: a capability is never
silently disabled), and which names an installed ClusterVersion CRD accepts in status. What to do
when the CRD rejects some is in `status.clusterversion.rejections`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]

ENABLED = "enabledCapabilities"
KNOWN = "knownCapabilities"
FIELDS = (ENABLED, KNOWN)

# Names in the order each release's CRD enum lists them (also the order of "supported values").
_NEW_IN: dict[tuple[int, int], tuple[str, ...]] = {
    (4, 11): ("openshift-samples", "baremetal", "marketplace"),
    (4, 12): ("Console", "Insights", "Storage", "CSISnapshot"),
    (4, 13): ("NodeTuning",),
    (4, 14): ("MachineAPI", "Build", "DeploymentConfig", "ImageRegistry"),
    (4, 15): ("OperatorLifecycleManager", "CloudCredential"),
    (4, 16): ("Ingress", "CloudControllerManager"),
    (4, 18): ("OperatorLifecycleManagerV1",),
}
# Set names that a release adds to spec.capabilities.baselineCapabilitySet (4.19+ add none).
OLDEST = (4, 11)
NEWEST = (4, 23)


def parse_minor(version: str) -> tuple[int, int] | None:
    """`4.14.1`, `4.14.0-rc.3` → (4, 14); anything else → None."""
    match = re.match(r"^v?(\d+)\.(\d+)(?:[.\-+]|$)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def release_key(version: str) -> tuple[int, int]:
    """The release whose capability lists apply; unknown or newer versions use the newest we know."""
    minor = parse_minor(version)
    if minor is None or minor > NEWEST:
        return NEWEST
    if minor < OLDEST:
        raise ValueError(f"release {version!r} predates cluster capabilities (introduced in 4.11)")
    return minor


# Capabilities that releases from GATED_SINCE on know only while one of their feature gates is
# enabled (upstream's featureGatedCapabilities): known, and part of `vCurrent`, only then. The CRD's
# enum lists them behind the same gates. Their gates are on in TechPreviewNoUpgrade and
# DevPreviewNoUpgrade on releases whose FeatureGate lists them.
GATED: dict[str, frozenset[str]] = {
    "CompatibilityRequirements": frozenset({"CRDCompatibilityRequirementOperator", "ClusterAPIMachineManagement"}),
    "ClusterAPI": frozenset({"ClusterAPIMachineManagement"}),
}
GATED_SINCE = (4, 23)


def gated_capabilities(version: str, enabled_gates: Iterable[str]) -> tuple[str, ...]:
    """The feature-gated capabilities release `version` knows with these gates enabled, in CRD order."""
    if release_key(version) < GATED_SINCE:
        return ()
    on = frozenset(enabled_gates)
    return tuple(name for name, gates in GATED.items() if gates & on)


def known_capabilities(version: str, enabled_gates: Iterable[str] = ()) -> tuple[str, ...]:
    """The release's capability enum, in CRD order, with the feature-gated names whose gates are on."""
    key = release_key(version)
    names: list[str] = []
    for release, added in sorted(_NEW_IN.items()):
        if release <= key:
            names.extend(added)
    return (*names, *gated_capabilities(version, enabled_gates))


def capability_sets(version: str, enabled_gates: Iterable[str] = ()) -> dict[str, frozenset[str]]:
    """`baselineCapabilitySet` name → capabilities, as the given release expands them (`vCurrent`
    with the feature-gated names whose gates are on)."""
    key = release_key(version)
    sets: dict[str, frozenset[str]] = {"None": frozenset()}
    accumulated: set[str] = set()
    for release, added in sorted(_NEW_IN.items()):
        if release > key:
            break
        accumulated.update(added)
        sets[f"v{release[0]}.{release[1]}"] = frozenset(accumulated)
    # From release-4.14 on, the older sets were retro-edited to contain MachineAPI (openshift/api #1554).
    if key >= (4, 14):
        for name in ("v4.11", "v4.12", "v4.13"):
            sets[name] = sets[name] | {"MachineAPI"}
    # v4.17 equals v4.16 (it added nothing); 4.19+ define no further sets.
    if key >= (4, 17):
        sets["v4.17"] = sets["v4.16"]
    sets["vCurrent"] = frozenset(known_capabilities(version, enabled_gates))
    return sets


@dataclass(frozen=True)
class CapabilityStatus:
    enabled: tuple[str, ...]  # sorted byte-wise, as upstream writes them
    known: tuple[str, ...]
    implicitly_enabled: tuple[str, ...]  # enabled but not asked for by the spec


def compute(
    spec_capabilities: Mapping[str, Any] | None,
    version: str,
    prior_enabled: Iterable[str] = (),
    always_enabled: Iterable[str] = (),
    enabled_gates: Iterable[str] = (),
) -> CapabilityStatus:
    """Enabled and known capabilities for `spec.capabilities` under release `version`, with the
    cluster's feature gates `enabled_gates` (those of the running version).

    Prior names are kept even when this release does not know them (a feature-gated name whose
    gate is off included): the cluster's CRD, not this table, decides what status may carry, and a
    rejection is handled by pruning, said in `CapabilitiesPruned` (upstream drops such names
    without a word).
    """
    spec = spec_capabilities or {}
    set_name = spec.get("baselineCapabilitySet") or "vCurrent"
    sets = capability_sets(version, enabled_gates)
    additional = spec.get("additionalEnabledCapabilities") or []
    if not isinstance(additional, list):
        raise ValueError("spec.capabilities.additionalEnabledCapabilities must be a list")
    # A set name from a newer release expands to nothing here, as upstream; prior names stay enabled.
    requested = set(sets.get(set_name, frozenset())) | {str(a) for a in additional}
    enabled = requested | set(prior_enabled) | set(always_enabled)
    return CapabilityStatus(
        enabled=tuple(sorted(enabled)),
        known=tuple(sorted(known_capabilities(version, enabled_gates))),
        implicitly_enabled=tuple(sorted(enabled - requested)),
    )


def unknown_names(names: Iterable[str], version: str = "") -> list[str]:
    """Names the release's operator does not know (its enum plus its feature-gated names)."""
    known = set(known_capabilities(version, frozenset().union(*GATED.values())))
    return sorted({n for n in names if n not in known})


def crd_enums(crd: Mapping[str, Any] | None) -> dict[str, frozenset[str] | None]:
    """The names each status capability list accepts under a ClusterVersion CRD's served
    schemas (None: any name, e.g. no enum or no schema known)."""
    out: dict[str, frozenset[str] | None] = {}
    versions = [v for v in ((crd or {}).get("spec") or {}).get("versions") or [] if isinstance(v, dict)]
    for list_name in FIELDS:
        allowed: set[str] | None = None
        for version in versions:
            if not version.get("served", True):
                continue
            schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
            for key in ("properties", "status", "properties", "capabilities", "properties", list_name, "items"):
                schema = schema.get(key) if isinstance(schema, dict) else None
            enum = schema.get("enum") if isinstance(schema, dict) else None
            if not isinstance(enum, list):
                allowed = None
                break
            allowed = (allowed or set()) | {str(n) for n in enum}
        out[list_name] = frozenset(allowed) if allowed is not None else None
    return out
