"""`start`'s options carry the running release as one `Release`, from --release-image and the
payload's release metadata, to the ClusterVersion status operator unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cvo_py.cli.common import UsageError
from cvo_py.cli.main import build_parser
from cvo_py.cli.start import validate
from payload.release import Release


def test_the_release_is_read_once_and_carried_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifests = tmp_path / "release-manifests"
    manifests.mkdir()
    channels = "stable-4.14,fast-4.14"
    extra = {"url": "https://example.com/4.14.1", "io.openshift.upgrades.graph.release.channels": channels}
    metadata = {"version": "4.14.1", "metadata": extra}
    (manifests / "release-metadata").write_text(json.dumps(metadata))
    monkeypatch.setenv("PAYLOAD_OVERRIDE", str(tmp_path))
    args = build_parser().parse_args(
        ["start", "--node-name", "n", "--release-image", "quay.io/x@sha256:1", "--listen", ""]
    )
    options = validate(args)
    want = Release("4.14.1", "quay.io/x@sha256:1", "https://example.com/4.14.1", ("fast-4.14", "stable-4.14"))
    assert options.release == want


def start_options(monkeypatch: pytest.MonkeyPatch, profile: str | None) -> Any:
    if profile is None:
        monkeypatch.delenv("CLUSTER_PROFILE", raising=False)
    else:
        monkeypatch.setenv("CLUSTER_PROFILE", profile)
    return validate(build_parser().parse_args(["start", "--node-name", "n", "--release-image", "x", "--listen", ""]))


@pytest.mark.parametrize(
    ("profile", "read"),
    [(None, "self-managed-high-availability"), ("", "self-managed-high-availability"),
     ("single-node-developer", "single-node-developer"), ("hypershift", "hypershift")],
)
def test_the_cluster_profile_is_read_from_the_environment_as_upstream(
    monkeypatch: pytest.MonkeyPatch, profile: str | None, read: str
) -> None:
    assert start_options(monkeypatch, profile).cluster_profile == read


@pytest.mark.parametrize("profile", ["a/b", "with space", "-x", "x" * 64, "\x1b]0;owned"])
def test_a_cluster_profile_no_annotation_can_name_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    with pytest.raises(UsageError) as raised:
        start_options(monkeypatch, profile)
    message = str(raised.value)
    assert message.startswith("invalid CLUSTER_PROFILE ") and "\n" not in message and "\x1b" not in message
