"""Which of a payload's manifests the CVO applies to a cluster: its annotation rules, in its order,
with its texts, split where it checks them.

    reason = excluded_at_load(manifest, selection)    # None: kept in the payload
    reason = excluded_at_apply(manifest, selection)   # None: applied in this pass
    names = implicitly_enabled(current, target, selection)

At **load** (`excluded_at_load`) a manifest that fails is dropped from the payload: not counted,
not hashed into versionHash, never sent. At **apply** (`excluded_at_apply`, every pass) it is
skipped: counted in the total, never done, no API call. The first failing rule gives the reason
(upstream logs it: `excluding <manifest>: <reason>`, `Skipping <task>: <reason>`):

1. no annotations, or not all strings: `no annotations` (load, apply);
2. `exclude.release.openshift.io/<EXCLUDE_MANIFESTS>: "true"`: `<key>=true` (load);
3. both `…/feature-set` and `…/feature-gate`: `both feature set and feature gate annotations are
   present: …` (load, apply);
4. `release.openshift.io/feature-set: A,B`, which must name only known sets (`unrecognized value
   "<x>" in …; known values are: …`) and the cluster's (`"<set>" is required, and …=<sorted
   list>`) (load);
5. `release.openshift.io/feature-gate: G,-H`: `feature gate G is required but not enabled`,
   `feature gate H is enabled but manifest requires it to be disabled` (load, apply);
6. `release.openshift.io/major-version: 4,-5`, on FeatureGates and CRDs only, must list the
   payload's major (if it lists any) and not exclude it (load);
7. `include.release.openshift.io/<profile>`: `<key> unset`, `unrecognized value <key>=<v>` (load);
8. `capability.openshift.io/name: A+B`: `unrecognized capability names: …`, `disabled
   capabilities: …` (apply);
9. the first `spec.overrides` entry naming it says `unmanaged: true`: `overridden` (apply).

Pure: manifests and a `Selection` of plain values in, a reason or None out. Facts:
`../shared/reference/sync-worker-facts.md` §2.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cvo_py.runtime.gotext.quoting import go_quote

DEFAULT_PROFILE = "self-managed-high-availability"
DEFAULT_FEATURE_SET = "Default"
# The feature sets a manifest may name (upstream's list, in the order its message prints them).
FEATURE_SETS = ("CustomNoUpgrade", "Default", "DevPreviewNoUpgrade", "OKD", "TechPreviewNoUpgrade")

FEATURE_SET = "release.openshift.io/feature-set"
FEATURE_GATE = "release.openshift.io/feature-gate"
MAJOR_VERSION = "release.openshift.io/major-version"
CAPABILITY = "capability.openshift.io/name"
INCLUDE_PREFIX = "include.release.openshift.io/"
EXCLUDE_PREFIX = "exclude.release.openshift.io/"
CREATE_ONLY = "release.openshift.io/create-only"
DELETE = "release.openshift.io/delete"
# The only kinds a major-version annotation may select.
MAJOR_VERSION_KINDS = frozenset(
    {("config.openshift.io", "FeatureGate"), ("apiextensions.k8s.io", "CustomResourceDefinition")}
)

BOTH_SET_AND_GATE = (
    "both feature set and feature gate annotations are present: "
    "manifests may specify either a feature set or a feature gate, but not both"
)


class Selectable(Protocol):
    """What selection reads of a manifest (`syncworker.manifest.Manifest` is one)."""

    @property
    def group(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def annotations(self) -> Mapping[str, str] | None: ...


@dataclass(frozen=True)
class Selection:
    """What the CVO selects manifests by: its cluster profile (CLUSTER_PROFILE), the exclusion
    identifier (EXCLUDE_MANIFESTS, "" for none), the cluster's feature set ("" is Default) and the
    gates enabled for the running CVO's version, the payload's major version (None: unknown, as
    before a payload is read), the known and enabled capabilities (implicitly enabled ones
    included), and ClusterVersion's `spec.overrides` as the API returns them."""

    profile: str = DEFAULT_PROFILE
    exclude: str = ""
    feature_set: str = DEFAULT_FEATURE_SET
    enabled_gates: frozenset[str] = frozenset()
    major_version: int | None = None
    known_capabilities: frozenset[str] = frozenset()
    enabled_capabilities: frozenset[str] = frozenset()
    overrides: Sequence[Mapping[str, Any]] = field(default_factory=tuple)


def excluded_at_load(manifest: Selectable, selection: Selection) -> str | None:
    """Why the loader drops `manifest` from the payload, or None to keep it."""
    annotations = manifest.annotations
    if annotations is None:
        return "no annotations"
    if selection.exclude:
        key = EXCLUDE_PREFIX + selection.exclude
        if annotations.get(key) == "true":
            return f"{key}=true"
    if FEATURE_SET in annotations and FEATURE_GATE in annotations:
        return BOTH_SET_AND_GATE
    if FEATURE_SET in annotations:
        why = _feature_set(annotations[FEATURE_SET], selection.feature_set or DEFAULT_FEATURE_SET)
        if why:
            return why
    if FEATURE_GATE in annotations:
        why = _feature_gates(annotations[FEATURE_GATE], selection.enabled_gates)
        if why:
            return why
    if MAJOR_VERSION in annotations and selection.major_version is not None:
        why = _major_version(manifest, annotations[MAJOR_VERSION], selection.major_version)
        if why:
            return why
    key = INCLUDE_PREFIX + selection.profile
    if key not in annotations:
        return f"{key} unset"
    if annotations[key] != "true":
        return f"unrecognized value {key}={annotations[key]}"
    return None


