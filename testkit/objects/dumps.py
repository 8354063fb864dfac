"""Turn the objects of an oc snapshot into the dumps support engineers get: a must-gather tree (per
object files, or list files), a must-gather archive, an Insights Operator archive; and scale a
snapshot up by copying its nodes."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import re
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.times import format_time
from status.updatestatus.client.snapshot import Snapshot

JSON = dict[str, Any]
IMAGE_DIR = "quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-0123456789abcdef"
MCO_GROUP = "machineconfiguration.openshift.io"


def go_time(ns: int) -> str:
    """Go's default time.Time format, as oc writes must-gather `timestamp` lines (with `m=`)."""
    sec, frac = divmod(ns, SECOND)
    text = format_time(sec * SECOND, nanos=False)[:-1].replace("T", " ")
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return f"{text} +0000 UTC m=+0.041234567"


def _name(obj: JSON) -> str:
    return str(obj["metadata"]["name"])


def _yaml(obj: Any) -> bytes:
    return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True).encode()


def must_gather_files(snap: Snapshot, gathered_at: int, *, lists: bool = False) -> dict[str, bytes]:
    """The must-gather's files (paths under its top directory `must-gather.local.<n>/`).

    Per-object files by default (objects are then read in name order, as the API server lists
    them); with `lists`, one `v1 List` per kind keeping the snapshot's order.
    """
    stamp = (go_time(gathered_at) + "\n" + go_time(gathered_at + 90 * SECOND) + "\n").encode()
    files: dict[str, bytes] = {"timestamp": stamp, "event-filter.html": b"<html></html>\n"}
    base = f"{IMAGE_DIR}/cluster-scoped-resources"
    files[f"{IMAGE_DIR}/version"] = b"4.16.0\n"
    files[f"{IMAGE_DIR}/timestamp"] = stamp
    kinds: list[tuple[str, str, list[JSON]]] = [
        ("config.openshift.io", "clusterversions", [snap.clusterversion]),
        ("config.openshift.io", "clusteroperators", snap.operators),
        ("core", "nodes", snap.nodes),
        (MCO_GROUP, "machineconfigpools", snap.pools),
        (MCO_GROUP, "machineconfigs", snap.machineconfigs),
    ]
    for group, plural, objects in kinds:
        if lists:
            files[f"{base}/{group}/{plural}.yaml"] = _yaml({"apiVersion": "v1", "kind": "List", "items": objects})
        else:
            for obj in objects:
                files[f"{base}/{group}/{plural}/{_name(obj)}.yaml"] = _yaml(obj)
    if snap.mco_deployment is not None:
        path = f"{IMAGE_DIR}/namespaces/openshift-machine-config-operator/apps/deployments/machine-config-operator.yaml"
        files[path] = _yaml(snap.mco_deployment)
    # what a real gather also holds, which the reader must pass over
    files[f"{IMAGE_DIR}/namespaces/openshift-etcd/core/pods.yaml"] = b"apiVersion: v1\nkind: List\nitems: []\n"
    files[f"{IMAGE_DIR}/host_service_logs/masters/kubelet_service.log"] = b"log line\n" * 100
    return files


def without_typemeta(obj: JSON) -> JSON:
    """The object as a typed Go value serializes it: no `kind`, no `apiVersion`."""
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}


