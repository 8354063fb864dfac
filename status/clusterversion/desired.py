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

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cvo_py.gotext import metav1_time
from payload.acceptance import is_about, payload_loaded
from payload.acceptance import retrieving as payload_retrieving
from payload.release import Acceptance, Release
from status.clusterversion import capabilities

JSON = dict[str, Any]

MAX_HISTORY = 100

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


# -- history ----------------------------------------------------------------------------------------


def _same_release_fill(last: JSON, desired: Release) -> bool:
    """Upstream's mergeEqualVersions: also fills a missing version or image into `last`."""
    last_image, last_version = str(last.get("image") or ""), str(last.get("version") or "")
    if desired.image and last_image == desired.image:
        if not desired.version or last_version == desired.version:
            return True
        if not last_version:
            last["version"] = desired.version
            return True
    if desired.version and last_version == desired.version:
        if not last_image:
            last["image"] = desired.image
            return True
        if last_image == desired.image:
            return True
    return False


def merge_history(
    history: Sequence[Mapping[str, Any]] | None,
    desired: Release,
    verified: bool,
    now: datetime,
    completed: bool,
    accepted_risks: str | None = None,
    max_history: int = MAX_HISTORY,
) -> list[JSON]:
    """Upstream's mergeOperatorHistory on plain dicts (newest first); returns a new list."""
    entries = [copy.deepcopy(dict(e)) for e in history or []]
    if not desired.image:
        return entries
    ts = metav1_time(now)
    if not entries:
        entries.insert(0, _entry(desired, "Partial", ts, None, accepted_risks))
    last = entries[0]
    if not last.get("state"):
        last["state"] = "Partial"
    if _same_release_fill(last, desired):
        if completed:
            last["state"] = "Completed"
            if not last.get("completionTime"):
                last["completionTime"] = ts
        if accepted_risks is not None:
            last["acceptedRisks"] = accepted_risks
    else:
        if not last.get("completionTime"):
            last["completionTime"] = ts
        if completed:
            entries.insert(0, _entry(desired, "Completed", ts, ts, accepted_risks))
        else:
            entries.insert(0, _entry(desired, "Partial", ts, None, accepted_risks))
    if verified:
        entries[0]["verified"] = True
    return prune_history(entries, max_history)


def _entry(desired: Release, state: str, started: str, completed: str | None, risks: str | None) -> JSON:
    entry: JSON = {
        "state": state,
        "startedTime": started,
        "completionTime": completed,  # required but nullable: null while in progress
        "version": desired.version,
        "image": desired.image,
        "verified": False,
    }
    if risks:
        entry["acceptedRisks"] = risks
    return entry


def _minor_micro(version: str) -> tuple[str, str]:
    parts = version.split(".")
    return (parts[1] if len(parts) > 1 else "", parts[2] if len(parts) > 2 else "")


def prune_history(history: list[JSON], max_history: int = MAX_HISTORY) -> list[JSON]:
    """Upstream's ranking prune: drop the least interesting entry until at most `max_history` remain.

    The install (oldest), the five newest and the newest Completed entry are kept; the first and
    last Completed entry of each minor, and Partial entries between minors, rank higher; older
    entries rank lower.
    """
    entries = list(history)
    while len(entries) > max_history:
        oldest = len(entries) - 1
        completed = [i for i, e in enumerate(entries) if e.get("state") == "Completed"]
        newest_completed = completed[0] if completed else -1
        best_index, best_rank = 0, float("inf")
        for i in range(len(entries)):
            rank = _rank(entries, i, oldest, newest_completed, completed)
            if rank < best_rank:
                best_index, best_rank = i, rank
        del entries[best_index]
    return entries


def _rank(entries: list[JSON], i: int, oldest: int, newest_completed: int, completed: list[int]) -> float:
    if i == oldest or i <= 4 or i == newest_completed:
        return 1000.0
    entry = entries[i]
    minor = _minor_micro(str(entry.get("version") or ""))
    newer = [j for j in completed if j < i]
    older = [j for j in completed if j > i]
    newer_mm = _minor_micro(str(entries[newer[-1]].get("version") or "")) if newer else None
    older_mm = _minor_micro(str(entries[older[0]].get("version") or "")) if older else None
    rank = 0.0
    if entry.get("state") == "Completed":
        if i == 0 or older_mm is None or older_mm[0] != minor[0] or newer_mm is None or newer_mm[0] != minor[0]:
            rank = 30.0
    elif newer_mm is not None and older_mm is not None:
        if newer_mm[0] != older_mm[0]:
            rank = 20.0
        elif newer_mm != older_mm:
            rank = -20.0
    return rank - 1.01 * i


