"""Insights that are stale, partial or about an object that cannot be assessed are never shown as
current: the controller runs as a real process against the local API server and `upgrade-status`
reads what it published.

- stale: the controller is killed and every Node, pool and operator deleted; `upgrade-status`
  says the data is older than twice the resync period, and later that the Lease expired;
- a reader that may not read the Lease is told so in one line;
- one pool with an invalid nodeSelector operator is a health insight, and other changes keep
  reaching the ConfigMap;
- insights over the 1 MiB ConfigMap limit: the metadata says what was omitted and
  `upgrade-status` says its counts are partial.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cvo_py.cli import main as cli
from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.times import format_time
from cvo_py.runtime.kube import CLUSTEROPERATORS, MACHINECONFIGPOOLS, MACHINECONFIGS, NODES, KubeClient
from status.updatestatus.api import metadata
from status.updatestatus.api.metadata import META_KEY
from testkit.fakes.mco import MCO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster

OLD, NEW = "4.15.8", "4.16.0"
MCO_PREFIX = "machineconfiguration.openshift.io/"
POOL = "faults"
NODES_IN_POOL = ("faults-node-0", "faults-node-1")
BAD_POOL = "broken"
CONFIGS = {OLD: f"rendered-{POOL}-{OLD}", NEW: f"rendered-{POOL}-{NEW}"}
OPERATORS = ("dns", "etcd", "machine-config")
PROCEEDING_WELL = "Update is proceeding well"


@pytest.fixture
def update_in_progress(
    cluster: LocalCluster, kube: KubeClient, mco: MCO, clusterversion_cleanup: None, tmp_path: Path
) -> Iterator[str]:
    """An update in progress with nothing wrong, the ConfigMap API opted in; yields the
    controller's kubeconfig."""
    _delete_machine_objects(kube)
    h.apply(kube, h.load_manifests())
    h.delete_configmap(kube, h.NAMESPACE)
    h.delete_lease(kube, h.NAMESPACE)
    for version, name in CONFIGS.items():
        mco.create_machineconfig(name, version)
    mco.create_pool(POOL, {f"node-role.kubernetes.io/{POOL}": ""}, CONFIGS[NEW])
    for node in NODES_IN_POOL:
        mco.create_node(node, [POOL], CONFIGS[OLD])
    started = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)
    h.create_clusterversion(kube, OLD, started - timedelta(days=3))
    h.start_update(kube, NEW, started)
    h.create_operator(kube, "dns", NEW, started + timedelta(minutes=8))
    h.create_operator(kube, "etcd", OLD, started, progressing=True)
    h.create_operator(kube, "machine-config", OLD, started + timedelta(minutes=1), progressing=True)
    h.create_configmap(kube, h.NAMESPACE)
    yield cluster.write_kubeconfig(
        tmp_path / "sa.kubeconfig", cluster.service_account_token(h.NAMESPACE, h.SERVICE_ACCOUNT)
    )
    h.delete_configmap(kube, h.NAMESPACE)
    h.delete_lease(kube, h.NAMESPACE)
    _delete_machine_objects(kube)


def _delete_machine_objects(kube: KubeClient) -> None:
    objects = [(NODES, n) for n in NODES_IN_POOL] + [(MACHINECONFIGPOOLS, POOL), (MACHINECONFIGPOOLS, BAD_POOL)]
    objects += [(MACHINECONFIGS, name) for name in CONFIGS.values()]
    h.delete_objects(kube, objects)


def upgrade_status(
    capsys: pytest.CaptureFixture[str], kubeconfig: str, now: int, details: str = "all"
) -> tuple[int, str, str]:
    code = cli.main(  # what the controller published, with the warnings about it
        ["upgrade-status", "--kubeconfig", kubeconfig, "--source", "controller", "--now", format_time(now)]
        + ["--details", details]
    )
    out, err = capsys.readouterr()
    return code, out, err


def warnings_of(text: str) -> list[str]:
    return [line.removeprefix("warning: ") for line in text.splitlines() if line.startswith("warning: ")]


def published_meta(kube: KubeClient) -> metadata.PublicationMetadata | None:
    data = h.configmap_data(kube, h.NAMESPACE) or {}
    return metadata.decode(data[META_KEY]) if META_KEY in data else None


