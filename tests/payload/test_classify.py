"""Every version-Pod state → progressing / transient / terminal, with the exact problem text."""

from __future__ import annotations

from typing import Any

import pytest

from payload.classify import (
    PROGRESSING,
    SUCCEEDED,
    TERMINAL,
    TRANSIENT,
    Limits,
    classify,
    describe,
    escalate,
    observe,
    pull_errors,
)
from testkit.fakes import versionpod

IMG = "quay.io/openshift-release-dev/ocp-release@sha256:5d"
POD = "version-4.19.1-bcd45"
SIG_MSG = (
    f"image pull failed for {IMG} because the signature validation failed: Source image rejected: "
    "A signature was required, but no signature exists"
)
MANIFEST_UNKNOWN = versionpod.manifest_unknown(IMG)  # CRI-O's text, as the end-to-end tier recorded it
UNAUTHORIZED = (
    f"initializing source docker://{IMG}: reading manifest sha256:5d in quay.io/openshift-release-dev/ocp-release: "
    "unauthorized: access to the requested resource is not authorized"
)
NETWORK = "pinging container registry quay.io: Get \"https://quay.io/v2/\": dial tcp 1.2.3.4:443: i/o timeout"
REGISTRY = "registry.example:5000/ocp-release@sha256:5d"
UNAVAILABLE = versionpod.registry_unavailable(REGISTRY)  # CRI-O: a registry that refuses connections
# containerd words the same as ErrImagePull.
REFUSED = (
    f'failed to pull and unpack image "{REGISTRY}": failed to resolve reference "{REGISTRY}": failed to do request: '
    'Head "http://registry.example:5000/v2/ocp-release/manifests/sha256:5d": dial tcp 127.0.0.1:5000: connect: '
    "connection refused"
)


def waiting(reason: str, message: str = "") -> dict[str, Any]:
    w: dict[str, Any] = {"reason": reason}
    if message:
        w["message"] = message
    return {"waiting": w}


def terminated(code: int, reason: str = "", message: str = "") -> dict[str, Any]:
    t: dict[str, Any] = {"exitCode": code}
    if reason:
        t["reason"] = reason
    if message:
        t["message"] = message
    return {"terminated": t}


def pod(
    phase: str = "Pending",
    init: list[dict[str, Any]] | None = None,
    main: dict[str, Any] | None = None,
    reason: str = "",
    message: str = "",
    **meta: Any,
) -> dict[str, Any]:
    """A version Pod whose init containers have the given states, in order (missing ones: no status)."""
    names = [
        "cleanup",
        "make-temporary-directory",
        "copy-operator-manifests-to-temporary-directory",
        "copy-release-manifests-to-temporary-directory",
    ]
    status: dict[str, Any] = {"phase": phase}
    if reason:
        status["reason"] = reason
    if message:
        status["message"] = message
    if init is not None:
        status["initContainerStatuses"] = [_status(n, s) for n, s in zip(names, init, strict=False)]
    if main is not None:
        status["containerStatuses"] = [_status("rename-to-final-location", main)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD, "namespace": "openshift-cluster-version", **meta},
        "spec": {"nodeName": "master-0"},
        "status": status,
    }


def _status(name: str, given: dict[str, Any]) -> dict[str, Any]:
    """`given` is either a bare state ({"waiting": …}) or a container status with "state"."""
    return {"name": name, "restartCount": 0, **(given if "state" in given else {"state": given})}


DONE = terminated(0, "Completed")
W = f"(pod {POD}, init container cleanup)"