# -- the whole status -------------------------------------------------------------------------------


def desired_status(
    cv: Mapping[str, Any],
    cluster_operators: Sequence[Mapping[str, Any]],
    inputs: StatusInputs,
    now: datetime,
) -> JSON:
    """The ClusterVersion status cvo-py wants given what it sees (pure; `cv` is not modified)."""
    if not isinstance(cv, Mapping) or not isinstance(cv.get("metadata"), dict):
        raise ValueError("cv must be a ClusterVersion object with metadata")
    status: JSON = copy.deepcopy(dict(cv.get("status") or {}))
    spec = cv.get("spec") or {}
    conditions: list[JSON] = [dict(c) for c in status.get("conditions") or [] if isinstance(c, dict)]

    current = current_release(cv, inputs.running)

    invalid: str | None = None
    try:
        requested = requested_update(cv)
    except InvalidSpec as exc:
        requested, invalid = None, str(exc)

    acceptance = inputs.acceptance
    if acceptance is not None and (requested is None or not acceptance.target.same_as(requested)):
        acceptance = None  # about a target the spec no longer asks for
    pending = requested is not None and not requested.same_as(current)

    desired = current
    verified = False
    if acceptance is not None and acceptance.state.status == "True" and not acceptance.target.same_as(current):
        desired = acceptance.target
        verified = acceptance.verified
        pending = False

    progress = operator_progress(cluster_operators, desired.version)
    history = merge_history(status.get("history"), desired, verified, now, progress.completed)
    status["history"] = history
    if desired.image:
        status["desired"] = desired.to_status()
    status["observedGeneration"] = int((cv.get("metadata") or {}).get("generation") or 0)
    status.setdefault("versionHash", "")
    status.setdefault("availableUpdates", None)

    caps = capabilities.compute(
        spec.get("capabilities"),
        inputs.running.version or desired.version,
        prior_enabled=[
            *((status.get("capabilities") or {}).get("enabledCapabilities") or []),
            *inputs.prior_enabled,
        ],
        always_enabled=inputs.always_enabled,
    )
    status["capabilities"] = {
        "enabledCapabilities": list(caps.enabled),
        "knownCapabilities": list(caps.known),
    }

    # Available: once anything completed, the newest completed release is what the cluster runs.
    last_completed = next((h for h in history if h.get("state") == "Completed"), None)
    if last_completed is not None:
        done = last_completed.get("version") or last_completed.get("image")
        set_condition(conditions, AVAILABLE, "True", "", f"Done applying {done}", now)
    elif find_condition(conditions, AVAILABLE) is None:
        set_condition(conditions, AVAILABLE, "False", "", "", now)

    failure = operator_failure(progress)
    if failure is None:
        set_condition(conditions, FAILING, "False", "", "", now)
    else:
        set_condition(conditions, FAILING, "True", failure.reason, failure.message, now)

    updating = bool(history) and history[0].get("state") == "Partial"
    label = desired.label()
    if pending and requested is not None:
        # Retrieval of the next release is under way (ReleaseAccepted tells how it goes).
        set_condition(conditions, PROGRESSING, "True", "", f"Working towards {requested.label()}", now)
    elif updating and failure is not None:
        set_condition(
            conditions,
            PROGRESSING,
            "True",
            failure.reason,
            f"Unable to apply {label}: {failure.summary}",
            now,
        )
    elif updating:
        message = f"Working towards {label}"
        if progress.total:
            pct = progress.done * 100 // progress.total
            message += f": {progress.done} of {progress.total} done ({pct}% complete)"
        set_condition(conditions, PROGRESSING, "True", "", message, now)
    elif invalid is not None:
        set_condition(
            conditions,
            PROGRESSING,
            "False",
            "InvalidClusterVersion",
            f"Reconciling {label}: the cluster version is invalid",
            now,
        )
    elif failure is not None:
        set_condition(
            conditions,
            PROGRESSING,
            "False",
            failure.reason,
            f"Error while reconciling {label}: {failure.summary}",
            now,
        )
    else:
        set_condition(conditions, PROGRESSING, "False", "", f"Cluster version is {label}", now)

    if invalid is not None:
        set_condition(
            conditions,
            INVALID,
            "True",
            "InvalidClusterVersion",
            f"The cluster version is invalid: {invalid}",
            now,
        )
    else:
        remove_condition(conditions, INVALID)

    _release_accepted(conditions, acceptance, requested if pending else None, desired, now)

    if caps.implicitly_enabled:
        set_condition(
            conditions,
            IMPLICITLY_ENABLED,
            "True",
            "CapabilitiesImplicitlyEnabled",
            "The following capabilities could not be disabled: " + ", ".join(caps.implicitly_enabled),
            now,
        )
    else:
        set_condition(conditions, IMPLICITLY_ENABLED, "False", "AsExpected", "Capabilities match configured spec", now)
    remove_condition(conditions, "ImplicitlyEnabled")  # stale type from OCPBUGS-56114
    _available_updates(status, conditions, inputs.updates, now)

    status["conditions"] = conditions
    return status


