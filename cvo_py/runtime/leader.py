"""Leader election on a coordination.k8s.io/v1 Lease, with library-go's default timings.

Only the holder runs the controllers; a replica that cannot renew within the renew deadline
stops leading (the caller exits, as upstream does), and another replica takes the Lease once
it has seen the record unchanged for the lease duration (by its own clock, not the holder's).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.gotext.times import micro_time
from cvo_py.runtime.kube import JSON, LEASES, ApiError, KubeClient

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaseTimings:
    lease_duration: float = 137.0
    renew_deadline: float = 107.0
    retry_period: float = 26.0


def default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def lease_free_for(spec: JSON, identity: str, observed_at: float, now: float) -> bool:
    """Whether `identity` may take or renew a Lease whose record `spec` this replica has seen
    unchanged since `observed_at` (pure; both times on this replica's monotonic clock).

    Expiry counts from when this replica last saw the record change, not from the holder's
    `renewTime`: the holder's clock may be minutes off ours, a local monotonic clock is not.
    """
    holder = spec.get("holderIdentity") or ""
    if not holder or holder == identity:
        return True
    duration = float(spec.get("leaseDurationSeconds") or 0)
    return now - observed_at > duration


class LeaderElector:
    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        name: str,
        *,
        identity: str | None = None,
        timings: LeaseTimings = LeaseTimings(),
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        # Lease calls must not outlast the renew deadline: their own, shorter timeout.
        self.client = KubeClient(
            client.config, user_agent="cvo-py/leader-election", timeout=min(10.0, timings.retry_period)
        )
        self.namespace = namespace
        self.name = name
        self.identity = identity or default_identity()
        self.timings = timings
        self.now = now
        self.monotonic = monotonic
        # The Lease record as last seen, and when (local monotonic time) it was first seen so.
        self._observed: JSON | None = None
        self._observed_at = 0.0
        self.leading = threading.Event()
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _try(self) -> bool:
        now = self.now()
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.timings.lease_duration),
            "renewTime": micro_time(now),
        }
        try:
            lease = self.client.get(LEASES, self.name, self.namespace)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
            spec["acquireTime"] = micro_time(now)
            body = {"metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec}
            try:
                self.client.create(LEASES, body)
                return True
            except ApiError as create_exc:
                if create_exc.is_already_exists():
                    return False
                raise
        observed = lease.get("spec") or {}
        if observed != self._observed:
            self._observed, self._observed_at = observed, self.monotonic()
        if not lease_free_for(observed, self.identity, self._observed_at, self.monotonic()):
            return False
        old = lease.get("spec") or {}
        if old.get("holderIdentity") != self.identity:
            spec["acquireTime"] = micro_time(now)
            spec["leaseTransitions"] = int(old.get("leaseTransitions") or 0) + 1
        else:
            spec["acquireTime"] = old.get("acquireTime") or micro_time(now)
            spec["leaseTransitions"] = int(old.get("leaseTransitions") or 0)
        lease["spec"] = spec
        try:
            self.client.replace(LEASES, lease)
            return True
        except ApiError as exc:
            if exc.is_conflict():
                return False
            raise

    def _attempt(self) -> bool:
        try:
            return self._try()
        except ClientError as exc:
            log.warning("error retrieving or updating lease %s/%s: %s", self.namespace, self.name, exc)
            return False
        except Exception:  # a Lease someone else edited into an unreadable shape: not ours to take
            log.exception("unexpected error acquiring or renewing lease %s/%s", self.namespace, self.name)
            return False

    def run(self, on_started_leading: Callable[[], None]) -> None:
        """Block until leading (then call `on_started_leading`), renew until stopped or lost.

        Whatever ends this thread while leading, other than `release()`, sets `lost`: a replica
        must never go on acting as leader without renewing.
        """
        try:
            self._run(on_started_leading)
        except Exception:
            log.exception("leader election for %s/%s failed", self.namespace, self.name)
        finally:
            if self.leading.is_set() and not self._stop.is_set():
                self.leading.clear()
                self.lost.set()

    def _run(self, on_started_leading: Callable[[], None]) -> None:
        log.info("attempting to acquire leader lease %s/%s as %s...", self.namespace, self.name, self.identity)
        while not self._stop.is_set():
            started = time.monotonic()
            if self._attempt():
                break
            self._stop.wait(self.timings.retry_period)
        if self._stop.is_set():
            return
        # The Lease counts from when the winning attempt began, not from when it returned.
        last_renew = started
        log.info("successfully acquired lease %s/%s", self.namespace, self.name)
        self.leading.set()
        on_started_leading()
        while not self._stop.wait(self.timings.retry_period):
            started = time.monotonic()
            if self._attempt():
                last_renew = started
            elif time.monotonic() - last_renew > self.timings.renew_deadline:
                log.error(
                    "failed to renew lease %s/%s within %.0fs: leader lost",
                    self.namespace,
                    self.name,
                    self.timings.renew_deadline,
                )
                self.leading.clear()
                self.lost.set()
                return

    def start(self, on_started_leading: Callable[[], None]) -> LeaderElector:
        self._thread = threading.Thread(target=self.run, args=(on_started_leading,), name="leader", daemon=True)
        self._thread.start()
        return self

    @property
    def stopping(self) -> bool:
        """`stop()` or `release()` was called: a start-up in `on_started_leading` should not go on."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Stop renewing (still holding the Lease) and wait for the election thread to end,
        including a renew or an `on_started_leading` in flight."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            # A renew is a GET and a PUT, each up to the connect timeout plus the read timeout.
            self._thread.join(2 * (self.client.timeout + 10.0))

    def release(self) -> None:
        """Stop renewing and hand the Lease back so a standby replica takes over at once.

        Stop what the Lease guards first (`stop()`, then the controllers, then this)."""
        self.stop()
        if not self.leading.is_set():
            return
        try:
            lease = self.client.get(LEASES, self.name, self.namespace)
            if (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                lease["spec"]["holderIdentity"] = ""
                lease["spec"]["leaseDurationSeconds"] = 1
                self.client.replace(LEASES, lease)
        except ClientError as exc:
            log.warning("could not release lease %s/%s: %s", self.namespace, self.name, exc)
        self.leading.clear()
