"""Load an oc-style snapshot: NAME-cv.yaml and its sibling files.

Files (all found from the `-cv.yaml` path by replacing its first `-cv.yaml`): `-co.yaml`,
`-mc.yaml`, `-mcp.yaml`, `-node.yaml` (required), `-alerts.json` and `-mco-deployment.yaml`
(optional). Each may be YAML or JSON; lists are `v1 List` or `<Kind>List`. A missing or malformed
file is a `SnapshotError` whose one-line message names the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cvo_py.runtime import safeload
from cvo_py.runtime.gotext.durations import TimeFormatError
from cvo_py.runtime.gotext.times import ZERO_TIME, parse_time
from status.updatestatus.insights import compute, inputs
from status.updatestatus.insights.objects import InputError
from status.updatestatus.insights.plain import Insight

JSON = dict[str, Any]

CV_SUFFIX = "-cv.yaml"
MOCK_NOW_OFFSET = 368_975  # ns oc adds to the newest condition time, to exercise rounding


class SnapshotError(Exception):
    """A snapshot file that is missing or cannot be used; the message names it."""


@dataclass
class Snapshot:
    name: str
    clusterversion: JSON
    operators: list[JSON]
    machineconfigs: list[JSON]
    pools: list[JSON]
    nodes: list[JSON]
    alerts: Any | None  # the alerts response, or None when the snapshot has none
    mco_deployment: JSON | None

    def machineconfig_versions(self) -> dict[str, str]:
        try:
            return inputs.machineconfig_versions(self.machineconfigs)
        except InputError as exc:
            raise SnapshotError(f"{self._file('-mc.yaml')}: {exc}") from None

    def mco_image(self) -> str:
        """The machine-config-operator container's image; "" without a deployment file (as oc)."""
        try:
            return inputs.mco_image(self.mco_deployment)
        except InputError as exc:
            raise SnapshotError(f"{self._file('-mco-deployment.yaml')}: {exc}") from None

    def _file(self, suffix: str) -> Path | str:
        """The snapshot file with this suffix; a dump read into a snapshot has only its own name."""
        return paths(Path(self.name))[suffix] if CV_SUFFIX in self.name else self.name

    def insights(self, now: int | None = None, wall_clock: int | None = None) -> tuple[list[Insight], int]:
        """oc's assessment of the snapshot: (insights, the "now" they are assessed at).

        Without `now`, the snapshot's own "now" (`mock_now`) is used, and node unavailability is
        aged at `wall_clock` as oc does (it measures that against the real clock even for
        snapshots). An explicit `now` is used for both.
        """
        at = self.mock_now() if now is None else now
        node_clock = wall_clock if now is None and wall_clock is not None else at
        try:
            out = compute.all_insights(
                self.clusterversion,
                self.operators,
                self.nodes,
                self.pools,
                self.machineconfig_versions(),
                at,
                mco_image=self.mco_image(),
                alerts=self.alerts,
                node_clock=node_clock,
            )
        except InputError as exc:
            where = file_for_error(Path(self.name), exc) if CV_SUFFIX in self.name else self.name
            raise SnapshotError(f"{where}: {exc}") from None
        return out, at

    def mock_now(self) -> int:
        """Newest ClusterVersion, then ClusterOperator, condition time + 368975 ns, as oc computes it."""
        now = ZERO_TIME
        for obj in [self.clusterversion, *self.operators]:
            for cond in (obj.get("status") or {}).get("conditions") or []:
                text = cond.get("lastTransitionTime") if isinstance(cond, dict) else None
                if not text:
                    continue
                try:
                    ltt = parse_time(str(text))
                except TimeFormatError as exc:
                    raise SnapshotError(f"{self.name}: {exc}") from None
                if ltt > now:
                    now = ltt + MOCK_NOW_OFFSET
        return now


# Which file holds the objects an assessment error names (its message starts with their kind).
_FILE_BY_KIND = {
    "ClusterVersion": "-cv.yaml",
    "ClusterOperator": "-co.yaml",
    "MachineConfigPool": "-mcp.yaml",
    "MachineConfig": "-mc.yaml",
    "Node": "-node.yaml",
    "alert": "-alerts.json",
    "alerts:": "-alerts.json",
}


def file_for_error(cv_path: Path, error: InputError) -> Path:
    """The snapshot file an assessment error is about (the -cv.yaml file when it cannot tell)."""
    kind = error.kind or str(error).split(" ", 1)[0]
    return paths(cv_path)[_FILE_BY_KIND.get(kind, CV_SUFFIX)]


