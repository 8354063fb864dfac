"""Applying one object, decided on plain JSON: what to send for a manifest given its live object.

    plan(required, existing, applied=None) -> Plan   the whole decision for one object: CREATE when
                                                     absent, nothing for a create-only object that
                                                     exists, else the merge, UPDATE only when it
                                                     changed something
    merge(required, existing) -> MergeResult         the kind's merge: typed by exact apiVersion and
                                                     kind, else the generic rule
    is_typed(api_version, kind) -> bool              whether the kind has a typed merge
    fingerprint(required, live) -> str               what the applier keeps after a write (below)
    with_owner, is_create_only, delete_requested     (syncworker.merge.metadata)
    inject_proxy, inject_tls, cvo_service_env        (syncworker.merge.mutations)
    ApplyProblem                                  a manifest that cannot be applied, as one line

`required` is the manifest's object after `with_owner` and the mutations; `existing` the object
the GET returned (None on 404). Nothing here sends a request or reads a clock.

Typed kinds enforce the fields upstream enforces and keep the rest; the server's defaults are
filled on both sides before comparing, so a live object that holds what the manifest says (plus
what the server added) is unchanged and no write is sent. The generic rule compares as upstream
does, which for a kind whose server fills defaults in the fields it compares means a write every
pass that changes nothing. `applied` stops that repetition: after each write the applier keeps
`fingerprint(required, response)`, and when the manifest and the live object are still what
they were after that write, a new write would only give the same object again, so none is sent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from cvo_py.runtime.jsondata import copy_json
from syncworker.merge import (
    admissionregistration,
    apiextensions,
    apps,
    batch,
    core,
    generic,
    image,
    olm,
    rbac,
    security,
)
from syncworker.merge.metadata import delete_requested, is_create_only, with_owner
from syncworker.merge.mutations import cvo_service_env, inject_proxy, inject_tls
from syncworker.merge.values import JSON, ApplyProblem, Changes

__all__ = [
    "JSON",
    "Action",
    "ApplyProblem",
    "MergeResult",
    "Plan",
    "cvo_service_env",
    "delete_requested",
    "fingerprint",
    "inject_proxy",
    "inject_tls",
    "is_create_only",
    "is_typed",
    "merge",
    "merge_by",
    "plan",
    "with_owner",
]

Rule = Callable[[Changes, JSON, JSON], None]

# Upstream's typed kinds, by exact apiVersion and kind (another version of a kind is generic).
TYPED: dict[tuple[str, str], Rule] = {
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"): (
        admissionregistration.merge_validating_webhook_configuration
    ),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): apiextensions.merge_custom_resource_definition,
    ("apps/v1", "Deployment"): apps.merge_deployment,
    ("apps/v1", "DaemonSet"): apps.merge_daemon_set,
    ("batch/v1", "Job"): batch.merge_job,
    ("batch/v1", "CronJob"): batch.merge_cron_job,
    ("v1", "ConfigMap"): core.merge_config_map,
    ("v1", "Namespace"): core.merge_namespace,
    ("v1", "Service"): core.merge_service,
    ("v1", "ServiceAccount"): core.merge_service_account,
    ("image.openshift.io/v1", "ImageStream"): image.merge_image_stream,
    ("operators.coreos.com/v1", "OperatorGroup"): olm.merge_operator_group,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): rbac.merge_role,
    ("rbac.authorization.k8s.io/v1", "Role"): rbac.merge_role,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): rbac.merge_binding,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): rbac.merge_binding,
    ("security.openshift.io/v1", "SecurityContextConstraints"): security.merge_security_context_constraints,
}


def is_typed(api_version: str, kind: str) -> bool:
    """Whether upstream merges this kind by type (anything else takes the generic rule)."""
    return (api_version, kind) in TYPED


@dataclass(frozen=True)
class MergeResult:
    """`merged` is the object to PUT when `changed`, else the live object itself; `changes` names
    the fields that differed ("spec.replicas", "metadata.labels[app]"), for the log."""

    changed: bool
    merged: JSON
    changes: tuple[str, ...] = ()


def merge(required: JSON, existing: JSON) -> MergeResult:
    """The kind's merge of the manifest into its live object. Raises ApplyProblem when a field the
    merge reads has the wrong JSON type."""
    rule = TYPED.get((str(required.get("apiVersion")), str(required.get("kind"))), generic.merge_generic)
    return merge_by(rule, required, existing)


def merge_by(rule: Rule, required: JSON, existing: JSON) -> MergeResult:
    """`rule` run on a copy of `existing`; the live object itself when it changed nothing."""
    changes = Changes()
    live: JSON = copy_json(existing)
    rule(changes, live, required)
    if not changes:
        return MergeResult(False, existing)
    return MergeResult(True, live, tuple(changes.paths))


class Action(Enum):
    CREATE = "create"  # POST `body`, then check the response's health
    UPDATE = "update"  # PUT `body` (the merged live object), then check the response's health
    NONE = "none"  # nothing to send; check `body` (the live object) when `check_health`


@dataclass(frozen=True)
class Plan:
    action: Action
    body: JSON
    changes: tuple[str, ...] = ()
    check_health: bool = True
    why: str = ""  # for the log when nothing is sent: "create-only", "unchanged", "unchanged since the last write"


def plan(required: JSON, existing: JSON | None, applied: str | None = None) -> Plan:
    """Upstream's steps 5-7 for one object, as one decision. `applied` is the fingerprint the
    applier kept after its last write of this object (module docstring)."""
    if not is_typed(str(required.get("apiVersion")), str(required.get("kind"))):
        generic.check_name(required)
    if existing is None:
        return Plan(Action.CREATE, required)
    if is_create_only(required):
        return Plan(Action.NONE, existing, check_health=False, why="create-only")
    if applied is not None and applied == fingerprint(required, existing):
        return Plan(Action.NONE, existing, why="unchanged since the last write")
    result = merge(required, existing)
    if not result.changed:
        return Plan(Action.NONE, existing, why="unchanged")
    return Plan(Action.UPDATE, result.merged, result.changes)


VOLATILE_METADATA = ("resourceVersion", "managedFields")


def fingerprint(required: JSON, live: JSON) -> str:
    """The manifest and what the live object holds that a write could change (all but status, the
    resourceVersion and managedFields, which status writes by others move), as one digest."""
    kept = {key: value for key, value in live.items() if key != "status"}
    metadata = kept.get("metadata")
    if isinstance(metadata, dict):
        kept["metadata"] = {k: v for k, v in metadata.items() if k not in VOLATILE_METADATA}
    text = json.dumps([required, kept], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
