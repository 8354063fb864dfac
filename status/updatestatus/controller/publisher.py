"""Writing the ConfigMaps of the API: each one's freshest view, what bringing its keys to what the
controller wants takes, and the PATCH or CREATE that does it.

The Publisher owns the ConfigMap informers (the main ConfigMap's and each shard's, started when a
shard is first needed) and remembers its own writes: a write's response is fresher than the cache
until the watch delivers it, and the watch's echo of a write needs no sync.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

from cvo_py.runtime import klog
from cvo_py.runtime.informer import MODIFIED, Informer
from cvo_py.runtime.kube import CONFIGMAPS, JSON, ApiError, KubeClient
from status.updatestatus.api import metadata
from status.updatestatus.api.names import CONFIGMAP
from status.updatestatus.api.sharding import data_size
from status.updatestatus.controller.patches import SizedPlan, apply_patch, fit_patch, resource_version_newer
from status.updatestatus.controller.transforms import insight_keys, owned

log = logging.getLogger(__name__)

SHARD_LABEL = "update-status.openshift.io/shard"


class Publisher:
    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        size_limit: int,
        *,
        on_change: Callable[[], None],
        on_written: Callable[[], None] = lambda: None,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.configmap = CONFIGMAP
        self.size_limit = size_limit
        self._on_change = on_change  # a ConfigMap changed other than by our own write
        self._on_written = on_written
        self.main = self._configmap_informer(self.configmap)  # started with the controller's informers
        self.shards: dict[str, Informer] = {}  # started when a shard is first needed
        # Per ConfigMap: our last write's response (fresher than the cache until its watch event),
        # and the owned keys as that write left them.
        self._written: dict[str, JSON] = {}
        self._published: dict[str, dict[str, str]] = {}
        self.sizes: dict[str, int] = {}
        self.writes = 0  # counted under `_lock`: ConfigMaps are written from several threads at once
        self._lock = threading.Lock()

    def stop(self) -> None:
        """Stops the shards' informers (the main one stops with the controller's)."""
        for informer in list(self.shards.values()):
            informer.stop()

    def _configmap_informer(self, name: str) -> Informer:
        informer = Informer(self.client, CONFIGMAPS, namespace=self.namespace, field_selector=f"metadata.name={name}")

        def on_event(event_type: str, obj: JSON, old: JSON | None) -> None:
            # The echo of our own write (or a change to keys we do not own) needs no sync: without
            # this, an insight that varies with `now` would make every write trigger the next one.
            if event_type == MODIFIED and owned(obj.get("data")) == self._published.get(name):
                return
            self._on_change()

        informer.add_handler(on_event)
        return informer

    def watch(self, names: Iterable[str]) -> None:
        """Watch every shard among `names` not watched yet: their informers start together (a
        layout change at 5,000 nodes adds 16), then each is waited for until it has listed."""
        new = [name for name in dict.fromkeys(names) if name != self.configmap and name not in self.shards]
        for name in new:
            self.shards[name] = self._configmap_informer(name).start()
        for name in new:
            if not self.shards[name].wait_for_sync(10.0):
                raise RuntimeError(f"could not list ConfigMap {self.namespace}/{name}")

    def _informer_for(self, name: str) -> Informer:
        if name == self.configmap:
            return self.main
        if name not in self.shards:
            self.watch([name])
        return self.shards[name]

    def view(self, name: str) -> JSON | None:
        """The freshest view of one ConfigMap: the cache, or our own write until the cache has it."""
        informer = self._informer_for(name)
        cached = informer.get(name, self.namespace)
        written = self._written.get(name)
        if written is not None:
            written_rv = written["metadata"].get("resourceVersion")
            if cached is not None:
                same = cached["metadata"].get("uid") == written["metadata"].get("uid")
                if same and resource_version_newer(written_rv, cached["metadata"].get("resourceVersion")):
                    return written
            elif not resource_version_newer(informer.resource_version, written_rv):
                return written  # the watch has not yet reached our write
            del self._written[name]
        return cached

    def _limit(self, name: str) -> int:
        # the main ConfigMap keeps room for the metadata key
        return self.size_limit - metadata.RESERVED if name == self.configmap else self.size_limit

    def fit(self, name: str, desired: dict[str, str]) -> SizedPlan | None:
        """What bringing one ConfigMap's insight keys to `desired` takes (None: nothing to do).

        The metadata key is left alone here (`publish` adds it to the main ConfigMap's patch)."""
        current = self.view(name)
        if current is None:
            if name == self.configmap or not desired:
                return None  # the main ConfigMap is never created; a stale shard already gone
            return fit_patch({}, desired, self.size_limit)
        data = current.get("data") or {}
        published = self._published.get(name)
        if published is not None and insight_keys(published) == desired and insight_keys(data) == desired:
            return None  # the common case at scale: this ConfigMap did not change
        plan = fit_patch(data, desired, self._limit(name))
        if metadata.META_KEY in plan.patch and name == self.configmap:
            patch = {k: v for k, v in plan.patch.items() if k != metadata.META_KEY}
            plan = SizedPlan(patch, plan.size, plan.omitted)
        return plan

    def _write_plan(self, name: str, plan: SizedPlan | None, meta: str | None) -> tuple[JSON | None, SizedPlan | None]:
        """(The ConfigMap as last seen, None when it does not exist; what writing it takes: `plan`
        from `fit`, with the main ConfigMap's metadata key set to `meta`; None for nothing.)"""
        current = self.view(name)
        if current is None:
            return None, (plan if name != self.configmap else None)
        if meta is not None and (current.get("data") or {}).get(metadata.META_KEY) != meta:
            patch = dict(plan.patch) if plan is not None else {}
            patch[metadata.META_KEY] = meta
            size = plan.size if plan is not None else data_size(current.get("data") or {})
            plan = SizedPlan(patch, size, plan.omitted if plan is not None else ())
        return current, plan

    def changes(self, name: str, plan: SizedPlan | None, meta: str | None) -> bool:
        """Whether `publish` would write this ConfigMap."""
        current, plan = self._write_plan(name, plan, meta)
        return plan is not None and (current is None or bool(plan.patch))

    def publish(self, name: str, plan: SizedPlan | None, owner: JSON, meta: str | None = None) -> tuple[int, list[str]]:
        """Bring one ConfigMap's owned keys to what `plan` (from `fit`) says (and the main one's
        metadata key to `meta`); returns (writes made, keys omitted)."""
        current, plan = self._write_plan(name, plan, meta)
        if current is None:
            return self._create_shard(name, plan, owner) if plan is not None else (0, [])
        if plan is None:
            return 0, []
        self.sizes[name] = plan.size
        if not plan.patch:
            return 0, list(plan.omitted)
        # Expect the echo before sending: the watch event may arrive before the response.
        before = self._published.get(name)
        self._published[name] = owned(apply_patch(current.get("data"), plan.patch))
        try:
            written = self.client.patch(CONFIGMAPS, name, {"data": plan.patch}, self.namespace)
        except ApiError as exc:
            self._restore_published(name, before)
            if exc.is_not_found():
                # Deleted between the cache and the write: the watch will tell us what to do next.
                self._written.pop(name, None)
                return 0, list(plan.omitted)
            raise
        self._record(name, written)
        changed = sum(1 for v in plan.patch.values() if v is not None)
        klog.v(2).info(
            "Patched ConfigMap %s/%s: %d insights written, %d removed (%d bytes)",
            self.namespace,
            name,
            changed,
            len(plan.patch) - changed,
            plan.size,
        )
        return 1, list(plan.omitted)

    def _create_shard(self, name: str, plan: SizedPlan, owner: JSON) -> tuple[int, list[str]]:
        body: JSON = {
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "labels": {SHARD_LABEL: "nodes"},
                # Deleting the main ConfigMap (opting out) garbage-collects the shards.
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "name": CONFIGMAP,
                        "uid": owner["metadata"]["uid"],
                    }
                ],
            },
            "data": {k: v for k, v in plan.patch.items() if v is not None},
        }
        before = self._published.get(name)
        self._published[name] = owned(body["data"])
        try:
            written = self.client.create(CONFIGMAPS, body, self.namespace)
        except ApiError as exc:
            self._restore_published(name, before)
            if exc.is_already_exists():
                self._on_change()  # our cache is behind: try again with the real content
                return 0, []
            raise
        self._record(name, written)
        self.sizes[name] = plan.size
        log.info("Created ConfigMap %s/%s for %d insights of nodes", self.namespace, name, len(body["data"]))
        return 1, list(plan.omitted)

    def _restore_published(self, name: str, before: dict[str, str] | None) -> None:
        if before is None:
            self._published.pop(name, None)
        else:
            self._published[name] = before

    def _record(self, name: str, written: JSON) -> None:
        self._written[name] = written
        self._published[name] = owned(written.get("data"))
        with self._lock:
            self.writes += 1
        self._on_written()
