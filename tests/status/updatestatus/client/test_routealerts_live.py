"""Alerts as `oc adm upgrade status` gets them, live: a real Prometheus behind a Thanos Querier
stand-in that checks the bearer token (a TokenReview and a SubjectAccessReview on the real API
server), reached through Route openshift-monitoring/thanos-querier; and oc's line, the status
still shown, for each way that fails: no Route, no token, 401, 403, TLS, a timeout, an answer
that is not JSON, a body over the bound."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import CONFIGMAPS, KubeClient, Resource
from status.updatestatus.client import snapshot
from status.updatestatus.client.render import render
from status.updatestatus.client.routealerts import MONITORING, ROUTE, ROUTES, UNABLE, UNMARSHALING
from testkit.checkout import EXAMPLES
from testkit.fakes.thanos import ThanosQuerier
from testkit.harness.certs import certificate_authority, server_certificate
from testkit.harness.cluster import LocalCluster, free_port, put_configmap
from testkit.harness.localprometheus import LocalPrometheus
from testkit.harness.prometheus import prometheus as prometheus  # noqa: F401 - the fixture
from testkit.objects import livecluster
from testkit.objects.livecluster import upgrade_status

EXAMPLE = "4.14.1-degraded"
CLUSTER_ROLE_BINDINGS = Resource("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False)
SERVICE_CA = ("openshift-config-managed", "service-ca")

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"oc examples not found in {EXAMPLES}")




def without_alerts(snap: snapshot.Snapshot, details: str = "none") -> str:
    insights, now = snap.insights()
    return render(insights, now, details)


def with_alerts(snap: snapshot.Snapshot, response: Any, details: str = "all") -> str:
    snap.alerts = response
    insights, now = snap.insights()
    return render(insights, now, details)


@pytest.fixture
def service_ca(kube: KubeClient) -> Iterator[Callable[[str], None]]:
    """Publish a CA as the cluster's service CA (ConfigMap openshift-config-managed/service-ca)."""

    def publish(ca_file: str) -> None:
        put_configmap(kube, *SERVICE_CA, {"ca-bundle.crt": Path(ca_file).read_text()})

    yield publish
    try:
        kube.delete(CONFIGMAPS, SERVICE_CA[1], namespace=SERVICE_CA[0])
    except Exception:  # noqa: BLE001 - not published by this test
        pass


def user_kubeconfig(cluster: LocalCluster, tmp_path: Path, name: str, monitoring_view: bool) -> str:
    """A user who may read what oc reads, and with `monitoring_view` the monitoring data too."""
    return livecluster.reader(cluster, tmp_path, name, monitoring_view=monitoring_view)


def wait_for_steady_alerts(prom: LocalPrometheus) -> list[dict[str, Any]]:
    """Prometheus' alerts once two reads a few seconds apart agree (the rules' `for:` is 3 s)."""
    deadline = time.monotonic() + 60
    last = None
    while time.monotonic() < deadline:
        alerts = sorted(prom.alerts(), key=lambda a: json.dumps(a, sort_keys=True))
        for alert in alerts:
            alert.pop("value", None)
        if alerts == last and all(a.get("state") == "firing" for a in alerts):
            return alerts
        last = alerts
        time.sleep(4)
    raise AssertionError("Prometheus' alerts did not settle within a minute")


