"""Fixtures of the runtime, command-line and serving tests (cvo_py)."""

from __future__ import annotations

import pytest

from testkit.harness.certs import self_signed


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed serving certificate and key (files), one per module."""
    return self_signed(tmp_path_factory.mktemp("tls"))
