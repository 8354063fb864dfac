"""Upstream's generic rule, for every kind without a typed merge (Secrets, APIServices, mutating
webhooks, NetworkPolicies, PrometheusRules, config.openshift.io resources, custom resources, ...).

The manifest, with `apiVersion`, `kind`, `metadata` and `status` taken from live, is compared
with live as JSON. Any difference is written: the manifest's other top-level keys replace live's
(a key only live has stays), and its labels, annotations and owner references replace live's
wholesale; status is never written. A change to the manifest's metadata alone is therefore not
written until another field differs, as upstream.
"""

from __future__ import annotations

from typing import Any

from cvo_py.runtime.jsondata import copy_json
from syncworker.merge.values import JSON, ApplyProblem, Changes, exact, mapping

KEPT_FROM_LIVE = ("apiVersion", "kind", "metadata", "status")
REPLACED_METADATA = ("labels", "annotations", "ownerReferences")


def check_name(required: JSON) -> None:
    """Upstream refuses a generic manifest without a name before any request."""
    if not mapping(required, "metadata", "").get("name"):
        raise ApplyProblem("invalid object: name cannot be empty")


def merge_generic(changes: Changes, live: JSON, required: JSON) -> None:
    """The generic rule on `live` (changed in place, only when something differs)."""
    compared: dict[str, Any] = {k: v for k, v in required.items() if k not in KEPT_FROM_LIVE}
    compared.update({k: live[k] for k in KEPT_FROM_LIVE if k in live})
    if exact(live, compared):
        return
    for key in sorted(live.keys() | compared.keys()):
        if key not in compared or key not in live or not exact(live[key], compared[key]):
            changes.note(key)
    wanted = mapping(required, "metadata", "")
    metadata = live.get("metadata")
    if not isinstance(metadata, dict):
        metadata = live["metadata"] = {}
    for key in REPLACED_METADATA:
        if wanted.get(key):
            metadata[key] = copy_json(wanted[key])
        else:
            metadata.pop(key, None)
    for key, value in required.items():
        if key not in KEPT_FROM_LIVE:
            live[key] = copy_json(value)
