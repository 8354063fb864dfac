"""The available-updates poller: asks the update service on the CVO's schedule and evaluates
conditional-update risks, in a thread of its own so that a slow or stalled service never delays
payload retrieval or the status loop (I/O at the edge; the decisions are in the pure modules).

The status loop reads `state()` — an immutable `UpdatesState` — and writes what it holds into
ClusterVersion status; the poller calls `on_change` when that state changes.
"""

from __future__ import annotations

import logging
import platform
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from cvo_py.runtime.gotext.messages import shortened
from cvo_py.runtime.loop import SyncLoop
from cvo_py.runtime.promapi import APIError
from updateservice import bounds, clusterrisks, recommend, retrieval, schedule
from updateservice.client import FetchError, Transport, TransportError
from updateservice.clusterrisks import ClusterRisk
from updateservice.graph import Deadline, GraphError, Updates, parse_graph, select_updates
from updateservice.retrieval import Condition

log = logging.getLogger(__name__)

JSON = dict[str, Any]

# While a Recommended condition is missing or Unknown, look again this often (as the CVO does).
REEVALUATE_AFTER = 1.0

_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "s390x": "s390x",
           "ppc64le": "ppc64le"}


def host_architecture() -> str:
    machine = platform.machine().lower()
    return _GOARCH.get(machine, machine)


@dataclass(frozen=True)
class UpdatesState:
    """What the last attempt found, for the ClusterVersion it was made for."""

    upstream: str  # spec.upstream as it was ("" for the default service)
    channel: str
    condition: Condition
    available: tuple[JSON, ...] | None = None
    conditional: tuple[JSON, ...] | None = None
    current: JSON | None = None  # the graph's node for the running version (url, channels)
    # status.conditionalUpdateRisks (the ClusterUpdateAcceptRisks gate), None without the gate or risks.
    risks: tuple[JSON, ...] | None = None
    # When the lists were last confirmed or their inputs last changed (the retrieval-timestamp metric).
    sync_or_config_change: datetime | None = None

    def applies_to(self, spec: Mapping[str, Any]) -> bool:
        """Only for the upstream and channel it was retrieved for (as the CVO writes it)."""
        return self.upstream == str(spec.get("upstream") or "") and self.channel == str(spec.get("channel") or "")


@dataclass(frozen=True)
class _Inputs:
    upstream: str
    effective_upstream: str
    channel: str
    cluster_id: str
    arch: str
    version: str
    accepted: frozenset[str]

    @classmethod
    def of(cls, cv: Mapping[str, Any], default_arch: str, update_service: str = "") -> _Inputs:
        spec = cv.get("spec") or {}
        desired_update = spec.get("desiredUpdate") or {}
        accepted = desired_update.get("acceptRisks") or []
        upstream = str(spec.get("upstream") or "")
        return cls(
            upstream=upstream,
            effective_upstream=update_service or upstream or retrieval.DEFAULT_UPSTREAM,
            channel=str(spec.get("channel") or ""),
            cluster_id=str(spec.get("clusterID") or ""),
            arch=str(desired_update.get("architecture") or "") or default_arch,
            version=str(((cv.get("status") or {}).get("desired") or {}).get("version") or ""),
            accepted=frozenset(str(a.get("name")) for a in accepted if isinstance(a, dict)),
        )


@dataclass
class PollerOptions:
    user_agent: str = "ClusterVersionOperator/unknown"
    # The running payload is multi-architecture (its release-metadata says so): the cluster asks
    # for the multi graph, and its updates are multi payloads.
    running_multi: bool = False
    # What the cluster asks for when spec.desiredUpdate names no architecture: Multi when the
    # running payload is, else the operator's own (Go's name for it).
    arch: str = ""
    total_timeout: float = 30.0  # the whole attempt: transfer, decoding and selection
    # The ClusterUpdateAcceptRisks gate: honour spec.desiredUpdate.acceptRisks.
    accept_risks: bool = False
    # `start --update-service`: asked instead of spec.upstream (or the default service).
    update_service: str = ""
    # How long a PromQL rule's result is used before it is asked again (the CVO: an hour).
    risk_refresh: timedelta = recommend.REFRESH_AFTER
    # With the gate, how often the firing alerts are read for in-cluster risks.
    alerts_interval: timedelta = timedelta(seconds=30)


