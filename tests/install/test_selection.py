"""Which install/ manifests the CVO selects, by its annotation rules (testkit/oracles/include.py),
for every cluster profile, feature set and the one feature gate install/ names: a file's name
selects nothing, its documents' annotations do."""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any

import pytest

from testkit.harness import manifests
from testkit.oracles.include import FEATURE_SETS, PROFILES, Cluster, why_excluded

ACCEPT_RISKS_GATE = "ClusterUpdateAcceptRisks"
SUFFIX = re.compile(r"-(" + "|".join(FEATURE_SETS) + r")\.yaml$")


@functools.cache
def every_document() -> list[tuple[str, dict[str, Any]]]:
    return [(path.name, doc) for path in manifests.files() for doc in manifests.documents(manifests.rendered(path))]


def selected(cluster: Cluster) -> set[str]:
    return {name for name, doc in every_document() if why_excluded(doc, cluster) is None}


def test_a_feature_set_suffix_is_backed_by_the_annotation_on_every_document() -> None:
    docs = every_document()
    suffixed = [(name, doc) for name, doc in docs if SUFFIX.search(name)]
    assert suffixed, "install/ has files named for a feature set"
    for name, doc in suffixed:
        wanted = SUFFIX.search(name).group(1)  # type: ignore[union-attr]
        listed = (doc["metadata"].get("annotations") or {}).get("release.openshift.io/feature-set", "")
        assert wanted in listed.split(","), f"{name}: {doc['kind']} {doc['metadata']['name']} lacks the annotation"
    # ...because without it the suffix selects nothing: the document is applied on every cluster.
    name, doc = suffixed[0]
    bare = {**doc, "metadata": {**doc["metadata"], "annotations": {
        k: v for k, v in doc["metadata"]["annotations"].items() if k != "release.openshift.io/feature-set"}}}
    assert why_excluded(bare, Cluster(feature_set="Default")) is None


@pytest.mark.parametrize(
    ("profile", "feature_set", "gate"),
    list(itertools.product(PROFILES, FEATURE_SETS, (False, True))),
)
def test_what_each_cluster_selects(profile: str, feature_set: str, gate: bool) -> None:
    gates = frozenset({ACCEPT_RISKS_GATE} if gate else ())
    cluster = Cluster(profile=profile, feature_set=feature_set, enabled_gates=gates)
    names = {path.name for path in manifests.files()}
    cvo = {n for n in names if "_cluster-version-operator_" in n}
    usc = {n for n in names if "_update-status-controller_" in n}
    accept_risks = {n for n in cvo if "accept-risks" in n}
    admin_acks = {n for n in cvo if "_01_admin" in n}
    assert accept_risks and usc and cvo - accept_risks and len(admin_acks) == 2
    want: set[str] = set()
    if profile in HOSTED_PROFILES:
        want |= admin_acks  # the admin acks in the hosted cluster, as upstream
    if profile == "self-managed-high-availability":
        want |= cvo - accept_risks
        if gate:
            want |= accept_risks
        if feature_set == "DevPreviewNoUpgrade":
            want |= usc
    assert selected(cluster) == want


HOSTED_PROFILES = ("hypershift", "ibm-cloud-managed")
ADMIN_ACK_FILES = {"0000_00_cluster-version-operator_01_adminack_configmap.yaml",
                   "0000_00_cluster-version-operator_01_admingate_configmap.yaml"}


def test_hosted_control_planes_apply_only_the_admin_ack_configmaps() -> None:
    """A hosted control plane (excluding internal-openshift-hosted) applies none of the operators'
    documents, as upstream's manifests say: only admin-acks and admin-gates, which its profiles
    include, whatever the feature set and gates."""
    for profile, feature_set in itertools.product((*HOSTED_PROFILES, "self-managed-high-availability"), FEATURE_SETS):
        cluster = Cluster(profile=profile, exclude="internal-openshift-hosted", feature_set=feature_set,
                          enabled_gates=frozenset({ACCEPT_RISKS_GATE}))
        assert selected(cluster) == ADMIN_ACK_FILES, (profile, feature_set)


def test_every_document_names_its_profile() -> None:
    for name, doc in every_document():
        annotations = doc["metadata"].get("annotations") or {}
        assert annotations.get("include.release.openshift.io/self-managed-high-availability") == "true", (
            f"{name}: {doc['kind']} {doc['metadata']['name']} is selected by no cluster profile"
        )


