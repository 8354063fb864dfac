"""Roles, ClusterRoles and their bindings (rbac.authorization.k8s.io/v1)."""

from __future__ import annotations

from typing import Any

from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.values import JSON, Changes, enforce, mapping, objects, with_default

RBAC_GROUP = "rbac.authorization.k8s.io"


def merge_role(changes: Changes, live: JSON, required: JSON) -> None:
    """`aggregationRule`, and `rules` unless the manifest aggregates: an aggregated role's rules are
    filled by the aggregation controller and keep their live value. (ClusterRole and Role.)"""
    ensure_metadata(changes, live, required)
    aggregation = mapping(required, "aggregationRule", "")
    enforce(changes, live, "aggregationRule", aggregation or None, "aggregationRule", pointer=True)
    if not aggregation:
        enforce(changes, live, "rules", objects(required, "rules", "") or None, "rules")


def merge_binding(changes: Changes, live: JSON, required: JSON) -> None:
    """`subjects` and `roleRef` (apiGroup rbac.authorization.k8s.io when unset). The server refuses a
    changed roleRef (immutable), which then fails the task on every pass, as upstream.
    (ClusterRoleBinding and RoleBinding.)"""
    ensure_metadata(changes, live, required)
    subjects = [_subject_defaults(s) for s in objects(required, "subjects", "")]
    enforce(changes, live, "subjects", subjects or None, "subjects", _subjects_view)
    role_ref = with_default(mapping(required, "roleRef", ""), {"apiGroup": RBAC_GROUP})
    enforce(changes, live, "roleRef", role_ref, "roleRef", lambda ref: with_default(ref, {"apiGroup": RBAC_GROUP}))


def _subject_defaults(subject: Any) -> Any:
    """The server's: a User or Group subject's apiGroup is rbac.authorization.k8s.io when unset."""
    if isinstance(subject, dict) and subject.get("kind") in ("User", "Group"):
        return with_default(subject, {"apiGroup": RBAC_GROUP})
    return subject


def _subjects_view(subjects: Any) -> Any:
    return [_subject_defaults(s) for s in subjects] if isinstance(subjects, list) else subjects
