"""Upstream's precondition checks on a target release, before it is accepted (pure).

The checks, in upstream's order since 4.19: `ClusterVersionRollback`, `ClusterVersionGiantHop`,
`ClusterVersionUpgradeable`, `ClusterVersionRecommendedUpdate`. Each reads the ClusterVersion (its
`status.desired` is "the current target") and the target's version, and gives nothing (pass), a
warning, or a blocking failure. Every check runs; any blocking failure blocks the update unless it
is forced, which turns the whole summary into a warning prefixed `Forced through blocking failures:`.
A warning is recorded in the new history entry's `acceptedRisks`.

Releases before 4.19 had no GiantHop check; before 4.14 no Rollback check, and up to 4.14 an
`EtcdRecentBackup` check, which upstream has since dropped (cvo-py has none either).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from payload.acceptance import PreconditionOutcome
from status.clusterversion import upgradeable
from updateservice import semver

ROLLBACK = "ClusterVersionRollback"
GIANT_HOP = "ClusterVersionGiantHop"
UPGRADEABLE = "ClusterVersionUpgradeable"
RECOMMENDED_UPDATE = "ClusterVersionRecommendedUpdate"

FORCED = "Forced through blocking failures: "


@dataclass(frozen=True)
class PreconditionError:
    name: str
    reason: str
    message: str
    blocking: bool = True

    def __str__(self) -> str:
        return f'Precondition "{self.name}" failed because of "{self.reason}": {self.message}'


def _status(cv: Mapping[str, Any]) -> Mapping[str, Any]:
    status = cv.get("status")
    return status if isinstance(status, Mapping) else {}


def _condition(items: Any, type_: str) -> Mapping[str, Any] | None:
    for condition in items or ():
        if isinstance(condition, Mapping) and condition.get("type") == type_:
            return condition
    return None


def _current(cv: Mapping[str, Any]) -> Mapping[str, Any]:
    desired = _status(cv).get("desired")
    return desired if isinstance(desired, Mapping) else {}


def _versions(
    cv: Mapping[str, Any], target: str, name: str
) -> tuple[semver.Version, semver.Version] | PreconditionError:
    """(current, target) parsed, or the check's error: an unparseable current version only warns,
    an unparseable target blocks."""
    try:
        current = semver.parse(str(_current(cv).get("version") or ""))
    except semver.SemverError as exc:
        return PreconditionError(name, "InvalidCurrentVersion", str(exc), blocking=False)
    try:
        wanted = semver.parse(target)
    except semver.SemverError as exc:
        return PreconditionError(name, "InvalidDesiredVersion", str(exc))
    return current, wanted


def rollback(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """A target below the current one only back to the previous release, within its minor."""
    parsed = _versions(cv, target, ROLLBACK)
    if isinstance(parsed, PreconditionError):
        return parsed
    current, wanted = parsed
    if not wanted < current:
        return None
    now = _current(cv)
    current_text = str(now.get("version") or "")
    previous = next(
        (
            h
            for h in _status(cv).get("history") or ()
            if isinstance(h, Mapping) and (h.get("version") != now.get("version") or h.get("image") != now.get("image"))
        ),
        None,
    )
    previous_version = str((previous or {}).get("version") or "")
    if previous is None or not semver.valid(previous_version):
        message = (
            f"{target} is less than the current target {current_text}, and the cluster has no previous Semantic Version"
        )
        return PreconditionError(ROLLBACK, "LowDesiredVersion", message)
    before = semver.parse(previous_version)
    if wanted == before:
        if (wanted.major, wanted.minor) == (current.major, current.minor):
            return None
        message = (
            f"{target} is less than the current target {current_text} and matches the cluster's previous version, "
            "but rollbacks that change major or minor versions are not recommended"
        )
        return PreconditionError(ROLLBACK, "LowDesiredVersion", message)
    message = (
        f"{target} is less than the current target {current_text}, and the only supported rollback is to the "
        f"cluster's previous version {previous_version} ({previous.get('image') or ''})"
    )
    return PreconditionError(ROLLBACK, "LowDesiredVersion", message)


def giant_hop(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """At most the next minor within the major; from 4 only to 5.0 (4.22+)."""
    parsed = _versions(cv, target, GIANT_HOP)
    if isinstance(parsed, PreconditionError):
        return parsed
    current, wanted = parsed
    current_text = str(_current(cv).get("version") or "")
    if wanted.major > current.major:
        if current.major == 4 and (wanted.major, wanted.minor) == (5, 0):
            return None
        also = " or to 5.0" if current.major == 4 else ""
        message = (
            f"{target} has a larger major version than the current target {current_text} "
            f"({wanted.major} > {current.major}), and only updates within the current major version{also} are "
            "supported."
        )
        return PreconditionError(GIANT_HOP, "MajorVersionUpdate", message)
    if wanted.major == current.major and wanted.minor > current.minor + 1:
        message = (
            f"{target} is more than one minor version beyond the current target {current_text} "
            f"({wanted.major}.{wanted.minor} > {current.major}.{current.minor + 1}), and only updates within the "
            "current minor version or to the next minor version are supported."
        )
        return PreconditionError(GIANT_HOP, "MultipleMinorVersionsUpdate", message)
    return None


def _overrides_set(cv: Mapping[str, Any]) -> bool:
    overrides = (cv.get("spec") or {}).get("overrides")
    return isinstance(overrides, list) and any(isinstance(o, Mapping) and o.get("unmanaged") is True for o in overrides)


def _minor_update_in_progress(cv: Mapping[str, Any], current: semver.Version) -> tuple[str, str] | None:
    """("minor" or "major", the newest completed version) while Progressing and that version is a
    minor or major below the current target; else None."""
    status = _status(cv)
    progressing = _condition(status.get("conditions"), "Progressing")
    if progressing is None or progressing.get("status") != "True":
        return None
    completed = next(
        (h for h in status.get("history") or () if isinstance(h, Mapping) and h.get("state") == "Completed"), None
    )
    completed_text = str((completed or {}).get("version") or "")
    if not semver.valid(completed_text):
        return None
    done = semver.parse(completed_text)
    if done.major < current.major:
        return "major", completed_text
    if done.major == current.major and done.minor < current.minor:
        return "minor", completed_text
    return None


def upgradeable_check(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """Upgradeable=False blocks minor and major updates; patch updates pass (with a warning while
    overrides are set or a minor update is still in flight)."""
    blocked = _condition(_status(cv).get("conditions"), upgradeable.UPGRADEABLE)
    if blocked is None or blocked.get("status") != "False":
        return None
    parsed = _versions(cv, target, UPGRADEABLE)
    if isinstance(parsed, PreconditionError):
        return parsed
    current, wanted = parsed
    current_text = str(_current(cv).get("version") or "")
    if not current < wanted or (wanted.major, wanted.minor) == (current.major, current.minor):
        if _overrides_set(cv):
            message = (
                f"Retarget from {current_text} to {target} is not blocked by ClusterVersionOverridesSet. But the "
                "cluster-version operator is not managing these resources; they are currently the responsibility "
                f"of the agent that set the overrides: {upgradeable.OVERRIDES_MESSAGE}"
            )
            return PreconditionError(UPGRADEABLE, "ClusterVersionOverridesSet", message, blocking=False)
        in_flight = _minor_update_in_progress(cv, current)
        if in_flight is not None:
            kind, completed = in_flight
            message = (
                f"Retarget to {target} while a {kind} version update from {completed} to {current_text} is in progress"
            )
            reason = f"{kind.capitalize()}VersionClusterUpdateInProgress"
            return PreconditionError(UPGRADEABLE, reason, message, blocking=False)
        return None
    return PreconditionError(UPGRADEABLE, str(blocked.get("reason") or ""), str(blocked.get("message") or ""))


def recommended_update(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """Never blocks: warns when the target is not a recommended update of the current one."""
    status = _status(cv)
    current = str(_current(cv).get("version") or "")
    for update in status.get("availableUpdates") or ():
        if isinstance(update, Mapping) and update.get("version") == target:
            return None
    for update in status.get("conditionalUpdates") or ():
        if not isinstance(update, Mapping) or (update.get("release") or {}).get("version") != target:
            continue
        recommended = _condition(update.get("conditions"), "Recommended")
        if recommended is None:
            message = (
                f"Update from {current} to {target} has a status.conditionalUpdates entry, but no Recommended "
                "condition."
            )
            return PreconditionError(RECOMMENDED_UPDATE, "UnknownConditionType", message, blocking=False)
        state, reason = str(recommended.get("status") or ""), str(recommended.get("reason") or "")
        text = str(recommended.get("message") or "")
        if state == "True":
            return None
        if state == "False":
            message = f"Update from {current} to {target} is not recommended:\n\n{text}"
        else:
            message = f"Update from {current} to {target} is Recommended={state}: {reason}: {text}"
        return PreconditionError(RECOMMENDED_UPDATE, reason, message, blocking=False)
    if not str((cv.get("spec") or {}).get("channel") or ""):
        message = (
            f"Configured channel is unset, so the recommended status of updating from {current} to {target} is unknown."
        )
        return PreconditionError(RECOMMENDED_UPDATE, "NoChannel", message, blocking=False)
    retrieved = _condition(status.get("conditions"), "RetrievedUpdates")
    if retrieved is None:
        message = f"No RetrievedUpdates, so the recommended status of updating from {current} to {target} is unknown."
    elif retrieved.get("status") == "True":
        message = (
            f"RetrievedUpdates=True ({retrieved.get('reason') or ''}), so the update from {current} to {target} is "
            "probably neither recommended nor supported."
        )
    else:
        message = (
            f"RetrievedUpdates={retrieved.get('status') or ''} ({retrieved.get('reason') or ''}), so the recommended "
            f"status of updating from {current} to {target} is unknown."
        )
    return PreconditionError(RECOMMENDED_UPDATE, "UnknownUpdate", message, blocking=False)


CHECKS = (rollback, giant_hop, upgradeable_check, recommended_update)


def run(cv: Mapping[str, Any], target: str) -> list[PreconditionError]:
    """Every check, in upstream's order; what each found."""
    return [found for check in CHECKS if (found := check(cv, target)) is not None]


def summarize(errors: Sequence[PreconditionError], force: bool) -> PreconditionOutcome:
    """Upstream's summary: one failure as it is, several as a list; blocking unless all are warnings
    or the update is forced."""
    if not errors:
        return PreconditionOutcome(blocked=False, message="")
    lines = [str(e) for e in errors]
    message = lines[0] if len(lines) == 1 else "Multiple precondition checks failed:\n* " + "\n* ".join(lines)
    blocking = any(e.blocking for e in errors)
    if blocking and force:
        return PreconditionOutcome(blocked=False, message=FORCED + message)
    return PreconditionOutcome(blocked=blocking, message=message)
