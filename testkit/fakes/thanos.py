"""Thanos Querier as `start` meets it in a cluster, on this machine, in front of a real Prometheus.

    with service_address(kube, "openshift-monitoring", "thanos-querier", 9091) as ip:
        with ThanosQuerier(kube, ip, 9091, prometheus.url, tmp_path) as querier:
            ...  # start --promql-ca-file=querier.ca_file reaches it at ip:9091

In a cluster, `openshift-monitoring/thanos-querier` is a Service whose cluster IP kube-proxy
routes to the querier's Pods, which answer HTTPS with a service-CA certificate for the Service's
names, behind a proxy that authenticates the bearer token (a TokenReview) and authorizes it (a
SubjectAccessReview: `get` on `prometheuses/api` `k8s` in openshift-monitoring, the request's
verb for another method, which the cluster-monitoring-view ClusterRole grants). Here:
`service_address` makes the Service with a cluster IP from an extra Service CIDR of loopback
addresses (a ServiceCIDR object, as an administrator adds a range), so the cluster IP reaches
this host with no routing to set up and no root, and apart from the range of the API server's
own Services, which another local cluster's kube-proxy on this host may drop; `ThanosQuerier`
serves HTTPS there, checks tokens against the real API server with the same two reviews, and
forwards the API requests to a real Prometheus.
"""

from __future__ import annotations

import contextlib
import ipaddress
import random
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cvo_py.runtime.kube import SERVICES, ApiError, KubeClient, Resource
from testkit.harness.certs import certificate_authority, server_certificate
from testkit.harness.cluster import ensure_namespace

CLUSTER_ROLES = Resource("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False)
SERVICE_CIDRS = Resource("networking.k8s.io/v1", "ServiceCIDR", "servicecidrs", False)
# Cluster IPs that are this host's own: every address of 127.0.0.0/8 reaches the loopback interface.
LOOPBACK_SERVICE_CIDR = "127.96.0.0/24"
LOOPBACK_SERVICE_CIDR_NAME = "cvo-py-loopback"
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
# What the querier's proxy asks the API server before it answers (verb: the request's).
CHECKED = {"namespace": "openshift-monitoring", "group": "monitoring.coreos.com", "resource": "prometheuses",
           "subresource": "api", "name": "k8s"}  # fmt: skip
# The cluster monitoring operator's ClusterRole for reading monitoring data, as far as it matters here.
CLUSTER_MONITORING_VIEW = {
    "metadata": {"name": "cluster-monitoring-view"},
    "rules": [
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
        {"apiGroups": ["monitoring.coreos.com"], "resources": ["prometheuses/api"], "resourceNames": ["k8s"],
         "verbs": ["get", "create", "update"]},
    ],
}  # fmt: skip


def ensure_cluster_monitoring_view(kube: KubeClient) -> None:
    """The platform's cluster-monitoring-view ClusterRole (the cluster monitoring operator ships it)."""
    try:
        kube.create(CLUSTER_ROLES, CLUSTER_MONITORING_VIEW)
    except ApiError as exc:
        if not exc.is_already_exists():
            raise


@contextlib.contextmanager
def service_address(kube: KubeClient, namespace: str, name: str, port: int, attempts: int = 20) -> Iterator[str]:
    """Service `namespace/name` (port `port`, named web) with a cluster IP from a Service CIDR of
    loopback addresses (added for it, removed after), so that the cluster IP is this host's."""
    ensure_namespace(kube, namespace)
    network = ipaddress.ip_network(LOOPBACK_SERVICE_CIDR)
    try:
        kube.create(SERVICE_CIDRS, {"metadata": {"name": LOOPBACK_SERVICE_CIDR_NAME},
                                    "spec": {"cidrs": [LOOPBACK_SERVICE_CIDR]}})  # fmt: skip
    except ApiError as exc:
        if not exc.is_already_exists():  # one an interrupted run left is the same
            raise
    rng = random.Random()
    try:
        for _ in range(attempts):
            address = str(network[rng.randint(10, network.num_addresses - 2)])
            body = {
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"type": "ClusterIP", "clusterIP": address, "ports": [{"name": "web", "port": port}]},
            }
            try:
                kube.create(SERVICES, body, namespace)
            except ApiError as exc:
                if exc.is_invalid():  # that cluster IP is allocated already
                    continue
                raise
            try:
                yield address
            finally:
                with contextlib.suppress(ApiError):
                    kube.delete(SERVICES, name, namespace)
            return
        raise RuntimeError(f"no free cluster IP for Service {namespace}/{name} after {attempts} attempts")
    finally:
        with contextlib.suppress(ApiError):
            kube.delete(SERVICE_CIDRS, LOOPBACK_SERVICE_CIDR_NAME)


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    user: str
    status: int


class ThanosQuerier:
    """HTTPS on `address:port` with a service-CA certificate for the Service's names; every request
    authenticated and authorized against the API server, then forwarded to `upstream`."""

    def __init__(
        self, kube: KubeClient, address: str, port: int, upstream: str, directory: Path,
        service: tuple[str, str] = ("openshift-monitoring", "thanos-querier"),
        extra_names: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.kube = kube
        self.upstream = upstream.rstrip("/")
        namespace, name = service
        directory.mkdir(parents=True, exist_ok=True)
        ca = certificate_authority(directory, "service-ca", "openshift-service-serving-signer")
        self.ca_file = ca[0]
        # the Service's names, and any other its certificate must name (a Route's host)
        self.dns_names = (f"{name}.{namespace}.svc", f"{name}.{namespace}.svc.cluster.local", *extra_names)
        cert, key = server_certificate(directory, name, ca, self.dns_names)
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        querier = self

        class Request(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                querier._answer(self)

            def do_POST(self) -> None:  # noqa: N802
                querier._answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((address, port), Request)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name="thanos-querier", daemon=True)

    def __enter__(self) -> ThanosQuerier:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def authorize(self, token: str, verb: str = "get") -> tuple[int, str]:
        """(HTTP status, user): 401 for a token the API server does not know, 403 when the user
        may not read monitoring data, else 200."""
        if not token:
            return 401, ""
        review = self.kube.request("POST", TOKEN_REVIEWS, body={"spec": {"token": token}})
        status = review.get("status") or {}
        if not status.get("authenticated"):
            return 401, ""
        user = status.get("user") or {}
        access = self.kube.request(
            "POST",
            ACCESS_REVIEWS,
            body={"spec": {"user": user.get("username"), "groups": user.get("groups") or [], "uid": user.get("uid"),
                           "resourceAttributes": {**CHECKED, "verb": verb}}},
        )  # fmt: skip
        allowed = bool((access.get("status") or {}).get("allowed"))
        return (200 if allowed else 403), str(user.get("username") or "")

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        header = request.headers.get("Authorization") or ""
        token = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
        status, user = self.authorize(token, "get" if request.command == "GET" else "create")
        body = b"Unauthorized\n" if status == 401 else b"Forbidden\n"
        content_type = "text/plain"
        if status == 200:
            if not request.path.startswith("/api/v1/"):
                status, body = 404, b"404 page not found\n"
            else:
                status, body, content_type = self._forward(request.path)
        with self._lock:
            self.seen.append(Seen(request.command, request.path, user, status))
        request.send_response(status)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    def _forward(self, path: str) -> tuple[int, bytes, str]:
        try:
            with urllib.request.urlopen(self.upstream + path, timeout=10) as answer:
                return answer.status, answer.read(), answer.headers.get("Content-Type", "application/json")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers.get("Content-Type", "application/json")
