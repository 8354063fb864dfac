"""ClusterVersion status writes against the real API server: rollback pruning, other 422s,
conflicts, 100 racing writers, history moving with ClusterOperators."""

from __future__ import annotations

import copy
import logging
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from cvo_py.compose.start import ClusterVersionSide, build_caches, build_clusterversion, build_retrieval
from cvo_py.runtime.kube import CLUSTERVERSIONS, MERGE_PATCH, ApiError, KubeClient, connect
from payload.metrics import PayloadMetrics
from payload.release import Release
from payload.retrieval import RetrieverOptions
from status.clusterversion import desired
from status.clusterversion.controller import ClusterVersionOptions
from status.clusterversion.writer import ClusterVersionStatusWriter, StatusRejected
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import (
    IMG_4141,
    IMG_4142,
    IMG_41310,
    NO_PAYLOAD_ROOT,
    AuditLog,
    ScriptedWorker,
    clusterversion_side,
    condition,
    create_cv,
    nothing_to_apply,
    put_co,
    roll_back_to_413,
    status_414,
)
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")


def client_as(cluster: LocalCluster, agent: str) -> KubeClient:
    return connect(cluster.kubeconfig, user_agent=agent)


def test_rollback_to_413_prunes_rejected_capabilities(
    cluster: LocalCluster,
    kube: KubeClient,
    crds: Any,
    operators: list[ClusterVersionSide],
    caplog: pytest.LogCaptureFixture,
) -> None:
    roll_back_to_413(kube, crds)

    audit = AuditLog(cluster.state["auditLog"])
    agent = f"cvo-py/rollback-{uuid.uuid4().hex[:6]}"
    caplog.set_level(logging.WARNING, logger="status.clusterversion.writer")
    rollback = Release(version="4.13.10", image=IMG_41310)
    worker = ScriptedWorker(rollback)
    worker.report(1, 2, generation=2)  # the rollback's pass under way, on the admin's spec
    side = clusterversion_side(client_as(cluster, agent), rollback, worker)
    operators.append(side.start())
    op = side.controller

    def written() -> dict[str, Any] | None:
        cv = kube.get(CLUSTERVERSIONS, "version")
        return cv if "Console" in cv["status"]["capabilities"]["enabledCapabilities"] else None

    cv = wait_until(written, what="status with Console written")
    # What the API server rejected, then what landed: one 422, then one 200.
    writes = audit.status_writes(agent, at_least=2)
    assert writes[:2] == [("update", 422), ("update", 200)], writes
    assert op.writer.stats.rejections == {"status.capabilities.enabledCapabilities": 4}
    assert op.writer.pruned_state() == {
        "enabledCapabilities": ("Build", "DeploymentConfig", "ImageRegistry", "MachineAPI")
    }
    caps = cv["status"]["capabilities"]
    assert caps["enabledCapabilities"] == ["Console", "baremetal", "marketplace", "openshift-samples"]
    assert caps["knownCapabilities"] == sorted(
        [
            "openshift-samples",
            "baremetal",
            "marketplace",
            "Console",
            "Insights",
            "Storage",
            "CSISnapshot",
            "NodeTuning",
        ]
    )
    pruned = condition(cv, "CapabilitiesPruned")
    assert pruned is not None and pruned["status"] == "True"
    assert "enabledCapabilities Build, DeploymentConfig, ImageRegistry, MachineAPI" in pruned["message"]
    # History and the other conditions are intact and current.
    assert [h["version"] for h in cv["status"]["history"]] == ["4.13.10", "4.14.1"]
    assert cv["status"]["history"][1]["completionTime"] == "2024-01-01T01:00:00Z"
    # Upgradeable is cvo-py's now: the True an older writer left became the rollback in progress.
    upgradeable = condition(cv, "Upgradeable")
    assert upgradeable is not None and (upgradeable["status"], upgradeable["reason"]) == (
        "False",
        "ClusterVersionUpdating",
    )
    assert condition(cv, "Available")["message"] == "Done applying 4.14.1"  # type: ignore[index]
    assert condition(cv, "Progressing")["message"] == "Working towards 4.13.10: 1 of 2 done (50% complete)"  # type: ignore[index]
    assert cv["status"]["observedGeneration"] == cv["metadata"]["generation"]
    # The rejected names are still enabled capabilities (not disabled), as implicitly enabled ones.
    implicit = condition(cv, "ImplicitlyEnabledCapabilities")
    assert implicit is not None and "MachineAPI" in implicit["message"]

    # Status keeps updating: the worker completes a pass and the rollback completes, with no
    # further rejected attempt (the pruned names are remembered).
    worker.report(2, 2, completed=True, generation=2)
    cv = wait_until(
        lambda: (
            (c := kube.get(CLUSTERVERSIONS, "version"))["status"]["history"][0]["state"] == "Completed" and c
        ),
        what="rollback completed",
    )
    assert condition(cv, "Progressing")["message"] == "Cluster version is 4.13.10"  # type: ignore[index]
    assert "MachineAPI" in condition(cv, "ImplicitlyEnabledCapabilities")["message"]  # type: ignore[index]
    assert "MachineAPI" not in cv["status"]["capabilities"]["enabledCapabilities"]
    writes = audit.status_writes(agent)
    assert [code for _, code in writes].count(422) == 1, writes
    # Reported once in the log per name, with its field.
    logged = [r.getMessage() for r in caplog.records if "rejected status.capabilities" in r.getMessage()]
    assert sorted(logged) == sorted(
        f'The ClusterVersion CRD rejected status.capabilities.enabledCapabilities value "{name}"; '
        "leaving it out of status from now on (the capability stays enabled)"
        for name in ("Build", "DeploymentConfig", "ImageRegistry", "MachineAPI")
    )


