"""What the end-to-end tests do and read about the release a node runs: `oc adm upgrade
--to-image`, the ClusterVersion's history and conditions, whether `start`'s Deployment has settled
on a release, and the synthetic operators of the node's 4.14 releases, reported as their
operators would report them (testkit/harness/nodecluster.py builds those releases)."""

from __future__ import annotations

import contextlib
import threading
from datetime import UTC, datetime
from typing import Any

from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    JSON,
    LEASES,
    PODS,
    ApiError,
    KubeClient,
    ServerUnreachable,
)
from testkit.fakes.statuswrite import write_status
from testkit.harness.manifests import CVO_NAMESPACE, KINDS
from testkit.harness.usc import ts
from testkit.harness.wait import wait_until

START_SELECTOR = "k8s-app=cluster-version-operator"
START_DEPLOYMENT = "cluster-version-operator"
# The Lease `start` leads with (upstream's CVO_NAME).
LEASE = "version"
DEPLOYMENTS = KINDS["Deployment"]


def request_update(kube: KubeClient, image: str) -> None:
    """`oc adm upgrade --to-image=IMAGE --allow-explicit-upgrade --force`: by digest, no version;
    forced, since nothing here signs the node's release images."""
    kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": {"image": image, "version": "", "force": True}}})


def clusterversion(kube: KubeClient) -> JSON:
    return kube.get(CLUSTERVERSIONS, "version")


def condition(cv: JSON, type_: str) -> dict[str, Any]:
    for found in (cv.get("status") or {}).get("conditions") or []:
        if found.get("type") == type_:
            return dict(found)
    return {}


def history(cv: JSON) -> list[tuple[str, str]]:
    """(version, state) of each history entry, newest first."""
    return [(h.get("version", ""), h.get("state", "")) for h in (cv.get("status") or {}).get("history") or []]


def accepted(cv: JSON, image: str) -> bool:
    """ReleaseAccepted=True PayloadLoaded for `image`."""
    found = condition(cv, "ReleaseAccepted")
    loaded = found.get("reason") == "PayloadLoaded" and found.get("status") == "True"
    return loaded and image in found.get("message", "")


def start_pods(kube: KubeClient) -> list[JSON]:
    return list(kube.list(PODS, CVO_NAMESPACE, label_selector=START_SELECTOR)["items"])


def ready(pod: JSON) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def lease_holder(kube: KubeClient) -> str:
    """Who holds `start`'s Lease ("" once it is released)."""
    try:
        return str(kube.get(LEASES, LEASE, CVO_NAMESPACE)["spec"].get("holderIdentity") or "")
    except ApiError as exc:
        if exc.is_not_found():
            return ""
        raise


def settled(kube: KubeClient) -> tuple[JSON, JSON] | None:
    """(ClusterVersion, `start`'s Pod) once the cluster rests on a release: what spec asks for is
    the desired release (or was refused: ReleaseAccepted=False naming it), the newest history
    entry is that release and Completed, `start`'s Deployment has rolled out its image, and one
    Pod runs it, Ready, none other left; None before (a target retrieved, loaded but not yet
    started on counts as not at rest)."""
    cv = clusterversion(kube)
    desired = (cv.get("status") or {}).get("desired") or {}
    head = ((cv.get("status") or {}).get("history") or [{}])[0]
    if not desired.get("image") or head.get("image") != desired["image"] or head.get("state") != "Completed":
        return None
    wanted = ((cv.get("spec") or {}).get("desiredUpdate") or {}).get("image") or desired["image"]
    refused = condition(cv, "ReleaseAccepted")
    if wanted != desired["image"] and not (refused.get("status") == "False" and wanted in refused.get("message", "")):
        return None
    deployment = kube.get(DEPLOYMENTS, START_DEPLOYMENT, CVO_NAMESPACE)
    status = deployment.get("status") or {}
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    if (
        container["image"] != desired["image"]
        or status.get("observedGeneration", 0) < deployment["metadata"]["generation"]
        or status.get("updatedReplicas") != 1
        or status.get("availableReplicas") != 1
    ):
        return None
    pods = start_pods(kube)
    if len(pods) != 1 or pods[0]["metadata"].get("deletionTimestamp") or not ready(pods[0]):
        return None
    return cv, pods[0]


