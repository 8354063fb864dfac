"""The `start` status loop: watch ClusterVersion and ClusterOperators, recompute, write.

Informers on the ClusterVersion (name from CVO_NAME, as upstream) and on ClusterOperators poke one
SyncLoop; each sync computes the whole status with `status.desired.desired_status` and hands it
to the one writer. When `spec.desiredUpdate` names a release other than `status.desired`, a
`RetrievalCoordinator` runs payload retrieval on its own thread (one at a time; a changed request
cancels the one under way, whose Pod is deleted) and pokes the loop on every state it reports, so
`ReleaseAccepted` follows within a sync. A retrieval that fails is also reported as a Warning
Event by the loop (`status.clusterversion.events`), after the status write.

A third informer follows the ClusterVersion CRD: when its spec changes (a roll-forward re-applies a
newer schema), the capability names the writer pruned are forgotten and written again.

When the ClusterVersion does not exist (never created, or deleted while running), `start` creates
it as upstream does: a random `spec.clusterID`, `spec.channel` only when the running release names
exactly one channel, and the status the next write computes from the running release.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cvo_py.runtime import env, klog
from cvo_py.runtime.informer import Informer, InformerSet
from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    CONFIGMAPS,
    CRDS,
    JSON,
    ApiError,
    KubeClient,
    ServerUnreachable,
)
from cvo_py.runtime.loop import SyncLoop, Timers
from payload import acceptance as acc
from payload.acceptance import PreconditionOutcome, ReleaseAcceptance
from payload.coordinator import RetrievalCoordinator, RetrieverFactory
from payload.release import Release
from payload.verify.config import CONFIG_ANNOTATION, SIGNATURES_LABEL
from status.clusterversion import capabilities, crdpolicy, desired, events, preconditions, upgradeable
from status.clusterversion.crdpolicy import CrdRevision, crd_changed, crd_revision
from status.clusterversion.creation import new_cluster_version
from status.clusterversion.desired import StatusInputs
from status.clusterversion.metrics import WriteCounts
from status.clusterversion.writer import ClusterVersionStatusWriter, StatusRejected, StatusWriteError

log = logging.getLogger(__name__)

# How often a sync waiting for the admin-ack ConfigMaps' first read looks again.
ADMIN_READ_WAIT = 0.2

# The ClusterVersion CRD: its schema decides which capability names status may carry.
CLUSTERVERSION_CRD = f"{CLUSTERVERSIONS.plural}.{CLUSTERVERSIONS.group}"


def _slim_configmap(obj: JSON) -> JSON:
    """Verification ConfigMaps are watched for changes only: keep what identifies them."""
    meta = obj.get("metadata") or {}
    keep = ("name", "namespace", "resourceVersion", "annotations", "labels")
    return {"metadata": {k: meta[k] for k in keep if k in meta}}


def _is_verification_input(obj: JSON | None) -> bool:
    meta = (obj or {}).get("metadata") or {}
    return CONFIG_ANNOTATION in (meta.get("annotations") or {}) or SIGNATURES_LABEL in (meta.get("labels") or {})


def _failed_verification(final: ReleaseAcceptance) -> bool:
    return acc.NOT_VERIFIED in final.message


def _signature_stores(cv: JSON | None) -> Any:
    return ((cv or {}).get("spec") or {}).get("signatureStores")


@dataclass(frozen=True)
class StatusOptions:
    name: str = "version"
    release: Release = Release()  # the running release
    always_enabled: tuple[str, ...] = ()
    # Create the ClusterVersion when it is missing (as `start` does); else wait for someone to.
    create_missing: bool = False
    resync: float = 120.0  # upstream resyncs the ClusterVersion every 2m × rand[1,2)
    # Syncs are cheap (cached objects in, unchanged writes skipped): pace them only against churn.
    min_interval: float = 0.05
    retrieval_retry: float = 60.0
    # How long a failed retrieval waits for its failure to be written before it deletes its Pod.
    show_failure_within: float = 2.0
    # Where the verification ConfigMaps live: a failed retrieval is retried as soon as they or
    # the ClusterVersion's signatureStores change (None: only every `retrieval_retry`).
    verification_namespace: str | None = None
    # Where Events about the ClusterVersion go (the operator's namespace, as upstream's recorder).
    namespace: str = field(default_factory=env.namespace)
    # Read the admin-ack gates and acks for Upgradeable (upstream always does).
    admin_acks: bool = True
    # The ClusterUpdateAcceptRisks feature gate (spec.desiredUpdate.acceptRisks allowed).
    accept_risks: bool = False
    # The ImageStreamImportMode feature gate: status.desired.architecture is written.
    release_architecture: bool = False


class StatusOperator:
    def __init__(
        self,
        client: KubeClient,
        options: StatusOptions,
        *,
        retriever_factory: RetrieverFactory | None = None,
        writer: ClusterVersionStatusWriter | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_cluster_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        available_updates: Callable[[Mapping[str, Any]], Mapping[str, Any] | None] | None = None,
        upgradeable_risks: Callable[[Sequence[upgradeable.Risk]], None] | None = None,
    ) -> None:
        self.client = client
        # spec → what the available-updates poller found for its upstream and channel (or None).
        self.available_updates = available_updates
        # Told the risks behind Upgradeable after each status write (the ClusterUpdateAcceptRisks
        # gate merges them into the available updates).
        self.upgradeable_risks = upgradeable_risks
        self.options = options
        self.now = now
        self.new_cluster_id = new_cluster_id
        self.writer = writer or ClusterVersionStatusWriter(client, options.name, now=now)
        self.informers = InformerSet()
        self.cv_informer = self.informers.add(
            Informer(client, CLUSTERVERSIONS, field_selector=f"metadata.name={options.name}")
        )
        self.co_informer = self.informers.add(Informer(client, CLUSTEROPERATORS, transform=_slim_co))
        # A new ClusterVersion CRD (e.g. re-applied by a newer release) may accept names the old
        # one rejected: the writer then forgets what it pruned and tries them again.
        self.crd_informer = self.informers.add(
            Informer(client, CRDS, field_selector=f"metadata.name={CLUSTERVERSION_CRD}", transform=crdpolicy.slim_crd)
        )
        self.loop = SyncLoop(
            "clusterversion-status",
            self.sync,
            resync=options.resync * (1 + random.random()),
            min_interval=options.min_interval,
            # The echo of our own write costs a sync; a burst lets the next real change in at once.
            burst=10,
            expected_errors=(StatusWriteError, ApiError, ServerUnreachable),
        )
        self.coordinator = (
            RetrievalCoordinator(
                retriever_factory,
                self.loop.poke,
                retry_after=options.retrieval_retry,
                preconditions=self.check_preconditions,
                local_image=options.release.image,
                show_failure_within=options.show_failure_within,
            )
            if retriever_factory is not None
            else None
        )
        self._last_stored: JSON | None = None  # the ClusterVersion as our last write stored it
        self._precondition_inputs: tuple[Any, ...] | None = None
        self._missing_logged = False
        self._seen_uid: str | None = None  # the ClusterVersion this run last synced
        self.created = 0  # ClusterVersions this run created
        self._last_rejection = ""
        self._crd_seen: CrdRevision | None = None
        # After a CRD change, when to try the rejected names again: the API server may validate
        # with the old schema for a moment after the new CRD is visible (storage is swapped
        # asynchronously, and per API server).
        self._crd_retries: list[float] = []
        self._settle_timers = Timers("crd-settle-retry")
        self._stopped = threading.Event()
        self._wait_sync: threading.Thread | None = None
        # Enabled names the CRD rejected at some point: still enabled after they are forgotten
        # (a capability is never disabled), so they return to status when the CRD accepts them.
        self._carried_enabled: set[str] = set()
        self.crd_changes = 0  # CRD revisions after the first one seen
        self.recorder = (
            events.EventRecorder(client, options.namespace, now=now)
            if self.coordinator is not None or available_updates is not None
            else None
        )
        self._omitted_said = ""  # the last UpdatesOmitted message recorded as an Event
        self._omitted_event: events.EventSpec | None = None
        self.synced = threading.Event()
        for informer in (self.cv_informer, self.co_informer, self.crd_informer):
            informer.add_handler(lambda _type, _obj, _old: self.loop.poke())
        # The admin-ack ConfigMaps, by name: Upgradeable's admin-ack source.
        self.admin_informers: dict[tuple[str, str], Informer] = {}
        if options.admin_acks:
            for namespace, name in (upgradeable.ADMIN_GATES, upgradeable.ADMIN_ACKS):
                informer = self.informers.add(
                    Informer(client, CONFIGMAPS, namespace=namespace, field_selector=f"metadata.name={name}")
                )
                informer.add_handler(lambda _type, _obj, _old: self.loop.poke())
                self.admin_informers[(namespace, name)] = informer
        self.verification_informer: Informer | None = None
        if self.coordinator is not None and options.verification_namespace:
            self.verification_informer = self.informers.add(
                Informer(client, CONFIGMAPS, namespace=options.verification_namespace, transform=_slim_configmap)
            )
            self.verification_informer.add_handler(self._on_verification_configmap)
            self.cv_informer.add_handler(self._on_clusterversion)

    def _on_verification_configmap(self, _type: str, obj: JSON, old: JSON | None) -> None:
        # The first list is what the first attempt reads, not a change.
        informer = self.verification_informer
        if informer is None or not informer.has_synced:
            return
        if _is_verification_input(obj) or _is_verification_input(old):
            self._retry_failed(f"ConfigMap {(obj.get('metadata') or {}).get('name')} changed")

    def _on_clusterversion(self, _type: str, obj: JSON, old: JSON | None) -> None:
        if old is not None and _signature_stores(obj) != _signature_stores(old):
            self._retry_failed("spec.signatureStores changed")

    def _retry_failed(self, why: str) -> None:
        # Only failures of verification itself: a signature we just stored is a change too.
        if self.coordinator is not None and self.coordinator.retry_failed(_failed_verification):
            log.info("Release verification input changed (%s): retrying the failed payload retrieval now", why)

    @property
    def running(self) -> Release:
        return self.options.release

    def start(self) -> StatusOperator:
        self.informers.start()
        if self.coordinator is not None:
            self.coordinator.start()
        self.loop.start()
        self._wait_sync = threading.Thread(target=self._poke_when_synced, name="status-wait-sync", daemon=True)
        self._wait_sync.start()
        return self

    def stop(self) -> None:
        """Stops every thread this operator started (loop, retrieval, informers, timers) and
        waits for them: nothing of it runs, writes or logs after this returns."""
        self._stopped.set()
        self._settle_timers.cancel()
        self.loop.stop()
        if self.coordinator is not None:
            self.coordinator.stop()
        self.informers.stop()
        if self._wait_sync is not None:
            self._wait_sync.join(5.0)

    def _poke_when_synced(self) -> None:
        waiting = lambda: log.info("waiting for the ClusterVersion and ClusterOperator caches to sync")  # noqa: E731
        if self.informers.wait_for_sync_or_stop(self._stopped, waiting):
            self.loop.poke()

    def sync(self) -> None:
        if not (self.cv_informer.has_synced and self.co_informer.has_synced):
            return
        if any(not i.has_synced and not i.stats.last_error for i in self.admin_informers.values()):
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
        self._follow_crd()
        cv = self.cv_informer.get(self.options.name)
        if cv is None and self.options.create_missing:
            cv = self._get_or_create()
        if cv is None:
            if not self._missing_logged:
                log.warning("ClusterVersion %s not found; waiting for it to be created", self.options.name)
                self._missing_logged = True
            return
        self._missing_logged = False
        self._seen_uid = (cv.get("metadata") or {}).get("uid")
        if self.coordinator is not None:
            pending = desired.pending_update(cv, self.running, self.options.accept_risks)
            self.coordinator.request(*(pending or (None, False)))
        inputs = self.status_inputs(cv)
        operators = self.co_informer.items()

        def compute(obj: JSON) -> JSON:
            return desired.desired_status(obj, operators, inputs, self.now())

        try:
            written = self.writer.write(cv, compute)
            if self.coordinator is not None:
                self.coordinator.shown(inputs.acceptance)
        except StatusRejected as exc:
            # Not retried blindly: the next change or resync tries again; log each distinct error once.
            if str(exc) != self._last_rejection:
                log.error("%s", exc)
                self._last_rejection = str(exc)
            return
        except StatusWriteError:
            raise  # SyncLoop retries with backoff
        self._last_rejection = ""
        self._last_stored = written
        if self.upgradeable_risks is not None:
            self.upgradeable_risks(desired.upgradeable_risks(written, operators, inputs))
        self._retry_refused(written)
        self._note_omitted(written)
        self.synced.set()

    def check_preconditions(self, target: Release, force: bool) -> PreconditionOutcome:
        """The precondition checks of `target` on the ClusterVersion as it is now (called by the
        retrieval coordinator, on its thread)."""
        cv = self.cv_informer.get(self.options.name)
        stored = self._last_stored
        if cv is None or (stored is not None and _newer(stored, cv)):
            cv = stored  # the cache has not seen our last write yet
        inputs = StatusInputs(
            running=self.running,
            admin_gates=self._admin_configmap(upgradeable.ADMIN_GATES),
            admin_acks=self._admin_configmap(upgradeable.ADMIN_ACKS),
        )
        view = desired.precondition_view(cv or {}, self.co_informer.items(), inputs)
        outcome = preconditions.summarize(preconditions.run(view, target.version), force)
        klog.v(2).info(
            "Precondition checks of %s: %s",
            target.label(),
            "blocked" if outcome.blocked else outcome.message or "passed",
        )
        return outcome

    def _retry_refused(self, stored: JSON) -> None:
        """When what the precondition checks read changed (Upgradeable, the updates, the current
        target, the channel), a refused target is checked again now rather than after the retry delay."""
        if self.coordinator is None:
            return
        status = stored.get("status") or {}
        conditions = status.get("conditions") or []
        seen = (
            json.dumps(desired.find_condition(conditions, upgradeable.UPGRADEABLE), sort_keys=True),
            json.dumps(desired.find_condition(conditions, desired.RETRIEVED_UPDATES), sort_keys=True),
            json.dumps([status.get(k) for k in ("desired", "availableUpdates", "conditionalUpdates")], sort_keys=True),
            json.dumps((stored.get("spec") or {}).get("channel")),
            json.dumps((status.get("history") or [{}])[0], sort_keys=True),
        )
        if self._precondition_inputs is not None and seen != self._precondition_inputs:
            if self.coordinator.retry_failed(lambda final: final.reason == acc.PRECONDITION_CHECKS):
                klog.v(2).info("What the precondition checks read changed: checking the refused target again")
        self._precondition_inputs = seen

    def status_inputs(self, cv: JSON) -> StatusInputs:
        """What the status of `cv` is computed from, besides the ClusterOperators and `now`."""
        return StatusInputs(
            running=self.running,
            acceptance=self.coordinator.acceptance() if self.coordinator is not None else None,
            always_enabled=self.options.always_enabled,
            prior_enabled=tuple(sorted(self._carried_enabled)),
            accept_risks=self.options.accept_risks,
            release_architecture=self.options.release_architecture,
            updates=self.available_updates(cv.get("spec") or {}) if self.available_updates is not None else None,
            admin_gates=self._admin_configmap(upgradeable.ADMIN_GATES),
            admin_acks=self._admin_configmap(upgradeable.ADMIN_ACKS),
        )

    def _admin_configmap(self, where: tuple[str, str]) -> upgradeable.ConfigMapRead | None:
        """An admin-ack ConfigMap as its informer holds it (None when not watched)."""
        informer = self.admin_informers.get(where)
        if informer is None:
            return None
        namespace, name = where
        if not informer.has_synced:
            return upgradeable.ConfigMapRead(error=informer.stats.last_error or "not read yet")
        found = informer.get(name, namespace)
        if found is None:
            return upgradeable.ConfigMapRead(error=f'{CONFIGMAPS.plural} "{name}" not found')
        data = found.get("data") or {}
        return upgradeable.ConfigMapRead({str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {})

    def _note_omitted(self, written: JSON) -> None:
        """An Event when status newly leaves out updates (once per distinct message)."""
        conditions = (written.get("status") or {}).get("conditions") or []
        retrieved = desired.find_condition(conditions, desired.RETRIEVED_UPDATES)
        spec = events.updates_omitted_event(retrieved)
        message = spec.message if spec is not None else ""
        if message != self._omitted_said:
            self._omitted_said = message
            self._omitted_event = spec

    @property
    def crd_seen(self) -> CrdRevision | None:
        """The ClusterVersion CRD revision the last sync saw (None before the CRD cache synced)."""
        return self._crd_seen

    def _follow_crd(self) -> None:
        """Carry the pruned enabled names; when the CRD changed, make the writer forget what the
        old one rejected, so this sync writes those names again (pruned again if still rejected)."""
        self._carried_enabled.update(self.writer.pruned_state().get(capabilities.ENABLED, ()))
        if not self.crd_informer.has_synced:
            return
        observed = crd_revision(self.crd_informer.get(CLUSTERVERSION_CRD))
        seen, changed = self._crd_seen, crd_changed(self._crd_seen, observed)
        if observed is not None:
            self._crd_seen = observed
        if not changed:
            self._retry_after_crd_change()
            return
        self.crd_changes += 1
        self._crd_retries = crdpolicy.settle_deadlines(time.monotonic())
        for delay in crdpolicy.CRD_SETTLE_RETRIES:
            self._settle_timers.add(delay, self.loop.poke)
        forgotten = self.writer.forget_pruned()
        if forgotten:
            assert seen is not None and observed is not None
            klog.v(2).info(
                "The ClusterVersion CRD %s changed (%s); writing the capability names the old schema rejected "
                "again: %s",
                CLUSTERVERSION_CRD,
                crdpolicy.change_label(seen, observed),
                crdpolicy.names_text(forgotten),
            )

    def _retry_after_crd_change(self) -> None:
        """Names rejected again right after a CRD change, although its schema accepts them, are
        tried again on `crdpolicy`'s schedule."""
        due, self._crd_retries = crdpolicy.settle_due(self._crd_retries, time.monotonic())
        if not due:
            return
        accepted = crdpolicy.schema_accepts(self.writer.pruned_state(), self.crd_informer.get(CLUSTERVERSION_CRD))
        forgotten = self.writer.forget(accepted)
        if forgotten:
            klog.v(2).info(
                "The new ClusterVersion CRD may not have been in effect yet; writing the rejected capability "
                "names again: %s",
                crdpolicy.names_text(forgotten),
            )

    def _record_events(self) -> None:
        """Events for the retrievals that started or ended (a failed one gives a Warning, as upstream),
        and for updates status newly leaves out."""
        if self.recorder is None:
            return
        involved = events.involved_object(self.options.name, self.options.namespace)
        if self._omitted_event is not None:
            omitted, self._omitted_event = self._omitted_event, None
            self.recorder.record(involved, omitted)
        if self.coordinator is None:
            return
        for outcome in self.coordinator.take_outcomes():
            version, image = outcome.target.version, outcome.target.image
            if outcome.preconditions is not None:
                for spec in events.precondition_events(version, image, outcome.preconditions):
                    self.recorder.record(involved, spec)
                continue
            found = events.retrieval_event(version, image, outcome.state, outcome.error)
            if found is not None:
                self.recorder.record(involved, found)

    def _get_or_create(self) -> JSON:
        """The cache has no ClusterVersion: read it live (the cache may lag our own create), else
        create it. API errors propagate: the loop retries with backoff."""
        name = self.options.name
        try:
            return self.client.get(CLUSTERVERSIONS, name)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
        body = new_cluster_version(name, self.running, self.new_cluster_id())
        if self._seen_uid is not None:
            log.warning("ClusterVersion %s (uid %s) was deleted while running; recreating it", name, self._seen_uid)
        try:
            created = self.client.create(CLUSTERVERSIONS, body)
        except ApiError as exc:
            if not exc.is_already_exists():
                raise
            return self.client.get(CLUSTERVERSIONS, name)  # created meanwhile by someone else
        self.created += 1
        spec = body["spec"]
        log.info(
            "Created ClusterVersion %s for release %s: clusterID %s, channel %s",
            name,
            self.running.label(),
            spec["clusterID"],
            json.dumps(spec.get("channel", "")),
        )
        return created

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
        return self.cv_informer.get(self.options.name), self.co_informer.items(), counts


def _newer(a: JSON, b: JSON) -> bool:
    """Whether `a` has a higher resourceVersion than `b` (numeric ones only, as upstream)."""
    try:
        return int((a.get("metadata") or {}).get("resourceVersion") or 0) > int(
            (b.get("metadata") or {}).get("resourceVersion") or 0
        )
    except (TypeError, ValueError):
        return False


def _slim_co(obj: JSON) -> JSON:
    """Keep what status and metrics read from a ClusterOperator (not relatedObjects, extension)."""
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta[k] for k in ("name", "annotations", "resourceVersion", "uid") if k in meta},
        "status": {k: status[k] for k in ("conditions", "versions") if k in status},
    }
