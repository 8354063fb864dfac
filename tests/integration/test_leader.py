"""Leader election on a real Lease: acquire, hand over on release, and never lead without renewing."""

from __future__ import annotations

import threading

from cvo_py.kube import LEASES, KubeClient
from cvo_py.leader import LeaderElector, LeaseTimings

FAST = LeaseTimings(lease_duration=3.0, renew_deadline=2.0, retry_period=0.2)


def test_release_hands_the_lease_to_the_standby(kube: KubeClient, namespace: str) -> None:
    first = LeaderElector(kube, namespace, "lock", identity="first", timings=FAST)
    second = LeaderElector(kube, namespace, "lock", identity="second", timings=FAST)
    first_started, second_started = threading.Event(), threading.Event()
    first.start(first_started.set)
    assert first_started.wait(10)
    second.start(second_started.set)
    assert not second_started.wait(0.5)  # the Lease is held and renewed
    first.release()
    assert second_started.wait(10)
    assert kube.get(LEASES, "lock", namespace)["spec"]["holderIdentity"] == "second"
    second.release()


def test_a_failure_after_acquiring_marks_the_leader_lost(kube: KubeClient, namespace: str) -> None:
    elector = LeaderElector(kube, namespace, "lock", identity="broken", timings=FAST)

    def start_controllers() -> None:
        raise RuntimeError("controllers failed to start")

    elector.start(start_controllers)
    assert elector.lost.wait(10)
    assert not elector.leading.is_set()
