"""status.history of ClusterVersion: merging the release being applied in, pruning (pure).

Upstream's mergeOperatorHistory and its ranking prune (status_history.go) on plain dicts, newest
entry first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cvo_py.runtime.gotext.times import metav1_time
from cvo_py.runtime.jsondata import copy_json
from payload.release import Release

JSON = dict[str, Any]

MAX_HISTORY = 100


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
    """Upstream's mergeOperatorHistory on plain dicts (newest first); returns a new list.

    `accepted_risks` (None: leave as is) is written into the entry of `desired`, new or not."""
    entries = [copy_json(dict(e)) for e in history or []]
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
        if accepted_risks:
            last["acceptedRisks"] = accepted_risks
        elif accepted_risks is not None:
            last.pop("acceptedRisks", None)  # upstream's omitempty
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