def insights_files(snap: Snapshot, *, obfuscated: bool = False, typemeta: bool = False) -> dict[str, bytes]:
    """An Insights Operator archive's files (JSON, one object per file), without TypeMeta as the
    operator writes them (with `typemeta`, each object keeps its kind and apiVersion)."""

    def encoded(obj: JSON) -> bytes:
        return json.dumps(obj if typemeta else without_typemeta(obj)).encode()

    files: dict[str, bytes] = {"config/version.json": encoded(snap.clusterversion)}
    for obj in snap.operators:
        files[f"config/clusteroperator/{_name(obj)}.json"] = encoded(obj)
    # operator resources in subfolders are not ClusterOperators
    files["config/clusteroperator/operator.openshift.io/console/cluster.json"] = b'{"spec": {}}'
    for folder, objects in (("node", snap.nodes), ("machineconfigpools", snap.pools)):
        for obj in objects:
            files[f"config/{folder}/{_name(obj)}.json"] = encoded(obj)
    for obj in snap.machineconfigs:
        files[f"config/machineconfigs/{_name(obj)}.json"] = encoded(obj)
    gathers = {"status_reports": [{"name": "clusterconfig/nodes", "duration_in_ms": 12}], "uptime_seconds": 3600}
    gathers["is_global_obfuscation_enabled"] = obfuscated
    files["insights-operator/gathers.json"] = json.dumps(gathers).encode()
    if snap.alerts is not None:
        files["config/alerts.json"] = json.dumps(to_alertmanager(snap.alerts)).encode()
    return files


def insights_47_files(snap: Snapshot) -> dict[str, bytes]:
    """An Insights Operator archive as OpenShift 4.7's operator wrote it: objects without TypeMeta,
    and of what `upgrade-status` reads only the ClusterVersion, the ClusterOperators and the Nodes
    (no MachineConfigPools, MachineConfigs, alerts.json or gathers.json)."""
    files = insights_files(snap)
    return {
        path: data
        for path, data in files.items()
        if path == "config/version.json" or path.startswith(("config/clusteroperator/", "config/node/"))
    }


ANONYMIZED_DOMAIN = "<CLUSTER_BASE_DOMAIN>"


def anonymized(snap: Snapshot) -> Snapshot:
    """The snapshot as an obfuscating Insights Operator gathers it: every node name, wherever it
    appears (the Node, its labels, messages of other objects), replaced by the same made-up name
    (an obfuscated address and the base-domain placeholder)."""
    names = sorted({_name(n) for n in snap.nodes})
    mapping = {name: f"ip-10-0-0-{i + 1}.{ANONYMIZED_DOMAIN}" for i, name in enumerate(names)}
    if not mapping:
        return snap
    # longest first, so that a name inside another is not replaced on its own
    pattern = re.compile("|".join(re.escape(n) for n in sorted(mapping, key=len, reverse=True)))

    def renamed(value: Any) -> Any:
        if value is None:
            return None
        return json.loads(pattern.sub(lambda m: mapping[m.group(0)], json.dumps(value)))

    return dataclasses.replace(
        snap,
        clusterversion=renamed(snap.clusterversion),
        operators=renamed(snap.operators),
        machineconfigs=renamed(snap.machineconfigs),
        pools=renamed(snap.pools),
        nodes=renamed(snap.nodes),
        alerts=renamed(snap.alerts),
        mco_deployment=renamed(snap.mco_deployment),
    )


def to_alertmanager(response: Any) -> list[JSON]:
    """A Prometheus /api/v1/alerts response → the Alertmanager v2 alerts Insights gathers (firing only)."""
    out = []
    for alert in (response.get("data") or {}).get("alerts") or []:
        if alert.get("state") == "pending":
            continue
        out.append(
            {
                "labels": alert.get("labels") or {},
                "annotations": alert.get("annotations") or {},
                "startsAt": alert.get("activeAt"),
                "endsAt": "2099-01-01T00:00:00Z",
                "updatedAt": alert.get("activeAt"),
                "status": {"state": "active", "silencedBy": [], "inhibitedBy": []},
            }
        )
    return out


def write_tree(files: dict[str, bytes], root: Path) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def tar_bytes(files: dict[str, bytes], *, prefix: str = "", mode: str = "w:gz", mtime: int = 0) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:  # type: ignore[call-overload]
        for rel, data in files.items():
            info = tarfile.TarInfo(prefix + rel)
            info.size = len(data)
            info.mtime = mtime
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def scaled(snap: Snapshot, nodes: int) -> Snapshot:
    """The snapshot with `nodes` nodes: copies of its nodes (each pool keeps its share), renamed
    `<name>-<i>`, listed by name as the API server lists them."""
    if not snap.nodes:
        raise ValueError("the snapshot has no nodes to copy")
    out: list[JSON] = []
    i = 0
    while len(out) < nodes:
        for node in snap.nodes:
            if len(out) == nodes:
                break
            clone = copy.deepcopy(node)
            name = f"{_name(node)}-{i:05d}"
            clone["metadata"]["name"] = name
            labels = clone["metadata"].get("labels")
            if isinstance(labels, dict) and "kubernetes.io/hostname" in labels:
                labels["kubernetes.io/hostname"] = name
            out.append(clone)
        i += 1
    out.sort(key=_name)
    return dataclasses.replace(snap, nodes=out)


