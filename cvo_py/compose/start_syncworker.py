"""The sync worker as `start` runs it: the running release's payload loaded with the load-time
selection, the applier that speaks as `cluster-version-operator/<version>`, the loop of passes
on the ClusterVersion side's ClusterOperator informer, the channel of its reports, and the loader
of retrieved payloads (`syncworker/`; docs/applying.md)."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from typing import Protocol

from cvo_py.runtime.gotext.quoting import escape
from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import KubeClient
from payload.release import Release
from payload.retrieval import ManifestLoader, PayloadRefused
from status.clusterversion.featuregates import Features
from status.clusterversion.workerlink import SyncWorkerLink, Worker
from syncworker.applier import Applier, user_agent
from syncworker.channel import STATUS_INTERVAL, ReportChannel
from syncworker.load import LoadError, Payload, load_payload, load_running_payload
from syncworker.passes import Timing, reconcile_interval
from syncworker.select import Selection
from syncworker.worker import SyncWorker

log = logging.getLogger(__name__)


class WorkerLoop(Worker, Protocol):
    """The loop of passes (`syncworker.worker.SyncWorker`), as the ClusterVersion side runs it:
    the controller's `Worker`, started and stopped."""

    def start(self) -> object: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class SyncWorkerSide:
    """The sync worker as `start` runs it: the running release's payload (None when it could not
    be loaded, `refused` saying why), the applier, the loop of passes and the channel of its
    reports, and the loader of retrieved payloads."""

    worker: WorkerLoop
    applier: Applier
    channel: ReportChannel
    local: Payload | None
    selection: Selection
    load: ManifestLoader
    refused: str = ""

    def link(self) -> SyncWorkerLink:
        return SyncWorkerLink(
            self.worker, self.channel, self.local, self.selection, self.applier.pending_deletions, self.refused
        )


def load_selection(profile: str, exclude: str, features: Features) -> Selection:
    """What payloads are loaded with: CLUSTER_PROFILE, EXCLUDE_MANIFESTS, the cluster's feature set
    and the gates enabled for the running version."""
    return Selection(
        profile=profile,
        exclude=exclude,
        feature_set=features.feature_set,
        enabled_gates=features.gates,
    )


def build_syncworker(
    client: KubeClient,
    release: Release,
    payload_dir: str,
    selection: Selection,
    clusteroperators: Informer,
    *,
    timing: Timing | None = None,
    status_interval: float = STATUS_INTERVAL,
) -> SyncWorkerSide:
    """The sync worker: the running `release`'s payload loaded from `payload_dir` with the
    load-time `selection`, an applier whose requests say `cluster-version-operator/<version>`, the
    loop of passes (`timing`; by default upstream's interval, 2 minutes × rand[1, 2)) reading
    ClusterOperators from the ClusterVersion side's informer (`clusteroperators`, the one watch),
    and the channel that throttles the status syncs its reports cause (one per `status_interval`,
    two at once). A payload root that cannot be loaded is refused whole: nothing is applied, and
    ReleaseAccepted says why."""
    local: Payload | None = None
    refused = ""
    try:
        local = load_running_payload(payload_dir, release=release, selection=selection)
        log.info(
            "Loaded the running release's payload from %s: %d manifests, versionHash %s",
            escape(payload_dir),
            len(local.manifests),
            local.version_hash,
        )
    except LoadError as exc:
        refused = exc.message
        log.error("The running release's payload cannot be loaded, nothing will be applied: %s", exc.message)

    def load(directory: str, image: str) -> object:
        if local is not None and directory == payload_dir:
            return local
        try:
            return load_payload(directory, release_image=image, selection=selection)
        except LoadError as exc:
            raise PayloadRefused(exc.message) from None

    version = release.version or "unknown"
    applier = Applier(KubeClient(client.config, user_agent=user_agent(version), timeout=client.timeout))
    channel = ReportChannel(interval=status_interval)
    worker = SyncWorker(
        applier, clusteroperators, channel.publish, timing or Timing(interval=reconcile_interval(random.random()))
    )
    return SyncWorkerSide(worker, applier, channel, local, selection, load, refused)
