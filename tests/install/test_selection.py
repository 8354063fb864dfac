"""Which install/ manifests the CVO selects, by its annotation rules (syncworker/select.py), for
every cluster profile, feature set and the one feature gate install/ names: a file's name selects
nothing, its documents' annotations do. The rules themselves are tested in
tests/syncworker/test_select.py."""

from __future__ import annotations

import functools
import itertools
import json
import re
from typing import Any

import pytest

from syncworker.manifest import CVO_MANIFESTS, Manifest, parse_manifests
from syncworker.select import FEATURE_SETS, Selection, excluded
from testkit.harness import manifests

ACCEPT_RISKS_GATE = "ClusterUpdateAcceptRisks"
PROFILES = ("self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift")
SUFFIX = re.compile(r"-(" + "|".join(FEATURE_SETS) + r")\.yaml$")


@functools.cache
def every_document() -> list[tuple[str, Manifest]]:
    """Every document of install/, rendered and read as the CVO reads its image's /manifests."""
    return [
        (path.name, m)
        for path in manifests.files()
        for m in parse_manifests(manifests.rendered(path).encode(), directory=CVO_MANIFESTS, file=path.name)
    ]


def cluster(profile: str = "self-managed-high-availability", **fields: Any) -> Selection:
    """A cluster of that profile whose CVO loads a 4.y payload (install/ names no capability)."""
    return Selection(profile=profile, major_version=4, **fields)


def selected(selection: Selection) -> set[str]:
    return {name for name, m in every_document() if excluded(m, selection) is None}


def test_a_feature_set_suffix_is_backed_by_the_annotation_on_every_document() -> None:
    docs = every_document()
    suffixed = [(name, m) for name, m in docs if SUFFIX.search(name)]
    assert suffixed, "install/ has files named for a feature set"
    for name, m in suffixed:
        wanted = SUFFIX.search(name).group(1)  # type: ignore[union-attr]
        listed = (m.annotations or {}).get("release.openshift.io/feature-set", "")
        assert wanted in listed.split(","), f"{name}: {m.kind} {m.name} lacks the annotation"
    # ...because without it the suffix selects nothing: the document is applied on every cluster.
    name, m = suffixed[0]
    annotations = {k: v for k, v in (m.annotations or {}).items() if k != "release.openshift.io/feature-set"}
    obj = {**m.obj, "metadata": {**m.obj["metadata"], "annotations": annotations}}
    [bare] = parse_manifests(json.dumps(obj).encode(), directory=CVO_MANIFESTS, file=name)
    assert excluded(bare, cluster(feature_set="Default")) is None


@pytest.mark.parametrize(
    ("profile", "feature_set", "gate"),
    list(itertools.product(PROFILES, FEATURE_SETS, (False, True))),
)
def test_what_each_cluster_selects(profile: str, feature_set: str, gate: bool) -> None:
    gates = frozenset({ACCEPT_RISKS_GATE} if gate else ())
    selection = cluster(profile, feature_set=feature_set, enabled_gates=gates)
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
    assert selected(selection) == want


HOSTED_PROFILES = ("hypershift", "ibm-cloud-managed")
ADMIN_ACK_FILES = {"0000_00_cluster-version-operator_01_adminack_configmap.yaml",
                   "0000_00_cluster-version-operator_01_admingate_configmap.yaml"}


def test_hosted_control_planes_apply_only_the_admin_ack_configmaps() -> None:
    """A hosted control plane (excluding internal-openshift-hosted) applies none of the operators'
    documents, as upstream's manifests say: only admin-acks and admin-gates, which its profiles
    include, whatever the feature set and gates."""
    for profile, feature_set in itertools.product((*HOSTED_PROFILES, "self-managed-high-availability"), FEATURE_SETS):
        gates = frozenset({ACCEPT_RISKS_GATE})
        selection = cluster(profile, exclude="internal-openshift-hosted", feature_set=feature_set, enabled_gates=gates)
        assert selected(selection) == ADMIN_ACK_FILES, (profile, feature_set)


def test_every_document_names_its_profile() -> None:
    for name, m in every_document():
        annotations = m.annotations or {}
        assert annotations.get("include.release.openshift.io/self-managed-high-availability") == "true", (
            f"{name}: {m.kind} {m.name} is selected by no cluster profile"
        )


@pytest.mark.parametrize(
    ("profile", "feature_set", "gate"), list(itertools.product(PROFILES, FEATURE_SETS, (False, True)))
)
def test_no_cluster_selects_two_documents_for_one_object(profile: str, feature_set: str, gate: bool) -> None:
    """One manifest per object (start's Service once was defined twice): whatever a cluster selects,
    no two documents name the same kind, namespace and name."""
    gates = frozenset({ACCEPT_RISKS_GATE} if gate else ())
    selection = cluster(profile, feature_set=feature_set, enabled_gates=gates)
    seen: dict[tuple[str, str, str, str], str] = {}
    for name, m in every_document():
        if excluded(m, selection) is not None:
            continue
        identity = (m.group, m.kind, m.namespace, m.name)
        assert identity not in seen, f"{identity} defined in {seen.get(identity)} and {name}"
        seen[identity] = name
