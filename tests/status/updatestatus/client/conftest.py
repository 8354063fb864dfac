"""Fixtures of the client's live tests: an oc example loaded into the local API server as the
objects `oc adm upgrade status` reads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cvo_py.runtime.gotext.times import format_time
from cvo_py.runtime.kube import KubeClient
from status.updatestatus.client import snapshot
from testkit.checkout import EXAMPLES
from testkit.objects import livecluster


@pytest.fixture
def degraded(kube: KubeClient) -> Iterator[tuple[snapshot.Snapshot, str]]:
    """oc's example 4.14.1-degraded loaded, and its "now" as --now takes it."""
    if not EXAMPLES.is_dir():
        pytest.skip(f"oc examples not found in {EXAMPLES}")
    snap = snapshot.load(EXAMPLES / "4.14.1-degraded-cv.yaml")
    loaded = livecluster.load(kube, snap)
    try:
        yield snap, format_time(snap.mock_now())
    finally:
        loaded.remove()