def paths(cv_path: Path) -> dict[str, Path]:
    text = str(cv_path)
    if CV_SUFFIX not in text:
        raise SnapshotError(f"{cv_path}: the ClusterVersion file name must end with {CV_SUFFIX}")
    return {
        suffix: Path(text.replace(CV_SUFFIX, suffix, 1))
        for suffix in (
            "-cv.yaml",
            "-co.yaml",
            "-mc.yaml",
            "-mcp.yaml",
            "-node.yaml",
            "-alerts.json",
            "-mco-deployment.yaml",
        )
    }


def load(cv_path: str | Path) -> Snapshot:
    files = paths(Path(cv_path))
    cv = _single(files["-cv.yaml"], "ClusterVersion")
    alerts = None
    if files["-alerts.json"].exists():
        alerts = _parse(files["-alerts.json"])
        if not isinstance(alerts, dict | list):
            raise SnapshotError(f"{files['-alerts.json']}: expected an alerts response object")
    deployment = None
    if files["-mco-deployment.yaml"].exists():
        deployment = _single(files["-mco-deployment.yaml"], "Deployment")
    return Snapshot(
        name=str(files["-cv.yaml"]),
        clusterversion=cv,
        operators=_list(files["-co.yaml"], "ClusterOperator"),
        machineconfigs=_list(files["-mc.yaml"], "MachineConfig"),
        pools=_list(files["-mcp.yaml"], "MachineConfigPool"),
        nodes=_list(files["-node.yaml"], "Node"),
        alerts=alerts,
        mco_deployment=deployment,
    )


def _parse(path: Path) -> Any:
    """The file's document, within the bounds of `cvo_py.runtime.safeload` (one-line errors naming the file)."""
    try:
        data = safeload.read_file(path)  # a FIFO or a device is refused, not read
    except safeload.DocumentError as exc:
        raise SnapshotError(str(exc)) from None
    return parse_document(path, data)


def parse_document(where: Path | str, data: bytes | str) -> Any:
    """One YAML or JSON document → plain values, within the bounds of `cvo_py.runtime.safeload`; errors
    name `where`. Every reader of snapshots and dumps parses here."""
    try:
        return safeload.load_document(data, source=str(where), yaml_floats=False)
    except safeload.DocumentError as exc:
        raise SnapshotError(str(exc)) from None


# The API group of each kind a snapshot or dump holds ("" is the core group).
GROUPS = {
    "ClusterVersion": "config.openshift.io",
    "ClusterOperator": "config.openshift.io",
    "Node": "",
    "MachineConfigPool": "machineconfiguration.openshift.io",
    "MachineConfig": "machineconfiguration.openshift.io",
    "Deployment": "apps",
}


def _items(path: Path | str, doc: Any, kind: str, typed_by_path: bool = False) -> list[JSON]:
    if not isinstance(doc, dict):
        raise SnapshotError(f"{path}: expected a {kind} or a list of them, got {type(doc).__name__}")
    doc_kind = doc.get("kind")
    if doc_kind == kind:
        return [doc]
    if typed_by_path and doc_kind is None:
        # Written without TypeMeta (a typed object serialized as is): the path says what it is, and
        # a list is the only such document with `items`. An apiVersion of another group contradicts it.
        _check_group(path, doc, kind)
        if "items" not in doc:
            return [doc]
    elif doc_kind not in ("List", f"{kind}List"):
        raise SnapshotError(f"{path}: unexpected object type {doc_kind or '<no kind>'} (want {kind} or a List)")
    items = doc.get("items") or []
    if not isinstance(items, list):
        raise SnapshotError(f"{path}: items is not a list")
    for i, item in enumerate(items):
        item_kind = item.get("kind") if isinstance(item, dict) else type(item).__name__
        # <Kind>List items may omit kind (as the API server sends them), as may a path-typed list's
        kindless_ok = doc_kind != "List"
        if not isinstance(item, dict) or (item_kind not in (kind, None) or (item_kind is None and not kindless_ok)):
            raise SnapshotError(f"{path}: unexpected object type {item_kind} in List content at index {i}")
        if item_kind is None and doc_kind is None:
            _check_group(f"{path}: List content at index {i}", item, kind)
    return items


def _check_group(where: Path | str, doc: JSON, kind: str) -> None:
    api_version = doc.get("apiVersion")
    if api_version is None or api_version == "":  # absent, as a typed object writes it (omitempty)
        return
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else None
    if group != GROUPS.get(kind, group):
        shown = api_version[:100] if isinstance(api_version, str) else type(api_version).__name__
        raise SnapshotError(f"{where}: apiVersion {shown} without a kind is not a {kind}")


