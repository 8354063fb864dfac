"""The local control plane's own behaviour: clear failures, idempotent start, restart keeps data."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from testkit.harness.cluster import LocalCluster, localcluster


def test_port_clash_is_a_clear_message(cluster: LocalCluster, tmp_path: Path) -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        with pytest.raises(localcluster.ClusterError) as caught:
            localcluster.up(tmp_path / "clash", port=port, quiet=True)
    finally:
        holder.close()
        localcluster.down(tmp_path / "clash")
    message = str(caught.value)
    assert f"port {port} is not available for the API server" in message
    assert "address already in use" in message


def test_up_twice_reuses_the_running_server(cluster: LocalCluster) -> None:
    again = localcluster.up(cluster.dir, quiet=True)
    assert again.state["pid"] == cluster.state["pid"]
    assert again.server == cluster.state["server"]


def test_service_account_tokens_are_real_and_rbac_applies(cluster: LocalCluster, namespace: str) -> None:
    from cvo_py.runtime.kube import CONFIGMAPS, ApiError

    client = cluster.service_account_client(namespace, "nobody")
    with pytest.raises(ApiError) as caught:
        client.list(CONFIGMAPS, namespace)
    assert caught.value.status == 403
    assert f'User "system:serviceaccount:{namespace}:nobody" cannot list resource "configmaps"' in caught.value.message


def test_etcd_wal_fsync_histogram_counts_the_writes(cluster: LocalCluster, namespace: str) -> None:
    from cvo_py.runtime.kube import CONFIGMAPS

    before = cluster.wal_fsyncs()
    assert float("inf") in before
    cluster.client.create(CONFIGMAPS, {"metadata": {"name": "fsync-probe", "namespace": namespace}, "data": {}})
    after = cluster.wal_fsyncs()
    assert after[float("inf")] > before[float("inf")]  # a write waited for at least one fsync
    counts = [after[le] for le in sorted(after)]
    assert counts == sorted(counts)  # cumulative buckets


def test_down_leaves_a_real_nodes_state_beside_it(tmp_path: Path) -> None:
    """`make node-up` keeps its node in the same directory: the test cluster's `down` (a test
    session that started its own) must not pull the node's certificates and data from under it."""
    data = tmp_path / "cluster"
    (data / "etcd").mkdir(parents=True)
    (data / "state.json").write_text("{}")
    (data / "node" / "apiserver" / "pki").mkdir(parents=True)
    (data / "node" / "apiserver" / "pki" / "ca.crt").write_text("node CA")
    (data / "node.json").write_text("{}")
    localcluster.down(data)
    assert sorted(p.name for p in data.iterdir()) == ["node", "node.json"]
    assert (data / "node" / "apiserver" / "pki" / "ca.crt").read_text() == "node CA"
    # Without a node beside it, the directory goes as a whole.
    alone = tmp_path / "alone"
    (alone / "etcd").mkdir(parents=True)
    localcluster.down(alone)
    assert not alone.exists()
