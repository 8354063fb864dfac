"""The whole ClusterVersion status cvo-py wants, from what it observes (pure).

`desired_status(cv, cluster_operators, inputs, now)` returns a complete `status` dict: the
fields cvo-py owns are recomputed, every other field (availableUpdates, conditionalUpdates,
versionHash, conditions other controllers set, ...) is carried over from `cv` unchanged, so
re-running it on a freshly read object after a conflict never drops what others wrote.

cvo-py does not apply release manifests: progress is judged from the ClusterOperators that belong
to the release (those annotated `include.release.openshift.io/...` or
`exclude.release.openshift.io/...`) and the `operator` version they report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cvo_py.gotext import metav1_time
from cvo_py.jsondata import copy_json
from payload.acceptance import is_about, payload_loaded
from payload.acceptance import retrieving as payload_retrieving
from payload.release import Acceptance, Release
from status.clusterversion import capabilities
from status.clusterversion.history import merge_history
from status.clusterversion.history import prune_history as prune_history  # re-exported

JSON = dict[str, Any]

AVAILABLE = "Available"
PROGRESSING = "Progressing"
FAILING = "Failing"
RELEASE_ACCEPTED = "ReleaseAccepted"
INVALID = "Invalid"
IMPLICITLY_ENABLED = "ImplicitlyEnabledCapabilities"
RETRIEVED_UPDATES = "RetrievedUpdates"
# Our own condition: capability names the installed CRD rejected (see status/clusterversion/writer.py).
CAPABILITIES_PRUNED = "CapabilitiesPruned"

RELEASE_ANNOTATION_PREFIXES = ("include.release.openshift.io/", "exclude.release.openshift.io/")


# -- releases ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatusInputs:
    running: Release  # the release cvo-py runs as (--release-image); seeds status.desired
    acceptance: Acceptance | None = None
    always_enabled: tuple[str, ...] = ()
    # Enabled names the status cannot carry (the CRD rejected them): still enabled, never dropped.
    prior_enabled: tuple[str, ...] = ()
    # What the available-updates poller found for this spec's upstream and channel
    # (updates.poller.updates_status); None leaves those fields as they are.
    updates: Mapping[str, Any] | None = None


class InvalidSpec(ValueError):
    """spec.desiredUpdate cannot be turned into a release."""


def requested_update(cv: Mapping[str, Any]) -> Release | None:
    """spec.desiredUpdate as a release; a version without image is looked up in availableUpdates
    and history like upstream. Raises InvalidSpec when it names nothing usable."""
    update = (cv.get("spec") or {}).get("desiredUpdate")
    if not update:
        return None
    if not isinstance(update, dict):
        raise InvalidSpec("spec.desiredUpdate: Invalid value: must be an object")
    release = Release.from_dict(update)
    if release.image:
        return _with_metadata(release, cv)
    if not release.version:
        raise InvalidSpec("spec.desiredUpdate: Required value: version or image must be set")
    status = cv.get("status") or {}
    candidates = list(status.get("availableUpdates") or [])
    candidates += [c.get("release") or {} for c in status.get("conditionalUpdates") or [] if isinstance(c, dict)]
    candidates += list(status.get("history") or [])
    for candidate in candidates:
        if isinstance(candidate, dict) and candidate.get("version") == release.version and candidate.get("image"):
            return _with_metadata(Release(release.version, str(candidate["image"])), cv)
    raise InvalidSpec(
        f'spec.desiredUpdate.version: Invalid value: "{release.version}": when image is empty the update '
        "must be a previous version or an available update"
    )


def _with_metadata(release: Release, cv: Mapping[str, Any]) -> Release:
    """Fill url and channels from the matching available update, as upstream does for desired."""
    for update in (cv.get("status") or {}).get("availableUpdates") or []:
        if isinstance(update, dict) and update.get("image") == release.image:
            found = Release.from_dict(update)
            return Release(release.version or found.version, release.image, found.url, found.channels)
    return release


def current_release(cv: Mapping[str, Any], running: Release) -> Release:
    """status.desired once set; before that, the release cvo-py runs as."""
    current = Release.from_dict((cv.get("status") or {}).get("desired"))
    return current if current.image else (running if running.image else current)


def pending_update(cv: Mapping[str, Any], running: Release) -> tuple[Release, bool] | None:
    """The (release, force) spec.desiredUpdate asks for when it differs from the current one."""
    try:
        requested = requested_update(cv)
    except InvalidSpec:
        return None
    if requested is None or requested.same_as(current_release(cv, running)):
        return None
    update = (cv.get("spec") or {}).get("desiredUpdate") or {}
    return requested, bool(update.get("force"))


# -- conditions -------------------------------------------------------------------------------------


def find_condition(conditions: Sequence[Mapping[str, Any]], type_: str) -> Mapping[str, Any] | None:
    for condition in conditions:
        if condition.get("type") == type_:
            return condition
    return None


def set_condition(conditions: list[JSON], type_: str, status: str, reason: str, message: str, now: datetime) -> None:
    """Upstream's setter: lastTransitionTime moves only when status flips; reason and message are
    always overwritten; a new type is appended at the end."""
    for condition in conditions:
        if condition.get("type") == type_:
            if condition.get("status") != status or not condition.get("lastTransitionTime"):
                condition["lastTransitionTime"] = metav1_time(now)
            condition["status"] = status
            _set_or_drop(condition, "reason", reason)
            _set_or_drop(condition, "message", message)
            return
    new: JSON = {"type": type_, "status": status, "lastTransitionTime": metav1_time(now)}
    _set_or_drop(new, "reason", reason)
    _set_or_drop(new, "message", message)
    conditions.append(new)


def remove_condition(conditions: list[JSON], type_: str) -> None:
    conditions[:] = [c for c in conditions if c.get("type") != type_]


def _set_or_drop(condition: JSON, key: str, value: str) -> None:
    if value:
        condition[key] = value
    else:
        condition.pop(key, None)


# -- ClusterOperators -------------------------------------------------------------------------------


def is_release_operator(co: Mapping[str, Any]) -> bool:
    annotations = (co.get("metadata") or {}).get("annotations") or {}
    return any(key.startswith(RELEASE_ANNOTATION_PREFIXES) for key in annotations)


def operator_version(co: Mapping[str, Any]) -> str:
    for entry in (co.get("status") or {}).get("versions") or []:
        if isinstance(entry, dict) and entry.get("name") == "operator":
            return str(entry.get("version") or "")
    return ""


def co_condition(co: Mapping[str, Any], type_: str) -> str:
    found = find_condition((co.get("status") or {}).get("conditions") or [], type_)
    return str(found.get("status") or "") if found else ""


@dataclass(frozen=True)
class OperatorProgress:
    total: int
    done: int  # at the target version
    not_available: tuple[str, ...]
    degraded: tuple[str, ...]

    @property
    def completed(self) -> bool:
        # With no release ClusterOperators there is nothing to judge progress from.
        return self.total > 0 and self.done == self.total


def operator_progress(cluster_operators: Sequence[Mapping[str, Any]], target_version: str) -> OperatorProgress:
    release_cos = sorted(
        (co for co in cluster_operators if is_release_operator(co)),
        key=lambda co: str((co.get("metadata") or {}).get("name") or ""),
    )
    done = sum(1 for co in release_cos if target_version and operator_version(co) == target_version)
    names = [str((co.get("metadata") or {}).get("name") or "") for co in release_cos]
    return OperatorProgress(
        total=len(release_cos),
        done=done,
        not_available=tuple(
            n for n, co in zip(names, release_cos, strict=True) if co_condition(co, "Available") == "False"
        ),
        degraded=tuple(n for n, co in zip(names, release_cos, strict=True) if co_condition(co, "Degraded") == "True"),
    )


@dataclass(frozen=True)
class Failure:
    reason: str
    message: str
    summary: str  # for "Unable to apply <v>: <summary>"


def operator_failure(progress: OperatorProgress) -> Failure | None:
    lines: list[tuple[str, str, str]] = []
    if progress.not_available:
        names = ", ".join(progress.not_available)
        if len(progress.not_available) == 1:
            lines.append(
                (
                    "ClusterOperatorNotAvailable",
                    f"Cluster operator {names} is not available",
                    f"the cluster operator {names} is not available",
                )
            )
        else:
            lines.append(
                (
                    "ClusterOperatorsNotAvailable",
                    f"Cluster operators {names} are not available",
                    f"the cluster operators {names} are not available",
                )
            )
    if progress.degraded:
        names = ", ".join(progress.degraded)
        if len(progress.degraded) == 1:
            lines.append(
                (
                    "ClusterOperatorDegraded",
                    f"Cluster operator {names} is degraded",
                    f"the cluster operator {names} is degraded",
                )
            )
        else:
            lines.append(
                (
                    "ClusterOperatorsDegraded",
                    f"Cluster operators {names} are degraded",
                    f"the cluster operators {names} are degraded",
                )
            )
    if not lines:
        return None
    if len(lines) == 1:
        return Failure(*lines[0])
    message = "Multiple errors are preventing progress:\n" + "\n".join(f"* {line[1]}" for line in lines)
    return Failure("MultipleErrors", message, "; ".join(line[2] for line in lines))


# -- the whole status -------------------------------------------------------------------------------


def desired_status(
    cv: Mapping[str, Any],
    cluster_operators: Sequence[Mapping[str, Any]],
    inputs: StatusInputs,
    now: datetime,
) -> JSON:
    """The ClusterVersion status cvo-py wants given what it sees (pure; `cv` is not modified).

    Each field and condition comes from its own helper below; this only composes them, in
    upstream's order (conditions new to the status are appended in that order)."""
    if not isinstance(cv, Mapping) or not isinstance(cv.get("metadata"), dict):
        raise ValueError("cv must be a ClusterVersion object with metadata")
    status: JSON = copy_json(dict(cv.get("status") or {}))
    conditions: list[JSON] = [dict(c) for c in status.get("conditions") or [] if isinstance(c, dict)]

    aim = target(cv, inputs)
    progress = operator_progress(cluster_operators, aim.desired.version)
    history = merge_history(status.get("history"), aim.desired, aim.verified, now, progress.completed)
    status["history"] = history
    if aim.desired.image:
        status["desired"] = aim.desired.to_status()
    status["observedGeneration"] = int((cv.get("metadata") or {}).get("generation") or 0)
    status.setdefault("versionHash", "")
    status.setdefault("availableUpdates", None)
    caps = capabilities_status(cv, inputs, aim.desired)
    status["capabilities"] = {"enabledCapabilities": list(caps.enabled), "knownCapabilities": list(caps.known)}

    failure = operator_failure(progress)
    _put(conditions, AVAILABLE, available(history, find_condition(conditions, AVAILABLE)), now)
    _put(conditions, FAILING, failing(failure), now)
    _put(conditions, PROGRESSING, progressing(aim, history, progress, failure), now)
    verdict = invalid(aim.invalid)
    if verdict is None:
        remove_condition(conditions, INVALID)
    else:
        _put(conditions, INVALID, verdict, now)
    existing = find_condition(conditions, RELEASE_ACCEPTED)
    _put(conditions, RELEASE_ACCEPTED, release_accepted(aim, existing), now)
    _put(conditions, IMPLICITLY_ENABLED, implicitly_enabled(caps), now)
    remove_condition(conditions, "ImplicitlyEnabled")  # stale type from OCPBUGS-56114
    status = with_available_updates(status, inputs.updates)
    existing = find_condition(conditions, RETRIEVED_UPDATES)
    _put(conditions, RETRIEVED_UPDATES, retrieved_updates(inputs.updates, existing), now)

    status["conditions"] = conditions
    return status


