"""A release as ClusterVersion names it (version, image, url, channels), the latest
payload-retrieval state for a requested one, and the JSON files of a payload directory (its
release-metadata and image-references), read within bounds."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cvo_py.runtime import safeload, semver
from cvo_py.runtime.gotext.jsoncodec import decode_json, json_kind, json_limit_problem, json_syntax_problem
from cvo_py.runtime.gotext.quoting import go_quote
from payload.acceptance import ReleaseAcceptance

JSON = dict[str, Any]

RELEASE_METADATA = "release-manifests/release-metadata"
IMAGE_REFERENCES = "release-manifests/image-references"
# release-metadata is a few hundred bytes (a version, earlier versions, a small map); an
# image-references ImageStream names every image of a release: a few hundred KiB. Far above both.
RELEASE_METADATA_MAX_BYTES = 1 << 20
IMAGE_REFERENCES_MAX_BYTES = 8 << 20


def read_payload_json(payload_dir: str | os.PathLike[str], name: str, max_bytes: int) -> Any:
    """The JSON document `<payload_dir>/<name>`, a regular file of at most `max_bytes`, decoded as
    Go decodes it (no NaN or Infinity; invalid UTF-8 in a string becomes U+FFFD).

    A payload directory is written by the release image (or a hostPath anyone on the node can
    touch): `safeload.FileMissing` when there is no file, else a `safeload.DocumentError` whose
    text is one line naming the file."""
    path = os.path.join(os.fspath(payload_dir), name)
    data = safeload.read_file(path, max_bytes=max_bytes)
    try:
        return decode_json(data.decode("utf-8", "replace"))
    except json.JSONDecodeError as exc:
        raise safeload.DocumentError(path, json_syntax_problem(exc)) from None
    except (RecursionError, ValueError) as exc:
        raise safeload.DocumentError(path, json_limit_problem(exc)) from None


def read_release_metadata(payload_dir: str | os.PathLike[str]) -> JSON | None:
    """The payload's `release-manifests/release-metadata` object; None when there is no such file.
    `safeload.DocumentError` (one line) when it cannot be read, is not a JSON object, or is not
    what upstream takes (`release_metadata_problem`)."""
    try:
        metadata = read_payload_json(payload_dir, RELEASE_METADATA, RELEASE_METADATA_MAX_BYTES)
    except safeload.FileMissing:
        return None
    path = os.path.join(os.fspath(payload_dir), RELEASE_METADATA)
    if not isinstance(metadata, dict):
        raise safeload.DocumentError(path, "not a JSON object")
    problem = release_metadata_problem(metadata)
    if problem:
        raise safeload.DocumentError(path, problem)
    return metadata


# The fields of release-metadata upstream decodes, with their Go types (others are ignored).
_METADATA_FIELDS = {
    "kind": "string",
    "version": "string",
    "previous": "[]string",
    "next": "[]string",
    "metadata": "map[string]interface {}",
}


def release_metadata_problem(metadata: JSON) -> str:
    """Why upstream would refuse this release-metadata, in its words, or "": a field of another
    type than its Go field (the first, as Go's decoder reports it; null stands for absent), no
    version, or a version that is not semantic (`4.14.1\x1b]0;x\a` would otherwise reach logs,
    ClusterVersion status and conditions). Its kind is not checked: payloads written for tests
    carry none."""
    for field, value in metadata.items():
        go_type = _METADATA_FIELDS.get(field)
        if go_type is None or value is None:
            continue
        if go_type == "[]string" and isinstance(value, list):
            wrong = next((item for item in value if item is not None and not isinstance(item, str)), None)
            go_type = "string"  # Go names the element's type
        elif go_type == "map[string]interface {}":
            wrong = None if isinstance(value, dict) else value
        else:
            wrong = None if go_type == "string" and isinstance(value, str) else value
        if wrong is not None:
            kind = json_kind(wrong)
            return f"json: cannot unmarshal {kind} into Go struct field metadata.{field} of type {go_type}"
    version = metadata.get("version") or ""
    if not version:
        return "missing required Cincinnati metadata version"
    try:
        semver.parse(version)
    except semver.SemverError as exc:
        return f"invalid Cincinnati metadata version {go_quote(version)}: {exc}"
    return ""


@dataclass(frozen=True)
class Release:
    version: str = ""
    image: str = ""
    url: str = ""
    channels: tuple[str, ...] = ()
    # MULTI when the payload is multi-architecture (its release-metadata says so), else "".
    architecture: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Release:
        data = data or {}
        channels = data.get("channels") or ()
        return cls(
            version=str(data.get("version") or ""),
            image=str(data.get("image") or ""),
            url=str(data.get("url") or ""),
            channels=tuple(str(c) for c in channels) if isinstance(channels, list | tuple) else (),
            architecture=MULTI if data.get("architecture") == MULTI else "",
        )

    def to_status(self) -> JSON:
        out: JSON = {"version": self.version, "image": self.image}
        if self.url:
            out["url"] = self.url
        if self.channels:
            out["channels"] = list(self.channels)
        if self.architecture:
            out["architecture"] = self.architecture
        return out

    def same_as(self, other: Release) -> bool:
        """Same release: equal images when both are known, else equal non-empty versions."""
        if self.image and other.image:
            return self.image == other.image
        return bool(self.version) and self.version == other.version

    def label(self) -> str:
        """How messages name it: the version, else the image (as upstream)."""
        return self.version or self.image or "<unknown>"


ARCHITECTURE_METADATA = "release.openshift.io/architecture"
MULTI = "Multi"  # a Release's architecture when its payload is multi-architecture


def is_multi_arch(release_metadata: Mapping[str, Any]) -> bool:
    """Whether a payload's release-metadata says it is multi-architecture (its `metadata` map's
    `release.openshift.io/architecture` is "multi", as upstream reads it)."""
    extra = release_metadata.get("metadata")
    return isinstance(extra, Mapping) and str(extra.get(ARCHITECTURE_METADATA) or "").lower() == "multi"


# release-metadata `metadata` keys upstream reads into a release.
METADATA_URL = "url"
METADATA_CHANNELS = "io.openshift.upgrades.graph.release.channels"


def release_from_metadata(image: str, metadata: Mapping[str, Any]) -> Release:
    """The release of a payload as upstream loads it: version, plus url and the sorted channel list
    from the metadata's `metadata` map (channels are one comma-separated value)."""
    extra = metadata.get("metadata")
    extra = extra if isinstance(extra, Mapping) else {}
    channels = sorted({c.strip() for c in str(extra.get(METADATA_CHANNELS) or "").split(",") if c.strip()})
    version = str(metadata.get("version") or "")
    architecture = MULTI if is_multi_arch(metadata) else ""
    return Release(version, image, str(extra.get(METADATA_URL) or ""), tuple(channels), architecture)


@dataclass(frozen=True)
class Acceptance:
    """The latest payload-retrieval state for `target` (a spec.desiredUpdate)."""

    target: Release
    state: ReleaseAcceptance
    verified: bool = False
    # What the admin accepted by going ahead (a forced verification failure, precondition warnings):
    # the new history entry's acceptedRisks. "" when nothing.
    accepted_risks: str = ""
    local: bool = False  # the operator's own release: nothing was retrieved or checked
    # `accepted_risks` ends with the precondition checks' warning (what the exposure to accepted
    # conditional-update risks is appended to, as upstream words it).
    warned: bool = False
    # The accepted target's manifests as loaded (see payload.retrieval.ManifestLoader); None for
    # the operator's own release and before acceptance.
    payload: object | None = dataclasses.field(default=None, compare=False)
