"""Read a cluster dump — a must-gather or an Insights Operator archive — into a `Snapshot`.

Accepted: a must-gather directory (the top `must-gather.local.*` directory or an image directory
under it) or archive (`.tar`, `.tar.gz`/`.tgz`, `.tar.xz`, `.zip`); an Insights Operator archive
(`insights-*.tar.gz`) or its extracted directory. The layout is detected from the member paths
(`--format` can insist on one). Objects written without `kind`/`apiVersion` (the Insights
Operator writes them so) are what their folder says they are; a `kind` that says otherwise is refused.

Hostile input is read safely (`status.updatestatus.client.dump.archives` reads the members within
its bounds, and only those `role()` wants). Each member is parsed as soon as it is read (its bytes
are not kept; of a MachineConfig only the name and annotations are); when a path appears twice, the
later member wins, as on extraction; at most `MAX_KEPT_BYTES` of documents are kept.

"Now" is the gather time: the must-gather's `timestamp` file (its first line, when the gather
started), or the Insights archive's gather time (from its name `insights-YYYY-MM-DD-HHMMSS`, else
the time stamp of its `config/version.json` member). A time stamp that cannot be read (not UTF-8,
not Go's format, outside years 1 to 9999) is no gather time: the newest condition time is used and
said. `notes()` says, one line each, what the dump lacks for a full answer.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cvo_py.runtime import gotext
from cvo_py.runtime.gotext import escape
from status.updatestatus.client.details import DUMP_FORMATS as FORMATS
from status.updatestatus.client.dump import archives
from status.updatestatus.client.snapshot import CV_SUFFIX, JSON, Snapshot, SnapshotError, objects_of, parse_document
from status.updatestatus.client.snapshot import load as load_snapshot
from status.updatestatus.insights import alerts as alerts_mod
from status.updatestatus.insights.inputs import RELEASE_IMAGE_VERSION
from status.updatestatus.insights.objects import InputError

MAX_KEPT_BYTES = 256 * archives.MIB  # the documents kept from one dump (MachineConfigs: their metadata only)
MAX_STAMP_BYTES = 4096  # of a timestamp or version file: its first lines are all that is read

MCO = "machineconfiguration.openshift.io"
_CLUSTER_SCOPED = {
    ("config.openshift.io", "clusterversions"): "ClusterVersion",
    ("config.openshift.io", "clusteroperators"): "ClusterOperator",
    ("core", "nodes"): "Node",
    (MCO, "machineconfigpools"): "MachineConfigPool",
    (MCO, "machineconfigs"): "MachineConfig",
}
_INSIGHTS_DIRS = {
    "clusteroperator": "ClusterOperator",
    "node": "Node",
    "machineconfigpools": "MachineConfigPool",
    "machineconfigs": "MachineConfig",
}
_MCO_NAMESPACE = ("namespaces", "openshift-machine-config-operator", "apps")
_INSIGHTS_NAME = re.compile(r"insights-(\d{4})-(\d{2})-(\d{2})-(\d{2})(\d{2})(\d{2})")
_GO_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d{1,9})? ([+-])(\d{2})(\d{2})\b")
# Roles of members that are not Kubernetes objects (the others' role is their kind).
TIMESTAMP, VERSION, ALERTS, GATHERS = "timestamp", "version", "alerts", "gathers"
_SMALL = (TIMESTAMP, VERSION)


@dataclass
class Member:
    """A wanted member: its path, what it is, and its content, read as soon as it was found."""

    path: tuple[str, ...]  # the member's name, split on "/"
    role: str  # a kind (ClusterVersion, Node, ...), or TIMESTAMP, VERSION, ALERTS, GATHERS
    mtime: int | None  # ns since the epoch, when the archive records one
    data: bytes = b""  # a timestamp or version file: its first MAX_STAMP_BYTES
    document: Any = None  # anything else: the parsed document
    error: SnapshotError | None = None  # ... or why it cannot be parsed (raised only if it is used)

    def parsed(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.document


@dataclass
class Dump:
    """A dump's objects (as a `Snapshot`), where they came from and when they were gathered."""

    snapshot: Snapshot
    layout: str  # must-gather, insights or snapshot
    source: str
    gathered_at: int | None  # ns since the epoch
    gathered_from: str  # what the gather time was read from
    missing: list[str] = field(default_factory=list)  # what the dump lacks, one line each
    has_alerts: bool = False