def _available_updates(status: JSON, conditions: list[JSON], updates: Mapping[str, Any] | None, now: datetime) -> None:
    """availableUpdates, conditionalUpdates and RetrievedUpdates from the poller's findings; before
    any, upstream's first-sync placeholder (False, no reason or message)."""
    if updates is None:
        if find_condition(conditions, RETRIEVED_UPDATES) is None:
            set_condition(conditions, RETRIEVED_UPDATES, "False", "", "", now)
        return
    status["availableUpdates"] = updates.get("availableUpdates")
    if updates.get("conditionalUpdates"):
        status["conditionalUpdates"] = updates["conditionalUpdates"]
    else:
        status.pop("conditionalUpdates", None)
    condition = updates["condition"]
    set_condition(conditions, RETRIEVED_UPDATES, condition["status"], condition.get("reason", ""),
                  condition.get("message", ""), now)
    current = updates.get("current") or {}
    desired = status.get("desired")
    if isinstance(desired, dict) and current and desired.get("version") == current.get("version"):
        for key in ("url", "channels"):
            if current.get(key) and not desired.get(key):
                desired[key] = current[key]


def _release_accepted(
    conditions: list[JSON], acceptance: Acceptance | None, pending: Release | None, desired: Release, now: datetime
) -> None:
    if acceptance is not None:
        state = acceptance.state
        set_condition(conditions, RELEASE_ACCEPTED, state.status, state.reason, state.message, now)
        return
    if pending is not None:
        # Retrieval of the new target has not reported yet: say it is being retrieved, never leave
        # a state about an earlier target beside a Progressing that names this one. A failure of
        # this same target (e.g. found by the operator's previous run) stays until the next
        # attempt ends, as within a run: the admin keeps seeing why.
        existing = find_condition(conditions, RELEASE_ACCEPTED)
        if (
            existing is not None
            and existing.get("status") == "False"
            and is_about(str(existing.get("message") or ""), pending.version, pending.image)
        ):
            return
        retrieving = payload_retrieving(pending.version, pending.image)
        set_condition(conditions, RELEASE_ACCEPTED, retrieving.status, retrieving.reason, retrieving.message, now)
        return
    existing = find_condition(conditions, RELEASE_ACCEPTED)
    loaded = payload_loaded(desired.version, desired.image)
    if (
        existing is None
        or existing.get("status") != "True"
        or not str(existing.get("message") or "").startswith(loaded.message)
    ):
        # Nothing pending: the accepted payload is the desired one (upstream's reset message),
        # also when the condition still names another release (e.g. written by an earlier run).
        set_condition(conditions, RELEASE_ACCEPTED, loaded.status, loaded.reason, loaded.message, now)


def apply_pruned(status: Mapping[str, Any], pruned: Mapping[str, Sequence[str]], now: datetime) -> JSON:
    """Leave rejected capability names out of `status` and say so in the `CapabilitiesPruned`
    condition; with nothing pruned, drop that condition. Nothing else changes."""
    out = capabilities.prune(status, pruned)
    conditions = [dict(c) for c in out.get("conditions") or []]
    if any(pruned.values()):
        set_condition(
            conditions,
            CAPABILITIES_PRUNED,
            "True",
            "RejectedByClusterVersionCRD",
            capabilities.pruned_message(pruned),
            now,
        )
    else:
        remove_condition(conditions, CAPABILITIES_PRUNED)
    out["conditions"] = conditions
    return out
