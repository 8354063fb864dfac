"""Fixtures shared by the integration tests of payload retrieval and verification."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cvo_py.kube import KubeClient
from cvo_py.testing.payload import ClusterVerification


@pytest.fixture
def verification(kube: KubeClient) -> Iterator[ClusterVerification]:
    """The cluster's release-verification configuration with a throwaway key, removed afterwards."""
    handle = ClusterVerification(kube)
    yield handle
    handle.remove()
