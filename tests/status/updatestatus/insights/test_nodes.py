"""Node and MachineConfigPool insights, rule by rule: pool matching, flags, phase, estimate, message,
unavailability, thresholds from the injected now, pool counters and assessment, node/pool health."""

from __future__ import annotations

from typing import Any

import pytest

from cvo_py.runtime.gotext.durations import MINUTE
from status.updatestatus.insights import compute
from status.updatestatus.insights.kinds import (
    ConditionStatus,
    HealthInsightShape,
    ImpactLevel,
    ImpactType,
    NodeInsightShape,
    NodeSummaryType,
    PoolAssessment,
    PoolInsightShape,
    ScopeType,
    find_condition,
)
from status.updatestatus.insights.membership import PoolIndex
from status.updatestatus.insights.plain import HealthInsight, MachineConfigPoolStatusInsight, NodeStatusInsight
from testkit.objects.insight_objects import MCO, VERSIONS, at, clusterversion, cond, node, ns, pool

POOLS = [pool("master"), pool("worker")]


def run(
    node_list: list[dict[str, Any]],
    pools: list[dict[str, Any]] | None = None,
    now: int | None = None,
    cv: dict[str, Any] | None = None,
) -> list[Any]:
    return compute.node_insights(
        node_list, pools or POOLS, VERSIONS, now if now is not None else ns(1), cv=cv or clusterversion()
    )


def one(n: dict[str, Any], **kw: Any) -> NodeStatusInsight:
    found = [i for i in run([n], **kw) if isinstance(i, NodeInsightShape)]
    assert len(found) == 1
    return found[0]


def updating(n: NodeStatusInsight) -> tuple[str, str]:
    c = find_condition(n.conditions, "Updating")
    assert c is not None
    return c.status.value, c.reason


# --- pool membership ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "labels,want",
    [
        ({"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/worker": ""}, "master"),
        ({"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/infra": ""}, "infra"),
        ({"node-role.kubernetes.io/worker": "", "gpu": ""}, "gpu"),
        ({"node-role.kubernetes.io/infra": "", "gpu": ""}, "infra"),  # two custom pools: first in list order
        ({"node-role.kubernetes.io/worker": ""}, "worker"),
        ({"other": ""}, None),
    ],
)
def test_pool_matching_order(labels: dict[str, str], want: str | None) -> None:
    pools = [pool("worker"), pool("infra"), pool("gpu", label="gpu"), pool("master")]
    found = PoolIndex(pools).match(labels)
    assert (found[1]["metadata"]["name"] if found else None) == want


def test_nodes_outside_every_pool_are_ignored() -> None:
    out = run([node("lost", labels={"other": ""}), node("w1")])
    assert [i.name for i in out if isinstance(i, NodeInsightShape)] == ["w1"]


# --- phase, estimate, message ------------------------------------------------------------------

NEW, OLD = "rendered-worker-new", "rendered-worker-old"
NO_DRAIN = {MCO + "desiredDrain": "", MCO + "lastAppliedDrain": ""}


@pytest.mark.parametrize(
    "kwargs,pool_paused,status,reason,est",
    [
        ({"current": NEW}, False, "False", "Completed", 0),
        ({}, False, "False", "Pending", None),
        ({}, True, "False", "Paused", 0),
        ({"desired": NEW, "state": "Working"}, False, "True", "Updating", 5 * MINUTE),
        ({"desired": NEW, "state": ""}, False, "True", "Updating", 5 * MINUTE),
        ({"desired": NEW, "state": "Rebooting"}, False, "True", "Rebooting", 5 * MINUTE),
        (
            {"desired": NEW, "state": "Working", "desired_drain": f"drain-{NEW}"},
            False,
            "True",
            "Draining",
            10 * MINUTE,
        ),
        # MCD says Done but the node does not run the target: oc prints Updated, yet it is not updated
        (
            {"desired": NEW, "state": "Done", "extra_annotations": NO_DRAIN},
            False,
            "Unknown",
            "CannotDetermine",
            0,
        ),
        # desired config is not the pool's target: not updating
        ({"desired": "rendered-worker-other", "state": "Working"}, False, "False", "Pending", None),
    ],
)
def test_phase_and_estimate(
    kwargs: dict[str, Any], pool_paused: bool, status: str, reason: str, est: int | None
) -> None:
    pools = [pool("master"), pool("worker", paused=pool_paused)]
    n = one(node("w1", **kwargs), pools=pools)
    assert updating(n) == (status, reason)
    assert n.est_to_complete == est


