"""`start`'s /metrics: scrapers authenticated by client certificate (pure decision, then real TLS on
loopback), and serving certificates and client CAs that change while the server runs."""

from __future__ import annotations

import logging
import shutil
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Gauge

from cvo_py.runtime.serving.certificates import SCRAPER_COMMON_NAME, ServingContext, authorize_scraper, common_name
from cvo_py.runtime.serving.server import MetricsServer
from testkit.harness.certs import certificate_authority, client_certificate, https_get, self_signed

NO_CA = (
    "client certificate not trusted: no client CA loaded yet from ConfigMap "
    "kube-system/extension-apiserver-authentication (client-ca-file)"
)

# With TLS 1.3 the server's verdict on a client certificate arrives after the client's side of the
# handshake: the refusal surfaces on the first read (ssl.SSLError), and as the alert or as the
# connection closing, depending on which the client reads first.
REFUSED = (urllib.error.URLError, ssl.SSLError, ConnectionError)
REFUSAL = "(?i)unknown ca|EOF occurred in violation of protocol|connection reset|broken pipe|closed connection"


def subject(cn: str) -> dict[str, Any]:
    return {"subject": ((("organizationName", "system:monitoring"),), (("commonName", cn),))}


# -- the decision (pure) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("peer", "ca_loaded", "want"),
    [
        (subject(SCRAPER_COMMON_NAME), True, None),
        (None, True, (401, "client certificate required")),
        ({}, True, (401, "client certificate required")),
        (
            subject("system:serviceaccount:default:intruder"),
            True,
            (403, "unauthorized common name: system:serviceaccount:default:intruder"),
        ),
        ({"subject": ((("organizationName", "x"),),)}, True, (403, "unauthorized common name: ")),
        (subject(SCRAPER_COMMON_NAME), False, (401, NO_CA)),
        (None, False, (401, NO_CA)),
    ],
    ids=["prometheus", "no-certificate", "empty-certificate", "other-cn", "no-cn", "no-ca-yet", "no-ca-no-cert"],
)
def test_authorize_scraper(peer: dict[str, Any] | None, ca_loaded: bool, want: tuple[int, str] | None) -> None:
    assert authorize_scraper(peer, ca_loaded) == want


def test_common_name_reads_the_subject_only() -> None:
    cert = {**subject("prometheus"), "issuer": ((("commonName", "the-ca"),),)}
    assert common_name(cert) == "prometheus"
    assert common_name({}) == ""


# -- on loopback --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    d = tmp_path_factory.mktemp("pki")
    ca = certificate_authority(d, "client-ca", "cluster-client-ca")
    other_ca = certificate_authority(d, "other-ca", "someone-elses-ca")
    return {
        "serving": self_signed(d, "serving", "metrics.local"),
        "ca": ca,
        "other-ca": other_ca,
        "prometheus": client_certificate(d, "prometheus", ca, SCRAPER_COMMON_NAME),
        "intruder": client_certificate(d, "intruder", ca, "system:serviceaccount:default:intruder"),
        "untrusted": client_certificate(d, "untrusted", other_ca, SCRAPER_COMMON_NAME),
    }


@pytest.fixture
def server(pki: dict[str, tuple[str, str]]) -> Iterator[MetricsServer]:
    registry = CollectorRegistry()
    Gauge("cluster_version_test", "a series to find", registry=registry).set(1)
    serving = ServingContext(*pki["serving"], client_auth=True)
    running = MetricsServer("127.0.0.1:0", registry, serving=serving).start()
    yield running
    running.stop()


def get(port: int, path: str, client: tuple[str, str] | None = None) -> tuple[int, str]:
    return https_get(port, path, client)


def ca_pem(pki: dict[str, tuple[str, str]], name: str = "ca") -> str:
    return Path(pki[name][0]).read_text()