def test_alerts_come_from_the_route_with_the_users_token_as_oc_shows_them(
    cluster: LocalCluster, kube: KubeClient, degraded: tuple[snapshot.Snapshot, str], tmp_path: Path,
    prometheus: Callable[..., LocalPrometheus], service_ca: Callable[[str], None],
) -> None:  # fmt: skip
    """A real Prometheus (its alerts fire from install/'s rules, with nothing to scrape), reached
    through the Route's host with the kubeconfig's bearer token, the querier's certificate signed
    by the cluster's service CA: the status shows the alert insights oc derives from that answer."""
    snap, now = degraded
    prom = prometheus()
    port = free_port()
    with ThanosQuerier(kube, "127.0.0.1", port, prom.url, tmp_path / "querier", extra_names=("localhost",)) as querier:
        livecluster.route(cluster, f"localhost:{port}")
        service_ca(querier.ca_file)
        kubeconfig = user_kubeconfig(cluster, tmp_path, "alerts-reader", monitoring_view=True)
        before = wait_for_steady_alerts(prom)
        done = upgrade_status(kubeconfig, "--source", "cluster", "--now", now, "--details", "all")
        after = wait_for_steady_alerts(prom)
    assert done.returncode == 0, done.stderr
    assert before == after, "the alerts changed meanwhile: nothing to compare with"
    response = {"status": "success", "data": {"alerts": before}}
    assert done.stdout == with_alerts(snap, response)
    assert [(s.path, s.status) for s in querier.seen] == [("/api/v1/alerts", 200)]
    assert querier.seen[0].user.endswith(":alerts-reader")


def test_a_user_who_may_not_read_monitoring_data_gets_ocs_line_and_the_status(
    cluster: LocalCluster, kube: KubeClient, degraded: tuple[snapshot.Snapshot, str], tmp_path: Path,
    prometheus: Callable[..., LocalPrometheus], service_ca: Callable[[str], None],
) -> None:  # fmt: skip
    snap, now = degraded
    prom = prometheus()
    port = free_port()
    with ThanosQuerier(kube, "127.0.0.1", port, prom.url, tmp_path / "querier", extra_names=("localhost",)) as querier:
        livecluster.route(cluster, f"localhost:{port}")
        service_ca(querier.ca_file)
        kubeconfig = user_kubeconfig(cluster, tmp_path, "no-monitoring", monitoring_view=False)
        done = upgrade_status(kubeconfig, "--source", "cluster", "--now", now)
    assert done.returncode == 0, done.stderr
    line = f"{UNABLE}GET https://localhost:{port}/api/v1/alerts: 403 Forbidden: Forbidden\n"
    assert done.stdout == line + without_alerts(snap)


def test_a_certificate_the_client_does_not_trust_gets_ocs_line_and_the_status(
    cluster: LocalCluster, kube: KubeClient, degraded: tuple[snapshot.Snapshot, str], tmp_path: Path,
    prometheus: Callable[..., LocalPrometheus],
) -> None:  # fmt: skip
    """No service CA published: the querier's certificate is signed by a CA nobody trusts."""
    snap, now = degraded
    prom = prometheus()
    port = free_port()
    with ThanosQuerier(kube, "127.0.0.1", port, prom.url, tmp_path / "querier", extra_names=("localhost",)):
        livecluster.route(cluster, f"localhost:{port}")
        done = upgrade_status(cluster.kubeconfig, "--source", "cluster", "--now", now)
    assert done.returncode == 0, done.stderr
    line = (
        f'{UNABLE}Get "https://localhost:{port}/api/v1/alerts": tls: failed to verify certificate: x509: '
        "certificate signed by unknown authority\n"
    )
    assert done.stdout == line + without_alerts(snap)


class Misbehaving:
    """An HTTPS server whose certificate the service CA signs, answering every request with `answer`."""

    def __init__(self, directory: Path, answer: Callable[[BaseHTTPRequestHandler], None]) -> None:
        import ssl

        directory.mkdir(parents=True, exist_ok=True)
        ca = certificate_authority(directory, "service-ca", "openshift-service-serving-signer")
        self.ca_file = ca[0]
        cert, key = server_certificate(directory, "bad", ca, ("localhost",))

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.port = free_port()
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name="misbehaving-querier", daemon=True)

    def __enter__(self) -> Misbehaving:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


def send(status: int, body: bytes, length: int | None = None) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(request: BaseHTTPRequestHandler) -> None:
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(body) if length is None else length))
        request.end_headers()
        try:
            request.wfile.write(body)
        except OSError:  # the client stopped reading: what the test wants
            pass

    return answer


