"""Fixtures of the release-signature verification tests (payload/verify)."""

from __future__ import annotations

from typing import Any

import pysequoia
import pytest


@pytest.fixture(scope="module")
def key() -> Any:
    """A release signing key, generated once per module."""
    return pysequoia.Tsk.generate("release key <release@example.com>")
