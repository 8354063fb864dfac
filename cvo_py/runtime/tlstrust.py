"""The CA bundle a client trusts, read from a file named from outside (a kubeconfig, a flag) or
given as a kubeconfig's certificate-authority-data.

    client_context(ca_file, data=None) -> ssl.SSLContext    verifying servers against `data`'s
                                                  CAs, else the file's (the system's when neither)

The file is read with `cvo_py.runtime.safeload.read_file` (a regular file within `CREDENTIAL_MAX_BYTES`:
a FIFO or `/dev/zero` is refused, never read) and must hold at least one PEM certificate that
loads. Every problem is a `TrustError`, one line naming the file; clients call this for each new
connection or request, so a rotated bundle is used and a broken one is reported, never a hang.
"""

from __future__ import annotations

import re
import ssl

from cvo_py.runtime import safeload
from cvo_py.runtime.errors import ConfigError
from cvo_py.runtime.gotext.quoting import escape


class TrustError(ConfigError):
    """A CA file that cannot be used; one line naming it."""


def client_context(ca_file: str | None, *, data: bytes | None = None) -> ssl.SSLContext:
    """A client context that verifies servers against `data`'s certificates (a kubeconfig's
    certificate-authority-data), else `ca_file`'s, else the system's (hostname checked)."""
    if data is not None:
        where = "CA data (certificate-authority-data)"
    elif not ca_file:
        return ssl.create_default_context()
    else:
        where = f"CA file {escape(ca_file)}"
        try:
            data = safeload.read_file(ca_file, max_bytes=safeload.CREDENTIAL_MAX_BYTES)
        except safeload.DocumentError as exc:
            raise TrustError(f"CA file {exc}") from None
    text = data.decode("ascii", "replace")
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise TrustError(f"{where}: no PEM certificate in it")
    try:
        return ssl.create_default_context(cadata=text)
    except (ssl.SSLError, ValueError) as exc:
        detail = ssl_detail(exc)
        raise TrustError(f"{where}: not a usable PEM certificate bundle ({detail})") from None


def ssl_detail(exc: BaseException) -> str:
    """An OpenSSL error's reason without the `(_ssl.c:1006)` source location."""
    return re.sub(r" \(_ssl\.c:\d+\)$", "", getattr(exc, "strerror", None) or str(exc))
