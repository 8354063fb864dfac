"""`upgrade-status --watch` on the cluster's objects (`--source cluster`, and `auto` where no
controller publishes current insights): the status computed as oc computes it, again at each change.

    sources = ObjectSources(client, details)   # the informers, not started
    sources.start(); ...; view = sources.view(now); ...; sources.stop()

No polling: the project's informer lists and watches what a one-shot run reads (the ClusterVersion
`version`, every ClusterOperator, MachineConfigPool, Node and MachineConfig, and the
machine-config-operator Deployment), each cache keeping only what the insights read
(`status.updatestatus.insights.inputs`: a Node's heartbeat-only update changes nothing kept and
wakes nothing). Each change wakes the watch loop (`status.updatestatus.client.watch`), which
computes the view again: the control plane's insights whole (a few dozen operators), the nodes'
only for the nodes whose object changed (`status.updatestatus.insights.incremental`), their rows
rendered only for those (`RowMemo`). The view is computed again every `REFRESH` seconds too, so
that what time alone changes (durations, a node unavailable for long) moves on.

What oc would stop at (no ClusterVersion, no operators, no Progressing condition, a MachineConfig a
node names that does not exist, no machine-config-operator Deployment) is the frame, in oc's words,
until it is resolved. While a list or watch fails (the API server gone away, RBAC taken away) the
frame says so among its warnings, and the health section does not say "Update is proceeding well"
(the view may be stale or partial), until the informers work again.

Alerts are fetched as a one-shot run fetches them (`status.updatestatus.client.routealerts`), on
a thread of their own, first when the cluster is seen updating, then every `ALERTS_EVERY` seconds
while it is: the alerts API has no watch.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

from cvo_py.runtime import gcpause
from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.quoting import escape
from cvo_py.runtime.informer import DELETED, Informer
from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    JSON,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    NODES,
    ApiError,
    KubeClient,
)
from status.updatestatus.api import staleness
from status.updatestatus.client import live as published
from status.updatestatus.client.cluster import CLUSTERVERSION, DEPLOYMENTS, not_found_line, stop_line
from status.updatestatus.client.render import NOT_UPDATING, RenderError, RowMemo, render, warning_text
from status.updatestatus.client.routealerts import AlertsFetch
from status.updatestatus.insights import compute
from status.updatestatus.insights.alerts import alert_insights
from status.updatestatus.insights.controlplane import update_started_at
from status.updatestatus.insights.incremental import IncrementalNodes
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
from status.updatestatus.insights.objects import InputError
from status.updatestatus.insights.plain import Insight

REFRESH = 30.0  # seconds: the view is computed again at least this often
ALERTS_EVERY = 30.0  # seconds between two fetches of the alerts while the cluster updates
# the age line's subject on a terminal and in a pipe (`status.updatestatus.client.watch.age_line`)
HEADING = ("Update status from the cluster's objects", "update status from the cluster's objects")


class ObjectsView(NamedTuple):
    """One computed frame: its text (warnings included) and when it was computed."""

    text: str
    computed_at: int
    updating: bool
    heading: tuple[str, str] = HEADING

    def body(self, now: int) -> str:
        return self.text

    def due(self, now: int) -> int | None:
        """When the view is computed again with no change (`REFRESH` after it was)."""
        return self.computed_at + int(REFRESH * SECOND)


class ObjectSources:
    """The informers of what `upgrade-status` reads; `changed` is set by every change that matters
    and by every list or watch that starts or stops failing."""

    def __init__(self, client: KubeClient, details: str) -> None:
        self.details = details
        self.changed = threading.Event()
        self.cv = Informer(client, CLUSTERVERSIONS, field_selector=f"metadata.name={CLUSTERVERSION}")
        self.operators = Informer(client, CLUSTEROPERATORS)
        self.pools = Informer(client, MACHINECONFIGPOOLS)
        self.nodes = Informer(client, NODES, transform=node_transform)
        self.machineconfigs = Informer(client, MACHINECONFIGS, transform=machineconfig_transform)
        self.mco = Informer(
            client,
            DEPLOYMENTS,
            namespace=MCO_NAMESPACE,
            field_selector=f"metadata.name={MCO_DEPLOYMENT}",
            transform=deployment_transform,
        )
        self.informers = [self.cv, self.operators, self.pools, self.nodes, self.machineconfigs, self.mco]
        for informer in self.informers:
            informer.add_handler(self._on_change)
            informer.add_failing_handler(lambda _why: self.changed.set())
        self.alerts = AlertsRefresh(client, self.changed)
        self._nodes = IncrementalNodes()
        self._named = NamedConfigs()
        self._memo = RowMemo()

    def _on_change(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        if event_type != DELETED and old is not None and read_alike(obj, old):
            return  # only the resourceVersion moved (a Node's heartbeat): nothing shown changes
        self.changed.set()

    def start(self) -> None:
        with published.signals_left_to_main():
            for informer in self.informers:
                informer.start()

    def wait_listed(self, timeout: float) -> bool:
        """Whether every informer has listed, or cannot (then the view says why), within `timeout`."""
        return all(i.wait_for_sync(timeout) or i.failing for i in self.informers)

    def stop(self) -> None:
        self.alerts.stop()
        for informer in self.informers:
            informer.request_stop()

    def view(self, now: int) -> ObjectsView:
        """The frame at `now`, from what the caches hold."""
        problems = [
            f"watch: {informer.resource} not watched ({informer.failing}); retrying"
            for informer in self.informers
            if informer.failing
        ]
        problems += [
            f"watch: {informer.resource} not listed yet" for informer in self.informers if not informer.has_synced
        ]
        alerts, line = self.alerts.latest()
        try:
            with gcpause.paused():  # a burst of short-lived objects beside thousands of cached ones
                text, updating = self._compute(now, problems, alerts)
        except InputError as exc:  # an object whose shape cannot be read at all (a ClusterVersion's)
            text, updating = f"error: the cluster's objects: {escape(str(exc))}\n", False
        except RenderError as exc:
            text, updating = f"error: {escape(str(exc).rstrip())}\n", False
        self.alerts.want(updating)
        if updating and line:  # as a one-shot run, oc's line about the alerts above the status
            text = escape(line) + "\n" + text
        return ObjectsView(warning_text(problems) + text, now, updating)

    def _compute(self, now: int, problems: list[str], alerts: Any) -> tuple[str, bool]:
        cv = self.cv.get(CLUSTERVERSION)
        operators = self.operators.sorted_items()
        stop = stop_line(cv, operators) if self.cv.has_synced and self.operators.has_synced else ""
        if stop:
            return _line(stop), False
        pools = self.pools.sorted_items()
        nodes = self.nodes.sorted_items()
        versions = machineconfig_versions(self.machineconfigs.items())
        missing = self._named.missing(nodes, {_name(mc) for mc in self.machineconfigs.items()})
        if missing and self.machineconfigs.has_synced:
            return _line(not_found_line("machineconfigs.machineconfiguration.openshift.io", missing)), False
        deployment = self.mco.get(MCO_DEPLOYMENT, MCO_NAMESPACE)
        if deployment is None and self.mco.has_synced:
            return _line(not_found_line("deployments.apps", MCO_DEPLOYMENT)), False
        if cv is None:  # not listed yet (said among the warnings)
            return "", False
        controlplane = compute.controlplane_insights(cv, operators, now, mco_image=mco_image(deployment))
        assessor = compute.NodeAssessor(pools, versions, cv)
        entries = self._nodes.update(assessor, nodes)
        pool_insights, health = assessor.pools_and_health(self._nodes.by_pool, now)
        node_part: list[Insight] = [*pool_insights, *(entry.insight for entry in entries), *health]
        shown_alerts = alert_insights(alerts, update_started_at(cv)) if alerts is not None else []
        insights = compute.in_collection_order(controlplane, node_part, shown_alerts)
        caveat = staleness.health_caveat(problems)
        text = render(insights, now, self.details, caveat=caveat, memo=self._memo)
        return text, text != NOT_UPDATING


def _line(text: str) -> str:
    """What oc stops with, as one escaped line (a name in it is the cluster's)."""
    return escape(" ".join(text.split())) + "\n"


def check_reads(client: KubeClient) -> None:
    """ClusterReadError, worded as kubectl words it, when the reader may not list one of the
    resources the watch follows (a one-shot run only gets some of them by name)."""
    from status.updatestatus.client.cluster import ClusterReadError, api_error_line

    for resource, namespace in (
        (CLUSTERVERSIONS, None),
        (CLUSTEROPERATORS, None),
        (MACHINECONFIGPOOLS, None),
        (NODES, None),
        (MACHINECONFIGS, None),
        (DEPLOYMENTS, MCO_NAMESPACE),
    ):
        try:
            client.list(resource, namespace, limit=1)
        except ApiError as exc:
            raise ClusterReadError(api_error_line(exc)) from None


def _name(obj: JSON) -> str:
    try:
        name = obj["metadata"]["name"]  # what the API server gives: one lookup per object of thousands
    except (KeyError, TypeError, IndexError):
        return ""
    return name if isinstance(name, str) else ""


class NamedConfigs:
    """The MachineConfigs each node names (`cluster.machineconfig_names`), worked out again only for
    the nodes whose object changed."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[JSON, list[str]]] = {}  # id(node) → (the node, the names it gives)

    def missing(self, nodes: list[JSON], present: set[str]) -> str:
        """The first MachineConfig (in the order oc fetches them) a node names that is not present."""
        from status.updatestatus.client.cluster import machineconfig_names

        by_id: dict[int, tuple[JSON, list[str]]] = {}
        first = ""
        for node in nodes:
            known = self._by_id.get(id(node))
            if known is None or known[0] is not node:
                known = (node, machineconfig_names([node]))
            by_id[id(node)] = known
            if not first:
                first = next((name for name in known[1] if name not in present), "")
        self._by_id = by_id
        return first


class AlertsRefresh:
    """The alerts, fetched on a thread of its own while `want(True)` says the cluster updates: at
    once, then every `ALERTS_EVERY` seconds; each new answer sets `changed`."""

    def __init__(self, client: KubeClient, changed: threading.Event, every: float = ALERTS_EVERY) -> None:
        self._client = client
        self._changed = changed
        self._every = every
        self._wanted = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._latest: tuple[Any, str] = (None, "")
        self._thread: threading.Thread | None = None

    def want(self, updating: bool) -> None:
        if not updating:
            self._wanted.clear()
            return
        self._wanted.set()
        if self._thread is None and not self._stop.is_set():
            with published.signals_left_to_main():
                self._thread = threading.Thread(target=self._run, name="upgrade-status-alerts", daemon=True)
                self._thread.start()

    def latest(self) -> tuple[Any, str]:
        """(the alerts API's answer, "") or (None, the line oc prints instead); (None, "") before
        the first answer."""
        with self._lock:
            return self._latest

    def stop(self) -> None:
        self._stop.set()
        self._wanted.set()  # wakes the thread, which then ends

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wanted.wait()
            if self._stop.is_set():
                return
            answer = AlertsFetch(self._client).result()
            with self._lock:
                changed, self._latest = answer != self._latest, answer
            if changed and not self._stop.is_set():
                self._changed.set()
            self._stop.wait(self._every)
