"""`upgrade-status --source cluster` as a person with real RBAC has it: a ServiceAccount allowed
exactly what oc reads (a ClusterRole and Roles on the local API server), then each read taken
away: oc stops with the API's error as kubectl prints it, one line, exit 1, never a traceback. In
`auto`, a controller's ConfigMap the user may not read sends it to the objects, said on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from cvo_py.runtime.kube import KubeClient
from status.updatestatus.client import snapshot
from status.updatestatus.client.cluster import machineconfig_names
from status.updatestatus.client.render import render
from testkit.checkout import EXAMPLES
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster
from testkit.objects import livecluster
from testkit.objects.livecluster import upgrade_status

EXAMPLE = "4.14.1-degraded"
pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"oc examples not found in {EXAMPLES}")




def user(name: str) -> str:
    return f"system:serviceaccount:{livecluster.READERS_NAMESPACE}:{name}"


def test_a_user_allowed_what_oc_reads_sees_the_status(
    cluster: LocalCluster, degraded: tuple[snapshot.Snapshot, str], tmp_path: Path
) -> None:
    snap, now = degraded
    kubeconfig = livecluster.reader(cluster, tmp_path, "reads-all")
    done = upgrade_status(kubeconfig, "--source", "cluster", "--now", now)
    assert done.returncode == 0, done.stderr
    insights, at = snap.insights()
    first, rest = done.stdout.split("\n", 1)
    assert first.startswith("Unable to fetch alerts, ignoring alerts in 'Update Health':  ")  # no Route here
    assert rest == render(insights, at, "none")


def first_machineconfig(snap: snapshot.Snapshot) -> str:
    nodes = sorted(snap.nodes, key=lambda n: str(n["metadata"]["name"]))  # as the API server lists them
    return machineconfig_names(nodes)[0]


# resource taken away → the message oc prints (kubectl's `Error from server (Forbidden): …`)
FORBIDDEN = {
    "clusterversions": 'clusterversions.config.openshift.io "version" is forbidden: User "{user}" cannot get resource '
    '"clusterversions" in API group "config.openshift.io" at the cluster scope',
    "clusteroperators": 'clusteroperators.config.openshift.io is forbidden: User "{user}" cannot list resource '
    '"clusteroperators" in API group "config.openshift.io" at the cluster scope',
    "machineconfigpools": 'machineconfigpools.machineconfiguration.openshift.io is forbidden: User "{user}" cannot '
    'list resource "machineconfigpools" in API group "machineconfiguration.openshift.io" at the cluster scope',
    "nodes": 'nodes is forbidden: User "{user}" cannot list resource "nodes" in API group "" at the cluster scope',
    "machineconfigs": 'machineconfigs.machineconfiguration.openshift.io "{mc}" is forbidden: User "{user}" cannot get '
    'resource "machineconfigs" in API group "machineconfiguration.openshift.io" at the cluster scope',
    "deployments": 'deployments.apps "machine-config-operator" is forbidden: User "{user}" cannot get resource '
    '"deployments" in API group "apps" in the namespace "openshift-machine-config-operator"',
}


@pytest.mark.parametrize("resource", sorted(FORBIDDEN))
def test_each_read_taken_away_stops_with_the_apis_error_as_oc(
    cluster: LocalCluster, degraded: tuple[snapshot.Snapshot, str], tmp_path: Path, resource: str
) -> None:
    snap, now = degraded
    name = f"without-{resource}"
    kubeconfig = livecluster.reader(cluster, tmp_path, name, without=[resource])
    for source in ("cluster", "auto"):  # auto: no controller publishes, so the objects too
        done = upgrade_status(kubeconfig, "--source", source, "--now", now)
        assert done.returncode == 1
        assert done.stdout == ""
        message = FORBIDDEN[resource].format(user=user(name), mc=first_machineconfig(snap))
        error = done.stderr.splitlines()[-1]
        assert error == f"Error from server (Forbidden): {message}"
        assert "Traceback" not in done.stderr
        assert len(done.stderr.splitlines()) == (1 if source == "cluster" else 2)  # auto: its note first


def test_auto_reads_the_objects_when_the_controllers_configmap_cannot_be_read(
    cluster: LocalCluster, kube: KubeClient, degraded: tuple[snapshot.Snapshot, str], tmp_path: Path, namespace: str
) -> None:
    snap, now = degraded
    h.publish_insights(kube, namespace)
    name = "no-configmaps"
    kubeconfig = livecluster.reader(cluster, tmp_path, name)
    auto = upgrade_status(kubeconfig, "--namespace", namespace, "--now", now)
    assert auto.returncode == 0, auto.stderr
    insights, at = snap.insights()
    assert auto.stdout.split("\n", 1)[1] == render(insights, at, "none")
    assert auto.stderr == (
        f"note: the update status controller's ConfigMaps cannot be read (configmaps \"status-api-cm-prototype\" is "
        f'forbidden: User "{user(name)}" cannot get resource "configmaps" in API group "" in the namespace '
        f"\"{namespace}\"): computing the status from the cluster's objects, as oc does\n"
    )
    controller = upgrade_status(kubeconfig, "--source", "controller", "--namespace", namespace, "--now", now)
    assert controller.returncode == 1
    assert controller.stdout == ""
    assert len(controller.stderr.splitlines()) == 1 and "403" in controller.stderr
