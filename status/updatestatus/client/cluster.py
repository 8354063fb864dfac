"""Reading the cluster's objects as `oc adm upgrade status` reads them (`upgrade-status --source
cluster`, and `auto` where no controller publishes): the insights are then computed here, by the
same pure functions the controller runs (`status.updatestatus.insights.compute`).

    reads = ClusterReads(client)      # the requests leave now, in parallel
    ...                               # load the insight functions and the renderer meanwhile
    objects = reads.objects()         # or ClusterReadError: oc's line, in oc's order

What oc reads, and what makes it stop (oc-upgrade-status.md §1): ClusterVersion `version`
(NotFound: "no cluster version information available ..."), every ClusterOperator (none: "no
cluster operator information available ..."), the ClusterVersion's Progressing condition, every
MachineConfigPool and Node, the MachineConfig each node's current and desired config annotations
name (fetched by name, as oc does: a reader who may get MachineConfigs need not list them), and
Deployment openshift-machine-config-operator/machine-config-operator. Any failed read, NotFound
and Forbidden included, stops it with the API's error as oc (kubectl's error printer) words it:
`Error from server (Forbidden): nodes is forbidden: User "…" cannot list resource …`. The reads
leave together; their errors are reported in oc's order, so the first line is the one oc prints.

Alerts are read afterwards, only when the cluster is updating (`status.updatestatus.client.routealerts`).
"""

from __future__ import annotations

import functools
import threading
from typing import Any, NamedTuple

from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    NODES,
    ApiError,
    KubeClient,
    Resource,
)
from status.updatestatus.client.live import Read

DEPLOYMENTS = Resource("apps/v1", "Deployment", "deployments", True)
MCO_NAMESPACE = "openshift-machine-config-operator"
MCO_DEPLOYMENT = "machine-config-operator"
CLUSTERVERSION = "version"
CURRENT_CONFIG = "machineconfiguration.openshift.io/currentConfig"
DESIRED_CONFIG = "machineconfiguration.openshift.io/desiredConfig"
RELEASE_IMAGE_VERSION = "machineconfiguration.openshift.io/release-image-version"
MACHINECONFIG_READERS = 4  # GETs of MachineConfigs in flight together

NO_CLUSTERVERSION = (
    "no cluster version information available - you must be connected to an OpenShift version 4 server to "
    "fetch the current version"
)
NO_OPERATORS = "no cluster operator information available - you must be connected to an OpenShift version 4 server"
NO_PROGRESSING = "no current Progressing info, see `oc describe clusterversion` for more details.\n"


