"""URLs from outside (flags, kubeconfigs, the update service's graph) checked as Go reads them.

    url_problem(url) -> str        why Go's url.Parse refuses `url` ("" when it parses), in its words
    http_url_problem(url) -> str   also: why an HTTP client could not send a request to it

Both are pure and never raise: a value Python's `urlsplit` chokes on (`http://[::1`, port 99999)
is a message, not a traceback.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from cvo_py.runtime.gotext.quoting import go_quote

_ESCAPE = re.compile(r"%(.{0,2})")
_HEX2 = re.compile(r"[0-9a-fA-F]{2}")


def url_problem(url: str) -> str:
    """Why `url` does not parse ('' when it does). Like Go's URL parser, a scheme-less value parses
    (a request to it fails later); a port must be a number up to 65535."""
    prefix = f"parse {go_quote(url)}: "
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return prefix + "net/url: invalid control character in URL"
    for match in _ESCAPE.finditer(url):
        if not _HEX2.fullmatch(match.group(1)):
            return prefix + f"invalid URL escape {go_quote(match.group(0))}"
    if url.startswith(":"):
        return prefix + "missing protocol scheme"
    try:
        parts = urlsplit(url)
    except ValueError:
        return prefix + "missing ']' in host"
    if " " in parts.netloc:
        return prefix + 'invalid character " " in host name'
    try:
        _ = parts.port
    except ValueError:
        return prefix + f"invalid port {go_quote(':' + parts.netloc.rsplit(':', 1)[-1])} after host"
    return ""


def http_url_problem(url: str) -> str:
    """Why no HTTP request can be sent to `url` ('' when one can): it must parse, be http or https,
    name a host, and any port must be 1-65535. Worded as Go's HTTP client words it."""
    problem = url_problem(url)
    if problem:
        return problem
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return f"unsupported protocol scheme {go_quote(parts.scheme)}"
    if not parts.hostname:
        return "http: no Host in request URL"
    if parts.port == 0:
        return f"invalid port {go_quote(':0')}: want 1-65535"
    if any(not c.isprintable() or c.isspace() for c in parts.netloc):
        return f"parse {go_quote(url)}: invalid character in host name"
    host = parts.hostname
    if ":" not in host and (len(host) > 253 or not all(0 < len(label) <= 63 for label in host.rstrip(".").split("."))):
        return f"invalid host name {go_quote(host[:80] + ('…' if len(host) > 80 else ''))}: no DNS name has it"
    return ""
