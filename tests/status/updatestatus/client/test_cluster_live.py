"""`upgrade-status` on a cluster where no update status controller publishes: oc's snapshots loaded
into the local API server as the objects oc reads, and the output compared with oc's recorded
output at every `--details`; and which source each `--source` takes with the controller's
ConfigMap present, absent, stale, and with its Lease released."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.times import format_time, parse_time
from cvo_py.runtime.kube import CONFIGMAPS, LEASES, KubeClient
from status.updatestatus.api import configmap, metadata
from status.updatestatus.client import snapshot
from status.updatestatus.client.render import render
from status.updatestatus.client.routealerts import UNABLE
from status.updatestatus.insights import compute
from testkit.checkout import EXAMPLES
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster
from testkit.objects import livecluster
from testkit.objects.insight_objects import sample_insights
from testkit.objects.livecluster import upgrade_status

CASES = sorted(p.name.removesuffix("-cv.yaml") for p in EXAMPLES.glob("*-cv.yaml")) if EXAMPLES.is_dir() else []
DETAILS = ["none", "all", "nodes", "health", "operators"]


def status_of(stdout: str) -> str:
    """The status oc prints, after the line it prints when it cannot fetch alerts (there is no
    Route here: the line says that the Route API, or the Route, is not found)."""
    if stdout == "The cluster is not updating.\n":
        return stdout
    first, rest = stdout.split("\n", 1)
    assert first.startswith(UNABLE) and ("thanos-querier" in first), first
    return rest



def by_name(objects: list[snapshot.JSON]) -> list[snapshot.JSON]:
    return sorted(objects, key=lambda o: str(o["metadata"]["name"]))


def as_listed(snap: snapshot.Snapshot) -> snapshot.Snapshot:
    """The snapshot's objects in the order the API server lists them (by name), as oc reads them live."""
    snap.operators, snap.pools, snap.nodes = by_name(snap.operators), by_name(snap.pools), by_name(snap.nodes)
    return snap


def expected(name: str, details: str) -> str:
    """What oc prints for the example's objects as a live cluster lists them, at the snapshot's
    "now": its recorded output where the files list objects by name, as the API server does."""
    snap = as_listed(snapshot.load(EXAMPLES / f"{name}-cv.yaml"))
    insights, now = snap.insights()
    text = render(insights, now, details)
    recorded = {"none": ".output", "all": ".detailed-output"}.get(details)
    if recorded and [p["metadata"]["name"] for p in snap.pools] == [
        p["metadata"]["name"] for p in snapshot.load(EXAMPLES / f"{name}-cv.yaml").pools
    ]:
        assert text == (EXAMPLES / f"{name}{recorded}").read_text(encoding="utf-8")  # oc's own bytes
    return text


@pytest.fixture
def example(request: pytest.FixtureRequest, kube: KubeClient) -> Iterator[tuple[str, str]]:
    """(the example's name, its "now" as --now takes it), loaded into the API server."""
    name = request.param
    snap = snapshot.load(EXAMPLES / f"{name}-cv.yaml")
    loaded = livecluster.load(kube, snap)
    try:
        yield name, format_time(snap.mock_now())
    finally:
        loaded.remove()


@pytest.mark.parametrize("example", CASES, indirect=True)
def test_the_cluster_source_prints_what_oc_prints_at_every_details(
    cluster: LocalCluster, example: tuple[str, str]
) -> None:
    name, now = example
    for details in DETAILS:
        done = upgrade_status(cluster.kubeconfig, "--source", "cluster", "--now", now, "--details", details)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        want = expected(name, details)
        # no Route here: oc's line about the alerts comes first, only while the cluster updates
        assert status_of(done.stdout) == want, details


@pytest.mark.parametrize("example", ["4.14.1-degraded"], indirect=True)
def test_auto_without_the_controller_says_so_on_stderr_only(
    cluster: LocalCluster, example: tuple[str, str], namespace: str
) -> None:
    name, now = example
    done = upgrade_status(cluster.kubeconfig, "--namespace", namespace, "--now", now)
    assert done.returncode == 0, done.stderr
    assert status_of(done.stdout) == expected(name, "none")
    assert done.stderr == (
        f"note: no update status controller publishes in {namespace} (no ConfigMap "
        "status-api-cm-prototype): computing the status from the cluster's objects, as oc does\n"
    )


