"""How `start` finds Thanos Querier from the host network: the Service a --promql-url names, and
its cluster IP read from the real API server before each query (a one-line error otherwise)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from cvo_py.cli.main import build_parser
from cvo_py.cli.prometheus_flags import CVO_DEFAULT_URL
from cvo_py.cli.start import validate
from cvo_py.runtime.kube import SERVICES, KubeClient
from cvo_py.runtime.promapi import APIError, PrometheusAPI
from testkit.fakes.httpserve import Handler
from testkit.harness.localprometheus import LocalPrometheus
from testkit.harness.prometheus import FAST
from updateservice.prometheus import QUERY_TIMEOUT, promql_query, service_connect_host, service_of
from updateservice.recommend import EvaluationError

THANOS = ("openshift-monitoring", "thanos-querier")


@pytest.mark.parametrize(
    ("url", "service"),
    [
        ("https://thanos-querier.openshift-monitoring.svc.cluster.local:9091", THANOS),
        ("https://thanos-querier.openshift-monitoring.svc:9091/", THANOS),
        ("https://prometheus-k8s.openshift-monitoring.svc.cluster.local.:9091", (THANOS[0], "prometheus-k8s")),
        ("http://127.0.0.1:9090", None),
        ("https://thanos.example.com", None),
        ("https://a.b.c.svc:9091", None),
        ("https://thanos-querier.openshift-monitoring.svc.other.domain:9091", None),
    ],
)
def test_the_service_a_url_names(url: str, service: tuple[str, str] | None) -> None:
    assert service_of(url) == service


def test_starts_default_is_upstreams_thanos_url_reached_by_service() -> None:
    args = build_parser().parse_args(["start", "--node-name", "n", "--release-image", "x", "--listen", ""])
    options = validate(args)
    assert options.promql is not None and options.promql.url == CVO_DEFAULT_URL
    assert service_of(options.promql.url) == ("openshift-monitoring", "thanos-querier")
    assert options.use_dns_for_services is False
    dns = build_parser().parse_args(
        ["start", "--node-name", "n", "--release-image", "x", "--listen", "", "--use-dns-for-services"]
    )
    assert validate(dns).use_dns_for_services is True


def test_the_cluster_ip_is_read_before_each_query(kube: KubeClient, namespace: str) -> None:
    cluster_ip = service_connect_host(kube, namespace, "thanos-querier")
    with pytest.raises(APIError, match=rf"^cannot get the cluster IP of Service {namespace}/thanos-querier: .*404"):
        cluster_ip()
    service = kube.create(
        SERVICES,
        {"metadata": {"name": "thanos-querier", "namespace": namespace},
         "spec": {"ports": [{"name": "web", "port": 9091}]}},
        namespace,
    )  # fmt: skip
    assert cluster_ip() == service["spec"]["clusterIP"] != ""
    kube.delete(SERVICES, "thanos-querier", namespace)
    kube.create(
        SERVICES,
        {"metadata": {"name": "thanos-querier", "namespace": namespace},
         "spec": {"clusterIP": "None", "ports": [{"name": "web", "port": 9091}]}},
        namespace,
    )  # fmt: skip
    with pytest.raises(APIError, match=rf"^Service {namespace}/thanos-querier has no cluster IP$"):
        cluster_ip()


def test_a_rule_that_cannot_be_evaluated_says_why_in_upstreams_words(
    kube: KubeClient, namespace: str, prometheus: Callable[..., LocalPrometheus]
) -> None:
    """Against a real Prometheus: a query it refuses is `executing PromQL query: …`, an answer that
    is not one sample `invalid PromQL result …`, and a Service without a cluster IP `failure
    determine thanos IP: …`, as upstream's; a query may take upstream's 5 minutes."""
    prom = prometheus(**FAST)
    query = promql_query(PrometheusAPI(prom.url))
    assert query("vector(1)") is True and query("vector(0)") is False

    def error(expr: str, api: PrometheusAPI | None = None) -> str:
        with pytest.raises(EvaluationError) as raised:
            promql_query(api or PrometheusAPI(prom.url))(expr)
        return str(raised.value)

    assert error("vector(").startswith(f"executing PromQL query: {prom.url}/api/v1/query: HTTP 400: ")
    assert error("vector(2)") == "invalid PromQL result (must be 0 or 1): 2"
    assert error("vector(1) and on() vector(0) == 1") == "invalid PromQL result length must be one, but is 0"
    assert error("scalar(vector(1))") == "invalid PromQL result type is scalar, not vector"
    missing = PrometheusAPI(prom.url, connect_host=service_connect_host(kube, namespace, "thanos-querier"))
    assert error("vector(1)", missing).startswith(
        f"failure determine thanos IP: cannot get the cluster IP of Service {namespace}/thanos-querier: ")


def test_a_query_is_waited_for_longer_than_the_clients_own_bound(http_server: Callable[[Handler], str]) -> None:
    """Upstream waits up to 5 minutes for a query (Thanos on a busy cluster can take long); the
    client's own bound (used for the alerts) does not cut it short."""
    answer = json.dumps({"status": "success", "data": {"resultType": "vector",
                                                       "result": [{"metric": {}, "value": [0, "1"]}]}}).encode()

    def slow(_request: BaseHTTPRequestHandler) -> tuple[int, bytes]:
        time.sleep(1.5)
        return 200, answer

    api = PrometheusAPI(http_server(slow), timeout=0.5)
    with pytest.raises(APIError, match="no response within 0.5s"):
        api.query("vector(1)")
    assert QUERY_TIMEOUT == 300.0 and promql_query(api)("vector(1)") is True