@dataclass(frozen=True)
class Verdict:
    """What one condition says (set with upstream's setter: the transition time moves on a flip)."""

    status: str
    reason: str = ""
    message: str = ""


def _put(conditions: list[JSON], type_: str, verdict: Verdict | None, now: datetime) -> None:
    """Set `type_` to `verdict`; None leaves the condition as it is."""
    if verdict is not None:
        set_condition(conditions, type_, verdict.status, verdict.reason, verdict.message, now)


@dataclass(frozen=True)
class Target:
    """What the spec asks for, and the release status.desired names."""

    current: Release  # status.desired before this sync (the running release before the first)
    requested: Release | None  # spec.desiredUpdate; None when absent or invalid
    invalid: str | None  # why spec.desiredUpdate names nothing usable
    acceptance: Acceptance | None  # retrieval's verdict about `requested`, else None
    desired: Release
    verified: bool
    pending: bool  # `requested` is not the desired release yet (retrieval under way or failed)


def target(cv: Mapping[str, Any], inputs: StatusInputs) -> Target:
    """The desired release: the requested one once retrieval accepted it, the current one before."""
    current = current_release(cv, inputs.running)
    invalid_spec: str | None = None
    try:
        requested = requested_update(cv)
    except InvalidSpec as exc:
        requested, invalid_spec = None, str(exc)
    acceptance = inputs.acceptance
    if acceptance is not None and (requested is None or not acceptance.target.same_as(requested)):
        acceptance = None  # about a target the spec no longer asks for
    pending = requested is not None and not requested.same_as(current)
    desired, verified = current, False
    if acceptance is not None and acceptance.state.status == "True" and not acceptance.target.same_as(current):
        desired, verified, pending = acceptance.target, acceptance.verified, False
    return Target(current, requested, invalid_spec, acceptance, desired, verified, pending)


