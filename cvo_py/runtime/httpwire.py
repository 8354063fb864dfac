"""HTTP/1.1 on the wire as the API client speaks it (`cvo_py.runtime.connections`, which sends
and pools): a request's head written, an answer read from a socket's reader.

    sock.sendall(request_head("GET", "/version", headers, None, host_header(host, port, True)))
    answer = Answer(sock.makefile("rb"), "GET")
    answer.status, answer.headers.get("Content-Type"), answer.read(), answer.will_close

Written and read here rather than by the standard library's `http.client`, which reads a
response's headers with the `email` package, whose import was a tenth of a short-lived command's
start-up (`upgrade-status`, bench/README.md). Requests are written byte for byte as http.client
writes them, and answers read by its rules and bounds (a line of at most 65,536 bytes, at most 100
header lines, the body framed by chunked encoding, Content-Length or the connection's end,
`Connection` deciding reuse); tests/cvo_py/runtime/test_connections.py compares both with
http.client on random answers. Where an answer is malformed or hostile it is read as Go's client
reads it: a header line without a colon, a head cut short, a chunk size that is not hexadecimal
or over 16 digits, a Content-Length past 2^63, more than 5 informational (1xx) heads before the
answer are errors worded as Go words them (`HTTPError`); a 1xx head is skipped, a 204 or 304 has
no body whatever its head says, a whole body is read in pieces (a declared length is not
allocated up front), and a stream hands over what has arrived.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping
from typing import BinaryIO

from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.gotext.quoting import go_quote

MAX_LINE = 65536  # bytes in a status, header or chunk-size line, as http.client bounds them
MAX_HEADERS = 100  # header lines in an answer, as http.client bounds them
BROKEN = "net/http: HTTP/1.x transport connection broken: "
_EXPECTING_BODY = ("PATCH", "POST", "PUT")  # a request of these without a body says Content-Length: 0
# What http.client refuses to send: control characters in the method or target, header names that
# are not `token`-like, and a CR or LF in a value that does not start a folded line.
_BAD_METHOD = re.compile("[\x00-\x1f]")
_BAD_TARGET = re.compile("[\x00-\x20\x7f]")
_HEADER_NAME = re.compile(rb"[^:\s][^:\r\n]*")
_BAD_HEADER_VALUE = re.compile(rb"\n(?![ \t])|\r(?![ \t\n])")
_STATUS_CODE = re.compile("[0-9]{3}")
_HEX = re.compile(rb"[0-9a-fA-F]+")  # a chunk size
MAX_INFORMATIONAL = 5  # 1xx heads skipped before an answer, as Go bounds them
READ_PIECE = 1 << 20  # what a whole body is read in (a declared length is not allocated up front)
MAX_LENGTH = (1 << 63) - 1  # a Content-Length Go can hold


class HTTPError(ClientError):
    """An answer that is not HTTP/1.x as this client reads it, or a request it will not send;
    str() is how Go's client words it."""


class Headers:
    """An answer's headers: `get` is case-insensitive and gives the first of a repeated name."""

    __slots__ = ("_first",)

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._first: dict[str, str] = {}
        for name, value in fields:
            self._first.setdefault(name.lower(), value)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._first.get(name.lower(), default)


