"""Retrieve a release payload: verify it, run the version Pod, watch it, and report every state.

This is the thin I/O layer; what a Pod state means is decided by `payload.classify`, and what the
admin reads by `payload.acceptance`. One retrieval runs at a time, so there is never more than one
version Pod: stale ones are pruned before a new one is created, and ours is deleted when done.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import platform
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cvo_py.runtime import env, klog
from cvo_py.runtime.gotext import go_quote
from cvo_py.runtime.informer import DELETED, Backoff, Informer
from cvo_py.runtime.kube import JSON, PODS, ApiError, KubeClient, Resource, ServerUnreachable
from cvo_py.runtime.safeload import DocumentError
from payload import acceptance as acc
from payload.acceptance import ReleaseAcceptance
from payload.classify import (
    NOT_STARTED,
    PROGRESSING,
    SUCCEEDED,
    TERMINAL,
    TRANSIENT,
    Limits,
    Verdict,
    escalate,
    observe,
    pull_errors,
)
from payload.metrics import PayloadMetrics
from payload.podspec import (
    DEFAULT_PAYLOAD_DIR,
    POD_LABEL_SELECTOR,
    PodSpecError,
    PodSpecOptions,
    build_version_pod,
    random_suffix,
    target_dir,
)
from payload.release import IMAGE_REFERENCES, MULTI, RELEASE_METADATA, is_multi_arch, read_release_metadata
from payload.verify.errors import VerificationError, Verifier

log = logging.getLogger(__name__)

# Jobs left by 4.18 and older operators (`version-*`); there is no JOBS in cvo_py.runtime.kube.
JOBS = Resource("batch/v1", "Job", "jobs", True)

# What a payload directory must contain (upstream's payload.ValidateDirectory).
PAYLOAD_PATHS = (
    "manifests",
    "release-manifests",
    RELEASE_METADATA,
    IMAGE_REFERENCES,
)

_GO_ARCH = {
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
}


class PruneError(Exception):
    """Left-over version Pods or Jobs could not be deleted."""


# Put on a retrieval's event queue by cancel(): not a watch event.
CANCELLED = "CANCELLED"
# How long Pod creation is retried while the API server answers 5xx or 429.
CREATE_BUSY_RETRY = 30.0


@dataclass(frozen=True)
class RetrieverOptions:
    namespace: str = field(default_factory=env.namespace)
    operator_name: str = field(default_factory=env.operator_name)
    node_name: str = field(default_factory=env.node_name)
    # The operator's own release (--release-image): its manifests are already local, no Pod needed.
    release_image: str = ""
    local_payload_dir: str = field(default_factory=env.payload_override)
    # Where the version Pod writes on the node; the operator mounts the same host path here.
    # UPDATE_PAYLOADS_DIR moves it (testing without a node, like PAYLOAD_OVERRIDE).
    payload_dir: str = field(default_factory=lambda: env.update_payloads_dir(DEFAULT_PAYLOAD_DIR))
    retrieve_timeout: float = 240.0  # upstream's retrieveTimeout (4 min), verification included
    pod_active_deadline: int = 120
    service_account: str = "update-payload"
    priority_class: str = "openshift-user-critical"
    limits: Limits = Limits()
    # How long pruning waits for stale Pods that are still running to terminate gracefully.
    prune_timeout: float = 30.0
    # Verify the release signature before the Pod (upstream always does; tests of the Pod alone don't).
    verify: bool = True
    verification_namespace: str = "openshift-config-managed"

    def pod_spec_options(self) -> PodSpecOptions:
        return PodSpecOptions(
            operator_name=self.operator_name,
            namespace=self.namespace,
            payload_dir=self.payload_dir,
            service_account=self.service_account,
            active_deadline_seconds=self.pod_active_deadline,
            priority_class=self.priority_class,
        )


@dataclass(frozen=True)
class RetrievalResult:
    """What the last retrieval produced, beyond the condition: where the manifests are, and so on."""

    acceptance: ReleaseAcceptance
    directory: str = ""
    local: bool = False
    verified: bool = False
    verification_error: str = ""
    version: str = ""  # from the payload's release-metadata once loaded
    pod_name: str = ""
    multi_arch: bool = False  # the loaded payload's release-metadata says multi-architecture


class _Failed(Exception):
    """Ends a retrieval with this acceptance (a False condition) and metric reason."""

    def __init__(self, acceptance: ReleaseAcceptance, reason: str) -> None:
        super().__init__(acceptance.message)
        self.acceptance = acceptance
        self.reason = reason


def validate_directory(directory: str) -> str | None:
    """None when `directory` holds release-image content, else what is missing."""
    for rel in PAYLOAD_PATHS:
        path = os.path.join(directory, rel)
        if not os.path.exists(path):
            return f"stat {path}: no such file or directory"
    return None


def _architecture(metadata: JSON) -> str:
    if is_multi_arch(metadata):
        return MULTI
    machine = platform.machine().lower()
    return _GO_ARCH.get(machine, machine)


class PayloadRetriever:
    """`retrieve()` blocks until the payload is in place or has failed, reporting every change."""

    def __init__(
        self,
        client: KubeClient,
        options: RetrieverOptions,
        report: Callable[[ReleaseAcceptance], None],
        *,
        verifier: Verifier | None = None,
        metrics: PayloadMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.options = options
        self._report_fn = report
        self.metrics = metrics or PayloadMetrics()
        if verifier is None and options.verify:
            from payload.verify.verifier import cluster_verifier

            verifier = cluster_verifier(client, options.verification_namespace, options.operator_name, self.metrics)
        self.verifier = verifier
        self._clock = clock
        self._lock = threading.Lock()
        self._last: ReleaseAcceptance | None = None
        self.last_result: RetrievalResult | None = None
        # The informer of the retrieval in flight; exposed so tests can drop its watch.
        self.informer: Informer | None = None
        self._cancelled = threading.Event()
        self._cancel_reason = "the operator is stopping"
        self._events: queue.Queue[tuple[str, JSON]] | None = None

    def cancel(self, why: str = "the operator is stopping") -> None:
        """End a retrieval in flight soon (the operator is stopping, or the target changed); its
        Pod is deleted."""
        self._cancel_reason = why
        self._cancelled.set()
        events = self._events
        if events is not None:
            events.put((CANCELLED, {}))

    def _check_cancelled(self, version: str, image: str) -> None:
        if self._cancelled.is_set():
            raise _download_failed(
                version, image, f"fetching update payload: cancelled: {self._cancel_reason}", "Cancelled"
            )

    # -- reporting -------------------------------------------------------------------------------

    def _report(self, acceptance: ReleaseAcceptance) -> None:
        if acceptance == self._last:
            return
        self._last = acceptance
        klog.v(2).info("ReleaseAccepted=%s %s: %s", acceptance.status, acceptance.reason, acceptance.message)
        try:
            self._report_fn(acceptance)
        except Exception:  # a failed status write must not abort the retrieval; the next report retries
            log.exception("reporting payload retrieval state failed")

    # -- the retrieval ---------------------------------------------------------------------------

    def retrieve(self, image: str, version: str, force: bool) -> ReleaseAcceptance:
        with self._lock:
            self._last = None
            started = self._clock()
            result = self._retrieve(image, version, force, started)
            self.last_result = result
            self._report(result.acceptance)
            outcome = "success" if result.acceptance.status == "True" else "failure"
            self.metrics.retrieval_duration.labels(outcome).observe(max(0.0, self._clock() - started))
            return result.acceptance

    def _retrieve(self, image: str, version: str, force: bool, started: float) -> RetrievalResult:
        if not image:
            failure = "no payload image has been specified and the contents of the payload cannot be retrieved"
            self.metrics.retrieval_failures.labels("NoImage").inc()
            return RetrievalResult(acc.retrieval_failed(version, image, failure))
        if image == self.options.release_image:
            return self._load(
                image,
                version,
                self.options.local_payload_dir,
                RetrievalResult(acc.retrieving(version, image), directory=self.options.local_payload_dir, local=True),
            )

        progress = acc.retrieving(version, image)
        self._report(progress)
        deadline = started + self.options.retrieve_timeout
        base = RetrievalResult(progress)
        try:
            if self.verifier is not None:
                progress, base = self._verify(image, version, force, deadline)
            directory = target_dir(image, self.options.payload_dir)
            try:
                self.prune(deadline)
            except PruneError as exc:
                raise _download_failed(version, image, str(exc), "PrunePods") from None
            problem = validate_directory(directory)
            pod_name = ""
            if problem is not None:
                pod_name = self._fetch(image, version, progress, deadline)
                problem = validate_directory(directory)
                if problem is not None:
                    where = go_quote(directory)
                    text = f"confirming the presence of release-image content in {where}: {problem}"
                    raise _download_failed(version, image, text, "PayloadMissing")
            else:
                klog.v(2).info("Payload for %s is already in %s", image, directory)
            return self._load(
                image,
                version,
                directory,
                RetrievalResult(
                    progress,
                    directory=directory,
                    verified=base.verified,
                    verification_error=base.verification_error,
                    pod_name=pod_name,
                ),
            )
        except _Failed as failed:
            self.metrics.retrieval_failures.labels(failed.reason).inc()
            return RetrievalResult(
                failed.acceptance, verified=base.verified, verification_error=base.verification_error
            )

    def _verify(
        self, image: str, version: str, force: bool, deadline: float
    ) -> tuple[ReleaseAcceptance, RetrievalResult]:
        assert self.verifier is not None
        # Upstream gives verification half of the time left, so the Pod always gets the other half.
        budget = max(0.0, (deadline - self._clock()) / 2)
        try:
            self.verifier.verify(image, budget)
        except VerificationError as exc:
            self.metrics.verifications.labels("forced" if force else exc.outcome).inc()
            if not force:
                raise _Failed(
                    acc.retrieval_failed(version, image, acc.not_verified(str(exc))),
                    "ImageVerificationFailed",
                ) from None
            log.warning(
                "Target release version=%r image=%r cannot be verified, continuing because the update was forced: %s",
                version,
                image,
                exc,
            )
            forced = acc.verification_forced(version, image, str(exc))
            self._report(forced)
            return forced, RetrievalResult(forced, verification_error=str(exc))
        return acc.retrieving(version, image), RetrievalResult(acc.retrieving(version, image), verified=True)

    def _load(self, image: str, version: str, directory: str, result: RetrievalResult) -> RetrievalResult:
        """Read the payload's release metadata: the loaded version and architecture."""
        try:
            metadata = read_release_metadata(directory)
            if metadata is None and not result.local:
                raise DocumentError(os.path.join(directory, RELEASE_METADATA), "file not found")
        except DocumentError as exc:
            self.metrics.retrieval_failures.labels("LoadPayload").inc()
            return _replace(result, acc.load_failed(version, image, f"loading {exc}"))
        if metadata is None:
            # Running without a local payload (e.g. outside the release image): nothing to read.
            return _replace(result, acc.payload_loaded(version, image))
        payload_version = str(metadata.get("version") or "")
        if version and payload_version and payload_version != version:
            self.metrics.retrieval_failures.labels("VerifyPayloadVersion").inc()
            return _replace(result, acc.version_mismatch(version, image, payload_version))
        loaded = acc.payload_loaded(version or payload_version, image, _architecture(metadata))
        return dataclasses.replace(
            result, acceptance=loaded, version=payload_version, multi_arch=is_multi_arch(metadata)
        )

    # -- pruning ---------------------------------------------------------------------------------

    def prune(self, deadline: float | None = None) -> None:
        """Delete version Pods (and legacy `version-*` Jobs) left by earlier runs; wait until gone."""
        prune_version_pods(self.client, self.options, deadline, cancelled=self._cancelled, clock=self._clock)

    def _delete_pod(self, pod: JSON, prune: bool = False) -> list[str]:
        return _delete_version_pod(self.client, self.options.namespace, pod, prune)

    # -- the version Pod -------------------------------------------------------------------------

    def _fetch(self, image: str, version: str, progress: ReleaseAcceptance, deadline: float) -> str:
        """Create the version Pod and wait for it; returns its name on success, raises _Failed."""
        self._check_cancelled(version, image)
        opts = self.options
        try:
            pod = build_version_pod(
                image,
                version,
                opts.node_name,
                opts.pod_spec_options(),
                name_suffix=random_suffix(),
                tmp_suffix=random_suffix(),
            )
        except PodSpecError as exc:
            raise _download_failed(version, image, str(exc), "InvalidPod") from None
        name = pod["metadata"]["name"]
        events: queue.Queue[tuple[str, JSON]] = queue.Queue()
        self._events = events
        informer = Informer(
            self.client,
            PODS,
            namespace=opts.namespace,
            field_selector=f"metadata.name={name}",
            inactivity_timeout=30.0,
        )
        informer.add_handler(lambda event_type, obj, _old: events.put((event_type, obj)))
        self.informer = informer
        informer.start()
        created = False
        latest: dict[str, JSON] = {"pod": pod}
        try:
            sync_by = self._clock() + max(0.1, min(10.0, deadline - self._clock()))
            while not informer.wait_for_sync(0.1) and not self._cancelled.is_set() and self._clock() < sync_by:
                pass
            self._check_cancelled(version, image)
            log.info("Spawning Pod %s ...", name)
            try:
                latest["pod"] = self._create_pod(pod, deadline)
                created = True
            except (ApiError, ServerUnreachable) as exc:
                # An attempt whose answer was lost may have created it: do not leave it running.
                for cleanup in self._delete_pod(pod):
                    log.warning("Cleaning up after a failed Pod creation: %s", cleanup)
                self._check_cancelled(version, image)  # stopped while retrying: say that, not the error
                text = exc.message if isinstance(exc, ApiError) and exc.message else str(exc)
                problem = f"fetching update payload: creating pod {name}: {text}"
                raise _download_failed(version, image, problem, "PodCreateFailed") from None
            return self._watch(image, version, progress, deadline, name, latest, events)
        finally:
            # The Pod first: stopping the informer can take a while, and a stopping process may not wait.
            if created:
                for problem in self._delete_pod(latest["pod"]):
                    log.warning("Cleaning up after retrieval: %s", problem)
            informer.stop()
            self.informer = None
            self._events = None

    def _create_pod(self, pod: JSON, deadline: float) -> JSON:
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
                return self.client.create(PODS, pod, self.options.namespace)
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
            if self._cancelled.wait(delay):
                raise ServerUnreachable(self.client.server, RuntimeError("cancelled"))  # see _fetch

    def _watch(
        self,
        image: str,
        version: str,
        progress: ReleaseAcceptance,
        deadline: float,
        name: str,
        latest: dict[str, JSON],
        events: queue.Queue[tuple[str, JSON]],
    ) -> str:
        limits = self.options.limits
        pod = latest["pod"]
        remembered: dict[str, str] = {}
        state_key: str | None = None
        since = self._clock()
        deleted = False
        verdict: Verdict | None = None
        while True:
            self._check_cancelled(version, image)
            now = self._clock()
            remembered.update(pull_errors(pod))
            observed = observe(pod, deleted=deleted, remembered_pull_errors=remembered)
            if observed.key != state_key:
                state_key, since = observed.key, now
            verdict = escalate(observed, now - since, limits)
            klog.v(4).info("version pod %s: %s %s: %s", name, verdict.kind, verdict.reason, verdict.problem)
            if verdict.kind == SUCCEEDED:
                return name
            if verdict.kind == TERMINAL:
                failed = _download_failed(version, image, f"fetching update payload: {verdict.problem}", verdict.reason)
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
                    f"{self.options.retrieve_timeout:.0f}s retrieval limit; last observed: {verdict.problem}"
                )
                raise _download_failed(version, image, problem, "RetrievalTimeout")
            timeout = wake - self._clock()
            try:
                event_type, obj = events.get(timeout=max(0.0, timeout))
            except queue.Empty:
                continue
            klog.v(5).info("version pod %s: %s event", name, event_type)
            # Drain bursts: only the newest state matters (a DELETED is never skipped).
            while True:
                if event_type == CANCELLED:
                    self._check_cancelled(version, image)
                    break
                if event_type == DELETED:
                    deleted = True
                pod = latest["pod"] = obj
                try:
                    event_type, obj = events.get_nowait()
                except queue.Empty:
                    break


