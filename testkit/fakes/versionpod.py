"""Plays the kubelet of the version Pods `start` creates: each new Pod either fails its first
image pull (the node's signature policy rejects the image, or its registry refuses connections)
or copies a payload into the node's payload directory and succeeds, as the real containers would;
graceful deletes are confirmed.

The texts below are what a real node writes (kubelet v1.36.3, CRI-O v1.34.0 with runc, seen by
tests/e2e on the local node, which checks them against these functions on every run)."""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from pathlib import Path

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import JSON, PODS, ApiError, KubeClient
from payload.podspec import POD_LABEL_SELECTOR
from testkit.fakes.kubelet import Kubelet, running, waiting
from testkit.harness.payload import signature_rejected, write_payload

__all__ = [
    "VersionPodKubelet",
    "back_off",
    "container_create_failed",
    "invalid_image_name",
    "manifest_unknown",
    "missing_release_manifests",
    "registry_unavailable",
    "signature_rejected",
]


def manifest_unknown(image: str) -> str:
    """ErrImagePull for a digest the registry does not have."""
    repository, digest = image.rsplit("@", 1)
    return (
        f"unable to try pulling possible OCI artifact: build image source: reading manifest {digest} in "
        f"{repository}: manifest unknown"
    )


def registry_unavailable(image: str) -> str:
    """RegistryUnavailable (the reason, not ErrImagePull) for a registry that refuses connections."""
    host = image.split("/", 1)[0]
    return (
        f"image pull failed for {image} because the registry is unavailable: unable to try pulling possible OCI "
        f'artifact: build image source: pinging container registry {host}: Get "http://{host}/v2/": '
        f"dial tcp {host}: connect: connection refused"
    )


def back_off(image: str, reason: str, message: str) -> str:
    """ImagePullBackOff after a failed pull: the kubelet keeps the previous reason and message."""
    return f'Back-off pulling image "{image}": {reason}: {message}'


def invalid_image_name(image: str) -> str:
    """InvalidImageName for a name with upper-case letters in its path (e.g. `host:port/BAD//name@sha256:…`)."""
    path = image.split("/", 1)[1].rsplit(":", 1)[0]
    return (
        f'Failed to apply default image tag "{image}": couldn\'t parse image name "{image}": '
        f"invalid reference format: repository name ({path}) must be lowercase"
    )


def container_create_failed(timestamp: str, executable: str) -> str:
    """CreateContainerError when the command does not exist in the image (runc's own log line)."""
    return (
        f'container create failed: time="{timestamp}" level=error msg="runc create failed: unable to start '
        f'container process: error during container init: exec: \\"{executable}\\": executable file not found '
        'in $PATH"\n'
    )


def missing_release_manifests() -> str:
    """The terminated message (FallbackToLogsOnError: the log's tail) of the copy step without /release-manifests."""
    return "cp: cannot stat '/release-manifests': No such file or directory\n"


class VersionPodKubelet:
    """`versions` maps a release image to the version its payload says; images in `unsigned`
    are rejected, and images in `unavailable` cannot be pulled (their registry is down: take one
    out to bring it back). `marks[image]` is when the kubelet wrote that Pod's outcome (monotonic),
    `acted_on(image)` the Pod it acted on, and `pods` names every version Pod it has acted on, in
    order: records that stay, unlike the Pod, which `start` deletes as soon as it has read the
    outcome (wait on them, never on the Pod being there)."""

    def __init__(
        self,
        kube: KubeClient,
        namespace: str,
        node: str,
        payload_dir: Path,
        versions: dict[str, str],
        sources: dict[str, Path] | None = None,
    ):
        """`versions`: each image's release version; `sources`: the payload root an image's Pods
        copy (by default a payload of its version with nothing to apply)."""
        self.kube, self.namespace, self.payload_dir = kube, namespace, payload_dir.resolve()
        self.kubelet = Kubelet(kube, node)
        self.versions = versions
        self.sources = sources or {}
        self.unsigned: set[str] = set()
        self.unavailable: set[str] = set()
        self.marks: dict[str, float] = {}
        self._acted: dict[str, JSON] = {}
        self.pods: list[str] = []
        self.errors: list[str] = []
        self._seen: set[str] = set()
        self._threads: list[threading.Thread] = []
        self.informer = Informer(kube, PODS, namespace=namespace, label_selector=POD_LABEL_SELECTOR)
        self.informer.add_handler(self._on_event)

    def start(self) -> VersionPodKubelet:
        self.informer.start()
        if not self.informer.wait_for_sync(30):
            raise RuntimeError(f"could not list the version Pods of {self.namespace} within 30s")
        return self

    def stop(self) -> None:
        self.informer.stop()
        for thread in self._threads:
            thread.join(10)

    def acted_on(self, image: str) -> JSON | None:
        """The version Pod for `image` this kubelet ran (its first one), once it wrote its outcome."""
        return self._acted.get(image) if image in self.marks else None

    def _on_event(self, event_type: str, pod: JSON, old: JSON | None) -> None:
        meta = pod["metadata"]
        if event_type == "DELETED" or (meta["name"] in self._seen and not meta.get("deletionTimestamp")):
            return
        self._seen.add(meta["name"])
        if not meta.get("deletionTimestamp"):
            self.pods.append(meta["name"])
        thread = threading.Thread(target=self._act, args=(pod,), name=f"kubelet-{meta['name']}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _act(self, pod: JSON) -> None:
        name = pod["metadata"]["name"]
        try:
            if pod["metadata"].get("deletionTimestamp"):
                self.kubelet.finish_deletion(name, self.namespace)
                return
            first = pod["spec"]["initContainers"][0]
            image = first["image"]
            self._acted.setdefault(image, pod)
            if image in self.unsigned or image in self.unavailable:
                self.marks[image] = time.monotonic()
                if image in self.unsigned:
                    state = waiting("SignatureValidationFailed", signature_rejected(image))
                else:
                    state = waiting("RegistryUnavailable", registry_unavailable(image))
                self.kubelet.set_container_state(name, self.namespace, first["name"], state, init=True)
                return
            self.kubelet.set_container_state(name, self.namespace, first["name"], running(), init=True)
            mount = Path(pod["spec"]["volumes"][0]["hostPath"]["path"]).resolve()
            if mount != self.payload_dir:
                raise ValueError(f"version Pod {name} mounts {mount}, not {self.payload_dir}")
            for entry in mount.iterdir():  # the `cleanup` init container: rm -fR ./*
                with contextlib.suppress(OSError):
                    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            write_payload(mount, image, self.versions.get(image, "0.0.0"), source=self.sources.get(image))
            self.marks[image] = time.monotonic()
            self.kubelet.succeed(name, self.namespace)
        except (ApiError, OSError, KeyError, IndexError, ValueError, RuntimeError) as exc:
            self.errors.append(f"playing the kubelet for version Pod {name}: {exc}")
