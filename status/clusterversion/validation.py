"""Upstream's validation of a ClusterVersion's spec, and the release `spec.desiredUpdate` asks for (pure).

Errors read as Kubernetes field errors (`spec.desiredUpdate.version: Invalid value: "4.99.0": ...`),
in upstream's order: the cluster ID, the desired update, the upstream. While any is found, the
ClusterVersion is `Invalid` and its desired update is ignored.

- `spec.clusterID`, when set, must be a version-4, RFC 4122 UUID.
- `spec.desiredUpdate` gives at most one error, the first of, in upstream's order:
  `acceptRisks` without the `ClusterUpdateAcceptRisks` feature gate; nothing named (an
  architecture, a version, an image or, with the gate, accepted risks alone); a version that is not
  semantic (with or without an image); a version without an image that is not one of
  `availableUpdates`, or is several of them. Upstream's validation also accepts a version found in
  `status.history`, but then resolves versions in `availableUpdates` only, so such a request stays
  put without a word: cvo-py does the same. Releases before 4.23 said "must be a previous version
  or an available update".
- `spec.upstream`, when set, must parse as a URL (Go's `url.Parse`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.urls import url_problem
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
    problem = cluster_id_problem(cluster_id) if cluster_id else ""
    if problem:
        errors.append(f"spec.clusterID: Invalid value: {go_quote(cluster_id)}: {problem}")
    update = spec.get("desiredUpdate")
    if update is not None:
        problem = desired_update_problem(cv, update, accept_risks)
        if problem:
            errors.append(problem)
    upstream = str(spec.get("upstream") or "")
    if upstream and url_problem(upstream):
        errors.append(f"spec.upstream: Invalid value: {go_quote(upstream)}: must be a valid URL or empty")
    return errors


def desired_update_problem(cv: Mapping[str, Any], update: Any, accept_risks: bool) -> str:
    """The one error of `spec.desiredUpdate`, the first in upstream's order ("" when it is valid)."""
    if not isinstance(update, Mapping):
        return "spec.desiredUpdate: Invalid value: must be an object"
    risks = update.get("acceptRisks") or []
    version, image = str(update.get("version") or ""), str(update.get("image") or "")
    if risks and not accept_risks:
        return "spec.desiredUpdate.acceptRisks: Forbidden: acceptRisks must not be specified"
    if not (version or image or update.get("architecture") or risks):
        named = "architecture, version, image, or acceptRisks" if accept_risks else "architecture, version, or image"
        return f"spec.desiredUpdate: Required value: must specify {named}"
    where = f"spec.desiredUpdate.version: Invalid value: {go_quote(version)}"
    if version and not semver.valid(version):
        return f"{where}: must be a semantic version (1.2.3[-...])"
    if version and not image:
        matches = _available(cv, version)
        if len({str(m.get("image")) for m in matches}) > 1:
            return f"{where}: there are multiple possible payloads for this version, specify the exact image"
        if not matches and not _in_history(cv, version):
            return f"{where}: when image is empty the update must be an available update"
    return ""


def invalid_message(errors: Sequence[str]) -> str:
    """The Invalid condition's message for these errors: one inline, several as a list, each line
    ended (as upstream writes it)."""
    if len(errors) == 1:
        return f"The cluster version is invalid: {errors[0]}"
    return "The cluster version is invalid:\n" + "".join(f"* {e}\n" for e in errors)


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
