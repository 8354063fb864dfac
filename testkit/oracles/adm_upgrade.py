"""What `oc adm upgrade` (no target) prints for a ClusterVersion, by oc's rules (pure), and an
oc-style snapshot of a ClusterVersion and its ClusterOperators for `upgrade-status`.

For the demo and the tests that show a ClusterVersion the way an admin reads it. `adm_upgrade`
returns (stdout, stderr): oc prints its warnings on stderr.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from status.updatestatus.client.render.tabwriter import TabWriter
from updateservice import semver

NO_UPDATES = ("No updates available. You may still upgrade to a specific release image with --to-image or wait for "
              "new updates to be available.")


def _condition(cv: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    for condition in (cv.get("status") or {}).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == type_:
            return condition
    return None


def _indent(message: Any) -> str:
    return str(message or "").replace("\n", "\n  ")


def _block(title: str, condition: Mapping[str, Any]) -> str:
    return f"{title}\n\n  Reason: {condition.get('reason', '')}\n  Message: {_indent(condition.get('message'))}\n\n"


def _by_version(items: list[Any], version: Any) -> list[Any]:
    order = semver.descending([str(version(i)) for i in items])
    rank = {v: n for n, v in enumerate(order)}
    return sorted(items, key=lambda i: rank[str(version(i))])


def adm_upgrade(cv: Mapping[str, Any], include_not_recommended: bool = False) -> tuple[str, str]:
    out: list[str] = []
    err: list[str] = []
    status = cv.get("status") or {}
    spec = cv.get("spec") or {}
    failing = _condition(cv, "Failing")
    if failing is None:
        err.append("warning: No current Failing info, see `oc describe clusterversion` for more details.\n")
    elif failing.get("status") != "False":
        out.append(_block(f"Failing={failing.get('status')}:", failing))
    progressing = _condition(cv, "Progressing")
    if progressing is not None and progressing.get("message"):
        message = _indent(progressing["message"])
        out.append(f"info: An upgrade is in progress. {message}\n" if progressing.get("status") == "True"
                   else f"{message}\n")
    else:
        err.append("warning: No current Progressing info, see `oc describe clusterversion` for more details.\n")
    out.append("\n")
    upgradeable = _condition(cv, "Upgradeable")
    if upgradeable is not None and upgradeable.get("status") == "False":
        out.append(_block("Upgradeable=False", upgradeable))
    accepted = _condition(cv, "ReleaseAccepted")
    if accepted is not None and accepted.get("status") != "True":
        out.append(_block(f"ReleaseAccepted={accepted.get('status')}", accepted))
    channel = spec.get("channel")
    if channel:
        upstream = spec.get("upstream")
        out.append(f"Upstream: {upstream}\n" if upstream
                   else "Upstream is unset, so the cluster will use an appropriate default.\n")
        channels = (status.get("desired") or {}).get("channels") or []
        out.append(f"Channel: {channel} (available channels: {', '.join(channels)})\n" if channels
                   else f"Channel: {channel}\n")
    retrieved = _condition(cv, "RetrievedUpdates")
    retrieval_failed = retrieved is not None and retrieved.get("status") == "False"
    available = list(status.get("availableUpdates") or [])
    if available:
        table = TabWriter(padding=1, minwidth=14)
        table.write("  VERSION\tIMAGE\n")
        for release in _by_version(available, lambda r: r.get("version", "")):
            table.write(f"  {release.get('version', '')}\t{release.get('image', '')}\n")
        out.append("\nRecommended updates:\n\n" + table.flush())
        if retrieval_failed and retrieved is not None:
            err.append(f"warning: Cannot refresh available updates:\n  Reason: {retrieved.get('reason', '')}\n"
                       f"  Message: {_indent(retrieved.get('message'))}\n\n")
    elif retrieval_failed and retrieved is not None:
        err.append(f"warning: Cannot display available updates:\n  Reason: {retrieved.get('reason', '')}\n"
                   f"  Message: {_indent(retrieved.get('message'))}\n\n")
    else:
        out.append(NO_UPDATES + "\n")
    not_recommended = []
    unknown = False
    for update in status.get("conditionalUpdates") or []:
        recommended = next((c for c in update.get("conditions") or [] if c.get("type") == "Recommended"), None)
        if recommended is not None and recommended.get("status") != "True":
            not_recommended.append((update, recommended))
            unknown = unknown or recommended.get("status") != "False"
    if include_not_recommended:
        if not_recommended:
            out.append("\nUpdates with known issues:\n")
            for update, recommended in _by_version(not_recommended, lambda p: p[0]["release"].get("version", "")):
                release = update.get("release") or {}
                out.append(f"\n  Version: {release.get('version', '')}\n  Image: {release.get('image', '')}\n"
                           f"  Reason: {recommended.get('reason', '')}\n"
                           f"  Message: {_indent(str(recommended.get('message', '')).strip())}\n")
        else:
            out.append("\nNo updates which are not recommended based on your cluster configuration are available.\n")
    elif not_recommended:
        q = ', or where the recommended status is "Unknown",' if unknown else ""
        out.append(f"\nAdditional updates which are not recommended{q} for your cluster configuration are available, "
                   "to view those re-run the command with --include-not-recommended.\n")
    return "".join(out), "".join(err)


def write_snapshot(directory: Path, cv: Mapping[str, Any], operators: Sequence[Mapping[str, Any]]) -> Path:
    """`directory/cluster-cv.yaml` and its siblings as `upgrade-status --mock-clusterversion` reads
    them: the ClusterVersion, the ClusterOperators, and no pools, nodes or MachineConfigs."""
    directory.mkdir(parents=True, exist_ok=True)

    def listed(kind: str, api_version: str, items: Sequence[Mapping[str, Any]]) -> str:
        objects = [{"apiVersion": api_version, "kind": kind, **dict(item)} for item in items]
        return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects})

    cv_path = directory / "cluster-cv.yaml"
    cv_path.write_text(yaml.safe_dump({"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", **dict(cv)}))
    (directory / "cluster-co.yaml").write_text(listed("ClusterOperator", "config.openshift.io/v1", operators))
    (directory / "cluster-mc.yaml").write_text(listed("MachineConfig", "machineconfiguration.openshift.io/v1", []))
    (directory / "cluster-mcp.yaml").write_text(listed("MachineConfigPool", "machineconfiguration.openshift.io/v1", []))
    (directory / "cluster-node.yaml").write_text(listed("Node", "v1", []))
    return cv_path