def capabilities_status(cv: Mapping[str, Any], inputs: StatusInputs, desired: Release) -> capabilities.CapabilityStatus:
    """status.capabilities: what spec enables, never disabling what status or the writer had enabled."""
    status = cv.get("status") or {}
    return capabilities.compute(
        (cv.get("spec") or {}).get("capabilities"),
        inputs.running.version or desired.version,
        prior_enabled=[
            *((status.get("capabilities") or {}).get("enabledCapabilities") or []),
            *inputs.prior_enabled,
        ],
        always_enabled=inputs.always_enabled,
    )


def available(history: Sequence[Mapping[str, Any]], existing: Mapping[str, Any] | None) -> Verdict | None:
    """Available: once anything completed, the newest completed release is what the cluster runs;
    before that, False when there is no such condition yet (None: keep the existing one)."""
    last_completed = next((h for h in history if h.get("state") == "Completed"), None)
    if last_completed is not None:
        done = last_completed.get("version") or last_completed.get("image")
        return Verdict("True", "", f"Done applying {done}")
    return Verdict("False") if existing is None else None


def failing(failure: Failure | None) -> Verdict:
    return Verdict("False") if failure is None else Verdict("True", failure.reason, failure.message)


def progressing(
    aim: Target, history: Sequence[Mapping[str, Any]], progress: OperatorProgress, failure: Failure | None
) -> Verdict:
    updating = bool(history) and history[0].get("state") == "Partial"
    label = aim.desired.label()
    if aim.pending and aim.requested is not None:
        # Retrieval of the next release is under way (ReleaseAccepted tells how it goes).
        return Verdict("True", "", f"Working towards {aim.requested.label()}")
    if updating and failure is not None:
        return Verdict("True", failure.reason, f"Unable to apply {label}: {failure.summary}")
    if updating:
        message = f"Working towards {label}"
        if progress.total:
            pct = progress.done * 100 // progress.total
            message += f": {progress.done} of {progress.total} done ({pct}% complete)"
        return Verdict("True", "", message)
    if aim.invalid is not None:
        return Verdict("False", "InvalidClusterVersion", f"Reconciling {label}: the cluster version is invalid")
    if failure is not None:
        return Verdict("False", failure.reason, f"Error while reconciling {label}: {failure.summary}")
    return Verdict("False", "", f"Cluster version is {label}")


