"""Payload retrieval against the real API server, with the test acting as the kubelet.

One test per failure mode asserts the exact ReleaseAccepted message; then the success path, our
own deadline, a Pod deleted mid-watch, stale-Pod pruning, and dropped / expired watches.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import JSON, PODS, KubeClient, Resource, ServerUnreachable
from payload.acceptance import ReleaseAcceptance
from payload.classify import Limits
from payload.podspec import POD_LABEL_KEY, POD_LABEL_VALUE, target_dir
from testkit.fakes import versionpod
from testkit.fakes.kubelet import Kubelet, running, terminated, waiting
from testkit.harness.cluster import LocalCluster
from testkit.harness.payload import (
    IMAGE,
    Retrieval,
    ensure_priority_class,
    options,
    version_pods,
    write_payload,
)
from testkit.harness.tcpproxy import PausableProxy
from testkit.harness.wait import wait_until

FAILED = (
    f'Retrieving payload failed version="4.19.1" image="{IMAGE}" '
    "failure=Unable to download and prepare the update: fetching update payload: "
)
WAITING = f'Retrieving and verifying payload version="4.19.1" image="{IMAGE}"; still waiting: '
STARTED = ReleaseAcceptance(
    "Unknown", "RetrievePayload", f'Retrieving and verifying payload version="4.19.1" image="{IMAGE}"'
)

SIG = (
    f"image pull failed for {IMAGE} because the signature validation failed: Source image rejected: "
    "A signature was required, but no signature exists"
)
MANIFEST_UNKNOWN = versionpod.manifest_unknown(IMAGE)  # CRI-O's text, as the end-to-end tier recorded it
UNAUTHORIZED = (
    f"initializing source docker://{IMAGE}: reading manifest sha256:{'5d' * 32} in "
    "quay.io/openshift-release-dev/ocp-release: unauthorized: access to the requested resource is not authorized"
)
NETWORK = 'pinging container registry quay.io: Get "https://quay.io/v2/": dial tcp 10.0.0.1:443: i/o timeout'
DEADLINE = "Pod was active on the node longer than the specified deadline"
COPY_OP = "copy-operator-manifests-to-temporary-directory"

Act = Callable[[Kubelet, str, str], Any]


@pytest.fixture
def payload_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "updatepayloads"
    directory.mkdir()
    return directory


@pytest.fixture
def ready(kube: KubeClient) -> None:
    ensure_priority_class(kube)


def init(container: str, state: dict[str, Any], **extra: Any) -> Act:
    return lambda k, name, ns: k.set_container_state(name, ns, container, state, init=True, **extra)


def main(state: dict[str, Any]) -> Act:
    return lambda k, name, ns: k.set_container_state(name, ns, "rename-to-final-location", state)


def steps(*acts: Act) -> Act:
    def run(k: Kubelet, name: str, ns: str) -> None:
        for act in acts:
            act(k, name, ns)

    return run


def phase(value: str, reason: str = "", message: str = "") -> Act:
    return lambda k, name, ns: k.set_phase(name, ns, value, reason, message)


def done(*containers: str) -> list[Act]:
    return [init(c, terminated(0, "Completed")) for c in containers]


W = "(pod {pod}, init container cleanup)"

# (mode, what the kubelet does, the exact problem text after "fetching update payload: ")
TERMINAL_MODES: list[tuple[str, Act, str]] = [
    (
        "SignatureValidationFailed",
        init("cleanup", waiting("SignatureValidationFailed", SIG)),
        f"the release image signature was rejected {W}: SignatureValidationFailed: {SIG}",
    ),
    (
        "ErrImagePull manifest unknown",
        init("cleanup", waiting("ErrImagePull", MANIFEST_UNKNOWN)),
        f"the release image does not exist in its registry {W}: ErrImagePull: {MANIFEST_UNKNOWN}",
    ),
    (
        "ErrImagePull unauthorized",
        init("cleanup", waiting("ErrImagePull", UNAUTHORIZED)),
        f"the registry refused to serve the release image {W}: ErrImagePull: {UNAUTHORIZED}",
    ),
    (
        "ImagePullBackOff keeps the pull error",
        init(
            "cleanup",
            waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}": ErrImagePull: {MANIFEST_UNKNOWN}'),
        ),
        f'the release image does not exist in its registry {W}: ImagePullBackOff: Back-off pulling image "{IMAGE}": '
        f"ErrImagePull: {MANIFEST_UNKNOWN}",
    ),
    (
        "InvalidImageName",
        init("cleanup", waiting("InvalidImageName", "couldn't parse image name")),
        f"the release image name is invalid {W}: InvalidImageName: couldn't parse image name",
    ),
    (
        "CreateContainerConfigError",
        init("cleanup", waiting("CreateContainerConfigError", "container has runAsNonRoot and image will run as root")),
        f"the container's configuration cannot be used {W}: CreateContainerConfigError: container has runAsNonRoot "
        "and image will run as root",
    ),
    (
        "CreateContainerError",
        init("cleanup", waiting("CreateContainerError", "context deadline exceeded")),
        f"the container cannot be created {W}: CreateContainerError: context deadline exceeded",
    ),
    (
        "RunContainerError",
        init("cleanup", waiting("RunContainerError", 'exec: "sh": executable file not found in $PATH')),
        f'the container cannot be started {W}: RunContainerError: exec: "sh": executable file not found in $PATH',
    ),
    (
        "init container exit code",
        steps(
            *done("cleanup", "make-temporary-directory"),
            init(COPY_OP, terminated(1, "Error", "cp: cannot stat '/manifests': No such file or directory")),
        ),
        f"the container failed (pod {{pod}}, init container {COPY_OP}): exit code 1, reason Error: cp: cannot stat "
        "'/manifests': No such file or directory",
    ),
    (
        "main container exit code",
        steps(
            *done("cleanup", "make-temporary-directory", COPY_OP, "copy-release-manifests-to-temporary-directory"),
            main(terminated(1, "Error", "mv: cannot move: Read-only file system")),
        ),
        "the container failed (pod {pod}, container rename-to-final-location): exit code 1, reason Error: mv: cannot "
        "move: Read-only file system",
    ),
    (
        "CrashLoopBackOff",
        init(
            "cleanup",
            waiting("CrashLoopBackOff", "back-off 10s restarting failed container=cleanup"),
            restartCount=2,
            lastState=terminated(1, "Error", "rm: cannot remove 'x': Device or resource busy"),
        ),
        f"the container keeps failing {W}: CrashLoopBackOff: back-off 10s restarting failed container=cleanup; "
        "last run: exit code 1, reason Error: rm: cannot remove 'x': Device or resource busy",
    ),
    (
        "phase Failed DeadlineExceeded",
        steps(
            init("cleanup", waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"')),
            phase("Failed", "DeadlineExceeded", DEADLINE),
        ),
        f"the pod failed (pod {{pod}}): DeadlineExceeded: {DEADLINE}; before that: cannot pull the release image yet "
        f'{W}: ImagePullBackOff: Back-off pulling image "{IMAGE}"',
    ),
    (
        "phase Failed Evicted",
        phase("Failed", "Evicted", "The node was low on resource: ephemeral-storage."),
        "the pod failed (pod {pod}): Evicted: The node was low on resource: ephemeral-storage.",
    ),
]


class CleanupWatcher(Retrieval):
    """Notes, when the failure is reported, whether the version Pod was still there (not deleting)."""

    pods_at_failure: list[tuple[str, bool]] | None = None

    def _collect(self, acceptance: ReleaseAcceptance) -> None:
        if acceptance.status == "False" and self.pods_at_failure is None:
            self.pods_at_failure = [
                (p["metadata"]["name"], bool(p["metadata"].get("deletionTimestamp")))
                for p in version_pods(self.kube, self.options.namespace)
            ]
        super()._collect(acceptance)


@pytest.mark.parametrize(("act", "problem"), [m[1:] for m in TERMINAL_MODES], ids=[m[0] for m in TERMINAL_MODES])
def test_terminal_mode_fails_at_once_with_exact_message(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, ready: None, act: Act, problem: str
) -> None:
    run = CleanupWatcher(kube, options(namespace, payload_dir)).start()
    pod = run.wait_pod()["metadata"]["name"]
    act(kubelet, pod, namespace)
    result = run.finish(timeout=10)
    assert result == ReleaseAcceptance("False", "RetrievePayload", FAILED + problem.format(pod=pod))
    assert run.reports[0] == STARTED
    # Reported once, before the cleanup (deleting the Pod, stopping its watch: round trips the
    # admin need not wait for), and the Pod is deleted after.
    assert [r for r in run.reports if r.status == "False"] == [result]
    assert run.pods_at_failure == [(pod, False)]
    wait_until(lambda: not version_pods(kube, namespace), what="version pod deleted")


TRANSIENT_MODES: list[tuple[str, Act, str]] = [
    (
        "ErrImagePull other",
        init("cleanup", waiting("ErrImagePull", NETWORK)),
        f"cannot pull the release image yet {W}: ErrImagePull: {NETWORK}",
    ),
    (
        "ImagePullBackOff without detail",
        init("cleanup", waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"')),
        f'cannot pull the release image yet {W}: ImagePullBackOff: Back-off pulling image "{IMAGE}"',
    ),
    (
        "unknown reason verbatim",
        init("cleanup", waiting("ImageInspectError", "Failed to inspect image: boom")),
        f"the container is waiting {W}: ImageInspectError: Failed to inspect image: boom",
    ),
]


@pytest.mark.parametrize(("act", "problem"), [m[1:] for m in TRANSIENT_MODES], ids=[m[0] for m in TRANSIENT_MODES])
def test_transient_mode_is_shown_while_waiting_then_the_pod_failure_names_it(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, ready: None, act: Act, problem: str
) -> None:
    run = Retrieval(kube, options(namespace, payload_dir)).start()
    pod = run.wait_pod()["metadata"]["name"]
    act(kubelet, pod, namespace)
    shown = run.wait_report(lambda r: "still waiting" in r.message)
    assert shown == ReleaseAcceptance("Unknown", "RetrievePayload", WAITING + problem.format(pod=pod))
    kubelet.set_phase(pod, namespace, "Failed", "DeadlineExceeded", DEADLINE)
    result = run.finish(timeout=10)
    assert result.message == (
        FAILED + f"the pod failed (pod {pod}): DeadlineExceeded: {DEADLINE}; before that: {problem.format(pod=pod)}"
    )


def test_transient_problem_that_does_not_change_becomes_terminal(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, ready: None
) -> None:
    opts = options(namespace, payload_dir, limits=Limits(not_started_after=10, stuck_after=1.0))
    run = Retrieval(kube, opts).start()
    pod = run.wait_pod()["metadata"]["name"]
    init("cleanup", waiting("ErrImagePull", NETWORK))(kubelet, pod, namespace)
    result = run.finish(timeout=10)
    assert result.message == (
        FAILED + f"cannot pull the release image yet (pod {pod}, init container cleanup): ErrImagePull: {NETWORK} "
        "(unchanged for 1s)"
    )


def test_pod_the_node_never_starts(kube: KubeClient, namespace: str, payload_dir: Path, ready: None) -> None:
    opts = options(namespace, payload_dir, limits=Limits(not_started_after=0.3, stuck_after=1.0))
    run = Retrieval(kube, opts).start()
    pod = run.wait_pod()["metadata"]["name"]
    not_started = f"node test-node has not started the pod (pod {pod} is Pending with no container status)"
    assert run.wait_report(lambda r: "still waiting" in r.message).message == WAITING + not_started
    assert run.finish(timeout=10).message == FAILED + not_started + " (unchanged for 1s)"


def test_pod_deleted_by_someone_else(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, ready: None
) -> None:
    run = Retrieval(kube, options(namespace, payload_dir)).start()
    pod = run.wait_pod()["metadata"]["name"]
    init("cleanup", running())(kubelet, pod, namespace)
    # A graceful delete: the Pod is Terminating until its kubelet confirms; that is enough to stop.
    kube.delete(PODS, pod, namespace)
    assert run.finish(timeout=10).message == (
        FAILED + f"the pod is being deleted before it finished (last seen: pod {pod}: init container cleanup is "
        "running)"
    )
    kubelet.finish_deletion(pod, namespace)


def test_success_loads_the_payload_and_deletes_the_pod(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, ready: None
) -> None:
    run = Retrieval(kube, options(namespace, payload_dir)).start()
    created = run.wait_pod()
    pod = created["metadata"]["name"]
    assert created["metadata"]["labels"] == {POD_LABEL_KEY: POD_LABEL_VALUE}
    assert created["spec"]["nodeName"] == "test-node"
    assert created["spec"]["volumes"][0]["hostPath"]["path"] == str(payload_dir)
    init("cleanup", running())(kubelet, pod, namespace)
    write_payload(payload_dir, IMAGE, "4.19.1", arch="multi")
    kubelet.succeed(pod, namespace)
    result = run.finish(timeout=10)
    assert result == ReleaseAcceptance(
        "True", "PayloadLoaded", f'Payload loaded version="4.19.1" image="{IMAGE}" architecture="Multi"'
    )
    assert run.retriever.last_result is not None
    assert run.retriever.last_result.directory == target_dir(IMAGE, str(payload_dir))
    assert run.retriever.last_result.pod_name == pod
    assert run.retriever.last_result.multi_arch  # the target is desired as Multi (with the gate)
    assert all(r.reason in ("RetrievePayload", "PayloadLoaded") and r.status != "False" for r in run.reports)
    wait_until(lambda: not version_pods(kube, namespace), what="version pod deleted")


def test_succeeded_pod_without_manifests_is_a_failure(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, ready: None
) -> None:
    run = Retrieval(kube, options(namespace, payload_dir)).start()
    pod = run.wait_pod()["metadata"]["name"]
    kubelet.succeed(pod, namespace)
    final = target_dir(IMAGE, str(payload_dir))
    assert run.finish(timeout=10).message == (
        f'Retrieving payload failed version="4.19.1" image="{IMAGE}" failure=Unable to download and prepare the '
        f'update: confirming the presence of release-image content in "{final}": stat {final}/manifests: no such '
        "file or directory"
    )


def test_payload_already_present_needs_no_pod(kube: KubeClient, namespace: str, payload_dir: Path, ready: None) -> None:
    write_payload(payload_dir, IMAGE, "4.19.1")
    result = Retrieval(kube, options(namespace, payload_dir)).start().finish(timeout=10)
    assert result.status == "True" and result.reason == "PayloadLoaded"
    assert not version_pods(kube, namespace)


def test_payload_with_another_version_is_rejected(
    kube: KubeClient, namespace: str, payload_dir: Path, ready: None
) -> None:
    write_payload(payload_dir, IMAGE, "4.19.2")
    result = Retrieval(kube, options(namespace, payload_dir)).start().finish(timeout=10)
    assert result == ReleaseAcceptance(
        "False",
        "VerifyPayloadVersion",
        f'Verifying payload failed version="4.19.1" image="{IMAGE}" failure=release image version 4.19.2 does not '
        "match the expected upstream version 4.19.1",
    )


def test_own_release_image_is_local(kube: KubeClient, namespace: str, payload_dir: Path, tmp_path: Path) -> None:
    opts = options(namespace, payload_dir, release_image=IMAGE, local_payload_dir=str(tmp_path / "none"))
    result = Retrieval(kube, opts).start().finish(timeout=10)
    assert result == ReleaseAcceptance("True", "PayloadLoaded", f'Payload loaded version="4.19.1" image="{IMAGE}"')
    assert not version_pods(kube, namespace)


def test_empty_image_is_a_clear_failure(kube: KubeClient, namespace: str, payload_dir: Path) -> None:
    result = Retrieval(kube, options(namespace, payload_dir), image="").start().finish(timeout=10)
    assert result.message == (
        'Retrieving payload failed version="4.19.1" image="" failure=no payload image has been specified and the '
        "contents of the payload cannot be retrieved"
    )


def test_our_deadline_names_the_last_observed_state(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, ready: None
) -> None:
    # The kubelet's writes land well before the deadline, also when the machine stalls for 10 s.
    run = Retrieval(kube, options(namespace, payload_dir, retrieve_timeout=15.0)).start()
    pod = run.wait_pod()["metadata"]["name"]
    steps(*done("cleanup"), init("make-temporary-directory", running()))(kubelet, pod, namespace)
    result = run.finish(timeout=60)
    assert result.message == (
        FAILED + "the version pod gave no result within the 15s retrieval limit; last observed: "
        f"pod {pod}: init container make-temporary-directory is running"
    )
    assert "timed out waiting for the condition" not in result.message


def test_stale_pods_are_pruned_and_never_two_pods_exist(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, ready: None
) -> None:
    from payload.podspec import build_version_pod

    stale = []
    for version in ("4.18.0", "4.18.1"):
        body = build_version_pod(
            IMAGE,
            version,
            "test-node",
            options(namespace, payload_dir).pod_spec_options(),
            name_suffix="bbbbb",
            tmp_suffix="ccccc",
        )
        stale.append(kube.create(PODS, body, namespace)["metadata"]["name"])
    # One of them is still running: pruning deletes it gracefully, then without grace when no
    # kubelet confirms within prune_timeout.
    init("cleanup", running())(kubelet, stale[0], namespace)
    run = Retrieval(kube, options(namespace, payload_dir, prune_timeout=1.0)).start()
    pod = run.wait_pod(timeout=20, exclude=tuple(stale))
    assert [p["metadata"]["name"] for p in version_pods(kube, namespace)] == [pod["metadata"]["name"]]
    write_payload(payload_dir, IMAGE)
    kubelet.succeed(pod["metadata"]["name"], namespace)
    assert run.finish(timeout=10).status == "True"


@pytest.fixture
def proxied(cluster: LocalCluster, kube: KubeClient) -> Iterator[tuple[PausableProxy, KubeClient]]:
    server = urlparse(kube.server)
    proxy = PausableProxy(server.hostname or "127.0.0.1", server.port or 443)
    client = KubeClient(
        kube.config._replace(host=f"https://127.0.0.1:{proxy.port}", token=cluster.state["adminToken"])
    )
    yield proxy, client
    proxy.close()


def watched_retrieval(client: KubeClient, namespace: str, payload_dir: Path) -> tuple[Retrieval, str, Informer]:
    """A retrieval whose version Pod exists and whose Pod informer has synced."""
    run = Retrieval(client, options(namespace, payload_dir)).start()
    pod = run.wait_pod()["metadata"]["name"]
    wait_until(lambda: run.retriever.informer is not None and run.retriever.informer.has_synced)
    informer = run.retriever.informer
    assert informer is not None
    return run, pod, informer


def test_watch_dropped_mid_retrieval_still_sees_the_terminal_state(
    proxied: tuple[PausableProxy, KubeClient],
    kube: KubeClient,
    namespace: str,
    payload_dir: Path,
    kubelet: Kubelet,
    ready: None,
) -> None:
    proxy, client = proxied
    run, pod, informer = watched_retrieval(client, namespace, payload_dir)
    assert proxy.pause() >= 1
    # The terminal state is written while the watch is down; it resumes from its resourceVersion.
    init("cleanup", waiting("SignatureValidationFailed", SIG))(kubelet, pod, namespace)
    wait_until(lambda: informer.stats.errors >= 1, what="watch noticed the cut")
    proxy.resume()
    result = run.finish(timeout=30)
    assert result.message == (
        FAILED + f"the release image signature was rejected {W.format(pod=pod)}: SignatureValidationFailed: {SIG}"
    )
    assert informer.stats.lists == 1  # resumed, no relist needed


def test_watch_expired_410_relists_and_sees_the_terminal_state(
    cluster: LocalCluster,
    proxied: tuple[PausableProxy, KubeClient],
    kube: KubeClient,
    namespace: str,
    payload_dir: Path,
    kubelet: Kubelet,
    ready: None,
) -> None:
    proxy, client = proxied
    run, pod, informer = watched_retrieval(client, namespace, payload_dir)
    proxy.pause()
    init("cleanup", waiting("ErrImagePull", MANIFEST_UNKNOWN))(kubelet, pod, namespace)
    # etcd forgets the history and the restarted API server's watch cache starts after the
    # kubelet's write: resuming from the informer's version answers 410 Gone, so it must relist.
    cluster.compact()
    cluster.restart()
    proxy.resume()
    result = run.finish(timeout=30)
    assert result.message == FAILED + (
        f"the release image does not exist in its registry {W.format(pod=pod)}: ErrImagePull: {MANIFEST_UNKNOWN}"
    )
    assert informer.stats.expired >= 1 and informer.stats.lists >= 2, informer.stats


class FlakyPodCreates(KubeClient):
    """The real server behind a network that fails Pod creations: `refused` attempts never reach
    the server, then `lost` attempts reach it (the Pod is created) but their responses are lost."""

    def __init__(self, kube: KubeClient, refused: int = 0, lost: int = 0) -> None:
        super().__init__(kube.config)
        self.refused, self.lost, self.attempts = refused, lost, 0

    def create(self, res: Resource, body: JSON, namespace: str | None = None) -> JSON:
        if res != PODS:
            return super().create(res, body, namespace)
        self.attempts += 1
        if self.refused:
            self.refused -= 1
            raise ServerUnreachable(self.server, ConnectionRefusedError("[Errno 111] Connection refused"))
        created = super().create(res, body, namespace)
        if self.lost:
            self.lost -= 1
            lost = ConnectionResetError("Connection broken: IncompleteRead(0 bytes read)")
            raise ServerUnreachable(self.server, lost)
        return created


@pytest.mark.parametrize(("refused", "lost"), [(2, 0), (0, 1), (1, 1)], ids=["refused", "lost", "both"])
def test_pod_creation_survives_an_unreachable_server_and_a_lost_response(
    kube: KubeClient, namespace: str, payload_dir: Path, kubelet: Kubelet, ready: None, refused: int, lost: int
) -> None:
    client = FlakyPodCreates(kube, refused=refused, lost=lost)
    run = Retrieval(client, options(namespace, payload_dir)).start()
    pod = run.wait_pod()["metadata"]["name"]
    init("cleanup", waiting("SignatureValidationFailed", SIG))(kubelet, pod, namespace)
    result = run.finish(timeout=30)
    # The Pod created by an attempt whose answer was lost is adopted, watched and cleaned up.
    assert result.message == (
        FAILED + f"the release image signature was rejected {W.format(pod=pod)}: SignatureValidationFailed: {SIG}"
    )
    assert client.attempts == refused + lost + 1
    wait_until(lambda: not version_pods(kube, namespace), what="version pod deleted")


def test_pod_creation_gives_up_at_the_retrieval_deadline(
    kube: KubeClient, namespace: str, payload_dir: Path, ready: None
) -> None:
    client = FlakyPodCreates(kube, refused=1000)
    run = Retrieval(client, options(namespace, payload_dir, retrieve_timeout=2.0)).start()
    result = run.finish(timeout=30)
    assert result.status == "False"
    assert result.message.startswith(FAILED + "creating pod version-4.19.1-"), result.message
    assert result.message.endswith(f": cannot reach the Kubernetes API server at {kube.server}: connection refused")
    assert client.attempts > 1 and not version_pods(kube, namespace)


def test_prune_failures_name_each_error_once(kube: KubeClient, namespace: str, payload_dir: Path) -> None:
    # Nothing listens on this port: listing Jobs and listing Pods both meet "connection refused".
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = KubeClient(kube.config._replace(host=f"https://127.0.0.1:{port}", token="x"))
    result = Retrieval(client, options(namespace, payload_dir)).start().finish(timeout=30)
    # Said once, as an aggregated error does, not as a list of two identical messages.
    assert result.message == (
        f'Retrieving payload failed version="4.19.1" image="{IMAGE}" failure=Unable to download and prepare '
        f"the update: failed to prune pods: error deleting pods: cannot reach the Kubernetes API server at "
        f"https://127.0.0.1:{port}: connection refused"
    )


def test_cancel_ends_a_retrieval_in_flight_and_removes_its_pod(
    kube: KubeClient, namespace: str, payload_dir: Path, ready: None
) -> None:
    run = Retrieval(kube, options(namespace, payload_dir)).start()
    run.wait_pod()
    run.retriever.cancel()  # the operator is stopping; no kubelet ever runs this Pod
    result = run.finish(timeout=10)
    assert result.message == FAILED + "cancelled: the operator is stopping"
    wait_until(lambda: not version_pods(kube, namespace), what="version pod deleted")


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        ("fifo", "not a regular file (a FIFO)"),  # opening a FIFO for reading blocks until a writer comes
        ("huge", "2097152 bytes, more than the limit of 1048576 bytes"),
        ('{"version": NaN}', "invalid character 'N' at offset 13: looking for beginning of value"),
        ('{"version": -Infinity}', "invalid character 'I' at offset 14: in numeric literal"),
        ("[1]", "not a JSON object"),
    ],
)
def test_release_metadata_the_payload_holds_is_read_within_bounds(
    kube: KubeClient, namespace: str, payload_dir: Path, ready: None, metadata: str, problem: str
) -> None:
    # The payload directory is written by the release image: what it holds there is outside input.
    path = write_payload(payload_dir, IMAGE, "4.19.1") / "release-manifests" / "release-metadata"
    path.unlink()
    if metadata == "fifo":
        os.mkfifo(path)
    elif metadata == "huge":
        with path.open("wb") as f:
            f.truncate(2 << 20)
    else:
        path.write_text(metadata)
    result = Retrieval(kube, options(namespace, payload_dir)).start().finish(timeout=10)
    assert result == ReleaseAcceptance(
        "False",
        "LoadPayload",
        f'Loading payload failed version="4.19.1" image="{IMAGE}" failure=loading {path}: {problem}',
    )


def test_pruning_needs_no_retriever_and_builds_no_verifier(
    kube: KubeClient, namespace: str, payload_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`start` prunes the version Pods of an earlier run before it leads, with a function of the
    client and the options: no second retriever, so no second verifier (with its own caches)."""
    from payload.podspec import build_version_pod
    from payload.retrieval import prune_version_pods
    from payload.verify import verifier

    built: list[object] = []
    monkeypatch.setattr(verifier, "cluster_verifier", lambda *a, **k: built.append(a))
    opts = options(namespace, payload_dir, prune_timeout=1.0)
    spec = opts.pod_spec_options()
    body = build_version_pod(IMAGE, "4.18.0", "test-node", spec, name_suffix="ddddd", tmp_suffix="fffff")
    kube.create(PODS, body, namespace)
    assert version_pods(kube, namespace)
    prune_version_pods(kube, opts)
    assert version_pods(kube, namespace) == [] and built == []
