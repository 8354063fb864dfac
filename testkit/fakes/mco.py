"""Acts as the Machine Config Operator and its daemons: Node annotations, conditions, pool status."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from cvo_py.runtime.kube import JSON, MACHINECONFIGPOOLS, MACHINECONFIGS, MERGE_PATCH, NODES, KubeClient, Resource
from testkit.fakes.statuswrite import write_status

CURRENT_CONFIG = "machineconfiguration.openshift.io/currentConfig"
DESIRED_CONFIG = "machineconfiguration.openshift.io/desiredConfig"
STATE = "machineconfiguration.openshift.io/state"
REASON = "machineconfiguration.openshift.io/reason"
RELEASE_IMAGE_VERSION = "machineconfiguration.openshift.io/release-image-version"
DESIRED_DRAIN = "machineconfiguration.openshift.io/desiredDrain"
LAST_APPLIED_DRAIN = "machineconfiguration.openshift.io/lastAppliedDrain"


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class MCO:
    def __init__(self, client: KubeClient) -> None:
        self.client = client

    def create_machineconfig(self, name: str, version: str) -> JSON:
        body: JSON = {
            "metadata": {
                "name": name,
                "annotations": {"machineconfiguration.openshift.io/release-image-version": version},
            },
            "spec": {"config": {"ignition": {"version": "3.4.0"}}},
        }
        return self.client.create(MACHINECONFIGS, body)

    def create_node(self, name: str, roles: list[str], config: str, labels: dict[str, str] | None = None) -> JSON:
        node_labels = {f"node-role.kubernetes.io/{role}": "" for role in roles}
        node_labels["kubernetes.io/hostname"] = name
        node_labels.update(labels or {})
        body: JSON = {
            "metadata": {
                "name": name,
                "labels": node_labels,
                "annotations": {CURRENT_CONFIG: config, DESIRED_CONFIG: config, STATE: "Done", REASON: ""},
            },
            "spec": {},
        }
        node = self.client.create(NODES, body)
        return self.set_node_condition(name, "Ready", "True", "KubeletReady", "kubelet is posting ready status") or node

    def annotate_node(self, name: str, annotations: dict[str, str]) -> JSON:
        return self.client.patch(NODES, name, {"metadata": {"annotations": annotations}}, content_type=MERGE_PATCH)

    def set_unschedulable(self, name: str, unschedulable: bool) -> JSON:
        return self.client.patch(NODES, name, {"spec": {"unschedulable": unschedulable or None}})

    def set_node_condition(self, name: str, type_: str, status: str, reason: str = "", message: str = "") -> JSON:
        def mutate(node_status: JSON) -> None:
            conditions = [c for c in node_status.get("conditions", []) if c.get("type") != type_]
            stamp = now_rfc3339()
            conditions.append(
                {
                    "type": type_,
                    "status": status,
                    "reason": reason,
                    "message": message,
                    "lastTransitionTime": stamp,
                    "lastHeartbeatTime": stamp,
                }
            )
            node_status["conditions"] = conditions

        return self._update_status(NODES, name, mutate)

    def create_pool(self, name: str, node_selector: dict[str, str], config: str, paused: bool = False) -> JSON:
        body: JSON = {
            "metadata": {"name": name},
            "spec": {
                "machineConfigSelector": {"matchLabels": {"machineconfiguration.openshift.io/role": name}},
                "nodeSelector": {"matchLabels": node_selector},
                "paused": paused,
                "configuration": {"name": config},
            },
        }
        return self.client.create(MACHINECONFIGPOOLS, body)

    def set_pool_status(self, name: str, mutate: Callable[[JSON], None]) -> JSON:
        return self._update_status(MACHINECONFIGPOOLS, name, mutate)

    def _update_status(self, res: Resource, name: str, mutate: Callable[[JSON], None]) -> JSON:
        return write_status(self.client, res, name, lambda obj: mutate(obj.setdefault("status", {})))

    # -- what the Machine Config Daemon and the MCO write while a pool rolls --------------------------

    def node_step(self, node: str, step: str, old: str, new: str) -> None:
        """One step of the daemon on `node` moving from config `old` to `new`:
        "drain", "update", "reboot" or "done" (annotations, cordon, Ready condition)."""
        if step == "drain":
            self.annotate_node(
                node, {DESIRED_CONFIG: new, STATE: "Working", DESIRED_DRAIN: f"drain-{new}",
                       LAST_APPLIED_DRAIN: f"uncordon-{old}"},
            )
            self.set_unschedulable(node, True)
        elif step == "update":
            self.annotate_node(node, {LAST_APPLIED_DRAIN: f"drain-{new}"})
        elif step == "reboot":
            self.annotate_node(node, {STATE: "Rebooting"})
            self.set_node_condition(node, "Ready", "False", "KubeletNotReady", "node is rebooting")
        elif step == "done":
            self.set_node_condition(node, "Ready", "True", "KubeletReady", "kubelet is posting ready status")
            self.annotate_node(
                node, {CURRENT_CONFIG: new, STATE: "Done", REASON: "", DESIRED_DRAIN: f"uncordon-{new}",
                       LAST_APPLIED_DRAIN: f"uncordon-{new}"},
            )
            self.set_unschedulable(node, False)
        else:
            raise ValueError(f"unknown node step {step!r}")

    def sync_pool(self, pool: str, nodes: list[str]) -> JSON:
        """The pool's status as the MCO derives it from its nodes' annotations."""
        target = self.client.get(MACHINECONFIGPOOLS, pool)["spec"]["configuration"]["name"]
        states = [self.client.get(NODES, n)["metadata"].get("annotations") or {} for n in nodes]
        updated = sum(1 for a in states if a.get(CURRENT_CONFIG) == target and a.get(STATE) == "Done")
        degraded = sum(1 for a in states if a.get(STATE) == "Degraded")
        done = updated == len(nodes)

        def mutate(status: JSON) -> None:
            stamp = now_rfc3339()
            status.update(
                observedGeneration=1, configuration={"name": target}, machineCount=len(nodes),
                updatedMachineCount=updated, readyMachineCount=updated, degradedMachineCount=degraded,
                unavailableMachineCount=sum(1 for a in states if a.get(STATE) != "Done"),
                conditions=[
                    {"type": "Updated", "status": str(done), "lastTransitionTime": stamp},
                    {"type": "Updating", "status": str(not done), "lastTransitionTime": stamp},
                    {"type": "Degraded", "status": str(degraded > 0), "lastTransitionTime": stamp},
                ],
            )

        return self.set_pool_status(pool, mutate)