def test_draining_while_done_counts_as_draining() -> None:
    n = one(node("w1", desired=NEW, state="Done", desired_drain=f"uncordon-{NEW}", last_drain=f"uncordon-{OLD}"))
    assert updating(n) == ("True", "Draining")


def test_version_is_the_current_machineconfigs_release() -> None:
    assert one(node("w1")).version == "4.14.0"
    assert one(node("w1", current="rendered-unknown")).version == ""


def test_no_history_means_no_node_is_updated() -> None:
    n = one(node("w1", current=NEW), cv=clusterversion(history=[]))
    assert updating(n) == ("False", "Pending")


def test_multi_arch_migration_requires_the_pool_target() -> None:
    history = [
        {"version": "4.14.1", "state": "Partial", "startedTime": at(0), "image": "multi"},
        {
            "version": "4.14.1",
            "state": "Completed",
            "startedTime": at(-60),
            "completionTime": at(-1),
            "image": "amd",
        },
    ]
    cv = clusterversion(history)
    stale = one(node("w1", current=NEW, desired="rendered-worker-old"), cv=cv)
    assert updating(stale) == ("False", "Pending")
    done = one(node("w1", current=NEW, desired=NEW), cv=cv)
    assert updating(done) == ("False", "Completed")


def test_degraded_node_message_and_estimate() -> None:
    reason = "failed to drain node: w1-long-name after 1 hour"
    n = one(node("w1-long-name", desired=NEW, state="Degraded", reason=reason))
    degraded = find_condition(n.conditions, "Degraded")
    assert degraded is not None and (degraded.status, degraded.reason, degraded.message) == (
        ConditionStatus.TRUE,
        "Degraded",
        reason,
    )
    assert n.est_to_complete is None and n.message == reason


def test_long_messages_are_shortened_in_the_message_field_only() -> None:
    reason = "x" * 300
    n = one(node("w1", desired=NEW, state="Unreconcilable", reason=reason))
    assert len(n.message) == 100 and n.message.endswith("…")
    degraded = find_condition(n.conditions, "Degraded")
    assert degraded is not None and degraded.message == reason  # the full text stays in the condition


# --- unavailability ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,reasons,tokens",
    [
        ({"ready": "False"}, "Not ready", "NotReady"),
        ({"extra_conditions": [cond("DiskPressure", "True")]}, "Disk pressure", "DiskPressure"),
        (
            {"extra_conditions": [cond("NetworkUnavailable", "Unknown")]},
            "Network unavailable",
            "NetworkUnavailable",
        ),
        ({"unschedulable": True}, "Node is marked unschedulable", "Unschedulable"),
        (
            {"ready": "False", "unschedulable": True},
            "Not ready | Node is marked unschedulable",
            "NotReady,Unschedulable",
        ),
        (
            {"state": "Working"},
            "Machine Config Daemon is processing the node",
            "MachineConfigDaemonProcessing",
        ),
        (
            {"current": OLD, "desired": "rendered-worker-x"},
            "Machine Config Daemon is processing the node",
            "MachineConfigDaemonProcessing",
        ),
    ],
)
def test_unavailable_reasons(kwargs: dict[str, Any], reasons: str, tokens: str) -> None:
    n = one(node("w1", **kwargs))
    available = find_condition(n.conditions, "Available")
    assert available is not None
    assert (available.status, available.reason, available.message) == (ConditionStatus.FALSE, tokens, reasons)
    assert n.message == reasons and n.est_to_complete is None


@pytest.mark.parametrize("state", ["Degraded", "Unreconcilable"])
def test_degraded_mcd_state_alone_is_not_unavailable(state: str) -> None:
    n = one(node("w1", state=state, reason="r"))
    available = find_condition(n.conditions, "Available")
    assert available is not None and available.status == ConditionStatus.TRUE


