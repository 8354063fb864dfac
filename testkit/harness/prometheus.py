"""A real Prometheus per test, beside the session's local API server (`testkit.harness.localprometheus`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from testkit.harness import localprometheus
from testkit.harness.cluster import LocalCluster
from testkit.harness.localcluster import ClusterError
from testkit.harness.localprometheus import LocalPrometheus

# Fast enough for tests: scrapes, rule evaluation and every alert's `for:` in seconds.
FAST: dict[str, Any] = {
    "scrape_interval": "1s",
    "evaluation_interval": "1s",
    "rule_interval": "1s",
    "for_override": {"*": "3s"},
}


@pytest.fixture
def prometheus(
    cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., LocalPrometheus]]:
    """Start a Prometheus (keyword arguments of `localprometheus.up`; default FAST) in its own
    temporary directory, scraping install/'s jobs with install/'s rules; stopped after the test."""
    started: list[LocalPrometheus] = []

    def start(**options: Any) -> LocalPrometheus:
        try:
            prom = localprometheus.up(
                cluster.handle, tmp_path_factory.mktemp("prometheus"), quiet=True, **(options or FAST)
            )
        except ClusterError as exc:
            pytest.fail(f"the local Prometheus is required for this test: {exc}", pytrace=False)
        started.append(prom)
        return prom

    yield start
    for prom in started:
        localprometheus.stop(prom.dir)
