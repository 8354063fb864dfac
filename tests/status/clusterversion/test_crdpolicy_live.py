"""Capability names pruned under an older ClusterVersion CRD return once a newer CRD is installed
again (roll-forward), against the real API server; a CRD change that still rejects them prunes
them again within two tries."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import pytest

from cvo_py.compose.start import ClusterVersionSide
from cvo_py.runtime import klog
from cvo_py.runtime.kube import CLUSTERVERSIONS, CRDS, JSON_PATCH, KubeClient, connect
from payload.release import Release
from status.clusterversion.caches import CLUSTERVERSION_CRD
from status.clusterversion.controller import ClusterVersionController
from status.clusterversion.crdpolicy import CRD_SETTLE_RETRIES
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import (
    IMG_41310,
    AuditLog,
    ScriptedWorker,
    clusterversion_side,
    condition,
    roll_back_to_413,
)
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

NEWER = ["Build", "DeploymentConfig", "ImageRegistry", "MachineAPI"]
ENABLED_414 = sorted(["baremetal", "marketplace", "openshift-samples", *NEWER])
FORGET_LOG = "The ClusterVersion CRD clusterversions.config.openshift.io changed"


@pytest.fixture
def verbose(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Run at `-v 2` (where the CRD change is logged) and capture the log."""
    monkeypatch.setattr(klog, "_verbosity", klog.NORMAL)
    caplog.set_level(logging.INFO)
    return caplog


def rolled_back_and_pruned(
    cluster: LocalCluster, kube: KubeClient, crds: Any, operators: list[ClusterVersionSide], agent: str
) -> tuple[ClusterVersionController, AuditLog, ScriptedWorker]:
    """A 4.14 cluster rolled back to 4.13.10: the 4.13 CRD is installed and the 4.13 operator has
    pruned the 4.14 names from status (one 422, then the pruned write); its sync worker (played
    by the test) is half-way through the rollback."""
    roll_back_to_413(kube, crds, ENABLED_414)
    audit = AuditLog(cluster.state["auditLog"])
    client = connect(cluster.kubeconfig, user_agent=agent)
    rollback = Release(version="4.13.10", image=IMG_41310)
    worker = ScriptedWorker(rollback)
    worker.report(1, 2, generation=2)
    side = clusterversion_side(client, rollback, worker)
    operators.append(side.start())
    op = side.controller
    cv = wait_until(
        lambda: (
            (c := kube.get(CLUSTERVERSIONS, "version"))
            and "Console" in c["status"]["capabilities"]["enabledCapabilities"]
            and c
        ),
        what="pruned status with Console written",
    )
    assert cv["status"]["capabilities"]["enabledCapabilities"] == [
        "Console",
        "baremetal",
        "marketplace",
        "openshift-samples",
    ]
    assert (condition(cv, "CapabilitiesPruned") or {}).get("status") == "True"
    assert audit.status_writes(agent, at_least=2)[:2] == [("update", 422), ("update", 200)]
    assert op.writer.pruned_state() == {"enabledCapabilities": tuple(NEWER)}
    # The CRD informer has seen the 4.13 CRD (the revision later changes are compared with).
    wait_until(lambda: op.crd.seen is not None, what="CRD revision seen")
    return op, audit, worker


