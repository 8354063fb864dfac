"""The core (v1) kinds upstream merges by type: ConfigMap, ServiceAccount, Namespace, Service."""

from __future__ import annotations

from cvo_py.runtime.jsondata import copy_json
from syncworker.merge.metadata import ensure_metadata
from syncworker.merge.values import (
    JSON,
    Changes,
    child,
    enforce,
    ensure_list_by_key,
    mapping,
    merge_strings,
    objects,
    string_map,
    text,
)

DEFAULT_SERVICE_TYPE = "ClusterIP"


def merge_config_map(changes: Changes, live: JSON, required: JSON) -> None:
    """`data` and `binaryData` key by key: the manifest's keys set, live-only keys kept."""
    ensure_metadata(changes, live, required)
    for key in ("data", "binaryData"):
        merge_strings(changes, live, key, string_map(required, key, ""), key)


def merge_service_account(changes: Changes, live: JSON, required: JSON) -> None:
    """`automountServiceAccountToken` enforced (absent clears it); `secrets` and
    `imagePullSecrets` keep their live value."""
    ensure_metadata(changes, live, required)
    token = required.get("automountServiceAccountToken")
    enforce(changes, live, "automountServiceAccountToken", token, "automountServiceAccountToken", pointer=True)


def merge_namespace(changes: Changes, live: JSON, required: JSON) -> None:
    """Metadata only: `spec.finalizers` keep their live value."""
    ensure_metadata(changes, live, required)


def merge_service(changes: Changes, live: JSON, required: JSON) -> None:
    """Ports paired by name (protocol TCP, targetPort the port when unset), live-only ports removed;
    `type` (ClusterIP) and `selector` enforced; clusterIP(s), sessionAffinity and ipFamilies keep
    their live value."""
    ensure_metadata(changes, live, required)
    spec = mapping(required, "spec", "")
    have = child(live, "spec")
    ports = objects(spec, "ports", "spec")
    ensure_list_by_key(changes, have, "ports", ports, "name", "spec", _service_port_defaults)
    service_type = text(spec, "type", "spec") or DEFAULT_SERVICE_TYPE
    enforce(changes, have, "type", service_type, "spec.type", lambda v: v or DEFAULT_SERVICE_TYPE)
    enforce(changes, have, "selector", string_map(spec, "selector", "spec") or None, "spec.selector")


def _service_port_defaults(port: JSON) -> JSON:
    out: JSON = copy_json(port)
    if not out.get("protocol"):
        out["protocol"] = "TCP"
    if out.get("targetPort") in (None, 0, ""):
        out["targetPort"] = out.get("port")
    return out
