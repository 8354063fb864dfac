"""The project's list/watch loop against the real API server: events, bookmarks, 410 Gone
(from a compacted etcd), a killed connection, and custom resources as dicts."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from urllib.parse import urlparse

import pytest

from cvo_py.runtime.informer import ADDED, DELETED, MODIFIED, Backoff, Informer
from cvo_py.runtime.kube import CLUSTEROPERATORS, CONFIGMAPS, PODTEMPLATES, KubeClient
from testkit.harness.cluster import LocalCluster
from testkit.harness.tcpproxy import PausableProxy, TCPProxy
from testkit.harness.wait import wait_until


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.changed = threading.Condition()

    def __call__(self, event_type: str, obj: dict, old: dict | None) -> None:
        with self.changed:
            self.events.append((event_type, obj["metadata"]["name"]))
            self.changed.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 15.0) -> None:
        with self.changed:
            assert self.changed.wait_for(predicate, timeout), f"events so far: {self.events}"


def configmap(name: str, namespace: str, value: str = "1") -> dict:
    return {"metadata": {"name": name, "namespace": namespace}, "data": {"v": value}}


def podtemplate(name: str, namespace: str) -> dict:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "template": {"spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}},
    }


def test_list_then_watch_delivers_add_update_delete_and_keeps_cache(kube: KubeClient, namespace: str) -> None:
    kube.create(CONFIGMAPS, configmap("before", namespace))
    recorder = Recorder()
    informer = Informer(kube, CONFIGMAPS, namespace=namespace)
    informer.add_handler(recorder)
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        assert (ADDED, "before") in recorder.events
        kube.create(CONFIGMAPS, configmap("after", namespace))
        kube.patch(CONFIGMAPS, "before", {"data": {"v": "2"}}, namespace)
        kube.delete(CONFIGMAPS, "after", namespace)
        recorder.wait_for(lambda: (DELETED, "after") in recorder.events)
        assert recorder.events.index((ADDED, "after")) < recorder.events.index((DELETED, "after"))
        assert (MODIFIED, "before") in recorder.events
        cached = informer.get("before", namespace)
        assert cached is not None and cached["data"] == {"v": "2"}
        assert informer.get("after", namespace) is None
        assert informer.stats.lists == 1
    finally:
        informer.stop()


def test_sorted_items_are_in_the_api_servers_order_whatever_order_they_came_in(
    kube: KubeClient, namespace: str
) -> None:
    kube.create(CONFIGMAPS, configmap("m", namespace))
    informer = Informer(kube, CONFIGMAPS, namespace=namespace)
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        for name in ("z", "a"):  # added after the list: at the end of the cache
            kube.create(CONFIGMAPS, configmap(name, namespace))
        wait_until(lambda: len(informer.items()) >= 3, timeout=10, what="both added")
        listed = [cm["metadata"]["name"] for cm in kube.list(CONFIGMAPS, namespace)["items"]]
        assert [cm["metadata"]["name"] for cm in informer.sorted_items()] == listed
        assert [cm["metadata"]["name"] for cm in informer.items()][-2:] == ["z", "a"]
    finally:
        informer.stop()


def test_custom_resources_are_plain_dicts(kube: KubeClient, clusterversion_cleanup: None) -> None:
    recorder = Recorder()
    informer = Informer(kube, CLUSTEROPERATORS)
    informer.add_handler(recorder)
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        kube.create(CLUSTEROPERATORS, {"metadata": {"name": "etcd"}, "spec": {}})
        recorder.wait_for(lambda: (ADDED, "etcd") in recorder.events)
        cached = informer.get("etcd")
        assert isinstance(cached, dict)
        assert cached["kind"] == "ClusterOperator" and cached["apiVersion"] == "config.openshift.io/v1"
    finally:
        informer.stop()


def test_bookmarks_advance_the_resource_version(kube: KubeClient, namespace: str) -> None:
    # With a short server-side timeout the API server sends a bookmark shortly before closing.
    informer = Informer(kube, CONFIGMAPS, namespace=namespace, server_timeout_range=(3, 3))
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        listed = informer.resource_version
        kube.create(CONFIGMAPS, configmap("elsewhere", "default" if namespace != "default" else "kube-public"))
        wait_until(lambda: informer.stats.bookmarks >= 1, timeout=20)
        assert int(informer.resource_version or 0) > int(listed or 0)
        assert informer.stats.watches >= 1 and informer.stats.lists == 1
    finally:
        informer.stop()
        kube.delete(CONFIGMAPS, "elsewhere", "default" if namespace != "default" else "kube-public")


def test_410_gone_after_compaction_relists_and_misses_nothing(
    cluster: LocalCluster, kube: KubeClient, namespace: str
) -> None:
    kube.create(PODTEMPLATES, podtemplate("a", namespace))
    recorder = Recorder()
    informer = Informer(kube, PODTEMPLATES, namespace=namespace)
    informer.add_handler(recorder)
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        stale = informer.resource_version
        # Changes the informer must not miss, then etcd forgets everything before them.
        kube.create(PODTEMPLATES, podtemplate("b", namespace))
        kube.delete(PODTEMPLATES, "a", namespace)
        recorder.wait_for(lambda: (DELETED, "a") in recorder.events)
        kube.create(PODTEMPLATES, podtemplate("c", namespace))
        cluster.compact()
        # Resume from the pre-compaction version, as after a long disconnect: the server says 410.
        informer.reconnect(from_resource_version=stale)
        wait_until(lambda: informer.stats.expired >= 1 and informer.stats.lists >= 2)
        wait_until(lambda: informer.get("c", namespace) is not None)
        assert sorted(obj["metadata"]["name"] for obj in informer.items()) == ["b", "c"]
        kube.create(PODTEMPLATES, podtemplate("d", namespace))
        recorder.wait_for(lambda: (ADDED, "d") in recorder.events)
    finally:
        informer.stop()


def client_via(proxy: TCPProxy, cluster: LocalCluster, kube: KubeClient) -> KubeClient:
    """An admin client of the local API server that connects through `proxy`."""
    return KubeClient(
        kube.config._replace(host=f"https://127.0.0.1:{proxy.port}", token=cluster.state["adminToken"])
    )


def test_killed_connection_reconnects_with_backoff_and_keeps_watching(
    cluster: LocalCluster, kube: KubeClient, namespace: str
) -> None:
    server = urlparse(kube.server)
    proxy = TCPProxy(server.hostname or "127.0.0.1", server.port or 443)
    via_proxy = client_via(proxy, cluster, kube)
    recorder = Recorder()
    informer = Informer(via_proxy, CONFIGMAPS, namespace=namespace)
    informer.add_handler(recorder)
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        kube.create(CONFIGMAPS, configmap("one", namespace))
        recorder.wait_for(lambda: (ADDED, "one") in recorder.events)
        assert proxy.cut() >= 1
        kube.create(CONFIGMAPS, configmap("two", namespace))
        recorder.wait_for(lambda: (ADDED, "two") in recorder.events)
        assert informer.stats.errors >= 1
        assert informer.stats.watches >= 2
        # Resumed from the remembered resourceVersion: no relist was needed.
        assert informer.stats.lists == 1
        assert informer.failing == ""  # watching again: nothing to say any more
    finally:
        informer.stop()
        proxy.close()


def test_failing_handlers_hear_when_a_watch_fails_and_when_it_works_again(
    cluster: LocalCluster, kube: KubeClient, namespace: str
) -> None:
    server = urlparse(kube.server)
    proxy = PausableProxy(server.hostname or "127.0.0.1", server.port or 443)
    via_proxy = client_via(proxy, cluster, kube)
    heard: list[str] = []
    informer = Informer(via_proxy, CONFIGMAPS, namespace=namespace, backoff=Backoff(base=0.05, cap=0.2))
    informer.add_failing_handler(heard.append)
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        assert heard == []  # listed and watching: nothing to say
        assert proxy.pause() >= 1  # the watch is cut and new connections are refused
        wait_until(lambda: bool(heard) and heard[-1] != "", what="the failure heard")
        assert informer.failing == heard[-1]
        proxy.resume()
        wait_until(lambda: heard[-1] == "", what="the recovery heard")
        assert informer.failing == ""
        # Each call is a change: the same reason is not heard twice in a row.
        assert all(a != b for a, b in zip(heard, heard[1:], strict=False))
    finally:
        informer.stop()
        proxy.close()


def test_unreachable_server_is_retried_until_it_answers(
    cluster: LocalCluster, kube: KubeClient, namespace: str
) -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens on `port` now
    client = KubeClient(
        kube.config._replace(host=f"https://127.0.0.1:{port}", token=cluster.state["adminToken"])
    )
    informer = Informer(client, CONFIGMAPS, namespace=namespace)
    informer.start()
    try:
        wait_until(lambda: informer.stats.errors >= 2)
        assert not informer.has_synced
        assert "connection refused" in informer.stats.last_error
        assert "connection refused" in informer.failing
    finally:
        informer.stop()


@pytest.mark.parametrize("variant", ["4.13"])
def test_rollback_crd_rejects_newer_capability_with_422_naming_the_field(
    kube: KubeClient, crds: object, clusterversion_cleanup: None, variant: str
) -> None:
    from cvo_py.runtime.kube import CLUSTERVERSIONS, ApiError

    crds.install_clusterversion(variant)  # type: ignore[attr-defined]
    cv = kube.create(CLUSTERVERSIONS, {"metadata": {"name": "version"}, "spec": {"clusterID": "c0ffee"}})
    cv["status"] = {
        "desired": {"version": "4.13.0", "image": "quay.io/openshift-release-dev/ocp-release@sha256:" + "0" * 64},
        "observedGeneration": 1,
        "versionHash": "x",
        "availableUpdates": None,
        "capabilities": {"enabledCapabilities": ["Console", "MachineAPI"], "knownCapabilities": ["Console"]},
    }
    with pytest.raises(ApiError) as caught:
        kube.replace_status(CLUSTERVERSIONS, cv)
    error = caught.value
    assert error.status == 422 and error.reason == "Invalid"
    causes = [(c["reason"], c["field"]) for c in error.causes]
    assert ("FieldValueNotSupported", "status.capabilities.enabledCapabilities[1]") in causes
    assert 'Unsupported value: "MachineAPI"' in error.message


def test_a_failing_transform_does_not_kill_the_loop(kube: KubeClient, namespace: str) -> None:
    calls = {"n": 0}

    def flaky(obj: dict) -> dict:
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyError("unexpected shape")
        return obj

    kube.create(CONFIGMAPS, configmap("x", namespace))
    informer = Informer(kube, CONFIGMAPS, namespace=namespace, transform=flaky, backoff=Backoff(base=0.05))
    informer.start()
    try:
        assert informer.wait_for_sync(10)
        assert informer.get("x", namespace) is not None
        assert informer.stats.errors == 1 and informer.stats.lists == 1
    finally:
        informer.stop()
