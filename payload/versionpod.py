"""The version Pod of one retrieval: created (a creation whose answer was lost is adopted), watched
with the project's informer until it has copied the payload or failed, and deleted.

What a Pod state means is `payload.classify`'s decision; this module observes, reports and cleans
up. A terminal state is reported before the Pod is deleted: the deletion is a round trip that must
not stand between the kubelet's write and the condition the admin reads.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from cvo_py.runtime import klog
from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.informer import DELETED, Backoff, Informer
from cvo_py.runtime.kube import JSON, PODS, ApiError, KubeClient, ServerUnreachable
from payload import acceptance as acc
from payload.acceptance import ReleaseAcceptance
from payload.classify import (
    NOT_STARTED,
    PROGRESSING,
    SUCCEEDED,
    TERMINAL,
    TRANSIENT,
    Limits,
    escalate,
    observe,
    pull_errors,
)
from payload.podspec import PodSpecError, PodSpecOptions, build_version_pod, random_suffix

log = logging.getLogger(__name__)

# Put on the Pod's event queue by a cancellation: not a watch event.
CANCELLED = "CANCELLED"
# How long Pod creation is retried while the API server answers 5xx or 429.
CREATE_BUSY_RETRY = 30.0

Events = queue.Queue[tuple[str, JSON]]


class RetrievalFailed(Exception):
    """Ends a retrieval with this acceptance (a False condition) and metric reason."""

    def __init__(self, acceptance: ReleaseAcceptance, reason: str) -> None:
        super().__init__(acceptance.message)
        self.acceptance = acceptance
        self.reason = reason


def download_failed(version: str, image: str, problem: str, reason: str) -> RetrievalFailed:
    return RetrievalFailed(acc.retrieval_failed(version, image, acc.download_failed(problem)), reason)


class Cancellation:
    """How a retrieval in flight is ended early (the operator is stopping, or the target changed):
    `cancel()` is seen by every wait of the retrieval, the watch of its Pod included."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = "the operator is stopping"
        self._events: Events | None = None  # the Pod watch's queue, while one runs

    def cancel(self, why: str) -> None:
        self.reason = why
        self._event.set()
        events = self._events
        if events is not None:
            events.put((CANCELLED, {}))

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """True when cancelled within `seconds`."""
        return self._event.wait(seconds)

    def check(self, version: str, image: str) -> None:
        """Raise the failure that says the retrieval was cancelled, if it was."""
        if self._event.is_set():
            problem = f"fetching update payload: cancelled: {self.reason}"
            raise download_failed(version, image, problem, "Cancelled")

    def watching(self, events: Events | None) -> None:
        self._events = events


@dataclass(frozen=True)
class PodRun:
    """What one version Pod is run with."""

    spec: PodSpecOptions
    node_name: str
    limits: Limits
    retrieve_timeout: float  # named in the failure when the retrieval's deadline passes