def load(path: str | Path, fmt: str = "auto") -> Dump:
    """The dump at `path` in the layout `fmt` (one of FORMATS)."""
    if fmt not in FORMATS:
        raise SnapshotError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    p = Path(path)
    shown = escape(str(p))
    if fmt == "snapshot" or (fmt == "auto" and p.name.endswith(CV_SUFFIX)):
        snap = load_snapshot(p)
        return Dump(snap, "snapshot", shown, None, "", has_alerts=snap.alerts is not None)
    try:
        st = os.stat(p)
    except OSError as exc:
        raise SnapshotError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        members = _members(archives.read_directory(p, role), shown)
    elif stat.S_ISREG(st.st_mode):
        members = _members(archives.read_archive(p, shown, role), shown)
    else:
        raise SnapshotError(f"{shown}: not a directory or an archive")
    layout = fmt if fmt != "auto" else _detect(members, shown)
    if layout == "must-gather":
        return _must_gather(members, shown)
    return _insights(members, shown, p.name)


# --- which members are wanted ------------------------------------------------------------------


def role(parts: tuple[str, ...]) -> str | None:
    """What a member at this path is, if `upgrade-status` reads it (decided before reading it)."""
    if not parts:
        return None
    last = parts[-1]
    if last in (TIMESTAMP, VERSION) and len(parts) <= 3:
        return last
    if "cluster-scoped-resources" in parts:
        i = parts.index("cluster-scoped-resources")
        rest = parts[i + 1 :]
        if len(rest) == 2 and rest[1].endswith(".yaml"):
            return _CLUSTER_SCOPED.get((rest[0], rest[1][: -len(".yaml")]))
        if len(rest) == 3 and _is_yaml_or_json(rest[2]):
            return _CLUSTER_SCOPED.get((rest[0], rest[1]))
        return None
    if "namespaces" in parts:
        i = parts.index("namespaces")
        rest = parts[i:]
        if rest[:3] == _MCO_NAMESPACE and rest[3:] in (
            ("deployments.yaml",),
            ("deployments", "machine-config-operator.yaml"),
        ):
            return "Deployment"
        return None
    if "config" in parts:
        i = parts.index("config")
        rest = parts[i + 1 :]
        if len(rest) == 1:
            return {"version.json": "ClusterVersion", "alerts.json": ALERTS}.get(rest[0])
        if len(rest) == 2 and rest[1].endswith(".json"):
            return _INSIGHTS_DIRS.get(rest[0])
        return None
    return GATHERS if parts[-2:] == ("insights-operator", "gathers.json") else None


def _is_yaml_or_json(name: str) -> bool:
    return name.endswith((".yaml", ".yml", ".json"))



def _members(found: Iterator[archives.Found], shown: str) -> list[Member]:
    """The wanted members, each parsed as it is read (a later member of the same path replaces an
    earlier one), within MAX_KEPT_BYTES (a member that would pass it is refused before it is parsed)."""
    members: dict[tuple[str, ...], tuple[Member, int]] = {}
    kept = 0

    def keep(member: Member, cost: int) -> None:
        nonlocal kept
        replaced = members.pop(member.path, None)
        kept += cost - (replaced[1] if replaced else 0)
        if kept > MAX_KEPT_BYTES:
            raise SnapshotError(f"{shown}: the documents to read exceed {MAX_KEPT_BYTES // archives.MIB} MiB: not read")
        members[member.path] = (member, cost)

    for parts, what, data, mtime in found:
        member = Member(parts, what, mtime)
        if what in _SMALL:
            member.data = data[:MAX_STAMP_BYTES]
            keep(member, len(member.data))
            continue
        if what != "MachineConfig":
            keep(member, len(data))  # what parsing it would hold, checked first
        where = f"{shown}: {escape('/'.join(parts))}"
        try:
            member.document = parse_document(where, data)
        except SnapshotError as exc:
            member.error = exc
        del data
        if what == "MachineConfig":  # only names and release versions are read from these
            member.document = _metadata_only(member.document)
            keep(member, len(json.dumps(member.document)))
    return [m for m, _ in members.values()]