@pytest.mark.parametrize(
    "images,unavailable",
    [
        ({MCO + "currentImage": "a", MCO + "desiredImage": "a"}, False),  # done
        ({MCO + "currentImage": "a", MCO + "desiredImage": ""}, True),  # image not done: MCD processing
        # not a layered pool, so a node with a desired image does not count against it
        ({MCO + "currentImage": "a", MCO + "desiredImage": "b"}, False),
    ],
)
def test_images_must_be_done_too(images: dict[str, str], unavailable: bool) -> None:
    n = one(node("w1", extra_annotations=images))
    available = find_condition(n.conditions, "Available")
    assert available is not None and (available.status == ConditionStatus.FALSE) is unavailable


def test_layered_pool_requires_the_pools_image() -> None:
    layered = pool(
        "worker",
        labels={MCO + "layering-enabled": ""},
        annotations={MCO + "newestImageEquivalentConfig": "img"},
    )
    ok = one(
        node("w1", state="Working", extra_annotations={MCO + "desiredImage": "img"}),
        pools=[pool("master"), layered],
    )
    wrong = one(
        node("w1", state="Working", extra_annotations={MCO + "desiredImage": "other"}),
        pools=[pool("master"), layered],
    )
    assert find_condition(ok.conditions, "Available").status == ConditionStatus.FALSE  # type: ignore[union-attr]
    assert find_condition(wrong.conditions, "Available").status == ConditionStatus.TRUE  # type: ignore[union-attr]


def test_updating_unavailable_node_keeps_its_message_empty() -> None:
    n = one(node("w1", desired=NEW, state="Working", desired_drain=f"drain-{NEW}", unschedulable=True))
    assert updating(n) == ("True", "Draining") and n.message == "" and n.est_to_complete == 10 * MINUTE
    available = find_condition(n.conditions, "Available")
    assert available is not None and available.status == ConditionStatus.FALSE


# --- health: thresholds measured from the injected now -----------------------------------------


def health_of(
    node_list: list[dict[str, Any]], now: int, pools: list[dict[str, Any]] | None = None
) -> list[HealthInsight]:
    return [i for i in run(node_list, pools=pools, now=now) if isinstance(i, HealthInsightShape)]


@pytest.mark.parametrize(
    "kwargs,minutes,raised",
    [
        ({"ready": "False", "ready_ltt": at(0)}, 4.99, False),
        ({"ready": "False", "ready_ltt": at(0)}, 5, True),
        ({"extra_conditions": [cond("DiskPressure", "True", at(0))]}, 0.99, False),
        ({"extra_conditions": [cond("DiskPressure", "True", at(0))]}, 1, True),
        ({"unschedulable": True}, 600, False),  # never serious
        ({"state": "Working"}, 600, False),  # MCD processing: never serious
    ],
)
def test_seriously_unavailable_thresholds(kwargs: dict[str, Any], minutes: float, raised: bool) -> None:
    found = health_of([node("worker-node-1", **kwargs)], ns(minutes))
    assert [h.impact.type for h in found] == ([ImpactType.UPDATE_SPEED] if raised else [])


def test_unavailable_node_insight_texts() -> None:
    n = node("worker-node-1", ready="False", ready_ltt=at(0), unschedulable=True)
    (h,) = health_of([n], ns(30))
    assert h.impact.summary == "Node worker-node-1 is not ready | Node is marked unschedulable"
    assert h.impact.description == (
        'Node has a Ready!=True condition with Reason "Not ready" and message "kubelet msg" | '
        "Node is marked unschedulable"
    )
    assert (h.started_at, h.impact.level, h.scope.type) == (ns(0), ImpactLevel.WARNING, ScopeType.WORKER_POOL)
    assert [(r.resource, r.name) for r in h.scope.resources] == [("nodes", "worker-node-1")]


def test_degraded_node_insight() -> None:
    n = node("m1", role="master", desired="rendered-master-new", state="Degraded", reason="boom")
    (h,) = health_of([n], ns(1))
    assert (h.impact.summary, h.impact.description, h.impact.level) == (
        "Node m1 is degraded",
        "boom",
        ImpactLevel.ERROR,
    )
    assert h.scope.type == ScopeType.CONTROL_PLANE and h.started_at < ns(-(10**6))  # zero time: "since" unknown


def test_degraded_node_with_empty_reason_has_no_insight() -> None:
    assert health_of([node("m1", desired=NEW, state="Degraded", reason="")], ns(1)) == []


# --- pools -------------------------------------------------------------------------------------