def test_a_422_that_is_not_about_capabilities_is_an_error(cluster: LocalCluster, kube: KubeClient) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    agent = f"cvo-py/invalid-{uuid.uuid4().hex[:6]}"
    audit = AuditLog(cluster.state["auditLog"])
    writer = ClusterVersionStatusWriter(client_as(cluster, agent))

    def broken(obj: dict[str, Any]) -> dict[str, Any]:
        status: dict[str, Any] = copy.deepcopy(obj["status"])
        del status["history"][0]["image"]  # required by the CRD
        return status

    with pytest.raises(StatusRejected, match=r"status\.history\[0\]\.image: Required value") as caught:
        writer.write(None, broken)
    assert not caught.value.rejection.prunable
    assert audit.status_writes(agent, at_least=1) == [("update", 422)]  # not retried blindly
    assert writer.stats.rejections == {"status.history.image": 1}
    assert writer.stats.failures == 1 and writer.pruned_state() == {}


def test_conflict_rereads_and_keeps_what_others_wrote(cluster: LocalCluster, kube: KubeClient) -> None:
    created = create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    stale = copy.deepcopy(created)
    # Someone else writes a condition after our cache saw the object.
    other = kube.get(CLUSTERVERSIONS, "version")
    other["status"]["conditions"].append(
        {"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": "2024-03-01T00:00:00Z"}
    )
    kube.replace_status(CLUSTERVERSIONS, other)

    agent = f"cvo-py/conflict-{uuid.uuid4().hex[:6]}"
    audit = AuditLog(cluster.state["auditLog"])
    writer = ClusterVersionStatusWriter(client_as(cluster, agent))

    def ours(obj: dict[str, Any]) -> dict[str, Any]:
        status: dict[str, Any] = copy.deepcopy(obj["status"])
        status["versionHash"] = "ours="
        return status

    written = writer.write(stale, ours)
    assert written["status"]["versionHash"] == "ours="
    assert condition(written, "RetrievedUpdates") is not None  # the other writer's field survived
    assert writer.stats.conflicts == 1 and writer.stats.writes == 1
    assert audit.status_writes(agent, at_least=2) == [("update", 409), ("update", 200)]
    # Computing the same status again writes nothing.
    writer.write(written, ours)
    assert writer.stats.unchanged == 1 and len(audit.status_writes(agent)) == 2


def test_deleted_and_recreated_cluster_version_is_not_written_blindly(
    cluster: LocalCluster, kube: KubeClient
) -> None:
    created = create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    kube.delete(CLUSTERVERSIONS, "version")
    wait_until(lambda: not kube.list(CLUSTERVERSIONS)["items"], what="deletion")
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    writer = ClusterVersionStatusWriter(client_as(cluster, "cvo-py/recreated"))
    with pytest.raises(Exception, match="cluster version was deleted and recreated"):
        writer.write(created, lambda obj: {**obj["status"], "versionHash": "x"})