class ClusterReadError(Exception):
    """A read that stops the command, with the whole line oc prints for it (`line`)."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


def api_error_line(exc: ApiError) -> str:
    """An API error as oc prints it (kubectl's `StandardErrorMessage`): `Error from server
    (Reason): message`, or `error: You must be logged in to the server (...)` for 401."""
    if exc.reason == "Unauthorized" or (exc.status == 401 and not exc.reason):
        return f"error: You must be logged in to the server ({exc.message or 'Unauthorized'})"
    if exc.reason:
        return f"Error from server ({exc.reason}): {exc.message}"
    return f"Error from server: {exc.message or exc.status}"


class ClusterObjects(NamedTuple):
    clusterversion: dict[str, Any]
    operators: list[dict[str, Any]]
    pools: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    machineconfig_versions: dict[str, str]  # name → release-image-version, of those the nodes name
    mco_image: str  # the machine-config-operator container's image ("" without one)


class ClusterReads:
    """The reads oc makes, in flight from construction until `objects()`."""

    def __init__(self, client: KubeClient) -> None:
        self._client = client
        self._closed = threading.Event()
        self._gate = threading.Semaphore(MACHINECONFIG_READERS)
        self._machineconfigs: dict[str, Read] = {}

        def read(call: Any) -> Read:
            return Read(call, closed=self._closed)

        self.clusterversion = read(lambda: client.get(CLUSTERVERSIONS, CLUSTERVERSION))
        self._operators = read(lambda: client.list(CLUSTEROPERATORS))
        self._pools = read(lambda: client.list(MACHINECONFIGPOOLS))
        self._nodes = read(self._list_nodes)
        self._mco = read(lambda: client.get(DEPLOYMENTS, MCO_DEPLOYMENT, namespace=MCO_NAMESPACE))

    def close(self) -> None:
        """Cancel the reads not started yet; those in flight end on their own."""
        self._closed.set()

    def _list_nodes(self) -> dict[str, Any]:
        """The Nodes, and the GETs of the MachineConfigs they name sent as soon as they are known."""
        listed = self._client.list(NODES)
        for name in machineconfig_names(items_of(listed)):
            self._machineconfigs[name] = Read(
                functools.partial(self._client.get, MACHINECONFIGS, name), closed=self._closed, gate=self._gate
            )
        return listed

    def progressing(self) -> bool:
        """Whether the ClusterVersion says Progressing=True (False also when it cannot be read:
        `objects()` says why)."""
        try:
            cv = self.clusterversion.result()
        except Exception:  # noqa: BLE001 - reported in oc's order by objects()
            return False
        conditions = (cv.get("status") or {}).get("conditions") if isinstance(cv, dict) else None
        return isinstance(conditions, list) and any(
            isinstance(c, dict) and c.get("type") == "Progressing" and c.get("status") == "True" for c in conditions
        )

    def objects(self) -> ClusterObjects:
        """Every object oc reads, or ClusterReadError with the line oc prints for the first read
        (in oc's order) that failed; `ServerUnreachable` as the client raises it."""
        cv = _result(self.clusterversion, not_found=NO_CLUSTERVERSION)
        operators = items_of(_result(self._operators))
        if not operators:
            raise ClusterReadError(f"error: {NO_OPERATORS}")
        if not _has_progressing(cv):
            raise ClusterReadError(f"error: {NO_PROGRESSING}".rstrip("\n"))
        pools = items_of(_result(self._pools))
        nodes = items_of(_result(self._nodes))
        versions: dict[str, str] = {}
        for name, mc_read in self._machineconfigs.items():
            version = _annotations(_result(mc_read)).get(RELEASE_IMAGE_VERSION)
            if isinstance(version, str) and version:
                versions[name] = version
        mco = _result(self._mco)
        return ClusterObjects(cv, operators, pools, nodes, versions, mco_image(mco))


def _result(read: Read, not_found: str = "") -> Any:
    try:
        return read.result()
    except ApiError as exc:
        if not_found and exc.is_not_found():
            raise ClusterReadError(f"error: {not_found}") from None
        raise ClusterReadError(api_error_line(exc)) from None


def items_of(listed: Any) -> list[dict[str, Any]]:
    items = listed.get("items") if isinstance(listed, dict) else None
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _annotations(obj: Any) -> dict[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return annotations if isinstance(annotations, dict) else {}


def machineconfig_names(nodes: list[dict[str, Any]]) -> list[str]:
    """The MachineConfigs oc fetches: each node's current then desired config, empty ones skipped,
    each name once, in the order oc meets them."""
    names: dict[str, None] = {}
    for node in nodes:
        annotations = _annotations(node)
        for key in (CURRENT_CONFIG, DESIRED_CONFIG):
            name = annotations.get(key)
            if isinstance(name, str) and name:
                names.setdefault(name)
    return list(names)


def _has_progressing(cv: Any) -> bool:
    status = cv.get("status") if isinstance(cv, dict) else None
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return False
    return any(isinstance(c, dict) and c.get("type") == "Progressing" for c in conditions)


def mco_image(deployment: Any) -> str:
    """The image of the Deployment's container named machine-config-operator, as oc reads it ("" when none)."""
    spec = deployment.get("spec") if isinstance(deployment, dict) else None
    template = spec.get("template") if isinstance(spec, dict) else None
    pod = template.get("spec") if isinstance(template, dict) else None
    containers = pod.get("containers") if isinstance(pod, dict) else None
    for container in containers if isinstance(containers, list) else []:
        if isinstance(container, dict) and container.get("name") == MCO_DEPLOYMENT:
            image = container.get("image")
            return image if isinstance(image, str) else ""
    return ""
