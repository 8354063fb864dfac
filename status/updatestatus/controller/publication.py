"""One sync's publication: which ConfigMaps of the API are written, when (every write takes a
token of the write budget, `status.updatestatus.controller.pacing`), in which order, and what the
main ConfigMap's metadata (`usc-meta`) says of them.

With the same shards as before, the ConfigMaps that changed are written in parallel, as many as
the budget lets through now, the main ConfigMap after the others (it never says more is current
than they hold); those deferred keep their place, and while some wait the main ConfigMap says the
writes are held back (`paced`), stamped with the time since which the oldest of them has not been
current. A layout change (shards gained or lost) is written in one go once the budget has room, in
the order that lets a reader in between find every insight (`layout_write_order`): those that gain
keys, the main ConfigMap, those that lose keys, each group at once; what it writes beyond the
bucket is paid back after it, while the main ConfigMap says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime

from cvo_py import __version__
from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.times import to_now
from cvo_py.runtime.kube import JSON
from status.updatestatus.api import metadata, wire
from status.updatestatus.api.names import SHARDS_KEY
from status.updatestatus.api.sharding import ShardPlan, layout_write_order
from status.updatestatus.controller.pacing import WritePacer, current_as_of
from status.updatestatus.controller.patches import SizedPlan
from status.updatestatus.controller.publisher import Publisher

Published = tuple[int, list[str]]  # (writes made, keys left out) of one ConfigMap


@dataclass
class Outcome:
    """What one publication did: writes made, keys left out, ConfigMaps deferred, and in how many
    seconds the sync should run again (None: at the next change)."""

    wrote: int = 0
    omitted: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    again_in: float | None = None


@dataclass
class _Round:
    """One publication's ConfigMaps, what each is to hold, and the metadata it says."""

    in_use: list[str]  # the shards holding insights
    listed: list[str]  # the shards the main ConfigMap lists
    stale: list[str]  # shards to empty
    fits: dict[str, SizedPlan | None]
    metas: dict[str, str]  # the metadata to write, by ConfigMap (the main one only)
    meta: Callable[[int, bool], str]  # the metadata stamped at an instant, paced or not
    stamp: int  # when the caches were read, in ns
    told: bool  # what is published already says that writes are held back


