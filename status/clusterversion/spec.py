"""What spec.desiredUpdate asks for, as a release (`status.clusterversion.validation` checks it),
and the release the cluster is at."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from payload.release import Release
from status.clusterversion import validation


class InvalidSpec(ValueError):
    """spec.desiredUpdate cannot be turned into a release: `errors` are upstream's field errors."""

    def __init__(self, errors: Sequence[str]) -> None:
        super().__init__(validation.invalid_message(errors))
        self.errors = list(errors)


def requested_update(cv: Mapping[str, Any], accept_risks: bool = False) -> Release | None:
    """spec.desiredUpdate as a release (status.clusterversion.validation); None when it asks for
    none. Raises InvalidSpec when the spec is invalid (its desired update is then ignored)."""
    errors = validation.validate(cv, accept_risks)
    if errors:
        raise InvalidSpec(errors)
    return validation.requested(cv)


def current_release(cv: Mapping[str, Any], running: Release) -> Release:
    """status.desired once set; before that, the release cvo-py runs as."""
    current = Release.from_dict((cv.get("status") or {}).get("desired"))
    return current if current.image else (running if running.image else current)


def pending_update(
    cv: Mapping[str, Any], running: Release, accept_risks: bool = False
) -> tuple[Release, bool] | None:
    """The (release, force) spec.desiredUpdate asks for when it differs from the current one."""
    try:
        requested = requested_update(cv, accept_risks)
    except InvalidSpec:
        return None
    if requested is None or requested.same_as(current_release(cv, running)):
        return None
    update = (cv.get("spec") or {}).get("desiredUpdate") or {}
    return requested, bool(update.get("force"))