def _metadata_only(doc: Any) -> Any:
    """A MachineConfig document (one object or a list) reduced to what is read: kind and metadata."""
    if not isinstance(doc, dict):
        return doc
    if isinstance(doc.get("items"), list):
        return {**{k: v for k, v in doc.items() if k != "items"}, "items": [_metadata_only(i) for i in doc["items"]]}
    return {k: v for k, v in doc.items() if k in ("kind", "apiVersion", "metadata")}


# --- layouts -----------------------------------------------------------------------------------


def _detect(members: list[Member], shown: str) -> str:
    if any("cluster-scoped-resources" in m.path for m in members):
        return "must-gather"
    if any(m.path[-2:] == ("config", "version.json") for m in members):
        return "insights"
    raise SnapshotError(
        f"{shown}: neither a must-gather (no cluster-scoped-resources/config.openshift.io/clusterversions) "
        "nor an Insights archive (no config/version.json)"
    )


def _where(shown: str, m: Member) -> str:
    return f"{shown}: {escape('/'.join(m.path))}"


def _objects(members: list[Member], shown: str, kind: str) -> list[JSON]:
    """The objects of these members, one object or a list per member, in member-name order (the
    order the API server lists objects in when each has its own file)."""
    out: list[JSON] = []
    for m in sorted(members, key=lambda m: m.path):
        out.extend(objects_of(_where(shown, m), m.parsed(), kind, typed_by_path=True))
    return out


def _must_gather(members: list[Member], shown: str) -> Dump:
    by_dir: dict[tuple[str, ...], list[Member]] = {}
    for m in members:
        if "cluster-scoped-resources" in m.path:
            by_dir.setdefault(m.path[: m.path.index("cluster-scoped-resources")], []).append(m)
    with_cv = [d for d, ms in sorted(by_dir.items()) if any(m.role == "ClusterVersion" for m in ms)]
    if not with_cv:
        raise SnapshotError(
            f"{shown}: no ClusterVersion in the must-gather "
            "(cluster-scoped-resources/config.openshift.io/clusterversions)"
        )
    image_dir = with_cv[0]
    missing: list[str] = []
    if len(with_cv) > 1:
        chosen = escape("/".join(image_dir))
        missing.append(f"{len(with_cv)} gather directories hold a ClusterVersion: read {chosen}")
    mine = [m for m in members if m.path[: len(image_dir)] == image_dir]
    kinds: dict[str, list[Member]] = {}
    for m in mine:
        kinds.setdefault(m.role, []).append(m)
    cvs = [cv for cv in _objects(kinds.get("ClusterVersion", []), shown, "ClusterVersion") if _named(cv, "version")]
    if not cvs:
        raise SnapshotError(f"{shown}: the must-gather has no ClusterVersion named version")
    deployment = None
    in_image_dir = len(image_dir) + len(_MCO_NAMESPACE)
    deployments = [m for m in kinds.get("Deployment", []) if m.path[len(image_dir) : in_image_dir] == _MCO_NAMESPACE]
    for d in _objects(deployments, shown, "Deployment"):
        if _named(d, "machine-config-operator"):
            deployment = d
    snap = Snapshot(
        name=shown,
        clusterversion=cvs[0],
        operators=_objects(kinds.get("ClusterOperator", []), shown, "ClusterOperator"),
        machineconfigs=_objects(kinds.get("MachineConfig", []), shown, "MachineConfig"),
        pools=_objects(kinds.get("MachineConfigPool", []), shown, "MachineConfigPool"),
        nodes=_objects(kinds.get("Node", []), shown, "Node"),
        alerts=None,
        mco_deployment=deployment,
    )
    gathered_at, gathered_from = None, ""
    top = image_dir[:-1] if image_dir else ()
    for directory in (top, image_dir) if image_dir else ((),):
        stamp = next((m for m in members if m.path == (*directory, TIMESTAMP)), None)
        if stamp is not None:
            gathered_at = parse_go_time(stamp.data)
            if gathered_at is not None:
                gathered_from = "/".join(stamp.path)
                break
    dump = Dump(snap, "must-gather", shown, gathered_at, gathered_from, missing)
    dump.missing.extend(notes(dump))
    return dump


