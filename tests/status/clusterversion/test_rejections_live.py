"""Rejected status writes on the real API server: a status too large for one request or for the
storage, and values from outside that the CRD rejects, are left out once and the rest lands; what
cannot be left out is one rejection, not ten retries."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from cvo_py.runtime.kube import CLUSTERVERSIONS, KubeClient, connect
from status.clusterversion import writer as status_writer
from status.clusterversion.writer import ClusterVersionStatusWriter, StatusRejected
from testkit.fakes.update_service import release_digest
from testkit.harness import localcluster
from testkit.harness.cluster import CLUSTERVERSION_CRDS, LocalCluster
from testkit.harness.clusterversion import AuditLog, condition, create_cv, status_414, upstream_update_schema
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

JSON = dict[str, Any]


def writer_as(cluster: LocalCluster, kind: str) -> tuple[ClusterVersionStatusWriter, AuditLog, str]:
    agent = f"cvo-py/{kind}-{uuid.uuid4().hex[:6]}"
    audit = AuditLog(cluster.state["auditLog"])
    return ClusterVersionStatusWriter(connect(cluster.kubeconfig, user_agent=agent)), audit, agent


def releases(count: int, minor: str = "4.15") -> list[JSON]:
    return [{"version": f"{minor}.{i}", "image": release_digest(i)} for i in range(count)]


def with_updates(available: list[JSON], conditional: list[JSON] | None = None) -> Any:
    """A compute that writes these update lists, as retrieved (RetrievedUpdates=True)."""

    def compute(obj: JSON) -> JSON:
        status: JSON = copy.deepcopy(obj["status"])
        status["availableUpdates"] = available
        if conditional is not None:
            status["conditionalUpdates"] = conditional
        status["conditions"] = [c for c in status["conditions"] if c["type"] != "RetrievedUpdates"]
        status["conditions"].append(
            {"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": "2024-03-01T00:00:00Z"}
        )
        return status

    return compute


@pytest.mark.parametrize(
    ("count", "first_answer"),
    [
        (25_000, None),  # over the API server's 3 MiB: not even sent
        (15_000, 500),  # under it, over the storage's limit (the local etcd takes 2 MiB, a default one 1.5 MiB)
    ],
    ids=["over-the-request-limit", "over-the-storage-limit"],
)
def test_a_status_too_large_lands_without_the_update_lists(
    cluster: LocalCluster, kube: KubeClient, count: int, first_answer: int | None
) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    writer, audit, agent = writer_as(cluster, "too-large")
    offered = releases(count)
    assert len(json.dumps(offered)) > (3 if first_answer is None else 2) * 1024 * 1024
    written = writer.write(None, with_updates(offered))

    expected = [("update", 200)] if first_answer is None else [("update", first_answer), ("update", 200)]
    assert audit.status_writes(agent, at_least=len(expected)) == expected  # refused once at most, never retried
    assert written["status"]["availableUpdates"] is None
    retrieved = condition(written, "RetrievedUpdates")
    assert retrieved is not None and (retrieved["status"], retrieved["reason"]) == ("True", "UpdatesOmitted")
    assert f"refused the status as too large, so it holds none of these: {count} availableUpdates" in retrieved[
        "message"
    ]
    assert writer.stats.rejections == {"request": 1}
    # The same lists again are left out at once: nothing is sent that would be refused.
    writer.write(written, with_updates(offered))
    assert audit.status_writes(agent, at_least=len(expected)) == expected
    # Lists that change are tried again; these fit.
    again = writer.write(written, with_updates(offered[:3]))
    assert [r["version"] for r in again["status"]["availableUpdates"]] == ["4.15.0", "4.15.1", "4.15.2"]
    assert "UpdatesOmitted" not in json.dumps(condition(again, "RetrievedUpdates"))


def test_a_status_too_large_with_nothing_to_leave_out_is_one_rejection(
    cluster: LocalCluster, kube: KubeClient
) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    writer, audit, agent = writer_as(cluster, "too-large-own")

    def huge(obj: JSON) -> JSON:
        return {**obj["status"], "versionHash": "x" * (2_500_000)}  # none of it from outside

    with pytest.raises(StatusRejected, match="rejected as too large"):
        writer.write(None, huge)
    assert audit.status_writes(agent, at_least=1) == [("update", 500)]  # not retried ten times as a server error
    with pytest.raises(StatusRejected, match="rejected as too large: Request entity too large: limit is 3145728"):
        writer.write(None, lambda obj: {**obj["status"], "versionHash": "x" * status_writer.MAX_REQUEST_BYTES})
    assert audit.status_writes(agent, at_least=1) == [("update", 500)]  # over the request limit: not sent


def install_upstream_update_schema(cluster: LocalCluster, crds: Any, tmp_path: Path) -> None:
    """openshift/api's schema of conditional updates, stricter than the test CRD's."""
    body = upstream_update_schema(yaml.safe_load(CLUSTERVERSION_CRDS["current"].read_text()))
    path = tmp_path / "clusterversion-upstream-updates.yaml"
    path.write_text(yaml.safe_dump(body))
    localcluster.apply_crd(cluster.handle, path)
    crds.swapped = True  # the fixture puts the test CRD back


def risk(name: str, message: str = "It hurts.") -> JSON:
    return {"name": name, "url": f"https://issues.example.com/{name}", "message": message,
            "matchingRules": [{"type": "Always"}]}


def conditional_update(version: str, *risks: JSON) -> JSON:
    return {
        "release": {"version": version, "image": release_digest(int(version.rsplit(".", 1)[1]))},
        "risks": list(risks),
        "conditions": [{"type": "Recommended", "status": "False", "reason": "ExposedToRisks", "message": "No.",
                        "lastTransitionTime": "2024-03-01T00:00:00Z"}],
    }


def test_values_from_outside_that_the_crd_rejects_are_left_out_and_the_rest_lands(
    cluster: LocalCluster, kube: KubeClient, crds: Any, tmp_path: Path
) -> None:
    install_upstream_update_schema(cluster, crds, tmp_path)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    fine = conditional_update("4.15.3", risk("A"))
    repeated = conditional_update("4.15.2", risk("A"), risk("A"))  # risks are a map keyed by name
    empty = conditional_update("4.15.1", risk("B", message=""))  # a risk's message may not be empty
    offered = [fine, repeated, empty]

    def compute(obj: JSON) -> JSON:
        status = with_updates(releases(2), offered)(obj)
        status["desired"] = {**status["desired"], "channels": ["stable-4.14", "stable-4.14", "fast-4.14"]}
        return status

    wait_until(lambda: _rejects(kube, offered), what="the stricter schema in effect")
    writer, audit, agent = writer_as(cluster, "rejected-values")
    written = writer.write(None, compute)

    assert audit.status_writes(agent, at_least=2) == [("update", 422), ("update", 200)]
    status = written["status"]
    assert [u["release"]["version"] for u in status["conditionalUpdates"]] == ["4.15.3"]
    assert status["desired"]["channels"] == ["stable-4.14", "fast-4.14"]  # a repeat goes, its first stays
    assert [r["version"] for r in status["availableUpdates"]] == ["4.15.0", "4.15.1"]
    assert status["observedGeneration"] == 1 and status["history"] == status_414()["history"]
    retrieved = condition(written, "RetrievedUpdates")
    assert retrieved is not None and (retrieved["status"], retrieved["reason"]) == ("True", "UpdatesOmitted")
    message = retrieved["message"]
    assert "status leaves them out: conditionalUpdates " in message
    assert "4.15.2 (status.conditionalUpdates[1].risks[1]: Duplicate value" in message
    assert "4.15.1 (status.conditionalUpdates[2].risks[0].message: Invalid value" in message
    assert 'desired.channels "stable-4.14" (status.desired.channels[1]: Duplicate value' in message
    assert set(writer.stats.rejections) == {"status.conditionalUpdates", "status.desired.channels"}

    # Remembered: the same values are left out at once, with no further rejection.
    writer.write(written, compute)
    assert [code for _, code in audit.status_writes(agent)].count(422) == 1
    # A value that changes is offered again: the update with a message now lands.
    empty["risks"][0]["message"] = "Now it says why."
    again = writer.write(written, compute)
    assert [u["release"]["version"] for u in again["status"]["conditionalUpdates"]] == ["4.15.3", "4.15.1"]
    assert [code for _, code in audit.status_writes(agent, at_least=3)] == [422, 200, 200]


def _rejects(kube: KubeClient, conditional: list[JSON]) -> bool:
    """Whether the API server now validates conditional updates with the stricter schema (dry run)."""
    from cvo_py.runtime.kube import ApiError

    cv = kube.get(CLUSTERVERSIONS, "version")
    cv["status"]["conditionalUpdates"] = conditional
    try:
        kube.request("PUT", CLUSTERVERSIONS.path(name="version", subresource="status"), query={"dryRun": "All"},
                     body=cv)
    except ApiError as exc:
        return exc.status == 422
    return False


def test_more_than_500_risk_names_are_left_out_with_their_updates_and_the_rest_lands(
    cluster: LocalCluster, kube: KubeClient
) -> None:
    """The CRD takes at most 500 items in status.conditionalUpdateRisks (the ClusterUpdateAcceptRisks
    gate): a status with 501 is refused with `Too many: 501: must have at most 500 items`, which
    upstream cannot get past. cvo-py leaves out the updates past 500 names, oldest first, with the
    risks only they name, says so, and the write lands in two tries."""
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    writer, audit, agent = writer_as(cluster, "risk-names")
    # Three updates, newest first: 200 risks each, the oldest adding 101 names of its own.
    updates = [conditional_update(f"4.15.{9 - i}", *(risk(f"U{i}R{j}") for j in range(200))) for i in range(2)]
    updates.append(conditional_update("4.15.5", risk("U0R0"), *(risk(f"U2R{j}") for j in range(101))))
    names = sorted({r["name"] for u in updates for r in u["risks"]})
    assert len(names) == 501

    def compute(obj: JSON) -> JSON:
        status = with_updates(releases(1), updates)(obj)
        for update in status["conditionalUpdates"]:
            update["riskNames"] = sorted(r["name"] for r in update["risks"])
        status["conditionalUpdateRisks"] = [risk(n) for n in names]
        return status

    written = writer.write(None, compute)
    assert audit.status_writes(agent, at_least=2) == [("update", 422), ("update", 200)]
    status = written["status"]
    assert [u["release"]["version"] for u in status["conditionalUpdates"]] == ["4.15.9", "4.15.8"]
    assert len(status["conditionalUpdateRisks"]) == 400
    kept_names = {r["name"] for u in updates[:2] for r in u["risks"]}
    assert {r["name"] for r in status["conditionalUpdateRisks"]} == kept_names
    retrieved = condition(written, "RetrievedUpdates")
    assert retrieved is not None and (retrieved["status"], retrieved["reason"]) == ("True", "UpdatesOmitted")
    assert ("conditionalUpdates 4.15.5 (status.conditionalUpdateRisks: Too many: 501: must have at most 500 items)"
            in retrieved["message"])
    # Counted per value left out: the update and the 101 risks only it names.
    assert writer.stats.rejections == {"status.conditionalUpdates": 1, "status.conditionalUpdateRisks": 101}
    writer.write(written, compute)  # remembered: left out at once
    assert [code for _, code in audit.status_writes(agent)].count(422) == 1
