"""What the controller's caches keep of each object, and the comparisons that decide whether a change matters.

The informers store objects through these transforms: a MachineConfig's name and release version,
a Node's labels, MCO annotations, spec and conditions, the machine-config-operator Deployment's
images. Pure functions of the objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cvo_py.runtime.kube import JSON
from status.updatestatus.api import metadata
from status.updatestatus.api.wire import OWNED_PREFIX
from status.updatestatus.insights.mco import MCO_PREFIX as MCO_ANNOTATION_PREFIX
from status.updatestatus.insights.mco import RELEASE_IMAGE_VERSION as RELEASE_VERSION_ANNOTATION

MCO_NAMESPACE = "openshift-machine-config-operator"
MCO_DEPLOYMENT = "machine-config-operator"


def machineconfig_transform(obj: JSON) -> JSON:
    """Keep only a MachineConfig's name and release version: bodies can be megabytes each."""
    meta = obj.get("metadata") or {}
    version = (meta.get("annotations") or {}).get(RELEASE_VERSION_ANNOTATION)
    kept: JSON = {"name": meta.get("name"), "resourceVersion": meta.get("resourceVersion")}
    if version:
        kept["annotations"] = {RELEASE_VERSION_ANNOTATION: version}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": kept}


def node_transform(obj: JSON) -> JSON:
    """Keep what node insights read: labels, MCO annotations, spec, conditions.

    Dropped: managedFields, images, addresses, capacity, heartbeats; at 5,000 nodes they are most
    of the memory, and heartbeat-only updates then compare equal and cause no work.
    """
    meta = obj.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith(MCO_ANNOTATION_PREFIX)}
    status = obj.get("status") or {}
    conditions = [{k: v for k, v in c.items() if k != "lastHeartbeatTime"} for c in status.get("conditions") or []]
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {
            "name": meta.get("name"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
            "creationTimestamp": meta.get("creationTimestamp"),
            "labels": meta.get("labels") or {},
            "annotations": annotations,
        },
        "spec": obj.get("spec") or {},
        "status": {"conditions": conditions},
    }


def deployment_transform(obj: JSON) -> JSON:
    """Keep only the container images of the machine-config-operator Deployment."""
    meta = obj.get("metadata") or {}
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = [
        {"name": c.get("name"), "image": c.get("image")} for c in spec.get("containers") or [] if isinstance(c, dict)
    ]
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta.get(k) for k in ("name", "namespace", "resourceVersion")},
        "spec": {"template": {"spec": {"containers": containers}}},
    }


def mco_image(deployment: JSON | None) -> str:
    """The machine-config-operator container's image, as oc reads it ("" without the Deployment)."""
    spec = (((deployment or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
    for container in spec.get("containers") or []:
        if container.get("name") == MCO_DEPLOYMENT:
            return str(container.get("image") or "")
    return ""


def without_resource_version(obj: JSON | None) -> JSON | None:
    if obj is None:
        return None
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")}
    return {**obj, "metadata": meta}


def owned(data: Mapping[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in (data or {}).items() if k.startswith(OWNED_PREFIX)}


def insight_keys(data: Mapping[str, str] | None) -> dict[str, str]:
    """The owned keys but the metadata key."""
    return {k: v for k, v in (data or {}).items() if k.startswith(OWNED_PREFIX) and k != metadata.META_KEY}


def machineconfig_versions(machineconfigs: Iterable[JSON]) -> dict[str, str]:
    versions: dict[str, str] = {}
    for mc in machineconfigs:
        meta = mc.get("metadata") or {}
        version = (meta.get("annotations") or {}).get(RELEASE_VERSION_ANNOTATION)
        if version and meta.get("name"):
            versions[str(meta["name"])] = str(version)
    return versions
