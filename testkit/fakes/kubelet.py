"""Acts as the kubelet: writes Pod status through the pods/status subresource, as a kubelet would."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from cvo_py.runtime.kube import JSON, PODS, ApiError, KubeClient
from testkit.fakes.statuswrite import write_status


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def waiting(reason: str, message: str = "") -> JSON:
    state: JSON = {"reason": reason}
    if message:
        state["message"] = message
    return {"waiting": state}


def terminated(exit_code: int, reason: str = "", message: str = "") -> JSON:
    state: JSON = {"exitCode": exit_code, "startedAt": now_rfc3339(), "finishedAt": now_rfc3339()}
    if reason:
        state["reason"] = reason
    if message:
        state["message"] = message
    return {"terminated": state}


def running() -> JSON:
    return {"running": {"startedAt": now_rfc3339()}}


class Kubelet:
    def __init__(self, client: KubeClient, node_name: str = "test-node") -> None:
        self.client = client
        self.node_name = node_name

    def update_status(self, name: str, namespace: str, mutate: Callable[[JSON], None]) -> JSON:
        """Read the Pod, let `mutate` edit its status in place, write it back (retrying conflicts)."""

        def edit(pod: JSON) -> None:
            status = pod.setdefault("status", {})
            self._fill_defaults(pod, status)
            mutate(status)

        return write_status(self.client, PODS, name, edit, namespace)

    def _fill_defaults(self, pod: JSON, status: JSON) -> None:
        spec = pod.get("spec", {})
        if not status.get("phase"):
            status["phase"] = "Pending"
        status.setdefault("hostIP", "10.0.0.10")
        status.setdefault("startTime", now_rfc3339())
        status.setdefault(
            "initContainerStatuses",
            [_blank(c, "PodInitializing") for c in spec.get("initContainers", [])],
        )
        status.setdefault("containerStatuses", [_blank(c, "PodInitializing") for c in spec.get("containers", [])])

    def set_container_state(
        self, name: str, namespace: str, container: str, state: JSON, *, init: bool = False, **extra: Any
    ) -> JSON:
        """Set one (init) container's `state`; `extra` sets fields like restartCount or lastState."""
        key = "initContainerStatuses" if init else "containerStatuses"

        def mutate(status: JSON) -> None:
            for entry in status[key]:
                if entry["name"] == container:
                    entry["state"] = state
                    entry["ready"] = "running" in state
                    entry["started"] = "running" in state
                    entry.update(extra)
                    return
            raise KeyError(f"pod {namespace}/{name} has no {'init ' if init else ''}container {container!r}")

        return self.update_status(name, namespace, mutate)

    def set_phase(self, name: str, namespace: str, phase: str, reason: str = "", message: str = "") -> JSON:
        def mutate(status: JSON) -> None:
            status["phase"] = phase
            if reason:
                status["reason"] = reason
            if message:
                status["message"] = message

        return self.update_status(name, namespace, mutate)

    def set_condition(
        self, name: str, namespace: str, type_: str, status_: str, reason: str = "", message: str = ""
    ) -> JSON:
        def mutate(status: JSON) -> None:
            conditions = [c for c in status.get("conditions", []) if c.get("type") != type_]
            condition = {"type": type_, "status": status_, "lastTransitionTime": now_rfc3339()}
            if reason:
                condition["reason"] = reason
            if message:
                condition["message"] = message
            status["conditions"] = conditions + [condition]

        return self.update_status(name, namespace, mutate)

    def succeed(self, name: str, namespace: str) -> JSON:
        """Every init and main container exited 0 and the Pod Succeeded."""

        def mutate(status: JSON) -> None:
            for key in ("initContainerStatuses", "containerStatuses"):
                for entry in status[key]:
                    entry["state"] = terminated(0, "Completed")
                    entry["ready"] = False
            status["phase"] = "Succeeded"

        return self.update_status(name, namespace, mutate)

    def finish_deletion(self, name: str, namespace: str) -> None:
        """A kubelet confirms a graceful delete; without one the Pod would stay Terminating."""
        try:
            self.client.delete(PODS, name, namespace, grace_period_seconds=0)
        except ApiError as exc:
            if not exc.is_not_found():
                raise


def _blank(container: JSON, reason: str) -> JSON:
    return {
        "name": container["name"],
        "image": container.get("image", ""),
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "started": False,
        "state": {"waiting": {"reason": reason}},
    }
