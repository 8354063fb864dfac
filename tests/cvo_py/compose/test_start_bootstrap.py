"""`cluster-version-operator start` as a process at start-up: it creates the ClusterVersion when
there is none (and again when it is deleted while running), prunes version Pods an earlier run
left behind before anything else, and serves metrics with the TLS settings its flags name."""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import CLUSTERVERSIONS, PODS, ApiError, KubeClient
from payload.podspec import POD_LABEL_KEY, POD_LABEL_SELECTOR, POD_LABEL_VALUE
from testkit.checkout import REPO
from testkit.fakes.kubelet import Kubelet, running
from testkit.harness.certs import pinned_client_context
from testkit.harness.cluster import LocalCluster, free_port
from testkit.harness.clusterversion import IMG_4141
from testkit.harness.manifests import LOCAL_ENDPOINTS
from testkit.harness.wait import wait_until

ERRATA = "https://access.redhat.com/errata/RHSA-2024:0001"
CHANNELS_KEY = "io.openshift.upgrades.graph.release.channels"

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")


@dataclass
class Start:
    proc: subprocess.Popen[bytes]
    log_path: Path
    port: int | None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> str:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)
        return self.log()


Launch = Callable[..., Start]


@pytest.fixture
def launch(cluster: LocalCluster, namespace: str, tmp_path: Path) -> Iterator[Launch]:
    """Starts `start` in `namespace` running release 4.14.1, with the given release-metadata
    `metadata` map, extra flags and environment."""
    started: list[Start] = []

    def run(metadata: dict[str, str] | None = None, *flags: str, env: dict[str, str] | None = None) -> Start:
        payload = tmp_path / f"payload-{len(started)}"
        (payload / "release-manifests").mkdir(parents=True)
        release: dict[str, Any] = {"kind": "cincinnati-metadata-v0", "version": "4.14.1"}
        if metadata is not None:
            release["metadata"] = metadata
        (payload / "release-manifests" / "release-metadata").write_text(json.dumps(release))
        log_path = tmp_path / f"start-{len(started)}.log"
        port = free_port() if any(f.startswith("--serving-cert-file") for f in flags) else None
        listen = f"127.0.0.1:{port}" if port else ""
        proc = subprocess.Popen(
            [sys.executable, "-m", "cvo_py", "start", "--kubeconfig", cluster.kubeconfig, "--v", "2"]
            + ["--listen", listen, "--release-image", IMG_4141, "--node-name", "node-0", *LOCAL_ENDPOINTS, *flags],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=log_path.open("wb"),
            env={
                **os.environ,
                "CVO_NAMESPACE": namespace,
                "PAYLOAD_OVERRIDE": str(payload),
                **(env or {}),
            },
        )
        start = Start(proc, log_path, port)
        started.append(start)
        return start

    yield run
    for start in started:
        start.stop()


def get_cv(kube: KubeClient, name: str = "version") -> dict[str, Any] | None:
    try:
        return kube.get(CLUSTERVERSIONS, name)
    except ApiError as exc:
        if exc.is_not_found():
            return None
        raise


def with_status(kube: KubeClient, start: Start, name: str = "version", not_uid: str = "") -> dict[str, Any]:
    """Waits for ClusterVersion `name` (other than uid `not_uid`) to carry a status history."""

    def found() -> dict[str, Any] | None:
        assert start.alive(), start.log()
        cv = get_cv(kube, name)
        if cv is None or cv["metadata"]["uid"] == not_uid or not (cv.get("status") or {}).get("history"):
            return None
        return cv

    cv: dict[str, Any] = wait_until(found, timeout=30, what=f"ClusterVersion {name} with status")
    return cv


# -- creating the ClusterVersion ----------------------------------------------------------------------


def test_start_creates_the_missing_cluster_version_and_recreates_it_after_deletion(
    kube: KubeClient, launch: Launch
) -> None:
    assert get_cv(kube) is None
    start = launch({"url": ERRATA, CHANNELS_KEY: "stable-4.14"})
    cv = with_status(kube, start)

    cluster_id = cv["spec"]["clusterID"]
    assert str(uuid.UUID(cluster_id)) == cluster_id  # a random UUID, canonical form
    assert cv["spec"] == {"clusterID": cluster_id, "channel": "stable-4.14"}  # the release's one channel
    assert cv["status"]["desired"] == {
        "version": "4.14.1",
        "image": IMG_4141,
        "url": ERRATA,
        "channels": ["stable-4.14"],
    }
    head = cv["status"]["history"][0]
    assert (head["version"], head["image"]) == ("4.14.1", IMG_4141)
    assert f'Created ClusterVersion version for release 4.14.1: clusterID {cluster_id}, channel "stable-4.14"' in (
        start.log()
    )
    assert "deleted while running" not in start.log()

    # Deleted while running: created again, with a new cluster ID, and the log says why.
    old_uid = cv["metadata"]["uid"]
    kube.delete(CLUSTERVERSIONS, "version")
    again = with_status(kube, start, not_uid=old_uid)
    assert again["spec"]["clusterID"] != cluster_id
    assert again["spec"]["channel"] == "stable-4.14"
    assert again["status"]["desired"]["image"] == IMG_4141
    log = start.stop()
    assert start.proc.returncode == 0, log
    assert f"ClusterVersion version (uid {old_uid}) was deleted while running; recreating it" in log
    assert log.count("Created ClusterVersion version for release 4.14.1") == 2, log