def pool_of(
    node_list: list[dict[str, Any]], name: str = "worker", paused: bool = False
) -> MachineConfigPoolStatusInsight:
    pools = [pool("master"), pool("worker", paused=paused)]
    found = [i for i in run(node_list, pools=pools) if isinstance(i, PoolInsightShape) and i.name == name]
    return found[0]


def counts(p: MachineConfigPoolStatusInsight) -> dict[str, int]:
    return {s.type.value: s.count for s in p.summaries}


@pytest.mark.parametrize(
    "node_list,paused,assessment,completion",
    [
        ([], False, PoolAssessment.COMPLETED, 100),
        ([node("a", current=NEW), node("b", current=NEW)], False, PoolAssessment.COMPLETED, 100),
        ([node("a"), node("b")], False, PoolAssessment.PENDING, 0),
        (
            [node("a", current=NEW), node("b", desired=NEW, state="Degraded", reason="r")],
            False,
            PoolAssessment.DEGRADED,
            50,
        ),
        ([node("a", current=NEW), node("b")], True, PoolAssessment.EXCLUDED, 50),
        (
            [node("a", current=NEW), node("b", desired=NEW, state="Working"), node("c")],
            False,
            PoolAssessment.PROGRESSING,
            33,
        ),
    ],
)
def test_pool_assessment_and_completion(
    node_list: list[dict[str, Any]], paused: bool, assessment: PoolAssessment, completion: int
) -> None:
    p = pool_of(node_list, paused=paused)
    assert (p.assessment, p.completion) == (assessment, completion)


def test_pool_counters() -> None:
    node_list = [
        node("updated", current=NEW),
        node("draining", desired=NEW, state="Working", desired_drain=f"drain-{NEW}", unschedulable=True),
        node("degraded", desired=NEW, state="Degraded", reason="r"),
        node("rebooting", desired=NEW, state="Rebooting"),
        node("pending"),
        node("notready", ready="False"),
    ]
    p = pool_of(node_list)
    assert counts(p) == {
        "Total": 6,
        "Available": 3,
        "Progressing": 2,
        "Outdated": 5,
        "Draining": 1,
        "Excluded": 0,
        "Degraded": 1,
    }
    assert p.scope_type == ScopeType.WORKER_POOL
    assert counts(p)[NodeSummaryType.TOTAL] == 6


def test_paused_pool_insight_only_with_excluded_nodes() -> None:
    paused = [pool("master"), pool("worker", paused=True)]
    (h,) = health_of([node("w1")], ns(1), pools=paused)
    assert h.impact.summary == "Outdated nodes in a paused pool 'worker' will not be updated"
    assert h.scope.type == ScopeType.WORKER_POOL and h.impact.type == ImpactType.UPDATE_STALLED
    assert health_of([node("w1", current=NEW)], ns(1), pools=paused) == []
    master_paused = [pool("master", paused=True), pool("worker")]
    (m,) = health_of([node("m1", role="master")], ns(1), pools=master_paused)
    assert m.scope.type == ScopeType.WORKER_POOL  # oc uses WorkerPool even for master


def test_insight_order_is_pools_then_nodes_then_health_by_pool() -> None:
    node_list = [
        node("w1", ready="False", ready_ltt=at(-30)),
        node("m1", role="master", desired="rendered-master-new", state="Degraded", reason="r"),
    ]
    out = run(node_list, now=ns(1))
    kinds = [type(i).__name__ for i in out]
    assert kinds == ["MachineConfigPoolStatusInsight"] * 2 + ["NodeStatusInsight"] * 2 + ["HealthInsight"] * 2
    health = [i for i in out if isinstance(i, HealthInsightShape)]
    assert [h.scope.resources[0].name for h in health] == ["m1", "w1"]  # master pool first (list order)


def test_cv_is_required_by_keyword() -> None:
    with pytest.raises(TypeError):
        compute.node_insights([], POOLS, VERSIONS, ns(1))  # type: ignore[call-arg]


def test_node_unavailability_can_be_aged_at_another_clock() -> None:
    # oc ages node unavailability at the real clock even when it assesses a snapshot's "now"
    fresh = [node("worker-node-1", ready="False", ready_ltt=at(0))]
    assert health_of(fresh, ns(1)) == []
    aged = compute.node_insights(fresh, POOLS, VERSIONS, ns(1), cv=clusterversion(), node_clock=ns(60))
    assert [type(i).__name__ for i in aged if isinstance(i, HealthInsightShape)] == ["HealthInsight"]
