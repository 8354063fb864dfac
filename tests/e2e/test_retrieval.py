"""Release retrieval on a real node: the version Pod runs real containers that pull from the local
registry and copy the payload into the node's hostPath; real failures reach `ReleaseAccepted` with
the container and the runtime's own text; `start` survives losing its Pod mid-retrieval and the
node's agents restarting. Each release that loads is applied, as it would be on a cluster: its
`start` takes over, and the next test waits for the cluster to rest on it.

Each failure is timed from the arrival of the Pod event carrying the kubelet's status write to the
arrival of the ClusterVersion event carrying it (both watched by this process); the figures are
printed at the end of the run (tests/e2e/conftest.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import CLUSTERVERSIONS, PODS, KubeClient
from payload.podspec import POD_LABEL_SELECTOR, target_dir
from testkit.fakes import versionpod
from testkit.harness import localcluster, localnode, nodecluster, noderelease, usc
from testkit.harness.arrivals import Arrival, Arrivals
from testkit.harness.localnode import NodeInfo
from testkit.harness.nodeconfig import NodePaths
from testkit.harness.wait import wait_until

NAMESPACE = "openshift-cluster-version"
ABSENT_DIGEST = "sha256:" + "e" * 64


@pytest.fixture
def pods(kube: KubeClient) -> Iterator[Arrivals]:
    with Arrivals(kube, PODS, namespace=NAMESPACE, label_selector=POD_LABEL_SELECTOR) as arrivals:
        yield arrivals


@pytest.fixture
def versions(kube: KubeClient) -> Iterator[Arrivals]:
    with Arrivals(kube, CLUSTERVERSIONS) as arrivals:
        yield arrivals


def request(kube: KubeClient, image: str) -> None:
    """`oc adm upgrade --to-image=IMAGE --force`: by digest, no version, unverifiable here."""
    kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": {"image": image, "version": "", "force": True}}})


def accepted(arrival: Arrival) -> dict[str, Any]:
    for condition in arrival.object.get("status", {}).get("conditions") or []:
        if condition["type"] == "ReleaseAccepted":
            return dict(condition)
    return {}


def statuses(pod: dict[str, Any]) -> list[dict[str, Any]]:
    status = pod.get("status") or {}
    return list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])


def test_real_retrieval_loads_the_release_by_digest(
    kube: KubeClient, node: NodeInfo, paths: NodePaths, pods: Arrivals, versions: Arrivals
) -> None:
    target = node.release_images[1]
    image, version = target["image"], target["version"]
    request(kube, image)
    loaded = versions.wait_for(
        f"ReleaseAccepted=True PayloadLoaded for {image}",
        lambda a: accepted(a).get("reason") == "PayloadLoaded" and image in accepted(a).get("message", ""),
        timeout=180,
    )
    # The version named is the one the image's release-metadata says (the request gave none).
    assert f'version="{version}"' in accepted(loaded)["message"], accepted(loaded)
    assert accepted(loaded)["status"] == "True"
    # Real containers ran: every one terminated with exit 0, and the runtime reports the digest it pulled.
    done = [a.object for a in pods.events if a.object.get("status", {}).get("phase") == "Succeeded"]
    assert done, [a.object.get("status") for a in pods.events]
    for status in statuses(done[-1]):
        assert status["state"]["terminated"]["exitCode"] == 0, status
        assert status["imageID"].endswith(image.rsplit("@", 1)[1]), status
    # What the containers copied is on the node, where the operator reads it.
    metadata = Path(target_dir(image, str(paths.payloads))) / "release-manifests" / "release-metadata"
    assert json.loads(metadata.read_text())["version"] == version
    # start applies it (its own Deployment among it: the next release's start takes over) and completes.
    cv, _ = noderelease.wait_settled(kube)
    assert cv["status"]["history"][0]["version"] == version, cv["status"]["history"][:2]
    usc.set_operator(kube, nodecluster.RELEASE_OPERATOR, version, datetime.now(UTC))

    # OTA-1269: the ClusterVersion insight is not Updating once the update completed.
    def updated() -> dict[str, str] | None:
        data = usc.configmap_data(kube, usc.NAMESPACE)
        done = data and usc.insight_condition(data, "usc-cv-version", "Updating").startswith("False ")
        return data if done and version in usc.printable(data) else None

    wait_until(updated, timeout=120, what=f"the ClusterVersion insight not Updating at {version}", tolerate=(KeyError,))


# mode: (image of node.json's images or a literal, the reasons the kubelet may write, the text the
# condition must carry). Every mode is reported at once as ReleaseAccepted=False; a stopped registry is
# also retried with backoff, so the update proceeds once it is back.
MODES = {
    "absent-digest": ("absent", ("ErrImagePull",), "manifest unknown"),
    "invalid-name": ("invalid", ("InvalidImageName",), "invalid reference format"),
    "no-release-manifests": ("no-release-manifests", ("Error", "CrashLoopBackOff"), "/release-manifests"),
    "no-shell": ("no-shell", ("CreateContainerError", "RunContainerError", "StartError"), "sh"),
    "unsigned": ("unsigned", ("SignatureValidationFailed",), "signature"),
    "registry-stopped": ("stopped", ("RegistryUnavailable", "ErrImagePull"), "connection refused"),
}


def simulated(mode: str, image: str, real: str) -> str:
    """What the toolkit's simulated kubelet writes for `mode` (testkit/fakes/versionpod.py)."""
    if mode == "absent-digest":
        return versionpod.manifest_unknown(image)
    if mode == "invalid-name":
        return versionpod.invalid_image_name(image)
    if mode == "no-release-manifests":
        return versionpod.missing_release_manifests()
    if mode == "no-shell":
        stamp = re.search(r'time="([^"]+)"', real)
        return versionpod.container_create_failed(stamp.group(1) if stamp else "?", "sh")
    if mode == "unsigned":
        return versionpod.signature_rejected(image)
    return versionpod.registry_unavailable(image)


