"""PromQL risk rules evaluated through the platform's Prometheus/Thanos API (I/O): the one client
`cvo_py.runtime.promapi.PrometheusAPI`, shared with the update status controller's alerts reader.
As upstream's, a query may take up to `QUERY_TIMEOUT` (5 minutes), and its failures read as
upstream's (`executing PromQL query: …`, `failure determine thanos IP: …`, `invalid PromQL result
…`), inside the `Recommended` condition's `Could not evaluate exposure to update risk …`.

`start` runs on the host network with the node's resolver, which cannot resolve Service names
(`thanos-querier.openshift-monitoring.svc.cluster.local`). As upstream's CVO, it asks the API for
the Service before every request and connects to its cluster IP, on the URL's port, with the TLS
server name still the URL's host (`service_connect_host`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.kube import SERVICES, KubeClient
from cvo_py.runtime.promapi import APIError, PrometheusAPI
from updateservice.recommend import EvaluationError, vector_verdict

# Upstream's PromQL QueryTimeout.
QUERY_TIMEOUT = 300.0

# <service>.<namespace>.svc, optionally followed by the cluster domain (DNS-1123 labels).
_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_SERVICE_HOST = re.compile(rf"({_LABEL})\.({_LABEL})\.svc(?:\.cluster\.local)?\.?")


class ServiceAddressError(APIError):
    """The cluster IP of the Service a URL names could not be read."""


def promql_query(api: PrometheusAPI) -> Callable[[str], bool]:
    """A rule's query → match or not; failures are one-line EvaluationErrors (reported in the
    Recommended condition, never hidden)."""

    def query(expr: str) -> bool:
        try:
            data = api.get("/api/v1/query", {"query": expr}, timeout=QUERY_TIMEOUT)
        except ServiceAddressError as exc:
            raise EvaluationError(f"failure determine thanos IP: {exc}") from None
        except APIError as exc:
            raise EvaluationError(f"executing PromQL query: {exc}") from None
        return vector_verdict(data)

    return query


def service_of(url: str) -> tuple[str, str] | None:
    """(namespace, name) of the Service a URL's host names, or None for any other host."""
    match = _SERVICE_HOST.fullmatch(urlsplit(url).hostname or "")
    return (match.group(2), match.group(1)) if match else None


def service_connect_host(client: KubeClient, namespace: str, name: str) -> Callable[[], str]:
    """Reads Service `namespace/name` and answers its cluster IP (a one-line APIError otherwise)."""

    def cluster_ip() -> str:
        try:
            service = client.get(SERVICES, name, namespace)
        except ClientError as exc:
            raise ServiceAddressError(f"cannot get the cluster IP of Service {namespace}/{name}: {exc}") from None
        address = str((service.get("spec") or {}).get("clusterIP") or "")
        if not address or address == "None":
            raise ServiceAddressError(f"Service {namespace}/{name} has no cluster IP")
        return address

    return cluster_ip
