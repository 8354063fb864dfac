"""How the update service is reached from this cluster (I/O): the cluster-wide proxy
(`Proxy/cluster` status) and the trusted CA bundle (`openshift-config-managed/trusted-ca-bundle`,
key `ca-bundle.crt`), read for each attempt as the CVO reads them. A missing object means no proxy
or the system roots; any other failure to read them is a `TransportError` (retried, not reported
as a condition, as upstream).
"""

from __future__ import annotations

import ssl

from cvo_py.runtime.kube import CONFIGMAPS, PROXIES, ApiError, KubeClient, ServerUnreachable
from updateservice.client import Transport, TransportError

TRUSTED_CA_NAMESPACE = "openshift-config-managed"
TRUSTED_CA_NAME = "trusted-ca-bundle"
TRUSTED_CA_KEY = "ca-bundle.crt"


def cluster_transport(client: KubeClient) -> Transport:
    try:
        proxy_status = (client.get(PROXIES, "cluster").get("status") or {})
    except ApiError as exc:
        if exc.status != 404:
            raise TransportError(f"reading Proxy cluster: {exc}") from None
        proxy_status = {}
    except ServerUnreachable as exc:
        raise TransportError(f"reading Proxy cluster: {exc}") from None
    try:
        bundle = str(((client.get(CONFIGMAPS, TRUSTED_CA_NAME, TRUSTED_CA_NAMESPACE).get("data") or {})
                      .get(TRUSTED_CA_KEY)) or "")
    except ApiError as exc:
        if exc.status != 404:
            raise TransportError(f"reading ConfigMap {TRUSTED_CA_NAMESPACE}/{TRUSTED_CA_NAME}: {exc}") from None
        bundle = ""
    except ServerUnreachable as exc:
        raise TransportError(f"reading ConfigMap {TRUSTED_CA_NAMESPACE}/{TRUSTED_CA_NAME}: {exc}") from None
    if bundle.strip():
        try:
            ssl.create_default_context(cadata=bundle)
        except (ssl.SSLError, ValueError) as exc:
            raise TransportError(f"{TRUSTED_CA_NAMESPACE}/{TRUSTED_CA_NAME} {TRUSTED_CA_KEY} is not usable PEM: "
                                 f"{exc}") from None
    return Transport(
        http_proxy=str(proxy_status.get("httpProxy") or ""),
        https_proxy=str(proxy_status.get("httpsProxy") or ""),
        no_proxy=str(proxy_status.get("noProxy") or ""),
        ca_bundle=bundle,
    )