# The rules themselves, one by one, as the CVO words its exclusions.
DOC = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "x", "namespace": "ns", "annotations": {
        "include.release.openshift.io/self-managed-high-availability": "true"}},
}


def _with(**annotations: str) -> dict[str, Any]:
    return {**DOC, "metadata": {**DOC["metadata"], "annotations": {**DOC["metadata"]["annotations"], **annotations}}}


@pytest.mark.parametrize(
    ("doc", "cluster", "why"),
    [
        ({**DOC, "metadata": {"name": "x"}}, Cluster(), "no annotations"),
        (_with(**{"exclude.release.openshift.io/hosted": "true"}), Cluster(exclude="hosted"),
         "exclude.release.openshift.io/hosted=true"),
        (_with(**{"release.openshift.io/feature-set": "Default", "release.openshift.io/feature-gate": "A"}), Cluster(),
         "both feature set and feature gate annotations are present"),
        (_with(**{"release.openshift.io/feature-set": "TechPreviewNoUpgrade"}), Cluster(feature_set=""),
         '"Default" is required, and release.openshift.io/feature-set=TechPreviewNoUpgrade'),
        (_with(**{"release.openshift.io/feature-set": "Default,Bogus"}), Cluster(),
         "unrecognized value release.openshift.io/feature-set=Default,Bogus"),
        (_with(**{"release.openshift.io/feature-gate": "A,-B"}), Cluster(enabled_gates=frozenset({"B"})),
         "feature gate A is required but not enabled"),
        (_with(**{"release.openshift.io/feature-gate": "A,-B"}), Cluster(enabled_gates=frozenset({"A", "B"})),
         "feature gate B is enabled but manifest requires it to be disabled"),
        (_with(**{"release.openshift.io/major-version": "4"}), Cluster(),
         "release.openshift.io/major-version is only allowed on FeatureGate objects and custom resources"),
        ({**DOC, "metadata": {"name": "x", "annotations": {"include.release.openshift.io/other": "true"}}}, Cluster(),
         "include.release.openshift.io/self-managed-high-availability unset"),
        (_with(**{"include.release.openshift.io/self-managed-high-availability": "yes"}), Cluster(),
         "unrecognized value include.release.openshift.io/self-managed-high-availability=yes"),
        (_with(**{"capability.openshift.io/name": "Console+Nope"}), Cluster(known_capabilities=frozenset({"Console"})),
         "unrecognized capability names: Nope"),
        (_with(**{"capability.openshift.io/name": "Console"}), Cluster(known_capabilities=frozenset({"Console"})),
         "disabled capabilities: Console"),
        (DOC, Cluster(overrides=({"kind": "ConfigMap", "namespace": "ns", "name": "x", "unmanaged": True},)),
         "overridden"),
    ],
)
def test_each_rule_excludes_with_its_reason(doc: dict[str, Any], cluster: Cluster, why: str) -> None:
    assert why_excluded(doc, cluster) == why


def test_major_version_selects_custom_resources() -> None:
    rule = {**_with(**{"release.openshift.io/major-version": "4,-5"}), "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule"}
    assert why_excluded(rule, Cluster(major_version=4)) is None
    assert why_excluded(rule, Cluster(major_version=5)) is not None


@pytest.mark.parametrize(
    ("profile", "feature_set", "gate"), list(itertools.product(PROFILES, FEATURE_SETS, (False, True)))
)
def test_no_cluster_selects_two_documents_for_one_object(profile: str, feature_set: str, gate: bool) -> None:
    """One manifest per object (start's Service once was defined twice): whatever a cluster selects,
    no two documents name the same kind, namespace and name."""
    gates = frozenset({ACCEPT_RISKS_GATE} if gate else ())
    cluster = Cluster(profile=profile, feature_set=feature_set, enabled_gates=gates)
    seen: dict[tuple[str, str, str, str], str] = {}
    for name, doc in every_document():
        if why_excluded(doc, cluster) is not None:
            continue
        meta = doc.get("metadata") or {}
        group = str(doc.get("apiVersion", "")).rpartition("/")[0]
        identity = (group, str(doc.get("kind")), str(meta.get("namespace", "")), str(meta["name"]))
        assert identity not in seen, f"{identity} defined in {seen.get(identity)} and {name}"
        seen[identity] = name
