"""CVO metrics computed at scrape time from the caches (a prometheus `Collector`).

Upstream's names, labels and values: `cluster_version`, `cluster_version_available_updates`,
`cluster_version_capability`, `cluster_operator_up`, `cluster_operator_conditions`,
`cluster_operator_condition_transitions`, `cluster_installer` (the sync worker's
`cluster_version_payload` and `cluster_operator_payload_errors` are in
`status.clusterversion.workermetrics`); plus cvo-py's status-write metrics
(`cluster_version_status_write_*`, `cluster_version_status_pruned_capabilities`).

`families(...)` is a pure function of plain dicts; `StatusCollector` only reads the caches.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from cvo_py.runtime.gotext.times import epoch_seconds
from cvo_py.runtime.informer import MODIFIED, Informer, InformerSet
from cvo_py.runtime.kube import CONFIGMAPS, KubeClient
from cvo_py.runtime.safeload import DocumentError, FileMissing
from payload.release import IMAGE_REFERENCES, IMAGE_REFERENCES_MAX_BYTES, Release, read_payload_json
from status.clusterversion import capabilities
from status.clusterversion.conditions import find_condition

JSON = dict[str, Any]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WriteCounts:
    writes: int = 0
    unchanged: int = 0
    conflicts: int = 0
    failures: int = 0
    rejections: Mapping[str, int] = field(default_factory=dict)
    pruned: Mapping[str, Sequence[str]] = field(default_factory=dict)


def operator_version(co: Mapping[str, Any]) -> str:
    """A ClusterOperator's `operator` version ("" when it reports none)."""
    for entry in (co.get("status") or {}).get("versions") or []:
        if isinstance(entry, dict) and entry.get("name") == "operator":
            return str(entry.get("version") or "")
    return ""


def _seconds(text: Any) -> float:
    return epoch_seconds(text) or 0.0  # a metric's value: 0 when there is no time


