"""TLS settings as upstream's `--tls-min-version` / `--tls-cipher-suites`: Go crypto/tls names,
translated for OpenSSL (`parse_tls_options`, `server_ssl_context`).
"""

from __future__ import annotations

import ssl
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from cvo_py.runtime import safeload
from cvo_py.runtime.errors import ConfigError

__all__ = ["TLSConfigError", "TLSOptions", "parse_tls_options", "server_ssl_context"]


class TLSConfigError(ConfigError):
    """A TLS version or cipher suite that cannot be served."""


TLS_VERSIONS: dict[str, ssl.TLSVersion] = {
    "VersionTLS10": ssl.TLSVersion.TLSv1,
    "VersionTLS11": ssl.TLSVersion.TLSv1_1,
    "VersionTLS12": ssl.TLSVersion.TLSv1_2,
    "VersionTLS13": ssl.TLSVersion.TLSv1_3,
}

# Go crypto/tls cipher-suite name → (IANA code point, OpenSSL name). Includes Go's insecure suites
# and its legacy CHACHA20 aliases, all of which the Go flag parser accepts.
GO_CIPHER_SUITES: dict[str, tuple[int, str]] = {
    "TLS_RSA_WITH_RC4_128_SHA": (0x0005, "RC4-SHA"),
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": (0x000A, "DES-CBC3-SHA"),
    "TLS_RSA_WITH_AES_128_CBC_SHA": (0x002F, "AES128-SHA"),
    "TLS_RSA_WITH_AES_256_CBC_SHA": (0x0035, "AES256-SHA"),
    "TLS_RSA_WITH_AES_128_CBC_SHA256": (0x003C, "AES128-SHA256"),
    "TLS_RSA_WITH_AES_128_GCM_SHA256": (0x009C, "AES128-GCM-SHA256"),
    "TLS_RSA_WITH_AES_256_GCM_SHA384": (0x009D, "AES256-GCM-SHA384"),
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": (0xC007, "ECDHE-ECDSA-RC4-SHA"),
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": (0xC009, "ECDHE-ECDSA-AES128-SHA"),
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": (0xC00A, "ECDHE-ECDSA-AES256-SHA"),
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": (0xC011, "ECDHE-RSA-RC4-SHA"),
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": (0xC012, "ECDHE-RSA-DES-CBC3-SHA"),
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": (0xC013, "ECDHE-RSA-AES128-SHA"),
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": (0xC014, "ECDHE-RSA-AES256-SHA"),
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": (0xC023, "ECDHE-ECDSA-AES128-SHA256"),
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": (0xC027, "ECDHE-RSA-AES128-SHA256"),
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": (0xC02B, "ECDHE-ECDSA-AES128-GCM-SHA256"),
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": (0xC02C, "ECDHE-ECDSA-AES256-GCM-SHA384"),
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": (0xC02F, "ECDHE-RSA-AES128-GCM-SHA256"),
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": (0xC030, "ECDHE-RSA-AES256-GCM-SHA384"),
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": (0xCCA8, "ECDHE-RSA-CHACHA20-POLY1305"),
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": (0xCCA9, "ECDHE-ECDSA-CHACHA20-POLY1305"),
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": (0xCCA8, "ECDHE-RSA-CHACHA20-POLY1305"),
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": (0xCCA9, "ECDHE-ECDSA-CHACHA20-POLY1305"),
    # TLS 1.3 suites: like Go, always enabled for TLS 1.3 and not configurable (OpenSSL's
    # TLS 1.3 list is not reachable from Python's ssl module either).
    "TLS_AES_128_GCM_SHA256": (0x1301, "TLS_AES_128_GCM_SHA256"),
    "TLS_AES_256_GCM_SHA384": (0x1302, "TLS_AES_256_GCM_SHA384"),
    "TLS_CHACHA20_POLY1305_SHA256": (0x1303, "TLS_CHACHA20_POLY1305_SHA256"),
}
TLS13_SUITES = frozenset({"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"})

# The cluster's default (Intermediate) TLS profile, which upstream applies when the flags are unset:
# TLS 1.2 minimum and these suites (the profile's DHE suites have no Go implementation).
DEFAULT_TLS_MIN_VERSION = "VersionTLS12"
DEFAULT_CIPHER_SUITES: tuple[str, ...] = (
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
)


@dataclass(frozen=True)
class TLSOptions:
    """What a TLS server accepts: the minimum protocol and, for TLS 1.2 and lower, the suites."""

    min_version: str = DEFAULT_TLS_MIN_VERSION
    cipher_suites: tuple[str, ...] = DEFAULT_CIPHER_SUITES

    @property
    def minimum(self) -> ssl.TLSVersion:
        return TLS_VERSIONS[self.min_version]

    def openssl_ciphers(self) -> str:
        """The OpenSSL cipher string for TLS 1.2 and lower ("" when only TLS 1.3 suites are named).

        OpenSSL 3 refuses TLS 1.0/1.1 at its default security level; asking for them as the minimum
        is an explicit choice, so the level is lowered as Go would allow them."""
        suites = [s for s in self.cipher_suites if s not in TLS13_SUITES]
        names = list(dict.fromkeys(GO_CIPHER_SUITES[s][1] for s in suites))  # aliases share a name
        if not names:
            return ""
        if self.minimum < ssl.TLSVersion.TLSv1_2:
            names.append("@SECLEVEL=0")
        return ":".join(names)


def parse_tls_options(min_version: str = "", cipher_suites: Sequence[str] = ()) -> TLSOptions:
    """Flags → TLSOptions; empty values take the default profile. Raises TLSConfigError."""
    version = min_version or DEFAULT_TLS_MIN_VERSION
    if version not in TLS_VERSIONS:
        raise TLSConfigError(f"unknown TLS version {version!r}: want one of {', '.join(TLS_VERSIONS)}")
    suites = tuple(cipher_suites) or DEFAULT_CIPHER_SUITES
    unknown = [s for s in suites if s not in GO_CIPHER_SUITES]
    if unknown:
        raise TLSConfigError(
            f"unknown cipher suite {', '.join(map(repr, unknown))}: want Go crypto/tls names, "
            "e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
        )
    options = TLSOptions(version, suites)
    if options.minimum < ssl.TLSVersion.TLSv1_3 and not options.openssl_ciphers():
        raise TLSConfigError(
            f"the cipher suites name only TLS 1.3 suites, so {version} connections could use none: "
            "add TLS 1.2 suites or set the minimum version to VersionTLS13"
        )
    for suite in suites:
        if suite not in TLS13_SUITES and not _openssl_has(GO_CIPHER_SUITES[suite][1]):
            raise TLSConfigError(f"cipher suite {suite} is not available in {ssl.OPENSSL_VERSION}")
    return options


def _openssl_has(openssl_name: str) -> bool:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.set_ciphers(f"{openssl_name}:@SECLEVEL=0")
    except ssl.SSLError:
        return False
    return True


def server_ssl_context(cert_file: str, key_file: str | None, tls: TLSOptions | None = None) -> ssl.SSLContext:
    """A server context with the certificate loaded; `tls=None` keeps OpenSSL's defaults. The files
    must be regular files within bounds (a FIFO or a device raises `DocumentError`, a ValueError,
    before OpenSSL would block on it or read it without end)."""
    for path in (cert_file, key_file):
        if path:
            safeload.read_file(path, max_bytes=safeload.CREDENTIAL_MAX_BYTES)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    if tls is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.0/1.1 asked for explicitly
            context.minimum_version = tls.minimum
        ciphers = tls.openssl_ciphers()
        if ciphers:
            context.set_ciphers(ciphers)
    return context
