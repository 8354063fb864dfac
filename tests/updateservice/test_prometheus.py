"""How `start` finds Thanos Querier from the host network: the Service a --promql-url names, and
its cluster IP read from the real API server before each query (a one-line error otherwise)."""

from __future__ import annotations

import pytest

from cvo_py.cli.main import build_parser
from cvo_py.cli.prometheus_flags import CVO_DEFAULT_URL
from cvo_py.cli.start import validate
from cvo_py.runtime.kube import SERVICES, KubeClient
from cvo_py.runtime.promapi import APIError
from updateservice.prometheus import service_connect_host, service_of

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
