"""The running release as `start` reads it from its payload's release-metadata (version, url,
channels, architecture)."""

from __future__ import annotations

from typing import Any

import pytest

from payload.release import Release, release_from_metadata

IMAGE = "quay.io/openshift-release-dev/ocp-release@sha256:" + "a" * 64
CHANNELS_KEY = "io.openshift.upgrades.graph.release.channels"


@pytest.mark.parametrize(
    ("metadata", "want"),
    [
        ({}, Release("", IMAGE)),
        ({"kind": "cincinnati-metadata-v0", "version": "4.16.3"}, Release("4.16.3", IMAGE)),
        (
            {
                "version": "4.16.3",
                "metadata": {
                    "url": "https://access.redhat.com/errata/RHSA-2024:0001",
                    CHANNELS_KEY: "stable-4.16, fast-4.16,candidate-4.16,,fast-4.16",
                },
            },
            Release(
                "4.16.3",
                IMAGE,
                "https://access.redhat.com/errata/RHSA-2024:0001",
                ("candidate-4.16", "fast-4.16", "stable-4.16"),
            ),
        ),
        (
            {"version": "4.16.3", "metadata": {CHANNELS_KEY: "stable-4.16"}},
            Release("4.16.3", IMAGE, "", ("stable-4.16",)),
        ),
        ({"version": "4.16.3", "metadata": "not a map"}, Release("4.16.3", IMAGE)),
    ],
)
def test_release_from_metadata(metadata: dict[str, Any], want: Release) -> None:
    assert release_from_metadata(IMAGE, metadata) == want
