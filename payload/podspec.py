"""The version Pod that copies a release image's manifests onto the node (pure).

It matches the Pod upstream creates since 4.23: same names, label, annotation, init containers
in order, hostPath volume and per-container defaults. Randomness (the name suffixes) is an input,
so the same inputs always give the same Pod.
"""

from __future__ import annotations

import base64
import hashlib
import random
import re
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]

POD_LABEL_KEY = "k8s-app"
POD_LABEL_VALUE = "retrieve-openshift-release"
POD_LABEL_SELECTOR = f"{POD_LABEL_KEY}={POD_LABEL_VALUE}"
DEFAULT_PAYLOAD_DIR = "/etc/cvo/updatepayloads"

# Kubernetes util/rand.String alphabet: no vowels, no confusable characters.
RAND_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

INIT_CONTAINERS = (
    "cleanup",
    "make-temporary-directory",
    "copy-operator-manifests-to-temporary-directory",
    "copy-release-manifests-to-temporary-directory",
)
MAIN_CONTAINER = "rename-to-final-location"

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class PodSpecError(ValueError):
    """The inputs cannot make a valid version Pod."""


@dataclass(frozen=True)
class PodSpecOptions:
    operator_name: str = "version"
    namespace: str = "openshift-cluster-version"
    # Host path and mount path are the same: the operator's own Pod mounts it there too.
    payload_dir: str = DEFAULT_PAYLOAD_DIR
    service_account: str = "update-payload"
    active_deadline_seconds: int = 120
    priority_class: str = "openshift-user-critical"
    read_only_root_filesystem: bool = True
    termination_message_policy: str = "FallbackToLogsOnError"


def random_suffix(rng: random.Random | None = None, length: int = 5) -> str:
    choose = (rng or random.SystemRandom()).choice
    return "".join(choose(RAND_ALPHABET) for _ in range(length))


def payload_hash(image: str) -> str:
    """Upstream's directory name for an image: unpadded URL-safe base64 of the pull spec's MD5."""
    digest = hashlib.md5(image.encode("utf-8"), usedforsecurity=False).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def target_dir(image: str, payload_dir: str = DEFAULT_PAYLOAD_DIR) -> str:
    return f"{payload_dir.rstrip('/')}/{payload_hash(image)}"


def pod_name(operator_name: str, version: str, suffix: str) -> str:
    return f"{operator_name}-{version}-{suffix}"


def build_version_pod(
    image: str,
    version: str,
    node_name: str,
    options: PodSpecOptions = PodSpecOptions(),
    *,
    name_suffix: str,
    tmp_suffix: str,
) -> JSON:
    """The version Pod for `image`; `name_suffix` and `tmp_suffix` are two random 5-char strings."""
    name = _checked_name(image, version, node_name, options, name_suffix, tmp_suffix)
    base = options.payload_dir.rstrip("/") + "/"
    final = base + payload_hash(image)
    tmp = f"{final}-{tmp_suffix}"
    containers = [
        ("cleanup", ["sh", "-c", "rm -fR ./*"], {"workingDir": base}),
        ("make-temporary-directory", ["mkdir", tmp], {}),
        (
            "copy-operator-manifests-to-temporary-directory",
            ["cp", "-r", "/manifests", f"{tmp}/manifests"],
            {},
        ),
        (
            "copy-release-manifests-to-temporary-directory",
            ["cp", "-r", "/release-manifests", f"{tmp}/release-manifests"],
            {},
        ),
        (MAIN_CONTAINER, ["mv", tmp, final], {}),
    ]
    built = [_container(n, cmd, extra, image, options) for n, cmd, extra in containers]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": options.namespace,
            "labels": {POD_LABEL_KEY: POD_LABEL_VALUE},
            "annotations": {"openshift.io/required-scc": "privileged"},
        },
        "spec": {
            "serviceAccountName": options.service_account,
            "activeDeadlineSeconds": options.active_deadline_seconds,
            "restartPolicy": "OnFailure",
            "nodeName": node_name,
            "nodeSelector": {"node-role.kubernetes.io/master": ""},
            "tolerations": [{"key": "node-role.kubernetes.io/master"}],
            "priorityClassName": options.priority_class,
            "initContainers": built[:-1],
            "containers": built[-1:],
            "volumes": [{"name": "payloads", "hostPath": {"path": options.payload_dir}}],
        },
    }


def _checked_name(
    image: str, version: str, node_name: str, options: PodSpecOptions, name_suffix: str, tmp_suffix: str
) -> str:
    """The version Pod's name, once every input of the Pod is known to be usable (else PodSpecError)."""
    if not image:
        raise PodSpecError(
            "no payload image has been specified and the contents of the payload cannot be retrieved"
        )
    if not node_name:
        raise PodSpecError("no node name: the version Pod must run on the operator's own node (--node-name)")
    if not options.payload_dir.startswith("/"):
        raise PodSpecError(f"payload directory {options.payload_dir!r} is not an absolute path")
    for label, suffix in (("name suffix", name_suffix), ("temporary directory suffix", tmp_suffix)):
        if not suffix or any(c not in RAND_ALPHABET for c in suffix):
            raise PodSpecError(f"{label} {suffix!r} must be non-empty and drawn from {RAND_ALPHABET!r}")
    name = pod_name(options.operator_name, version, name_suffix)
    if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        raise PodSpecError(
            f"version {version!r} cannot be part of a Pod name ({name!r} is not a valid DNS subdomain)"
        )
    return name


def _container(name: str, command: list[str], extra: JSON, image: str, options: PodSpecOptions) -> JSON:
    container: JSON = {
        "name": name,
        "image": image,
        "command": command,
        **extra,
        "volumeMounts": [{"name": "payloads", "mountPath": options.payload_dir}],
        "securityContext": {
            "privileged": True,
            "readOnlyRootFilesystem": options.read_only_root_filesystem,
        },
        "resources": {"requests": {"cpu": "10m", "memory": "50Mi", "ephemeral-storage": "2Mi"}},
        "terminationMessagePolicy": options.termination_message_policy,
    }
    return container
