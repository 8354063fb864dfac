"""A release as ClusterVersion names it (version, image, url, channels), and the latest
payload-retrieval state for a requested one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from payload.acceptance import ReleaseAcceptance

JSON = dict[str, Any]


@dataclass(frozen=True)
class Release:
    version: str = ""
    image: str = ""
    url: str = ""
    channels: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Release:
        data = data or {}
        channels = data.get("channels") or ()
        return cls(
            version=str(data.get("version") or ""),
            image=str(data.get("image") or ""),
            url=str(data.get("url") or ""),
            channels=tuple(str(c) for c in channels) if isinstance(channels, list | tuple) else (),
        )

    def to_status(self) -> JSON:
        out: JSON = {"version": self.version, "image": self.image}
        if self.url:
            out["url"] = self.url
        if self.channels:
            out["channels"] = list(self.channels)
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


def is_multi_arch(release_metadata: Mapping[str, Any]) -> bool:
    """Whether a payload's release-metadata says it is multi-architecture (its `metadata` map's
    `release.openshift.io/architecture` is "multi", as upstream reads it)."""
    extra = release_metadata.get("metadata")
    return isinstance(extra, Mapping) and str(extra.get(ARCHITECTURE_METADATA) or "").lower() == "multi"


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
