"""The built image, run as OpenShift runs it: an arbitrary UID in group 0, read-only root."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.image.runner import ImageContainer


@pytest.fixture(scope="session")
def image(request: pytest.FixtureRequest) -> Iterator[ImageContainer]:
    ref = str(request.config.getoption("--image"))
    try:
        container = ImageContainer.create(ref)
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    yield container
    container.remove()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The closing line `make image-test` ends with."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not config.getoption("--image"):
        return
    stats = reporter.stats
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    line = f"{len(stats.get('passed', []))} passed, {failed} failed"
    if stats.get("skipped"):
        line += f", {len(stats['skipped'])} skipped"
    reporter.write_line(line)
