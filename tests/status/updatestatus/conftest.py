"""Fixtures of the Update Status Controller and upgrade-status tests (status/updatestatus)."""

from __future__ import annotations

import pytest

from cvo_py.kube import KubeClient
from cvo_py.testing.mco import MCO


@pytest.fixture
def mco(kube: KubeClient) -> MCO:
    """The Machine Config Operator's part: Node annotations and conditions, pool status."""
    return MCO(kube)