def hang(request: BaseHTTPRequestHandler) -> None:
    time.sleep(15)  # longer than the client's bound (10 s)


FAILURES = {
    "401": (send(401, b"Unauthorized\n"), "GET https://localhost:{port}/api/v1/alerts: 401 Unauthorized: Unauthorized"),
    "not JSON": (send(200, b"<html>proxy error</html>"), None),
    "JSON of another shape": (send(200, b'{"status":"success","data":{"alerts":[{"activeAt":7}]}}'), None),
    "over the bound": (
        send(200, b"{}", length=64 << 20),
        'Get "https://localhost:{port}/api/v1/alerts": response body of 67108864 bytes is larger than the '
        "16777216 bytes accepted",
    ),
    "timeout": (
        hang,
        'Get "https://localhost:{port}/api/v1/alerts": context deadline exceeded (Client.Timeout exceeded while '
        "awaiting headers)",
    ),
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_each_failure_of_the_alerts_api_is_ocs_line_and_the_status(
    cluster: LocalCluster, degraded: tuple[snapshot.Snapshot, str], tmp_path: Path,
    service_ca: Callable[[str], None], failure: str,
) -> None:  # fmt: skip
    snap, now = degraded
    answer, error = FAILURES[failure]
    with Misbehaving(tmp_path / "bad", answer) as server:
        livecluster.route(cluster, f"localhost:{server.port}")
        service_ca(server.ca_file)
        started = time.monotonic()
        done = upgrade_status(cluster.kubeconfig, "--source", "cluster", "--now", now)
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    first, rest = done.stdout.split("\n", 1)
    assert rest == without_alerts(snap)
    if error is None:
        assert first.startswith(UNMARSHALING), first
    else:
        assert first == UNABLE + error.format(port=server.port)
    assert took < 60  # bounded: the alerts' 10 s, and an interpreter's start on a loaded machine


def test_a_kubeconfig_without_a_token_gets_ocs_line_and_the_status(
    cluster: LocalCluster, kube: KubeClient, degraded: tuple[snapshot.Snapshot, str], tmp_path: Path
) -> None:
    """Authenticated by a client certificate, the user has no bearer token to send: oc's words."""
    import yaml

    from testkit.harness.certs import client_certificate

    snap, now = degraded
    livecluster.route(cluster, "localhost:1")  # never dialled
    pki = cluster.handle.dir / "pki"
    cert, key = client_certificate(tmp_path, "cert-user", (str(pki / "client-ca.crt"), str(pki / "client-ca.key")),
                                   "cvo-py-cert-user")  # fmt: skip
    binding = {"metadata": {"name": "cvo-py-cert-user"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
               "kind": "ClusterRole", "name": "cluster-admin"},
               "subjects": [{"kind": "User", "name": "cvo-py-cert-user"}]}  # fmt: skip
    try:
        kube.create(CLUSTER_ROLE_BINDINGS, binding)
    except Exception:  # noqa: BLE001 - made by an earlier run
        pass
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    config["users"] = [{"name": "cert", "user": {"client-certificate": cert, "client-key": key}}]
    for context in config["contexts"]:
        context["context"]["user"] = "cert"
    path = tmp_path / "cert.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    done = upgrade_status(str(path), "--source", "cluster", "--now", now)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{UNABLE}no token is currently in use for this session\n" + without_alerts(snap)


def test_without_the_route_the_line_is_client_gos(
    cluster: LocalCluster, kube: KubeClient, degraded: tuple[snapshot.Snapshot, str]
) -> None:
    """The Route API is there, the Route is not: the API's own NotFound message."""
    snap, now = degraded
    livecluster.route(cluster, "localhost:1")
    kube.delete(ROUTES, ROUTE, namespace=MONITORING)
    done = upgrade_status(cluster.kubeconfig, "--source", "cluster", "--now", now)
    assert done.returncode == 0, done.stderr
    line = f'{UNABLE}routes.route.openshift.io "thanos-querier" not found\n'
    assert done.stdout == line + without_alerts(snap)
