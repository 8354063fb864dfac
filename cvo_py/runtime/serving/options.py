"""The serving flags (`--serving-cert-file`, `--serving-key-file`, `--tls-min-version`,
`--tls-cipher-suites`), defined and validated once for every subcommand that serves.
"""

from __future__ import annotations

import argparse
import ipaddress
import ssl
from dataclasses import dataclass

from cvo_py.runtime import safeload
from cvo_py.runtime.errors import ConfigError
from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.serving.tls import TLSOptions, parse_tls_options, server_ssl_context
from cvo_py.runtime.tlstrust import ssl_detail


class ServingConfigError(ConfigError):
    """Serving flags that cannot be used together; the message is one line naming the flag."""


@dataclass(frozen=True)
class ServingOptions:
    """How to serve `--listen`: HTTPS with `cert_file`/`key_file` and `tls`, plain HTTP without a cert."""

    cert_file: str = ""
    key_file: str = ""
    tls: TLSOptions = TLSOptions()

    @property
    def https(self) -> bool:
        return bool(self.cert_file)


def add_serving_arguments(parser: argparse.ArgumentParser, *, cert_required: bool) -> None:
    """`--serving-cert-file`, `--serving-key-file`, `--tls-min-version`, `--tls-cipher-suites`."""
    if cert_required:
        cert_when = key_when = "required unless --listen is empty"
    else:
        cert_when, key_when = "without it, plain HTTP", "required with --serving-cert-file"
    parser.add_argument(
        "--serving-cert-file",
        default="",
        help=f"PEM certificate for serving metrics over HTTPS ({cert_when}); reloaded when the file changes",
    )
    parser.add_argument(
        "--serving-key-file",
        default="",
        help=f"PEM private key for serving metrics over HTTPS ({key_when})",
    )
    parser.add_argument(
        "--tls-min-version",
        default="",
        metavar="VERSION",
        help="minimum TLS version for the metrics server: VersionTLS10, VersionTLS11, VersionTLS12 or "
        "VersionTLS13 (default: the Intermediate TLS profile's, VersionTLS12)",
    )
    parser.add_argument(
        "--tls-cipher-suites",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help="cipher suites for the metrics server, Go crypto/tls names (comma-separated; may be repeated; "
        "default: the Intermediate TLS profile's); TLS 1.3 suites are always enabled for TLS 1.3",
    )


def check_serving_files_given(args: argparse.Namespace) -> None:
    """Upstream `start`'s first serving checks: a non-empty `--listen` needs both files named."""
    if args.listen and not args.serving_cert_file:
        raise ServingConfigError("--listen was not set empty, so --serving-cert-file must be set")
    if args.listen and not args.serving_key_file:
        raise ServingConfigError("--listen was not set empty, so --serving-key-file must be set")


def serving_options(args: argparse.Namespace, *, cert_required: bool) -> ServingOptions:
    """The parsed flags of `add_serving_arguments` (and `--listen`) → ServingOptions.

    Raises ListenAddressError or ServingConfigError, whose message is the one-line usage error.
    With `cert_required`, a non-empty `--listen` needs a certificate (upstream `start`); without
    it, a certificate is optional but, when given, needs its key (and the other way round)."""
    cert, key = args.serving_cert_file, args.serving_key_file
    if args.listen:
        if cert_required:
            check_serving_files_given(args)
        elif cert and not key:
            raise ServingConfigError("--serving-cert-file was set, so --serving-key-file must be set")
        elif key and not cert:
            raise ServingConfigError("--serving-key-file was set, so --serving-cert-file must be set")
        parse_listen(args.listen)
        for flag, path in (("--serving-cert-file", cert), ("--serving-key-file", key)):
            if path:  # a regular file within bounds: a FIFO or a device is refused, never read
                try:
                    safeload.read_file(path, max_bytes=safeload.CREDENTIAL_MAX_BYTES, source=f"{flag} {path!r}")
                except safeload.DocumentError as exc:
                    raise ServingConfigError(str(exc)) from None
    try:
        suites = comma_separated(args.tls_cipher_suites, "cipher suite")
        tls = parse_tls_options(args.tls_min_version, suites)
    except ValueError as exc:  # TLSConfigError included
        raise ServingConfigError(f"invalid TLS configuration: {exc}") from None
    if args.listen and cert:
        # A key that does not match, or a file that is not PEM: say so now, not with a traceback.
        try:
            server_ssl_context(cert, key, tls)
        except ssl.SSLError as exc:
            if exc.reason == "KEY_VALUES_MISMATCH":
                raise ServingConfigError(
                    f"--serving-key-file {key!r} is not the key of --serving-cert-file {cert!r}"
                ) from None
            detail = ssl_detail(exc)
            raise ServingConfigError(
                f"cannot load --serving-cert-file {cert!r} and --serving-key-file {key!r}: "
                f"want a PEM certificate and its PEM private key ({detail})"
            ) from None
        except OSError as exc:
            raise ServingConfigError(
                f"cannot read --serving-cert-file {cert!r} or --serving-key-file {key!r}: {exc.strerror or exc}"
            ) from None
    return ServingOptions(cert, key, tls)


def comma_separated(values: list[str], what: str) -> list[str]:
    """The names of a repeatable comma-separated flag (`A,B --flag C`); surrounding spaces are
    dropped. An empty value means none (the default); an empty name inside a value (`,,,`, `A,`)
    is a ValueError, as Go's flag parser reads it as a name no one has."""
    names: list[str] = []
    for value in values:
        if not value:
            continue
        parts = [n.strip() for n in value.split(",")]
        if "" in parts:
            raise ValueError(f"empty {what} name in {go_quote(value)}")
        names.extend(parts)
    return names


class ListenAddressError(ConfigError):
    """A --listen value that is not HOST:PORT (an address that cannot be listened on is the
    server's ServerError)."""


def parse_listen(address: str) -> tuple[str, int]:
    """`host:port` → (host, port), as Go's net.SplitHostPort takes it: the host empty, an IPv4
    address, a bracketed IPv6 address or a DNS name; the port 0-65535 in ASCII digits."""
    host, sep, port_text = address.rpartition(":")
    valid = bool(sep) and port_text.isascii() and port_text.isdigit() and int(port_text) <= 65535
    if valid and host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        valid = _is_ip(host, 6)
    elif valid and host:
        valid = _is_ip(host, 4) or (not _looks_numeric(host) and _is_dns_name(host))
    if not valid:
        raise ListenAddressError(f"invalid --listen address {address!r}: want HOST:PORT, e.g. 0.0.0.0:9099")
    return host or "0.0.0.0", int(port_text)


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version
    except ValueError:
        return False


def _looks_numeric(host: str) -> bool:
    return all(part.isdigit() for part in host.split("."))


def _is_dns_name(host: str) -> bool:
    """RFC 1123 host name: dot-separated labels of ASCII letters, digits and inner hyphens."""
    labels = host.removesuffix(".").split(".")
    return len(host) <= 253 and all(
        0 < len(label) <= 63
        and label.isascii()
        and all(c.isalnum() or c == "-" for c in label)
        and not label.startswith("-")
        and not label.endswith("-")
        for label in labels
    )
