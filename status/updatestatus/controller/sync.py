"""The Update Status Controller: watches what an update changes and publishes insights.

Informers (the project's one list/watch loop) keep caches of the ClusterVersion, ClusterOperators,
Nodes, MachineConfigPools, MachineConfigs (only their name and release version), the
machine-config-operator Deployment (only its images) and the ConfigMaps of the API. Every change
pokes a coalescing sync loop, which recomputes the insights with the pure functions of
`status.updatestatus.insights` at an injected `now` (only what changed:
`status.updatestatus.controller.incremental`), encodes them, spreads the insights of nodes (node
insights and health insights about a single node) over shard ConfigMaps when one would be too big
(`status.updatestatus.api.sharding`), and the publisher
(`status.updatestatus.controller.publisher`) patches only the keys that changed.

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
from concurrent.futures import ThreadPoolExecutor, wait
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry

from cvo_py import __version__
from cvo_py.runtime import gotext, klog
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
from status.updatestatus.api import metadata, wire
from status.updatestatus.api.encoding import decode_readable
from status.updatestatus.api.names import CONFIGMAP, NAMESPACE, SHARDS_KEY
from status.updatestatus.api.sharding import ShardPlanner, data_size, layout_write_order
from status.updatestatus.api.wire import DATA_LIMIT
from status.updatestatus.controller.alerts import AlertsPoller
from status.updatestatus.controller.incremental import IncrementalInsights
from status.updatestatus.controller.metrics import Metrics
from status.updatestatus.controller.pacing import WritePacer, current_as_of
from status.updatestatus.controller.publisher import Publisher
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
        self.mco = add(
            Informer(
                client,
                DEPLOYMENTS,
                namespace=MCO_NAMESPACE,
                field_selector=f"metadata.name={MCO_DEPLOYMENT}",
                transform=deployment_transform,
            )
        )
        # The ConfigMap API only: RBAC grants list/watch on these names, nothing else.
        self.publisher = Publisher(client, namespace, size_limit, on_change=self._mark, on_written=self._count_write)
        self.cm = add(self.publisher.main)
        for informer in (self.cv, self.co, self.pools, self.mco):
            informer.add_handler(self._on_change)
        self.nodes.add_handler(self._on_node)
        self.mcs.add_handler(self._on_machineconfig)
        self.loop = SyncLoop("update-status-sync", self.sync, resync=resync, min_interval=min_interval)
        self._writers = ThreadPoolExecutor(4, thread_name_prefix="usc-write")
        # Every ConfigMap write takes a token: at most so many writes a second (see `pacing`).
        self.pacer = WritePacer()
        # ConfigMaps whose write was deferred → since when they have not been current (monotonic);
        # every other one is current as of the last sync that went through (`_current_as_of`).
        self._waiting: dict[str, float] = {}
        self._current_as_of = time.monotonic()
        self._lock = threading.Lock()
        self._pending_since: float | None = None
        self._seeded = False
        self.configmap_exists: bool | None = None
        self.omitted: tuple[str, ...] = ()
        self.last_publish: float | None = None  # wall-clock seconds of the last complete publish
        self.problems: tuple[str, ...] = ()
        self._faults: set[str] = set()
        self._unreadable: dict[str, str] = {}  # key of ours → the value last reported unreadable
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
        self._writers.shutdown(wait=True, cancel_futures=True)
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
        writes_before = self.publisher.writes
        main = self.publisher.view(self.configmap)
        if main is not None and not self._seeded:
            self._seed(main)
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
        self._report_faults(data)
        klog.v(4).info(
            "Computed %d insights (%d nodes reassessed) in %.0f ms",
            len(data),
            self.insights.recomputed_nodes,
            (time.monotonic() - started) * 1000,
        )
        self._set_exists(main is not None)
        self.synced.set()
        if main is None:
            return
        plan = self.planner.plan(data, self.insights.node_health)
        self._report_problems(tuple(plan.problems))
        in_use = [n for n in plan.configmaps if n != self.configmap]
        try:
            listed = wire.shard_names(main.get("data") or {})
        except wire.DecodeError as exc:
            listed = []  # someone else's value under our key: rewritten below
            self._report_unreadable(SHARDS_KEY, (main.get("data") or {}).get(SHARDS_KEY), exc)
        stale = sorted({*self.publisher.shards, *listed} - set(in_use) - {self.configmap})
        omitted: list[str] = []
        wrote = 0

        names = [*in_use, self.configmap, *stale]
        self.publisher.watch(names)  # the informers of new shards, all at once
        fits = {name: self.publisher.fit(name, plan.configmaps.get(name, {})) for name in names}
        meta_omitted = [key for fit in fits.values() if fit is not None for key in fit.omitted]
        changed = any(fit is not None and fit.patch for fit in fits.values())
        published_meta, previous_meta = self._previous_metadata(main)
        stamp = gotext.to_now(read_wall)

        def meta(at: int, paced: bool = False) -> str:
            return self._metadata(published_meta, previous_meta, meta_omitted, changed, at, paced)

        metas = {self.configmap: meta(stamp)}

        def publish(name: str) -> tuple[int, list[str]]:
            return self.publisher.publish(name, fits[name], owner=main, meta=metas.get(name))

        deferred: list[str] = []
        need = 1  # tokens the deferred writes wait for
        in_debt = False  # a layout change written beyond the bucket
        now = time.monotonic()  # when the writes are chosen, and charged: they start then
        try:
            if not stale and sorted(listed) == sorted(in_use) and all(self.publisher.view(n) for n in in_use):
                # The usual case: the same shards, each ConfigMap changed independently, in parallel,
                # as many as the pacer lets through now (all of them unless many changes came at once).
                order = [self.configmap, *in_use]
                changing = [n for n in order if self.publisher.changes(n, fits[n], metas.get(n))]
                # until written, a deferred one keeps its place (since when it has not been current)
                self._waiting = waiting = {n: self._waiting.get(n, self._current_as_of) for n in changing}
                told = previous_meta is not None and previous_meta.paced
                chosen, _ = self.pacer.choose_and_tell(now, waiting, self.configmap, told, self._current_as_of)
                deferred = [n for n in waiting if n not in chosen]
                if self.configmap in chosen and deferred:
                    # The stamp says how old the oldest published insight may be.
                    as_of = current_as_of(read_at, waiting, chosen)
                    metas[self.configmap] = meta(stamp - round((read_at - as_of) * gotext.SECOND), paced=True)
                # the main ConfigMap after the others: it never says more is current than they hold
                results = self._write_all(publish, [n for n in in_use if n not in deferred])
                if self.configmap not in deferred:
                    results.append(publish(self.configmap))
            else:
                # The layout changes: in the order that lets a client reading in between find every
                # insight (see `layout_write_order`), once the pacer has room; all that it writes
                # beyond the bucket is paid back after it, while the main ConfigMap says so.
                layout = layout_write_order(in_use, listed, stale)
                room = self.pacer.room(now)
                to_write = [n for n in layout if self.publisher.changes(n, fits[n], metas.get(n))]
                if len(to_write) > room:
                    metas[self.configmap] = meta(stamp, paced=True)
                    to_write = [n for n in layout if self.publisher.changes(n, fits[n], metas.get(n))]
                if self.pacer.wait_for(now, len(to_write)) > 0:
                    deferred, need, results = layout, len(to_write), []
                    self._waiting = {n: self._waiting.get(n, self._current_as_of) for n in to_write}
                else:
                    # those that gain keys, the main ConfigMap, those that lose keys: each group at once
                    main_at = layout.index(self.configmap)
                    results = self._write_all(publish, layout[:main_at])
                    results.append(publish(self.configmap))
                    results.extend(self._write_all(publish, layout[main_at + 1 :]))
                    self._waiting = {}
                    in_debt = len(to_write) > room
            for name in deferred:  # not written, but what it leaves out is still left out
                fit = fits[name]
                omitted.extend(fit.omitted if fit is not None else ())
            for written, skipped in results:
                wrote += written
                omitted.extend(skipped)
        except ApiError:
            if self.metrics:
                self.metrics.writes.labels("error").inc()
            self._still_pending(pending_since)
            raise
        finally:
            # Charged when chosen: charged when done, a bucket full at the start would not refill
            # while they are made (a layout change's 33 writes take seconds on a busy server).
            self.pacer.wrote(now, self.publisher.writes - writes_before)
        self._waiting = {name: since for name, since in self._waiting.items() if name in deferred}
        self._current_as_of = read_at  # every ConfigMap not waiting is current as of the read
        self._report_omitted(tuple(omitted), data)
        if deferred:
            # The rest when the pacer has room (or at the next change), as one more sync: counted
            # from now, when this sync's writes are paid, not from when it chose them.
            self._still_pending(pending_since)
            retry_in = self.pacer.wait_for(time.monotonic(), need)
            self.loop.poke_in(retry_in)
            klog.v(4).info("Writes of %d ConfigMaps deferred %.2f s (many changes at once)", len(deferred), retry_in)
        else:
            self.last_publish = time.time()
            if in_debt:  # once it is paid back, a sync says that writes are no longer held back
                self.loop.poke_in(self.pacer.wait_for(time.monotonic(), 1))
        if not wrote:
            if not deferred:
                klog.v(4).info("ConfigMap API %s/%s is up to date", self.namespace, self.configmap)
            return
        finished = time.monotonic()
        if self.metrics:
            self.metrics.sync_seconds.observe(finished - started)
            if pending_since is not None:
                self.metrics.reaction.observe(finished - pending_since)

    def _write_all(
        self, publish: Callable[[str], tuple[int, list[str]]], names: list[str]
    ) -> list[tuple[int, list[str]]]:
        """`publish` each of `names` in parallel; all have ended when this returns or raises (the
        first failure), so no write of this sync overlaps one of the next."""
        futures = [self._writers.submit(publish, name) for name in names]
        wait(futures)
        return [future.result() for future in futures]

    def _still_pending(self, pending_since: float | None) -> None:
        """What this sync took on is not all written: its changes still count as unprocessed."""
        with self._lock:
            if pending_since is not None and (self._pending_since is None or pending_since < self._pending_since):
                self._pending_since = pending_since

    def _previous_metadata(self, main: JSON) -> tuple[str | None, metadata.PublicationMetadata | None]:
        """The metadata value the main ConfigMap holds, and what it says (None: none, or unreadable)."""
        published = (main.get("data") or {}).get(metadata.META_KEY)
        if published is None:
            return None, None
        try:
            return published, metadata.decode(published)
        except metadata.MetadataError as exc:
            self._report_unreadable(metadata.META_KEY, published, exc)
            return published, None  # someone else's value under our key: rewritten

    def _metadata(
        self,
        published: str | None,
        previous: metadata.PublicationMetadata | None,
        omitted: list[str],
        insights_changed: bool,
        computed_at: int,
        paced: bool = False,
    ) -> str:
        """The metadata value to publish: refreshed when the insights change and once per resync,
        stamped `computed_at` (when all it stands for was current); `paced` while writes wait."""
        desired = metadata.build(
            computed_at, self.identity, __version__, int(self.resync * gotext.SECOND), omitted, paced
        )
        chosen = metadata.refresh(previous, desired, insights_changed)
        return published if chosen is previous and published is not None else metadata.encode(chosen)

    def _report_unreadable(self, key: str, value: object, exc: Exception) -> None:
        """Log, once per value, that a key of ours holds what cannot be read (it is overwritten)."""
        if self._unreadable.get(key) != str(value):
            self._unreadable[key] = str(value)
            log.warning(
                "Overwriting ConfigMap %s/%s key %s, which cannot be read: %s", self.namespace, self.configmap, key, exc
            )

    def _count_write(self) -> None:
        if self.metrics:
            self.metrics.writes.labels("success").inc()

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

    def _set_exists(self, exists: bool) -> None:
        if exists == self.configmap_exists:
            return
        self.configmap_exists = exists
        if exists:
            log.info("ConfigMap %s/%s exists: publishing update status insights", self.namespace, self.configmap)
        else:
            self._seeded = False
            log.info(
                "ConfigMap %s/%s does not exist: nothing to publish until an administrator creates it",
                self.namespace,
                self.configmap,
            )

    def _report_faults(self, data: Mapping[str, str]) -> None:
        """Log each object that newly cannot be assessed (its health insight is published instead)."""
        faults = {k for k in data if k.startswith(UNASSESSABLE_PREFIX)}
        for key in sorted(faults - self._faults):
            log.warning("An object cannot be assessed; publishing health insight %s in its place", key)
        self._faults = faults

    def _report_problems(self, problems: tuple[str, ...]) -> None:
        if problems != self.problems:
            for problem in problems:
                log.error("%s", problem)
        self.problems = problems

    def _report_omitted(self, omitted: tuple[str, ...], data: Mapping[str, str]) -> None:
        if omitted != self.omitted:
            if omitted:
                log.error(
                    "The ConfigMap API in %s would exceed the API server's limit of %d bytes per ConfigMap "
                    "(%d bytes of insights in total): %d insights not published (first: %s)",
                    self.namespace,
                    self.size_limit,
                    data_size(data),
                    len(omitted),
                    ", ".join(omitted[:5]),
                )
            else:
                log.info("The ConfigMap API in %s fits again: all insights published", self.namespace)
        self.omitted = omitted