CASES: list[tuple[str, dict[str, Any], str, str, str]] = [
    # (case, pod, kind, reason, exact problem)
    ("signature", pod(init=[waiting("SignatureValidationFailed", SIG_MSG)]), TERMINAL, "SignatureValidationFailed",
     f"the release image signature was rejected {W}: SignatureValidationFailed: {SIG_MSG}"),
    ("manifest unknown", pod(init=[waiting("ErrImagePull", MANIFEST_UNKNOWN)]), TERMINAL, "ErrImagePull",
     f"the release image does not exist in its registry {W}: ErrImagePull: {MANIFEST_UNKNOWN}"),
    ("not found", pod(init=[waiting("ErrImagePull", "reading manifest: 404 not found")]), TERMINAL, "ErrImagePull",
     f"the release image does not exist in its registry {W}: ErrImagePull: reading manifest: 404 not found"),
    ("unauthorized", pod(init=[waiting("ErrImagePull", UNAUTHORIZED)]), TERMINAL, "ErrImagePull",
     f"the registry refused to serve the release image {W}: ErrImagePull: {UNAUTHORIZED}"),
    ("pull other", pod(init=[waiting("ErrImagePull", NETWORK)]), TRANSIENT, "ErrImagePull",
     f"cannot pull the release image yet {W}: ErrImagePull: {NETWORK}"),
    ("registry unavailable", pod(init=[waiting("RegistryUnavailable", UNAVAILABLE)]), TERMINAL, "RegistryUnavailable",
     f"the release image's registry is unavailable {W}: RegistryUnavailable: {UNAVAILABLE}"),
    ("registry refuses (containerd)", pod(init=[waiting("ErrImagePull", REFUSED)]), TERMINAL, "ErrImagePull",
     f"the release image's registry is unavailable {W}: ErrImagePull: {REFUSED}"),
    ("backoff after registry unavailable",
     pod(init=[waiting("ImagePullBackOff", versionpod.back_off(REGISTRY, "RegistryUnavailable", UNAVAILABLE))]),
     TERMINAL, "ImagePullBackOff",
     f"the release image's registry is unavailable {W}: ImagePullBackOff: "
     f"{versionpod.back_off(REGISTRY, 'RegistryUnavailable', UNAVAILABLE)}"),
    ("backoff keeps signature error (kubernetes#127918)",
     pod(init=[waiting("ImagePullBackOff", f'Back-off pulling image "{IMG}": SignatureValidationFailed: {SIG_MSG}')]),
     TERMINAL, "ImagePullBackOff",
     f"the release image signature was rejected {W}: ImagePullBackOff: Back-off pulling image \"{IMG}\": "
     f"SignatureValidationFailed: {SIG_MSG}"),
    ("backoff plain", pod(init=[waiting("ImagePullBackOff", f'Back-off pulling image "{IMG}"')]), TRANSIENT,
     "ImagePullBackOff", f"cannot pull the release image yet {W}: ImagePullBackOff: Back-off pulling image \"{IMG}\""),
    ("invalid image name", pod(init=[waiting("InvalidImageName", 'Failed to apply default image tag "Bad": couldn\'t '
                                             "parse image name")]), TERMINAL, "InvalidImageName",
     f"the release image name is invalid {W}: InvalidImageName: Failed to apply default image tag \"Bad\": couldn't "
     "parse image name"),
    ("create config error", pod(init=[waiting("CreateContainerConfigError", "container has runAsNonRoot and image "
                                              "will run as root")]), TERMINAL, "CreateContainerConfigError",
     f"the container's configuration cannot be used {W}: CreateContainerConfigError: container has runAsNonRoot and "
     "image will run as root"),
    ("create error", pod(init=[waiting("CreateContainerError", "context deadline exceeded")]), TERMINAL,
     "CreateContainerError", f"the container cannot be created {W}: CreateContainerError: context deadline exceeded"),
    ("run error", pod(init=[waiting("RunContainerError", 'exec: "sh": executable file not found in $PATH')]),
     TERMINAL, "RunContainerError",
     f"the container cannot be started {W}: RunContainerError: exec: \"sh\": executable file not found in $PATH"),
    ("init terminated non-zero",
     pod(init=[DONE, DONE, terminated(1, "Error", "cp: cannot stat '/manifests': No such file or directory")]),
     TERMINAL, "Error",
     f"the container failed (pod {POD}, init container copy-operator-manifests-to-temporary-directory): exit code 1, "
     "reason Error: cp: cannot stat '/manifests': No such file or directory"),
    ("main terminated non-zero", pod(init=[DONE] * 4, main=terminated(1, "Error")), TERMINAL, "Error",
     f"the container failed (pod {POD}, container rename-to-final-location): exit code 1, reason Error"),
    ("crash loop", pod(init=[{"state": waiting("CrashLoopBackOff", "back-off 10s restarting failed container=cleanup"),
                              "lastState": terminated(2, "Error", "rm: cannot remove"), "restartCount": 3}]),
     TERMINAL, "CrashLoopBackOff",
     f"the container keeps failing {W}: CrashLoopBackOff: back-off 10s restarting failed container=cleanup; "
     "last run: exit code 2, reason Error: rm: cannot remove"),
    ("restarted after failure", pod(init=[{"state": {"running": {}}, "restartCount": 1,
                                           "lastState": terminated(137, "OOMKilled")}]), TERMINAL, "OOMKilled",
     f"the container failed and is being restarted {W}: exit code 137, reason OOMKilled (restarts: 1)"),
    ("deadline exceeded", pod("Failed", init=[waiting("ImagePullBackOff", f'Back-off pulling image "{IMG}"')],
                              reason="DeadlineExceeded",
                              message="Pod was active on the node longer than the specified deadline"),
     TERMINAL, "DeadlineExceeded",
     f"the pod failed (pod {POD}): DeadlineExceeded: Pod was active on the node longer than the specified deadline; "
     f"before that: cannot pull the release image yet {W}: ImagePullBackOff: Back-off pulling image \"{IMG}\""),
    ("evicted", pod("Failed", reason="Evicted", message="The node was low on resource: ephemeral-storage."),
     TERMINAL, "Evicted", f"the pod failed (pod {POD}): Evicted: The node was low on resource: ephemeral-storage."),
    ("admission rejected", pod("Failed", reason="NodeAffinity", message="Pod was rejected: Predicate NodeAffinity "
                                                                       "failed"),
     TERMINAL, "NodeAffinity", f"the pod failed (pod {POD}): NodeAffinity: Pod was rejected: Predicate NodeAffinity "
                               "failed"),
    ("failed without reason", pod("Failed"), TERMINAL, "Failed", f"the pod failed (pod {POD}): Failed"),
    ("being deleted", pod(init=[{"state": {"running": {}}}], deletionTimestamp="2026-01-01T00:00:00Z"), TERMINAL,
     "PodDeleted",
     f"the pod is being deleted before it finished (last seen: pod {POD}: init container cleanup is running)"),
    ("unknown waiting reason", pod(init=[waiting("SomethingNew", "the runtime says so")]), TRANSIENT, "SomethingNew",
     f"the container is waiting {W}: SomethingNew: the runtime says so"),
    ("unexpected phase", pod("Exploded"), TERMINAL, "Exploded",
     f"the pod is in a phase this operator does not know (pod {POD}): Exploded"),
    ("phase unknown", pod("Unknown"), TRANSIENT, "PodUnknown",
     f"the pod's node is not reporting its state (pod {POD} is in phase Unknown)"),
    ("not started yet", pod(), PROGRESSING, "NotStarted",
     f"node master-0 has not started the pod (pod {POD} is Pending with no container status)"),
    ("initializing", pod(init=[waiting("PodInitializing")]), PROGRESSING, "Pending",
     f"pod {POD}: init container cleanup is PodInitializing"),
    ("init running", pod(init=[DONE, {"state": {"running": {"startedAt": "x"}}}]), PROGRESSING, "Pending",
     f"pod {POD}: init container make-temporary-directory is running"),
    ("main running", pod("Running", init=[DONE] * 4, main={"state": {"running": {}}}), PROGRESSING, "Running",
     f"pod {POD}: container rename-to-final-location is running"),
    ("succeeded", pod("Succeeded", init=[DONE] * 4, main=DONE), SUCCEEDED, "Succeeded", f"pod {POD} succeeded"),
]