def invalid(why: str | None) -> Verdict | None:
    """Invalid while spec.desiredUpdate names nothing usable; None: no such condition."""
    if why is None:
        return None
    return Verdict("True", "InvalidClusterVersion", f"The cluster version is invalid: {why}")


def release_accepted(aim: Target, existing: Mapping[str, Any] | None) -> Verdict | None:
    """ReleaseAccepted: retrieval's verdict on the requested release; None keeps the existing one."""
    if aim.acceptance is not None:
        state = aim.acceptance.state
        return Verdict(state.status, state.reason, state.message)
    pending = aim.requested if aim.pending else None
    if pending is not None:
        # Retrieval of the new target has not reported yet: say it is being retrieved, never leave
        # a state about an earlier target beside a Progressing that names this one. A failure of
        # this same target (e.g. found by the operator's previous run) stays until the next
        # attempt ends, as within a run: the admin keeps seeing why.
        if (
            existing is not None
            and existing.get("status") == "False"
            and is_about(str(existing.get("message") or ""), pending.version, pending.image)
        ):
            return None
        retrieving = payload_retrieving(pending.version, pending.image)
        return Verdict(retrieving.status, retrieving.reason, retrieving.message)
    loaded = payload_loaded(aim.desired.version, aim.desired.image)
    if (
        existing is None
        or existing.get("status") != "True"
        or not str(existing.get("message") or "").startswith(loaded.message)
    ):
        # Nothing pending: the accepted payload is the desired one (upstream's reset message),
        # also when the condition still names another release (e.g. written by an earlier run).
        return Verdict(loaded.status, loaded.reason, loaded.message)
    return None