class Answer:
    """One answer's head, read, and its body, read on demand (whole, or as it arrives), from a
    reader of its own (what it reads ahead of the answer's end is never taken for the next one)."""

    def __init__(self, fp: BinaryIO, method: str) -> None:
        self._fp = fp
        for _ in range(MAX_INFORMATIONAL + 1):  # 1xx heads before the answer are skipped, as Go skips them
            version, self.status = _status_line(fp)
            fields = _header_fields(fp)
            if not 100 <= self.status < 200 or self.status == 101:
                break
        else:
            raise HTTPError("net/http: too many 1xx informational responses")
        self.headers = Headers(fields)
        self.will_close = _closes(version, self.headers)
        self._chunked = (self.headers.get("Transfer-Encoding") or "").lower() == "chunked"
        self._left: int | None = None if self._chunked else _length(self.headers.get("Content-Length"))
        if method == "HEAD" or self.status in (101, 204, 304):  # no body, whatever the head says (Go)
            self._chunked, self._left = False, 0
        if not self.will_close and not self._chunked and self._left is None:
            self.will_close = True  # read until the server closes: the connection cannot be reused
        self._chunk_left = 0  # bytes left of the chunk being read
        self._done = False

    def read(self) -> bytes:
        """The whole body, read in pieces (a length a server declares is not allocated up front)."""
        return b"".join(self.pieces(READ_PIECE))

    def close(self) -> None:
        self._fp.close()

    def pieces(self, most: int) -> Iterator[bytes]:
        """The body as it arrives, in pieces of at most `most` bytes, until it ends."""
        while not self._done:
            piece = self._next(most)
            if piece:
                yield piece

    def _next(self, most: int) -> bytes:
        if self._chunked:
            if self._chunk_left == 0:
                self._chunk_left = _chunk_size(self._fp)
                if self._chunk_left == 0:
                    _trailer(self._fp)
                    self._done = True
                    return b""
            piece = _some(self._fp, min(self._chunk_left, most))
            self._chunk_left -= len(piece)
            if self._chunk_left == 0:
                _exactly(self._fp, 2)  # the CRLF after the chunk's data
            return piece
        if self._left is None:  # to the connection's end
            piece = bytes(self._fp.read1(most))  # type: ignore[attr-defined]
            self._done = not piece
            return piece
        piece = _some(self._fp, min(self._left, most))
        self._left -= len(piece)
        self._done = self._left == 0
        return piece


def _status_line(fp: BinaryIO) -> tuple[str, int]:
    line = _line(fp)
    if not line:
        raise HTTPError("EOF")  # closed before any answer, as Go says it
    text = line.decode("iso-8859-1")
    parts = text.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not _STATUS_CODE.fullmatch(parts[1]):
        raise HTTPError(f"{BROKEN}malformed HTTP response {go_quote(text.strip()[:100])}")
    status = int(parts[1])
    if status < 100:
        raise HTTPError(f"{BROKEN}malformed HTTP status code {go_quote(parts[1])}")
    if parts[0] not in ("HTTP/1.0", "HTTP/0.9") and not parts[0].startswith("HTTP/1."):
        raise HTTPError(f"{BROKEN}malformed HTTP version {go_quote(parts[0])}")
    return parts[0], status


def _header_fields(fp: BinaryIO) -> list[tuple[str, str]]:
    """The header lines up to the blank line, as (name, value); a folded line continues the value
    before it, joined with a space, as Go joins it."""
    fields: list[tuple[str, str]] = []
    for count in range(1, sys.maxsize):
        line = _line(fp)  # read first: an over-long 101st line is said as http.client says it
        if count > MAX_HEADERS:  # the blank line counted too, as http.client counts it
            raise HTTPError(f"{BROKEN}more than {MAX_HEADERS} response headers")
        if not line:
            raise HTTPError("unexpected EOF")
        if line in (b"\r\n", b"\n"):
            return fields
        text = line.decode("iso-8859-1").rstrip("\r\n")
        if text[:1] in (" ", "\t") and fields:
            name, value = fields[-1]
            fields[-1] = (name, f"{value} {text.strip()}".strip())
            continue
        name, colon, value = text.partition(":")
        if not colon or not name or name != name.strip():
            raise HTTPError(f"{BROKEN}malformed MIME header line: {go_quote(text[:100])[1:-1]}")
        fields.append((name, value.strip(" \t")))
    raise AssertionError("unreachable")


def _trailer(fp: BinaryIO) -> None:
    """The lines after the last chunk, read and dropped up to the blank line, as http.client
    drops them (the connection's end there loses nothing: the body is whole)."""
    for _ in range(MAX_HEADERS + 1):
        if _line(fp, head=False) in (b"\r\n", b"\n", b""):
            return
    raise HTTPError(f"{BROKEN}more than {MAX_HEADERS} response headers")


def _line(fp: BinaryIO, *, head: bool = True) -> bytes:
    """One line of at most MAX_LINE bytes; in the head, one the connection's end cuts short (or
    the end before the blank line) is `unexpected EOF`, as Go says of an answer cut short."""
    line = fp.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise HTTPError(f"{BROKEN}a response line is longer than {MAX_LINE} bytes")
    if head and line and not line.endswith(b"\n"):
        raise HTTPError("unexpected EOF")
    return line


