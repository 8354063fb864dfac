"""The metadata rules (labels and annotations set and overwritten, never removed; owner references
by UID), the ClusterVersion owner reference, create-only and the delete annotation."""

from __future__ import annotations

from typing import Any

import pytest

from syncworker.merge import merge
from syncworker.merge.metadata import delete_requested, is_create_only, with_owner
from syncworker.merge.values import ApplyProblem

JSON = dict[str, Any]
CV_UID = "3e1c1f2a-0000-4000-8000-000000000001"


def config_map(**metadata: Any) -> JSON:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns", **metadata}}


ROWS = [
    # (what, required metadata, live metadata, changed, merged metadata)
    (
        "a manifest label is added, a live-only one kept",
        {"labels": {"a": "1"}},
        {"labels": {"admin": "x"}},
        True,
        {"labels": {"admin": "x", "a": "1"}},
    ),
    ("a changed value is overwritten", {"labels": {"a": "1"}}, {"labels": {"a": "2"}}, True, {"labels": {"a": "1"}}),
    (
        "a key dropped from the manifest is never deleted",
        {"annotations": {}},
        {"annotations": {"old": "kept"}},
        False,
        {"annotations": {"old": "kept"}},
    ),
    ("an empty value is a value", {"labels": {"a": ""}}, {"labels": {}}, True, {"labels": {"a": ""}}),
    (
        "an owner reference of the same UID is replaced when it differs",
        {"ownerReferences": [{"uid": "u1", "kind": "ClusterVersion", "name": "version", "controller": True}]},
        {"ownerReferences": [{"uid": "u1", "kind": "ClusterVersion", "name": "version"}]},
        True,
        {"ownerReferences": [{"uid": "u1", "kind": "ClusterVersion", "name": "version", "controller": True}]},
    ),
    (
        "an owner reference of a new UID is appended, none removed",
        {"ownerReferences": [{"uid": "u2", "kind": "ClusterVersion", "name": "version"}]},
        {"ownerReferences": [{"uid": "u1", "kind": "ClusterVersion", "name": "version"}]},
        True,
        {
            "ownerReferences": [
                {"uid": "u1", "kind": "ClusterVersion", "name": "version"},
                {"uid": "u2", "kind": "ClusterVersion", "name": "version"},
            ]
        },
    ),
    (
        "server-set metadata is untouched",
        {"labels": {"a": "1"}},
        {"labels": {"a": "1"}, "uid": "x", "resourceVersion": "7", "managedFields": [{"manager": "m"}]},
        False,
        {"labels": {"a": "1"}, "uid": "x", "resourceVersion": "7", "managedFields": [{"manager": "m"}]},
    ),
]


@pytest.mark.parametrize(("what", "required", "live", "changed", "merged"), ROWS, ids=[r[0] for r in ROWS])
def test_metadata_merges_as_upstream(what: str, required: JSON, live: JSON, changed: bool, merged: JSON) -> None:
    result = merge(config_map(**required), config_map(**live))
    assert result.changed is changed
    assert result.merged["metadata"] == {"name": "c", "namespace": "ns", **merged}


def test_the_cluster_version_becomes_the_controlling_owner() -> None:
    out = with_owner(config_map(), CV_UID)
    assert out["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterVersion",
            "name": "version",
            "uid": CV_UID,
            "controller": True,
        }
    ]


def test_a_create_only_manifest_is_owned_but_not_controlled() -> None:
    out = with_owner(config_map(annotations={"release.openshift.io/create-only": "true"}), CV_UID)
    assert "controller" not in out["metadata"]["ownerReferences"][0]


def test_create_only_in_another_case_is_still_controlled_as_upstream() -> None:
    manifest = config_map(annotations={"release.openshift.io/create-only": "True"})
    assert with_owner(manifest, CV_UID)["metadata"]["ownerReferences"][0]["controller"] is True
    assert is_create_only(manifest) is True


def test_an_owner_of_another_kind_in_the_manifest_is_kept_alone() -> None:
    owners = [{"apiVersion": "v1", "kind": "Namespace", "name": "ns", "uid": "n"}]
    manifest = config_map(ownerReferences=owners)
    assert with_owner(manifest, CV_UID)["metadata"]["ownerReferences"] == owners


def test_a_cluster_version_owner_in_the_manifest_is_replaced_by_the_live_one() -> None:
    manifest = config_map(ownerReferences=[{"kind": "ClusterVersion", "name": "version", "uid": "stale"}])
    assert with_owner(manifest, CV_UID)["metadata"]["ownerReferences"][0]["uid"] == CV_UID


def test_with_owner_leaves_the_manifest_unchanged() -> None:
    manifest = config_map()
    with_owner(manifest, CV_UID)
    assert "ownerReferences" not in manifest["metadata"]


@pytest.mark.parametrize(("value", "create_only"), [("true", True), ("TRUE", True), ("false", False), ("yes", False)])
def test_create_only_is_true_in_any_case(value: str, create_only: bool) -> None:
    assert is_create_only(config_map(annotations={"release.openshift.io/create-only": value})) is create_only


def test_no_annotation_is_neither_create_only_nor_a_deletion() -> None:
    assert is_create_only(config_map()) is False
    assert delete_requested(config_map()) is False


def test_the_delete_annotation_asks_for_removal_only_when_exactly_true() -> None:
    assert delete_requested(config_map(annotations={"release.openshift.io/delete": "true"})) is True
    with pytest.raises(ApplyProblem) as caught:
        delete_requested(config_map(annotations={"release.openshift.io/delete": "True"}))
    assert str(caught.value) == 'invalid delete annotation "release.openshift.io/delete" value: "True"'


def test_an_unprintable_delete_value_is_escaped_in_the_error() -> None:
    with pytest.raises(ApplyProblem, match=r'value: "yes\\n\\x1b\[0m"$'):
        delete_requested(config_map(annotations={"release.openshift.io/delete": "yes\n\x1b[0m"}))