def test_roll_forward_crd_restores_pruned_capabilities(
    cluster: LocalCluster,
    kube: KubeClient,
    crds: Any,
    operators: list[ClusterVersionSide],
    verbose: pytest.LogCaptureFixture,
) -> None:
    agent = f"cvo-py/roll-forward-{uuid.uuid4().hex[:6]}"
    op, audit, worker = rolled_back_and_pruned(cluster, kube, crds, operators, agent)
    assert not [r for r in verbose.records if FORGET_LOG in r.getMessage()]

    # The newer release's CRD is applied again: its enum knows the 4.14 names.
    crds.install_clusterversion("current")

    def restored() -> dict[str, Any] | None:
        cv = kube.get(CLUSTERVERSIONS, "version")
        enabled = cv["status"]["capabilities"]["enabledCapabilities"]
        return cv if "MachineAPI" in enabled and condition(cv, "CapabilitiesPruned") is None else None

    cv = wait_until(restored, what="pruned names back in status")
    assert cv["status"]["capabilities"]["enabledCapabilities"] == sorted(["Console", *ENABLED_414])
    assert op.writer.pruned_state() == {}
    # Still enabled though the spec does not ask for them: reported as implicitly enabled, as before.
    implicit = condition(cv, "ImplicitlyEnabledCapabilities") or {}
    assert implicit.get("status") == "True" and "MachineAPI" in implicit.get("message", "")
    # The write that restored them landed. The API server may validate with the old schema for a
    # moment after the new CRD is visible, so a write right after the change may be rejected once
    # more; the settle retries bound that: at most one rejection per retry, then no futile writes.
    writes = audit.status_writes(agent, at_least=3)
    assert writes[:2] == [("update", 422), ("update", 200)], writes
    assert writes[-1] == ("update", 200), writes
    assert [code for _, code in writes[2:]].count(422) <= len(CRD_SETTLE_RETRIES), writes
    restored_at = len(writes)
    forgot = [r for r in verbose.records if FORGET_LOG in r.getMessage()]
    assert len(forgot) == 1, [r.getMessage() for r in forgot]
    assert forgot[0].name == "klog" and forgot[0].levelno == logging.INFO
    assert (
        forgot[0]
        .getMessage()
        .endswith(
            "writing the capability names the old schema rejected again: "
            "enabledCapabilities Build, DeploymentConfig, ImageRegistry, MachineAPI"
        )
    )

    # Later syncs keep them and are not rejected.
    worker.report(2, 2, completed=True, generation=2)
    cv = wait_until(
        lambda: (c := kube.get(CLUSTERVERSIONS, "version"))["status"]["history"][0]["state"] == "Completed" and c,
        what="rollback completed",
    )
    assert "MachineAPI" in cv["status"]["capabilities"]["enabledCapabilities"]
    assert condition(cv, "CapabilitiesPruned") is None
    writes = audit.status_writes(agent, at_least=restored_at + 1)
    assert [code for _, code in writes[restored_at:]].count(422) == 0, writes
    assert op.crd.changes == 1


def test_changed_crd_that_still_rejects_prunes_again_within_two_tries(
    cluster: LocalCluster,
    kube: KubeClient,
    crds: Any,
    operators: list[ClusterVersionSide],
    verbose: pytest.LogCaptureFixture,
) -> None:
    agent = f"cvo-py/still-rejected-{uuid.uuid4().hex[:6]}"
    op, audit, _worker = rolled_back_and_pruned(cluster, kube, crds, operators, agent)
    before = kube.get(CRDS, CLUSTERVERSION_CRD)["metadata"]["generation"]
    # A new generation of the 4.13 CRD whose enum is unchanged (only a description differs).
    kube.patch(
        CRDS,
        CLUSTERVERSION_CRD,
        [
            {
                "op": "add",
                "path": "/spec/versions/0/schema/openAPIV3Schema/description",
                "value": "ClusterVersion (4.13 schema, re-applied)",
            }
        ],
        content_type=JSON_PATCH,
    )
    assert kube.get(CRDS, CLUSTERVERSION_CRD)["metadata"]["generation"] == before + 1

    wait_until(lambda: op.crd.changes == 1, what="CRD change seen")
    audit.status_writes(agent, at_least=4)
    wait_until(lambda: op.loop.idle.is_set(), what="sync finished")
    writes = audit.status_writes(agent)
    # Before: rejected, pruned. After the change: rejected again, pruned again: two tries.
    assert writes == [("update", 422), ("update", 200), ("update", 422), ("update", 200)], writes
    cv = kube.get(CLUSTERVERSIONS, "version")
    assert "MachineAPI" not in cv["status"]["capabilities"]["enabledCapabilities"]
    pruned = condition(cv, "CapabilitiesPruned") or {}
    assert pruned.get("status") == "True"
    assert "enabledCapabilities Build, DeploymentConfig, ImageRegistry, MachineAPI" in pruned["message"]
    assert op.writer.pruned_state() == {"enabledCapabilities": tuple(NEWER)}
    assert len([r for r in verbose.records if FORGET_LOG in r.getMessage()]) == 1
