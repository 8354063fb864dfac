"""What an admin reads, `oc adm upgrade` and `upgrade-status`, for the statuses cvo-py writes:
Upgradeable=False, a minor update refused by the precondition checks, the same update forced, and
an operator slow inside and past its grace period. Run with `-s` to see every output in full."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.gotext.times import metav1_time
from payload.acceptance import payload_loaded, precondition_blocked
from payload.release import Acceptance, Release
from status.clusterversion import desired as cs
from status.clusterversion import preconditions
from status.clusterversion.progress import WorkerState
from status.clusterversion.upgradeable import ConfigMapRead
from syncworker.errors import TaskRef
from syncworker.modes import Mode
from syncworker.operators import check
from testkit.harness.clusterversion import release_co, worker_state
from testkit.oracles.adm_upgrade import adm_upgrade, write_snapshot
from updateservice.poller import UpdatesState, updates_status
from updateservice.retrieval import succeeded

T = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
IMG = "quay.io/openshift-release-dev/ocp-release@sha256:"
RUNNING = Release("4.14.1", IMG + "1" * 64)
MINOR = Release("4.15.0", IMG + "5" * 64)
PATCH = Release("4.14.2", IMG + "2" * 64)
GATE = "ack-4.14-kube-1.28-api-removals-in-4.15"
GATE_TEXT = "Kubernetes 1.28 removes several beta APIs. See https://access.redhat.com/articles/6958394 first."
SPEC = {"clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13", "channel": "stable-4.15"}


def blocked_storage() -> dict[str, Any]:
    co = release_co("storage", "4.14.1")
    co["status"]["conditions"].append(
        {
            "type": "Upgradeable",
            "status": "False",
            "reason": "CSIMigration",
            "message": "CSI migration of in-tree volumes is pending.",
            "lastTransitionTime": metav1_time(T - timedelta(hours=2)),
        }
    )
    return co


def cv(status: dict[str, Any] | None, **spec: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "version", "generation": 1}, "spec": {**SPEC, **spec}}
    if status is not None:
        obj["status"] = status
    return obj


# The update service's answer at 4.14.1 in stable-4.15: only the patch update is recommended.
UPDATES = updates_status(
    UpdatesState("", "stable-4.15", succeeded(), available=({"version": PATCH.version, "image": PATCH.image},)),
    SPEC,
)


def inputs(
    acceptance: Acceptance | None = None, acked: bool = False, worker: WorkerState | None = None
) -> cs.StatusInputs:
    """The sync worker has applied the running release, unless `worker` says otherwise."""
    return cs.StatusInputs(
        RUNNING,
        acceptance,
        updates=UPDATES,
        admin_gates=ConfigMapRead({GATE: GATE_TEXT}),
        admin_acks=ConfigMapRead({GATE: "true"} if acked else {}),
        worker=worker or worker_state(RUNNING, completed=True, mode=Mode.RECONCILING),
    )


def installed(operators: list[dict[str, Any]]) -> dict[str, Any]:
    return cs.desired_status(cv(None), operators, inputs(acked=True), T - timedelta(days=1))


def upgrade_status(tmp_path: Path, obj: dict[str, Any], operators: list[dict[str, Any]], now: datetime) -> str:
    """`cluster-version-operator upgrade-status` on a snapshot of these objects, at `now`."""
    path = write_snapshot(tmp_path, obj, operators)
    proc = subprocess.run(
        [sys.executable, "-m", "cvo_py", "upgrade-status", "--mock-clusterversion", str(path), "--now",
         metav1_time(now)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def show(
    title: str, obj: dict[str, Any], tmp_path: Path, operators: list[dict[str, Any]], now: datetime
) -> tuple[str, str]:
    out, err = adm_upgrade(obj)
    status = upgrade_status(tmp_path / title.replace(" ", "-"), obj, operators, now)
    print(f"\n===== {title}: oc adm upgrade\n{out}{err}===== {title}: upgrade-status\n{status}")
    return out + err, status


# -- Upgradeable=False, and a minor update refused ----------------------------------------------------


def test_upgradeable_false_then_a_refused_and_a_forced_minor_update(tmp_path: Path) -> None:
    operators = [release_co("etcd", "4.14.1"), release_co("dns", "4.14.1"), blocked_storage()]
    steady = cs.desired_status(cv(installed(operators)), operators, inputs(), T)
    out, status = show("Upgradeable=False", cv(steady), tmp_path, operators, T)
    assert out == (
        "Cluster version is 4.14.1\n\n"
        "Upgradeable=False\n\n"
        "  Reason: MultipleReasons\n"
        "  Message: Cluster should not be upgraded between minor or major versions for multiple reasons:\n"
        f"  * {GATE_TEXT}\n"
        "  * CSI migration of in-tree volumes is pending.\n\n"
        "Upstream is unset, so the cluster will use an appropriate default.\n"
        "Channel: stable-4.15\n\n"
        "Recommended updates:\n\n"
        "  VERSION     IMAGE\n"
        f"  4.14.2      {PATCH.image}\n"
    )
    assert status == "The cluster is not updating.\n"

    # oc adm upgrade --to=4.15.0: the checks run on what the cluster says now, and refuse it.
    asked = cv(steady, desiredUpdate={"version": MINOR.version, "image": MINOR.image})
    found = preconditions.run(cs.precondition_view(asked, operators, inputs()), MINOR.version)
    summary = preconditions.summarize(found, force=False)
    assert summary.blocked
    refused = Acceptance(MINOR, precondition_blocked(MINOR.version, MINOR.image, summary.message))
    blocked = cs.desired_status(asked, operators, inputs(refused), T + timedelta(minutes=1))
    out, status = show("a refused minor update", {**asked, "status": blocked}, tmp_path, operators, T)
    assert out.startswith("Cluster version is 4.14.1\n\nUpgradeable=False\n\n  Reason: MultipleReasons\n")
    assert (
        "ReleaseAccepted=False\n\n"
        "  Reason: PreconditionChecks\n"
        f'  Message: Preconditions failed for payload loaded version="4.15.0" image="{MINOR.image}": Multiple '
        "precondition checks failed:\n"
        '  * Precondition "ClusterVersionUpgradeable" failed because of "MultipleReasons": Cluster should not be '
        "upgraded between minor or major versions for multiple reasons:\n"
        f"  * {GATE_TEXT}\n"
        "  * CSI migration of in-tree volumes is pending.\n"
        '  * Precondition "ClusterVersionRecommendedUpdate" failed because of "UnknownUpdate": RetrievedUpdates=True '
        "(), so the update from 4.14.1 to 4.15.0 is probably neither recommended nor supported.\n\n"
    ) in out
    assert "An upgrade is in progress" not in out
    assert blocked["history"] == steady["history"] and blocked["desired"] == steady["desired"]
    assert status == "The cluster is not updating.\n"

    # oc adm upgrade --to=4.15.0 --force: the same failures, waived and recorded.
    forced_summary = preconditions.summarize(found, force=True)
    assert not forced_summary.blocked
    accepted = Acceptance(MINOR, payload_loaded(MINOR.version, MINOR.image, "amd64"), True, forced_summary.message)
    forced_cv = cv(blocked, desiredUpdate={"version": MINOR.version, "image": MINOR.image, "force": True})
    forced = cs.desired_status(
        forced_cv, operators, inputs(accepted, worker=worker_state(MINOR, done=0)), T + timedelta(minutes=2)
    )
    assert (
        forced["history"][0]["acceptedRisks"] == ("Forced through blocking failures: " + summary.message)
        and forced["history"][0]["version"] == "4.15.0"
    )
    out, status = show(
        "a forced minor update", {**forced_cv, "status": forced}, tmp_path, operators, T + timedelta(minutes=3)
    )
    assert out.startswith(
        "info: An upgrade is in progress. Working towards 4.15.0\n\n"
        "Upgradeable=False\n\n"
        "  Reason: MultipleReasons\n"
        "  Message: Cluster should not be upgraded between minor or major versions for multiple reasons:\n"
        "  * An update is already in progress and the details are in the Progressing condition.\n"
    )
    assert "ReleaseAccepted" not in out
    assert "Target Version:  4.15.0 (from 4.14.1)" in status


# -- a slow operator ---------------------------------------------------------------------------------


@pytest.mark.parametrize("minutes", [29, 31], ids=["inside the grace period", "past the grace period"])
def test_an_operator_slow_inside_and_past_its_grace_period(tmp_path: Path, minutes: int) -> None:
    before = [release_co("etcd", "4.14.1"), release_co("dns", "4.14.1")]
    accepted = Acceptance(PATCH, payload_loaded(PATCH.version, PATCH.image, "amd64"), True)
    asked = cv(installed(before), desiredUpdate={"version": PATCH.version, "image": PATCH.image})
    # The update begins at T: the worker's first report of 4.14.2.
    started = cs.desired_status(asked, before, inputs(accepted, acked=True, worker=worker_state(PATCH)), T)
    operators = [
        release_co("etcd", "4.14.2", since=metav1_time(T + timedelta(minutes=5))),
        release_co("dns", "4.14.1", progressing="True", since=metav1_time(T)),
    ]
    now = T + timedelta(minutes=minutes)
    # Its pass stopped at dns, 1 of 2 done, and status has waited on dns since T.
    dns = {"metadata": {"name": "dns"}, "status": {"versions": [{"name": "operator", "version": "4.14.2"}]}}
    waiting = check(dns, operators[1], Mode.UPDATING, TaskRef("ClusterOperator", "", "dns", 2, 2))
    report = worker_state(PATCH, done=1, total=2).report
    assert report is not None and waiting is not None
    state = WorkerState(dataclasses.replace(report, failure=waiting), since={"dns": T})
    status = cs.desired_status({**asked, "status": started}, operators, inputs(accepted, True, state), now)
    out, view = show(f"dns working for {minutes} minutes", {**asked, "status": status}, tmp_path, operators, now)
    working = "Working towards 4.14.2: 1 of 2 done (50% complete), waiting on dns"
    if minutes < 30:
        assert out.startswith(f"info: An upgrade is in progress. {working}\n\n")
        assert "Update Health" not in view or "SlowClusterOperator" not in view
    else:
        slow = "waiting on dns over 30 minutes which is longer than expected"
        assert out.startswith(
            "Failing=Unknown:\n\n"
            "  Reason: SlowClusterOperator\n"
            f"  Message: {slow}\n\n"
            f"info: An upgrade is in progress. Working towards 4.14.2: 1 of 2 done (50% complete), {slow}\n\n"
        )
        assert "Cluster Version version may be failing to proceed with the update (SlowClusterOperator)" in view
    assert "Target Version:  4.14.2 (from 4.14.1)" in view