@pytest.mark.parametrize(("pod_obj", "kind", "reason", "problem"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_classify(pod_obj: dict[str, Any], kind: str, reason: str, problem: str) -> None:
    verdict = classify(pod_obj)
    assert (verdict.kind, verdict.reason, verdict.problem) == (kind, reason, problem)


def test_deleted_pod_is_terminal_and_names_last_state() -> None:
    last = pod(init=[DONE, waiting("ErrImagePull", NETWORK)])
    verdict = classify(last, deleted=True)
    assert verdict.kind == TERMINAL and verdict.reason == "PodDeleted"
    assert verdict.problem == (
        f"the pod was deleted before it finished (last seen: pod {POD}: init container make-temporary-directory is "
        "ErrImagePull)"
    )
    # Even a Pod last seen Succeeded counts as deleted if it vanished before we read the result.
    assert classify(pod("Succeeded"), deleted=True).reason == "PodDeleted"


def test_terminal_problem_wins_over_transient_one() -> None:
    both = pod(init=[waiting("ErrImagePull", NETWORK)], main=waiting("SignatureValidationFailed", SIG_MSG))
    assert classify(both).reason == "SignatureValidationFailed"


@pytest.mark.parametrize(
    ("state", "stuck_for", "kind"),
    [
        (pod(init=[waiting("ErrImagePull", NETWORK)]), 0.0, TRANSIENT),
        (pod(init=[waiting("ErrImagePull", NETWORK)]), 89.9, TRANSIENT),
        (pod(init=[waiting("ErrImagePull", NETWORK)]), 90.0, TERMINAL),
        (pod(), 9.9, PROGRESSING),
        (pod(), 10.0, TRANSIENT),
        (pod(), 90.0, TERMINAL),
        (pod("Unknown"), 90.0, TERMINAL),
        (pod(init=[{"state": {"running": {}}}]), 1000.0, PROGRESSING),  # the overall deadline handles slow copies
    ],
)
def test_time_in_state_escalates_transient_problems(state: dict[str, Any], stuck_for: float, kind: str) -> None:
    assert classify(state, stuck_for=stuck_for, limits=Limits(not_started_after=10, stuck_after=90)).kind == kind


@pytest.mark.parametrize("stuck_for", [0.0, 9.9, 10.0, 89.9, 90.0, 1000.0])
def test_observing_once_then_escalating_is_classifying_with_the_time(stuck_for: float) -> None:
    """The retriever observes each Pod state once and escalates it with the time it has lasted;
    that is exactly `classify` with that time, and escalating never changes the state's key."""
    limits = Limits(not_started_after=10, stuck_after=90)
    states = [
        pod(init=[waiting("ErrImagePull", NETWORK)]),
        pod(),
        pod("Unknown"),
        pod(init=[{"state": {"running": {}}}]),
        pod(init=[waiting("SignatureValidationFailed", SIG_MSG)]),
    ]
    for state in states:
        observed = observe(state)
        assert escalate(observed, stuck_for, limits) == classify(state, stuck_for=stuck_for, limits=limits)
        assert escalate(observed, stuck_for, limits).key == observed.key


def test_stuck_problem_says_how_long() -> None:
    verdict = classify(pod(), stuck_for=95, limits=Limits(stuck_after=90))
    assert verdict.problem.endswith("is Pending with no container status) (unchanged for 95s)")


def test_key_ignores_backoff_message_changes() -> None:
    a = classify(pod(init=[waiting("ImagePullBackOff", "Back-off 10s")]))
    b = classify(pod(init=[waiting("ErrImagePull", "Back-off 20s and another text")]))
    assert a.key == b.key
    second_running = classify(pod(init=[DONE, {"state": {"running": {}}}]))
    assert second_running.key != classify(pod(init=[{"state": {"running": {}}}])).key


def test_backoff_without_detail_quotes_the_remembered_pull_error() -> None:
    first = pod(init=[waiting("ErrImagePull", UNAUTHORIZED)])
    remembered = pull_errors(first)
    assert remembered == {"cleanup": f"ErrImagePull: {UNAUTHORIZED}"}
    later = pod(init=[waiting("ImagePullBackOff", f'Back-off pulling image "{IMG}"')])
    verdict = classify(later, remembered_pull_errors=remembered)
    assert verdict.kind == TERMINAL
    assert verdict.problem == (
        f"the registry refused to serve the release image {W}: ImagePullBackOff: Back-off pulling image \"{IMG}\" "
        f"(last pull error: ErrImagePull: {UNAUTHORIZED})"
    )


def test_long_kubelet_messages_are_bounded() -> None:
    huge = "x" * 5000 + "\nthe actual error at the end"
    verdict = classify(pod(init=[terminated(1, "Error", huge)]))
    assert len(verdict.problem) < 900
    assert "\n" not in verdict.problem
    assert verdict.problem.endswith("the actual error at the end")


def test_what_the_image_and_the_kubelet_wrote_is_escaped_in_the_problem() -> None:
    """A termination message is the release image's own text, and reaches ReleaseAccepted, an
    Event and the log: no control or bidi character passes."""
    hostile = "cp: \x1b]0;owned\x07 failed\u202e"
    verdict = classify(pod(init=[terminated(1, "Err\x1bor", hostile)]))
    assert "exit code 1, reason Err\\x1bor: cp: \\x1b]0;owned\\a failed\\u202e" in verdict.problem
    waited = classify(pod(init=[waiting("ErrImagePull", "manifest unknown \x1b[2J")]))
    assert waited.problem.endswith("ErrImagePull: manifest unknown \\x1b[2J")
    assert all(text.isprintable() for text in (verdict.problem, waited.problem))


@pytest.mark.parametrize(
    ("obj", "error"),
    [
        ({"kind": "Pod"}, "expected a Pod object"),
        ({"kind": "Job", "metadata": {"name": "x"}}, "expecting Pod but received event with kind: Job"),
        ({"kind": "Jo'b\x1b[2J", "metadata": {"name": "x"}}, "expecting Pod but received event with kind: Jo'b\\x1b"),
    ],
)
def test_non_pods_are_rejected(obj: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError) as caught:
        classify(obj)
    assert str(caught.value).startswith(error)


def test_describe() -> None:
    assert describe(pod()) == f"pod {POD} Pending, no container started"
    assert describe(pod("Running", init=[DONE] * 4, main={"state": {"running": {}}})) == (
        f"pod {POD}: container rename-to-final-location is running"
    )
