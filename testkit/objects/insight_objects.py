"""Small builders of ClusterVersion / ClusterOperator / Node / MachineConfigPool dicts for insight tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from cvo_py.runtime.gotext.durations import MINUTE, SECOND
from cvo_py.runtime.gotext.times import format_time, parse_time

if TYPE_CHECKING:
    from status.updatestatus.client.snapshot import Snapshot

JSON = dict[str, Any]
MCO = "machineconfiguration.openshift.io/"
T0 = "2024-01-01T10:00:00Z"
T0_NS = parse_time(T0)


def at(minutes: float = 0, seconds: float = 0) -> str:
    """T0 + offset, as an RFC 3339 string."""
    return format_time(T0_NS + int(minutes * MINUTE + seconds * SECOND))


def ns(minutes: float = 0, seconds: float = 0) -> int:
    return T0_NS + int(minutes * MINUTE + seconds * SECOND)


def cond(type_: str, status: str, ltt: str = T0, reason: str = "", message: str = "") -> JSON:
    return {"type": type_, "status": status, "lastTransitionTime": ltt, "reason": reason, "message": message}


def clusterversion(
    history: list[JSON] | None = None,
    progressing: str | None = "True",
    failing: str | None = "False",
    desired: str = "4.14.1",
    progressing_ltt: str = T0,
    failing_reason: str = "",
    failing_message: str = "",
) -> JSON:
    conditions = []
    if progressing is not None:
        conditions.append(
            cond("Progressing", progressing, progressing_ltt, message="Working towards " + desired)
        )
    if failing is not None:
        conditions.append(cond("Failing", failing, T0, failing_reason, failing_message))
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "status": {
            "desired": {"version": desired},
            "history": history if history is not None else updating_history(),
            "conditions": conditions,
        },
    }


def entry(version: str, state: str, started: str, completed: str | None = None, image: str = "") -> JSON:
    e: JSON = {"version": version, "state": state, "startedTime": started, "image": image or f"img-{version}"}
    if completed:
        e["completionTime"] = completed
    return e


def updating_history() -> list[JSON]:
    return [
        entry("4.14.1", "Partial", T0),
        entry("4.14.0", "Completed", at(-600), at(-540)),
        entry("4.13.9", "Completed", at(-1200), at(-1140)),
    ]


def operator(
    name: str,
    version: str = "4.14.1",
    progressing: str | None = "False",
    available: str | None = "True",
    degraded: str | None = "False",
    counted: bool = True,
    ltt: str = T0,
    available_ltt: str | None = None,
    degraded_ltt: str | None = None,
    reason: str = "",
    message: str = "",
    extra_versions: list[JSON] | None = None,
) -> JSON:
    conditions = []
    if available is not None:
        conditions.append(cond("Available", available, available_ltt or ltt, "AvailReason", "avail message"))
    if degraded is not None:
        conditions.append(cond("Degraded", degraded, degraded_ltt or ltt, "DegReason", "deg message"))
    if progressing is not None:
        conditions.append(cond("Progressing", progressing, ltt, reason, message))
    annotations = {"include.release.openshift.io/self-managed-high-availability": "true"} if counted else {}
    return {
        "kind": "ClusterOperator",
        "metadata": {"name": name, "annotations": annotations},
        "status": {
            "conditions": conditions,
            "versions": [{"name": "operator", "version": version}, *(extra_versions or [])],
        },
    }


def pool(
    name: str, label: str | None = None, target: str | None = None, paused: bool = False, **meta: Any
) -> JSON:
    p: JSON = {
        "kind": "MachineConfigPool",
        "metadata": {"name": name, **meta},
        "spec": {
            "nodeSelector": {"matchLabels": {label or f"node-role.kubernetes.io/{name}": ""}},
            "configuration": {"name": target or f"rendered-{name}-new"},
            "paused": paused,
        },
    }
    return p


VERSIONS = {
    "rendered-master-old": "4.14.0",
    "rendered-master-new": "4.14.1",
    "rendered-worker-old": "4.14.0",
    "rendered-worker-new": "4.14.1",
    "rendered-infra-old": "4.14.0",
    "rendered-infra-new": "4.14.1",
}


def machineconfigs() -> list[JSON]:
    """A MachineConfig for each of VERSIONS, carrying its release version."""
    return [
        {"kind": "MachineConfig", "metadata": {"name": n, "annotations": {MCO + "release-image-version": v}}}
        for n, v in sorted(VERSIONS.items())
    ]


def node(
    name: str,
    role: str = "worker",
    current: str | None = None,
    desired: str | None = None,
    state: str = "Done",
    reason: str = "",
    ready: str = "True",
    ready_ltt: str = T0,
    unschedulable: bool = False,
    desired_drain: str | None = None,
    last_drain: str | None = None,
    extra_conditions: list[JSON] | None = None,
    extra_annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> JSON:
    current = current or f"rendered-{role}-old"
    desired = desired or current
    annotations = {
        MCO + "currentConfig": current,
        MCO + "desiredConfig": desired,
        MCO + "state": state,
        MCO + "reason": reason,
        MCO + "desiredDrain": desired_drain or f"uncordon-{current}",
        MCO + "lastAppliedDrain": last_drain or f"uncordon-{current}",
        **(extra_annotations or {}),
    }
    return {
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels if labels is not None else {f"node-role.kubernetes.io/{role}": ""},
            "annotations": annotations,
        },
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {
            "conditions": [
                cond("Ready", ready, ready_ltt, "KubeletReady", "kubelet msg"),
                *(extra_conditions or []),
            ]
        },
    }


def write_snapshot(tmp_path: Path, name: str = "x", as_json: bool = False, **override: Any) -> Path:
    def as_list(items: list[dict[str, Any]]) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "List", "items": items}

    files: dict[str, Any] = {
        "-cv.yaml": clusterversion(),
        "-co.yaml": as_list([operator("a"), operator("b")]),
        "-mc.yaml": as_list(
            [
                {
                    "kind": "MachineConfig",
                    "metadata": {
                        "name": "rendered-worker-old",
                        "annotations": {"machineconfiguration.openshift.io/release-image-version": "4.14.0"},
                    },
                },
                {"kind": "MachineConfig", "metadata": {"name": "00-worker"}},
            ]
        ),
        "-mcp.yaml": as_list([pool("master"), pool("worker")]),
        "-node.yaml": as_list([node("w1")]),
    }
    files.update(override)
    for suffix, doc in files.items():
        if doc is None:
            continue
        path = tmp_path / f"{name}{suffix}"
        path.write_text(
            doc if isinstance(doc, str) else (json.dumps(doc) if as_json else yaml.safe_dump(doc))
        )
    return tmp_path / f"{name}-cv.yaml"


def firing_alert(name: str, active_at: str, severity: str = "warning", **annotations: str) -> JSON:
    """An alert as `GET /api/v1/alerts` lists it."""
    return {
        "labels": {"alertname": name, "severity": severity, "namespace": "openshift-test"},
        "annotations": annotations,
        "state": "firing",
        "activeAt": active_at,
        "value": "1e+00",
    }


def malformed_alerts(active_at: str) -> dict[str, Any]:
    """One alert per way an alerts API can send one oc cannot read, by what is wrong with it."""
    good = firing_alert("Malformed", active_at)

    def changed(**fields: Any) -> JSON:
        return {**good, **fields}

    return {
        "activeAt not a time": changed(activeAt="yesterday"),
        "activeAt a number": changed(activeAt=1700000000),
        "activeAt an object": changed(activeAt={"seconds": 1}),
        "activeAt out of range": changed(activeAt="2026-02-30T00:00:00Z"),
        "activeAt 1 MB long": changed(activeAt="2" * 1_000_000),
        "alertname a number": changed(labels={**good["labels"], "alertname": 7}),
        "alertname a list": changed(labels={**good["labels"], "alertname": ["A", "B"]}),
        "labels a list": changed(labels=[["alertname", "A"]]),
        "annotations a string": changed(annotations="summary: x"),
        "state a boolean": changed(state=True),
        "an alert that is a string": "alertname=Malformed",
        "an alert that is null": None,
    }


def small_cluster(**override: Any) -> Snapshot:
    """Objects of every kind an assessment reads, as a snapshot: two pools, a master, a worker
    being updated and a degraded one, two operators (one updating); no alerts (`alerts=` gives some)."""
    import dataclasses

    from status.updatestatus.client.snapshot import Snapshot

    snap = Snapshot(
        name="x",
        clusterversion=clusterversion(),
        operators=[operator("a"), operator("b", version="4.14.0", progressing="True")],
        machineconfigs=machineconfigs(),
        pools=[pool("master"), pool("worker")],
        nodes=[
            node("m1", role="master", current="rendered-master-new"),
            node("w1", current="rendered-worker-old", desired="rendered-worker-new", state="Working"),
            node("w2", state="Degraded", reason="failed to drain"),
        ],
        alerts=None,
        mco_deployment=None,
    )
    return dataclasses.replace(snap, **override)


def sample_insights() -> list[Any]:
    """Insights of every kind, with the fields the controller writes: a master and two workers (one
    unavailable, one degraded with a two-line reason), a degraded and an updating operator."""
    from status.updatestatus.insights import compute

    nodes = [
        node("m1", role="master", current="rendered-master-new"),
        node("w1", ready="False", ready_ltt=at(-30)),
        node("w2", desired="rendered-worker-new", state="Degraded", reason="failed to drain\nsecond line"),
    ]
    ops = [
        operator("etcd", degraded="True", degraded_ltt=at(-60)),
        operator("dns", version="4.14.0", progressing="True"),
    ]
    return compute.all_insights(clusterversion(), ops, nodes, [pool("master"), pool("worker")], VERSIONS, ns(1))