def _download_failed(version: str, image: str, problem: str, reason: str) -> _Failed:
    return _Failed(acc.retrieval_failed(version, image, acc.download_failed(problem)), reason)


def _replace(result: RetrievalResult, acceptance: ReleaseAcceptance) -> RetrievalResult:
    return dataclasses.replace(result, acceptance=acceptance)


# -- pruning -------------------------------------------------------------------------------------


def prune_version_pods(
    client: KubeClient,
    options: RetrieverOptions,
    deadline: float | None = None,
    *,
    cancelled: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Delete version Pods (and legacy `version-*` Jobs) left by earlier runs; wait until gone, at
    most `options.prune_timeout` or until `deadline`. `PruneError` names every failure once."""
    ns = options.namespace
    errors: list[str] = []
    try:
        jobs = client.list(JOBS, ns).get("items") or []
        for job in jobs:
            name = job["metadata"]["name"]
            if name.startswith(f"{options.operator_name}-"):
                try:
                    # Background: unlike upstream's empty options, do not orphan the Job's Pods.
                    client.delete(JOBS, name, ns, propagation_policy="Background")
                except ApiError as exc:
                    if not exc.is_not_found():
                        errors.append(f"failed to delete job {name}: {exc.message or exc}")
    except ApiError as exc:
        if not exc.is_not_found():  # batch/v1 may be disabled
            errors.append(exc.message or str(exc))
    except ServerUnreachable as exc:
        errors.append(str(exc))
    try:
        pods = _list_version_pods(client, ns)
        for pod in pods:
            errors.extend(_delete_version_pod(client, ns, pod, prune=True))
        if pods and not errors:
            _wait_pruned(client, options, deadline, cancelled or threading.Event(), clock)
    except (ApiError, ServerUnreachable) as exc:
        errors.append(exc.message if isinstance(exc, ApiError) and exc.message else str(exc))
    if errors:
        errors = list(dict.fromkeys(errors))  # like an aggregated error: each message once
        aggregate = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        raise PruneError(f"failed to prune pods: error deleting pods: {aggregate}")


def _list_version_pods(client: KubeClient, namespace: str) -> list[JSON]:
    items = client.list(PODS, namespace, label_selector=POD_LABEL_SELECTOR).get("items")
    return list(items or [])


def _delete_version_pod(client: KubeClient, namespace: str, pod: JSON, prune: bool = False) -> list[str]:
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


def _wait_pruned(
    client: KubeClient,
    options: RetrieverOptions,
    deadline: float | None,
    cancelled: threading.Event,
    clock: Callable[[], float],
) -> None:
    limit = clock() + options.prune_timeout
    if deadline is not None:
        limit = min(limit, deadline)
    while True:
        left = _list_version_pods(client, options.namespace)
        if not left:
            return
        if clock() >= limit:
            break
        if cancelled.wait(0.1):
            return  # stopping: the next start prunes what is left
    # The node did not confirm in time (or there is no kubelet): remove them from the API.
    for pod in left:
        log.warning("Version pod %s did not terminate in time; deleting it without grace", pod["metadata"]["name"])
        try:
            client.delete(PODS, pod["metadata"]["name"], options.namespace, grace_period_seconds=0)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
