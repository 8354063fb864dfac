"""CVO metrics computed at scrape time from the caches (a prometheus `Collector`).

Upstream's names and labels: `cluster_version`, `cluster_version_available_updates`,
`cluster_version_capability`, `cluster_operator_up`, `cluster_operator_conditions`,
`cluster_version_payload`; plus cvo-py's status-write metrics
(`cluster_version_status_write_*`, `cluster_version_status_pruned_capabilities`).

`families(...)` is a pure function of plain dicts; `StatusCollector` only reads the caches.
cvo-py applies no manifests, so `cluster_version_payload` counts the release ClusterOperators
that report (applied) or do not yet report (pending) the desired version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from payload.release import Release
from status.clusterversion import capabilities
from status.clusterversion.desired import find_condition, is_release_operator, operator_version

JSON = dict[str, Any]


@dataclass(frozen=True)
class WriteCounts:
    writes: int = 0
    unchanged: int = 0
    conflicts: int = 0
    failures: int = 0
    rejections: Mapping[str, int] = field(default_factory=dict)
    pruned: Mapping[str, Sequence[str]] = field(default_factory=dict)


def _seconds(text: Any) -> float:
    if not text or not isinstance(text, str):
        return 0.0
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _completed(history: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [h for h in history if h.get("state") == "Completed"]


def cluster_version_family(cv: Mapping[str, Any], running: Release) -> GaugeMetricFamily:
    family = GaugeMetricFamily(
        "cluster_version",
        "Cluster version timestamps (Unix seconds) by type: current (the release in use; payload creation "
        "time, 0 when unknown), initial (oldest history entry; object creation), cluster (current release; "
        "object creation), completed (newest completed update), desired (a requested release not yet in use; "
        "latest status change), failure (Failing=True; its transition), updating (an update in progress; "
        "its start). from_version is the previously completed release.",
        labels=["type", "version", "image", "from_version"],
    )
    status = cv.get("status") or {}
    history: list[Mapping[str, Any]] = [h for h in status.get("history") or [] if isinstance(h, dict)]
    current = Release.from_dict(status.get("desired"))
    if not current.image:
        current = running
    created = _seconds((cv.get("metadata") or {}).get("creationTimestamp"))
    completed = _completed(history)
    last_completed_version = str(completed[0].get("version") or "") if completed else ""

    # The payload's creation time is not known without the image config: 0, as upstream's fallback.
    family.add_metric(["current", current.version, current.image, last_completed_version], 0.0)
    if history:
        initial = history[-1]
        family.add_metric(["initial", str(initial.get("version") or ""), str(initial.get("image") or ""), ""], created)
        updated_since_install = any(h.get("state") == "Completed" for h in history[:-1])
        from_version = str(initial.get("version") or "") if updated_since_install else ""
        family.add_metric(["cluster", current.version, current.image, from_version], created)
    if completed:
        newest = completed[0]
        older = str(completed[1].get("version") or "") if len(completed) > 1 else ""
        family.add_metric(
            ["completed", str(newest.get("version") or ""), str(newest.get("image") or ""), older],
            _seconds(newest.get("completionTime")),
        )
    update = (cv.get("spec") or {}).get("desiredUpdate") or {}
    update_differs = isinstance(update, dict) and bool(update.get("image")) and update.get("image") != current.image
    if update_differs:
        times = [created]
        if history:
            times += [_seconds(history[0].get("startedTime")), _seconds(history[0].get("completionTime"))]
        times += [_seconds(c.get("lastTransitionTime")) for c in status.get("conditions") or [] if isinstance(c, dict)]
        family.add_metric(
            [
                "desired",
                str(update.get("version") or ""),
                str(update.get("image") or ""),
                last_completed_version,
            ],
            max(times),
        )
    failing = find_condition(status.get("conditions") or [], "Failing")
    if failing is not None and failing.get("status") == "True":
        if update_differs:
            version, image = str(update.get("version") or ""), str(update.get("image") or "")
        else:
            version, image = current.version, current.image
        family.add_metric(
            ["failure", version, image, last_completed_version], _seconds(failing.get("lastTransitionTime"))
        )
    if history and history[0].get("state") == "Partial":
        head = history[0]
        family.add_metric(
            [
                "updating",
                str(head.get("version") or ""),
                str(head.get("image") or ""),
                last_completed_version,
            ],
            _seconds(head.get("startedTime")),
        )
    return family


def families(
    cv: Mapping[str, Any] | None,
    cluster_operators: Sequence[Mapping[str, Any]],
    running: Release,
    counts: WriteCounts,
    always_enabled: Sequence[str] = (),
    update_service: str = "",
) -> list[Metric]:
    out: list[Metric] = []
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

    if cv is None:
        up.add_metric(["version", "", "ClusterVersionNotFound"], 0.0)
        conditions.add_metric(["version", "Available", "ClusterVersionNotFound"], 0.0)
    else:
        status = cv.get("status") or {}
        cv_conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        completed = _completed([h for h in status.get("history") or [] if isinstance(h, dict)])
        available = find_condition(cv_conditions, "Available")
        up.add_metric(
            [
                "version",
                str(completed[0].get("version") or "") if completed else "",
                str((available or {}).get("reason") or ""),
            ],
            1.0 if available is not None and available.get("status") == "True" else 0.0,
        )
        _add_conditions(conditions, "version", cv_conditions)
        out.append(cluster_version_family(cv, running))
        out.extend(_cv_families(cv, cluster_operators, running, counts, always_enabled, update_service))
    out += [up, conditions]
    out.extend(_write_families(counts))
    return out


def _add_conditions(family: GaugeMetricFamily, name: str, conditions: Iterable[Mapping[str, Any]]) -> None:
    for condition in conditions:
        status = condition.get("status")
        if status not in ("True", "False"):
            continue  # upstream skips Unknown
        family.add_metric(
            [name, str(condition.get("type") or ""), str(condition.get("reason") or "")],
            1.0 if status == "True" else 0.0,
        )


def _cv_families(
    cv: Mapping[str, Any],
    cluster_operators: Sequence[Mapping[str, Any]],
    running: Release,
    counts: WriteCounts,
    always_enabled: Sequence[str],
    update_service: str,
) -> list[Metric]:
    status = cv.get("status") or {}
    spec = cv.get("spec") or {}
    out: list[Metric] = []

    # Enabled capabilities as cvo-py sees them: names the CRD would not store are still enabled.
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
    for name in sorted(enabled | set(caps.known)):
        capability.add_metric([name], 1.0 if name in enabled else 0.0)
    out.append(capability)

    desired = Release.from_dict(status.get("desired"))
    release_cos = [co for co in cluster_operators if is_release_operator(co)]
    applied = sum(1 for co in release_cos if desired.version and operator_version(co) == desired.version)
    payload = GaugeMetricFamily(
        "cluster_version_payload",
        "Release cluster operators that report the desired version (applied) and that do not yet (pending).",
        labels=["version", "type"],
    )
    payload.add_metric([desired.version, "applied"], float(applied))
    payload.add_metric([desired.version, "pending"], float(len(release_cos) - applied))
    out.append(payload)

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


class StatusCollector(Collector):
    """Reads the caches at scrape time; `observed` returns (cv, cluster operators, counts)."""

    def __init__(
        self,
        observed: Callable[[], tuple[JSON | None, list[JSON], WriteCounts]],
        running: Callable[[], Release],
        always_enabled: Sequence[str] = (),
        update_service: str = "",
    ) -> None:
        self._observed = observed
        self._running = running
        self._always_enabled = tuple(always_enabled)
        self._update_service = update_service

    def collect(self) -> Iterable[Metric]:
        cv, cos, counts = self._observed()
        return families(cv, cos, self._running(), counts, self._always_enabled, self._update_service)