class VersionPod:
    """Run one version Pod to its end: `run()` returns the Pod's name once it succeeded, or raises
    `RetrievalFailed`; every state in between is reported."""

    def __init__(
        self,
        client: KubeClient,
        run_with: PodRun,
        *,
        cancellation: Cancellation,
        report: Callable[[ReleaseAcceptance], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.run_with = run_with
        self._cancellation = cancellation
        self._report = report
        self._clock = clock
        # The watch of the Pod in flight; exposed so tests can drop it.
        self.informer: Informer | None = None

    def run(self, image: str, version: str, progress: ReleaseAcceptance, deadline: float) -> str:
        """Create the version Pod and wait for it; returns its name on success."""
        cancellation = self._cancellation
        cancellation.check(version, image)
        spec = self.run_with.spec
        try:
            pod = build_version_pod(
                image, version, self.run_with.node_name, spec, name_suffix=random_suffix(), tmp_suffix=random_suffix()
            )
        except PodSpecError as exc:
            raise download_failed(version, image, str(exc), "InvalidPod") from None
        name = pod["metadata"]["name"]
        events: Events = queue.Queue()
        informer = Informer(
            self.client, PODS, namespace=spec.namespace, field_selector=f"metadata.name={name}", inactivity_timeout=30.0
        )
        informer.add_handler(lambda event_type, obj, _old: events.put((event_type, obj)))
        cancellation.watching(events)
        self.informer = informer
        informer.start()
        created = False
        latest: dict[str, JSON] = {"pod": pod}
        try:
            sync_by = self._clock() + max(0.1, min(10.0, deadline - self._clock()))
            while not informer.wait_for_sync(0.1) and not cancellation.is_set() and self._clock() < sync_by:
                pass
            cancellation.check(version, image)
            log.info("Spawning Pod %s ...", name)
            try:
                latest["pod"] = self._create(pod, deadline)
                created = True
            except ClientError as exc:
                # An attempt whose answer was lost may have created it: do not leave it running.
                for cleanup in delete_version_pod(self.client, spec.namespace, pod):
                    log.warning("Cleaning up after a failed Pod creation: %s", cleanup)
                cancellation.check(version, image)  # stopped while retrying: say that, not the error
                text = exc.message if isinstance(exc, ApiError) and exc.message else str(exc)
                problem = f"fetching update payload: creating pod {name}: {text}"
                raise download_failed(version, image, problem, "PodCreateFailed") from None
            return self._watch(image, version, progress, deadline, latest, events)
        finally:
            # The Pod first: stopping the informer can take a while, and a stopping process may not wait.
            if created:
                for problem in delete_version_pod(self.client, spec.namespace, latest["pod"]):
                    log.warning("Cleaning up after retrieval: %s", problem)
            informer.stop()
            self.informer = None
            cancellation.watching(None)

    def _create(self, pod: JSON, deadline: float) -> JSON:
        """Create the version Pod, retrying while the API server cannot be reached or is busy.

        A connection cut after the request was sent leaves the outcome unknown: the Pod may exist.
        Its name carries a random suffix, so AlreadyExists after such a cut means our own earlier
        attempt landed, and the informer watching that name reports it from here on.
        """
        backoff = Backoff(base=0.2, cap=2.0)
        maybe_created = False
        # A server that answers 5xx or 429 for this long (a failing admission webhook, say) is not
        # going to take the Pod: say so rather than wait out the whole retrieval.
        busy_until = min(deadline, self._clock() + CREATE_BUSY_RETRY)
        while True:
            try:
                return self.client.create(PODS, pod, self.run_with.spec.namespace)
            except ApiError as exc:
                if exc.is_already_exists() and maybe_created:
                    log.info("Pod %s was created by an attempt whose response was lost", pod["metadata"]["name"])
                    return pod
                if not (exc.status == 429 or exc.status >= 500) or self._clock() >= busy_until:
                    raise
                # A 5xx (e.g. an etcd timeout) may come after the write was committed.
                maybe_created = maybe_created or exc.status >= 500
                problem = exc.message or str(exc)
            except ServerUnreachable as exc:
                maybe_created = True
                if self._clock() >= deadline:
                    raise
                problem = str(exc)
            delay = min(backoff.next(), max(0.0, deadline - self._clock()))
            log.warning("Creating pod %s: %s; retrying in %.1fs", pod["metadata"]["name"], problem, delay)
            if self._cancellation.wait(delay):
                raise ServerUnreachable(self.client.server, RuntimeError("cancelled"))  # see run()

    def _watch(
        self,
        image: str,
        version: str,
        progress: ReleaseAcceptance,
        deadline: float,
        latest: dict[str, JSON],
        events: Events,
    ) -> str:
        limits = self.run_with.limits
        pod = latest["pod"]
        name = pod["metadata"]["name"]
        remembered: dict[str, str] = {}
        state_key: str | None = None
        since = self._clock()
        deleted = False
        while True:
            self._cancellation.check(version, image)
            now = self._clock()
            remembered.update(pull_errors(pod))
            observed = observe(pod, deleted=deleted, remembered_pull_errors=remembered)
            if observed.key != state_key:
                state_key, since = observed.key, now
            verdict = escalate(observed, now - since, limits)
            klog.v(4).info("version pod %s: %s %s: %s", name, verdict.kind, verdict.reason, verdict.problem)
            if verdict.kind == SUCCEEDED:
                return str(name)
            if verdict.kind == TERMINAL:
                failed = download_failed(version, image, f"fetching update payload: {verdict.problem}", verdict.reason)
                # Tell the admin now: cleaning up (deleting the Pod, stopping its watch) takes round
                # trips that must not stand between the kubelet's write and the condition.
                self._report(failed.acceptance)
                raise failed
            self._report(acc.waiting_after(progress, verdict.problem) if verdict.kind == TRANSIENT else progress)
            # Wake up for the next event, or when time alone could change the verdict.
            wake = deadline
            if verdict.kind == TRANSIENT:
                wake = min(wake, since + limits.stuck_after)
            elif verdict.kind == PROGRESSING and verdict.reason == NOT_STARTED:
                wake = min(wake, since + limits.not_started_after)
            if self._clock() >= deadline:
                problem = (
                    f"fetching update payload: the version pod gave no result within the "
                    f"{self.run_with.retrieve_timeout:.0f}s retrieval limit; last observed: {verdict.problem}"
                )
                raise download_failed(version, image, problem, "RetrievalTimeout")
            try:
                event_type, obj = events.get(timeout=max(0.0, wake - self._clock()))
            except queue.Empty:
                continue
            klog.v(5).info("version pod %s: %s event", name, event_type)
            pod, deleted = _drain(event_type, obj, deleted, latest, events)

def _drain(event_type: str, obj: JSON, deleted: bool, latest: dict[str, JSON], events: Events) -> tuple[JSON, bool]:
    """A burst of Pod events: only the newest state matters (a DELETED is never skipped; a
    cancellation stops the drain, and the watch loop ends on it). The newest Pod and whether it
    was deleted."""
    while event_type != CANCELLED:
        if event_type == DELETED:
            deleted = True
        latest["pod"] = obj
        try:
            event_type, obj = events.get_nowait()
        except queue.Empty:
            break
    return latest["pod"], deleted


def delete_version_pod(client: KubeClient, namespace: str, pod: JSON, prune: bool = False) -> list[str]:
    """Delete a version Pod; what went wrong, as texts (cleanup never fails a retrieval)."""
    name = pod["metadata"]["name"]
    statuses = (pod.get("status") or {}).get("initContainerStatuses", []) + (
        (pod.get("status") or {}).get("containerStatuses", [])
    )
    running = any("running" in (s.get("state") or {}) for s in statuses if isinstance(s, dict))
    if prune:
        log.info("Pruning version pod %s left by an earlier retrieval", name)
    try:
        # Nothing running: remove at once. Running: let the kubelet stop it gracefully.
        client.delete(PODS, name, namespace, grace_period_seconds=None if running else 0)
    except ApiError as exc:
        if not exc.is_not_found():
            return [f"failed to delete pod {name}: {exc.message or exc}"]
    except ServerUnreachable as exc:
        # Cleanup must not turn a finished retrieval into a failure; pruning retries later.
        return [f"failed to delete pod {name}: {exc}"]
    return []
