"""Leader election on a real Lease: acquire, hand over on release, and never lead without renewing."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from cvo_py.runtime.kube import LEASES, KubeClient
from cvo_py.runtime.leader import LeaderElector, LeaseTimings

# Short enough for a test, long enough that a holder stalled for 10 s (a loaded machine, a paused
# process) still renews within its deadline and a standby stalled as long does not take the Lease.
FAST = LeaseTimings(lease_duration=20.0, renew_deadline=15.0, retry_period=1.0)
# How long a step that needs a few API calls may take on a loaded machine (a bound, not a timing).
LIVENESS = 60


def test_release_hands_the_lease_to_the_standby(kube: KubeClient, namespace: str) -> None:
    first = LeaderElector(kube, namespace, "lock", identity="first", timings=FAST)
    second = LeaderElector(kube, namespace, "lock", identity="second", timings=FAST)
    first_started, second_started = threading.Event(), threading.Event()
    first.start(first_started.set)
    assert first_started.wait(LIVENESS)
    second.start(second_started.set)
    assert not second_started.wait(2 * FAST.retry_period)  # the Lease is held and renewed
    first.release()
    assert second_started.wait(LIVENESS)
    assert kube.get(LEASES, "lock", namespace)["spec"]["holderIdentity"] == "second"
    second.release()


def test_a_failure_after_acquiring_marks_the_leader_lost(kube: KubeClient, namespace: str) -> None:
    elector = LeaderElector(kube, namespace, "lock", identity="broken", timings=FAST)

    def start_controllers() -> None:
        raise RuntimeError("controllers failed to start")

    elector.start(start_controllers)
    assert elector.lost.wait(LIVENESS)
    assert not elector.leading.is_set()


def test_a_holder_whose_clock_is_an_hour_behind_keeps_the_lease_while_it_renews(
    kube: KubeClient, namespace: str
) -> None:
    behind = LeaderElector(
        kube, namespace, "lock", identity="behind", timings=FAST,
        now=lambda: datetime.now(UTC) - timedelta(hours=1),
    )
    standby = LeaderElector(kube, namespace, "lock", identity="standby", timings=FAST)
    behind_started, standby_started = threading.Event(), threading.Event()
    behind.start(behind_started.set)
    assert behind_started.wait(LIVENESS)
    standby.start(standby_started.set)
    # Every renewTime written is an hour old by the standby's clock; the record keeps changing, so
    # the Lease is live past its duration. Judging by renewTime would take it at once.
    assert not standby_started.wait(FAST.lease_duration + 2 * FAST.retry_period)
    assert kube.get(LEASES, "lock", namespace)["spec"]["holderIdentity"] == "behind"
    # The holder dies without handing the Lease back: the standby takes it once it has seen the
    # record unchanged for the lease duration.
    behind._stop.set()  # a crash: renewing stops, the Lease is not handed back
    stopped = time.monotonic()
    assert standby_started.wait(FAST.lease_duration + LIVENESS)
    assert time.monotonic() - stopped >= FAST.lease_duration - FAST.retry_period
    lease = kube.get(LEASES, "lock", namespace)["spec"]
    assert lease["holderIdentity"] == "standby" and lease["leaseTransitions"] == 1
    standby.release()
