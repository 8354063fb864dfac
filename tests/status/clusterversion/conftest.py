"""Fixtures of the ClusterVersion status tests (status/clusterversion)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from status.clusterversion.controller import StatusOperator


@pytest.fixture
def operators() -> Iterator[list[StatusOperator]]:
    """The status operators a test starts (append them), stopped after the test."""
    started: list[StatusOperator] = []
    yield started
    for op in started:
        op.stop()
