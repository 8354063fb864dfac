"""`upgrade-status --namespace`: a controller run with `--namespace X` (install/ moved into X) on the
local API server is read with `upgrade-status --namespace X`, once and with `--watch`, exactly as
the default namespace would be read."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.times import format_time
from cvo_py.runtime.kube import CONFIGMAPS, LEASES, ApiError, KubeClient, Resource
from status.updatestatus.api import metadata
from status.updatestatus.api.metadata import META_KEY
from status.updatestatus.api.names import CONFIGMAP, LEASE, SHARD_PREFIX, SHARDS_KEY
from testkit.harness import manifests
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster
from testkit.harness.terminal import as_typed
from testkit.harness.wait import wait_until


def published(kube: KubeClient, namespace: str) -> dict[str, str] | None:
    """The main ConfigMap's data in `namespace` once the controller has published the update there."""
    data = h.configmap_data(kube, namespace) or {}
    return data if META_KEY in data and "usc-cv-version" in data else None


@pytest.fixture
def moved_controller(
    kube: KubeClient, namespace: str, controller_kubeconfig: str, update_without_nodes: datetime, tmp_path: Path
) -> Iterator[h.ControllerProcess]:
    """The controller running with `--namespace` set to the test's namespace, opted in there; the
    default namespace holds the API's empty ConfigMap (`update_without_nodes`)."""
    h.create_configmap(kube, namespace)
    usc = h.ControllerProcess(controller_kubeconfig, namespace, tmp_path / "usc.log")
    try:
        yield usc
    finally:
        if usc.proc.poll() is None:
            usc.stop()


def test_a_moved_controller_is_read_with_the_same_namespace_as_the_default_one_would_be(
    cluster: LocalCluster, kube: KubeClient, namespace: str, moved_controller: h.ControllerProcess
) -> None:
    h.wait_for("the insights published in the moved namespace", lambda: published(kube, namespace), timeout=60)
    assert moved_controller.stop() == 0  # its Lease released: the data stays as it is now
    data = published(kube, namespace)
    assert data is not None
    now_text = "--now=" + format_time(metadata.decode(data[META_KEY]).computed_at + SECOND)

    before = h.upgrade_status(cluster.kubeconfig, "--source", "controller", now_text, "--details", "all")
    moved = h.upgrade_status(
        cluster.kubeconfig, "--source", "controller", "--namespace", namespace, now_text, "--details", "all"
    )
    assert "= Control Plane =" in moved and "Lease has no holder" in moved, moved
    assert before != moved, "the default namespace holds no insights"

    # The same ConfigMaps and Lease in the default namespace are read the same way without the flag.
    copied = [
        cm
        for cm in kube.list(CONFIGMAPS, namespace=namespace)["items"]
        if cm["metadata"]["name"] == CONFIGMAP or cm["metadata"]["name"].startswith(SHARD_PREFIX)
    ]
    lease = kube.get(LEASES, LEASE, namespace=namespace)
    try:
        for cm in copied:
            name = cm["metadata"]["name"]
            _delete(kube, CONFIGMAPS, name)
            kube.create(
                CONFIGMAPS, {"metadata": {"name": name, "namespace": h.NAMESPACE}, "data": cm["data"]}, h.NAMESPACE
            )
        _delete(kube, LEASES, LEASE)
        kube.create(LEASES, {"metadata": {"name": LEASE, "namespace": h.NAMESPACE}, "spec": lease["spec"]}, h.NAMESPACE)
        assert h.upgrade_status(cluster.kubeconfig, "--source", "controller", now_text, "--details", "all") == moved
    finally:
        for cm in copied:
            if cm["metadata"]["name"] != CONFIGMAP:  # the main one is `update_without_nodes`'s to remove
                _delete(kube, CONFIGMAPS, cm["metadata"]["name"])


def test_what_a_one_shot_read_warns_about_names_the_namespace_given(
    cluster: LocalCluster, kube: KubeClient, namespace: str, moved_controller: h.ControllerProcess, tmp_path: Path
) -> None:
    """A reader who may read the ConfigMaps in X but not the Lease, and a listed shard that is not
    there: both warnings name X, where they were read, not the default namespace."""
    h.wait_for("the insights published in the moved namespace", lambda: published(kube, namespace), timeout=60)
    assert moved_controller.stop() == 0
    data = published(kube, namespace)
    assert data is not None
    missing = SHARD_PREFIX + "7"
    h.delete_configmap(kube, namespace)
    h.create_configmap(kube, namespace, {**data, SHARDS_KEY: f'["{missing}"]'})
    reader = "configmap-reader"
    rbac = [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": reader, "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": reader, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": reader},
            "subjects": [{"kind": "ServiceAccount", "name": reader, "namespace": namespace}],
        },
    ]
    manifests.apply(kube, rbac)
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "reader.kubeconfig", cluster.service_account_token(namespace, reader)
    )
    now_text = "--now=" + format_time(metadata.decode(data[META_KEY]).computed_at + SECOND)

    def read() -> str | None:  # RBAC reaches the authorizer shortly after it is written
        out = h.upgrade_status(kubeconfig, "--source", "controller", "--namespace", namespace, now_text)
        return out if "(exit " not in out else None

    out = wait_until(read, timeout=30, what="the reader's first read")
    warnings = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert f"warning: cannot read the update status controller's Lease {namespace}/{LEASE} (403 Forbidden)" in out
    assert f"warning: ConfigMap {namespace}/{missing} (a listed shard) does not exist" in out, out
    assert len(warnings) == 2 and not any(h.NAMESPACE in w for w in warnings), warnings


def _delete(kube: KubeClient, resource: Resource, name: str) -> None:
    try:
        kube.delete(resource, name, h.NAMESPACE)
    except ApiError as exc:
        if not exc.is_not_found():
            raise


def test_watch_follows_a_moved_controller_and_its_lease(
    cluster: LocalCluster, kube: KubeClient, namespace: str, moved_controller: h.ControllerProcess, tmp_path: Path
) -> None:
    """`--watch --namespace X` (a pipe: a block per change) shows what the controller publishes in X,
    and flags it gone when its Lease in X is released."""
    watch = subprocess.Popen(
        as_typed(
            [sys.executable, "-m", "cvo_py", "upgrade-status", "--kubeconfig", cluster.kubeconfig, "--watch"]
            + ["--namespace", namespace, "--source", "controller"]  # the publication, also before it is there
        ),
        cwd=h.REPO,
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "watch.err", "wb"),  # noqa: SIM115 - the child holds it; closed with the test
        text=True,
    )
    shown: list[str] = []
    reader = threading.Thread(target=lambda: shown.extend(iter(watch.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        wait_until(lambda: "= Control Plane =" in "".join(shown), timeout=60, what="a frame of the moved insights")
        assert "Lease has no holder" not in "".join(shown)
        assert moved_controller.stop() == 0
        wait_until(lambda: "Lease has no holder" in "".join(shown), timeout=60, what="the released Lease flagged")
        watch.send_signal(signal.SIGINT)
        assert watch.wait(30) == 130
        reader.join(10)
        text = "".join(shown)
        assert h.NAMESPACE not in text and "does not exist" not in text, text
        assert "not watched" not in text and "cannot watch" not in text, text
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait(10)
