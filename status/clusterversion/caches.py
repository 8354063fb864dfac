"""What the ClusterVersion controller reads, as its informers hold it: the ClusterVersion, the
ClusterOperators, the ClusterVersion CRD (its schema decides which capability names status may
carry) and the admin-ack ConfigMaps (Upgradeable's admin-ack source). The composition root builds
the informers; the poller and the metrics read the same caches."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from cvo_py.runtime.informer import Informer, InformerSet
from cvo_py.runtime.kube import CLUSTERVERSIONS, JSON
from status.clusterversion import upgradeable

# The ClusterVersion CRD: its schema decides which capability names status may carry.
CLUSTERVERSION_CRD = f"{CLUSTERVERSIONS.plural}.{CLUSTERVERSIONS.group}"
# The admin-ack ConfigMaps, as (namespace, name).
ADMIN_CONFIGMAPS = (upgradeable.ADMIN_GATES, upgradeable.ADMIN_ACKS)


# What the status side, the metrics and the sync worker read of a ClusterOperator's metadata: the
# worker, reconciling, merges a manifest's metadata into the cached object and writes it back whole,
# so whatever a PUT would otherwise drop (finalizers) is kept too.
_KEPT_METADATA = (
    "name",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "resourceVersion",
    "uid",
    "generation",
)


def slim_clusteroperator(obj: JSON) -> JSON:
    """Keep what status, metrics and the sync worker read from a ClusterOperator (not
    relatedObjects, extension, managedFields)."""
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    slim: JSON = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta[k] for k in _KEPT_METADATA if k in meta},
        "status": {k: status[k] for k in ("conditions", "versions") if k in status},
    }
    if "spec" in obj:
        slim["spec"] = obj["spec"]
    return slim


@dataclass(frozen=True)
class ClusterVersionCaches:
    clusterversion: Informer  # only the operator's own ClusterVersion (CVO_NAME)
    clusteroperators: Informer
    crd: Informer  # only CLUSTERVERSION_CRD
    # The admin-ack ConfigMaps by (namespace, name); empty when Upgradeable does not read them.
    admin: Mapping[tuple[str, str], Informer]

    def informers(self) -> InformerSet:
        """All of them, started and stopped together."""
        return InformerSet([self.clusterversion, self.clusteroperators, self.crd, *self.admin.values()])

    def on_change(self, handler: Callable[[], None]) -> None:
        """Call `handler` on every event of every cache."""
        for informer in self.informers().informers:
            informer.add_handler(lambda _type, _obj, _old: handler())

    def wait_for_sync_or_stop(self, stop: threading.Event, waiting: Callable[[], None]) -> bool:
        return self.informers().wait_for_sync_or_stop(stop, waiting)

    def admin_pending(self) -> bool:
        """An admin-ack ConfigMap is neither read yet nor failing to be read."""
        return any(not i.has_synced and not i.stats.last_error for i in self.admin.values())

    def admin_configmap(self, where: tuple[str, str]) -> upgradeable.ConfigMapRead | None:
        """An admin-ack ConfigMap as its informer holds it (None when not watched)."""
        informer = self.admin.get(where)
        if informer is None:
            return None
        namespace, name = where
        if not informer.has_synced:
            return upgradeable.ConfigMapRead(error=informer.stats.last_error or "not read yet")
        found = informer.get(name, namespace)
        if found is None:
            # Worded as upstream's cache (lister) words it: the resource in the singular.
            return upgradeable.ConfigMapRead(error=f'configmap "{name}" not found')
        data = found.get("data") or {}
        return upgradeable.ConfigMapRead({str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {})