def test_metrics_answers_only_the_scraper_the_client_ca_signed(
    server: MetricsServer, pki: dict[str, tuple[str, str]]
) -> None:
    assert server.serving is not None
    assert get(server.port, "/metrics", pki["prometheus"]) == (401, NO_CA + "\n")  # the CA is not known yet
    server.serving.set_client_ca(ca_pem(pki))
    status, body = get(server.port, "/metrics", pki["prometheus"])
    assert status == 200 and "cluster_version_test 1.0" in body
    assert get(server.port, "/metrics") == (401, "client certificate required\n")
    assert get(server.port, "/metrics", pki["intruder"]) == (
        403,
        "unauthorized common name: system:serviceaccount:default:intruder\n",
    )
    # A certificate from another CA is refused by the handshake itself (see ServingContext).
    with pytest.raises(REFUSED, match=REFUSAL):
        get(server.port, "/metrics", pki["untrusted"])
    # Probes carry no client certificate and stay open.
    assert get(server.port, "/healthz") == (200, "ok")
    assert get(server.port, "/readyz") == (200, "ok")


def test_a_new_client_ca_replaces_the_old_and_a_broken_one_is_ignored(
    server: MetricsServer, pki: dict[str, tuple[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    assert server.serving is not None
    server.serving.set_client_ca(ca_pem(pki, "other-ca"))
    assert get(server.port, "/metrics", pki["untrusted"])[0] == 200
    with pytest.raises(REFUSED, match=REFUSAL):
        get(server.port, "/metrics", pki["prometheus"])
    with caplog.at_level(logging.WARNING, logger="cvo_py.runtime.serving"):
        server.serving.set_client_ca("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    assert "Keeping the previous TLS configuration: the new client CA does not load" in caplog.text
    assert get(server.port, "/metrics", pki["untrusted"])[0] == 200


def peer_certificate(port: int) -> bytes:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, context.wrap_socket(raw) as tls:
        der = tls.getpeercert(binary_form=True)
        assert der is not None
        return der


@dataclass
class Rotation:
    """tls.crt and tls.key hold the `first` pair; the test copies in the `second` as a rotation
    would, and moves the ServingContext's clock `now[0]`."""

    first: tuple[str, str]
    second: tuple[str, str]
    cert: Path
    key: Path
    now: list[float]


@pytest.fixture
def rotation(tmp_path: Path) -> Rotation:
    first = self_signed(tmp_path, "first", "first.local")
    second = self_signed(tmp_path, "second", "second.local")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    shutil.copy(first[0], cert)
    shutil.copy(first[1], key)
    return Rotation(first, second, cert, key, [0.0])


def test_a_rotated_serving_certificate_is_served_without_a_restart(
    rotation: Rotation, caplog: pytest.LogCaptureFixture
) -> None:
    first, second, cert, key, now = rotation.first, rotation.second, rotation.cert, rotation.key, rotation.now
    serving = ServingContext(str(cert), str(key), recheck_after=1.0, clock=lambda: now[0])
    server = MetricsServer("127.0.0.1:0", CollectorRegistry(), serving=serving).start()
    try:
        served_first = peer_certificate(server.port)
        assert served_first == ssl.PEM_cert_to_DER_cert(Path(first[0]).read_text())
        # Mid-rotation the certificate is new and the key still old: keep serving the last good pair.
        shutil.copy(second[0], cert)
        now[0] += 1.0
        with caplog.at_level(logging.WARNING, logger="cvo_py.runtime.serving"):
            assert peer_certificate(server.port) == served_first
        assert "the new serving certificate does not load" in caplog.text
        shutil.copy(second[1], key)
        assert peer_certificate(server.port) == served_first  # not re-checked within recheck_after
        now[0] += 1.0
        assert peer_certificate(server.port) == ssl.PEM_cert_to_DER_cert(Path(second[0]).read_text())
        assert serving.reloads == 1
    finally:
        server.stop()


def test_an_unloadable_initial_certificate_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "tls.crt").write_text("not a certificate")
    with pytest.raises(ssl.SSLError):
        ServingContext(str(tmp_path / "tls.crt"), str(tmp_path / "tls.crt"))


def test_a_client_ca_arriving_mid_rotation_is_applied_with_the_next_good_pair(
    rotation: Rotation, pki: dict[str, tuple[str, str]]
) -> None:
    second, cert, key, now = rotation.second, rotation.cert, rotation.key, rotation.now
    serving = ServingContext(str(cert), str(key), client_auth=True, clock=lambda: now[0])
    shutil.copy(second[0], cert)  # the new certificate is there, its key not yet
    serving.set_client_ca(ca_pem(pki))
    assert not serving.client_ca_loaded  # the pair does not load: nothing changes yet
    shutil.copy(second[1], key)
    now[0] += 1.0
    serving.current()
    assert serving.client_ca_loaded
