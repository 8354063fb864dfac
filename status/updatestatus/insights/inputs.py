"""What the insights read of the cluster's objects, said once for every reader of them: the
controller's caches and `upgrade-status --watch` keep each object through these transforms, and a
one-shot `upgrade-status --source cluster` decodes the Node LIST down to the same fields
(`cvo_py.runtime.jsonfields`); the annotations that name what is read; and the two facts read
from the machine-config objects, the machine-config-operator's image and each MachineConfig's
release version.

At 5,000 nodes the dropped fields (managedFields, images, addresses, capacity, heartbeats) are most
of a Node's bytes, and a heartbeat-only update compares equal once transformed, so it causes no work.
Pure functions of the objects; light to import (the one-shot run's reads leave before the insight
computation is loaded).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cvo_py.runtime.jsonfields import ANY, STR, STR_MAP, Fields, Only, Prefixed, Typed, trim
from status.updatestatus.insights.mco import (
    CURRENT_CONFIG,
    CURRENT_IMAGE,
    DESIRED_CONFIG,
    DESIRED_DRAIN,
    DESIRED_IMAGE,
    LAST_APPLIED_DRAIN,
    MCO_PREFIX,
    REASON,
    RELEASE_IMAGE_VERSION,
    STATE,
)
from status.updatestatus.insights.objects import JSON, InputError

# Where the machine-config-operator's Deployment is, whose image tells a multi-arch migration.
MCO_NAMESPACE = "openshift-machine-config-operator"
MCO_DEPLOYMENT = "machine-config-operator"

_META: Fields = {"name": STR, "namespace": STR, "uid": STR, "resourceVersion": STR}

# A Node: what node insights read (labels for the pools' selectors, the Machine Config Daemon's
# annotations, whether it is cordoned, the conditions without their heartbeat), and what names it.
NODE: Fields = {
    "apiVersion": STR,
    "kind": STR,
    "metadata": {**_META, "creationTimestamp": STR, "labels": STR_MAP, "annotations": Prefixed(MCO_PREFIX)},
    "spec": {"unschedulable": ANY},
    "status": {
        "conditions": [{"type": STR, "status": STR, "reason": STR, "message": STR, "lastTransitionTime": STR}],
    },
}
# The Machine Config Daemon's annotations and the conditions of a node its insights read
# (`nodes`, `unavailability`; tests/status/updatestatus/insights/test_inputs.py holds the insights
# of nodes read down to these equal to those of whole nodes).
NODE_ANNOTATIONS_READ = frozenset(
    {CURRENT_CONFIG, DESIRED_CONFIG, STATE, REASON, DESIRED_DRAIN, LAST_APPLIED_DRAIN, CURRENT_IMAGE, DESIRED_IMAGE}
)
NODE_CONDITIONS_READ = frozenset({"Ready", "DiskPressure", "NetworkUnavailable"})
# A Node read once (`upgrade-status --source cluster`): what node insights read, and its name. No
# cache keeps it, so not what keys and versions it in one (namespace, uid, resourceVersion, the
# creation time), nor its conditions' reasons (which only a cache's equality would see), nor the
# annotations and conditions its insights do not read: at 5,000 nodes, decoding those is tens of ms.
NODE_READ_ONCE: Fields = {
    **NODE,
    "metadata": {"name": STR, "labels": STR_MAP, "annotations": Only(NODE_ANNOTATIONS_READ)},
    "status": {
        "conditions": Typed(
            NODE_CONDITIONS_READ, {k: v for k, v in NODE["status"]["conditions"][0].items() if k != "reason"}
        )
    },
}
# A MachineConfig: its name and release version (its body can be megabytes).
MACHINECONFIG: Fields = {
    "apiVersion": STR,
    "kind": STR,
    "metadata": {**_META, "annotations": Prefixed(RELEASE_IMAGE_VERSION)},
}
# The machine-config-operator Deployment: its containers' names and images.
DEPLOYMENT: Fields = {
    "apiVersion": STR,
    "kind": STR,
    "metadata": _META,
    "spec": {"template": {"spec": {"containers": [{"name": STR, "image": STR}]}}},
}


def node_transform(obj: JSON) -> JSON:
    kept: JSON = trim(obj, NODE)
    return kept


def machineconfig_transform(obj: JSON) -> JSON:
    kept: JSON = trim(obj, MACHINECONFIG)
    return kept


def deployment_transform(obj: JSON) -> JSON:
    kept: JSON = trim(obj, DEPLOYMENT)
    return kept


def read_alike(obj: JSON | None, old: JSON | None) -> bool:
    """Whether two transformed objects differ in nothing the insights read (only in their
    resourceVersion: a Node's heartbeat-only update, once transformed)."""
    return _without_version(obj) == _without_version(old)


def _without_version(obj: JSON | None) -> JSON | None:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return obj
    assert isinstance(obj, dict)
    return {**obj, "metadata": {k: v for k, v in meta.items() if k not in ("resourceVersion", "managedFields")}}


def mco_image(deployment: Any) -> str:
    """The image of the Deployment's container named machine-config-operator, as oc reads it (""
    without the Deployment or such a container); InputError for an image that is not a string."""
    spec = deployment.get("spec") if isinstance(deployment, dict) else None
    template = spec.get("template") if isinstance(spec, dict) else None
    pod = template.get("spec") if isinstance(template, dict) else None
    containers = pod.get("containers") if isinstance(pod, dict) else None
    for container in containers if isinstance(containers, list) else []:
        if isinstance(container, dict) and container.get("name") == MCO_DEPLOYMENT:
            image = container.get("image") or ""
            if not isinstance(image, str):
                raise InputError(f"{MCO_DEPLOYMENT} container image is not a string")
            return image
    return ""


def machineconfig_versions(machineconfigs: Iterable[Any]) -> dict[str, str]:
    """MachineConfig name → its release-image-version annotation, for those that have one;
    InputError for such a MachineConfig whose name is not a string. One without a name (absent,
    null or "", as Go decodes all three) is left out: oc looks MachineConfigs up by the names the
    Nodes give, never by an empty one."""
    versions: dict[str, str] = {}
    for mc in machineconfigs:
        meta = mc.get("metadata") if isinstance(mc, dict) else None
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        version = annotations.get(RELEASE_IMAGE_VERSION) if isinstance(annotations, dict) else None
        if not version:
            continue
        assert isinstance(meta, dict)
        name = meta.get("name")
        if name is None or name == "":
            continue
        if not isinstance(name, str):
            raise InputError(f"MachineConfig metadata.name is {type(name).__name__}, not a string")
        versions[name] = str(version)
    return versions