class Publication:
    """Writes each sync's ConfigMaps within the write budget; keeps which ConfigMaps wait."""

    def __init__(
        self,
        publisher: Publisher,
        identity: str,
        resync: float,
        report_unreadable: Callable[[str, object, Exception], None],
    ) -> None:
        self.publisher = publisher
        self.configmap = publisher.configmap
        self.identity = identity
        self.resync = resync
        self._report_unreadable = report_unreadable
        self._writers = ThreadPoolExecutor(4, thread_name_prefix="usc-write")
        # Every ConfigMap write takes a token: at most so many writes a second (see `pacing`).
        self.pacer = WritePacer()
        # ConfigMaps whose write was deferred → since when they have not been current (monotonic);
        # every other one is current as of the last sync that went through (`_current_as_of`).
        self._waiting: dict[str, float] = {}
        self._current_as_of = time.monotonic()

    def stop(self) -> None:
        """Waits for a write in flight; queued ones are dropped."""
        self._writers.shutdown(wait=True, cancel_futures=True)

    def write(self, main: JSON, plan: ShardPlan, read_at: float, read_wall: datetime) -> Outcome:
        """Publish `plan` (the caches read at `read_at`, monotonic, `read_wall`, wall clock) as the
        budget allows; an ApiError of a write is raised once every write of this sync has ended."""
        writes_before = self.publisher.writes
        work = self._round(main, plan, read_wall)
        out = Outcome()
        now = time.monotonic()  # when the writes are chosen, and charged: they start then
        try:
            if not work.stale and sorted(work.listed) == sorted(work.in_use) and all(
                self.publisher.view(n) for n in work.in_use
            ):
                results, need, in_debt = self._same_layout(work, main, read_at, now, out), 1, False
            else:
                results, need, in_debt = self._layout_change(work, main, now, out)
            for name in out.deferred:  # not written, but what it leaves out is still left out
                fit = work.fits[name]
                out.omitted.extend(fit.omitted if fit is not None else ())
            for written, skipped in results:
                out.wrote += written
                out.omitted.extend(skipped)
        finally:
            # Charged when chosen: charged when done, a bucket full at the start would not refill
            # while they are made (a layout change's 33 writes take seconds on a busy server).
            self.pacer.wrote(now, self.publisher.writes - writes_before)
        self._waiting = {name: since for name, since in self._waiting.items() if name in out.deferred}
        self._current_as_of = read_at  # every ConfigMap not waiting is current as of the read
        if out.deferred:
            # The rest when the pacer has room (or at the next change), as one more sync: counted
            # from now, when this sync's writes are paid, not from when it chose them.
            out.again_in = self.pacer.wait_for(time.monotonic(), need)
        elif in_debt:  # once it is paid back, a sync says that writes are no longer held back
            out.again_in = self.pacer.wait_for(time.monotonic(), 1)
        return out

    def _round(self, main: JSON, plan: ShardPlan, read_wall: datetime) -> _Round:
        in_use = [n for n in plan.configmaps if n != self.configmap]
        try:
            listed = wire.shard_names(main.get("data") or {})
        except wire.DecodeError as exc:
            listed = []  # someone else's value under our key: rewritten below
            self._report_unreadable(SHARDS_KEY, (main.get("data") or {}).get(SHARDS_KEY), exc)
        stale = sorted({*self.publisher.shards, *listed} - set(in_use) - {self.configmap})
        names = [*in_use, self.configmap, *stale]
        self.publisher.watch(names)  # the informers of new shards, all at once
        fits = {name: self.publisher.fit(name, plan.configmaps.get(name, {})) for name in names}
        meta_omitted = [key for fit in fits.values() if fit is not None for key in fit.omitted]
        changed = any(fit is not None and fit.patch for fit in fits.values())
        published, previous = self._previous_metadata(main)

        def meta(at: int, paced: bool = False) -> str:
            return self._metadata(published, previous, meta_omitted, changed, at, paced)

        stamp = to_now(read_wall)
        told = previous is not None and previous.paced
        return _Round(in_use, listed, stale, fits, {self.configmap: meta(stamp)}, meta, stamp, told)

    def _same_layout(self, work: _Round, main: JSON, read_at: float, now: float, out: Outcome) -> list[Published]:
        """The usual case: the same shards, each ConfigMap changed independently, in parallel, as
        many as the pacer lets through now (all of them unless many changes came at once)."""
        order = [self.configmap, *work.in_use]
        changing = [n for n in order if self.publisher.changes(n, work.fits[n], work.metas.get(n))]
        # until written, a deferred one keeps its place (since when it has not been current)
        self._waiting = waiting = {n: self._waiting.get(n, self._current_as_of) for n in changing}
        chosen, _ = self.pacer.choose_and_tell(now, waiting, self.configmap, work.told, self._current_as_of)
        out.deferred = [n for n in waiting if n not in chosen]
        if self.configmap in chosen and out.deferred:
            # The stamp says how old the oldest published insight may be.
            as_of = current_as_of(read_at, waiting, chosen)
            work.metas[self.configmap] = work.meta(work.stamp - round((read_at - as_of) * SECOND), True)
        # the main ConfigMap after the others: it never says more is current than they hold
        results = self._write_all(work, main, [n for n in work.in_use if n not in out.deferred])
        if self.configmap not in out.deferred:
            results.append(self._publish(work, main, self.configmap))
        return results

    def _layout_change(
        self, work: _Round, main: JSON, now: float, out: Outcome
    ) -> tuple[list[Published], int, bool]:
        """Shards gained or lost: all the writes at once, in `layout_write_order`, once the pacer
        has room. Returns what was written, the tokens the writes wait for when deferred, and
        whether they were written beyond the bucket (to be paid back after them)."""
        layout = layout_write_order(work.in_use, work.listed, work.stale)
        room = self.pacer.room(now)
        to_write = [n for n in layout if self.publisher.changes(n, work.fits[n], work.metas.get(n))]
        if len(to_write) > room:
            work.metas[self.configmap] = work.meta(work.stamp, True)
            to_write = [n for n in layout if self.publisher.changes(n, work.fits[n], work.metas.get(n))]
        if self.pacer.wait_for(now, len(to_write)) > 0:
            out.deferred = layout
            self._waiting = {n: self._waiting.get(n, self._current_as_of) for n in to_write}
            return [], len(to_write), False
        # those that gain keys, the main ConfigMap, those that lose keys: each group at once
        main_at = layout.index(self.configmap)
        results = self._write_all(work, main, layout[:main_at])
        results.append(self._publish(work, main, self.configmap))
        results.extend(self._write_all(work, main, layout[main_at + 1 :]))
        self._waiting = {}
        return results, 1, len(to_write) > room

    def _publish(self, work: _Round, main: JSON, name: str) -> Published:
        return self.publisher.publish(name, work.fits[name], owner=main, meta=work.metas.get(name))

    def _write_all(self, work: _Round, main: JSON, names: list[str]) -> list[Published]:
        """Publish each of `names` in parallel; all have ended when this returns or raises (the
        first failure), so no write of this sync overlaps one of the next."""
        futures = [self._writers.submit(self._publish, work, main, name) for name in names]
        wait(futures)
        return [future.result() for future in futures]

    def _previous_metadata(self, main: JSON) -> tuple[str | None, metadata.PublicationMetadata | None]:
        """The metadata value the main ConfigMap holds, and what it says (None: none, or unreadable)."""
        published = (main.get("data") or {}).get(metadata.META_KEY)
        if published is None:
            return None, None
        try:
            return published, metadata.decode(published)
        except metadata.MetadataError as exc:
            self._report_unreadable(metadata.META_KEY, published, exc)
            return published, None  # someone else's value under our key: rewritten

    def _metadata(
        self,
        published: str | None,
        previous: metadata.PublicationMetadata | None,
        omitted: list[str],
        insights_changed: bool,
        computed_at: int,
        paced: bool = False,
    ) -> str:
        """The metadata value to publish: refreshed when the insights change and once per resync,
        stamped `computed_at` (when all it stands for was current); `paced` while writes wait."""
        desired = metadata.build(
            computed_at, self.identity, __version__, int(self.resync * SECOND), omitted, paced
        )
        chosen = metadata.refresh(previous, desired, insights_changed)
        return published if chosen is previous and published is not None else metadata.encode(chosen)
