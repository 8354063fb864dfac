"""The ClusterVersion `start` creates when there is none (status/clusterversion/creation.py)."""

from __future__ import annotations

import pytest

from payload.release import Release
from status.clusterversion.creation import default_channel, new_cluster_version

IMAGE = "quay.io/openshift-release-dev/ocp-release@sha256:" + "a" * 64


@pytest.mark.parametrize(
    ("channels", "want"),
    [
        ((), ""),
        (("stable-4.16",), "stable-4.16"),
        (("candidate-4.16", "fast-4.16", "stable-4.16"), ""),  # several: the administrator chooses
    ],
)
def test_default_channel(channels: tuple[str, ...], want: str) -> None:
    assert default_channel(channels) == want


def test_new_cluster_version_with_one_channel() -> None:
    running = Release("4.16.3", IMAGE, "https://example.com/errata", ("stable-4.16",))
    assert new_cluster_version("version", running, "2f0c1f6e-0b8a-4a55-9d1e-3c3e5b1e7a10") == {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"clusterID": "2f0c1f6e-0b8a-4a55-9d1e-3c3e5b1e7a10", "channel": "stable-4.16"},
    }


def test_new_cluster_version_without_a_single_channel_has_none() -> None:
    for channels in ((), ("fast-4.16", "stable-4.16")):
        body = new_cluster_version("other", Release("4.16.3", IMAGE, "", channels), "id")
        assert body["metadata"] == {"name": "other"}
        assert body["spec"] == {"clusterID": "id"}
        assert "status" not in body  # the first status write fills it from the running release
