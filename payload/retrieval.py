"""Retrieve a release payload: verify it, run the version Pod, load what it copied, and report
every state.

This is the thin I/O layer; what a Pod state means is decided by `payload.classify`, and what the
admin reads by `payload.acceptance`; the Pod itself is `payload.versionpod`'s. One retrieval runs at
a time, so there is never more than one version Pod: stale ones are pruned before a new one is
created, and ours is deleted when done.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import platform
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cvo_py.runtime import env, klog
from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import JSON, PODS, ApiError, KubeClient, Resource, ServerUnreachable
from cvo_py.runtime.safeload import DocumentError
from payload import acceptance as acc
from payload.acceptance import ReleaseAcceptance
from payload.classify import Limits
from payload.metrics import PayloadMetrics
from payload.podspec import DEFAULT_PAYLOAD_DIR, POD_LABEL_SELECTOR, PodSpecOptions, target_dir
from payload.release import IMAGE_REFERENCES, MULTI, RELEASE_METADATA, is_multi_arch, read_release_metadata
from payload.verify.errors import VerificationError, Verifier
from payload.versionpod import (
    Cancellation,
    PodRun,
    RetrievalFailed,
    VersionPod,
    delete_version_pod,
    download_failed,
)

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

    def pod_spec_options(self) -> PodSpecOptions:
        return PodSpecOptions(
            operator_name=self.operator_name,
            namespace=self.namespace,
            payload_dir=self.payload_dir,
            service_account=self.service_account,
            active_deadline_seconds=self.pod_active_deadline,
            priority_class=self.priority_class,
        )

    def pod_run(self) -> PodRun:
        return PodRun(self.pod_spec_options(), self.node_name, self.limits, self.retrieve_timeout)


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
    # The target's manifests as the loader read them (`ManifestLoader`; None without one, or local).
    payload: object | None = None


class PayloadRefused(Exception):
    """A retrieved payload whose manifests cannot be loaded: the loader's one-line reason."""


# The sync worker's loader of a retrieved payload, given by the composition root (this layer knows
# nothing of manifests): (directory, image) → the loaded payload, or PayloadRefused.
ManifestLoader = Callable[[str, str], object]


def validate_directory(directory: str) -> str | None:
    """None when `directory` holds release-image content, else what is missing."""
    for rel in PAYLOAD_PATHS:
        path = os.path.join(directory, rel)
        if not os.path.exists(path):
            return f"stat {path}: no such file or directory"
    return None


def _architecture(metadata: JSON) -> str:
    return go_architecture(is_multi_arch(metadata))


def go_architecture(multi: bool) -> str:
    """The architecture `PayloadLoaded` names: Multi for a multi-architecture payload, else this
    machine's in Go's words (GOARCH)."""
    if multi:
        return MULTI
    machine = platform.machine().lower()
    return _GO_ARCH.get(machine, machine)


class PayloadRetriever:
    """`retrieve()` blocks until the payload is in place or has failed, reporting every change.

    The verifier is given, never built here: one verifier serves the process (a digest verified
    once is not fetched and checked again). None means no verification (tests of the Pod alone).
    """

    def __init__(
        self,
        client: KubeClient,
        options: RetrieverOptions,
        report: Callable[[ReleaseAcceptance], None],
        *,
        verifier: Verifier | None,
        metrics: PayloadMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        load_manifests: ManifestLoader | None = None,
    ) -> None:
        self.client = client
        self.load_manifests = load_manifests
        self.options = options
        self._report_fn = report
        self.metrics = metrics or PayloadMetrics()
        self.verifier = verifier
        self._clock = clock
        self._lock = threading.Lock()
        self._last: ReleaseAcceptance | None = None
        self.last_result: RetrievalResult | None = None
        self._cancellation = Cancellation()
        self._pod = VersionPod(
            client, options.pod_run(), cancellation=self._cancellation, report=self._report, clock=clock
        )

    @property
    def informer(self) -> Informer | None:
        """The watch of the version Pod in flight (tests drop it to see it come back)."""
        return self._pod.informer

    def cancel(self, why: str = "the operator is stopping") -> None:
        """End a retrieval in flight soon (the operator is stopping, or the target changed); its
        Pod is deleted."""
        self._cancellation.cancel(why)

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
                raise download_failed(version, image, str(exc), "PrunePods") from None
            problem = validate_directory(directory)
            pod_name = ""
            if problem is not None:
                pod_name = self._pod.run(image, version, progress, deadline)
                problem = validate_directory(directory)
                if problem is not None:
                    where = go_quote(directory)
                    text = f"confirming the presence of release-image content in {where}: {problem}"
                    raise download_failed(version, image, text, "PayloadMissing")
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
        except RetrievalFailed as failed:
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
                raise RetrievalFailed(
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
        loaded: object | None = None
        if self.load_manifests is not None and not result.local:
            # Upstream's LoadPayload step: a payload bad as a whole is refused here, nothing applied.
            try:
                loaded = self.load_manifests(directory, image)
            except PayloadRefused as exc:
                self.metrics.retrieval_failures.labels("LoadPayload").inc()
                return _replace(result, acc.load_failed(version, image, str(exc)))
        payload_version = str(metadata.get("version") or "")
        if version and payload_version and payload_version != version:
            self.metrics.retrieval_failures.labels("VerifyPayloadVersion").inc()
            return _replace(result, acc.version_mismatch(version, image, payload_version))
        accepted = acc.payload_loaded(version or payload_version, image, _architecture(metadata))
        return dataclasses.replace(
            result,
            acceptance=accepted,
            version=payload_version,
            multi_arch=is_multi_arch(metadata),
            payload=loaded,
        )

    # -- pruning ---------------------------------------------------------------------------------

    def prune(self, deadline: float | None = None) -> None:
        """Delete version Pods (and legacy `version-*` Jobs) left by earlier runs; wait until gone."""
        prune_version_pods(self.client, self.options, deadline, cancellation=self._cancellation, clock=self._clock)


def _replace(result: RetrievalResult, acceptance: ReleaseAcceptance) -> RetrievalResult:
    return dataclasses.replace(result, acceptance=acceptance)


# -- pruning -------------------------------------------------------------------------------------


def prune_version_pods(
    client: KubeClient,
    options: RetrieverOptions,
    deadline: float | None = None,
    *,
    cancellation: Cancellation | None = None,
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
            errors.extend(delete_version_pod(client, ns, pod, prune=True))
        if pods and not errors:
            _wait_pruned(client, options, deadline, cancellation or Cancellation(), clock)
    except ClientError as exc:
        errors.append(exc.message if isinstance(exc, ApiError) and exc.message else str(exc))
    if errors:
        errors = list(dict.fromkeys(errors))  # like an aggregated error: each message once
        aggregate = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        raise PruneError(f"failed to prune pods: error deleting pods: {aggregate}")


def _list_version_pods(client: KubeClient, namespace: str) -> list[JSON]:
    items = client.list(PODS, namespace, label_selector=POD_LABEL_SELECTOR).get("items")
    return list(items or [])


def _wait_pruned(
    client: KubeClient,
    options: RetrieverOptions,
    deadline: float | None,
    cancellation: Cancellation,
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
        if cancellation.wait(0.1):
            return  # stopping: the next start prunes what is left
    # The node did not confirm in time (or there is no kubelet): remove them from the API.
    for pod in left:
        log.warning("Version pod %s did not terminate in time; deleting it without grace", pod["metadata"]["name"])
        try:
            client.delete(PODS, pod["metadata"]["name"], options.namespace, grace_period_seconds=0)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
