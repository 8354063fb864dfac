"""`start`'s options carry the running release as one `Release`, from --release-image and the
payload's release metadata, to the ClusterVersion status operator unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
