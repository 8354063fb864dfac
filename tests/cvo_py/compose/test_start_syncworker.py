"""`start` as a whole applying a release, as processes on the local API server, with the sync-worker
facts' synthetic payload (§8) as the running release (`PAYLOAD_OVERRIDE`) and the test playing the
ClusterOperator f-op and the version Pod's kubelet:

- the install (Initializing): `Progressing` counts manifests, history turns `Completed` only once
  f-op reports; a hand-edited field drifts back, a reconcile pass writes nothing; the Events of
  the local payload;
- an update 4.99.0 → 4.99.1 through `spec.desiredUpdate`: the target retrieved by a version Pod,
  its payload loaded and applied, history `[4.99.1 Completed, 4.99.0 Completed]`, what
  `oc adm upgrade` prints, the sync worker's metrics;
- a SIGTERM handover between two `start` processes in the middle of that update: the outgoing one
  releases its Lease, the incoming one (the target's release) resumes from status and finishes;
- a manifest the API server refuses, named in `Failing`; a malformed payload root refused whole.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    CONFIGMAPS,
    EVENTS,
    LEASES,
    MERGE_PATCH,
    ApiError,
    KubeClient,
)
from syncworker.load import Payload, load_payload
from syncworker.select import Selection
from testkit.fakes.kubelet import Kubelet
from testkit.harness.certs import https_get
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import condition, put_co
from testkit.harness.payload import (
    ClusterVerification,
    StartProcess,
    ensure_priority_class,
    request_update,
    version_pods,
    write_payload,
)
from testkit.harness.syncworker import Audit, remove_applied
from testkit.harness.wait import wait_until
from testkit.objects.payloads import (
    NAMESPACE,
    SECTION8_TARGET,
    SECTION8_VERSION,
    image_of,
    write_section8,
)
from testkit.objects.payloads import write_payload as write_payload_root
from testkit.oracles.adm_upgrade import adm_upgrade

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

A_IMAGE = image_of(SECTION8_VERSION)
B_IMAGE = image_of(SECTION8_TARGET)
APPLIER = "cluster-version-operator/"
# Short intervals: a reconcile pass every 3 s, a failed pass retried within 3 s.
QUICK = {"CVO_PY_RECONCILE_INTERVAL": "3"}


@pytest.fixture
def payloads(tmp_path: Path, kube: KubeClient) -> Iterator[tuple[Path, Path]]:
    """The §8 payload 4.99.0 and its target 4.99.1; nothing of them left on the cluster before or
    after the test."""
    a = write_section8(tmp_path / "release-a")
    b = write_section8(tmp_path / "release-b", SECTION8_TARGET)
    loaded = [load(a, A_IMAGE), load(b, B_IMAGE)]
    manifests = [m for p in loaded for m in p.manifests]
    remove_applied(kube, manifests)
    yield a, b
    remove_applied(kube, manifests)


def load(root: Path, image: str) -> Payload:
    return load_payload(str(root), release_image=image, selection=Selection())


class Statuses:
    """Every ClusterVersion status the API server stores, in order, read by a watch."""

    def __init__(self, kube: KubeClient) -> None:
        self.seen: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.informer = Informer(kube, CLUSTERVERSIONS)
        self.informer.add_handler(self._on_event)

    def _on_event(self, _type: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        with self._lock:
            self.seen.append(obj.get("status") or {})

    def messages(self, type_: str) -> list[str]:
        with self._lock:
            found = [condition({"status": s}, type_) for s in self.seen]
        return [str(c.get("message")) for c in found if c]


@pytest.fixture
def statuses(kube: KubeClient) -> Iterator[Statuses]:
    watched = Statuses(kube)
    watched.informer.start()
    yield watched
    watched.informer.stop()


@pytest.fixture
def processes() -> Iterator[Callable[..., StartProcess]]:
    started: list[StartProcess] = []

    def launch(*args: Any, **kwargs: Any) -> StartProcess:
        process = StartProcess(*args, **kwargs)
        started.append(process)
        return process

    yield launch
    for process in started:
        process.stop()


def cv(kube: KubeClient) -> dict[str, Any]:
    """The ClusterVersion, {} before `start` created it."""
    try:
        return kube.get(CLUSTERVERSIONS, "version")
    except ApiError as exc:
        if exc.is_not_found():
            return {}
        raise


def history(kube: KubeClient) -> list[tuple[str, str]]:
    return [(h.get("version"), h.get("state")) for h in (cv(kube).get("status") or {}).get("history") or []]


def said(kube: KubeClient, type_: str) -> dict[str, Any]:
    return condition(cv(kube), type_) or {}


def metrics(start: StartProcess, cluster: LocalCluster) -> str:
    scraper = (cluster.state["scraperCertFile"], cluster.state["scraperKeyFile"])
    code, text = https_get(start.port, "/metrics", scraper)
    assert code == 200, text
    return text


def install(
    kube: KubeClient,
    launch: Callable[..., StartProcess],
    cluster: LocalCluster,
    namespace: str,
    tmp_path: Path,
    a: Path,
) -> StartProcess:
    """`start` running 4.99.0 from `a`, on a cluster without a ClusterVersion, until its install
    completed (the test reports f-op at 4.99.0 once it exists)."""
    start = launch(
        cluster.kubeconfig, namespace, tmp_path, payload=a, release_image=A_IMAGE, env=QUICK, log_name="a.log"
    )
    wait_until(lambda: start.proc.poll() is not None or _exists_co(kube, "f-op"), timeout=60, what="f-op precreated")
    assert start.proc.poll() is None, start.log()[-3000:]
    put_co(kube, "f-op", SECTION8_VERSION)
    wait_until(lambda: history(kube)[:1] == [(SECTION8_VERSION, "Completed")], timeout=60, what="the install completed")
    return start


def _exists_co(kube: KubeClient, name: str) -> bool:
    try:
        kube.get(CLUSTEROPERATORS, name)
    except ApiError as exc:
        if exc.is_not_found():
            return False
        raise
    return True


def test_an_install_completes_only_once_its_operator_reports_and_counts_manifests(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    tmp_path: Path,
    payloads: tuple[Path, Path],
    statuses: Statuses,
    processes: Callable[..., StartProcess],
) -> None:
    a, _b = payloads
    loaded = load(a, A_IMAGE)
    start = processes(
        cluster.kubeconfig, namespace, tmp_path, payload=a, release_image=A_IMAGE, env=QUICK, log_name="a.log"
    )
    # Installing: f-op is precreated, and the pass fails on it (not Available): no completion.
    wait_until(
        lambda: said(kube, "Failing").get("reason") == "ClusterOperatorNotAvailable",
        timeout=60,
        what="the install failing on f-op",
    )
    assert history(kube) == [(SECTION8_VERSION, "Partial")]
    assert said(kube, "Failing")["message"] == "Cluster operator f-op is not available"
    assert said(kube, "Progressing")["message"] == "Unable to apply 4.99.0: the cluster operator f-op is not available"
    status = cv(kube)["status"]
    assert status["versionHash"] == loaded.version_hash and len(loaded.version_hash) == 12
    assert status["desired"] == {
        "version": "4.99.0",
        "image": A_IMAGE,
        "url": "https://example.com/4.99.0",
        "channels": ["fast-4.99", "stable-4.99"],
    }
    counted = [m for m in statuses.messages("Progressing") if m.startswith("Working towards 4.99.0: ")]
    assert counted and all(
        re.fullmatch(r"Working towards 4\.99\.0: \d+ of 19 done \(\d+% complete\)", m) for m in counted
    ), statuses.messages("Progressing")

    # f-op reports: the worker wakes, its pass completes, and only then is the install Completed.
    put_co(kube, "f-op", SECTION8_VERSION)
    wait_until(lambda: history(kube) == [(SECTION8_VERSION, "Completed")], timeout=60, what="Completed")
    assert said(kube, "Available")["message"] == "Done applying 4.99.0"
    assert said(kube, "Failing")["status"] == "False"
    assert (said(kube, "Progressing")["status"], said(kube, "Progressing")["message"]) == (
        "False",
        "Cluster version is 4.99.0",
    )
    text = metrics(start, cluster)
    assert 'cluster_version_payload{type="applied",version="4.99.0"} 19.0' in text
    assert 'cluster_version_payload{type="pending",version="4.99.0"} 0.0' in text
    assert re.search(r'cluster_operator_payload_errors\{version="4\.99\.0"\} [1-9]', text), "f-op's failed tries"

    # The local payload's Events, as upstream records them at each start.
    wait_until(
        lambda: {"RetrievePayload", "LoadPayload", "PayloadLoaded"}
        <= {e["reason"] for e in kube.list(EVENTS, namespace)["items"]},
        what="the local payload's Events",
    )

    # A reconcile pass writes nothing but f-op's precreation (409); an admin's edit drifts back.
    audit = Audit(cluster.state["auditLog"])
    passes = start.log().count("Sync succeeded, reconciling")
    wait_until(lambda: start.log().count("Sync succeeded, reconciling") > passes + 1, timeout=60, what="two passes")
    writes = {(r.verb, r.resource, r.name, r.code) for r in audit.requests(kube, APPLIER) if r.is_write}
    assert writes == {("create", "clusteroperators", "f-op", 409)}, writes
    kube.patch(CONFIGMAPS, "plain", {"data": {"key": "edited by hand"}}, NAMESPACE, content_type=MERGE_PATCH)
    wait_until(
        lambda: kube.get(CONFIGMAPS, "plain", NAMESPACE)["data"]["key"] == "value", timeout=30, what="the edit reverted"
    )


def test_an_update_through_desired_update_is_retrieved_loaded_applied_and_completed(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    tmp_path: Path,
    kubelet: Kubelet,
    verification: ClusterVerification,
    payloads: tuple[Path, Path],
    statuses: Statuses,
    processes: Callable[..., StartProcess],
) -> None:
    start = updating_until_f_op(kube, processes, cluster, namespace, tmp_path, kubelet, verification, payloads)
    assert history(kube) == [(SECTION8_TARGET, "Partial"), (SECTION8_VERSION, "Completed")]
    assert said(kube, "Failing")["status"] == "False"
    assert cv(kube)["status"]["desired"]["version"] == SECTION8_TARGET
    assert cv(kube)["status"]["versionHash"] == load(payloads[1], B_IMAGE).version_hash
    assert cv(kube)["status"]["history"][0]["verified"] is True
    text = metrics(start, cluster)
    assert 'cluster_version_payload{type="applied",version="4.99.1"} 15.0' in text
    assert 'cluster_version_payload{type="pending",version="4.99.1"} 5.0' in text
    assert 'cluster_version_payload{type="applied",version="4.99.0"}' in text  # stale label sets stay

    put_co(kube, "f-op", SECTION8_TARGET)
    wait_until(
        lambda: history(kube) == [(SECTION8_TARGET, "Completed"), (SECTION8_VERSION, "Completed")],
        timeout=90,
        what="4.99.1 Completed",
    )
    text = metrics(start, cluster)
    assert 'cluster_version_payload{type="applied",version="4.99.1"} 20.0' in text
    assert 'cluster_version_payload{type="pending",version="4.99.1"} 0.0' in text
    assert re.search(r'cluster_operator_payload_errors\{version="4\.99\.1"\} [1-9]', text)
    out, err = adm_upgrade(cv(kube))
    assert out.startswith("Cluster version is 4.99.1\n"), out + err
    assert kube.get(CONFIGMAPS, "plain", NAMESPACE)["data"]["next"] == "4.99.1"
    counted = [m for m in statuses.messages("Progressing") if m.startswith("Working towards 4.99.1: ")]
    assert all(re.match(r"Working towards 4\.99\.1: \d+ of 20 done \(\d+% complete\)", m) for m in counted), counted


# A manifest's annotation that includes it in the default cluster profile, as a YAML line.
INCLUDED = 'include.release.openshift.io/self-managed-high-availability: "true"'

# Where an update to 4.99.1 waits: on f-op at its level (the facts' §8: everything before it, the
# capability-annotated ConfigMap included, its capabilities enabled).
WAITING_ON_F_OP = "Working towards 4.99.1: 15 of 20 done (75% complete), waiting on f-op"


def updating_until_f_op(
    kube: KubeClient,
    launch: Callable[..., StartProcess],
    cluster: LocalCluster,
    namespace: str,
    tmp_path: Path,
    kubelet: Kubelet,
    verification: ClusterVerification,
    payloads: tuple[Path, Path],
) -> StartProcess:
    """`start` that installed 4.99.0 from A and applies 4.99.1 from B level after level, until it
    waits on f-op."""
    a, b = payloads
    ensure_priority_class(kube)
    start = install(kube, launch, cluster, namespace, tmp_path, a)
    update_to_b(kube, kubelet, verification, start, namespace, b)
    wait_until(lambda: said(kube, "Progressing").get("message") == WAITING_ON_F_OP, timeout=90, what=WAITING_ON_F_OP)
    return start


def update_to_b(
    kube: KubeClient, kubelet: Kubelet, verification: ClusterVerification, start: StartProcess, namespace: str, b: Path
) -> None:
    """`oc adm upgrade --to-image` 4.99.1: verified, retrieved by a version Pod whose work the test
    does (B's payload copied where the Pod leaves it), loaded and accepted."""
    verification.sign(B_IMAGE)
    request_update(kube, B_IMAGE, SECTION8_TARGET)
    pod = wait_until(
        lambda: [p for p in version_pods(kube, namespace) if not p["metadata"].get("deletionTimestamp")],
        timeout=60,
        what="the version Pod",
    )[0]
    write_payload(start.payload_dir, B_IMAGE, source=b)
    kubelet.succeed(pod["metadata"]["name"], namespace)
    wait_until(
        lambda: (
            said(kube, "ReleaseAccepted").get("reason") == "PayloadLoaded"
            and 'version="4.99.1"' in said(kube, "ReleaseAccepted").get("message", "")
        ),
        timeout=60,
        what="4.99.1's payload loaded",
    )


def test_a_sigterm_hands_the_update_over_to_the_next_release(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    tmp_path: Path,
    kubelet: Kubelet,
    verification: ClusterVerification,
    payloads: tuple[Path, Path],
    processes: Callable[..., StartProcess],
) -> None:
    b = payloads[1]
    outgoing = updating_until_f_op(kube, processes, cluster, namespace, tmp_path, kubelet, verification, payloads)
    before = cv(kube)["status"]["history"]

    # The Deployment's rollout (Recreate): the kubelet TERMs the outgoing Pod, then starts the next.
    assert outgoing.stop() == 0, outgoing.log()[-3000:]
    said_out = outgoing.log()
    assert "Shutting down due to terminated" in said_out
    assert "Run context completed; beginning two-minute graceful shutdown period." in said_out
    assert "Graceful shutdown complete for 4.99.0." in said_out
    lease = kube.get(LEASES, "version", namespace)["spec"]
    assert lease.get("holderIdentity") in ("", None), lease  # handed back, not left to expire
    assert history(kube)[:1] == [(SECTION8_TARGET, "Partial")]

    pods = len(version_pods(kube, namespace))
    incoming = processes(
        cluster.kubeconfig, namespace, tmp_path, payload=b, release_image=B_IMAGE, env=QUICK, log_name="b.log"
    )
    wait_until(
        lambda: "apply: 4.99.1 on generation" in incoming.log() and "in state Updating at attempt 0" in incoming.log(),
        timeout=60,
        what="the incoming release resuming the update",
    )
    put_co(kube, "f-op", SECTION8_TARGET)
    wait_until(
        lambda: history(kube) == [(SECTION8_TARGET, "Completed"), (SECTION8_VERSION, "Completed")],
        timeout=90,
        what="the update finished by the incoming release",
    )
    after = cv(kube)["status"]["history"]
    # Nothing lost: the entries as the outgoing release left them, the target's now completed.
    assert after[1] == before[1]
    assert {k: after[0][k] for k in ("startedTime", "version", "image", "verified")} == {
        k: before[0][k] for k in ("startedTime", "version", "image", "verified")
    }
    # Its own release: no download, no signature check, no preconditions.
    assert len(version_pods(kube, namespace)) == pods == 0
    assert "Precondition checks of" not in incoming.log()
    assert said(kube, "ReleaseAccepted")["reason"] == "PayloadLoaded"


def test_a_manifest_the_api_server_refuses_fails_its_task_and_is_named_in_failing(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    tmp_path: Path,
    processes: Callable[..., StartProcess],
) -> None:
    name = f"refused-{uuid.uuid4().hex[:6]}"
    root = write_payload_root(
        tmp_path / "refusing",
        "4.99.5",
        {},
        {
            "0000_50_refusing_00_cm.yaml": (
                f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Name\n  namespace: {namespace}\n"
                f"  annotations:\n    {INCLUDED}\n"
            ),
            "0000_50_other_00_cm.yaml": (  # another component: a node of its own
                f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {namespace}\n"
                f"  annotations:\n    {INCLUDED}\n"
            ),
        },
    )
    # An install pass may take the interval: long enough for the task's 4 tries (1, 2, 4 s apart).
    slow = {"CVO_PY_RECONCILE_INTERVAL": "30"}
    processes(cluster.kubeconfig, namespace, tmp_path, payload=root, release_image=image_of("4.99.5"), env=slow)
    wait_until(lambda: said(kube, "Failing").get("status") == "True", timeout=60, what="Failing")
    failing = said(kube, "Failing")
    assert failing["reason"] == "UpdatePayloadResourceInvalid"
    assert failing["message"] == (
        f'Could not update configmap "{namespace}/Not_A_Name" (2 of 2): the object is invalid, possibly due to '
        "local cluster configuration"
    )
    assert said(kube, "Progressing")["message"] == "Unable to apply 4.99.5: the update could not be applied"
    assert history(kube) == [("4.99.5", "Partial")]
    # The failure fails its task and its node, never the process: the rest of the payload is applied.
    wait_until(lambda: _exists_cm(kube, name, namespace), timeout=30, what="the other manifest applied")


def _exists_cm(kube: KubeClient, name: str, namespace: str) -> bool:
    return any(c["metadata"]["name"] == name for c in kube.list(CONFIGMAPS, namespace)["items"])


def test_a_malformed_payload_root_is_one_clear_condition_and_nothing_is_applied(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    tmp_path: Path,
    processes: Callable[..., StartProcess],
) -> None:
    twice = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n  namespace: ns\n  annotations:\n    {INCLUDED}\n"
    root = write_payload_root(tmp_path / "bad", "4.99.6", {}, {"0000_50_x_00_dup.yaml": f"{twice}---\n{twice}"})
    audit = Audit(cluster.state["auditLog"])
    start = processes(cluster.kubeconfig, namespace, tmp_path, payload=root, release_image=image_of("4.99.6"))
    wait_until(lambda: said(kube, "ReleaseAccepted").get("reason") == "LoadPayload", timeout=60, what="refused")
    accepted = said(kube, "ReleaseAccepted")
    assert accepted["status"] == "False"
    assert accepted["message"] == (
        f'Loading payload failed version="4.99.6" image="{image_of("4.99.6")}" failure=Error loading manifests from '
        f'{root}/release-manifests: parse 0000_50_x_00_dup.yaml: duplicate resource: (Group: "" Kind: "ConfigMap" '
        'Namespace: "ns" Name: "d")'
    )
    assert start.proc.poll() is None, "refused, and running: status, retrieval and metrics go on"
    assert not [r for r in audit.requests(kube, APPLIER)], "nothing of it applied"
    # Recorded after the status write that shows the refusal.
    warnings = wait_until(
        lambda: [e for e in kube.list(EVENTS, namespace)["items"] if e["reason"] == "LoadPayloadFailed"],
        what="the LoadPayloadFailed Event",
    )
    assert warnings[0]["type"] == "Warning"
