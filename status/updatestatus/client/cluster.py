"""Reading the cluster's objects as `oc adm upgrade status` reads them (`upgrade-status --source
cluster`, and `auto` where no controller publishes): the insights are then computed here, by the
same pure functions the controller runs (`status.updatestatus.insights.compute`).

    reads = ClusterReads(client)      # the requests leave now, in parallel (as many at once as the client allows)
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
leave together (as many at once as the client allows: three on a one-shot run); their errors are
reported in oc's order, so the first line is the one oc prints.

Alerts are read afterwards, only when the cluster is updating (`status.updatestatus.client.routealerts`).
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Iterator
from typing import Any, NamedTuple, cast

from cvo_py.runtime.jsonfields import STR, Fields, decoder
from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    METADATA_ONLY,
    NODES,
    ApiError,
    KubeClient,
    Resource,
)
from cvo_py.runtime.streamedbody import BodyReader
from status.updatestatus.client.live import Read
from status.updatestatus.insights.inputs import MCO_DEPLOYMENT, MCO_NAMESPACE, NODE_READ_ONCE, mco_image
from status.updatestatus.insights.mco import CURRENT_CONFIG, DESIRED_CONFIG, RELEASE_IMAGE_VERSION

DEPLOYMENTS = Resource("apps/v1", "Deployment", "deployments", True)
CLUSTERVERSION = "version"
MACHINECONFIG_READERS = 4  # GETs of MachineConfigs in flight together, at most (the client may allow fewer)
# A Node LIST of more bytes than this (about 250 nodes) is decoded down to what the insights read
# (`status.updatestatus.insights.inputs.NODE_READ_ONCE`), the rest skipped by the parser: a smaller one
# decodes with `json` in less time than importing that parser takes.
TRIMMED_FROM = 1 << 20
NODE_LIST: Fields = {"metadata": {"resourceVersion": STR, "continue": STR}, "items": [NODE_READ_ONCE]}
_trimmed_nodes = decoder(NODE_LIST)


# The first page is small and JSON: a cluster of up to this many Nodes is read in one page without
# loading the protobuf reader. A larger one is listed again whole, in one LIST in protobuf read as
# it arrives (`liststream.StreamedList`), asked for as soon as the first page's `continue` is seen:
# the API server answers a LIST without a `continue` from its watch cache and writes its items as
# it goes, so they are decoded and assessed here meanwhile; the rest of a paged LIST is read from
# etcd before a byte of it is written (bench/README.md).
FIRST_NODE_PAGE = 100
HEAD_BYTES = 4096  # where a JSON page's `continue` is looked for, before its items
_CONTINUE = re.compile(rb'"continue":"([^"\\]+)"')
# The whole LIST is asked for in protobuf, as oc's client asks (JSON where the server has none):
# the API server writes Nodes in protobuf in about a third of its time for JSON.
NODES_ACCEPT = "application/vnd.kubernetes.protobuf, application/json"


def _continue_of(listed: Any) -> str:
    meta = listed.get("metadata") if isinstance(listed, dict) else None
    token = meta.get("continue") if isinstance(meta, dict) else None
    return token if isinstance(token, str) else ""


def decode_nodes(body: bytes) -> Any:
    """A Node LIST's body, decoded down to what the insights read when it is large."""
    if len(body) >= TRIMMED_FROM:
        return _trimmed_nodes(body)
    return json.loads(body.decode("utf-8", errors="replace"))  # as the API client decodes a body

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
        self._lock = threading.Lock()
        self._batches: list[list[dict[str, Any]]] = []  # the Nodes of each batch decoded so far
        self._all_listed = False  # no batch will follow
        self._batched = threading.Condition()
        self._named: list[str] = []  # the MachineConfigs the listed Nodes name, once they are listed

        def read(call: Any) -> Read:
            return Read(call, closed=self._closed)

        self._nodes = read(self._list_nodes)  # first: on a large cluster, it takes the longest
        self.clusterversion = read(lambda: client.get(CLUSTERVERSIONS, CLUSTERVERSION))
        self._operators = read(lambda: client.list(CLUSTEROPERATORS))
        self._pools = read(self._list_pools)
        self._mco = read(lambda: client.get(DEPLOYMENTS, MCO_DEPLOYMENT, namespace=MCO_NAMESPACE))

    def close(self) -> None:
        """Cancel the reads not started yet; those in flight end on their own."""
        self._closed.set()

    def _list_pools(self) -> dict[str, Any]:
        """The pools, and the GETs of the MachineConfigs they render sent at once: the nodes
        almost always name those, and the Node LIST takes longer (see `_machineconfig`)."""
        listed = self._client.list(MACHINECONFIGPOOLS)
        for name in pool_configs(items_of(listed)):
            self._machineconfig(name)
        return listed

    def _list_nodes(self) -> dict[str, Any]:
        """The Nodes, and the GETs of the MachineConfigs they name not asked for yet.

        A first page of `FIRST_NODE_PAGE` Nodes in JSON: a cluster that fits is read whole
        without loading the protobuf reader. A larger one is listed again, whole, in one LIST
        asked for as soon as the first page's `continue` is read, before its items would be
        decoded (they are not): the API server answers a LIST without a `continue` from its
        watch cache, writing the items as it goes, where the rest of a paged LIST is read from
        etcd at the first page's revision before a byte of it is written (bench/README.md)."""
        try:
            listed, whole = self._first_node_page()
            if whole is None and _continue_of(listed):  # a `continue` not found before the items
                whole = Read(self._all_nodes, closed=self._closed)
            if whole is None:
                items = self._listed(items_of(listed))
            else:
                items = items_of(whole.result())
            self._named = machineconfig_names(items)
            for name in self._named:
                self._machineconfig(name)
            return {"items": items}
        finally:
            with self._batched:
                self._all_listed = True
                self._batched.notify_all()

    def _listed(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A batch of Nodes (a page, or a part of a LIST read as it arrives), handed to
        `node_batches()` as it comes."""
        with self._batched:
            self._batches.append(batch)
            self._batched.notify_all()
        return list(batch)

    def node_batches(self) -> Iterator[list[dict[str, Any]]]:
        """The Nodes of each batch of the LIST as it is decoded (for work done while the rest is
        listed); it ends when the LIST does, also when it fails (`objects()` says why). Batches
        read as the answer arrived that turn out not to be what the whole answer reads as
        (`StreamedList`) are followed by the Nodes the answer does read as: `objects()` has each
        Node once."""
        taken = 0
        while True:
            with self._batched:
                while len(self._batches) == taken and not self._all_listed and not self._closed.is_set():
                    self._batched.wait(0.1)
                batches, done = self._batches[taken:], self._all_listed or self._closed.is_set()
            taken += len(batches)
            yield from batches
            if done and not batches:
                return

    def early_inputs(self) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]] | None:
        """(the ClusterVersion, the pools, the release versions of the MachineConfigs the pools
        name) as soon as they are read, for the nodes' assessments made while they are listed; None
        when one of them cannot be read (`objects()` then says why)."""
        try:
            cv = self.clusterversion.result()
            pools = items_of(self._pools.result())
            versions: dict[str, str] = {}
            for name in pool_configs(pools):
                version = _annotations(self._machineconfig(name).result()).get(RELEASE_IMAGE_VERSION)
                if isinstance(version, str) and version:
                    versions[name] = version
        except Exception:  # noqa: BLE001 - reported in oc's order by objects()
            return None
        return (cv, pools, versions) if isinstance(cv, dict) else None

    def _first_node_page(self) -> tuple[dict[str, Any], Read | None]:
        """The first page of the Node LIST, or, when it has a `continue` (found before its items),
        the read of every Node in one LIST, started then, with the page's items left undecoded."""
        whole: list[Read] = []

        def decode(body: bytes) -> Any:
            end = body.find(b'"items"', 0, HEAD_BYTES)  # the list's metadata comes before its items
            found = _CONTINUE.search(body, 0, end) if end > 0 else None
            if found:
                whole.append(Read(self._all_nodes, closed=self._closed))
                return {"metadata": {"continue": found.group(1).decode()}}
            return decode_nodes(body)

        listed = self._client.list(NODES, limit=FIRST_NODE_PAGE, decode=decode, compressed=True)
        return listed, whole[0] if whole else None

    def _all_nodes(self) -> dict[str, Any]:
        """Every Node in one LIST, in protobuf, its items handed to `node_batches()` as they arrive
        (`liststream.StreamedList`); in JSON, once it is whole."""
        streamed: list[Any] = []

        def progress() -> BodyReader:
            from cvo_py.runtime import liststream

            streamed[:] = [liststream.StreamedList(NODE_LIST, "NodeList", self._listed)]
            return cast(BodyReader, streamed[0])

        def decode(body: bytes) -> Any:  # what was not read as it arrived
            if not body.startswith(b"k8s\x00"):
                return decode_nodes(body)
            from cvo_py.runtime import kubeproto

            try:
                return kubeproto.read_list(body, NODE_LIST, "NodeList")
            except kubeproto.Unreadable:
                return None  # asked for again as JSON

        listed = self._client.list(NODES, decode=decode, compressed=True, accept=NODES_ACCEPT, progress=progress)
        if listed is None:
            listed = self._client.list(NODES, decode=decode_nodes, compressed=True)
        if not (streamed and streamed[0].reused):
            self._listed(items_of(listed))
        return listed

    def _machineconfig(self, name: str) -> Read:
        """The GET of MachineConfig `name`, sent once. Only those the nodes name are read by
        `objects()`, as oc reads them: one that only a pool names and cannot be read changes nothing."""
        with self._lock:
            found = self._machineconfigs.get(name)
            if found is None:
                # its metadata only: a rendered MachineConfig's body (every file of the node) can be megabytes
                get = functools.partial(self._client.get, MACHINECONFIGS, name, accept=METADATA_ONLY)
                found = self._machineconfigs[name] = Read(get, closed=self._closed, gate=self._gate)
            return found

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
        stop = stop_line(cv, operators)
        if stop:
            raise ClusterReadError(stop)
        pools = items_of(_result(self._pools))
        nodes = items_of(_result(self._nodes))
        versions: dict[str, str] = {}
        for name in self._named:
            version = _annotations(_result(self._machineconfig(name))).get(RELEASE_IMAGE_VERSION)
            if isinstance(version, str) and version:
                versions[name] = version
        mco = _result(self._mco)
        return ClusterObjects(cv, operators, pools, nodes, versions, mco_image(mco))


def stop_line(cv: Any, operators: list[dict[str, Any]]) -> str:
    """The line oc stops with for this ClusterVersion (None: there is none) and these operators,
    "" when it goes on."""
    if cv is None:
        return f"error: {NO_CLUSTERVERSION}"
    if not operators:
        return f"error: {NO_OPERATORS}"
    if not _has_progressing(cv):
        return f"error: {NO_PROGRESSING}".rstrip("\n")
    return ""


def not_found_line(resource: str, name: str) -> str:
    """The line oc prints for a GET of `resource` (plural.group) `name` that is not found."""
    return f'Error from server (NotFound): {resource} "{name}" not found'


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


def pool_configs(pools: list[dict[str, Any]]) -> list[str]:
    """The rendered MachineConfigs the pools have and want (`status` then `spec.configuration.name`)."""
    names: dict[str, None] = {}
    for pool in pools:
        for part in ("status", "spec"):
            section = pool.get(part)
            configuration = section.get("configuration") if isinstance(section, dict) else None
            name = configuration.get("name") if isinstance(configuration, dict) else None
            if isinstance(name, str) and name:
                names.setdefault(name)
    return list(names)


def _has_progressing(cv: Any) -> bool:
    status = cv.get("status") if isinstance(cv, dict) else None
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return False
    return any(isinstance(c, dict) and c.get("type") == "Progressing" for c in conditions)
