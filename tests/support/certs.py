"""Throwaway self-signed serving certificates for the metrics endpoints' TLS tests."""

from __future__ import annotations

import shutil
import subprocess
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
