"""HTTP/1.1 as the metrics server speaks it: a request's line and headers read within the
connection's bounds and parsed, and a response written.

A request carries no body the server reads (GET and HEAD are all it answers): one that announces a
body is answered, then its connection closed. The request line and headers are at most
`max_header_bytes` (else 431) in at most `max_header_lines` lines (else 431); a line that is not
`NAME: value` with a token for a name, a folded line, or a request line that is not
`METHOD TARGET HTTP/1.x` is a 400, as Go's net/http server refuses them. `read_request` raises
`Refused` for those, which the server answers before closing the connection.

This parser is the project's own, not h11's (a sans-I/O HTTP/1.1 parser): measured on the same
inputs and attacks (`bench/http_parsers.py`, figures in bench/README.md), h11 held every bound
under attack but took 2 to 4 times the CPU per request on the one event-loop thread, and failed
three of the serving tests' cases (it takes `HTTP/9.9`; it refuses a request without Host before
its method or line count is judged). docs/design.md §7 says more, and where this parser is more
lenient than Go's.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
from collections.abc import Callable
from typing import NamedTuple

from cvo_py.runtime import klog
from cvo_py.runtime.errors import ServerError
from cvo_py.runtime.serving.admission import ServingLimits
from cvo_py.runtime.serving.stream import Stream

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}
# A blank line ends the headers (CRLF, or LF as Go also takes it). Starting with the literal `\n`
# lets the regex engine skip to each newline: a leading `\r?` makes it try every byte, 25× slower.
_END_OF_HEADERS = re.compile(rb"\n\r?\n")
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


class Refused(ServerError):
    """A request answered with an error and the connection closed (400, 431)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Request(NamedTuple):
    method: bytes
    path: str
    keep_alive: bool


async def read_request(
    stream: Stream, limits: ServingLimits, hold: Callable[[int], None], leftover: bytes, deadline: float | None
) -> tuple[Request | None, bytes]:
    """The next request's line and headers (None at the end of the connection, or when they do not
    come in time) and what followed them; `Refused` for a request that breaks the bounds or
    HTTP/1.1's syntax. `hold(n)` is told the bytes held while the headers are incomplete (it may
    close the connection to keep all connections' bytes bounded). `deadline` bounds the whole
    request (a new connection's first); without it the first byte may take the idle timeout, the
    rest the header timeout."""
    loop = asyncio.get_running_loop()
    buffer = bytearray(leftover)
    try:
        if not buffer:
            async with asyncio.timeout_at(deadline if deadline is not None else loop.time() + limits.idle_timeout):
                chunk = await stream.read(limits.read_chunk)
            if not chunk:
                return None, b""
            buffer += chunk
        if deadline is None:
            deadline = loop.time() + limits.header_timeout
        async with asyncio.timeout_at(deadline):
            searched = 0
            while (end := _END_OF_HEADERS.search(buffer, max(0, searched - 3))) is None:
                if len(buffer) > limits.max_header_bytes:
                    raise Refused(431)
                searched = len(buffer)
                hold(len(buffer))
                chunk = await stream.read(limits.read_chunk)
                if not chunk:
                    return None, b""
                buffer += chunk
    except TimeoutError:
        klog.v(4).info("Closing a metrics connection that sent no complete request in time")
        return None, b""
    if end.start() > limits.max_header_bytes:
        raise Refused(431)
    head, rest = bytes(buffer[: end.start()]), bytes(buffer[end.end() :])
    return parse(head, limits.max_header_lines), rest


def parse(head: bytes, max_lines: int) -> Request:
    """A request line and its headers (without the blank line) → Request; Refused when malformed."""
    lines = head.split(b"\n")
    if len(lines) - 1 > max_lines:
        raise Refused(431)
    parts = lines[0].rstrip(b"\r").split(b" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise Refused(400)
    method, target, version = parts
    connection = b""
    body = False
    for raw in lines[1:]:
        line = raw.rstrip(b"\r")
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.fullmatch(name):  # also a folded line (leading space), as Go refuses
            raise Refused(400)
        lowered = name.lower()
        if lowered == b"connection":
            connection += b"," + value.strip().lower()
        elif lowered == b"transfer-encoding" or (lowered == b"content-length" and value.strip() != b"0"):
            body = True  # never read: answered, then the connection is closed
    tokens = {t.strip() for t in connection.split(b",")}
    keep_alive = (b"close" not in tokens) if version == b"HTTP/1.1" else (b"keep-alive" in tokens)
    path = target.split(b"?", 1)[0].decode("latin-1")
    return Request(method, path, keep_alive and not body)


async def write_response(
    stream: Stream,
    code: int,
    body: bytes,
    ctype: str,
    *,
    keep_alive: bool,
    head: bool,
    write_timeout: float,
    extra: tuple[tuple[str, str], ...] = (),
) -> None:
    """The response, written within `write_timeout` (and the connection closed unless kept alive);
    `head`: the headers only, as a HEAD request gets them."""
    lines = [
        f"HTTP/1.1 {code} {REASONS.get(code, '')}",
        f"Content-Type: {ctype}",
        f"Content-Length: {len(body)}",
        f"Date: {email.utils.formatdate(usegmt=True)}",
        *(f"{name}: {value}" for name, value in extra),
    ]
    if not keep_alive:
        lines.append("Connection: close")
    stream.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head else body))
    async with asyncio.timeout(write_timeout):
        await stream.drain()
        if not keep_alive:
            await stream.close()


def error_body(code: int) -> bytes:
    return f"{code} {REASONS.get(code, '')}".encode()