def wait_settled(kube: KubeClient, timeout: float = 300.0) -> tuple[JSON, JSON]:
    found = wait_until(
        lambda: settled(kube),
        timeout=timeout,
        interval=1.0,
        what="the cluster at rest on its desired release (history Completed, start rolled out)",
        tolerate=(ApiError,),
    )
    assert found is not None
    return found


def report_operator(kube: KubeClient, name: str, version: str) -> bool:
    """Report ClusterOperator `name` as its operator would once `start` created it: Available while
    its Deployment (`name` in namespace `name`) has an available replica, and only then at
    `version`; never Degraded. True once it reports `version` Available; False while the
    ClusterOperator does not exist yet or its Deployment is not available."""
    try:
        kube.get(CLUSTEROPERATORS, name)
        deployment = kube.get(DEPLOYMENTS, name, name)
    except ApiError as exc:
        if exc.is_not_found():
            return False
        raise
    status = deployment.get("status") or {}
    available = (status.get("availableReplicas") or 0) >= 1 and status.get("observedGeneration", 0) >= deployment[
        "metadata"
    ]["generation"]
    now = ts(datetime.now(UTC))
    if available:
        message = f"deployment {name}/{name} is available"
        reason = "AsExpected"
    else:
        waiting = [
            f"{c['name']}: {c['state']['waiting'].get('reason', '')}"
            for pod in kube.list(PODS, name)["items"]
            for c in (pod.get("status") or {}).get("containerStatuses") or []
            if "waiting" in (c.get("state") or {})
        ]
        message = f"deployment {name}/{name} has no available replica" + (f" ({', '.join(waiting)})" if waiting else "")
        reason = "DeploymentUnavailable"

    def mutate(obj: JSON) -> None:
        out = obj.setdefault("status", {})
        if available:
            out["versions"] = [{"name": "operator", "version": version}]
        previous = {c.get("type"): c for c in out.get("conditions") or []}

        def cond(type_: str, value: str, why: str, text: str) -> JSON:
            kept = previous.get(type_) or {}
            since = kept.get("lastTransitionTime") if kept.get("status") == value else now
            return {"type": type_, "status": value, "lastTransitionTime": since, "reason": why, "message": text}

        out["conditions"] = [
            cond("Available", "True" if available else "False", reason, message),
            cond("Progressing", "False" if available else "True", reason, message),
            cond("Degraded", "False", "AsExpected", ""),
        ]

    write_status(kube, CLUSTEROPERATORS, name, mutate)
    return available


class PodLog:
    """A Pod's log followed from now until its container ends (or `close`), on a thread: what an
    outgoing `start` logs while it is TERMed, which is gone with its Pod."""

    def __init__(self, kube: KubeClient, pod: JSON) -> None:
        meta = pod["metadata"]
        self._path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/log"
        self._kube = kube
        self._lines: list[str] = []
        self._stream: Any = None
        self._thread = threading.Thread(target=self._follow, name=f"log of {meta['name']}", daemon=True)

    def _opened(self, stream: Any) -> None:
        self._stream = stream

    def _follow(self) -> None:
        try:
            for line in self._kube.stream_lines(self._path, {"follow": "true"}, read_timeout=600, on_open=self._opened):
                self._lines.append(line.decode("utf-8", errors="replace"))
        except (ApiError, ServerUnreachable, OSError):
            pass  # the container or the connection ended: what was read is kept

    def __enter__(self) -> PodLog:
        self._thread.start()
        return self

    def wait_for(self, text: str, timeout: float) -> str:
        """The whole log once a line holds `text`."""
        wait_until(lambda: any(text in line for line in self._lines), timeout=timeout, what=f"{text!r} logged")
        return self.text()

    def text(self) -> str:
        return "\n".join(self._lines)

    def __exit__(self, *_exc: object) -> None:
        if self._thread.is_alive() and self._stream is not None:
            with contextlib.suppress(OSError):
                self._stream.shutdown()
        self._thread.join(10)
