"""Capabilities per OpenShift release, and what to do when the ClusterVersion schema rejects some (pure).

Two jobs:

* Which capabilities a release knows, what its baseline sets expand to, and which are enabled
  (baseline + additional + already enabled: a capability is never silently disabled).
* Reading a 422 Invalid answer to a status write: the `FieldValueNotSupported` causes on
  `status.capabilities.{enabled,known}Capabilities[i]` name values an older ClusterVersion CRD does
  not accept (after a rollback). Those exact values are dropped and the write is tried again;
  any other cause is a real error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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


def known_capabilities(version: str) -> tuple[str, ...]:
    """The release's capability enum, in CRD order."""
    key = release_key(version)
    names: list[str] = []
    for release, added in sorted(_NEW_IN.items()):
        if release <= key:
            names.extend(added)
    return tuple(names)


def capability_sets(version: str) -> dict[str, frozenset[str]]:
    """`baselineCapabilitySet` name → capabilities, as the given release expands them."""
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
    sets["vCurrent"] = frozenset(known_capabilities(version))
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
) -> CapabilityStatus:
    """Enabled and known capabilities for `spec.capabilities` under release `version`.

    Prior names are kept even when this release does not know them: the cluster's CRD, not this
    table, decides what status may carry, and a rejection is handled by pruning (see below).
    """
    spec = spec_capabilities or {}
    set_name = spec.get("baselineCapabilitySet") or "vCurrent"
    sets = capability_sets(version)
    additional = spec.get("additionalEnabledCapabilities") or []
    if not isinstance(additional, list):
        raise ValueError("spec.capabilities.additionalEnabledCapabilities must be a list")
    # A set name from a newer release expands to nothing here, as upstream; prior names stay enabled.
    requested = set(sets.get(set_name, frozenset())) | {str(a) for a in additional}
    enabled = requested | set(prior_enabled) | set(always_enabled)
    return CapabilityStatus(
        enabled=tuple(sorted(enabled)),
        known=tuple(sorted(known_capabilities(version))),
        implicitly_enabled=tuple(sorted(enabled - requested)),
    )


# Known to 4.23+ operators (KnownClusterVersionCapabilities) but in the CRD enum only behind
# feature gates: accepted as names, and pruned from status by a CRD that rejects them.
GATED_IN: dict[tuple[int, int], tuple[str, ...]] = {(4, 23): ("CompatibilityRequirements", "ClusterAPI")}


def unknown_names(names: Iterable[str], version: str = "") -> list[str]:
    """Names the release's operator does not know (its enum plus its feature-gated names)."""
    key = release_key(version)
    known = set(known_capabilities(version))
    known.update(n for release, gated in GATED_IN.items() if release <= key for n in gated)
    return sorted({n for n in names if n not in known})


# -- rejections ------------------------------------------------------------------------------------

# Added by the API server next to schema errors when CEL rules were skipped because of them: a
# consequence of the other causes, not a problem of its own (field "<nil>").
_CEL_SKIPPED = "some validation rules were not checked because the object was invalid"
_FIELD = re.compile(r"^(?:status\.)?capabilities\.(enabledCapabilities|knownCapabilities)\[(\d+)\]$")
_VALUE = re.compile(r'Unsupported value: ("(?:[^"\\]|\\.)*")')


@dataclass(frozen=True)
class RejectedCapability:
    field: str  # ENABLED or KNOWN
    value: str
    index: int


@dataclass(frozen=True)
class Rejection:
    """A 422 Invalid answer to a status write, split into what pruning can fix and what it cannot."""

    capabilities: tuple[RejectedCapability, ...] = ()
    other: tuple[JSON, ...] = ()  # causes that are not rejected capability names
    message: str = ""
    consequential: tuple[JSON, ...] = ()  # "validation rules were not checked" notes

    @property
    def prunable(self) -> bool:
        """Pruning makes the write land only when every cause is a rejected capability name."""
        return bool(self.capabilities) and not self.other

    def fields(self) -> list[str]:
        """One normalized field path per cause (no index, `status.` prefix), for metrics."""
        out = [f"status.capabilities.{c.field}" for c in self.capabilities]
        for cause in self.other:
            out.append(normalize_field(str(cause.get("field") or "")))
        return out or [""]


def normalize_field(path: str) -> str:
    """`capabilities.enabledCapabilities[3]` → `status.capabilities.enabledCapabilities`."""
    path = re.sub(r"\[\d+\]", "", path)
    if path and not path.startswith(("status", "spec", "metadata")):
        path = "status." + path
    return path


