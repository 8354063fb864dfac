"""SecurityContextConstraints (security.openshift.io/v1): every field that grants or limits a
privilege is the manifest's."""

from __future__ import annotations

from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.values import JSON, Changes, enforce

# Enforced as the manifest says, an absent one cleared (or false, for the plain booleans).
ENFORCED = (
    "allowPrivilegedContainer",
    "defaultAddCapabilities",
    "requiredDropCapabilities",
    "allowedCapabilities",
    "volumes",
    "allowedFlexVolumes",
    "allowHostDirVolumePlugin",
    "allowHostNetwork",
    "allowHostPorts",
    "allowHostPID",
    "allowHostIPC",
    "seLinuxContext",
    "runAsUser",
    "fsGroup",
    "supplementalGroups",
    "readOnlyRootFilesystem",
    "users",
    "groups",
    "seccompProfiles",
    "allowedUnsafeSysctls",
    "forbiddenSysctls",
)


def merge_security_context_constraints(changes: Changes, live: JSON, required: JSON) -> None:
    """priority, the capability lists, volumes, host access, the strategies (SELinux, user, fsGroup,
    supplemental groups), users, groups, seccomp profiles and sysctls; allowPrivilegeEscalation is
    true when unset."""
    ensure_metadata(changes, live, required)
    enforce(changes, live, "priority", required.get("priority"), "priority", pointer=True)
    for key in ENFORCED:
        enforce(changes, live, key, required.get(key), key)
    key = "defaultAllowPrivilegeEscalation"
    enforce(changes, live, key, required.get(key), key, pointer=True)
    escalation = required.get("allowPrivilegeEscalation")
    enforce(
        changes,
        live,
        "allowPrivilegeEscalation",
        True if escalation is None else escalation,
        "allowPrivilegeEscalation",
        lambda v: True if v is None else v,
    )
