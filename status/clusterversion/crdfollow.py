"""The ClusterVersion CRD, followed for the status writer: when it changes (a roll-forward re-applies
a newer schema), the capability names the writer pruned under the old one are forgotten and written
again; names rejected again right after the change, although the new schema accepts them, are
tried again on `crdpolicy`'s schedule (the API server may validate with the old schema for a
moment after the new CRD is visible: storage is swapped asynchronously, and per API server).
What is decided is `crdpolicy`'s; this holds the state between syncs."""

from __future__ import annotations

import time
from collections.abc import Callable

from cvo_py.runtime import klog
from cvo_py.runtime.informer import Informer
from cvo_py.runtime.loop import Timers
from status.clusterversion import capabilities, crdpolicy
from status.clusterversion.caches import CLUSTERVERSION_CRD
from status.clusterversion.crdpolicy import CrdRevision, crd_changed, crd_revision
from status.clusterversion.writer import ClusterVersionStatusWriter


class CrdFollower:
    """Called at the start of every sync, on the sync's thread; `poke` asks for another sync, on
    one of `timers` (the controller cancels them when it stops)."""

    def __init__(
        self, crd: Informer, writer: ClusterVersionStatusWriter, poke: Callable[[], None], timers: Timers
    ) -> None:
        self._crd = crd
        self._writer = writer
        self._poke = poke
        self._timers = timers
        # The revision the last sync saw (None before the CRD cache synced).
        self.seen: CrdRevision | None = None
        self.changes = 0  # revisions after the first one seen
        # When to try the rejected names again after a change.
        self._retries: list[float] = []
        # Enabled names the CRD rejected at some point: still enabled after they are forgotten
        # (a capability is never disabled), so they return to status when the CRD accepts them.
        self._carried_enabled: set[str] = set()

    def carried_enabled(self) -> tuple[str, ...]:
        return tuple(sorted(self._carried_enabled))

    def follow(self) -> None:
        """Carry the pruned enabled names; when the CRD changed, make the writer forget what the
        old one rejected, so this sync writes those names again (pruned again if still rejected)."""
        self._carried_enabled.update(self._writer.pruned_state().get(capabilities.ENABLED, ()))
        if not self._crd.has_synced:
            return
        observed = crd_revision(self._crd.get(CLUSTERVERSION_CRD))
        seen, changed = self.seen, crd_changed(self.seen, observed)
        if observed is not None:
            self.seen = observed
        if not changed:
            self._retry_after_change()
            return
        self.changes += 1
        self._retries = crdpolicy.settle_deadlines(time.monotonic())
        for delay in crdpolicy.CRD_SETTLE_RETRIES:
            self._timers.add(delay, self._poke)
        forgotten = self._writer.forget_pruned()
        if forgotten:
            assert seen is not None and observed is not None
            klog.v(2).info(
                "The ClusterVersion CRD %s changed (%s); writing the capability names the old schema rejected "
                "again: %s",
                CLUSTERVERSION_CRD,
                crdpolicy.change_label(seen, observed),
                crdpolicy.names_text(forgotten),
            )

    def _retry_after_change(self) -> None:
        due, self._retries = crdpolicy.settle_due(self._retries, time.monotonic())
        if not due:
            return
        accepted = crdpolicy.schema_accepts(self._writer.pruned_state(), self._crd.get(CLUSTERVERSION_CRD))
        forgotten = self._writer.forget(accepted)
        if forgotten:
            klog.v(2).info(
                "The new ClusterVersion CRD may not have been in effect yet; writing the rejected capability "
                "names again: %s",
                crdpolicy.names_text(forgotten),
            )
