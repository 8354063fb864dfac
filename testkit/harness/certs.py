"""Throwaway certificates for the metrics endpoints' TLS tests: serving, CA and client certificates."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import warnings
from collections.abc import Sequence
from pathlib import Path

import pytest


def self_signed(
    directory: Path, name: str = "tls", common_name: str = "localhost", ip: str | None = None
) -> tuple[str, str]:
    """(certificate path, key path) made by openssl; the test is skipped, visibly, without openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl not found: cannot make a serving certificate for the metrics endpoint")
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    args = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={common_name}"]
    if ip:
        args += ["-addext", f"subjectAltName=IP:{ip}"]
    subprocess.run(args + ["-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


def certificate_authority(directory: Path, name: str = "ca", common_name: str = "test-ca") -> tuple[str, str]:
    """(CA certificate path, CA key path), self-signed by openssl."""
    return self_signed(directory, name, common_name)


def client_certificate(directory: Path, name: str, ca: tuple[str, str], common_name: str) -> tuple[str, str]:
    """(certificate path, key path) of a client certificate for `common_name` signed by `ca`."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl not found: cannot make a client certificate for the metrics endpoint")
    cert, key, request = directory / f"{name}.crt", directory / f"{name}.key", directory / f"{name}.csr"
    for args in (
        ["req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={common_name}", "-keyout", str(key)]
        + ["-out", str(request)],
        ["x509", "-req", "-in", str(request), "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial", "-days", "1"]
        + ["-out", str(cert)],
    ):
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


def server_certificate(
    directory: Path, name: str, ca: tuple[str, str], dns_names: Sequence[str], ips: Sequence[str] = ()
) -> tuple[str, str]:
    """(certificate path, key path) of a serving certificate for `dns_names` and `ips` signed by
    `ca`, as the service CA issues one for a Service."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl not found: cannot make a serving certificate")
    cert, key, request, ext = (directory / f"{name}.{suffix}" for suffix in ("crt", "key", "csr", "ext"))
    ext.write_text("subjectAltName=" + ",".join([f"DNS:{d}" for d in dns_names] + [f"IP:{i}" for i in ips]) + "\n")
    for args in (
        ["req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={dns_names[0]}", "-keyout", str(key)]
        + ["-out", str(request)],
        ["x509", "-req", "-in", str(request), "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial", "-days", "1"]
        + ["-extfile", str(ext), "-out", str(cert)],
    ):
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


def pinned_client_context(version: ssl.TLSVersion, ciphers: str = "") -> ssl.SSLContext:
    """A client that speaks exactly `version` (with `ciphers`, OpenSSL names) and trusts any
    server certificate: for checking what a server with a self-signed certificate accepts."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.0/1.1 on purpose
        context.minimum_version = version
        context.maximum_version = version
    # Security level 0 lets this client offer TLS 1.1, so a refusal is the server's doing.
    context.set_ciphers(f"{ciphers or 'DEFAULT'}:@SECLEVEL=0")
    return context


def https_get(port: int, path: str, client: tuple[str, str] | None = None) -> tuple[int, str]:
    """(status, body) of GET https://127.0.0.1:<port><path>, presenting `client` (cert, key) if
    given; the server's self-signed certificate is not checked."""
    import urllib.error
    import urllib.request

    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # a self-signed serving certificate
    if client:
        context.load_cert_chain(*client)
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", context=context, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
