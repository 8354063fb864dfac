"""The one ClusterVersion status writer.

Everything that changes ClusterVersion status (the status loop, payload retrieval through it)
hands this writer a pure function `compute(cv) -> status`; the writer:

* computes the whole status against the object it writes, skips the write when nothing changed;
* PUTs it to `/status` with that object's resourceVersion (optimistic concurrency);
* on 409 re-reads, checks the UID, recomputes against the live object and tries again, so fields
  other writers own (kept by `compute`) are never lost and our write is never dropped;
* retries conflicts and transient API errors with tenacity, bounded and jittered;
* on a rejection it can fix by leaving values out (`status.clusterversion.rejections`): 422 Invalid
  whose every cause is a capability name the installed CRD does not support or a value copied from
  outside (update lists, the current release's channels and URL), or a request too large (413, the
  storage's own size limit, or a body over `MAX_REQUEST_BYTES`, which is then not sent at all),
  leaves exactly those values out and writes again at once: the write lands in two tries. What was
  left out is remembered (later writes leave it out from the start), logged once, counted, and
  shown to the admin (`CapabilitiesPruned`, `RetrievedUpdates`). Any other rejection is raised as
  `StatusRejected`, not retried. When the CRD changes, the status loop calls `forget_pruned()` and
  the names are written again (a roll-forward restores them; a CRD that still rejects them gets
  them pruned again within two tries).

Why a condition for the pruned names: the ClusterVersion CRD prunes status fields its schema does
not know, so an extra status field would be silently dropped, and folding the names into
Available/Progressing/Failing would change what alerts and `oc adm upgrade` read from those.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from cvo_py.runtime import klog
from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.gotext.messages import bounded
from cvo_py.runtime.jsondata import encode_json
from cvo_py.runtime.kube import CLUSTERVERSIONS, JSON, ApiError, KubeClient, ServerUnreachable
from status.clusterversion import rejections

log = logging.getLogger(__name__)

Compute = Callable[[JSON], JSON]


class StatusWriteError(Exception):
    """A ClusterVersion status write that did not land."""


class StatusRejected(StatusWriteError):
    """The API server rejected the status for reasons leaving values out cannot fix."""

    def __init__(self, rejection: rejections.Rejection) -> None:
        self.rejection = rejection
        if rejection.too_large:
            super().__init__(f"ClusterVersion status rejected as too large: {bounded(rejection.message, 500)}")
            return
        causes = [rejections.describe(c) for c in rejection.other] + [value.cause for value in rejection.values]
        detail = "; ".join(causes) if causes else (rejection.message or "no causes given")
        super().__init__(f"ClusterVersion status rejected as invalid: {bounded(detail, MAX_DETAIL)}")


# How much of a rejection's causes its error (and log line) says.
MAX_DETAIL = 4096


# The API server's default limit on the body of a write (kube-apiserver --max-resource-write-bytes):
# a larger status is refused without being sent (the server may close the connection mid-body).
MAX_REQUEST_BYTES = 3 * 1024 * 1024


def too_large(exc: ApiError) -> bool:
    """A write refused for its size: 413, or the storage's limit (etcd's request or gRPC message
    size), which the API server answers with 500."""
    if exc.status == 413:
        return True
    text = exc.message.lower()
    return exc.status == 500 and ("request is too large" in text or ("resourceexhausted" in text and "larger" in text))


class ClusterVersionRecreated(StatusWriteError):
    def __init__(self) -> None:
        super().__init__("cluster version was deleted and recreated, cannot update status")


class ClusterVersionMissing(StatusWriteError):
    def __init__(self, name: str) -> None:
        super().__init__(f"ClusterVersion {name!r} does not exist")


@dataclass
class WriteStats:
    """Totals since start, read by the metrics collector at scrape time."""

    writes: int = 0  # successful PUTs
    unchanged: int = 0  # computes that needed no write
    conflicts: int = 0  # 409s
    failures: int = 0  # writes that did not land after all tries
    rejections: collections.Counter[str] = field(default_factory=collections.Counter)  # by field ("request": size)
    last_error: str = ""


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, ServerUnreachable):
        return True
    if isinstance(exc, ApiError):
        return exc.is_conflict() or exc.status == 429 or (exc.status >= 500 and not too_large(exc))
    return False


class ClusterVersionStatusWriter:
    def __init__(
        self,
        client: KubeClient,
        name: str = "version",
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        attempts: int = 10,
        max_wait: float = 2.0,
    ) -> None:
        if attempts < 2:
            raise ValueError("attempts must be at least 2 (a pruned write needs a second try)")
        self.client = client
        self.name = name
        self.now = now
        self.attempts = attempts
        self.max_wait = max_wait
        self.stats = WriteStats()
        self.pruned = rejections.PrunedValues()
        self._lock = threading.RLock()
        # What we last sent, the resourceVersion it replaced and what the server stored: lets a
        # stale cache (still at the replaced version) be recognised and server-side normalisation
        # not be mistaken for a change (which would write forever).
        self._last_sent: JSON | None = None
        self._last_replaced_rv: str | None = None
        self._last_written: JSON | None = None

    def pruned_state(self) -> dict[str, tuple[str, ...]]:
        with self._lock:
            return self.pruned.state()

    def forget_pruned(self) -> dict[str, tuple[str, ...]]:
        """Forget the names the CRD rejected (it changed); returns them. The next write carries
        them again, and prunes them again in the same write if they are still rejected."""
        with self._lock:
            return self.pruned.clear()

    def forget(self, names: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
        """Forget these pruned names (per list), e.g. those a new CRD's schema accepts."""
        with self._lock:
            return self.pruned.discard(names)

    def write(self, cached: JSON | None, compute: Compute) -> JSON:
        """Bring the ClusterVersion's status to `compute(cv)`; returns the object as stored."""
        with self._lock:
            state = {"obj": self._freshest(cached), "stale": cached is None}
            retrying = Retrying(
                stop=stop_after_attempt(self.attempts),
                wait=wait_random_exponential(multiplier=0.05, max=self.max_wait),
                retry=retry_if_exception(_retryable),
                before_sleep=self._before_sleep,
                reraise=True,
            )
            try:
                for attempt in retrying:
                    with attempt:
                        return self._attempt(state, compute)
            except StatusWriteError as exc:
                self.stats.failures += 1
                self.stats.last_error = str(exc)
                raise
            except ClientError as exc:
                self.stats.failures += 1
                self.stats.last_error = str(exc)
                raise StatusWriteError(f"ClusterVersion status not written after {self.attempts} tries: {exc}") from exc
            raise AssertionError("unreachable: tenacity either returns or raises")

    def _before_sleep(self, retry_state: RetryCallState) -> None:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        klog.v(2).info("ClusterVersion status write attempt %d failed (%s); retrying", retry_state.attempt_number, exc)

    def _freshest(self, cached: JSON | None) -> JSON | None:
        """The informer may not have seen our own last write yet; then our copy is newer."""
        if cached is None or self._last_written is None:
            return cached
        cached_rv = (cached.get("metadata") or {}).get("resourceVersion")
        if cached_rv is not None and cached_rv == self._last_replaced_rv:
            return self._last_written
        return cached

    def _read(self, previous: JSON | None) -> JSON:
        try:
            live = self.client.get(CLUSTERVERSIONS, self.name)
        except ApiError as exc:
            if exc.is_not_found():
                raise ClusterVersionMissing(self.name) from exc
            raise
        old_uid = ((previous or {}).get("metadata") or {}).get("uid")
        if old_uid and live.get("metadata", {}).get("uid") != old_uid:
            raise ClusterVersionRecreated()
        return live

    def _attempt(self, state: dict[str, Any], compute: Compute) -> JSON:
        if state["stale"] or state["obj"] is None:
            state["obj"] = self._read(state["obj"])
            state["stale"] = False
        obj: JSON = state["obj"]
        status = self._compute(obj, compute)
        if self._unchanged(obj, status):
            self.stats.unchanged += 1
            return obj
        try:
            return self._put(obj, status)
        except ApiError as exc:
            if exc.is_conflict():
                self.stats.conflicts += 1
                state["stale"] = True
                raise
            if exc.status == 404:
                raise ClusterVersionMissing(self.name) from exc
            rejection = self._rejection(exc, status)
            if rejection is None:
                raise
            first = exc
        # Rejected: leave out what was rejected and write again right away, or give up with the causes.
        self._record_rejection(rejection)
        if not (rejection.prunable and self._remember(rejection)):
            raise StatusRejected(rejection) from first
        status = self._compute(obj, compute)
        try:
            return self._put(obj, status)
        except ApiError as second:
            if second.is_conflict():
                self.stats.conflicts += 1
                state["stale"] = True
                raise
            again = self._rejection(second, status)
            if again is None:
                raise
            self._record_rejection(again)
            self._remember(again)
            raise StatusRejected(again) from second

    @staticmethod
    def _rejection(exc: ApiError, status: JSON) -> rejections.Rejection | None:
        """What the API server rejected, when `exc` is a rejection of the values sent."""
        if too_large(exc):
            return rejections.too_large(status, exc.message)
        if exc.is_invalid():
            return rejections.parse_rejection(exc.status_object, status)
        return None

    def _compute(self, obj: JSON, compute: Compute) -> JSON:
        status = compute(obj)
        self.pruned.retain(status)  # what is no longer offered need not be remembered
        return rejections.apply_pruned(status, self.pruned.state(), self.now(), self.pruned.outside())

    def _unchanged(self, obj: JSON, status: JSON) -> bool:
        live = obj.get("status") or {}
        if status == live:
            return True
        # The server stored our last status in its own normal form: not a change.
        return status == self._last_sent and live == (self._last_written or {}).get("status")

    def _put(self, obj: JSON, status: JSON) -> JSON:
        body = {key: value for key, value in obj.items() if key != "status"}
        body["status"] = status
        encoded = encode_json(body)  # once: what is measured is what is sent
        size = len(encoded)
        if size > MAX_REQUEST_BYTES:
            message = f"Request entity too large: limit is {MAX_REQUEST_BYTES} ({size} bytes, not sent)"
            raise ApiError(413, json.dumps({"kind": "Status", "reason": "RequestEntityTooLarge", "message": message}))
        written = self.client.replace_status(CLUSTERVERSIONS, body, encoded=encoded)
        self.stats.writes += 1
        self._last_sent = status
        self._last_replaced_rv = (obj.get("metadata") or {}).get("resourceVersion")
        self._last_written = written
        klog.v(4).info(
            "ClusterVersion %s status written at resourceVersion %s",
            self.name,
            written.get("metadata", {}).get("resourceVersion"),
        )
        return written

    def _record_rejection(self, rejection: rejections.Rejection) -> None:
        for field_path in rejection.fields():
            self.stats.rejections[field_path] += 1

    def _remember(self, rejection: rejections.Rejection) -> bool:
        """Remember rejected values; log each once. False when nothing new was learned."""
        new = self.pruned.add(rejection.values)
        if rejection.too_large and new:
            log.warning(
                "The API server refused ClusterVersion status as too large (%s); leaving out %s while they are "
                "offered unchanged",
                rejection.message,
                ", ".join(f"{len(item.value)} {item.field}" for item in new),
            )
            return True
        for item in new:
            if item.field in rejections.CAPABILITY_LISTS:
                log.warning(
                    "The ClusterVersion CRD rejected status.capabilities.%s value %s; "
                    "leaving it out of status from now on (the capability stays enabled)",
                    item.field,
                    json.dumps(item.value),
                )
            else:
                log.warning(
                    "The API server rejected status.%s %s (%s); leaving it out of status while it is offered unchanged",
                    item.field,
                    item.label(),
                    item.cause,
                )
        return bool(new)