def by_name(snap: Snapshot) -> Snapshot:
    """The snapshot with every list in name order (what per-object files and a live cluster give)."""

    def ordered(items: Iterable[JSON]) -> list[JSON]:
        return sorted(items, key=_name)

    return dataclasses.replace(
        snap,
        operators=ordered(snap.operators),
        machineconfigs=ordered(snap.machineconfigs),
        pools=ordered(snap.pools),
        nodes=ordered(snap.nodes),
    )


# -- hostile archives, written as streams (small on disk, however much they hold) -----------------


class _Repeated(io.RawIOBase):
    """`size` bytes: `head`, `fill` repeated, `tail`; produced as they are read (never held whole)."""

    def __init__(self, size: int, fill: bytes = b" ", head: bytes = b"", tail: bytes = b"") -> None:
        self._pending = memoryview(head)
        self._left = size - len(head) - len(tail)
        self._tail = tail
        self._block = memoryview(fill * (1024 * 1024 // len(fill)))

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._pending:
            if self._left > 0:
                self._pending = self._block[: min(self._left, len(self._block))]
                self._left -= len(self._pending)
            else:
                self._pending, self._tail = memoryview(self._tail), b""
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]  # a view: nothing is copied
        return n


def write_tar_bomb(
    path: Path, members: dict[str, int], *, fill: bytes = b" ", head: bytes = b"", tail: bytes = b"",
    compress: bool = True,
) -> Path:
    """A tar (gzip'd unless `compress` is False) whose members (name → size) are `head`, `fill`
    repeated and `tail` (e.g. `{`, spaces, `}`: a JSON document of any size that parses to little):
    whatever reads them is measured, and the archive stays small on disk."""
    import gzip

    with open(path, "wb") as raw:
        out: Any = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) if compress else raw
        with tarfile.open(fileobj=out, mode="w|") as tar:
            for name, size in members.items():
                info = tarfile.TarInfo(name)
                info.size = size
                tar.addfile(info, io.BufferedReader(_Repeated(size, fill, head, tail), 1024 * 1024))
        if compress:
            out.close()
    return path


def write_overlapping_zip(path: Path, name: str, size: int, entries: int, *, fill: bytes = b" ") -> Path:
    """A zip whose `entries` central-directory entries all name one deflated member of `size`
    bytes of `fill` (the same local header and data): a few KB that hold entries × size bytes."""
    import struct
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    crc = 0
    chunk = fill * (1024 * 1024 // len(fill))
    with open(path, "wb") as out:
        encoded = name.encode()
        local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, 0, 0, 0, len(encoded), 0)
        out.write(local + encoded)
        compressed = 0
        left = size
        while left:
            piece = chunk[: min(left, len(chunk))]
            crc = zlib.crc32(piece, crc)
            data = compressor.compress(piece)
            out.write(data)
            compressed += len(data)
            left -= len(piece)
        tail = compressor.flush()
        out.write(tail)
        compressed += len(tail)
        # the local header's sizes and CRC, now known
        out.seek(14)
        out.write(struct.pack("<III", crc, compressed, size))
        out.seek(0, 2)
        directory_at = out.tell()
        entry = struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, compressed, size, len(encoded), 0, 0, 0, 0, 0, 0
        )
        for _ in range(entries):
            out.write(entry + encoded)
        directory_size = out.tell() - directory_at
        out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, entries, entries, directory_size, directory_at, 0))
    return path
