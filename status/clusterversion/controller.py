"""The ClusterVersion controller: read the caches, compute the whole status, write it.

Every event of the caches it is given (`status.clusterversion.caches`: the ClusterVersion named by
CVO_NAME, as upstream, the ClusterOperators, the ClusterVersion CRD, the admin-ack ConfigMaps)
pokes one SyncLoop. A sync computes the whole status with `status.desired.desired_status` from
immutable inputs and hands it to the one writer:

- the cached objects, and what the available-updates poller last found;
- the payload-retrieval snapshot: each sync but the final one at shutdown tells the
  `RetrievalCoordinator` what `spec.desiredUpdate` asks for
  (`status.clusterversion.retrievalrequest`), reads the newest
  `RetrievalSnapshot` from its channel, and once the status computed from it is written,
  acknowledges it in one call (`payload.channel`); the retrievals that started or ended are then
  recorded as Events (`status.clusterversion.events`), after the status write.

- the sync worker's latest report (`syncworker.channel`), with the clocks of the ClusterOperators
  it waits on (`status.clusterversion.progress`); after each write the worker is handed what it
  is to apply (`status.clusterversion.work`): the running release's payload, or an accepted
  target's (`status.clusterversion.workerlink`).

When the ClusterVersion CRD changes (a roll-forward re-applies a newer schema), the capability
names the writer pruned are forgotten and written again (`status.clusterversion.crdfollow`). When
the ClusterVersion does not exist, `start` creates it (`status.clusterversion.creation`).
"""

from __future__ import annotations

import dataclasses
import logging
import random
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cvo_py.runtime import env
from cvo_py.runtime.kube import JSON, ApiError, KubeClient, ServerUnreachable
from cvo_py.runtime.loop import SyncLoop, Timers
from payload.channel import Outcome, RetrievalSnapshot
from payload.coordinator import RetrievalCoordinator
from payload.release import Acceptance, Release
from status.clusterversion import desired, events, upgradeable
from status.clusterversion.caches import ClusterVersionCaches
from status.clusterversion.conditions import RETRIEVED_UPDATES, find_condition
from status.clusterversion.crdfollow import CrdFollower
from status.clusterversion.creation import get_or_create
from status.clusterversion.desired import StatusInputs
from status.clusterversion.metrics import WriteCounts
from status.clusterversion.retrievalrequest import retrieval_request
from status.clusterversion.workerlink import SyncWorkerLink, WorkerDriver, record_local_payload
from status.clusterversion.writer import ClusterVersionStatusWriter, StatusRejected, StatusWriteError

log = logging.getLogger(__name__)

# How long the last status sync at shutdown may take (upstream's runs on a separate bounded context).
FINAL_SYNC_TIMEOUT = 30.0

# How often a sync waiting for the admin-ack ConfigMaps' first read looks again.
ADMIN_READ_WAIT = 0.2


@dataclass(frozen=True)
class ClusterVersionOptions:
    name: str = "version"
    release: Release = Release()  # the running release
    always_enabled: tuple[str, ...] = ()
    # Create the ClusterVersion when it is missing (as `start` does); else wait for someone to.
    create_missing: bool = False
    resync: float = 120.0  # upstream resyncs the ClusterVersion every 2m × rand[1,2)
    # Syncs are cheap (cached objects in, unchanged writes skipped): pace them only against churn.
    min_interval: float = 0.05
    # Where Events about the ClusterVersion go (the operator's namespace, as upstream's recorder).
    namespace: str = field(default_factory=env.namespace)
    # The ClusterUpdateAcceptRisks feature gate (spec.desiredUpdate.acceptRisks allowed).
    accept_risks: bool = False
    # The ImageStreamImportMode feature gate: status.desired.architecture is written.
    release_architecture: bool = False
    # Every feature gate enabled for the running version (e.g. those that make capabilities known).
    feature_gates: frozenset[str] = frozenset()