def _chunk_size(fp: BinaryIO) -> int:
    line = _line(fp, head=False)  # a size cut short is read as it stands, as http.client reads it
    if not line:
        raise HTTPError("unexpected EOF")
    size = line.split(b";", 1)[0].strip()
    if not _HEX.fullmatch(size):
        raise HTTPError("invalid byte in chunk length")
    if len(size) > 16:  # as Go reads one
        raise HTTPError("http chunk length too large")
    return int(size, 16)


def _some(fp: BinaryIO, most: int) -> bytes:
    """What has arrived, up to `most` bytes (at least one: the end of the connection here is
    `unexpected EOF`)."""
    data = fp.read1(most) if most else b""  # type: ignore[attr-defined]
    if most and not data:
        raise HTTPError("unexpected EOF")
    return bytes(data)


def _exactly(fp: BinaryIO, count: int) -> bytes:
    data = fp.read(count)
    if len(data) < count:
        raise HTTPError("unexpected EOF")
    return data


def _length(declared: str | None) -> int | None:
    """Content-Length as http.client takes it: not a number, or negative, is none at all; one
    past what Go can hold is refused as Go refuses it."""
    if declared is None:
        return None
    if len(declared) > 64:  # no length Go holds is written this long
        raise HTTPError(f"{BROKEN}bad Content-Length {go_quote(declared[:40] + '…')}")
    try:
        length = int(declared)
    except ValueError:
        return None
    if length > MAX_LENGTH:
        raise HTTPError(f"{BROKEN}bad Content-Length {go_quote(declared)}")
    return length if length >= 0 else None


def _closes(version: str, headers: Headers) -> bool:
    """Whether the server ends the connection after this answer (http.client's rules)."""
    connection = (headers.get("Connection") or "").lower()
    if version not in ("HTTP/1.0", "HTTP/0.9"):
        return "close" in connection
    proxy = (headers.get("Proxy-Connection") or "").lower()
    return not (headers.get("Keep-Alive") or "keep-alive" in connection or "keep-alive" in proxy)


def request_head(method: str, target: str, headers: Mapping[str, str], body: bytes | None, host: bytes) -> bytes:
    """The request line and headers as http.client writes them: Host (`host`, see `host_header`)
    and `Accept-Encoding: identity` unless given, then Content-Length, then the caller's headers; what http.client
    refuses to send is refused the same way (an HTTPError for the target, else a ValueError)."""
    if found := _BAD_METHOD.search(method):
        raise ValueError(f"method can't contain control characters. {method!r} (found at least {found.group()!r})")
    if _BAD_TARGET.search(target):
        raise HTTPError(f"parse {go_quote(target)}: net/url: invalid control character in URL")
    given = {name.lower() for name in headers}
    lines = [f"{method} {target} HTTP/1.1".encode("ascii")]
    if "host" not in given:
        lines.append(b"Host: " + host)
    if "accept-encoding" not in given:
        lines.append(b"Accept-Encoding: identity")
    framed = "content-length" in given or "transfer-encoding" in given
    if not framed and (body is not None or method.upper() in _EXPECTING_BODY):
        lines.append(b"Content-Length: %d" % len(body or b""))
    for name, value in headers.items():
        encoded_name, encoded_value = name.encode("ascii"), value.encode("latin-1")
        if not _HEADER_NAME.fullmatch(encoded_name):
            raise ValueError(f"Invalid header name {encoded_name!r}")
        if _BAD_HEADER_VALUE.search(encoded_value):
            raise ValueError(f"Invalid header value {encoded_value!r}")
        lines.append(encoded_name + b": " + encoded_value)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def host_header(host: str, port: int, https: bool) -> bytes:
    """The Host header's value for a server, as http.client writes it (no IPv6 zone, the port
    unless it is the scheme's)."""
    shown = f"[{host.partition('%')[0]}]" if ":" in host else host
    if port != (443 if https else 80):
        shown = f"{shown}:{port}"
    return shown.encode("ascii") if shown.isascii() else shown.encode("idna")
