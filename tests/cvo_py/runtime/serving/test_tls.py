"""`start --tls-min-version / --tls-cipher-suites`: Go names → OpenSSL settings (pure), the flags'
errors (exit 2, one line), and what the HTTPS metrics server really negotiates on loopback."""

from __future__ import annotations

import logging
import re
import socket
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator

import pytest
from prometheus_client import CollectorRegistry

from cvo_py.runtime.serving import tls
from cvo_py.runtime.serving.certificates import ServingContext
from cvo_py.runtime.serving.server import MetricsServer
from cvo_py.runtime.serving.tls import (
    DEFAULT_CIPHER_SUITES,
    GO_CIPHER_SUITES,
    TLS13_SUITES,
    TLSConfigError,
    TLSOptions,
    parse_tls_options,
)
from testkit.checkout import REPO
from testkit.harness.certs import pinned_client_context

# -- flags → options (pure) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("min_version", "suites", "want_min", "want_suites"),
    [
        ("", [], ssl.TLSVersion.TLSv1_2, DEFAULT_CIPHER_SUITES),
        ("VersionTLS10", [], ssl.TLSVersion.TLSv1, DEFAULT_CIPHER_SUITES),
        ("VersionTLS11", [], ssl.TLSVersion.TLSv1_1, DEFAULT_CIPHER_SUITES),
        ("VersionTLS12", [], ssl.TLSVersion.TLSv1_2, DEFAULT_CIPHER_SUITES),
        ("VersionTLS13", [], ssl.TLSVersion.TLSv1_3, DEFAULT_CIPHER_SUITES),
        (
            "",
            ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
            ssl.TLSVersion.TLSv1_2,
            ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",),
        ),
        ("VersionTLS13", ["TLS_AES_128_GCM_SHA256"], ssl.TLSVersion.TLSv1_3, ("TLS_AES_128_GCM_SHA256",)),
    ],
)
def test_parse_tls_options(
    min_version: str, suites: list[str], want_min: ssl.TLSVersion, want_suites: tuple[str, ...]
) -> None:
    options = parse_tls_options(min_version, suites)
    assert options.minimum == want_min
    assert options.cipher_suites == want_suites


@pytest.mark.parametrize(
    ("min_version", "suites", "message"),
    [
        ("TLS12", [], "unknown TLS version 'TLS12': want one of VersionTLS10, VersionTLS11, VersionTLS12, "),
        ("versiontls12", [], "unknown TLS version 'versiontls12'"),
        (
            "",
            ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "NOPE"],
            "unknown cipher suite 'NOPE': want Go crypto/tls",
        ),
        (
            "",
            ["ECDHE-RSA-AES128-GCM-SHA256"],
            "unknown cipher suite 'ECDHE-RSA-AES128-GCM-SHA256'",
        ),  # OpenSSL's
        (
            "",
            ["TLS_AES_128_GCM_SHA256"],
            "the cipher suites name only TLS 1.3 suites, so VersionTLS12 connections could use none",
        ),
    ],
)
def test_parse_tls_options_errors(min_version: str, suites: list[str], message: str) -> None:
    with pytest.raises(TLSConfigError, match="^" + re.escape(message)):
        parse_tls_options(min_version, suites)


def test_a_suite_this_openssl_lacks_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tls, "_openssl_has", lambda name: name != "ECDHE-RSA-AES128-SHA")
    with pytest.raises(TLSConfigError, match="^cipher suite TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA is not available in "):
        parse_tls_options("", ["TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"])