def test_stale_insights_after_the_controller_stops_are_not_shown_as_current(
    cluster: LocalCluster, kube: KubeClient, update_in_progress: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    usc = h.ControllerProcess(
        update_in_progress,
        h.NAMESPACE,
        tmp_path / "usc.log",
        "--resync",
        "1",
        # a renew deadline a 10 s stall does not reach: the controller keeps running until killed
        "--leader-elect-lease-duration",
        "30",
        "--leader-elect-renew-deadline",
        "25",
        "--leader-elect-retry-period",
        "2",
    )
    try:
        h.wait_for(
            "the insights of every node and operator, and the metadata",
            lambda: (
                (d := h.configmap_data(kube, h.NAMESPACE))
                and all(f"usc-node-{n}" in d for n in NODES_IN_POOL)
                and all(f"usc-co-{o}" in d for o in OPERATORS)
                and META_KEY in d
            ),
        )
        meta = published_meta(kube)
        assert meta is not None and meta.resync_period == SECOND and meta.omitted.count == 0
        assert meta.controller.identity and meta.controller.version
        code, out, err = upgrade_status(capsys, cluster.kubeconfig, meta.computed_at + SECOND)
        assert (code, warnings_of(out), err) == (0, [], ""), out + err
        assert "faults-node-0" in out
    finally:
        usc.kill()  # as a crash: the Lease is not released
        usc.stop()
    stopped = published_meta(kube)
    assert stopped is not None
    for name in OPERATORS:
        kube.delete(CLUSTEROPERATORS, name)
    _delete_machine_objects(kube)

    # a few seconds later (more than twice the 1 s resync): stale, the Lease (30 s) still valid
    code, out, err = upgrade_status(capsys, cluster.kubeconfig, stopped.computed_at + 5 * SECOND)
    assert code == 0, err
    [stale] = warnings_of(out)
    assert stale.startswith("the insights are stale: computed 5s ago"), stale
    assert warnings_of(err) == [stale] and out.startswith(f"warning: {stale}\n")
    assert PROCEEDING_WELL not in out and "Update health is not known" in out

    # later still: the Lease has expired too
    code, out, err = upgrade_status(capsys, cluster.kubeconfig, stopped.computed_at + 60 * SECOND, "none")
    lines = warnings_of(out)
    assert code == 0 and len(lines) == 2, out
    assert lines[0].startswith("the insights are stale") and "Lease expired" in lines[1]
    assert PROCEEDING_WELL not in out


def test_a_reader_that_may_not_read_the_lease_is_told_in_one_line(
    cluster: LocalCluster, kube: KubeClient, update_in_progress: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reader = "insights-reader"
    h.apply(
        kube,
        [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": reader, "namespace": h.NAMESPACE},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": reader, "namespace": h.NAMESPACE},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": reader},
                "subjects": [{"kind": "ServiceAccount", "name": reader, "namespace": h.NAMESPACE}],
            },
        ],
    )
    kubeconfig = cluster.write_kubeconfig(
        tmp_path / "reader.kubeconfig", cluster.service_account_token(h.NAMESPACE, reader)
    )
    usc = h.ControllerProcess(update_in_progress, h.NAMESPACE, tmp_path / "usc.log", "--resync", "1")
    try:
        meta = h.wait_for("the metadata", lambda: published_meta(kube))
        code, out, err = upgrade_status(capsys, kubeconfig, meta.computed_at)
    finally:
        usc.stop()
    assert code == 0, err
    [line] = warnings_of(out)
    assert line.startswith(f"cannot read the update status controller's Lease {h.NAMESPACE}/{h.LEASE} (403")
    assert PROCEEDING_WELL not in out


