"""The Update Status Controller: watches what an update changes and publishes insights.

Informers (the project's one list/watch loop) keep caches of the ClusterVersion, ClusterOperators,
Nodes, MachineConfigPools, MachineConfigs (only their name and release version), the
machine-config-operator Deployment (only its images) and the ConfigMaps of the API. Every change
pokes a coalescing sync loop, which recomputes the insights with the pure functions of
`status.updatestatus.insights` at an injected `now` (only what changed:
`status.updatestatus.controller.incremental`), encodes them, spreads the insights of nodes (node
insights and health insights about a single node) over shard ConfigMaps when one would be too big
(`status.updatestatus.api.sharding`); the publication (`status.updatestatus.controller.publication`)
chooses which ConfigMaps to write now, within the write budget and in an order a reader can
follow, and the publisher (`status.updatestatus.controller.publisher`) patches only the keys that
changed. What the controller logs once per change is `status.updatestatus.controller.reports`'.

The main ConfigMap is never created: an administrator opts in by creating it, and out by deleting
it. Shards are created by the controller only while the main ConfigMap exists, owned by it (so
deleting it garbage-collects them in a real cluster).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry

from cvo_py.runtime import klog
from cvo_py.runtime.informer import DELETED, Informer, InformerSet
from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    JSON,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    NODES,
    ApiError,
    KubeClient,
    Resource,
)
from cvo_py.runtime.loop import SyncLoop
from cvo_py.runtime.promapi import PrometheusAPI
from status.updatestatus.api import wire
from status.updatestatus.api.encoding import decode_readable
from status.updatestatus.api.names import CONFIGMAP, NAMESPACE
from status.updatestatus.api.sharding import ShardPlanner
from status.updatestatus.api.wire import DATA_LIMIT
from status.updatestatus.controller.alerts import AlertsPoller
from status.updatestatus.controller.incremental import IncrementalInsights
from status.updatestatus.controller.metrics import Metrics
from status.updatestatus.controller.publication import Outcome, Publication
from status.updatestatus.controller.publisher import Publisher
from status.updatestatus.controller.reports import Reports
from status.updatestatus.controller.transforms import owned
from status.updatestatus.insights.alerts import live_alert_insights
from status.updatestatus.insights.controlplane import update_started_at
from status.updatestatus.insights.inputs import (
    MCO_DEPLOYMENT,
    MCO_NAMESPACE,
    deployment_transform,
    machineconfig_transform,
    machineconfig_versions,
    mco_image,
    node_transform,
    read_alike,
)

log = logging.getLogger(__name__)

CLUSTERVERSION = "version"
DEPLOYMENTS = Resource("apps/v1", "Deployment", "deployments", True)
UNASSESSABLE_PREFIX = wire.PREFIX_HEALTH + "unassessable-"  # see status.updatestatus.insights.faults


# -- the controller ------------------------------------------------------------------------------


class UpdateStatusController:
    def __init__(
        self,
        client: KubeClient,
        namespace: str = NAMESPACE,
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        resync: float = 30.0,
        min_interval: float = 0.02,
        size_limit: int = DATA_LIMIT,
        registry: CollectorRegistry | None = None,
        identity: str = "",
        alerts_api: PrometheusAPI | None = None,
        alerts_interval: float = 30.0,
    ) -> None:
        self.client = client
        self.identity = identity or f"{socket.gethostname()}_{os.getpid()}"
        self.resync = resync
        self.namespace = namespace
        self.configmap = CONFIGMAP
        self._now = now
        self.size_limit = size_limit
        self.insights = IncrementalInsights()
        self.planner = ShardPlanner()  # fills ConfigMaps to SHARD_BUDGET, in up to MAX_SHARDS shards
        self.informers = InformerSet()
        add = self.informers.add
        # Only the one ClusterVersion oc reads; a field selector keeps the watch to it.
        self.cv = add(Informer(client, CLUSTERVERSIONS, field_selector=f"metadata.name={CLUSTERVERSION}"))
        self.co = add(Informer(client, CLUSTEROPERATORS))
        self.nodes = add(Informer(client, NODES, transform=node_transform))
        self.pools = add(Informer(client, MACHINECONFIGPOOLS))
        self.mcs = add(Informer(client, MACHINECONFIGS, transform=machineconfig_transform))
        mco_selector = f"metadata.name={MCO_DEPLOYMENT}"
        self.mco = add(Informer(client, DEPLOYMENTS, namespace=MCO_NAMESPACE, field_selector=mco_selector,
                                transform=deployment_transform))
        # The ConfigMap API only: RBAC grants list/watch on these names, nothing else.
        self.publisher = Publisher(client, namespace, size_limit, on_change=self._mark, on_written=self._count_write)
        self.cm = add(self.publisher.main)
        for informer in (self.cv, self.co, self.pools, self.mco):
            informer.add_handler(self._on_change)
        self.nodes.add_handler(self._on_node)
        self.mcs.add_handler(self._on_machineconfig)
        self.loop = SyncLoop("update-status-sync", self.sync, resync=resync, min_interval=min_interval)
        self.reports = Reports(namespace, self.configmap, size_limit, UNASSESSABLE_PREFIX)
        self.publication = Publication(self.publisher, self.identity, resync, self.reports.unreadable)
        self._lock = threading.Lock()
        self._pending_since: float | None = None
        self._seeded = False
        self.last_publish: float | None = None  # wall-clock seconds of the last complete publish
        self.counts: Mapping[tuple[str, str], int] = {}
        self.synced = threading.Event()
        self._stopped = threading.Event()
        self._wait_sync: threading.Thread | None = None
        self.metrics = Metrics(self, registry) if registry is not None else None
        # Firing alerts become health insights, as oc shows them (None: not read at all).
        self.alerts = AlertsPoller(alerts_api, alerts_interval, self._mark) if alerts_api is not None else None

    # -- events ----------------------------------------------------------------------------------

    def _mark(self) -> None:
        with self._lock:
            if self._pending_since is None:
                self._pending_since = time.monotonic()
        self.loop.poke()

    def _on_change(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        self._mark()

    def _on_node(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        # Heartbeat-only updates are equal once transformed: nothing to recompute.
        if event_type != DELETED and read_alike(obj, old):
            return
        self._mark()

    def _on_machineconfig(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        # Only the release version matters; a MachineConfig's content changes nothing here.
        if event_type != DELETED and old is not None and machineconfig_versions([obj]) == machineconfig_versions([old]):
            return
        self._mark()

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> UpdateStatusController:
        self.loop.start()
        if self.alerts is not None:
            self.alerts.start()
        self.informers.start()
        self._wait_sync = threading.Thread(target=self._poke_when_synced, name="usc-wait-sync", daemon=True)
        self._wait_sync.start()
        log.info("Update status controller started: publishing to ConfigMap %s/%s", self.namespace, self.configmap)
        return self

    def _poke_when_synced(self) -> None:
        # Empty lists dispatch no event: poke once everything is listed so the first sync happens.
        if self.informers.wait_for_sync_or_stop(self._stopped, lambda: klog.v(2).info("waiting for informers to sync")):
            self._mark()

    def stop(self) -> None:
        """Stops every thread this controller started (loop, writers, informers) and waits for
        them: nothing of it runs, writes or logs after this returns. A ConfigMap write in flight
        finishes (bounded by the request timeout); queued ones are dropped."""
        self._stopped.set()
        if self.alerts is not None:
            self.alerts.stop()
        self.loop.stop()
        self.publication.stop()
        self.informers.stop()
        self.publisher.stop()
        if self._wait_sync is not None:
            self._wait_sync.join(5.0)

    # -- sync ------------------------------------------------------------------------------------

    def sync(self) -> None:
        if not self.informers.wait_for_sync(0):
            return
        started = time.monotonic()
        with self._lock:
            pending_since, self._pending_since = self._pending_since, None
        # What is published from the caches read now is current as of now: the stamp's moment.
        read_at, read_wall = time.monotonic(), self._now()
        main = self.publisher.view(self.configmap)
        if main is not None and not self._seeded:
            self._seed(main)
        data = self._compute(read_wall, started)
        if self.reports.opt_in(main is not None) and main is None:
            self._seeded = False  # seeded again when an administrator opts in again
        self.synced.set()
        if main is None:
            return
        plan = self.planner.plan(data, self.insights.node_health)
        self.reports.layout_problems(tuple(plan.problems))
        try:
            out = self.publication.write(main, plan, read_at, read_wall)
        except ApiError:
            if self.metrics:
                self.metrics.writes.labels("error").inc()
            self._still_pending(pending_since)
            raise
        self.reports.left_out(tuple(out.omitted), data)
        self._after(out, pending_since, started)

    def _compute(self, read_wall: datetime, started: float) -> dict[str, str]:
        """The ConfigMap data of the insights, from the caches as they are now (`read_wall`)."""
        cv = self.cv.get(CLUSTERVERSION)
        data = self.insights.update(
            cv,
            self.co.items(),
            self.nodes.items(),
            self.pools.items(),
            machineconfig_versions(self.mcs.items()),
            read_wall,
            mco_image(self.mco.get(MCO_DEPLOYMENT, MCO_NAMESPACE)),
            alerts=(
                live_alert_insights(self.alerts.reading, update_started_at(cv))
                if self.alerts is not None and cv is not None
                else ()
            ),
        )
        self.counts = self.insights.counts
        self.reports.faults(data)
        klog.v(4).info(
            "Computed %d insights (%d nodes reassessed) in %.0f ms",
            len(data),
            self.insights.recomputed_nodes,
            (time.monotonic() - started) * 1000,
        )
        return data

    def _after(self, out: Outcome, pending_since: float | None, started: float) -> None:
        """What follows a publication: the next sync when writes wait, the metrics of the writes."""
        if out.deferred:
            self._still_pending(pending_since)
            assert out.again_in is not None
            self.loop.poke_in(out.again_in)
            klog.v(4).info(
                "Writes of %d ConfigMaps deferred %.2f s (many changes at once)", len(out.deferred), out.again_in
            )
        else:
            self.last_publish = time.time()
            if out.again_in is not None:  # a layout change written in debt: a sync once it is paid back
                self.loop.poke_in(out.again_in)
        if not out.wrote:
            if not out.deferred:
                klog.v(4).info("ConfigMap API %s/%s is up to date", self.namespace, self.configmap)
            return
        finished = time.monotonic()
        if self.metrics:
            self.metrics.sync_seconds.observe(finished - started)
            if pending_since is not None:
                self.metrics.reaction.observe(finished - pending_since)

    def _still_pending(self, pending_since: float | None) -> None:
        """What this sync took on is not all written: its changes still count as unprocessed."""
        with self._lock:
            if pending_since is not None and (self._pending_since is None or pending_since < self._pending_since):
                self._pending_since = pending_since

    def _count_write(self) -> None:
        if self.metrics:
            self.metrics.writes.labels("success").inc()

    @property
    def omitted(self) -> tuple[str, ...]:
        """The insights the last publication left out (the ConfigMap size limit)."""
        return self.reports.omitted

    @property
    def configmap_exists(self) -> bool | None:
        return self.reports.configmap_exists

    @property
    def sizes(self) -> dict[str, int]:
        """The size of each ConfigMap as last written (bytes of keys and values)."""
        return self.publisher.sizes

    def _seed(self, main: JSON) -> None:
        """Carry the transition times an earlier process published (control plane, pools, health)."""
        self._seeded = True
        data = {k: v for k, v in owned(main.get("data")).items() if not k.startswith(wire.PREFIX_NODE)}
        insights, errors = decode_readable(data)
        for exc in errors:  # overwritten or removed by the next publish, as every key it owns
            log.warning("Ignoring what ConfigMap %s/%s holds: %s", self.namespace, self.configmap, exc)
        self.insights.seed(insights)