class AvailableUpdatesPoller:
    def __init__(
        self,
        get_cluster_version: Callable[[], JSON | None],
        *,
        fetch: Callable[[str, Transport, float], bytes],
        transport: Callable[[], Transport],
        query: Callable[[str], bool] | None,
        on_change: Callable[[], None],
        alerts: Callable[[], Sequence[Any]] | None = None,
        options: PollerOptions | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        rng: random.Random | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options or PollerOptions()
        if not self.options.arch:
            self.options = replace(self.options, arch="Multi" if self.options.running_multi else host_architecture())
        self._get_cv = get_cluster_version
        self._fetch = fetch
        self._transport = transport
        self._cache = recommend.PromQLCache(query or _no_prometheus, refresh_after=self.options.risk_refresh)
        self._on_change = on_change
        self._now = now
        self._monotonic = monotonic  # the clock of an attempt's deadline
        self.interval = schedule.poll_interval(rng or random.Random())
        self._state: UpdatesState | None = None
        self._last: schedule.LastAttempt | None = None
        self._last_inputs: _Inputs | None = None
        self._graph_updates: tuple[tuple[JSON, ...], tuple[JSON, ...]] = ((), ())
        self._omitted = bounds.Omitted()  # what of the graph's updates status cannot hold
        self._lock = threading.Lock()
        # The project's loop: wakes on a poke and at least every REEVALUATE_AFTER seconds; `_sync`
        # acts only when the schedule says something is due.
        self.loop = SyncLoop("available-updates", self._sync, resync=REEVALUATE_AFTER)
        self._due = 0.0  # time.monotonic() of the next decision
        self._poked = False
        self._transport_retry = 0.0  # backoff while the proxy or CA configuration cannot be read
        # In-cluster risks (the gate): firing alerts (read here; the last good answer is kept on a
        # failure) and the Upgradeable risks (the status side sets them).
        self._alerts = alerts
        self._alerts_at: datetime | None = None
        self._alerts_error = ""
        self._alert_risks: tuple[ClusterRisk, ...] = ()
        self._upgradeable_risks: tuple[ClusterRisk, ...] = ()
        self._risks_changed = False

    # -- public ------------------------------------------------------------------------------------

    def state(self) -> UpdatesState | None:
        with self._lock:
            return self._state

    def poke(self) -> None:
        """Something the poller depends on changed (the ClusterVersion): decide now."""
        self._poked = True
        self.loop.poke()

    def set_upgradeable_risks(self, risks: Sequence[ClusterRisk]) -> None:
        """The risks behind Upgradeable (merged into bump targets with the gate): a change
        recomputes the updates."""
        kept = tuple(_checked_risks(risks))
        with self._lock:
            if kept == self._upgradeable_risks:
                return
            self._upgradeable_risks = kept
            self._risks_changed = True
        self.poke()

    def start(self) -> AvailableUpdatesPoller:
        self.loop.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.loop.stop(timeout)

    # -- the loop ----------------------------------------------------------------------------------

    def _sync(self) -> None:
        if not self._poked and time.monotonic() < self._due and not self._alerts_due(self._now()):
            return
        self._poked = False
        self._due = time.monotonic() + self.tick()

    def tick(self) -> float:
        """One decision and what it asks for; returns how long to wait before the next one."""
        cv = self._get_cv()
        if cv is None:
            return self.interval.total_seconds()
        now = self._now()
        self._refresh_alerts(now)
        inputs = _Inputs.of(cv, self.options.arch, self.options.update_service)
        if self._last_inputs is not None and self._last_inputs.version != inputs.version:
            self._last = None  # a new running version: its graph neighbourhood is a new question
        action = schedule.next_action(
            self._last, upstream=inputs.upstream, channel=inputs.channel, arch=inputs.arch,
            interval=self.interval, now=now, needs_evaluation=self._needs_evaluation(inputs),
        )
        if action is schedule.Action.FETCH:
            self._fetch_and_evaluate(cv, inputs, now)
            if self._transport_retry:
                return self._transport_retry
        elif action is schedule.Action.EVALUATE:
            self._evaluate(cv, inputs, now)
        self._last_inputs = inputs
        if self._needs_evaluation(inputs):
            return REEVALUATE_AFTER
        assert self._last is not None
        return max(0.05, (self._last.at + self.interval - self._now()).total_seconds())

    def _needs_evaluation(self, inputs: _Inputs) -> bool:
        return needs_evaluation(self.state(), self._risks_changed, self._last_inputs, inputs)

    def _fetch_and_evaluate(self, cv: Mapping[str, Any], inputs: _Inputs, now: datetime) -> None:
        previous = self.state()
        same_question = (
            previous is not None and self._last_inputs is not None
            and (self._last_inputs.upstream, self._last_inputs.channel, self._last_inputs.arch,
                 self._last_inputs.version) == (inputs.upstream, inputs.channel, inputs.arch, inputs.version)
        )
        config_change = self._last is None or not same_question
        sync_time = now if config_change else (self._last.sync_or_config_change if self._last else now)
        try:
            transport = self._transport()
        except TransportError as exc:  # proxy/CA configuration: retried, not a condition (as upstream)
            log.warning("available updates: %s; retrying", exc)
            self._transport_retry = min(max(self._transport_retry * 2, 0.005), 1000.0)
            return
        self._transport_retry = 0.0
        request = retrieval.request_for(upstream=inputs.effective_upstream, channel=inputs.channel,
                                        cluster_id=inputs.cluster_id, arch=inputs.arch, version=inputs.version)
        condition: Condition
        current: JSON | None = None
        if request.precheck is not None:
            condition = request.precheck
            self._graph_updates = ((), ())
            self._omitted = bounds.Omitted()
        else:
            try:
                updates = self._retrieve(request.url, transport, inputs)
            except (FetchError, GraphError) as err:
                if err.reason == "VersionNotFound":
                    condition = retrieval.version_not_found(inputs.version, inputs.channel)
                else:
                    condition = retrieval.failure(err.reason, str(err))
                confirmed = previous.sync_or_config_change if previous is not None else None
                keep = schedule.keeps_lists(err.reason, same_question, confirmed, now)
                if not keep:
                    self._graph_updates = ((), ())
                    self._omitted = bounds.Omitted()
                current = previous.current if keep and previous is not None else None
                log.warning("Unable to retrieve available updates from %s: %s: %s", request.url, err.reason,
                            shortened(str(err), retrieval.MAX_DETAIL))
            else:
                condition = retrieval.succeeded()
                sync_time = now
                updates, self._omitted = bounds.bound(updates)
                current = updates.current
                self._graph_updates = (updates.available, updates.conditional)
        self._last = schedule.LastAttempt(inputs.upstream, inputs.channel, inputs.arch, now, sync_time)
        self._publish(cv, inputs, now, UpdatesState(inputs.upstream, inputs.channel, condition, current=current,
                                                    sync_or_config_change=sync_time))

    def _retrieve(self, url: str, transport: Transport, inputs: _Inputs) -> Updates:
        """The updates of the graph at `url`: one deadline for the whole attempt, the transfer,
        then decoding and selecting."""
        deadline = Deadline(self.options.total_timeout, self._monotonic)
        body = self._fetch(url, transport, deadline.remaining())
        return select_updates(parse_graph(body, deadline), inputs.version, want_multi=inputs.arch == "Multi",
                              current_is_multi=self.options.running_multi, deadline=deadline)

    # -- in-cluster risks (the ClusterUpdateAcceptRisks gate) ---------------------------------------

    def _alerts_due(self, now: datetime) -> bool:
        if not self.options.accept_risks or self._alerts is None:
            return False
        return self._alerts_at is None or now - self._alerts_at >= self.options.alerts_interval

    def _refresh_alerts(self, now: datetime) -> None:
        """Reads the firing alerts when due; on a failure the last good answer stays (logged once
        per distinct error)."""
        if not self._alerts_due(now) or self._alerts is None:
            return
        self._alerts_at = now
        try:
            alerts = self._alerts()
        except APIError as exc:
            if str(exc) != self._alerts_error:
                log.warning("Cannot read the firing alerts for in-cluster update risks (keeping the last "
                            "answer): %s", exc)
                self._alerts_error = str(exc)
            return
        self._alerts_error = ""
        found = tuple(_checked_risks(clusterrisks.alert_risks(alerts)))
        with self._lock:
            if found != self._alert_risks:
                self._alert_risks = found
                self._risks_changed = True

    def _evaluate(self, cv: Mapping[str, Any], inputs: _Inputs, now: datetime) -> None:
        state = self.state()
        if state is not None:
            self._publish(cv, inputs, now, state)

    def _publish(self, cv: Mapping[str, Any], inputs: _Inputs, now: datetime, base: UpdatesState) -> None:
        available: Sequence[JSON]
        conditional: Sequence[JSON]
        available, conditional = self._graph_updates
        gated = self.options.accept_risks
        with self._lock:
            every_target, bump_targets = self._alert_risks, self._upgradeable_risks
            self._risks_changed = False
        in_cluster = {r.name: r for r in (*bump_targets, *every_target)} if gated else {}
        omitted = self._omitted
        if in_cluster:
            available, conditional = clusterrisks.merged(available, conditional, current=inputs.version,
                                                         every_target=every_target, bump_targets=bump_targets)
            conditional, omitted = bounds.with_risk_limits(conditional, omitted)
        if gated:  # status.conditionalUpdateRisks lists each name once, at most 500
            conditional, omitted = bounds.with_risk_name_limit(conditional, omitted)
        previous_state = self.state()
        previous = list(previous_state.conditional or ()) if previous_state is not None else []
        if previous_state is None:
            previous = list((cv.get("status") or {}).get("conditionalUpdates") or [])  # seeded from status
        outcomes = risk_outcomes(conditional, in_cluster, lambda rule: self._cache.evaluate(rule, self._now()))
        accepted = inputs.accepted if gated else frozenset()
        out_available, out_conditional = recommend.with_recommendations(
            available, conditional, outcomes, accepted=accepted, previous=previous, now=now, gated=gated)
        out_available, out_conditional, omitted = bounds.fit(out_available, out_conditional, omitted)
        risks = recommend.conditional_update_risks(out_conditional) if gated else None
        if omitted and base.condition.status == "True":
            base = replace(base, condition=retrieval.omitted(omitted.message()))
        state = replace(
            base,
            available=tuple(out_available) if out_available is not None else None,
            conditional=tuple(out_conditional) if out_conditional is not None else None,
            risks=tuple(risks) if risks is not None else None,
        )
        with self._lock:
            changed = state != self._state
            self._state = state
        if changed:
            self._on_change()


def _no_prometheus(_query: str) -> bool:
    raise recommend.EvaluationError("no Prometheus query endpoint is configured (--promql-url)")


def updates_status(state: UpdatesState | None, spec: Mapping[str, Any]) -> JSON | None:
    """The status fields the state provides for this spec, or None when it is about another
    upstream or channel (or there is none yet)."""
    if state is None or not state.applies_to(spec):
        return None
    return {
        "availableUpdates": [dict(r) for r in state.available] if state.available else None,
        "conditionalUpdates": [dict(u) for u in state.conditional] if state.conditional else None,
        "conditionalUpdateRisks": [dict(r) for r in state.risks] if state.risks else None,
        "condition": state.condition.as_status(),
        "current": dict(state.current) if state.current else None,
    }


def lag(state: UpdatesState | None, now: datetime) -> timedelta | None:
    if state is None or state.sync_or_config_change is None:
        return None
    return now - state.sync_or_config_change


def needs_evaluation(
    state: UpdatesState | None, risks_changed: bool, last: _Inputs | None, inputs: _Inputs
) -> bool:
    """Whether the conditional updates must be judged again without a fetch: the in-cluster risks
    changed, the accepted risks changed, or a risk's verdict is not known yet."""
    if state is None:
        return False
    if risks_changed:
        return True
    if not state.conditional:
        return False
    if last is not None and last.accepted != inputs.accepted:
        return True
    return any((u.get("conditions") or [{}])[0].get("status") not in ("True", "False") for u in state.conditional)


def risk_outcomes(
    conditional: Sequence[JSON], in_cluster: Mapping[str, ClusterRisk], evaluate: Callable[[Mapping[str, Any]], bool]
) -> dict[str, recommend.RiskOutcome]:
    """Each risk's outcome: a PromQL rule's (`evaluate`) for the update service's risks, apply for
    the in-cluster ones."""
    outcomes = {
        name: recommend.decisive_outcome(risk.get("matchingRules") or (), evaluate)
        for name, risk in recommend.distinct_risks(conditional).items()
        if name not in in_cluster
    }
    outcomes.update({name: recommend.RiskOutcome(True, reason=r.reason, detail=r.detail, since=r.since)
                     for name, r in in_cluster.items()})
    return outcomes


def _checked_risks(risks: Sequence[ClusterRisk]) -> list[ClusterRisk]:
    kept, errors = clusterrisks.checked(risks)
    for error in errors:
        log.error("%s", error)
    return kept