def test_start_leaves_the_channel_empty_when_the_release_names_several(kube: KubeClient, launch: Launch) -> None:
    """CVO_NAME names the ClusterVersion; with several channels choosing one is the admin's call."""
    start = launch({CHANNELS_KEY: "stable-4.14,candidate-4.14,fast-4.14"}, env={"CVO_NAME": "cvo-bootstrap"})
    cv = with_status(kube, start, name="cvo-bootstrap")
    assert set(cv["spec"]) == {"clusterID"}
    assert cv["status"]["desired"]["channels"] == ["candidate-4.14", "fast-4.14", "stable-4.14"]
    assert get_cv(kube, "version") is None
    assert "Created ClusterVersion cvo-bootstrap for release 4.14.1: clusterID " in start.log()
    assert 'channel ""' in start.log()


def test_start_uses_an_existing_cluster_version_as_is(kube: KubeClient, launch: Launch) -> None:
    created = kube.create(CLUSTERVERSIONS, {"metadata": {"name": "version"}, "spec": {"clusterID": str(uuid.uuid4())}})
    start = launch({CHANNELS_KEY: "stable-4.14"})
    cv = with_status(kube, start)
    assert cv["metadata"]["uid"] == created["metadata"]["uid"]
    assert cv["spec"] == created["spec"]  # no channel added to an existing object
    assert "Created ClusterVersion" not in start.stop()


# -- pruning version Pods of an earlier run -----------------------------------------------------------


def stale_pod(name: str, node: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {POD_LABEL_KEY: POD_LABEL_VALUE}},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "containers": [{"name": "rename-to-final-location", "image": IMG_4141}],
        },
    }


def test_start_prunes_version_pods_left_by_an_earlier_run(
    kube: KubeClient, kubelet: Kubelet, namespace: str, launch: Launch
) -> None:
    # One Pod still running (deleted gracefully: the kubelet must confirm) and one that is not.
    kubelet.node_name = "node-0"
    for name in ("version-stale-running", "version-stale-pending"):
        kube.create(PODS, stale_pod(name, "node-0"), namespace)
    kubelet.set_container_state("version-stale-running", namespace, "rename-to-final-location", running())
    unrelated = kube.create(PODS, {**stale_pod("unrelated", "node-0"), "metadata": {"name": "unrelated"}}, namespace)

    start = launch()

    def terminating() -> bool:
        assert start.alive(), start.log()
        pod = kube.get(PODS, "version-stale-running", namespace)
        return bool(pod["metadata"].get("deletionTimestamp"))

    wait_until(terminating, timeout=20, what="graceful deletion of the running stale Pod")
    names = [p["metadata"]["name"] for p in kube.list(PODS, namespace, label_selector=POD_LABEL_SELECTOR)["items"]]
    assert names == ["version-stale-running"]  # the stopped one went at once
    # Pruning comes first: the status loop (which creates the ClusterVersion) waits for it.
    assert get_cv(kube) is None
    kubelet.finish_deletion("version-stale-running", namespace)

    wait_until(
        lambda: not kube.list(PODS, namespace, label_selector=POD_LABEL_SELECTOR)["items"],
        timeout=20,
        what="stale Pods gone",
    )
    with_status(kube, start)
    assert kube.get(PODS, "unrelated", namespace)["metadata"]["uid"] == unrelated["metadata"]["uid"]
    log = start.stop()
    assert start.proc.returncode == 0, log
    for name in ("version-stale-running", "version-stale-pending"):
        assert f"Pruning version pod {name} left by an earlier retrieval" in log
    assert "Could not prune" not in log


# -- TLS flags on the metrics server ------------------------------------------------------------------


def negotiated(port: int, context: ssl.SSLContext) -> tuple[str | None, str]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, context.wrap_socket(raw) as tls:
        cipher = tls.cipher()
        assert cipher is not None
        return tls.version(), cipher[0]


def serving(start: Start) -> bool:
    assert start.alive(), start.log()
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", start.port or 0)) == 0


def test_start_serves_metrics_with_its_tls_flags(
    kube: KubeClient, launch: Launch, certificate: tuple[str, str]
) -> None:
    cert = ["--serving-cert-file", certificate[0], "--serving-key-file", certificate[1]]
    start = launch(
        None,
        *cert,
        "--tls-min-version=VersionTLS12",
        "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    )
    wait_until(lambda: serving(start), timeout=30, what="metrics endpoint up")
    assert start.port is not None
    with pytest.raises(ssl.SSLError, match="(?i)protocol version|unsupported protocol"):
        negotiated(start.port, pinned_client_context(ssl.TLSVersion.TLSv1_1))
    assert negotiated(start.port, pinned_client_context(ssl.TLSVersion.TLSv1_2)) == (
        "TLSv1.2",
        "ECDHE-RSA-AES256-GCM-SHA384",
    )
    context = pinned_client_context(ssl.TLSVersion.TLSv1_2)
    with urllib.request.urlopen(f"https://127.0.0.1:{start.port}/healthz", context=context, timeout=10) as r:
        assert (r.status, r.read()) == (200, b"ok")
    log = start.stop()
    assert start.proc.returncode == 0, log

    # Defaults: the Intermediate profile (TLS 1.2 minimum).
    default = launch(None, *cert)
    wait_until(lambda: serving(default), timeout=30, what="metrics endpoint up")
    assert default.port is not None
    with pytest.raises(ssl.SSLError, match="(?i)protocol version|unsupported protocol"):
        negotiated(default.port, pinned_client_context(ssl.TLSVersion.TLSv1_1))
    assert negotiated(default.port, pinned_client_context(ssl.TLSVersion.TLSv1_3))[0] == "TLSv1.3"
