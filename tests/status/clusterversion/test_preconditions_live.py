"""Upgradeable and the precondition checks on the real API server: a minor update refused while an
admin gate and a ClusterOperator block it (no payload fetched, Progressing unchanged), accepted as soon
as the admin acks and the operator clears, and a forced giant hop recorded in acceptedRisks."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cvo_py.compose.start import ClusterVersionSide
from cvo_py.runtime.kube import CLUSTEROPERATORS, CLUSTERVERSIONS, CONFIGMAPS, EVENTS, ApiError, KubeClient, connect
from payload.release import Release
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import (
    IMG_4141,
    condition,
    create_cv,
    put_admin_acks,
    put_co,
    release_co,
    retrieving_side,
    status_414,
)
from testkit.harness.payload import release_accepted, write_payload
from testkit.harness.wait import wait_until
from testkit.oracles.adm_upgrade import adm_upgrade

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

IMG_4150 = "quay.io/openshift-release-dev/ocp-release@sha256:" + "5" * 64
IMG_4160 = "quay.io/openshift-release-dev/ocp-release@sha256:" + "6" * 64
GATE = "ack-4.14-kube-1.28-api-removals-in-4.15"
GATE_TEXT = "Kubernetes 1.28 removes several beta APIs. See https://access.redhat.com/articles/6958394 first."


@pytest.fixture
def admin_configmaps(kube: KubeClient) -> Iterator[None]:
    put_admin_acks(kube, {GATE: GATE_TEXT}, {})
    yield
    put_admin_acks(kube, {}, {})


def put_blocking_co(kube: KubeClient, name: str, message: str | None) -> None:
    """A release ClusterOperator at 4.14.1 reporting Upgradeable=False with `message` (None: True)."""
    wanted = release_co(name, "4.14.1")
    upgradeable = {"type": "Upgradeable", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    if message is not None:
        upgradeable.update(status="False", reason="Blocked", message=message)
    wanted["status"]["conditions"].append(upgradeable)
    try:
        obj = kube.create(CLUSTEROPERATORS, {"metadata": wanted["metadata"], "spec": {}})
    except ApiError as exc:
        if not exc.is_already_exists():
            raise
        obj = kube.get(CLUSTEROPERATORS, name)
    obj["status"] = wanted["status"]
    kube.replace_status(CLUSTEROPERATORS, obj)


def start_operator(cluster: LocalCluster, namespace: str, payloads: Path, agent: str) -> ClusterVersionSide:
    """`start`'s ClusterVersion side at 4.14.1, retrying a refused target only after a minute (so a
    prompt acceptance shows that a change of what the checks read retried it)."""
    client = connect(cluster.kubeconfig, user_agent=agent)
    running = Release(version="4.14.1", image=IMG_4141)
    return retrieving_side(client, namespace, payloads, running, min_interval=0.0).start()


def events(kube: KubeClient, namespace: str, reason: str) -> list[dict[str, Any]]:
    return list(kube.list(EVENTS, namespace, field_selector=f"reason={reason}").get("items") or [])


def test_a_minor_update_waits_for_the_admin_ack_and_the_operator(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    tmp_path: Path,
    operators: list[ClusterVersionSide],
    admin_configmaps: None,
) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.15"}, status_414())
    put_co(kube, "etcd", "4.14.1")
    put_blocking_co(kube, "storage", "CSI migration of in-tree volumes is pending.")
    write_payload(tmp_path, IMG_4150, "4.15.0")  # already on the node: no version Pod needed
    operators.append(start_operator(cluster, namespace, tmp_path, "cvo-py/preconditions"))

    def upgradeable() -> dict[str, Any] | None:
        found = condition(kube.get(CLUSTERVERSIONS, "version"), "Upgradeable")
        return found if found is not None and found.get("status") == "False" else None

    blocked = wait_until(upgradeable, what="Upgradeable=False")
    assert (blocked["reason"], blocked["message"]) == (
        "MultipleReasons",
        "Cluster should not be upgraded between minor or major versions for multiple reasons:\n"
        f"* {GATE_TEXT}\n* CSI migration of in-tree volumes is pending.",
    )

    kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": {"version": "4.15.0", "image": IMG_4150}}})
    refused = wait_until(
        lambda: (c := release_accepted(kube)).get("reason") == "PreconditionChecks" and c, what="the update refused"
    )
    assert refused["status"] == "False"
    assert refused["message"].startswith(
        f'Preconditions failed for payload loaded version="4.15.0" image="{IMG_4150}": Multiple precondition checks '
        'failed:\n* Precondition "ClusterVersionUpgradeable" failed because of "MultipleReasons": Cluster should '
        "not be upgraded between minor or major versions for multiple reasons:"
    )
    assert '* Precondition "ClusterVersionRecommendedUpdate" failed because of "UnknownUpdate"' in refused["message"]
    cv = kube.get(CLUSTERVERSIONS, "version")
    assert condition(cv, "Progressing")["message"] == "Cluster version is 4.14.1"  # type: ignore[index]
    assert [h["version"] for h in cv["status"]["history"]] == ["4.14.1"]
    assert cv["status"]["desired"]["version"] == "4.14.1"
    [block] = wait_until(lambda: events(kube, namespace, "PreconditionBlock"), what="the PreconditionBlock Event")
    assert (block["type"], block["message"]) == ("Warning", refused["message"])  # as upstream: the same lines
    fetched = [e for e in events(kube, namespace, "RetrievePayload") if IMG_4150 in e["message"]]
    assert fetched == []  # refused before anything was fetched (the running release's own is loaded at start)
    out, _err = adm_upgrade(cv)
    assert "Cluster version is 4.14.1\n\nUpgradeable=False\n\n  Reason: MultipleReasons\n" in out
    assert "ReleaseAccepted=False\n\n  Reason: PreconditionChecks\n  Message: Preconditions failed for" in out
    assert "An upgrade is in progress" not in out

    # The admin acks the gate and the operator clears: accepted at once (not after the minute).
    put_admin_acks(kube, {GATE: GATE_TEXT}, {GATE: "true"})
    put_blocking_co(kube, "storage", None)
    accepted = wait_until(
        lambda: (
            (c := kube.get(CLUSTERVERSIONS, "version"))["status"]["history"][0]["version"] == "4.15.0"
            and release_accepted(kube).get("status") == "True"
            and c
        ),
        timeout=30,
        what="4.15.0 accepted after the ack",
    )
    head = accepted["status"]["history"][0]
    assert head["acceptedRisks"] == (
        'Precondition "ClusterVersionRecommendedUpdate" failed because of "UnknownUpdate": RetrievedUpdates=False (), '
        "so the recommended status of updating from 4.14.1 to 4.15.0 is unknown."
    )
    # Its payload holds nothing to apply: the sync worker's first pass completes it, the accepted
    # risk kept in its entry.
    completed = wait_until(
        lambda: (c := kube.get(CLUSTERVERSIONS, "version"))["status"]["history"][0]["state"] == "Completed" and c,
        what="4.15.0 completed",
    )
    assert completed["status"]["history"][0]["acceptedRisks"] == head["acceptedRisks"]
    assert condition(completed, "Progressing")["message"] == "Cluster version is 4.15.0"  # type: ignore[index]
    [warned] = wait_until(lambda: events(kube, namespace, "PreconditionWarn"), what="the PreconditionWarn Event")
    assert warned["message"] == (
        f'precondition warning for payload loaded version="4.15.0" image="{IMG_4150}": {head["acceptedRisks"]}'
    )
    assert wait_until(lambda: events(kube, namespace, "PreconditionsPassed"), what="the PreconditionsPassed Event")


def test_a_forced_giant_hop_is_accepted_and_its_risks_recorded(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    tmp_path: Path,
    operators: list[ClusterVersionSide],
    admin_configmaps: None,
) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.16"}, status_414())
    put_co(kube, "etcd", "4.14.1")
    write_payload(tmp_path, IMG_4160, "4.16.0")
    operators.append(start_operator(cluster, namespace, tmp_path, "cvo-py/preconditions-forced"))
    wait_until(lambda: condition(kube.get(CLUSTERVERSIONS, "version"), "Upgradeable"), what="the gate seen")
    kube.patch(
        CLUSTERVERSIONS,
        "version",
        {"spec": {"desiredUpdate": {"version": "4.16.0", "image": IMG_4160, "force": True}}},
    )
    cv = wait_until(
        lambda: (c := kube.get(CLUSTERVERSIONS, "version"))["status"]["history"][0]["version"] == "4.16.0" and c,
        what="4.16.0 accepted",
    )
    risks = cv["status"]["history"][0]["acceptedRisks"]
    assert risks.startswith(
        "Forced through blocking failures: Multiple precondition checks failed:\n"
        '* Precondition "ClusterVersionGiantHop" failed because of "MultipleMinorVersionsUpdate": 4.16.0 is more '
        "than one minor version beyond the current target 4.14.1 (4.16 > 4.15), and only updates within the current "
        "minor version or to the next minor version are supported.\n"
        '* Precondition "ClusterVersionUpgradeable" failed because of "RiskNameNotCompatibleWithReasonProperty": '
        f"{GATE_TEXT}\n"
    )
    assert release_accepted(kube)["reason"] == "PayloadLoaded"


def test_a_missing_admin_acks_configmap_blocks_minor_updates_until_it_is_back(
    cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path, operators: list[ClusterVersionSide]
) -> None:
    """As upstream (4.23+): an admin-ack ConfigMap that cannot be read is the risk AdminAckUnknown,
    so Upgradeable=False and a minor update is refused; recreating it lets the update go ahead."""
    kube.delete(CONFIGMAPS, "admin-acks", "openshift-config")
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.15"}, status_414())
    put_co(kube, "etcd", "4.14.1")
    write_payload(tmp_path, IMG_4150, "4.15.0")
    operators.append(start_operator(cluster, namespace, tmp_path, "cvo-py/preconditions-unread"))

    blocked = wait_until(
        lambda: (c := condition(kube.get(CLUSTERVERSIONS, "version"), "Upgradeable")) and c["status"] == "False" and c,
        what="Upgradeable=False")
    message = ('Failed to retrieve ConfigMap admin-acks from namespace openshift-config: configmap "admin-acks" '
               "not found")
    assert (blocked["status"], blocked["reason"], blocked["message"]) == ("False", "AdminAckUnknown", message)
    out, _err = adm_upgrade(kube.get(CLUSTERVERSIONS, "version"))
    assert f"Upgradeable=False\n\n  Reason: AdminAckUnknown\n  Message: {message}\n" in out

    kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": {"version": "4.15.0", "image": IMG_4150}}})
    refused = wait_until(
        lambda: (c := release_accepted(kube)).get("reason") == "PreconditionChecks" and c, what="the update refused"
    )
    assert f'* Precondition "ClusterVersionUpgradeable" failed because of "AdminAckUnknown": {message}\n' in (
        refused["message"] + "\n")

    put_admin_acks(kube, {}, {})  # as install/ creates it
    wait_until(lambda: kube.get(CLUSTERVERSIONS, "version")["status"]["history"][0]["version"] == "4.15.0",
               timeout=30, what="4.15.0 accepted once admin-acks is back")
