"""The metadata rules every typed kind shares, the owner reference the CVO sets on what it applies,
and the two annotations that change how a manifest is applied.

    ensure_metadata(changes, live, required, path)    namespace and name if set; labels and annotations
                                                      set or overwritten key by key, never removed;
                                                      ownerReferences by UID, replaced or appended
    with_owner(manifest, cluster_version_uid) -> JSON  the manifest with the ClusterVersion as its owner
    is_create_only(obj) -> bool                       `release.openshift.io/create-only`, any case of "true"
    delete_requested(obj) -> bool                     `release.openshift.io/delete: "true"`; any other
                                                      value raises ApplyProblem with upstream's text
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.jsondata import copy_json
from syncworker.merge.values import (
    JSON,
    ApplyProblem,
    Changes,
    at,
    mapping,
    merge_strings,
    objects,
    same,
    string_map,
)

CREATE_ONLY = "release.openshift.io/create-only"
DELETE = "release.openshift.io/delete"

CLUSTER_VERSION_API = "config.openshift.io/v1"
CLUSTER_VERSION_KIND = "ClusterVersion"
CLUSTER_VERSION_NAME = "version"


def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    """The object's annotations, checked to be strings."""
    return string_map(mapping(obj, "metadata", ""), "annotations", "metadata")


def ensure_metadata(changes: Changes, live: JSON, required: Mapping[str, Any], parent: str = "") -> None:
    """Upstream's object-meta rule on `live["metadata"]` (changed in place; `parent` is the path of
    the object, "" at the top): what the manifest sets wins, what only live has stays, so an
    admin's label survives and a key dropped from the manifest is never deleted."""
    path = at(parent, "metadata")
    want = mapping(required, "metadata", parent)
    have = live.get("metadata")
    if not isinstance(have, dict):
        have = {}
        live["metadata"] = have
    for key in ("namespace", "name"):
        value = want.get(key)
        if isinstance(value, str) and value and have.get(key) != value:
            changes.note(f"{path}.{key}")
            have[key] = value
    merge_strings(changes, have, "labels", string_map(want, "labels", path), f"{path}.labels")
    merge_strings(changes, have, "annotations", string_map(want, "annotations", path), f"{path}.annotations")
    _merge_owner_references(changes, have, objects(want, "ownerReferences", path), f"{path}.ownerReferences")


def _merge_owner_references(changes: Changes, have: JSON, required: list[JSON], path: str) -> None:
    if not required:
        return
    current = have.get("ownerReferences")
    current = list(current) if isinstance(current, list) else []
    for reference in required:
        uid = reference.get("uid")
        at = next((i for i, r in enumerate(current) if isinstance(r, dict) and r.get("uid") == uid), None)
        if at is None:
            changes.note(f"{path}[uid={uid}]")
            current.append(copy_json(reference))
        elif not same(current[at], reference):
            changes.note(f"{path}[uid={uid}]")
            current[at] = copy_json(reference)
    have["ownerReferences"] = current


def with_owner(manifest: Mapping[str, Any], cluster_version_uid: str) -> JSON:
    """The manifest with upstream's owner reference: the manifest's own owners when one of them is
    of a kind other than ClusterVersion, else exactly the ClusterVersion `version` with its UID,
    as the controller unless the manifest is create-only (exactly "true"), so deleting the
    ClusterVersion garbage-collects what the CVO created and nothing an admin adopted."""
    out: JSON = copy_json(dict(manifest))
    metadata = mapping(out, "metadata", "")
    owners = objects(metadata, "ownerReferences", "metadata")
    if any(owner.get("kind") != CLUSTER_VERSION_KIND for owner in owners):
        return out
    reference: JSON = {
        "apiVersion": CLUSTER_VERSION_API,
        "kind": CLUSTER_VERSION_KIND,
        "name": CLUSTER_VERSION_NAME,
        "uid": cluster_version_uid,
    }
    if annotations_of(out).get(CREATE_ONLY) != "true":
        reference["controller"] = True
    metadata["ownerReferences"] = [reference]
    out["metadata"] = metadata
    return out


def is_create_only(obj: Mapping[str, Any]) -> bool:
    """Created when absent, never updated: `release.openshift.io/create-only` is "true" in any case."""
    return annotations_of(obj).get(CREATE_ONLY, "").lower() == "true"


def delete_requested(obj: Mapping[str, Any]) -> bool:
    """Whether the manifest asks for its object's removal (`release.openshift.io/delete: "true"`).
    Any other value is refused as upstream refuses it: the task fails, naming the value."""
    value = annotations_of(obj).get(DELETE)
    if value is None:
        return False
    if value != "true":
        raise ApplyProblem(f"invalid delete annotation {go_quote(DELETE)} value: {go_quote(value)}")
    return True