def test_a_pool_that_cannot_be_assessed_does_not_freeze_the_other_insights(
    cluster: LocalCluster,
    kube: KubeClient,
    mco: MCO,
    update_in_progress: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kube.create(
        MACHINECONFIGPOOLS,
        {
            "metadata": {"name": BAD_POOL},
            "spec": {
                "nodeSelector": {"matchExpressions": [{"key": "node-role.kubernetes.io/infra", "operator": "Near"}]},
                "configuration": {"name": CONFIGS[NEW]},
            },
        },
    )
    usc = h.ControllerProcess(update_in_progress, h.NAMESPACE, tmp_path / "usc.log", "--resync", "1")
    try:
        data = h.wait_for(
            "the health insight about the pool",
            lambda: (
                (d := h.configmap_data(kube, h.NAMESPACE))
                and any(k.startswith("usc-health-unassessable-") for k in d)
                and f"usc-node-{NODES_IN_POOL[0]}" in d
                and d
            ),
        )
        [key] = [k for k in data if k.startswith("usc-health-unassessable-")]
        fault = h.insight(data, key)
        assert fault["scope"]["resources"] == [
            {"group": "machineconfiguration.openshift.io", "resource": "machineconfigpools", "name": BAD_POOL}
        ]
        assert "failed to get label selector from the pool: broken" in fault["impact"]["description"]

        # an unrelated node starts updating: the change reaches the ConfigMap
        mco.annotate_node(
            NODES_IN_POOL[0], {MCO_PREFIX + "desiredConfig": CONFIGS[NEW], MCO_PREFIX + "state": "Working"}
        )
        h.wait_for(
            "the node's insight to say it is updating",
            lambda: (
                h.condition(h.insight(h.configmap_data(kube, h.NAMESPACE), f"usc-node-{NODES_IN_POOL[0]}"), "Updating")[
                    "status"
                ]
                == "True"
            ),
        )
        assert "SelectorError" not in usc.log() and "Traceback" not in usc.log()
        meta = published_meta(kube)
        assert meta is not None
        code, out, err = upgrade_status(capsys, cluster.kubeconfig, meta.computed_at, "health")
        assert code == 0, err
        assert "Message: MachineConfigPool broken cannot be assessed; insights about it are missing" in out
    finally:
        usc.stop()


def test_insights_over_the_configmap_limit_are_said_to_be_omitted(
    cluster: LocalCluster, kube: KubeClient, update_in_progress: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 160 operators, each Progressing with a 7 KB message: about 1.2 MB of operator insights,
    # all in the main ConfigMap (only node insights move to shards): over the API server's 1 MiB
    started = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)
    names = [f"big-{i:03d}" for i in range(160)]
    message = "Working towards the new release: " + "x" * 7000
    try:
        for name in names:
            h.create_operator(kube, name, OLD, started, progressing=True)

            def long_message(s: dict[str, object], m: str = message) -> None:
                conditions = s["conditions"]
                assert isinstance(conditions, list)
                conditions[2]["message"] = m

            h.update_status(kube, CLUSTEROPERATORS, name, long_message)
        usc = h.ControllerProcess(update_in_progress, h.NAMESPACE, tmp_path / "usc.log", "--resync", "1")
        try:
            # Metadata that lists omitted insights, and the gauge saying as many. The gauge is set
            # once a sync's writes return, so a reader may see the new ConfigMap before the gauge:
            # the two must agree once that sync is done, not at every instant.
            def omitted_and_counted() -> metadata.PublicationMetadata | None:
                published = published_meta(kube)
                if published is None or not published.omitted.count:
                    return None
                gauge = usc.metric("update_status_controller_insights_omitted")
                return published if gauge == published.omitted.count else None

            meta = h.wait_for("omitted insights, published and counted", omitted_and_counted, timeout=60)
        finally:
            usc.stop()
        data = h.configmap_data(kube, h.NAMESPACE) or {}
        published_operators = [k for k in data if k.startswith("usc-co-big-")]
        assert len(published_operators) + meta.omitted.kinds.get("ClusterOperator", 0) == len(names)
        assert set(meta.omitted.keys).isdisjoint(data)
        code, out, err = upgrade_status(capsys, cluster.kubeconfig, meta.computed_at, "none")
        assert code == 0, err
        # (the stopped controller released its Lease: a warning of its own)
        [line] = [w for w in warnings_of(out) if "omitted" in w]
        assert line.startswith(f"{meta.omitted.count} insights were omitted by the controller (ConfigMap size limit)")
        assert "ClusterOperator" in line and "partial" in line
        assert line in warnings_of(err) and PROCEEDING_WELL not in out
    finally:
        h.delete_objects(kube, [(CLUSTEROPERATORS, name) for name in names])