def excluded_at_apply(manifest: Selectable, selection: Selection, *, allow_unknown: bool = False) -> str | None:
    """Why a pass skips a loaded `manifest`, or None to apply it: its gates (they may have
    changed), its capabilities (with `allow_unknown`, only known ones that are not enabled
    exclude), the overrides."""
    annotations = manifest.annotations
    if annotations is None:
        return "no annotations"
    if FEATURE_SET in annotations and FEATURE_GATE in annotations:
        return BOTH_SET_AND_GATE
    if FEATURE_GATE in annotations:
        why = _feature_gates(annotations[FEATURE_GATE], selection.enabled_gates)
        if why:
            return why
    if CAPABILITY in annotations:
        why = _capabilities(
            capabilities(manifest), selection.known_capabilities, selection.enabled_capabilities, allow_unknown
        )
        if why:
            return why
    if overridden(manifest, selection.overrides):
        return "overridden"
    return None


def excluded(manifest: Selectable, selection: Selection, *, allow_unknown: bool = False) -> str | None:
    """Why the CVO would not apply `manifest` on a cluster at all: the load rules, then the apply rules."""
    return excluded_at_load(manifest, selection) or excluded_at_apply(manifest, selection, allow_unknown=allow_unknown)


def capabilities(manifest: Selectable) -> list[str]:
    """The capabilities a manifest belongs to (`capability.openshift.io/name: A+B`), as listed."""
    value = (manifest.annotations or {}).get(CAPABILITY)
    return [] if value is None else value.split("+")


def overridden(manifest: Selectable, overrides: Iterable[Mapping[str, Any]]) -> bool:
    """Whether the first `spec.overrides` entry naming `manifest` (group, kind, name, and namespace
    unless it is cluster-scoped) says `unmanaged: true`."""
    for override in overrides:
        if (
            override.get("group", "") == manifest.group
            and override.get("kind", "") == manifest.kind
            and (not manifest.namespace or override.get("namespace", "") == manifest.namespace)
            and override.get("name", "") == manifest.name
        ):
            return override.get("unmanaged") is True
    return False


def is_create_only(manifest: Selectable) -> bool:
    """`release.openshift.io/create-only: "true"` (any case): created when missing, never updated."""
    return (manifest.annotations or {}).get(CREATE_ONLY, "").lower() == "true"


def implicitly_enabled(
    current: Iterable[Selectable], target: Iterable[Selectable], selection: Selection
) -> frozenset[str]:
    """The capabilities a new payload implicitly enables: a resource the current payload applies
    (same group, kind, namespace and name) that the target would skip because it now belongs to
    capabilities not enabled gives those names (the ones the current manifest did not list).
    `selection.enabled_capabilities` holds the names enabled so far, implicitly enabled ones included;
    names the cluster does not know yet do not make a manifest skipped here."""
    applied: dict[tuple[str, str, str, str], list[Selectable]] = {}
    for manifest in current:
        if excluded(manifest, selection, allow_unknown=True) is None:
            applied.setdefault(_identity(manifest), []).append(manifest)
    enabled = selection.enabled_capabilities
    names: set[str] = set()
    for manifest in target:
        if excluded(manifest, selection, allow_unknown=True) is None:
            continue
        for before in applied.get(_identity(manifest), ()):
            names.update(set(capabilities(manifest)) - set(capabilities(before)) - enabled)
    return frozenset(names)


def _identity(manifest: Selectable) -> tuple[str, str, str, str]:
    return (manifest.group, manifest.kind, manifest.namespace, manifest.name)


def _feature_set(value: str, cluster_set: str) -> str | None:
    listed = value.split(",")
    for name in listed:
        if name not in FEATURE_SETS:
            return (
                f"unrecognized value {go_quote(name)} in {FEATURE_SET}={value}; "
                f"known values are: {','.join(FEATURE_SETS)}"
            )
    if cluster_set not in listed:
        return f"{go_quote(cluster_set)} is required, and {FEATURE_SET}={','.join(sorted(set(listed)))}"
    return None


def _feature_gates(value: str, enabled: frozenset[str]) -> str | None:
    for item in value.split(","):
        gate = item.strip()
        if not gate:
            continue
        if gate.startswith("-"):
            if gate[1:] in enabled:
                return f"feature gate {gate[1:]} is enabled but manifest requires it to be disabled"
        elif gate not in enabled:
            return f"feature gate {gate} is required but not enabled"
    return None


def _major_version(manifest: Selectable, value: str, major: int) -> str | None:
    if (manifest.group, manifest.kind) not in MAJOR_VERSION_KINDS:
        return "major version filtering is only supported for feature gates and custom resources"
    wanted: set[int] = set()
    unwanted: set[int] = set()
    for item in value.split(","):
        text = item.strip()
        negative = text.startswith("-")
        digits = text[1:] if negative else text
        if not digits.isascii() or not digits.isdigit():
            return f"invalid major version {go_quote(text)} in {MAJOR_VERSION}={value}"
        (unwanted if negative else wanted).add(int(digits))
    if wanted & unwanted:
        return f"major versions both included and excluded in {MAJOR_VERSION}={value}"
    if major in unwanted or (wanted and major not in wanted):
        return f"payload major version {major} does not match {MAJOR_VERSION}={value}"
    return None


def _capabilities(names: list[str], known: frozenset[str], enabled: frozenset[str], allow_unknown: bool) -> str | None:
    unknown = [n for n in names if n not in known]
    if unknown and not allow_unknown:
        return f"unrecognized capability names: {', '.join(unknown)}"
    disabled = [n for n in names if n in known and n not in enabled]
    if disabled:
        return f"disabled capabilities: {', '.join(disabled)}"
    return None