# Fields that must be objects (or lists) wherever present: what the assessment walks into.
_OBJECT_FIELDS: tuple[tuple[str, ...], ...] = (
    ("metadata",),
    ("metadata", "annotations"),
    ("metadata", "labels"),
    ("spec",),
    ("status",),
    ("spec", "template"),
    ("spec", "template", "spec"),
)
_LIST_FIELDS: tuple[tuple[str, ...], ...] = (("status", "conditions"), ("spec", "template", "spec", "containers"))
_SHAPES: tuple[tuple[tuple[str, ...], type], ...] = tuple(
    [(f, dict) for f in _OBJECT_FIELDS] + [(f, list) for f in _LIST_FIELDS]
)


def check_shape(path: Path | str, kind: str, obj: JSON, index: int | None = None) -> None:
    """A one-line error naming the file for an object whose structure the assessment cannot walk
    (`index`: its place in the file's list, for an object that has no usable name).

    Runs once per object of a snapshot or dump (5,000 nodes and more): errors are worded only
    when there is one."""
    obj.setdefault("kind", kind)  # <Kind>List items may omit it; errors name objects by it
    if _well_shaped(obj):
        return
    _check_name(path, kind, obj, index)
    for field_path, want in _SHAPES:
        cur: Any = obj
        for key in field_path:
            cur = cur.get(key) if isinstance(cur, dict) else None
            if cur is None:
                break
        else:
            if not isinstance(cur, want):
                shape = "an object" if want is dict else "a list"
                where = ".".join(field_path)
                raise SnapshotError(f"{path}: {_who(kind, obj)}: {where} is {type(cur).__name__}, not {shape}")
    # Kubernetes stores annotations and labels as strings; the assessment compares them as such.
    meta = obj.get("metadata")
    if not meta:
        return
    for field_name in ("annotations", "labels"):
        values = meta.get(field_name)
        if values and not all(isinstance(v, str) for v in values.values()):
            key, value = next((k, v) for k, v in values.items() if not isinstance(v, str))
            raise SnapshotError(
                f"{path}: {_who(kind, obj)}: metadata.{field_name}[{key!r}] is {type(value).__name__}, not a string"
            )


def _check_name(path: Path | str, kind: str, obj: JSON, index: int | None) -> None:
    """metadata.name is a string wherever present: oc's decoder refuses the whole file otherwise,
    and every reader names, keys and looks up objects by it."""
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if name is not None and not isinstance(name, str):
        which = kind if index is None else f"{kind} in List content at index {index}"
        raise SnapshotError(f"{path}: {which}: metadata.name is {type(name).__name__}, not a string")


_STRINGS_ONLY = {str}


def _well_shaped(obj: JSON) -> bool:
    """True when `check_shape` certainly finds nothing (what almost every object is): the same
    checks, unrolled, with parsed documents' exact types. False leaves the verdict to `check_shape`."""
    meta = obj.get("metadata")
    if meta is not None:
        if type(meta) is not dict:
            return False
        name = meta.get("name")
        if name is not None and type(name) is not str:
            return False
        for strings in (meta.get("annotations"), meta.get("labels")):
            if strings is not None and (
                type(strings) is not dict or (strings and set(map(type, strings.values())) != _STRINGS_ONLY)
            ):
                return False
    status = obj.get("status")
    if status is not None:
        if type(status) is not dict:
            return False
        conditions = status.get("conditions")
        if conditions is not None and type(conditions) is not list:
            return False
    spec = obj.get("spec")
    if spec is None:
        return True
    if type(spec) is not dict:
        return False
    template = spec.get("template")
    if template is None:
        return True
    if type(template) is not dict:
        return False
    pod = template.get("spec")
    if pod is None:
        return True
    return type(pod) is dict and (pod.get("containers") is None or type(pod.get("containers")) is list)


def _who(kind: str, obj: JSON) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{kind} {name!r}" if name else kind


def _list(path: Path, kind: str) -> list[JSON]:
    return objects_of(path, _parse(path), kind)


def objects_of(where: Path | str, doc: Any, kind: str, *, typed_by_path: bool = False) -> list[JSON]:
    """The `kind` objects of a parsed document (one object, a `v1 List` or a `<Kind>List`), each
    checked for the structure the assessment walks; errors name `where`.

    `typed_by_path`: where the document is found says it holds `kind` (a dump's per-kind folders),
    so a document without `kind` is taken as one (or, with `items`, a list of them): the Insights
    Operator writes objects without TypeMeta. A `kind` or apiVersion group that contradicts the
    path is still refused."""
    items = _items(where, doc, kind, typed_by_path)
    listed = not (len(items) == 1 and items[0] is doc)
    for index, item in enumerate(items):
        check_shape(where, kind, item, index if listed else None)
    return items


def _single(path: Path, kind: str) -> JSON:
    items = _list(path, kind)
    if not items:
        raise SnapshotError(f"{path}: the list holds no {kind}")
    return items[0]