def _named(obj: JSON, name: str) -> bool:
    meta = obj.get("metadata")
    return isinstance(meta, dict) and meta.get("name") == name


def parse_go_time(text: str | bytes) -> int | None:
    """The first line of a must-gather `timestamp` file (Go's time.Time format) → ns, or None
    (also for bytes that are not UTF-8: the gather time is then unknown, not the dump unreadable)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
    for line in text.splitlines():
        m = _GO_TIME.match(line.strip())
        if m is None:
            continue
        frac = m.group(3) or ""
        try:
            ns = gotext.parse_time(f"{m.group(1)}T{m.group(2)}{frac}{m.group(4)}{m.group(5)}:{m.group(6)}")
        except gotext.TimeFormatError:
            return None
        # Year 0 parses (as in Go), but no gather ran then: as for an archive's own time stamps,
        # only years 1 to 9999 are a gather time.
        return ns if gotext.ZERO_TIME <= ns else None
    return None


def _insights(members: list[Member], shown: str, file_name: str) -> Dump:
    roots = sorted({m.path[: m.path.index("config")] for m in members if m.path[-2:] == ("config", "version.json")})
    if not roots:
        raise SnapshotError(f"{shown}: no config/version.json: not an Insights archive")
    root = roots[0]
    n = len(root)

    def under(*sub: str) -> list[Member]:
        return [m for m in members if m.path[:n] == root and m.path[n : n + len(sub)] == sub]

    version = [m for m in under("config", "version.json") if len(m.path) == n + 2]
    by_dir = {d: [m for m in under("config", d) if len(m.path) == n + 3] for d in _INSIGHTS_DIRS}
    alerts_members = [m for m in under("config", "alerts.json") if len(m.path) == n + 2]
    missing: list[str] = []
    alerts: Any = None
    gathered_at, gathered_from = _insights_time(file_name, version)
    if alerts_members:
        where = _where(shown, alerts_members[0])
        doc = alerts_members[0].parsed()
        try:
            alerts = alerts_mod.from_alertmanager(doc)
        except InputError as exc:
            raise SnapshotError(f"{where}: {exc}") from None
    gathers = under("insights-operator", "gathers.json")
    if gathers:
        info = gathers[0].document  # None when it cannot be parsed: it only says whether names are obfuscated
        if isinstance(info, dict) and info.get("is_global_obfuscation_enabled") is True:
            missing.append("names and addresses are obfuscated in this archive (consistently within it)")
    clusterversions = _objects(version, shown, "ClusterVersion")
    if not clusterversions:
        where = escape("/".join(version[0].path)) if version else "the archive"
        raise SnapshotError(f"{shown}: no ClusterVersion in {where}")
    snap = Snapshot(
        name=shown,
        clusterversion=clusterversions[0],
        operators=_objects(by_dir["clusteroperator"], shown, "ClusterOperator"),
        machineconfigs=_objects(by_dir["machineconfigs"], shown, "MachineConfig"),
        pools=_objects(by_dir["machineconfigpools"], shown, "MachineConfigPool"),
        nodes=_objects(by_dir["node"], shown, "Node"),
        alerts=alerts,
        mco_deployment=None,
    )
    dump = Dump(snap, "insights", shown, gathered_at, gathered_from, missing, has_alerts=alerts is not None)
    dump.missing.extend(notes(dump))
    return dump


def _insights_time(file_name: str, version: list[Member]) -> tuple[int | None, str]:
    m = _INSIGHTS_NAME.search(file_name)
    if m is not None:
        y, mo, d, h, mi, s = m.groups()
        try:
            return gotext.parse_time(f"{y}-{mo}-{d}T{h}:{mi}:{s}Z"), "the archive's name"
        except gotext.TimeFormatError:
            pass
    if version and version[0].mtime is not None and version[0].mtime > 0:
        return version[0].mtime, "the time stamp of config/version.json"
    return None, ""


# --- what is said about the dump (pure) --------------------------------------------------------------------

_WHAT = {"must-gather": "must-gather", "insights": "Insights archive"}


def preamble(dump: Dump, now: int, *, explicit_now: bool, updating: bool) -> str:
    """The lines printed before the status: when it is assessed at, what the dump lacks, and (as oc
    says when it cannot fetch alerts, only while updating) that alerts are not assessed."""
    what = f"{_WHAT.get(dump.layout, dump.layout)} {dump.source}"
    at = gotext.format_time(now, nanos=False)
    gathered = gotext.format_time(dump.gathered_at, nanos=False) if dump.gathered_at is not None else None
    if explicit_now:
        when = f"gathered at {gathered} ({dump.gathered_from})" if gathered else "gather time unknown"
        lines = [f"Assessed at {at} (--now); {what}: {when}"]
    elif gathered is not None:
        lines = [f"Assessed at {at}, when {what} was gathered ({dump.gathered_from})"]
    else:
        lines = [
            f"Assessed at {at}: no gather time in {what}, so its newest ClusterVersion/ClusterOperator "
            "condition time (--now chooses another)"
        ]
    lines += dump.missing
    if updating and not dump.has_alerts:
        why = "a must-gather holds no alerts" if dump.layout == "must-gather" else "the archive holds no alerts.json"
        lines.append(f"Unable to fetch alerts, ignoring alerts in 'Update Health':  {why}")
    return "".join(escape(line) + "\n" for line in lines)


_CURRENT = MCO + "/currentConfig"
_DESIRED = MCO + "/desiredConfig"


def notes(dump: Dump) -> list[str]:
    """One line per piece the dump lacks for a full answer (the answer is the best the rest allows)."""
    snap = dump.snapshot
    out: list[str] = []
    if not snap.pools:
        out.append("no MachineConfigPools in the dump: nodes and pools are not assessed")
    if not snap.nodes:
        out.append("no Nodes in the dump: nodes are not assessed")
    plain = sum(1 for n in snap.nodes if _CURRENT not in _annotations(n))
    if plain:
        out.append(
            f"{plain} of {len(snap.nodes)} Nodes carry no {MCO} annotations: their versions and progress are unknown"
        )
    versions = snap.machineconfig_versions()
    named = {_annotations(n).get(k) for n in snap.nodes for k in (_CURRENT, _DESIRED)} - {None, ""}
    absent = {name for name in named if name not in versions}
    if named and not snap.machineconfigs:
        out.append("no MachineConfigs in the dump: node versions are unknown (shown as ?)")
    elif absent:
        out.append(
            f"{len(absent)} of the {len(named)} MachineConfigs the Nodes name are missing from the dump "
            f"(or carry no {RELEASE_IMAGE_VERSION}): those versions are unknown"
        )
    return out


def _annotations(obj: JSON) -> dict[str, Any]:
    meta = obj.get("metadata")
    value = meta.get("annotations") if isinstance(meta, dict) else None
    return value if isinstance(value, dict) else {}
