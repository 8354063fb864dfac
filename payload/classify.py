"""What the version Pod's state means for the retrieval (pure).

`classify` maps the Pod as the API server reports it, and how long it has looked the same, to
one of: progressing (keep waiting quietly), transient (keep waiting, but show the admin), terminal
(stop now and say why), or succeeded. Each non-success verdict carries a one-line, bounded
`problem` text naming what went wrong, where (Pod and init/main container) and why (the
kubelet's reason and message, verbatim).

Upstream fails fast only on `SignatureValidationFailed` and on `ErrImagePull` with "manifest
unknown"; every other mode waits out the Pod's 120 s deadline. Here every mode that retrying
cannot fix is terminal at once, and so is a registry that refuses connections (nothing listens:
the kubelet's back-off would only hide it; the retrieval is tried again later, with backoff);
what the kubelet may still fix (a registry timeout) is shown while waiting, and becomes terminal
once it has not changed for `Limits.stuck_after`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from cvo_py.runtime.gotext.messages import bounded
from cvo_py.runtime.gotext.quoting import escape

JSON = dict[str, Any]
Kind = Literal["Progressing", "Transient", "Terminal", "Succeeded"]
PROGRESSING: Kind = "Progressing"
TRANSIENT: Kind = "Transient"
TERMINAL: Kind = "Terminal"
SUCCEEDED: Kind = "Succeeded"

# Longest kubelet/termination message quoted in one problem text.
MAX_DETAIL = 700

# A Pod with no container status yet: ordinary for a moment (see `Limits.not_started_after`).
NOT_STARTED = "NotStarted"

# Waiting reasons that are ordinary steps, not problems.
_PROGRESS_REASONS = frozenset({"", "ContainerCreating", "PodInitializing"})

# Pull-error texts (registry answers, as containers/image words them) that retrying will not fix.
_NOT_FOUND = re.compile(r"manifest unknown|not found|name unknown|no such image|does not exist", re.I)
_UNAUTHORIZED = re.compile(
    r"unauthorized|authentication required|denied|access to the requested resource is not authorized|"
    r"\b401\b|\b403\b",
    re.I,
)
_SIGNATURE = re.compile(r"SignatureValidationFailed|signature validation failed|Source image rejected", re.I)
# A registry that refuses connections (CRI-O's reason, or the dial error containerd quotes): nothing
# listens there now. Reported at once; the coordinator tries the target again later with backoff.
_UNAVAILABLE = re.compile(r"RegistryUnavailable|registry is unavailable|connect: connection refused", re.I)


@dataclass(frozen=True)
class Limits:
    # A Pod with no container status at all is normal for a moment; after this it is worth showing.
    not_started_after: float = 10.0
    # A problem the kubelet keeps retrying becomes terminal when unchanged for this long.
    stuck_after: float = 90.0


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    # The kubelet's or the Pod's reason (`ErrImagePull`, `DeadlineExceeded`), or ours (`PodDeleted`,
    # `NotStarted`, `Running`); used as the metric label and in the problem text.
    reason: str
    # Readable one-line description: "<what> (pod P, init container C): <Reason>: <kubelet message>".
    problem: str
    # Identity of the observed state: `stuck_for` is measured from when the key last changed.
    key: str

    @property
    def done(self) -> bool:
        return self.kind in (TERMINAL, SUCCEEDED)


@dataclass(frozen=True)
class _Container:
    where: str  # "init container cleanup" / "container rename-to-final-location"
    name: str
    state: JSON
    last_state: JSON
    restart_count: int


def _containers(pod: JSON) -> list[_Container]:
    status = pod.get("status") or {}
    found: list[_Container] = []
    for field, label in (("initContainerStatuses", "init container"), ("containerStatuses", "container")):
        for cs in status.get(field) or []:
            if not isinstance(cs, dict):
                continue
            name = str(cs.get("name", "?"))
            found.append(
                _Container(
                    where=f"{label} {name}",
                    name=name,
                    state=cs.get("state") or {},
                    last_state=cs.get("lastState") or {},
                    restart_count=int(cs.get("restartCount") or 0),
                )
            )
    return found


def pull_errors(pod: JSON) -> dict[str, str]:
    """The image-pull errors the Pod shows now, by container name, to remember across back-offs.

    Before kubernetes#127918 `ImagePullBackOff` drops the original error; the retriever keeps the
    last one seen and passes it back to `classify`.
    """
    found: dict[str, str] = {}
    for c in _containers(pod):
        waiting = c.state.get("waiting") or {}
        reason = str(waiting.get("reason") or "")
        if reason in ("ErrImagePull", "SignatureValidationFailed", "RegistryUnavailable") and waiting.get(
            "message"
        ):
            found[c.name] = f"{reason}: {waiting['message']}"
    return found


def _quoted(text: str) -> str:
    """What the kubelet or the container wrote, as a problem quotes it: one line, bounded, and
    escaped (a problem reaches conditions, Events and logs; a termination message is the image's)."""
    return escape(bounded(text, MAX_DETAIL))


def _detail(reason: str, message: str) -> str:
    reason = escape(reason)
    return f"{reason}: {_quoted(message)}" if message else reason


def _pull_verdict(pod_name: str, c: _Container, reason: str, message: str, remembered: str) -> Verdict:
    evidence = f"{message} {remembered}"
    key = f"{c.name}:pull"
    where = f"(pod {pod_name}, {c.where})"
    text = _detail(reason, message)
    # A back-off without the original error (older kubelets): quote the error seen before it.
    if reason == "ImagePullBackOff" and remembered and remembered.split(": ", 1)[-1] not in message:
        text += f" (last pull error: {_quoted(remembered)})"
    if reason == "SignatureValidationFailed" or _SIGNATURE.search(evidence):
        return Verdict(TERMINAL, reason, f"the release image signature was rejected {where}: {text}", key)
    if _NOT_FOUND.search(evidence):
        return Verdict(
            TERMINAL, reason, f"the release image does not exist in its registry {where}: {text}", key
        )
    if _UNAUTHORIZED.search(evidence):
        return Verdict(
            TERMINAL, reason, f"the registry refused to serve the release image {where}: {text}", key
        )
    if reason == "RegistryUnavailable" or _UNAVAILABLE.search(evidence):
        return Verdict(TERMINAL, reason, f"the release image's registry is unavailable {where}: {text}", key)
    return Verdict(TRANSIENT, reason, f"cannot pull the release image yet {where}: {text}", key)


def _terminated_text(term: JSON) -> str:
    parts = [f"exit code {escape(str(term.get('exitCode')))}"]
    if term.get("reason"):
        parts.append(f"reason {escape(str(term['reason']))}")
    text = ", ".join(parts)
    if term.get("message"):
        text += f": {_quoted(str(term['message']))}"
    return text


def _container_verdict(pod_name: str, c: _Container, remembered: str) -> Verdict | None:
    """The problem one container shows, or None when it is fine (running, done or starting)."""
    where = f"(pod {pod_name}, {c.where})"
    waiting = c.state.get("waiting")
    terminated = c.state.get("terminated")
    last = (c.last_state or {}).get("terminated")
    if isinstance(waiting, dict):
        reason = str(waiting.get("reason") or "")
        message = str(waiting.get("message") or "")
        if reason in ("ErrImagePull", "ImagePullBackOff", "SignatureValidationFailed", "RegistryUnavailable"):
            return _pull_verdict(pod_name, c, reason, message, remembered)
        if reason == "InvalidImageName":
            what = "the release image name is invalid"
            return Verdict(
                TERMINAL, reason, f"{what} {where}: {_detail(reason, message)}", f"{c.name}:{reason}"
            )
        if reason in ("CreateContainerConfigError", "CreateContainerError", "RunContainerError"):
            what = {
                "CreateContainerConfigError": "the container's configuration cannot be used",
                "CreateContainerError": "the container cannot be created",
                "RunContainerError": "the container cannot be started",
            }[reason]
            return Verdict(
                TERMINAL, reason, f"{what} {where}: {_detail(reason, message)}", f"{c.name}:{reason}"
            )
        if reason == "CrashLoopBackOff":
            text = _detail(reason, message)
            if isinstance(last, dict):
                text += f"; last run: {_terminated_text(last)}"
            return Verdict(
                TERMINAL, reason, f"the container keeps failing {where}: {text}", f"{c.name}:{reason}"
            )
        if reason not in _PROGRESS_REASONS:
            # Unknown to us: quoted verbatim and shown while waiting, never dropped.
            text = f"the container is waiting {where}: {_detail(reason, message)}"
            return Verdict(TRANSIENT, reason, text, f"{c.name}:{reason}")
    if isinstance(terminated, dict) and int(terminated.get("exitCode") or 0) != 0:
        reason = str(terminated.get("reason") or "Error")
        text = f"the container failed {where}: {_terminated_text(terminated)}"
        return Verdict(TERMINAL, reason, text, f"{c.name}:terminated")
    # restartPolicy OnFailure: a failed run may already be restarting; the failure is in lastState.
    if isinstance(last, dict) and int(last.get("exitCode") or 0) != 0:
        reason = str(last.get("reason") or "Error")
        text = f"the container failed and is being restarted {where}: {_terminated_text(last)}"
        if c.restart_count:
            text += f" (restarts: {c.restart_count})"
        return Verdict(TERMINAL, reason, text, f"{c.name}:lastTerminated")
    return None


def _current_step(pod: JSON, containers: list[_Container]) -> str:
    """What the Pod is doing now, e.g. "init container cleanup is running"."""
    for c in containers:
        if "terminated" in c.state:
            continue
        if "running" in c.state:
            return f"{c.where} is running"
        waiting = c.state.get("waiting") or {}
        reason = waiting.get("reason") or "waiting"
        return f"{c.where} is {reason}"
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    return f"phase {phase}"


def describe(pod: JSON) -> str:
    """A short description of the Pod's current state, for "last observed" texts."""
    name = (pod.get("metadata") or {}).get("name", "?")
    containers = _containers(pod)
    if not containers:
        phase = (pod.get("status") or {}).get("phase") or "Pending"
        return f"pod {name} {phase}, no container started"
    return f"pod {name}: {_current_step(pod, containers)}"


def _problems(pod: JSON, remembered: Mapping[str, str]) -> Iterator[Verdict]:
    name = str((pod.get("metadata") or {}).get("name", "?"))
    for c in _containers(pod):
        verdict = _container_verdict(name, c, remembered.get(c.name, ""))
        if verdict is not None:
            yield verdict


def classify(
    pod: JSON,
    *,
    deleted: bool = False,
    stuck_for: float = 0.0,
    limits: Limits = Limits(),
    remembered_pull_errors: Mapping[str, str] | None = None,
) -> Verdict:
    """Classify the version Pod.

    `deleted`: the Pod is gone (this is its last known state). `stuck_for`: seconds since the
    verdict's `key` last changed, as measured by the caller.
    """
    return escalate(observe(pod, deleted=deleted, remembered_pull_errors=remembered_pull_errors), stuck_for, limits)


def observe(pod: JSON, *, deleted: bool = False, remembered_pull_errors: Mapping[str, str] | None = None) -> Verdict:
    """What the Pod shows now, before time is taken into account: its `key` says whether the state
    changed, and `escalate` then judges how long it has lasted. One call per observed Pod state."""
    if not isinstance(pod, dict) or not isinstance(pod.get("metadata"), dict):
        raise ValueError(f"expected a Pod object, got {type(pod).__name__}")
    if pod.get("kind", "Pod") != "Pod":
        raise ValueError(f"expecting Pod but received event with kind: {escape(str(pod.get('kind')))}")  # upstream's
    remembered = remembered_pull_errors or {}
    meta = pod["metadata"]
    name = str(meta.get("name", "?"))
    status = pod.get("status") or {}
    phase = str(status.get("phase") or "Pending")

    if phase == "Succeeded" and not deleted:
        return Verdict(SUCCEEDED, "Succeeded", f"pod {name} succeeded", "Succeeded")
    if deleted or meta.get("deletionTimestamp"):
        how = "was deleted" if deleted else "is being deleted"
        problem = f"the pod {how} before it finished (last seen: {describe(pod)})"
        return Verdict(TERMINAL, "PodDeleted", problem, "PodDeleted")

    problems = list(_problems(pod, remembered))
    if phase == "Failed":
        reason = str(status.get("reason") or "Failed")
        text = f"the pod failed (pod {name}): {_detail(reason, str(status.get('message') or ''))}"
        if problems:
            text += f"; before that: {problems[0].problem}"
        return Verdict(TERMINAL, reason, text, f"Failed:{reason}")
    if phase not in ("Pending", "Running", "Unknown"):
        problem = f"the pod is in a phase this operator does not know (pod {name}): {phase}"
        return Verdict(TERMINAL, phase or "UnknownPhase", problem, f"phase:{phase}")

    for verdict in problems:
        if verdict.kind == TERMINAL:
            return verdict
    transient = next(iter(problems), None)
    if transient is None and phase == "Unknown":
        text = f"the pod's node is not reporting its state (pod {name} is in phase Unknown)"
        transient = Verdict(TRANSIENT, "PodUnknown", text, "phase:Unknown")
    containers = _containers(pod)
    if transient is None and not containers and phase == "Pending":
        node = (pod.get("spec") or {}).get("nodeName") or "?"
        text = f"node {node} has not started the pod (pod {name} is Pending with no container status)"
        transient = Verdict(PROGRESSING, NOT_STARTED, text, NOT_STARTED)
    if transient is not None:
        return transient
    step = _current_step(pod, containers)
    return Verdict(
        PROGRESSING, "Running" if phase == "Running" else phase, f"pod {name}: {step}", f"step:{step}"
    )


def escalate(observed: Verdict, stuck_for: float, limits: Limits) -> Verdict:
    """`observed` judged after it has not changed for `stuck_for` seconds: a Pod not started for
    `limits.not_started_after` is shown, and a problem the kubelet keeps retrying is terminal once
    unchanged for `limits.stuck_after`."""
    verdict = observed
    if verdict.kind == PROGRESSING and verdict.reason == NOT_STARTED and stuck_for >= limits.not_started_after:
        verdict = Verdict(TRANSIENT, verdict.reason, verdict.problem, verdict.key)
    if verdict.kind == TRANSIENT and stuck_for >= limits.stuck_after:
        problem = f"{verdict.problem} (unchanged for {stuck_for:.0f}s)"
        return Verdict(TERMINAL, verdict.reason, problem, verdict.key)
    return verdict
