"""The ClusterVersion controller's side of the sync worker: what each status sync reads of it (its
latest report, with the clocks of the ClusterOperators it waits on: `status.clusterversion.progress`)
and the work each write hands it (`status.clusterversion.work`: the running release's payload,
or an accepted target's), with the Events of the running release's payload at the first one."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from payload.release import MULTI, Release
from payload.retrieval import go_architecture
from status.clusterversion import desired, events, progress, work
from status.clusterversion.desired import StatusInputs
from status.clusterversion.spec import current_release
from syncworker.channel import ReportChannel
from syncworker.load import Payload
from syncworker.modes import Mode
from syncworker.passes import Report, Work
from syncworker.select import Selection

log = logging.getLogger(__name__)


class Worker(Protocol):
    """The sync worker as the controller drives it (`syncworker.worker.SyncWorker`)."""

    def update(self, work: Work, mode: Mode) -> None: ...


@dataclass(frozen=True)
class SyncWorkerLink:
    """What the controller reads of the sync worker and hands it: the worker, the channel of its
    reports, the running release's payload (None when it could not be loaded, `refused` saying
    why: nothing is applied), the load-time selection, and the applier's pending deletions."""

    worker: Worker
    channel: ReportChannel
    local: Payload | None
    selection: Selection
    pending_deletions: Callable[[], list[str]] = list
    refused: str = ""


class WorkerDriver:
    """Reads the worker for each sync and hands it its work after each write, on the controller's
    loop thread only. `poke` asks the loop for another sync; `record_local` records the running
    release's payload Events (once, when the first work is handed: the ClusterVersion exists)."""

    def __init__(
        self,
        link: SyncWorkerLink,
        running: Release,
        accept_risks: bool,
        poke: Callable[[], None],
        record_local: Callable[[Release, str], None],
    ) -> None:
        self.link = link
        self.running = running
        self.accept_risks = accept_risks
        self._poke = poke
        self._record_local = record_local
        self._clock = progress.Clock()  # the ClusterOperators the worker waits on, since when
        self._applying: Payload | None = None  # what the worker was last handed
        self._handover_note = ""
        self._local_recorded = False
        self.implicit: set[str] = set()  # capabilities a new payload implicitly enabled
        self.final = False  # the last sync at shutdown: status only, no work handed

    def state(self) -> progress.WorkerState:
        """What the worker tells this sync; its ClusterOperator clocks advanced to its latest report."""
        link = self.link
        report: Report | None = link.channel.latest()
        self._clock = progress.operator_clock(self._clock, report)
        return progress.WorkerState(report, dict(self._clock.since), tuple(link.pending_deletions()), link.refused)

    def applied(self) -> Release:
        """The release the worker applies: the running one before it is handed any."""
        return self._applying.release if self._applying is not None else self.running

    def hand_work(self, cv: Mapping[str, Any], inputs: StatusInputs) -> None:
        """Hand the worker what it is to apply now (`status.clusterversion.work`)."""
        link = self.link
        if self.final:
            return
        if not self._local_recorded:
            self._local_recorded = True
            release = link.local.release if link.local is not None else self.running
            self._record_local(release, link.refused)
        caps = desired.capabilities_status(cv, inputs, current_release(cv, self.running))
        given = work.handover(
            cv,
            running=self.running,
            local=link.local,
            acceptance=inputs.acceptance,
            applying=self._applying,
            selection=work.apply_selection(link.selection, cv, caps.known, caps.enabled),
            accept_risks=self.accept_risks,
        )
        if given.note != self._handover_note:
            self._handover_note = given.note
            if given.note:
                log.info("%s", given.note)
        if given.implicit - self.implicit:
            log.info("The new payload implicitly enables capabilities: %s", ", ".join(sorted(given.implicit)))
            self.implicit |= given.implicit
            self._poke()  # status says so at the next sync
        if given.work is not None:
            self._applying = given.work.payload
            link.worker.update(given.work, given.mode)


def record_local_payload(
    recorder: events.EventRecorder, involved: Mapping[str, Any], release: Release, image: str, refused: str
) -> None:
    """The Events of the running release's payload, loaded at start (upstream records them at
    each start): PayloadLoaded, or why it could not be loaded. The architecture is Multi for a
    multi-architecture payload, else this machine's, in Go's words (as retrieval names it)."""
    architecture = go_architecture(release.architecture == MULTI)
    for spec in events.local_payload_events(release.version, image, architecture, refused):
        recorder.record(involved, spec)
