"""The controller, as a real process with its ServiceAccount, serves /metrics, /healthz and /readyz
over HTTPS with the certificate it is given (as the Deployment passes the service CA's), with the
`--tls-*` settings applied, and /metrics only to the cluster's Prometheus (its client certificate,
signed by the client CA the API server publishes); without a certificate it serves plain HTTP and
warns once."""

from __future__ import annotations

import http.client
import socket
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from testkit.harness import usc as h
from testkit.harness.certs import self_signed
from testkit.harness.cluster import LocalCluster

PLAIN_HTTP_WARNING = "over plain HTTP"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed serving certificate for 127.0.0.1 (it is its own CA in the client's context)."""
    return self_signed(tmp_path_factory.mktemp("serving-cert"), common_name="update-status-controller", ip="127.0.0.1")


def verifying_context(
    cafile: str, version: ssl.TLSVersion | None = None, client: tuple[str, str] | None = None
) -> ssl.SSLContext:
    """A client that checks the certificate and its name (127.0.0.1), optionally at one TLS version,
    presenting `client` (certificate, key) when given."""
    context = ssl.create_default_context(cafile=cafile)
    if version is not None:
        context.minimum_version = context.maximum_version = version
    if client is not None:
        context.load_cert_chain(*client)
    return context


def metrics_answer(port: int, context: ssl.SSLContext) -> tuple[int, str]:
    """(status, body) of GET /metrics."""
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", timeout=10, context=context) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def ready(usc: h.ControllerProcess) -> bool:
    try:
        return usc.get("/readyz") == "ok"
    except urllib.error.HTTPError as exc:
        if exc.code == 503:  # not ready yet
            return False
        raise


def handshake(port: int, context: ssl.SSLContext) -> str | None:
    """The protocol a fresh connection negotiates; raises ssl.SSLError when refused."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            return tls.version()


def test_https_with_the_given_certificate_and_tls_settings(
    cluster: LocalCluster, controller_kubeconfig: str, namespace: str, certificate: tuple[str, str], tmp_path: Path
) -> None:
    cert, key = certificate
    # what the cluster's Prometheus presents (its CN, signed by the API server's client CA)
    scraper = (cluster.state["scraperCertFile"], cluster.state["scraperKeyFile"])
    usc = h.ControllerProcess(
        controller_kubeconfig,
        namespace,
        tmp_path / "usc.log",
        "--no-leader-elect",
        f"--serving-cert-file={cert}",
        f"--serving-key-file={key}",
        "--tls-min-version=VersionTLS13",
        tls=verifying_context(cert, client=scraper),
    )
    try:
        usc.wait_for_log(rf"Serving metrics and health on https://127\.0\.0\.1:{usc.port}")
        assert usc.get("/healthz") == "ok"  # probes need no client certificate
        h.wait_for("/readyz once the caches are listed", lambda: ready(usc))
        # /metrics: the cluster's Prometheus only, once the client CA is read from kube-system
        assert usc.tls is not None

        def served() -> str | None:
            status, body = metrics_answer(usc.port, usc.tls)
            return body if status == 200 else None

        metrics = h.wait_for("/metrics for the scraper's certificate", served)
        assert "update_status_controller_configmap_present 0.0" in metrics, metrics[:2000]
        assert metrics_answer(usc.port, verifying_context(cert)) == (401, "client certificate required\n")
        assert handshake(usc.port, verifying_context(cert)) == "TLSv1.3"
        # --tls-min-version reached the server: a TLS 1.2 client is refused.
        with pytest.raises(ssl.SSLError, match="(?i)protocol version|unsupported protocol"):
            handshake(usc.port, verifying_context(cert, ssl.TLSVersion.TLSv1_2))
        # Nothing is served in the clear on the HTTPS port.
        with pytest.raises((urllib.error.URLError, http.client.HTTPException, ConnectionError)):
            urllib.request.urlopen(f"http://127.0.0.1:{usc.port}/metrics", timeout=10)
        assert PLAIN_HTTP_WARNING not in usc.log()
    finally:
        code = usc.stop()
    assert code == 0, usc.log()[-3000:]


def test_plain_http_without_a_certificate_is_logged_once(
    controller_kubeconfig: str, namespace: str, tmp_path: Path
) -> None:
    usc = h.ControllerProcess(controller_kubeconfig, namespace, tmp_path / "usc.log", "--no-leader-elect")
    try:
        usc.wait_for_log(rf"Serving metrics and health on http://127\.0\.0\.1:{usc.port}")
        for _ in range(3):
            assert "update_status_controller_configmap_present" in usc.metrics()
        h.wait_for("/readyz once the caches are listed", lambda: ready(usc))
    finally:
        code = usc.stop()
    assert code == 0, usc.log()[-3000:]
    warnings = [line for line in usc.log().splitlines() if PLAIN_HTTP_WARNING in line]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("W"), warnings[0]  # klog: a warning
    assert "set --serving-cert-file and --serving-key-file to serve HTTPS" in warnings[0]
    print(f"\n{warnings[0]}")
