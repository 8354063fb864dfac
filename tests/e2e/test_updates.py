"""`start` updates the cluster on a real node, as upstream's CVO does: an update A → B whose payload
carries operators, handed over from A's `start` Pod to B's; the rollback B → A under A's older
ClusterVersion CRD (openshift/release#43984); and what goes wrong on the way to a release that
gets stuck (the `start` Pod deleted in the middle of a level, the API server restarted during a
pass, a component that never becomes ready).

The tests run in this order on one node, each from the release the previous one left (A is the
4.13 release the earlier tests left the cluster on); each waits for the cluster to rest on a
release before it starts. The times they measure are printed at the end of the run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from cvo_py.runtime.kube import CLUSTEROPERATORS, CRDS, LEASES, PODS, KubeClient
from status.clusterversion.capabilities import crd_enums
from testkit.harness import localnode, nodecluster, noderelease, usc
from testkit.harness.arrivals import Arrival, Arrivals
from testkit.harness.localnode import NodeInfo
from testkit.harness.nodeconfig import NodePaths
from testkit.harness.wait import wait_until
from testkit.oracles.adm_upgrade import adm_upgrade

CVO_NAMESPACE = "openshift-cluster-version"
# What a 4.14 release enables that the 4.13 ClusterVersion CRD's enum does not list.
NEW_IN_4_14 = {"MachineAPI", "Build", "DeploymentConfig", "ImageRegistry"}


@pytest.fixture
def leases(kube: KubeClient) -> Iterator[Arrivals]:
    with Arrivals(kube, LEASES, namespace=CVO_NAMESPACE) as seen:
        yield seen


@pytest.fixture
def versions(kube: KubeClient) -> Iterator[Arrivals]:
    from cvo_py.runtime.kube import CLUSTERVERSIONS

    with Arrivals(kube, CLUSTERVERSIONS) as seen:
        yield seen


def holder(arrival: Arrival) -> str | None:
    """Who holds start's Lease in this event ("" released; None: another Lease)."""
    if arrival.object["metadata"]["name"] != noderelease.LEASE:
        return None
    return str((arrival.object.get("spec") or {}).get("holderIdentity") or "")


def report_operators(kube: KubeClient, names: tuple[str, ...], version: str) -> bool:
    """One round of the operators' reports; True once every one reports `version` Available."""
    return all([noderelease.report_operator(kube, name, version) for name in names])


