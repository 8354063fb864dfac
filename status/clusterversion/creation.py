"""The ClusterVersion `start` creates when there is none (never created, or deleted while running),
as upstream does: a random `spec.clusterID`, `spec.channel` only when the running release names
exactly one channel, and no status (the first status write computes it from the running release)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from cvo_py.runtime.kube import CLUSTERVERSIONS, ApiError, KubeClient
from payload.release import Release

log = logging.getLogger(__name__)

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


def get_or_create(
    client: KubeClient, name: str, running: Release, new_cluster_id: Callable[[], str], seen_uid: str | None
) -> tuple[JSON, bool]:
    """The ClusterVersion `name` read live (a cache may lag our own create), else created; whether
    this call created it. `seen_uid`: the one this run synced last, if any (it was deleted). API
    errors propagate: the caller retries with backoff."""
    try:
        return client.get(CLUSTERVERSIONS, name), False
    except ApiError as exc:
        if not exc.is_not_found():
            raise
    body = new_cluster_version(name, running, new_cluster_id())
    if seen_uid is not None:
        log.warning("ClusterVersion %s (uid %s) was deleted while running; recreating it", name, seen_uid)
    try:
        created = client.create(CLUSTERVERSIONS, body)
    except ApiError as exc:
        if not exc.is_already_exists():
            raise
        return client.get(CLUSTERVERSIONS, name), False  # created meanwhile by someone else
    spec = body["spec"]
    log.info(
        "Created ClusterVersion %s for release %s: clusterID %s, channel %s",
        name,
        running.label(),
        spec["clusterID"],
        json.dumps(spec.get("channel", "")),
    )
    return created, True