@pytest.mark.parametrize("example", ["4.14.1-degraded"], indirect=True)
def test_the_controller_source_without_its_configmap_is_todays_error(
    cluster: LocalCluster, example: tuple[str, str], namespace: str
) -> None:
    done = upgrade_status(cluster.kubeconfig, "--source", "controller", "--namespace", namespace)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"error: ConfigMap {namespace}/{configmap.CONFIGMAP} does not exist: no update status insights are "
        "published (create it to opt in)\n"
    )


def published_text(now: int) -> str:
    return render(sample_insights(), now, "none")


def make_stale(kube: KubeClient, namespace: str, now: int) -> None:
    """Insights computed 3 hours before `now`, with a resync period of a minute."""
    meta = metadata.build(now - 3 * 3600 * SECOND, "usc-0", "0", 60 * SECOND, [])
    patch = {"data": {metadata.META_KEY: metadata.encode(meta)}}
    kube.patch(CONFIGMAPS, configmap.CONFIGMAP, patch, namespace=namespace)


def release_lease(kube: KubeClient, namespace: str) -> None:
    kube.patch(LEASES, metadata.LEASE, {"spec": {"holderIdentity": None}}, namespace=namespace)


@pytest.mark.parametrize("example", ["4.14.1-degraded"], indirect=True)
@pytest.mark.parametrize("state", ["current", "stale", "lease released"])
def test_each_source_with_the_controllers_configmap(
    cluster: LocalCluster, kube: KubeClient, example: tuple[str, str], namespace: str, state: str
) -> None:
    """The publication (the sample insights) differs from the objects (the oc example), so the
    output says which was read."""
    name, now_text = example
    h.publish_insights(kube, namespace)
    if state == "stale":
        make_stale(kube, namespace, parse_time(now_text))
    elif state == "lease released":
        release_lease(kube, namespace)
    objects = expected(name, "none")
    now = parse_time(now_text)
    args = ["--namespace", namespace, "--now", now_text]

    auto = upgrade_status(cluster.kubeconfig, *args)
    controller = upgrade_status(cluster.kubeconfig, "--source", "controller", *args)
    from_objects = upgrade_status(cluster.kubeconfig, "--source", "cluster", "--now", now_text)

    assert status_of(from_objects.stdout) == objects and from_objects.stderr == ""
    for done in (auto, controller, from_objects):
        assert done.returncode == 0, done.stderr
    if state == "current":
        assert auto.stdout == controller.stdout == published_text(now)
        assert auto.stderr == controller.stderr == ""
        return
    # the controller's source shows its insights with the warnings; auto shows the objects and says why
    assert controller.stdout.startswith("warning: ")
    assert "Update health is not known" in controller.stdout
    assert status_of(auto.stdout) == objects
    why = "the insights are stale" if state == "stale" else "Lease has no holder"
    assert auto.stderr.startswith("note: the update status controller's insights are not current (")
    assert why in auto.stderr and auto.stderr.endswith("computing the status from the cluster's objects, as oc does\n")
    assert auto.stderr.count("\n") == 1


def test_the_order_of_insights_computed_in_parts_is_all_insights_order() -> None:
    """Alerts added after the rest was computed (`in_collection_order`) land where `all_insights` puts them."""
    snap = snapshot.load(EXAMPLES / "4.14.1-degraded-cv.yaml") if EXAMPLES.is_dir() else None
    if snap is None:
        pytest.skip(f"oc examples not found in {EXAMPLES}")
    from status.updatestatus.insights.alerts import alert_insights
    from status.updatestatus.insights.controlplane import update_started_at
    from testkit.objects.insight_objects import at, firing_alert

    response = {"status": "success", "data": {"alerts": [firing_alert("PodDisruptionBudgetLimit", at(10))]}}
    now = snap.mock_now()
    args = (snap.clusterversion, snap.operators, snap.nodes, snap.pools, snap.machineconfig_versions(), now)
    whole = compute.all_insights(*args, alerts=response)
    cp = compute.controlplane_insights(snap.clusterversion, snap.operators, now)
    nodes = compute.node_insights(snap.nodes, snap.pools, snap.machineconfig_versions(), now, cv=snap.clusterversion)
    alerts = alert_insights(response, update_started_at(snap.clusterversion))
    assert alerts
    assert compute.in_collection_order(cp, nodes, alerts) == whole