def parse_rejection(status_body: Mapping[str, Any], sent_status: Mapping[str, Any]) -> Rejection:
    """Classify the causes of a 422 Invalid Status answering a PUT of `sent_status` to /status.

    A cause counts as a rejected capability only if it is `FieldValueNotSupported` on an item of
    one of the two lists and its value can be tied to what was sent (from the quoted value in the
    message, checked against the item at that index).
    """
    details = status_body.get("details") if isinstance(status_body.get("details"), dict) else {}
    raw_causes = details.get("causes") if isinstance(details, dict) else None
    causes = [c for c in raw_causes if isinstance(c, dict)] if isinstance(raw_causes, list) else []
    sent_caps = sent_status.get("capabilities") if isinstance(sent_status.get("capabilities"), dict) else {}
    rejected: list[RejectedCapability] = []
    other: list[JSON] = []
    consequential: list[JSON] = []
    for cause in causes:
        if _CEL_SKIPPED in str(cause.get("message") or ""):
            consequential.append(dict(cause))
            continue
        found = _capability_cause(cause, sent_caps or {})
        if found is None:
            other.append(dict(cause))
        else:
            rejected.append(found)
    return Rejection(tuple(rejected), tuple(other), str(status_body.get("message") or ""), tuple(consequential))


def _capability_cause(cause: Mapping[str, Any], sent_caps: Mapping[str, Any]) -> RejectedCapability | None:
    if cause.get("reason") != "FieldValueNotSupported":
        return None
    match = _FIELD.match(str(cause.get("field") or ""))
    if not match:
        return None
    list_name, index = match.group(1), int(match.group(2))
    sent = sent_caps.get(list_name)
    at_index = sent[index] if isinstance(sent, list) and index < len(sent) else None
    quoted = _VALUE.search(str(cause.get("message") or ""))
    value: str | None = None
    if quoted:
        try:
            decoded = json.loads(quoted.group(1))
            value = decoded if isinstance(decoded, str) else None
        except ValueError:
            value = None
    if value is None:
        value = at_index if isinstance(at_index, str) else None
    if value is None or (isinstance(at_index, str) and at_index != value):
        # The cause does not describe what we sent; pruning by guess could drop the wrong name.
        return None
    return RejectedCapability(list_name, value, index)


@dataclass
class PrunedCapabilities:
    """Names the installed CRD rejected, per list; kept so later writes leave them out at once."""

    by_field: dict[str, set[str]] = field(default_factory=lambda: {ENABLED: set(), KNOWN: set()})

    def add(self, rejected: Iterable[RejectedCapability]) -> list[RejectedCapability]:
        """Remember rejections; returns those not seen before (to log once)."""
        new: list[RejectedCapability] = []
        for item in rejected:
            names = self.by_field.setdefault(item.field, set())
            if item.value not in names:
                names.add(item.value)
                new.append(item)
        return new

    def clear(self) -> dict[str, tuple[str, ...]]:
        """Forget every name (the CRD that rejected them changed); returns what was forgotten."""
        forgotten = self.state()
        for names in self.by_field.values():
            names.clear()
        return forgotten

    def discard(self, names: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
        """Forget these names (per list); returns those that were remembered."""
        forgotten: dict[str, tuple[str, ...]] = {}
        for list_name, values in names.items():
            held = self.by_field.get(list_name, set())
            gone = sorted(held & set(values))
            held.difference_update(gone)
            if gone:
                forgotten[list_name] = tuple(gone)
        return forgotten

    def __bool__(self) -> bool:
        return any(self.by_field.values())

    def state(self) -> dict[str, tuple[str, ...]]:
        return {f: tuple(sorted(names)) for f, names in self.by_field.items() if names}


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


def prune(status: Mapping[str, Any], pruned: Mapping[str, Iterable[str]]) -> JSON:
    """A copy of `status` without the pruned names in `capabilities`; nothing else changes."""
    out = dict(status)
    caps = status.get("capabilities")
    if not isinstance(caps, dict):
        return out
    new_caps = dict(caps)
    for list_name, names in pruned.items():
        drop = set(names)
        values = caps.get(list_name)
        if drop and isinstance(values, list):
            new_caps[list_name] = [v for v in values if v not in drop]
    out["capabilities"] = new_caps
    return out


def pruned_message(pruned: Mapping[str, Sequence[str]]) -> str:
    parts = [f"{list_name} {', '.join(names)}" for list_name, names in sorted(pruned.items()) if names]
    return (
        "The installed ClusterVersion CRD does not accept these capability names, so they are left out of "
        "status.capabilities (the capabilities are not disabled): " + "; ".join(parts)
    )