def test_100_concurrent_writers_lose_nothing(
    cluster: LocalCluster, kube: KubeClient, operators: list[ClusterVersionSide]
) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.14"}, status_414())
    put_co(kube, "etcd", "4.14.1")
    running = Release(version="4.14.1", image=IMG_4141)
    side = clusterversion_side(client_as(cluster, "cvo-py/race"), running, min_interval=0.0)
    operators.append(side.start())
    op = side.controller
    wait_until(op.synced.is_set, what="first status sync")

    racer_client = client_as(cluster, "cvo-py/racers")
    errors: list[str] = []
    go = threading.Event()

    def racer(i: int) -> None:
        go.wait()
        try:
            # Half change status (a condition of their own), half change spec (a new generation).
            for _ in range(200):
                cv = racer_client.get(CLUSTERVERSIONS, "version")
                try:
                    if i % 2:
                        cv["status"]["conditions"].append(
                            {
                                "type": f"Racer{i}",
                                "status": "True",
                                "lastTransitionTime": "2024-03-01T00:00:00Z",
                            }
                        )
                        racer_client.replace_status(CLUSTERVERSIONS, cv)
                    else:
                        labels = cv["metadata"].setdefault("labels", {})
                        labels[f"racer-{i}"] = "x"
                        cv["spec"]["channel"] = f"stable-4.14-r{i}"
                        racer_client.replace(CLUSTERVERSIONS, cv)
                    return
                except ApiError as exc:
                    if not exc.is_conflict():
                        raise
            errors.append(f"racer {i} never won")
        except Exception as exc:  # reported below with the racer's number
            errors.append(f"racer {i}: {exc}")

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(100)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join(120)
    assert not errors, errors[:5]

    def settled() -> dict[str, Any] | None:
        cv = kube.get(CLUSTERVERSIONS, "version")
        return cv if cv["status"].get("observedGeneration") == cv["metadata"]["generation"] else None

    cv = wait_until(settled, timeout=60, what="status observing the newest generation")
    types = {c["type"] for c in cv["status"]["conditions"]}
    assert {f"Racer{i}" for i in range(1, 100, 2)} <= types  # no lost field
    assert {"Available", "Progressing", "Failing", "ReleaseAccepted"} <= types  # ours are there
    assert side.syncworker is not None and side.syncworker.local is not None
    assert len(cv["metadata"]["labels"]) == 50 and cv["status"]["versionHash"] == side.syncworker.local.version_hash
    # No lost write: our last computation is what is stored.
    final = desired.desired_status(cv, op.caches.clusteroperators.items(), op.status_inputs(cv), op.now())
    assert final == cv["status"]
    print(
        f"\nwrites={op.writer.stats.writes} conflicts={op.writer.stats.conflicts} unchanged={op.writer.stats.unchanged}"
    )


def test_an_operator_of_a_newer_release_applies_it_and_history_follows_its_passes(
    cluster: LocalCluster, kube: KubeClient, operators: list[ClusterVersionSide], tmp_path: Path
) -> None:
    """`start` of 4.14.2 on a cluster at 4.14.1, the spec asking for no update: as upstream, it
    applies its own release; a Partial entry starts with its worker's first report and turns
    Completed when a pass completes (its payload holds nothing to apply: at once); asking for it
    explicitly changes nothing."""
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    client = client_as(cluster, "cvo-py/history")
    retriever_options = RetrieverOptions(
        namespace="default", node_name="node-0", release_image=IMG_4142, local_payload_dir=NO_PAYLOAD_ROOT
    )
    caches = build_caches(client, "version")
    retrieval = build_retrieval(client, retriever_options, None, PayloadMetrics(), caches.clusterversion)
    running = Release(version="4.14.2", image=IMG_4142)
    side = build_clusterversion(
        client,
        caches,
        ClusterVersionOptions(release=running),
        retrieval=retrieval,
        syncworker=nothing_to_apply(client, running, caches),
    )
    operators.append(side.start())

    def head_is(version: str, state: str) -> dict[str, Any] | None:
        cv = kube.get(CLUSTERVERSIONS, "version")
        head = cv["status"]["history"][0]
        return cv if (head["version"], head["state"]) == (version, state) else None

    cv = wait_until(lambda: head_is("4.14.2", "Completed"), what="Completed 4.14.2")
    assert cv["status"]["desired"]["image"] == IMG_4142
    assert [h["state"] for h in cv["status"]["history"]] == ["Completed", "Completed"]
    assert cv["status"]["history"][0]["completionTime"]
    assert condition(cv, "Available")["message"] == "Done applying 4.14.2"  # type: ignore[index]
    assert condition(cv, "Progressing")["message"] == "Cluster version is 4.14.2"  # type: ignore[index]
    kube.patch(
        CLUSTERVERSIONS,
        "version",
        {"spec": {"desiredUpdate": {"version": "4.14.2", "image": IMG_4142}}},
        content_type=MERGE_PATCH,
    )
    cv = wait_until(
        lambda: (c := kube.get(CLUSTERVERSIONS, "version"))["status"]["observedGeneration"] == 2 and c,
        what="the new generation observed",
    )
    accepted = condition(cv, "ReleaseAccepted")
    assert accepted is not None and (accepted["status"], accepted["reason"]) == ("True", "PayloadLoaded")
    assert len(cv["status"]["history"]) == 2
