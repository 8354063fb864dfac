"""syncworker.select: every annotation rule with upstream's text, where upstream checks it (load or
apply), in upstream's order, and the capabilities a new payload implicitly enables."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from syncworker.manifest import RELEASE_MANIFESTS, Manifest, parse_manifests
from syncworker.select import (
    BOTH_SET_AND_GATE,
    FEATURE_SETS,
    Selection,
    capabilities,
    excluded,
    excluded_at_apply,
    excluded_at_load,
    implicitly_enabled,
    is_create_only,
    overridden,
)

PROFILE = "include.release.openshift.io/self-managed-high-availability"
FEATURE_SET = "release.openshift.io/feature-set"
FEATURE_GATE = "release.openshift.io/feature-gate"
MAJOR = "release.openshift.io/major-version"
CAPABILITY = "capability.openshift.io/name"
HOSTED = "exclude.release.openshift.io/internal-openshift-hosted"


def manifest(
    annotations: dict[str, Any] | None = None,
    *,
    kind: str = "ConfigMap",
    api_version: str = "v1",
    name: str = "x",
    namespace: str | None = "ns",
) -> Manifest:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    if annotations is not None:
        metadata["annotations"] = annotations
    doc = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
    [m] = parse_manifests(json.dumps(doc).encode(), directory=RELEASE_MANIFESTS, file="0000_10_x_00_f.json")
    return m


def included(**annotations: str) -> Manifest:
    return manifest({PROFILE: "true", **annotations})


DEFAULT = Selection(major_version=4)
ALL_CAPS = Selection(
    major_version=4,
    known_capabilities=frozenset({"Console", "Insights", "Storage"}),
    enabled_capabilities=frozenset({"Console", "Insights", "Storage"}),
)


LOAD_CASES = [
    (manifest(None), DEFAULT, "no annotations"),
    (manifest({PROFILE: 1}), DEFAULT, "no annotations"),  # not all strings: the CVO reads none
    (manifest({}), DEFAULT, f"{PROFILE} unset"),  # an empty map is annotations
    (included(**{HOSTED: "true"}), replace(DEFAULT, exclude="internal-openshift-hosted"), f"{HOSTED}=true"),
    (included(**{HOSTED: "True"}), replace(DEFAULT, exclude="internal-openshift-hosted"), None),  # exactly "true"
    (included(**{HOSTED: "true"}), DEFAULT, None),  # EXCLUDE_MANIFESTS unset
    (included(**{FEATURE_SET: "Default", FEATURE_GATE: "G"}), DEFAULT, BOTH_SET_AND_GATE),
    (included(**{FEATURE_SET: "TechPreviewNoUpgrade"}), DEFAULT,
     '"Default" is required, and release.openshift.io/feature-set=TechPreviewNoUpgrade'),
    (included(**{FEATURE_SET: "TechPreviewNoUpgrade"}), replace(DEFAULT, feature_set=""),
     '"Default" is required, and release.openshift.io/feature-set=TechPreviewNoUpgrade'),
    (included(**{FEATURE_SET: "TechPreviewNoUpgrade,DevPreviewNoUpgrade"}), DEFAULT,
     '"Default" is required, and release.openshift.io/feature-set=DevPreviewNoUpgrade,TechPreviewNoUpgrade'),
    (included(**{FEATURE_SET: "TechPreviewNoUpgrade"}), replace(DEFAULT, feature_set="TechPreviewNoUpgrade"), None),
    (included(**{FEATURE_SET: "Default,Bogus"}), DEFAULT,
     'unrecognized value "Bogus" in release.openshift.io/feature-set=Default,Bogus; '
     "known values are: CustomNoUpgrade,Default,DevPreviewNoUpgrade,OKD,TechPreviewNoUpgrade"),
    (included(**{FEATURE_SET: "Default, TechPreviewNoUpgrade"}), DEFAULT,  # no trimming
     'unrecognized value " TechPreviewNoUpgrade" in release.openshift.io/feature-set=Default, TechPreviewNoUpgrade; '
     "known values are: CustomNoUpgrade,Default,DevPreviewNoUpgrade,OKD,TechPreviewNoUpgrade"),
    (included(**{FEATURE_SET: "Default"}), replace(DEFAULT, feature_set="CustomNoUpgrade"),
     '"CustomNoUpgrade" is required, and release.openshift.io/feature-set=Default'),
    (included(), replace(DEFAULT, feature_set="CustomNoUpgrade"), None),  # unannotated: every set
    (included(**{FEATURE_GATE: "A, -B ,,"}), replace(DEFAULT, enabled_gates=frozenset({"B"})),
     "feature gate A is required but not enabled"),
    (included(**{FEATURE_GATE: "A,-B"}), replace(DEFAULT, enabled_gates=frozenset({"A", "B"})),
     "feature gate B is enabled but manifest requires it to be disabled"),
    (included(**{FEATURE_GATE: " A , -B"}), replace(DEFAULT, enabled_gates=frozenset({"A"})), None),
    (included(**{FEATURE_GATE: ""}), DEFAULT, None),
    (included(**{MAJOR: "4"}), DEFAULT,
     "major version filtering is only supported for feature gates and custom resources"),
    (manifest({PROFILE: "true", MAJOR: "4"}, api_version="monitoring.coreos.com/v1", kind="PrometheusRule"), DEFAULT,
     "major version filtering is only supported for feature gates and custom resources"),
    (manifest({PROFILE: "true", MAJOR: "4"}, api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition",
              namespace=None), DEFAULT, None),
    (manifest({PROFILE: "true", MAJOR: "5"}, api_version="config.openshift.io/v1", kind="FeatureGate",
              namespace=None), DEFAULT, "payload major version 4 does not match release.openshift.io/major-version=5"),
    (manifest({PROFILE: "true", MAJOR: "-4"}, api_version="config.openshift.io/v1", kind="FeatureGate",
              namespace=None), DEFAULT, "payload major version 4 does not match release.openshift.io/major-version=-4"),
    (manifest({PROFILE: "true", MAJOR: "-5"}, api_version="config.openshift.io/v1", kind="FeatureGate",
              namespace=None), DEFAULT, None),
    (manifest({PROFILE: "true", MAJOR: "4,5"}, api_version="config.openshift.io/v1", kind="FeatureGate",
              namespace=None), replace(DEFAULT, major_version=5), None),
    (manifest({PROFILE: "true", MAJOR: "4,-4"}, api_version="config.openshift.io/v1", kind="FeatureGate",
              namespace=None), DEFAULT,
     "major versions both included and excluded in release.openshift.io/major-version=4,-4"),
    (manifest({PROFILE: "true", MAJOR: "four"}, api_version="config.openshift.io/v1", kind="FeatureGate",
              namespace=None), DEFAULT, 'invalid major version "four" in release.openshift.io/major-version=four'),
    (manifest({"include.release.openshift.io/other": "true"}), DEFAULT, f"{PROFILE} unset"),
    (manifest({PROFILE: "yes"}), DEFAULT, f"unrecognized value {PROFILE}=yes"),
    (included(**{"include.release.openshift.io/single-node-developer": "true"}),
     replace(DEFAULT, profile="single-node-developer"), None),
    (manifest({"include.release.openshift.io/ibm-cloud-managed": "true"}),
     replace(DEFAULT, profile="ibm-cloud-managed"), None),
    # First failure wins: the exclusion identifier before the feature set, the set before the profile.
    (manifest({HOSTED: "true", FEATURE_SET: "Bogus"}), replace(DEFAULT, exclude="internal-openshift-hosted"),
     f"{HOSTED}=true"),
    (manifest({FEATURE_SET: "TechPreviewNoUpgrade"}), DEFAULT,
     '"Default" is required, and release.openshift.io/feature-set=TechPreviewNoUpgrade'),
    # Capabilities and overrides are not load rules.
    (included(**{CAPABILITY: "Nope"}), DEFAULT, None),
]  # fmt: skip


@pytest.mark.parametrize(("m", "selection", "why"), LOAD_CASES)
def test_each_load_rule_excludes_with_upstreams_text(m: Manifest, selection: Selection, why: str | None) -> None:
    assert excluded_at_load(m, selection) == why


APPLY_CASES = [
    (included(**{CAPABILITY: "Console+Insights"}), ALL_CAPS, None),
    (included(**{CAPABILITY: "Console+Nope+Other"}), ALL_CAPS, "unrecognized capability names: Nope, Other"),
    (included(**{CAPABILITY: "Insights+Console"}), replace(ALL_CAPS, enabled_capabilities=frozenset()),
     "disabled capabilities: Insights, Console"),
    (included(**{CAPABILITY: "Console+Nope"}), replace(ALL_CAPS, enabled_capabilities=frozenset()),
     "unrecognized capability names: Nope"),
    (included(**{CAPABILITY: ""}), ALL_CAPS, "unrecognized capability names: "),
    (included(**{FEATURE_GATE: "G"}), ALL_CAPS, "feature gate G is required but not enabled"),  # gates change
    (included(), replace(ALL_CAPS, overrides=({"kind": "ConfigMap", "group": "", "namespace": "ns", "name": "x",
                                               "unmanaged": True},)), "overridden"),
    (included(), replace(ALL_CAPS, overrides=({"kind": "ConfigMap", "group": "", "namespace": "other", "name": "x",
                                               "unmanaged": True},)), None),
    (included(), replace(ALL_CAPS, overrides=({"kind": "ConfigMap", "group": "", "namespace": "ns", "name": "x",
                                               "unmanaged": False},)), None),
    (included(**{FEATURE_SET: "TechPreviewNoUpgrade"}), ALL_CAPS, None),  # a load rule only
]  # fmt: skip


@pytest.mark.parametrize(("m", "selection", "why"), APPLY_CASES)
def test_each_apply_rule_skips_with_upstreams_text(m: Manifest, selection: Selection, why: str | None) -> None:
    assert excluded_at_apply(m, selection) == why


def test_apply_leaves_the_load_rules_to_the_load() -> None:
    m = included(**{FEATURE_SET: "TechPreviewNoUpgrade", HOSTED: "true"})
    selection = replace(ALL_CAPS, exclude="internal-openshift-hosted")
    assert excluded_at_load(m, selection) is not None
    assert excluded_at_apply(m, selection) is None
    assert excluded(m, selection) == excluded_at_load(m, selection)


def test_overrides_match_group_kind_name_and_namespace_unless_cluster_scoped() -> None:
    namespace = manifest({PROFILE: "true"}, kind="Namespace", name="ns", namespace=None)
    rule = {"kind": "Namespace", "group": "", "namespace": "anything", "name": "ns", "unmanaged": True}
    assert overridden(namespace, [rule])
    deployment = manifest({PROFILE: "true"}, kind="Deployment", api_version="apps/v1")
    assert not overridden(deployment, [{**rule, "kind": "Deployment", "name": "x", "namespace": "ns"}])  # group
    assert overridden(deployment, [{**rule, "kind": "Deployment", "group": "apps", "name": "x", "namespace": "ns"}])
    # The first entry naming the object decides.
    first = {"kind": "Deployment", "group": "apps", "namespace": "ns", "name": "x", "unmanaged": False}
    assert not overridden(deployment, [first, {**first, "unmanaged": True}])


def test_create_only_is_true_in_any_case() -> None:
    assert is_create_only(included(**{"release.openshift.io/create-only": "TRUE"}))
    assert not is_create_only(included(**{"release.openshift.io/create-only": "yes"}))
    assert not is_create_only(manifest(None))


def test_capabilities_are_listed_as_annotated() -> None:
    assert capabilities(included(**{CAPABILITY: "B+A"})) == ["B", "A"]
    assert capabilities(included()) == []


def test_a_resource_moving_into_a_disabled_capability_enables_it_implicitly() -> None:
    selection = Selection(
        major_version=4,
        known_capabilities=frozenset({"Console", "Insights", "Storage"}),
        enabled_capabilities=frozenset({"Console"}),
    )
    current = [included(), manifest({PROFILE: "true", CAPABILITY: "Console"}, name="y")]
    target = [
        included(**{CAPABILITY: "Insights+Console"}),  # now in Insights, disabled: Insights is implied
        manifest({PROFILE: "true", CAPABILITY: "Console+Storage"}, name="y"),  # Storage implied
        manifest({PROFILE: "true", CAPABILITY: "Storage"}, name="new"),  # new resource: nothing implied
        manifest({PROFILE: "true", CAPABILITY: "Future"}, name="x", namespace="other"),  # unknown name: not skipped
    ]
    assert implicitly_enabled(current, target, selection) == {"Insights", "Storage"}
    # What is enabled already (implicitly or not) is not implied again.
    assert implicitly_enabled(current, target, replace(selection, enabled_capabilities=frozenset(
        {"Console", "Insights", "Storage"}))) == frozenset()  # fmt: skip
    # A resource the current payload skips implies nothing.
    skipped = [manifest({PROFILE: "true", CAPABILITY: "Storage"}), manifest({PROFILE: "true"}, name="y")]
    assert implicitly_enabled(skipped, target[:1], selection) == frozenset()


ANNOTATION_KEYS = [PROFILE, FEATURE_SET, FEATURE_GATE, MAJOR, CAPABILITY, HOSTED,
                   "include.release.openshift.io/single-node-developer"]  # fmt: skip
ANNOTATION_VALUES = ["true", "True", "", "Default", "TechPreviewNoUpgrade,Default", "Bogus", "A,-B", "-A", "4", "-4",
                     "4,-5", "x", "Console+Insights", "Nope"]  # fmt: skip


@given(
    annotations=st.dictionaries(st.sampled_from(ANNOTATION_KEYS), st.sampled_from(ANNOTATION_VALUES), max_size=5),
    kind=st.sampled_from([("v1", "ConfigMap"), ("config.openshift.io/v1", "FeatureGate")]),
    feature_set=st.sampled_from([*FEATURE_SETS, ""]),
    gates=st.frozensets(st.sampled_from(["A", "B"])),
    exclude=st.sampled_from(["", "internal-openshift-hosted"]),
)
def test_every_combination_gets_one_verdict_that_the_split_preserves(
    annotations: dict[str, str], kind: tuple[str, str], feature_set: str, gates: frozenset[str], exclude: str
) -> None:
    m = manifest(annotations, api_version=kind[0], kind=kind[1], namespace=None)
    selection = replace(ALL_CAPS, feature_set=feature_set, enabled_gates=gates, exclude=exclude)
    at_load = excluded_at_load(m, selection)
    at_apply = excluded_at_apply(m, selection)
    assert excluded(m, selection) == (at_load or at_apply)
    for why in (at_load, at_apply):
        assert why is None or (why and "\n" not in why)
    if PROFILE not in annotations:
        assert at_load is not None  # the profile is required
    if annotations.get(HOSTED) == "true" and exclude:
        assert at_load == f"{HOSTED}=true"
    if at_load is None and FEATURE_SET in annotations:
        assert (feature_set or "Default") in annotations[FEATURE_SET].split(",")
