"""The ClusterVersion status fields the available-updates poller fills (availableUpdates,
conditionalUpdates and their risks, what the desired release lacks), and its RetrievedUpdates
condition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from status.clusterversion.conditions import JSON, Verdict


def with_available_updates(
    status: Mapping[str, Any], updates: Mapping[str, Any] | None, *, release_architecture: bool = False
) -> JSON:
    """`status` with availableUpdates, conditionalUpdates (and conditionalUpdateRisks) from the
    poller's findings, and what the desired release lacks of version, url and channels filled from
    the graph (`described_by`); unchanged before any. The releases' architecture (`Multi` for a
    multi-architecture node) is kept only with the ImageStreamImportMode gate
    (`release_architecture`), as upstream."""
    out = dict(status)
    if updates is None:
        return out
    available = updates.get("availableUpdates")
    out["availableUpdates"] = available if release_architecture or not available else [
        _without_architecture(r) for r in available
    ]
    for key in ("conditionalUpdates", "conditionalUpdateRisks"):  # the risks only with their gate
        if updates.get(key):
            out[key] = updates[key]
        else:
            out.pop(key, None)
    if not release_architecture and out.get("conditionalUpdates"):
        out["conditionalUpdates"] = [
            {**u, "release": _without_architecture(u["release"])} if isinstance(u.get("release"), dict) else u
            for u in out["conditionalUpdates"]
        ]
    desired = out.get("desired")
    found = described_by(desired, updates) if isinstance(desired, dict) else None
    if isinstance(desired, dict) and found is not None:
        filled = dict(desired)
        for key in ("version", "url", "channels"):
            if found.get(key) and not filled.get(key):
                filled[key] = found[key]
        out["desired"] = filled
    return out


def described_by(desired: Mapping[str, Any], updates: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The release of the update service's answer that describes `desired`, as upstream finds it:
    by digest first (the graph's current node, then the available, then the conditional updates),
    else by version. A version can name several payloads (one per architecture), a digest only one."""
    conditional = updates.get("conditionalUpdates") or ()
    releases = [updates.get("current"), *(updates.get("availableUpdates") or ()),
                *((u.get("release") if isinstance(u, Mapping) else None) for u in conditional)]
    candidates = [r for r in releases if isinstance(r, Mapping)]
    for key in ("image", "version"):
        wanted = desired.get(key)
        if wanted:
            for release in candidates:
                if release.get(key) == wanted:
                    return release
    return None


def _without_architecture(release: Any) -> Any:
    if isinstance(release, dict) and "architecture" in release:
        return {k: v for k, v in release.items() if k != "architecture"}
    return release


def retrieved_updates(updates: Mapping[str, Any] | None, existing: Mapping[str, Any] | None) -> Verdict | None:
    """RetrievedUpdates as the poller reports it; before any report, upstream's first-sync
    placeholder (False, no reason or message) when there is none (None: keep the existing one)."""
    if updates is None:
        return Verdict("False") if existing is None else None
    condition = updates["condition"]
    return Verdict(condition["status"], condition.get("reason", ""), condition.get("message", ""))
