"""PromQL risk rules evaluated through the platform's Prometheus/Thanos API (I/O): the one client
`cvo_py.promapi.PrometheusAPI`, shared with the update status controller's alerts reader."""

from __future__ import annotations

from collections.abc import Callable

from cvo_py.promapi import APIError, PrometheusAPI
from updates.recommend import EvaluationError, sample_verdict


def promql_query(api: PrometheusAPI) -> Callable[[str], bool]:
    """A rule's query → match or not; failures are one-line EvaluationErrors (reported in the
    Recommended condition, never hidden)."""

    def query(expr: str) -> bool:
        try:
            return sample_verdict(api.query(expr))
        except APIError as exc:
            raise EvaluationError(str(exc)) from None

    return query
