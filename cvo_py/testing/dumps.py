"""Turn the objects of an oc snapshot into the dumps support engineers get: a must-gather tree (per
object files, or list files), a must-gather archive, an Insights Operator archive; and scale a
snapshot up by copying its nodes."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from cvo_py import gotext
from status.updatestatus.snapshot import Snapshot

JSON = dict[str, Any]
IMAGE_DIR = "quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-0123456789abcdef"
MCO_GROUP = "machineconfiguration.openshift.io"


def go_time(ns: int) -> str:
    """Go's default time.Time format, as oc writes must-gather `timestamp` lines (with `m=`)."""
    sec, frac = divmod(ns, gotext.SECOND)
    text = gotext.format_time(sec * gotext.SECOND, nanos=False)[:-1].replace("T", " ")
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
    stamp = (go_time(gathered_at) + "\n" + go_time(gathered_at + 90 * gotext.SECOND) + "\n").encode()
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


def insights_files(snap: Snapshot, *, obfuscated: bool = False) -> dict[str, bytes]:
    """An Insights Operator archive's files (JSON, one object per file)."""
    files: dict[str, bytes] = {"config/version.json": json.dumps(snap.clusterversion).encode()}
    for obj in snap.operators:
        files[f"config/clusteroperator/{_name(obj)}.json"] = json.dumps(obj).encode()
    # operator resources in subfolders are not ClusterOperators
    files["config/clusteroperator/operator.openshift.io/console/cluster.json"] = b'{"kind": "Console"}'
    for folder, objects in (("node", snap.nodes), ("machineconfigpools", snap.pools)):
        for obj in objects:
            files[f"config/{folder}/{_name(obj)}.json"] = json.dumps(obj).encode()
    for obj in snap.machineconfigs:
        files[f"config/machineconfigs/{_name(obj)}.json"] = json.dumps(obj).encode()
    gathers = {"status_reports": [{"name": "clusterconfig/nodes", "duration_in_ms": 12}], "uptime_seconds": 3600}
    gathers["is_global_obfuscation_enabled"] = obfuscated
    files["insights-operator/gathers.json"] = json.dumps(gathers).encode()
    if snap.alerts is not None:
        files["config/alerts.json"] = json.dumps(to_alertmanager(snap.alerts)).encode()
    return files


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