def image_for(mode: str, node: NodeInfo) -> str:
    if mode == "absent":
        return f"{node.registry}/{nodecluster.RELEASE_REPOSITORY}@{ABSENT_DIGEST}"
    if mode == "invalid":
        return f"{node.registry}/BAD//name@{ABSENT_DIGEST}"
    if mode == "stopped":
        return node.release_images[2]["image"]  # pulled by no earlier test on a new node (`make e2e`)
    return str(node.images["variants"][mode])


def failing_container(pod: dict[str, Any], reasons: tuple[str, ...]) -> dict[str, Any] | None:
    """The container whose state (or last state) carries one of `reasons`, with that state."""
    for status in statuses(pod):
        for key in ("state", "lastState"):
            for kind in ("waiting", "terminated"):
                state = (status.get(key) or {}).get(kind) or {}
                if state.get("reason") in reasons:
                    return {"container": status["name"], "state": kind, **state}
    return None


@pytest.mark.parametrize("mode", list(MODES))
def test_real_failure_reaches_release_accepted(
    mode: str,
    kube: KubeClient,
    node: NodeInfo,
    paths: NodePaths,
    pods: Arrivals,
    versions: Arrivals,
    figures: list[dict[str, Any]],
) -> None:
    which, reasons, text = MODES[mode]
    image = image_for(which, node)
    noderelease.wait_settled(kube)  # an update an earlier test started is over
    if which == "stopped":
        localnode.stop_registry(paths)
    try:
        pod_mark, cv_mark = pods.mark(), versions.mark()
        request(kube, image)
        written = pods.wait_for(
            f"the kubelet writes one of {reasons} for {image}",
            lambda a: (
                failing_container(a.object, reasons) is not None
                and image in json.dumps(a.object["spec"]["initContainers"][0]["image"])
            ),
            timeout=120,
            after=pod_mark,
        )
        kubelet = failing_container(written.object, reasons)
        assert kubelet is not None
        surfaced = versions.wait_for(
            f"ReleaseAccepted=False naming {kubelet['container']} and {text!r}",
            lambda a: (
                accepted(a).get("status") == "False"
                and image in accepted(a).get("message", "")
                and kubelet["container"] in accepted(a).get("message", "")
                and text in accepted(a).get("message", "")
            ),
            timeout=60,
            after=cv_mark,
        )
    finally:
        if which == "stopped":
            localnode.start_registry(paths, int(node.registry.rsplit(":", 1)[1]))
    if which == "stopped":
        # The registry is back: a later attempt (backoff from an eighth of the retry interval) pulls it.
        versions.wait_for(
            f"PayloadLoaded for {image} once its registry is back",
            lambda a: accepted(a).get("reason") == "PayloadLoaded" and image in accepted(a).get("message", ""),
            timeout=120,
            after=cv_mark,
        )
    condition = accepted(surfaced)
    # The runtime's own words are in the condition, verbatim (their end, where a long one is bounded).
    runtime_text = (kubelet.get("message") or "").strip()
    if runtime_text:
        assert runtime_text.splitlines()[-1][-150:] in condition["message"], (runtime_text, condition["message"])
    assert kubelet["reason"] in condition["message"], condition["message"]
    # The toolkit's simulated kubelet writes the same text for this failure.
    assert kubelet.get("message") == simulated(mode, image, runtime_text), kubelet
    figures.append(
        {
            "mode": mode,
            "kubelet": {k: kubelet.get(k) for k in ("container", "state", "reason", "message", "exitCode")},
            "condition": {k: condition[k] for k in ("status", "reason", "message")},
            "ms_after_kubelet_write_arrived": round((surfaced.at - written.at) * 1000),
        }
    )


