"""Fixtures of the sync worker's tests (syncworker/): the facts' synthetic payload, written and loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncworker.load import Payload, load_payload
from syncworker.select import Selection
from testkit.objects.payloads import RELEASE_IMAGE, write_section8


@pytest.fixture(scope="module")
def section8_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The facts' synthetic payload 4.99.0 (§8), written once per module; tests must not change it."""
    return write_section8(tmp_path_factory.mktemp("section8") / "payload")


@pytest.fixture(scope="module")
def section8(section8_dir: Path) -> Payload:
    """That payload loaded for a Default cluster with no gates, EXCLUDE_MANIFESTS unset."""
    return load_payload(str(section8_dir), release_image=RELEASE_IMAGE, selection=Selection())