def _completed(history: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [h for h in history if h.get("state") == "Completed"]


_CLUSTER_VERSION_HELP = (
    "Cluster version timestamps (Unix seconds) by type: current (the release this operator runs; its "
    "payload's creation time, 0 when unknown), initial (oldest history entry; object creation), cluster "
    "(the running release; object creation), completed (newest completed update), desired (a requested "
    "release other than the running one; latest status change), failure (Failing=True; its transition), "
    "updating (an update in progress; its start). from_version is the previously completed release."
)


def cluster_version_family(
    cv: Mapping[str, Any] | None, running: Release, payload_created: float = 0.0
) -> GaugeMetricFamily:
    """`cluster_version` as upstream computes it. "Running" is the release this operator runs
    (not status.desired); "completed" the newest Completed history entry."""
    family = GaugeMetricFamily(
        "cluster_version", _CLUSTER_VERSION_HELP, labels=["type", "version", "image", "from_version"]
    )
    status = (cv or {}).get("status") or {}
    history: list[Mapping[str, Any]] = [h for h in status.get("history") or [] if isinstance(h, dict)]
    completed = _completed(history)
    last_completed_version = str(completed[0].get("version") or "") if completed else ""

    family.add_metric(["current", running.version, running.image, last_completed_version], payload_created)
    if cv is None:
        return family
    created = _seconds((cv.get("metadata") or {}).get("creationTimestamp"))
    initial = history[-1] if history else {}
    family.add_metric(["initial", str(initial.get("version") or ""), str(initial.get("image") or ""), ""], created)
    # Any Completed entry, the installation's included, makes the oldest version the one updated from.
    from_version = str(initial.get("version") or "") if completed else ""
    family.add_metric(["cluster", running.version, running.image, from_version], created)
    if completed:
        newest = completed[0]
        older = str(completed[1].get("version") or "") if len(completed) > 1 else ""
        family.add_metric(
            ["completed", str(newest.get("version") or ""), str(newest.get("image") or ""), older],
            _seconds(newest.get("completionTime")),
        )
    requested = (cv.get("spec") or {}).get("desiredUpdate")
    update: Mapping[str, Any] = requested if isinstance(requested, dict) else {}
    # A version-only (or acceptRisks-only) desiredUpdate has no image: it differs too.
    update_differs = isinstance(requested, dict) and str(update.get("image") or "") != running.image
    if update_differs:
        family.add_metric(
            ["desired", str(update.get("version") or ""), str(update.get("image") or ""), last_completed_version],
            _last_change(created, history, status),
        )
    failing = find_condition(status.get("conditions") or [], "Failing")
    if failing is not None and failing.get("status") == "True":
        if update_differs:
            version, image = str(update.get("version") or ""), str(update.get("image") or "")
        else:
            version, image = running.version, running.image
        family.add_metric(
            ["failure", version, image, last_completed_version], _seconds(failing.get("lastTransitionTime"))
        )
    if history and history[0].get("state") == "Partial":
        head = history[0]
        family.add_metric(
            ["updating", str(head.get("version") or ""), str(head.get("image") or ""), last_completed_version],
            _seconds(head.get("startedTime")),
        )
    return family


def _last_change(created: float, history: Sequence[Mapping[str, Any]], status: Mapping[str, Any]) -> float:
    """The latest time the ClusterVersion's status says something changed (its creation, the newest
    history entry's start and completion, a condition's transition)."""
    times = [created]
    if history:
        times += [_seconds(history[0].get("startedTime")), _seconds(history[0].get("completionTime"))]
    times += [_seconds(c.get("lastTransitionTime")) for c in status.get("conditions") or [] if isinstance(c, dict)]
    return max(times)


@dataclass(frozen=True)
class InstallerConfigMaps:
    """What the installer left in openshift-config: `openshift-install` (by openshift-install) or
    else `openshift-install-manifests` (by other installers); `synced` once both were read."""

    synced: bool = False
    install: Mapping[str, Any] | None = None
    manifests: Mapping[str, Any] | None = None


def installer_family(installer: InstallerConfigMaps) -> GaugeMetricFamily | None:
    """`cluster_installer{type,version,invoker} 1` as upstream reports it; None until the
    ConfigMaps were read (upstream reports nothing on a read error)."""
    if not installer.synced:
        return None
    family = GaugeMetricFamily(
        "cluster_installer",
        "1, labelled with how the cluster was installed: type openshift-install (ConfigMap openshift-install) "
        "or other (openshift-install-manifests), the installer's version and invoker (<missing> when not "
        "recorded); all empty when neither ConfigMap exists.",
        labels=["type", "version", "invoker"],
    )
    found, kind = (installer.install, "openshift-install") if installer.install is not None else (
        installer.manifests, "other"
    )
    if found is None:
        family.add_metric(["", "", ""], 1.0)
        return family
    data = found.get("data") or {}
    version = str(data["version"]) if "version" in data else "<missing>"
    invoker = str(data["invoker"]) if "invoker" in data else "<missing>"
    family.add_metric([kind, version, invoker], 1.0)
    return family


def condition_types_changed(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[str]:
    """The condition types whose status differs between two versions of a ClusterOperator,
    appeared or vanished (what upstream counts on each update event)."""

    def statuses(co: Mapping[str, Any] | None) -> dict[str, str]:
        conditions = ((co or {}).get("status") or {}).get("conditions") or []
        return {str(c.get("type")): str(c.get("status")) for c in conditions if isinstance(c, dict) and c.get("type")}

    before, after = statuses(old), statuses(new)
    return sorted(t for t in before.keys() | after.keys() if before.get(t) != after.get(t))


class ConditionTransitions:
    """Counts ClusterOperator condition transitions by (operator, type) since this process started,
    fed by the ClusterOperator informer's update events (a relist's too)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], int] = {}

    def observe(self, event: str, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
        if event != MODIFIED or old is None:
            return  # upstream counts update events only
        name = str((obj.get("metadata") or {}).get("name") or "")
        changed = condition_types_changed(old, obj)
        if changed:
            with self._lock:
                for type_ in changed:
                    self._counts[(name, type_)] = self._counts.get((name, type_), 0) + 1

    def counts(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._counts)


def transitions_family(counts: Mapping[tuple[str, str], int]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(
        "cluster_operator_condition_transitions",
        "Changes of each cluster operator condition's status (appearing and vanishing included) seen since "
        "this process started.",
        labels=["name", "condition"],
    )
    for (name, condition), count in sorted(counts.items()):
        family.add_metric([name, condition], float(count))
    return family


def families(
    cv: Mapping[str, Any] | None,
    cluster_operators: Sequence[Mapping[str, Any]],
    running: Release,
    counts: WriteCounts,
    always_enabled: Sequence[str] = (),
    update_service: str = "",
    *,
    payload_created: float = 0.0,
    installer: InstallerConfigMaps | None = None,
    transitions: Mapping[tuple[str, str], int] | None = None,
) -> list[Metric]:
    out: list[Metric] = [cluster_version_family(cv, running, payload_created)]
    if installer is not None and (family := installer_family(installer)) is not None:
        out.append(family)
    if transitions is not None:
        out.append(transitions_family(transitions))
    up = GaugeMetricFamily(
        "cluster_operator_up",
        "1 when the operator (or name=version, the cluster version) is Available=True, else 0. version is the "
        "operator's own version; reason is the Available reason or NoAvailableCondition.",
        labels=["name", "version", "reason"],
    )
    conditions = GaugeMetricFamily(
        "cluster_operator_conditions",
        "Conditions of cluster operators and of the cluster version (name=version): 1 True, 0 False.",
        labels=["name", "condition", "reason"],
    )
    for co in sorted(cluster_operators, key=lambda c: str((c.get("metadata") or {}).get("name") or "")):
        name = str((co.get("metadata") or {}).get("name") or "")
        co_conditions = [c for c in (co.get("status") or {}).get("conditions") or [] if isinstance(c, dict)]
        available = find_condition(co_conditions, "Available")
        if available is None:
            up.add_metric([name, operator_version(co), "NoAvailableCondition"], 0.0)
        else:
            up.add_metric(
                [name, operator_version(co), str(available.get("reason") or "")],
                1.0 if available.get("status") == "True" else 0.0,
            )
        _add_conditions(conditions, name, co_conditions)

    _add_cluster_version(up, conditions, cv)
    if cv is not None:
        out.extend(_cv_families(cv, running, counts, always_enabled, update_service))
    out += [up, conditions]
    out.extend(_write_families(counts))
    return out


def _add_cluster_version(up: GaugeMetricFamily, conditions: GaugeMetricFamily, cv: Mapping[str, Any] | None) -> None:
    """The cluster version's own samples (name=version) of cluster_operator_up and _conditions."""
    if cv is None:
        up.add_metric(["version", "", "ClusterVersionNotFound"], 0.0)
        conditions.add_metric(["version", "Available", "ClusterVersionNotFound"], 0.0)
        return
    status = cv.get("status") or {}
    cv_conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    completed = _completed([h for h in status.get("history") or [] if isinstance(h, dict)])
    available = find_condition(cv_conditions, "Available")
    if available is not None and available.get("status") in ("True", "False"):
        version = str(completed[0].get("version") or "") if completed else ""
        up.add_metric(
            ["version", version, str(available.get("reason") or "")], 1.0 if available.get("status") == "True" else 0.0
        )
    _add_conditions(conditions, "version", cv_conditions)


def _add_conditions(family: GaugeMetricFamily, name: str, conditions: Iterable[Mapping[str, Any]]) -> None:
    for condition in conditions:
        status = condition.get("status")
        if status not in ("True", "False"):
            continue  # upstream skips Unknown
        family.add_metric(
            [name, str(condition.get("type") or ""), str(condition.get("reason") or "")],
            1.0 if status == "True" else 0.0,
        )


def _capability_family(
    status: Mapping[str, Any],
    spec: Mapping[str, Any],
    running: Release,
    counts: WriteCounts,
    always_enabled: Sequence[str],
) -> GaugeMetricFamily:
    """cluster_version_capability: enabled capabilities as cvo-py sees them (names the CRD would not
    store are still enabled), known ones as status says (the feature-gated names the status loop
    knew with the cluster's gates)."""
    prior = list((status.get("capabilities") or {}).get("enabledCapabilities") or [])
    prior += list(counts.pruned.get(capabilities.ENABLED, ()))
    caps = capabilities.compute(
        spec.get("capabilities"),
        running.version or Release.from_dict(status.get("desired")).version,
        prior,
        always_enabled,
    )
    capability = GaugeMetricFamily(
        "cluster_version_capability",
        "Cluster capabilities known to this release or enabled: 1 enabled, 0 not enabled.",
        labels=["name"],
    )
    enabled = set(caps.enabled)
    written = (status.get("capabilities") or {}).get("knownCapabilities") or []
    known = set(caps.known) | {n for n in written if isinstance(n, str)}
    for name in sorted(enabled | known):
        capability.add_metric([name], 1.0 if name in enabled else 0.0)
    return capability


def _cv_families(
    cv: Mapping[str, Any],
    running: Release,
    counts: WriteCounts,
    always_enabled: Sequence[str],
    update_service: str,
) -> list[Metric]:
    status = cv.get("status") or {}
    spec = cv.get("spec") or {}
    out: list[Metric] = [_capability_family(status, spec, running, counts, always_enabled)]

    updates = status.get("availableUpdates") or []
    retrieved = find_condition(status.get("conditions") or [], "RetrievedUpdates")
    # As upstream labels it: `start --update-service`, else spec.upstream, else "<default>".
    upstream = update_service or str(spec.get("upstream") or "")
    if upstream or updates or (retrieved is not None and retrieved.get("status") == "True"):
        available_updates = GaugeMetricFamily(
            "cluster_version_available_updates",
            "Number of releases the update service offers for this upstream and channel.",
            labels=["upstream", "channel"],
        )
        available_updates.add_metric(
            [upstream or "<default>", str(spec.get("channel") or "")], float(len(updates))
        )
        out.append(available_updates)
    return out


def _write_families(counts: WriteCounts) -> list[Metric]:
    writes = CounterMetricFamily(
        "cluster_version_status_writes", "ClusterVersion status writes that landed.", value=counts.writes
    )
    unchanged = CounterMetricFamily(
        "cluster_version_status_write_unchanged",
        "ClusterVersion status computations that needed no write (the status was already as computed).",
        value=counts.unchanged,
    )
    conflicts = CounterMetricFamily(
        "cluster_version_status_write_conflicts",
        "ClusterVersion status writes answered 409 Conflict (re-read and re-applied).",
        value=counts.conflicts,
    )
    failures = CounterMetricFamily(
        "cluster_version_status_write_failures",
        "ClusterVersion status writes that did not land after all tries.",
        value=counts.failures,
    )
    rejections = CounterMetricFamily(
        "cluster_version_status_write_rejections",
        "Causes of rejected ClusterVersion status writes: 422 Invalid by field (list indexes removed), "
        '"request" for a write too large.',
        labels=["field"],
    )
    for field_path, count in sorted(counts.rejections.items()):
        rejections.add_metric([field_path], float(count))
    pruned = GaugeMetricFamily(
        "cluster_version_status_pruned_capabilities",
        "1 for each capability name left out of ClusterVersion status because the installed CRD rejects it.",
        labels=["field", "name"],
    )
    for field_name, names in sorted(counts.pruned.items()):
        for name in names:
            pruned.add_metric([field_name, name], 1.0)
    return [writes, unchanged, conflicts, failures, rejections, pruned]


class InstallerWatch:
    """Watches the two installer ConfigMaps of openshift-config, each by name (so RBAC can name
    them); started and stopped with the controllers."""

    NAMESPACE = "openshift-config"
    INSTALL = "openshift-install"
    MANIFESTS = "openshift-install-manifests"

    def __init__(self, client: KubeClient) -> None:
        self.informers = InformerSet()
        self._install, self._manifests = (
            self.informers.add(
                Informer(client, CONFIGMAPS, namespace=self.NAMESPACE, field_selector=f"metadata.name={name}")
            )
            for name in (self.INSTALL, self.MANIFESTS)
        )

    def start(self) -> InstallerWatch:
        self.informers.start()
        return self

    def stop(self) -> None:
        self.informers.stop()

    def state(self) -> InstallerConfigMaps:
        return InstallerConfigMaps(
            synced=self._install.has_synced and self._manifests.has_synced,
            install=self._install.get(self.INSTALL, self.NAMESPACE),
            manifests=self._manifests.get(self.MANIFESTS, self.NAMESPACE),
        )


def payload_creation_time(payload_dir: str) -> float:
    """When the running payload was made: the creation time of its image-references ImageStream
    (`<payload_dir>/release-manifests/image-references`), 0 when it is missing or unreadable."""
    try:
        document = read_payload_json(payload_dir, IMAGE_REFERENCES, IMAGE_REFERENCES_MAX_BYTES)
    except FileMissing:
        return 0.0
    except DocumentError as exc:
        log.warning("Cannot read the running payload's creation time: %s", exc)
        return 0.0
    metadata = document.get("metadata") if isinstance(document, dict) else None
    return _seconds((metadata or {}).get("creationTimestamp")) if isinstance(metadata, dict) else 0.0


class StatusCollector(Collector):
    """Reads the caches at scrape time; `observed` returns (cv, cluster operators, counts)."""

    def __init__(
        self,
        observed: Callable[[], tuple[JSON | None, list[JSON], WriteCounts]],
        running: Callable[[], Release],
        always_enabled: Sequence[str] = (),
        update_service: str = "",
        *,
        payload_created: float = 0.0,
        installer: Callable[[], InstallerConfigMaps] | None = None,
        transitions: Callable[[], Mapping[tuple[str, str], int]] | None = None,
    ) -> None:
        self._observed = observed
        self._running = running
        self._always_enabled = tuple(always_enabled)
        self._update_service = update_service
        self._payload_created = payload_created
        self._installer = installer
        self._transitions = transitions

    def collect(self) -> Iterable[Metric]:
        cv, cos, counts = self._observed()
        return families(
            cv,
            cos,
            self._running(),
            counts,
            self._always_enabled,
            self._update_service,
            payload_created=self._payload_created,
            installer=self._installer() if self._installer is not None else None,
            transitions=self._transitions() if self._transitions is not None else None,
        )