@pytest.mark.parametrize(
    ("options", "want"),
    [
        (
            TLSOptions("VersionTLS12", ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",)),
            "ECDHE-RSA-AES128-GCM-SHA256",
        ),
        # Go's legacy alias and its full name are one suite; TLS 1.3 suites are not OpenSSL 1.2 ciphers.
        (
            TLSOptions(
                "VersionTLS12",
                (
                    "TLS_AES_256_GCM_SHA384",
                    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
                    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                    "TLS_RSA_WITH_AES_128_CBC_SHA",
                ),
            ),
            "ECDHE-RSA-CHACHA20-POLY1305:AES128-SHA",
        ),
        # TLS 1.0/1.1 asked for: OpenSSL 3's security level would refuse them otherwise.
        (
            TLSOptions("VersionTLS11", ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",)),
            "ECDHE-RSA-AES128-SHA:@SECLEVEL=0",
        ),
        (TLSOptions("VersionTLS13", ("TLS_AES_128_GCM_SHA256",)), ""),
    ],
)
def test_openssl_cipher_string(options: TLSOptions, want: str) -> None:
    assert options.openssl_ciphers() == want


def test_go_names_map_to_the_openssl_cipher_with_the_same_code_point() -> None:
    """Each OpenSSL name in the table is the cipher with the suite's IANA number (checked against
    this OpenSSL for every suite it offers; TLS 1.3 suites are in its TLS 1.3 list)."""
    checked = 0
    for go_name, (code, openssl_name) in GO_CIPHER_SUITES.items():
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        if go_name in TLS13_SUITES:
            found = [c for c in context.get_ciphers() if c["name"] == openssl_name]
        else:
            try:
                context.set_ciphers(f"{openssl_name}:@SECLEVEL=0")
            except ssl.SSLError:
                continue  # e.g. RC4 or 3DES, not built into this OpenSSL
            found = [c for c in context.get_ciphers() if c["protocol"] != "TLSv1.3"]
        assert [c["id"] & 0xFFFF for c in found] == [code], go_name
        checked += 1
    assert checked >= 20, f"only {checked} suites could be checked against {ssl.OPENSSL_VERSION}"


def test_the_default_profile_is_fully_available() -> None:
    options = parse_tls_options()
    assert options.min_version == "VersionTLS12"
    assert set(TLS13_SUITES) <= set(options.cipher_suites)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.set_ciphers(options.openssl_ciphers())
    offered = {c["id"] & 0xFFFF for c in context.get_ciphers()}
    assert {GO_CIPHER_SUITES[s][0] for s in options.cipher_suites} <= offered


# -- the flags on `start` -----------------------------------------------------------------------------


def cvo_start(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "cvo_py",
            "start",
            "--node-name",
            "n",
            "--release-image",
            "x",
            "--listen",
            "",
            *args,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--tls-cipher-suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_BOGUS"],
            "invalid TLS configuration: unknown cipher suite 'TLS_BOGUS': want Go crypto/tls names",
        ),
        (
            ["--tls-cipher-suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "--tls-cipher-suites", "X"],
            "invalid TLS configuration: unknown cipher suite 'X'",
        ),
        (
            ["--tls-min-version", "VersionTLS14"],
            "invalid TLS configuration: unknown TLS version 'VersionTLS14'",
        ),
    ],
)
def test_start_rejects_bad_tls_flags(args: list[str], message: str) -> None:
    result = cvo_start(*args)
    assert result.returncode == 2, result.stderr
    line = result.stderr.strip()
    assert "\n" not in line, line
    assert line.startswith(f"cluster-version-operator start: error: {message}"), line


def test_start_help_names_the_tls_flags() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cvo_py", "start", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "--tls-min-version" in result.stdout and "--tls-cipher-suites" in result.stdout


# -- a real HTTPS server on loopback ------------------------------------------------------------------


Serve = Callable[[TLSOptions | None], int]  # starts a server, returns its port


@pytest.fixture
def serve(certificate: tuple[str, str]) -> Iterator[Serve]:
    servers: list[MetricsServer] = []

    def start(tls: TLSOptions | None) -> int:
        server = MetricsServer(
            "127.0.0.1:0", CollectorRegistry(), cert_file=certificate[0], key_file=certificate[1], tls=tls
        ).start()
        servers.append(server)
        return server.port

    yield start
    for server in servers:
        server.stop()


def handshake(port: int, context: ssl.SSLContext) -> tuple[str | None, str]:
    """(negotiated protocol, cipher) of a fresh connection; raises ssl.SSLError when refused."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw) as tls:
            cipher = tls.cipher()
            assert cipher is not None
            return tls.version(), cipher[0]


def test_tls11_is_refused_when_the_minimum_is_tls12(serve: Serve) -> None:
    start = serve
    tls11 = pinned_client_context(ssl.TLSVersion.TLSv1_1)
    # The same client gets in when the server's minimum is TLS 1.1...
    assert (
        handshake(start(parse_tls_options("VersionTLS11", ["TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"])), tls11)[0]
        == "TLSv1.1"
    )
    # ...and is refused by the default minimum, TLS 1.2, and by an explicit one.
    for options in (
        parse_tls_options(),
        parse_tls_options("VersionTLS12", ["TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"]),
    ):
        port = start(options)
        with pytest.raises(ssl.SSLError, match="(?i)protocol version|unsupported protocol"):
            handshake(port, tls11)
        assert handshake(port, pinned_client_context(ssl.TLSVersion.TLSv1_2))[0] == "TLSv1.2"


def test_tls13_minimum_refuses_tls12(serve: Serve) -> None:
    start = serve
    port = start(parse_tls_options("VersionTLS13"))
    with pytest.raises(ssl.SSLError, match="(?i)protocol version|unsupported protocol"):
        handshake(port, pinned_client_context(ssl.TLSVersion.TLSv1_2))
    assert handshake(port, pinned_client_context(ssl.TLSVersion.TLSv1_3)) == ("TLSv1.3", "TLS_AES_256_GCM_SHA384")


@pytest.mark.parametrize(
    ("suite", "openssl_name"),
    [
        ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"),
        ("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"),
        ("TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"),
    ],
)
def test_the_named_suite_is_negotiated_over_tls12(serve: Serve, suite: str, openssl_name: str) -> None:
    start = serve
    port = start(parse_tls_options("", [suite]))
    # A client offering everything (its own preference first) still gets the one suite allowed.
    assert handshake(port, pinned_client_context(ssl.TLSVersion.TLSv1_2)) == ("TLSv1.2", openssl_name)
    # A client offering only other suites is refused.
    other = "ECDHE-RSA-AES128-GCM-SHA256"
    with pytest.raises(ssl.SSLError, match="(?i)handshake failure|no shared cipher"):
        handshake(port, pinned_client_context(ssl.TLSVersion.TLSv1_2, other))


def test_metrics_and_health_are_served_over_the_configured_tls(serve: Serve) -> None:
    start = serve
    port = start(parse_tls_options("VersionTLS12", ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]))
    context = pinned_client_context(ssl.TLSVersion.TLSv1_2)
    with urllib.request.urlopen(f"https://127.0.0.1:{port}/healthz", context=context, timeout=10) as response:
        assert (response.status, response.read()) == (200, b"ok")
    with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", context=context, timeout=10) as response:
        assert response.status == 200


def test_a_client_stuck_before_its_handshake_does_not_block_others(serve: Serve) -> None:
    start = serve
    port = start(parse_tls_options())
    with socket.create_connection(("127.0.0.1", port), timeout=10):  # connects, never says hello
        assert handshake(port, pinned_client_context(ssl.TLSVersion.TLSv1_2))[0] == "TLSv1.2"


def test_a_supplied_serving_context_is_used_as_is(certificate: tuple[str, str]) -> None:
    serving = ServingContext(certificate[0], certificate[1], parse_tls_options("VersionTLS13"))
    server = MetricsServer("127.0.0.1:0", CollectorRegistry(), serving=serving).start()
    try:
        with pytest.raises(ssl.SSLError):
            handshake(server.port, pinned_client_context(ssl.TLSVersion.TLSv1_2))
        assert handshake(server.port, pinned_client_context(ssl.TLSVersion.TLSv1_3))[0] == "TLSv1.3"
    finally:
        server.stop()


def test_plain_http_is_unchanged_without_a_certificate() -> None:
    server = MetricsServer("127.0.0.1:0", CollectorRegistry()).start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=10) as response:
            assert (response.status, response.read()) == (200, b"ok")
    finally:
        server.stop()


def test_a_stop_with_connections_in_every_state_logs_no_traceback(
    certificate: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    """Connections still open when start shuts down (a scraper between requests, a client in the
    middle of its handshake, one that sent nothing yet) end quietly: no "Exception in callback"
    from the event loop, and the stop does not wait for them."""
    server = MetricsServer(
        "127.0.0.1:0", CollectorRegistry(), cert_file=certificate[0], key_file=certificate[1]
    ).start()
    sockets: list[socket.socket] = []
    try:
        silent = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        sockets.append(silent)
        hello = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        hello.sendall(b"\x16\x03\x01\x00\xff\x01\x00\x00\xfb\x03\x03")  # the start of a ClientHello
        sockets.append(hello)
        context = pinned_client_context(ssl.TLSVersion.TLSv1_3)
        scraper = context.wrap_socket(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        scraper.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert scraper.recv(12).startswith(b"HTTP/1.1 "), "the scraper's first answer"
        sockets.append(scraper)
    finally:
        with caplog.at_level(logging.DEBUG, logger="asyncio"):
            server.stop()
        for s in sockets:
            s.close()
    problems = [r.getMessage() for r in caplog.records if r.name == "asyncio" and r.levelno >= logging.ERROR]
    assert not problems, problems
