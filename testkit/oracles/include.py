"""Which manifests the CVO selects for a cluster: its annotation filter, rule by rule, in its order.

    why_excluded(doc, Cluster(profile=…, feature_set=…, enabled_gates=…))  # None: the CVO applies it

The CVO keeps a manifest only when every rule below passes; the first that fails excludes it, and
the returned text says which. Nothing is read from file names: a file named `…-DevPreviewNoUpgrade`
without the feature-set annotation is selected on every cluster.

1. a manifest without annotations is excluded;
2. `exclude.release.openshift.io/<identifier>: "true"` excludes it when the CVO runs with that
   identifier (EXCLUDE_MANIFESTS);
3. both `release.openshift.io/feature-set` and `…/feature-gate` is an error;
4. `release.openshift.io/feature-set: A,B` must list the cluster's feature set (`""` is `Default`),
   and names only known sets;
5. `release.openshift.io/feature-gate: G,-H` needs each G enabled and each H disabled;
6. `release.openshift.io/major-version: 4,-5` is allowed only on FeatureGate objects and custom
   resources, whose listed majors must include (and unlisted `-` majors exclude) the release's;
7. `include.release.openshift.io/<cluster profile>` must be exactly `"true"`;
8. `capability.openshift.io/name: A+B` needs every capability known and enabled;
9. a `spec.overrides` entry with `unmanaged: true` naming the object excludes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FEATURE_SETS = ("Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade", "OKD")
PROFILES = ("self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift")
FEATURE_SET = "release.openshift.io/feature-set"
FEATURE_GATE = "release.openshift.io/feature-gate"
MAJOR_VERSION = "release.openshift.io/major-version"
CAPABILITY = "capability.openshift.io/name"
INCLUDE_PREFIX = "include.release.openshift.io/"
EXCLUDE_PREFIX = "exclude.release.openshift.io/"
# The kinds of the Kubernetes and OpenShift APIs whose objects are not custom resources.
BUILT_IN_GROUPS = frozenset({
    "", "apps", "batch", "rbac.authorization.k8s.io", "admissionregistration.k8s.io", "networking.k8s.io",
    "policy", "coordination.k8s.io", "scheduling.k8s.io", "apiextensions.k8s.io", "storage.k8s.io",
    "discovery.k8s.io", "autoscaling", "certificates.k8s.io", "node.k8s.io",
})  # fmt: skip


@dataclass(frozen=True)
class Cluster:
    """What the CVO selects by: the cluster profile, the feature set and its enabled gates, the
    release's major version, enabled and known capabilities, overrides, EXCLUDE_MANIFESTS."""

    profile: str = "self-managed-high-availability"
    feature_set: str = "Default"
    enabled_gates: frozenset[str] = frozenset()
    major_version: int = 4
    known_capabilities: frozenset[str] = frozenset()
    enabled_capabilities: frozenset[str] = frozenset()
    overrides: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    exclude: str = ""


def why_excluded(doc: Mapping[str, Any], cluster: Cluster) -> str | None:
    """None when the CVO would apply `doc` on `cluster`, else why not."""
    meta = doc.get("metadata") or {}
    annotations: Mapping[str, str] = meta.get("annotations") or {}
    if not annotations:
        return "no annotations"
    if cluster.exclude and annotations.get(EXCLUDE_PREFIX + cluster.exclude) == "true":
        return f"{EXCLUDE_PREFIX}{cluster.exclude}=true"
    if FEATURE_SET in annotations and FEATURE_GATE in annotations:
        return "both feature set and feature gate annotations are present"
    if FEATURE_SET in annotations:
        listed = annotations[FEATURE_SET].split(",")
        unknown = [s for s in listed if s not in FEATURE_SETS]
        if unknown:
            return f"unrecognized value {FEATURE_SET}={annotations[FEATURE_SET]}"
        if (cluster.feature_set or "Default") not in listed:
            return f'"{cluster.feature_set or "Default"}" is required, and {FEATURE_SET}={annotations[FEATURE_SET]}'
    if FEATURE_GATE in annotations:
        for gate in annotations[FEATURE_GATE].split(","):
            name = gate.removeprefix("-")
            if not gate.startswith("-") and name not in cluster.enabled_gates:
                return f"feature gate {name} is required but not enabled"
            if gate.startswith("-") and name in cluster.enabled_gates:
                return f"feature gate {name} is enabled but manifest requires it to be disabled"
    if MAJOR_VERSION in annotations:
        group = str(doc.get("apiVersion") or "").rpartition("/")[0]
        if doc.get("kind") != "FeatureGate" and group in BUILT_IN_GROUPS:
            return f"{MAJOR_VERSION} is only allowed on FeatureGate objects and custom resources"
        majors = annotations[MAJOR_VERSION].split(",")
        wanted = [m for m in majors if not m.startswith("-")]
        if f"-{cluster.major_version}" in majors or (wanted and str(cluster.major_version) not in wanted):
            return f"major version {cluster.major_version} does not match {MAJOR_VERSION}={annotations[MAJOR_VERSION]}"
    profile_key = INCLUDE_PREFIX + cluster.profile
    if profile_key not in annotations:
        return f"{profile_key} unset"
    if annotations[profile_key] != "true":
        return f"unrecognized value {profile_key}={annotations[profile_key]}"
    if CAPABILITY in annotations:
        names = annotations[CAPABILITY].split("+")
        unknown = sorted(n for n in names if n not in cluster.known_capabilities)
        if unknown:
            return f"unrecognized capability names: {', '.join(unknown)}"
        disabled = sorted(n for n in names if n not in cluster.enabled_capabilities)
        if disabled:
            return f"disabled capabilities: {', '.join(disabled)}"
    group = str(doc.get("apiVersion") or "").rpartition("/")[0]
    for override in cluster.overrides:
        if (
            override.get("unmanaged")
            and override.get("group", "") == group
            and override.get("kind") == doc.get("kind")
            and override.get("namespace", "") == meta.get("namespace", "")
            and override.get("name") == meta.get("name")
        ):
            return "overridden"
    return None
