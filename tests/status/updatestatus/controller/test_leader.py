"""Leader election with two replicas: only the Lease holder writes; when it dies, the other takes over."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from cvo_py.runtime.kube import LEASES, KubeClient
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster

# Short timings so a takeover happens within seconds (the defaults are library-go's 137/107/26 s),
# long enough that a replica stalled for 10 s (a loaded machine) keeps its Lease and its standby
# waits: the test's leader stays the leader until the test kills it.
FAST_LEASE = (
    "--leader-elect-lease-duration=20",
    "--leader-elect-renew-deadline=15",
    "--leader-elect-retry-period=1",
)


def test_one_replica_writes_and_the_other_takes_over(
    cluster: LocalCluster, kube: KubeClient, namespace: str, clusterversion_cleanup: None, tmp_path: Path,
    controller_kubeconfig: str,
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, "4.15.8", now - timedelta(days=1))
    h.create_configmap(kube, namespace)
    a = h.ControllerProcess(controller_kubeconfig, namespace, tmp_path / "a.log", *FAST_LEASE)
    b = h.ControllerProcess(controller_kubeconfig, namespace, tmp_path / "b.log", *FAST_LEASE)
    try:
        h.wait_for("a leader", lambda: "successfully acquired lease" in a.log() + b.log())
        leader, standby = (a, b) if "successfully acquired lease" in a.log() else (b, a)
        h.wait_for(
            "the leader's first write",
            lambda: leader.metric("update_status_controller_configmap_writes_total"),
        )
        holder = kube.get(LEASES, h.LEASE, namespace)["spec"]["holderIdentity"]
        print(f"\nleader {holder}; standby waiting")
        standby.wait_for_log(r"attempting to acquire leader lease")
        assert "Update status controller started" not in standby.log()
        assert standby.metric("update_status_controller_configmap_writes_total") == 0

        # Change something while both run: only the leader writes it.
        h.start_update(kube, "4.16.0", now)
        h.wait_for(
            "Updating=True from the leader",
            lambda: (
                h.condition(h.insight(h.configmap_data(kube, namespace), "usc-cv-version"), "Updating")[
                    "status"
                ]
                == "True"
            ),
        )
        assert standby.metric("update_status_controller_configmap_writes_total") == 0

        # The leader dies without handing the Lease back; the standby takes it once it expires.
        leader.kill()
        h.finish_update(kube, now + timedelta(minutes=50))
        standby.wait_for_log("successfully acquired lease", timeout=90)
        h.wait_for(
            "Updating=False from the new leader",
            lambda: (
                h.condition(h.insight(h.configmap_data(kube, namespace), "usc-cv-version"), "Updating")[
                    "status"
                ]
                == "False"
            ),
        )
        new_holder = kube.get(LEASES, h.LEASE, namespace)["spec"]["holderIdentity"]
        assert new_holder != holder
        assert standby.metric("update_status_controller_configmap_writes_total") >= 1
        print(f"after killing the leader, {new_holder} took over and published the completed update")
    finally:
        a.stop()
        b.stop()
