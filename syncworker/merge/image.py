"""ImageStreams (image.openshift.io/v1)."""

from __future__ import annotations

from typing import Any

from cvo_py.runtime.jsondata import copy_json
from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.values import (
    JSON,
    Changes,
    at,
    child,
    enforce,
    mapping,
    objects,
    with_default,
)

DEFAULT_IMPORT_MODE = "Legacy"


def merge_image_stream(changes: Changes, live: JSON, required: JSON) -> None:
    """`lookupPolicy`; tags paired by name: a new one appended, an existing one takes the manifest's
    `from` and `importPolicy` (importMode Legacy) and keeps its other fields; live-only tags stay."""
    ensure_metadata(changes, live, required)
    spec = mapping(required, "spec", "")
    have = child(live, "spec")
    enforce(changes, have, "lookupPolicy", mapping(spec, "lookupPolicy", "spec") or None, "spec.lookupPolicy")
    tags = [t for t in have.get("tags") or [] if isinstance(t, dict)]
    for tag in objects(spec, "tags", "spec"):
        name = tag.get("name")
        path = f"spec.tags[name={name}]"
        current = next((t for t in tags if t.get("name") == name), None)
        if current is None:
            changes.note(path)
            tags.append(copy_json(tag))
            continue
        enforce(changes, current, "from", tag.get("from"), at(path, "from"))
        policy = _import_policy_defaults(tag.get("importPolicy"))
        enforce(changes, current, "importPolicy", policy, at(path, "importPolicy"), _import_policy_defaults)
    if tags or "tags" in have:
        have["tags"] = tags


def _import_policy_defaults(policy: Any) -> Any:
    if policy is None:
        policy = {}
    return with_default(policy, {"importMode": DEFAULT_IMPORT_MODE})
