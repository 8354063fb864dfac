"""Fixtures of the ClusterVersion status tests (status/clusterversion)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cvo_py.compose.start import ClusterVersionSide


@pytest.fixture
def operators() -> Iterator[list[ClusterVersionSide]]:
    """The ClusterVersion sides a test starts (append them), stopped after the test."""
    started: list[ClusterVersionSide] = []
    yield started
    for op in started:
        op.stop()
