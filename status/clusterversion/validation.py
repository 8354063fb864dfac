"""Upstream's validation of a ClusterVersion's spec, and the release `spec.desiredUpdate` asks for (pure).

Errors read as Kubernetes field errors (`spec.desiredUpdate.version: Invalid value: "4.99.0": ...`),
in upstream's order. While any is found, the ClusterVersion is `Invalid` and its desired update is
ignored.

- `spec.clusterID` must be a version-4, RFC 4122 UUID.
- `spec.desiredUpdate.acceptRisks` is allowed only with the `ClusterUpdateAcceptRisks` feature gate;
  with it, a desired update may carry nothing else.
- A desired update names an architecture, a version or an image.
- A version without an image must be a semantic version and must be one of `availableUpdates`.
  Upstream's validation also accepts a version found in `status.history`, but then resolves
  versions in `availableUpdates` only, so such a request stays put without a word: cvo-py does the
  same. Releases before 4.23 said "must be a previous version or an available update".
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from cvo_py.runtime.gotext import go_quote
from payload.release import Release
from updateservice import semver
from updateservice.retrieval import uuid_problem

ACCEPT_RISKS_GATE = "ClusterUpdateAcceptRisks"


def cluster_id_problem(cluster_id: str) -> str:
    """Why `spec.clusterID` is not acceptable ("" when it is)."""
    if uuid_problem(cluster_id):
        return "must be an RFC4122-variant UUID"
    parsed = uuid.UUID(cluster_id.removeprefix("urn:uuid:").strip("{}"))
    if parsed.variant != uuid.RFC_4122:
        return "must be an RFC4122-variant UUID"
    if parsed.version != 4:
        return "must be a version-4 UUID"
    return ""


def _available(cv: Mapping[str, Any], version: str) -> list[Mapping[str, Any]]:
    updates = (cv.get("status") or {}).get("availableUpdates") or []
    return [u for u in updates if isinstance(u, Mapping) and u.get("version") == version and u.get("image")]


def _in_history(cv: Mapping[str, Any], version: str) -> bool:
    history = (cv.get("status") or {}).get("history") or []
    return any(isinstance(h, Mapping) and h.get("version") == version for h in history)


def validate(cv: Mapping[str, Any], accept_risks: bool = False) -> list[str]:
    """The spec's field errors, in upstream's order (none: valid)."""
    spec = cv.get("spec") or {}
    errors: list[str] = []
    cluster_id = str(spec.get("clusterID") or "")
    problem = cluster_id_problem(cluster_id)
    if problem:
        errors.append(f"spec.clusterID: Invalid value: {go_quote(cluster_id)}: {problem}")
    update = spec.get("desiredUpdate")
    if update is None:
        return errors
    if not isinstance(update, Mapping):
        return [*errors, "spec.desiredUpdate: Invalid value: must be an object"]
    risks = update.get("acceptRisks") or []
    if risks and not accept_risks:
        errors.append("spec.desiredUpdate.acceptRisks: Forbidden: acceptRisks must not be specified")
    version, image = str(update.get("version") or ""), str(update.get("image") or "")
    if not (version or image or update.get("architecture") or (accept_risks and risks)):
        named = "architecture, version, image, or acceptRisks" if accept_risks else "architecture, version, or image"
        errors.append(f"spec.desiredUpdate: Required value: must specify {named}")
    elif version and not image:
        where = f"spec.desiredUpdate.version: Invalid value: {go_quote(version)}"
        matches = _available(cv, version)
        if not semver.valid(version):
            errors.append(f"{where}: must be a semantic version (1.2.3[-...])")
        elif len({str(m.get("image")) for m in matches}) > 1:
            errors.append(f"{where}: there are multiple possible payloads for this version, specify the exact image")
        elif not matches and not _in_history(cv, version):
            errors.append(f"{where}: when image is empty the update must be an available update")
    return errors


def invalid_message(errors: Sequence[str]) -> str:
    """The Invalid condition's message for these errors (one inline, several as a list)."""
    if len(errors) == 1:
        return f"The cluster version is invalid: {errors[0]}"
    return "The cluster version is invalid:" + "".join(f"\n* {e}" for e in errors)


def requested(cv: Mapping[str, Any]) -> Release | None:
    """The release a valid `spec.desiredUpdate` asks for: its image, or the available update of its
    version; None when it names neither (an architecture or accepted risks alone, or a version
    found only in history)."""
    update = (cv.get("spec") or {}).get("desiredUpdate")
    if not isinstance(update, Mapping):
        return None
    release = Release.from_dict(update)
    if not release.image:
        matches = _available(cv, release.version) if release.version else []
        if not matches:
            return None
        release = Release(release.version, str(matches[0]["image"]))
    return _with_metadata(release, cv)


def _with_metadata(release: Release, cv: Mapping[str, Any]) -> Release:
    """Fill url and channels from the matching available update, as upstream does for desired."""
    for update in (cv.get("status") or {}).get("availableUpdates") or []:
        if isinstance(update, Mapping) and update.get("image") == release.image:
            found = Release.from_dict(update)
            return Release(release.version or found.version, release.image, found.url, found.channels)
    return release