def update(
    kube: KubeClient, versions: Arrivals, leases: Arrivals, target: str, operators: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Request `target` and follow it to its completion, reporting `operators` as their operators
    would; returns what was seen and when (seconds since the request)."""
    cv, before = noderelease.wait_settled(kube)
    previous = noderelease.lease_holder(kube)
    assert previous, "start holds its Lease before the update"
    if operators:
        assert usc.configmap_data(kube, usc.NAMESPACE) is not None, (
            "the Update Status Controller publishes on this cluster (test_deployments.py's OTA-1269 test runs first)"
        )
    cv_mark, lease_mark = versions.mark(), leases.mark()
    with noderelease.PodLog(kube, before) as outgoing_log:
        requested = time.monotonic()
        noderelease.request_update(kube, target)
        loaded = versions.wait_for(
            f"ReleaseAccepted=True PayloadLoaded for {target}",
            lambda a: noderelease.accepted(a.object, target),
            timeout=240,
            after=cv_mark,
        )
        released = leases.wait_for(
            f"the outgoing start ({previous}) hands its Lease back",
            lambda a: holder(a) == "",
            timeout=240,
            after=lease_mark,
        )
        taken = leases.wait_for(
            "the incoming start takes the Lease",
            lambda a: holder(a) not in (None, "", previous),
            timeout=240,
            after=lease_mark,
        )
        # What the outgoing start logged as it was TERMed (gone with its Pod once it ended).
        farewell = outgoing_log.wait_for("Graceful shutdown complete for", timeout=150)
    if operators:
        # Until its operators report it, the update goes on; the Update Status Controller (deployed
        # since OTA-1269, and rolled to the target's image by the update) says so.
        def updating() -> dict[str, str] | None:
            data = usc.configmap_data(kube, usc.NAMESPACE)
            now = data and usc.insight_condition(data, "usc-cv-version", "Updating").startswith("True ")
            return data if now else None

        wait_until(updating, timeout=180, what="the ClusterVersion insight Updating=True", tolerate=(KeyError,))
    wait_until(
        lambda: report_operators(kube, operators, noderelease.clusterversion(kube)["status"]["desired"]["version"])
        and noderelease.history(noderelease.clusterversion(kube))[0][1] == "Completed",
        timeout=300,
        interval=1.0,
        what=f"the update to {target} Completed (operators {', '.join(operators) or 'none'} reported)",
    )
    completed = time.monotonic()
    after, pod = noderelease.wait_settled(kube)
    return {
        "before": cv,
        "after": after,
        "outgoing": before,
        "outgoing log": farewell,
        "incoming": pod,
        "holder": holder(taken) or "",
        "times": {
            "accepted": loaded.at - requested,
            "lease released": released.at - requested,
            "handed over": taken.at - requested,
            "completed": completed - requested,
        },
    }


def log_of(kube: KubeClient, pod: dict[str, Any]) -> str:
    name = pod["metadata"]["name"]
    return str(kube.request("GET", f"/api/v1/namespaces/{CVO_NAMESPACE}/pods/{name}/log"))


def show(times: dict[str, dict[str, float]], title: str, measured: dict[str, float]) -> None:
    times[title] = measured
    print(f"{title}: " + ", ".join(f"{what} {seconds:.1f}s" for what, seconds in measured.items()))


def test_update_hands_over_to_the_next_release_and_completes(
    kube: KubeClient, node: NodeInfo, versions: Arrivals, leases: Arrivals, times: dict[str, dict[str, float]]
) -> None:
    b = node.release(nodecluster.UPDATE.version)
    seen = update(kube, versions, leases, b, nodecluster.UPDATE.operators)
    a = seen["before"]["status"]["desired"]
    assert a["version"].startswith("4.13."), a
    # B's start Pod took over from A's: another Pod, B's image, holding the Lease A handed back.
    outgoing, incoming = seen["outgoing"], seen["incoming"]
    assert incoming["metadata"]["uid"] != outgoing["metadata"]["uid"]
    assert incoming["spec"]["containers"][0]["image"] == b
    # A applied B: in B's first level, its own Deployment with B's image; then it was TERMed by the
    # Deployment's rollout, cut its pass short and shut down within the bound.
    farewell = seen["outgoing log"]
    for line in (
        f"apply: {nodecluster.UPDATE.version} on generation",
        f"Updating Deployment {CVO_NAMESPACE}/cluster-version-operator due to diff: "
        "spec.template.spec.containers[name=cluster-version-operator].image",
        "Shutting down due to terminated",
        "Run context completed; beginning two-minute graceful shutdown period.",
        f"Graceful shutdown complete for {a['version']}.",
    ):
        assert line in farewell, (line, farewell[-3000:])
    # It resumed the update from ClusterVersion status: B Partial at the head, so Updating, with its
    # own payload (no retrieval of its own).
    log = log_of(kube, incoming)
    assert f"successfully acquired lease {CVO_NAMESPACE}/{noderelease.LEASE}" in log, log[-3000:]
    assert f"apply: {nodecluster.UPDATE.version} on generation" in log and "in state Updating" in log, log[-3000:]
    cv = seen["after"]
    assert noderelease.history(cv)[:2] == [(nodecluster.UPDATE.version, "Completed"), (a["version"], "Completed")]
    assert cv["status"]["history"][0]["image"] == b and cv["status"]["history"][1]["image"] == a["image"]
    # The operators the payload carried were waited for: they report B.
    for name in nodecluster.UPDATE.operators:
        versions_reported = kube.get(CLUSTEROPERATORS, name)["status"]["versions"]
        assert versions_reported == [{"name": "operator", "version": nodecluster.UPDATE.version}], versions_reported
    out, err = adm_upgrade(cv)
    assert out.startswith(f"Cluster version is {nodecluster.UPDATE.version}\n"), out + err
    print(out)
    show(times, f"update {a['version']} → {nodecluster.UPDATE.version}", seen["times"])


def test_rollback_to_the_release_with_the_older_clusterversion_crd(
    kube: KubeClient, node: NodeInfo, versions: Arrivals, leases: Arrivals, times: dict[str, dict[str, float]]
) -> None:
    cv, _ = noderelease.wait_settled(kube)
    b = cv["status"]["desired"]
    assert b["version"] == nodecluster.UPDATE.version, "the rollback starts from the update's release"
    a = cv["status"]["history"][1]
    enabled = set(cv["status"]["capabilities"]["enabledCapabilities"])
    assert enabled >= NEW_IN_4_14, enabled
    crd_before = kube.get(CRDS, "clusterversions.config.openshift.io")
    seen = update(kube, versions, leases, a["image"])
    after = seen["after"]
    # The 4.13 payload's older ClusterVersion CRD is in place (applied in its first level)...
    crd = kube.get(CRDS, "clusterversions.config.openshift.io")
    assert crd["metadata"]["generation"] > crd_before["metadata"]["generation"]
    enums = crd_enums(crd)
    assert enums["enabledCapabilities"] is not None and not (enums["enabledCapabilities"] & NEW_IN_4_14), enums
    # ...and the 4.13 start still writes status and completes. Every 4.14 name is either still in
    # status (the API server accepted it: since Kubernetes 1.33 an unchanged list is ratcheted on
    # /status, so a rollback that leaves enabledCapabilities as it was is not refused) or left out
    # and named in CapabilitiesPruned (an API server that refuses it, as 4.13's Kubernetes did):
    # never dropped without a word.
    pruned = noderelease.condition(after, "CapabilitiesPruned")
    kept = set(after["status"]["capabilities"]["enabledCapabilities"])
    for name in NEW_IN_4_14:
        assert name in kept or (pruned.get("status") == "True" and name in pruned["message"]), (name, kept, pruned)
    assert noderelease.history(after)[:3] == [
        (a["version"], "Completed"),
        (b["version"], "Completed"),
        (a["version"], "Completed"),
    ]
    assert noderelease.condition(after, "Failing").get("status") == "False", noderelease.condition(after, "Failing")
    out, err = adm_upgrade(after)
    assert out.startswith(f"Cluster version is {a['version']}\n"), out + err
    print(
        "after the rollback: "
        + (pruned["message"] if pruned else f"status.capabilities written whole, {sorted(kept & NEW_IN_4_14)} kept")
    )
    show(times, f"rollback {b['version']} → {a['version']}", {**seen["times"]})


def test_start_survives_faults_on_the_way_to_a_release_that_gets_stuck(
    kube: KubeClient,
    node: NodeInfo,
    paths: NodePaths,
    versions: Arrivals,
    leases: Arrivals,
    times: dict[str, dict[str, float]],
) -> None:
    cv, _ = noderelease.wait_settled(kube)
    target = nodecluster.STUCK_UPDATE
    image = node.release(target.version)
    history_before = cv["status"]["history"]
    for name in target.operators:  # the update's operators are still at the release before
        reported = kube.get(CLUSTEROPERATORS, name)["status"].get("versions")
        assert reported != [{"name": "operator", "version": target.version}], (name, reported)
    requested = time.monotonic()
    noderelease.request_update(kube, image)

    # The incoming start is in the operators' level, waiting on them (they report the release before).
    waiting = f"waiting on {', '.join(sorted(target.operators))}"

    def waiting_on_operators() -> dict[str, Any] | None:
        pods = [p for p in noderelease.start_pods(kube) if p["spec"]["containers"][0]["image"] == image]
        progressing = noderelease.condition(noderelease.clusterversion(kube), "Progressing").get("message", "")
        in_level = progressing.startswith(f"Working towards {target.version}: ") and progressing.endswith(waiting)
        return pods[0] if pods and noderelease.ready(pods[0]) and in_level else None

    first = wait_until(waiting_on_operators, timeout=300, interval=0.5, what=f"{target.version}'s start {waiting}")
    in_level = time.monotonic() - requested

    # 1. The start Pod deleted in the middle of the level: the Deployment's next Pod resumes.
    first_holder = noderelease.lease_holder(kube)
    kube.delete(PODS, first["metadata"]["name"], CVO_NAMESPACE)
    deleted = time.monotonic()
    second = wait_until(
        lambda: next(
            (
                p
                for p in noderelease.start_pods(kube)
                if p["metadata"]["uid"] != first["metadata"]["uid"] and noderelease.ready(p)
            ),
            None,
        ),
        timeout=240,
        interval=1.0,
        what="the next start Pod Ready",
    )
    wait_until(
        lambda: "in state Updating" in log_of(kube, second),
        timeout=120,
        interval=1.0,
        what="the next start resumes the update (Updating)",
    )
    resumed = time.monotonic() - deleted

    holding = wait_until(
        lambda: (found := noderelease.lease_holder(kube)) not in ("", first_holder) and found,
        timeout=120,
        what="the next start holds the Lease",
    )
    # 2. The API server restarted during the pass: it resumes, and no status is lost.
    before_restart = noderelease.clusterversion(kube)
    restart_started = time.monotonic()
    localnode.restart_apiserver(paths)
    restarted = time.monotonic() - restart_started
    after_restart = noderelease.clusterversion(kube)
    # What start wrote before is still there (start may have written more since: the same history,
    # every condition, still working towards the target).
    assert after_restart["status"]["history"] == before_restart["status"]["history"]
    assert after_restart["status"]["history"][1:] == history_before
    types = [c["type"] for c in before_restart["status"]["conditions"]]
    assert [c["type"] for c in after_restart["status"]["conditions"]] == types
    assert noderelease.condition(after_restart, "Progressing")["status"] == "True"
    assert noderelease.condition(after_restart, "Progressing")["message"].startswith(
        f"Working towards {target.version}: "
    ), noderelease.condition(after_restart, "Progressing")
    mark = versions.mark()

    # The operators report the target; the pass goes on to the stuck component's level.
    wait_until(
        lambda: report_operators(kube, target.operators, target.version),
        timeout=180,
        interval=1.0,
        what="the operators report the target",
    )
    # 3. A component that never becomes ready: its operator says so; Failing names it, the level
    # does not complete, and the process goes on. (That the pass got there at all shows that the
    # Pod that took over, which began again at task 1, completed the operators' level.)
    def failing() -> Arrival | None:
        noderelease.report_operator(kube, nodecluster.STUCK, target.version)
        found = [
            a
            for a in versions.events[mark:]
            if noderelease.condition(a.object, "Failing").get("status") == "True"
            and nodecluster.STUCK in noderelease.condition(a.object, "Failing").get("message", "")
        ]
        return found[0] if found else None

    failed = wait_until(failing, timeout=240, interval=1.0, what=f"Failing naming {nodecluster.STUCK}")
    stuck_after = time.monotonic() - requested
    cv = failed.object
    print(f"Failing: {noderelease.condition(cv, 'Failing')['message']}")
    print(f"Progressing: {noderelease.condition(cv, 'Progressing')['message']}")
    assert noderelease.history(cv)[0] == (target.version, "Partial"), noderelease.history(cv)
    progressing = noderelease.condition(cv, "Progressing")
    assert progressing["status"] == "True", progressing
    # Upstream's words for what blocks it: the operator not available, or (once its Deployment's
    # progress deadline passed) the workload that has not rolled out.
    unable = f"Unable to apply {target.version}: the "
    assert progressing["message"].startswith(unable) and nodecluster.STUCK in progressing["message"], progressing
    # The process survives: the same Pod, never restarted, goes on leading (it renews its Lease
    # after the failure) and the update stays where it is.
    renewed = leases.wait_for(
        "start renews its Lease after the failure",
        lambda a: a.at > failed.at and holder(a) == holding,
        timeout=150,
    )
    assert noderelease.history(noderelease.clusterversion(kube))[0] == (target.version, "Partial")
    assert noderelease.condition(noderelease.clusterversion(kube), "Failing")["status"] == "True"
    (pod,) = noderelease.start_pods(kube)
    assert pod["metadata"]["uid"] == second["metadata"]["uid"], "start was replaced"
    assert pod["status"]["containerStatuses"][0].get("restartCount", 0) == 0, pod["status"]["containerStatuses"]
    assert noderelease.lease_holder(kube) == holding, "start lost its Lease"
    show(
        times,
        f"faults on the way to {target.version}",
        {
            "in the operators' level": in_level,
            "resumed after the Pod was deleted": resumed,
            "API server restarted": restarted,
            "Failing names the stuck component": stuck_after,
            "the Lease renewed after the failure": renewed.at - failed.at,
        },
    )