class ClusterVersionController:
    """Keeps ClusterVersion status current from what it is given (see the module): every part it
    reads is built, started and stopped by the composition root (`cvo_py/compose/start.py`)."""

    def __init__(
        self,
        client: KubeClient,
        caches: ClusterVersionCaches,
        writer: ClusterVersionStatusWriter,
        options: ClusterVersionOptions,
        *,
        retrieval: RetrievalCoordinator | None = None,
        recorder: events.EventRecorder | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_cluster_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        available_updates: Callable[[Mapping[str, Any]], Mapping[str, Any] | None] | None = None,
        upgradeable_risks: Callable[[Sequence[upgradeable.Risk]], None] | None = None,
        worker: SyncWorkerLink | None = None,
    ) -> None:
        self.client = client
        self.caches = caches
        self.writer = writer
        self.options = options
        self.retrieval = retrieval
        self.recorder = recorder
        self.now = now
        self.new_cluster_id = new_cluster_id
        # spec → what the available-updates poller found for its upstream and channel (or None).
        self.available_updates = available_updates
        # Told the risks behind Upgradeable after each status write (the ClusterUpdateAcceptRisks
        # gate merges them into the available updates).
        self.upgradeable_risks = upgradeable_risks
        self.loop = SyncLoop(
            "clusterversion-status",
            self.sync,
            resync=options.resync * (1 + random.random()),
            min_interval=options.min_interval,
            # The echo of our own write costs a sync; a burst lets the next real change in at once.
            burst=10,
            expected_errors=(StatusWriteError, ApiError, ServerUnreachable),
        )
        caches.on_change(self.loop.poke)
        if retrieval is not None:
            retrieval.channel.listen(self.loop.poke)
        self.worker: WorkerDriver | None = None
        if worker is not None:
            worker.channel.listen(self.loop.poke, self.loop.poke_in)
            self.worker = WorkerDriver(
                worker, options.release, options.accept_risks, self.loop.poke, self._record_local_payload
            )
        self._last_stored: JSON | None = None  # the ClusterVersion as our last write stored it
        self._missing_logged = False
        self._seen_uid: str | None = None  # the ClusterVersion this run last synced
        self.created = 0  # ClusterVersions this run created
        self._last_rejection = ""
        self._settle_timers = Timers("crd-settle-retry")
        self.crd = CrdFollower(caches.crd, writer, self.loop.poke, self._settle_timers)
        self._stopped = threading.Event()
        self._final = False  # the last sync at shutdown: status only (no retrieval asked for, no work handed)
        self._wait_sync: threading.Thread | None = None
        self._omitted_said = ""  # the last UpdatesOmitted message recorded as an Event
        self._omitted_event: events.EventSpec | None = None
        self._unrecorded: list[Outcome] = []  # retrievals shown in status, not yet recorded as Events
        self.synced = threading.Event()

    @property
    def running(self) -> Release:
        return self.options.release

    def start(self) -> ClusterVersionController:
        """Starts the loop (the caches and the coordinator are started by whoever built them)."""
        self.loop.start()
        self._wait_sync = threading.Thread(target=self._poke_when_synced, name="status-wait-sync", daemon=True)
        self._wait_sync.start()
        return self

    def stop(self) -> None:
        """Stops every thread this controller started (loop, timers) and waits for them: nothing
        of it runs, writes or logs after this returns."""
        self._stopped.set()
        self._settle_timers.cancel()
        self.loop.stop()
        if self._wait_sync is not None:
            self._wait_sync.join(5.0)

    def final_sync(self, timeout: float = FINAL_SYNC_TIMEOUT) -> bool:
        """One last status sync, after `stop()`, within `timeout` seconds (upstream's shutdown
        context): what the worker did last is written before the process goes, from the retrieval
        channel's latest snapshot; nothing new is asked of retrieval (a version Pod started now
        would only be left to remove). Whether it ended."""
        if not self.synced.is_set():
            return True  # never synced (a standby, or caches never listed): nothing to bring up to date
        self._final = True
        if self.worker is not None:
            self.worker.final = True  # status only: no work is handed any more
        return _final_sync_within(self.sync, timeout)

    def _poke_when_synced(self) -> None:
        waiting = lambda: log.info("waiting for the ClusterVersion and ClusterOperator caches to sync")  # noqa: E731
        if self.caches.wait_for_sync_or_stop(self._stopped, waiting):
            self.loop.poke()

    def sync(self) -> None:
        if not (self.caches.clusterversion.has_synced and self.caches.clusteroperators.has_synced):
            return
        if self.caches.admin_pending():
            # Not read yet (an Upgradeable=Unknown only because of start-up would be noise), nor
            # failing: look again shortly, as a failure would not poke the loop.
            self._settle_timers.add(ADMIN_READ_WAIT, self.loop.poke)
            return
        try:
            self._sync_status()
        finally:
            # After the status write: recording an Event is a round trip the condition need not wait for.
            self._record_events()

    def _sync_status(self) -> None:
        self.crd.follow()
        cv = self._clusterversion()
        if cv is None:
            return
        operators = self.caches.clusteroperators.items()
        inputs = self.status_inputs(cv)
        snapshot = self._ask_retrieval(cv, operators, inputs)
        inputs = dataclasses.replace(inputs, acceptance=snapshot.acceptance)

        def compute(obj: JSON) -> JSON:
            return desired.desired_status(obj, operators, inputs, self.now())

        try:
            written = self.writer.write(cv, compute)
        except StatusRejected as exc:
            # Not retried blindly: the next change or resync tries again; log each distinct error once.
            self._acknowledge(snapshot)  # waiting for this write would not show the snapshot sooner
            if str(exc) != self._last_rejection:
                log.error("%s", exc)
                self._last_rejection = str(exc)
            if self.worker is not None:
                self.worker.hand_work(cv, inputs)
            return
        self._acknowledge(snapshot)
        if self.worker is not None:
            self.worker.hand_work(written, inputs)
        self._last_rejection = ""
        self._last_stored = written
        if self.upgradeable_risks is not None:
            self.upgradeable_risks(desired.upgradeable_risks(written, operators, inputs))
        self._note_omitted(written)
        self.synced.set()

    def _record_local_payload(self, release: Release, refused: str) -> None:
        if self.recorder is not None:
            involved = events.involved_object(self.options.name, self.options.namespace)
            record_local_payload(self.recorder, involved, release, self.running.image, refused)

    def _clusterversion(self) -> JSON | None:
        """The ClusterVersion, created when missing if so configured (None: wait for it)."""
        name = self.options.name
        cv = self.caches.clusterversion.get(name)
        if cv is None and self.options.create_missing:
            cv, created = get_or_create(self.client, name, self.running, self.new_cluster_id, self._seen_uid)
            self.created += int(created)
        if cv is None:
            if not self._missing_logged:
                log.warning("ClusterVersion %s not found; waiting for it to be created", name)
                self._missing_logged = True
            return None
        self._missing_logged = False
        self._seen_uid = (cv.get("metadata") or {}).get("uid")
        return cv

    def _ask_retrieval(self, cv: JSON, operators: Sequence[JSON], inputs: StatusInputs) -> RetrievalSnapshot:
        """Tell the coordinator what the spec asks for (not at the final sync); its newest snapshot."""
        if self.retrieval is None:
            return RetrievalSnapshot()
        if self._final:
            return self.retrieval.channel.latest()
        stored = self._last_stored
        seen = stored if stored is not None and _newer(stored, cv) else cv  # the cache may lag our write
        applied = self.worker.applied() if self.worker is not None else None
        self.retrieval.request(retrieval_request(cv, seen, operators, inputs, applied))
        return self.retrieval.channel.latest()

    def _acknowledge(self, snapshot: RetrievalSnapshot) -> None:
        """The status computed from `snapshot` is written: its retrievals become Events."""
        if self.retrieval is not None:
            self.retrieval.channel.acknowledge(snapshot)
            self._unrecorded.extend(snapshot.outcomes)

    def status_inputs(self, cv: JSON, acceptance: Acceptance | None = None) -> StatusInputs:
        """What the status of `cv` is computed from, besides the ClusterOperators and `now` (the
        sync worker's latest report among them)."""
        return StatusInputs(
            running=self.running,
            acceptance=acceptance,
            always_enabled=self.options.always_enabled,
            prior_enabled=(*self.crd.carried_enabled(), *sorted(self.worker.implicit if self.worker else ())),
            accept_risks=self.options.accept_risks,
            release_architecture=self.options.release_architecture,
            enabled_gates=self.options.feature_gates,
            updates=self.available_updates(cv.get("spec") or {}) if self.available_updates is not None else None,
            admin_gates=self.caches.admin_configmap(upgradeable.ADMIN_GATES),
            admin_acks=self.caches.admin_configmap(upgradeable.ADMIN_ACKS),
            worker=self.worker.state() if self.worker is not None else None,
        )

    def _note_omitted(self, written: JSON) -> None:
        """An Event when status newly leaves out updates (once per distinct message)."""
        conditions = (written.get("status") or {}).get("conditions") or []
        retrieved = find_condition(conditions, RETRIEVED_UPDATES)
        spec = events.updates_omitted_event(retrieved)
        message = spec.message if spec is not None else ""
        if message != self._omitted_said:
            self._omitted_said = message
            self._omitted_event = spec

    def _record_events(self) -> None:
        """Events for the retrievals that started or ended (a failed one gives a Warning, as upstream),
        and for updates status newly leaves out."""
        if self.recorder is None:
            return
        involved = events.involved_object(self.options.name, self.options.namespace)
        if self._omitted_event is not None:
            omitted, self._omitted_event = self._omitted_event, None
            self.recorder.record(involved, omitted)
        unrecorded, self._unrecorded = self._unrecorded, []
        for outcome in unrecorded:
            version, image = outcome.target.version, outcome.target.image
            if outcome.preconditions is not None:
                for spec in events.precondition_events(version, image, outcome.preconditions):
                    self.recorder.record(involved, spec)
                continue
            found = events.retrieval_event(version, image, outcome.state, outcome.error)
            if found is not None:
                self.recorder.record(involved, found)

    def observed(self) -> tuple[JSON | None, list[JSON], WriteCounts]:
        stats = self.writer.stats
        counts = WriteCounts(
            writes=stats.writes,
            unchanged=stats.unchanged,
            conflicts=stats.conflicts,
            failures=stats.failures,
            rejections=dict(stats.rejections),
            pruned=self.writer.pruned_state(),
        )
        return self.caches.clusterversion.get(self.options.name), self.caches.clusteroperators.items(), counts


def _final_sync_within(sync: Callable[[], None], timeout: float) -> bool:
    """Run `sync` on a thread of its own for at most `timeout` seconds; whether it ended. The
    process is going: a failure is one line, never a traceback."""

    def last() -> None:
        try:
            sync()
        except Exception as exc:
            log.error("The final status sync failed: %s", exc)

    thread = threading.Thread(target=last, name="clusterversion-final-sync", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        log.error("The final status sync did not end within %.0fs", timeout)
        return False
    return True


def _newer(a: JSON, b: JSON) -> bool:
    """Whether `a` has a higher resourceVersion than `b` (numeric ones only, as upstream)."""
    try:
        return int((a.get("metadata") or {}).get("resourceVersion") or 0) > int(
            (b.get("metadata") or {}).get("resourceVersion") or 0
        )
    except (TypeError, ValueError):
        return False