def implicitly_enabled(caps: capabilities.CapabilityStatus) -> Verdict:
    if caps.implicitly_enabled:
        return Verdict(
            "True",
            "CapabilitiesImplicitlyEnabled",
            "The following capabilities could not be disabled: " + ", ".join(caps.implicitly_enabled),
        )
    return Verdict("False", "AsExpected", "Capabilities match configured spec")


def with_available_updates(status: Mapping[str, Any], updates: Mapping[str, Any] | None) -> JSON:
    """`status` with availableUpdates and conditionalUpdates from the poller's findings, and the
    desired release's url and channels filled from the graph's current node; unchanged before any."""
    out = dict(status)
    if updates is None:
        return out
    out["availableUpdates"] = updates.get("availableUpdates")
    if updates.get("conditionalUpdates"):
        out["conditionalUpdates"] = updates["conditionalUpdates"]
    else:
        out.pop("conditionalUpdates", None)
    current = updates.get("current") or {}
    desired = out.get("desired")
    if isinstance(desired, dict) and current and desired.get("version") == current.get("version"):
        filled = dict(desired)
        for key in ("url", "channels"):
            if current.get(key) and not filled.get(key):
                filled[key] = current[key]
        out["desired"] = filled
    return out


def retrieved_updates(updates: Mapping[str, Any] | None, existing: Mapping[str, Any] | None) -> Verdict | None:
    """RetrievedUpdates as the poller reports it; before any report, upstream's first-sync
    placeholder (False, no reason or message) when there is none (None: keep the existing one)."""
    if updates is None:
        return Verdict("False") if existing is None else None
    condition = updates["condition"]
    return Verdict(condition["status"], condition.get("reason", ""), condition.get("message", ""))
