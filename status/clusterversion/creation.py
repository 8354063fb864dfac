"""The ClusterVersion `start` creates when there is none, as upstream does: a random
`spec.clusterID`, `spec.channel` only when the running release names exactly one channel, and no
status (the first status write computes it from the running release)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cvo_py.runtime.kube import CLUSTERVERSIONS
from payload.release import Release

JSON = dict[str, Any]


def default_channel(channels: Sequence[str]) -> str:
    """The channel a newly created ClusterVersion follows: the release's channel when it names
    exactly one; with several, choosing is the administrator's call, so none."""
    return channels[0] if len(channels) == 1 else ""


def new_cluster_version(name: str, running: Release, cluster_id: str) -> JSON:
    """The ClusterVersion `start` creates when there is none; status comes with the first write."""
    spec: JSON = {"clusterID": cluster_id}
    channel = default_channel(running.channels)
    if channel:
        spec["channel"] = channel
    return {
        "apiVersion": CLUSTERVERSIONS.api_version,
        "kind": CLUSTERVERSIONS.kind,
        "metadata": {"name": name},
        "spec": spec,
    }