def test_start_pod_deleted_during_a_retrieval_converges(
    kube: KubeClient, node: NodeInfo, pods: Arrivals, versions: Arrivals, paths: NodePaths
) -> None:
    image = node.release_images[3]["image"]
    _, start = noderelease.wait_settled(kube)  # the update the registry test ended with is over
    mark = pods.mark()
    request(kube, image)
    # The retrieval under way (the previous test's) is superseded first: its Pod deleted and pruned.
    created = pods.wait_for("a version Pod for the request", lambda a: a.type == "ADDED", timeout=240, after=mark)
    kube.delete(PODS, start["metadata"]["name"], NAMESPACE)
    loaded = versions.wait_for(
        f"PayloadLoaded for {image} after the start Pod was replaced",
        lambda a: accepted(a).get("reason") == "PayloadLoaded" and image in accepted(a).get("message", ""),
        timeout=300,
    )
    assert accepted(loaded)["status"] == "True"
    # The release is applied: its start took over (another Pod again) and completed it.
    cv, replacement = noderelease.wait_settled(kube)
    assert cv["status"]["history"][0]["image"] == image
    assert replacement["metadata"]["uid"] != start["metadata"]["uid"]
    assert replacement["spec"]["containers"][0]["image"] == image
    # The first version Pod was pruned or finished, and no version Pod is left behind.
    wait_until(
        lambda: not kube.list(PODS, NAMESPACE, label_selector=POD_LABEL_SELECTOR)["items"],
        timeout=120,
        what=f"no version Pod left (the first was {created.object['metadata']['name']})",
    )


def test_node_reboot_status_recovers(
    kube: KubeClient, node: NodeInfo, paths: NodePaths, api: localcluster.Cluster, versions: Arrivals
) -> None:
    noderelease.wait_settled(kube)
    localnode.restart_agents(paths, api)
    wait_until(lambda: localnode.node_ready(kube), timeout=120, what="the Node Ready after the restart")
    nodecluster.wait_available(kube, NAMESPACE, "cluster-version-operator", paths)
    nodecluster.wait_available(kube, usc.NAMESPACE, "update-status-controller", paths)
    image = node.release_images[2]["image"]
    request(kube, image)
    loaded = versions.wait_for(
        f"PayloadLoaded for {image} after the node's agents restarted",
        lambda a: accepted(a).get("reason") == "PayloadLoaded" and image in accepted(a).get("message", ""),
        timeout=240,
    )
    assert accepted(loaded)["status"] == "True"
