"""Keep-alive HTTP(S) connections to one server: the API client's transport.

    pool = ConnectionPool("https://api.example:6443", make_ssl_context)
    response = pool.request("GET", "/api/v1/namespaces", headers, read_timeout=30.0)
    response.status, response.headers.get("Content-Type"), response.data

    stream = pool.stream("GET", "/api/v1/pods?watch=true", headers, read_timeout=300.0)
    for chunk in stream.chunks(): ...   # another thread may call stream.shutdown()
    stream.close()

HTTP/1.1 is written and read here, on the socket: the standard library's `http.client` reads a
response's headers with the `email` package, whose import was a tenth of a short-lived command's
start-up (`upgrade-status`, bench/README.md). Requests are written byte for byte as http.client
writes them, and answers read by its rules and bounds (a line of at most 65,536 bytes, at most 100
header lines, the body framed by chunked encoding, Content-Length or the connection's end,
`Connection` deciding reuse), each answer from a reader of its own; tests/cvo_py/runtime/
test_connections.py compares both with http.client on random answers. Where an answer is
malformed or hostile it is read as Go's client reads it: a header line without a colon, a head
cut short, a chunk size that is not hexadecimal or over 16 digits, a Content-Length past 2^63, more
than 5 informational (1xx) heads before the answer are errors worded as Go words them; a 1xx head
is skipped, a 204 or 304 has no body whatever its head says, a whole body is read in pieces (a
declared length is not allocated up front), and a stream hands over what has arrived.

Requests are never retried here (the API client decides what to retry); an idle connection the
server has closed meanwhile is noticed before reuse and replaced, as urllib3 does. Each new
connection gets a new TLS context from the factory it is given, so CA and client certificate
files rotated on disk (a Pod's `ca.crt`) are read again, as urllib3 reads them. Every failure to
connect, send or read is an `OSError` or an `HTTPError`; `go_cause` words either as Go's client.
"""

from __future__ import annotations

import re
import select
import socket
import ssl
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import BinaryIO, NamedTuple
from urllib.parse import urlsplit

from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.gotext.quoting import go_quote

CONNECT_TIMEOUT = 10.0
STREAM_CHUNK = 65536
MAX_LINE = 65536  # bytes in a status, header or chunk-size line, as http.client bounds them
MAX_HEADERS = 100  # header lines in an answer, as http.client bounds them
_BROKEN = "net/http: HTTP/1.x transport connection broken: "
_EXPECTING_BODY = ("PATCH", "POST", "PUT")  # a request of these without a body says Content-Length: 0
# What http.client refuses to send: control characters in the method or target, header names that
# are not `token`-like, and a CR or LF in a value that does not start a folded line.
_BAD_METHOD = re.compile("[\x00-\x1f]")
_BAD_TARGET = re.compile("[\x00-\x20\x7f]")
_HEADER_NAME = re.compile(rb"[^:\s][^:\r\n]*")
_BAD_HEADER_VALUE = re.compile(rb"\n(?![ \t])|\r(?![ \t\n])")
_STATUS_CODE = re.compile("[0-9]{3}")
_HEX = re.compile(rb"[0-9a-fA-F]{1,16}")  # a chunk size, at most 16 digits as Go reads one
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


class Response(NamedTuple):
    status: int
    headers: Headers
    data: bytes


class _Answer:
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
        raise HTTPError(f"{_BROKEN}malformed HTTP response {go_quote(text.strip()[:100])}")
    status = int(parts[1])
    if status < 100:
        raise HTTPError(f"{_BROKEN}malformed HTTP status code {go_quote(parts[1])}")
    if parts[0] not in ("HTTP/1.0", "HTTP/0.9") and not parts[0].startswith("HTTP/1."):
        raise HTTPError(f"{_BROKEN}malformed HTTP version {go_quote(parts[0])}")
    return parts[0], status


def _header_fields(fp: BinaryIO) -> list[tuple[str, str]]:
    """The header lines up to the blank line, as (name, value); a folded line continues the value
    before it, joined with a space, as Go joins it."""
    fields: list[tuple[str, str]] = []
    for count in range(1, sys.maxsize):
        line = _line(fp)
        if count > MAX_HEADERS:  # the blank line counted too, as http.client counts it
            raise HTTPError(f"{_BROKEN}more than {MAX_HEADERS} response headers")
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
            raise HTTPError(f"{_BROKEN}malformed MIME header line: {go_quote(text[:100])[1:-1]}")
        fields.append((name, value.strip(" \t")))
    raise AssertionError("unreachable")


def _trailer(fp: BinaryIO) -> None:
    """The lines after the last chunk, read and dropped up to the blank line, as http.client
    drops them (the connection's end there loses nothing: the body is whole)."""
    for _ in range(MAX_HEADERS + 1):
        if _line(fp, head=False) in (b"\r\n", b"\n", b""):
            return
    raise HTTPError(f"{_BROKEN}more than {MAX_HEADERS} response headers")


def _line(fp: BinaryIO, *, head: bool = True) -> bytes:
    """One line of at most MAX_LINE bytes; in the head, one the connection's end cuts short (or
    the end before the blank line) is `unexpected EOF`, as Go says of an answer cut short."""
    line = fp.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise HTTPError(f"{_BROKEN}a response line is longer than {MAX_LINE} bytes")
    if head and line and not line.endswith(b"\n"):
        raise HTTPError("unexpected EOF")
    return line


def _chunk_size(fp: BinaryIO) -> int:
    line = _line(fp, head=False)  # a size cut short is read as it stands, as http.client reads it
    if not line:
        raise HTTPError("unexpected EOF")
    size = line.split(b";", 1)[0].strip()
    if re.fullmatch(rb"[0-9a-fA-F]+", size) and not _HEX.fullmatch(size):
        raise HTTPError("http chunk length too large")
    if not _HEX.fullmatch(size):
        raise HTTPError("invalid byte in chunk length")
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
        raise HTTPError(f"{_BROKEN}bad Content-Length {go_quote(declared[:40] + '…')}")
    try:
        length = int(declared)
    except ValueError:
        return None
    if length > MAX_LENGTH:
        raise HTTPError(f"{_BROKEN}bad Content-Length {go_quote(declared)}")
    return length if length >= 0 else None


def _closes(version: str, headers: Headers) -> bool:
    """Whether the server ends the connection after this answer (http.client's rules)."""
    connection = (headers.get("Connection") or "").lower()
    if version not in ("HTTP/1.0", "HTTP/0.9"):
        return "close" in connection
    proxy = (headers.get("Proxy-Connection") or "").lower()
    return not (headers.get("Keep-Alive") or "keep-alive" in connection or "keep-alive" in proxy)


class _Connection:
    """One socket to the server."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock: socket.socket | None = sock

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            sock.close()


class Stream:
    """A response read as it arrives (a watch); its connection is never reused."""

    def __init__(self, conn: _Connection, answer: _Answer) -> None:
        self._conn = conn
        self._sock = conn.sock
        self._answer = answer
        self.status = answer.status
        self.headers = answer.headers

    def read(self) -> bytes:
        return self._answer.read()

    def chunks(self) -> Iterator[bytes]:
        """The body as it arrives, in pieces of at most `STREAM_CHUNK` bytes, until it ends."""
        return self._answer.pieces(STREAM_CHUNK)

    def shutdown(self) -> None:
        """End the stream from any thread: a reader blocked in `chunks()` returns or raises promptly."""
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed
                pass

    def close(self) -> None:
        self._answer.close()
        self._conn.close()


class ConnectionPool:
    """Thread-safe: each request takes an idle connection (or opens one) and gives it back when
    its response has been read, keeping at most `maxsize` idle ones."""

    def __init__(
        self,
        base_url: str,
        tls: Callable[[], ssl.SSLContext] | None = None,
        maxsize: int = 16,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http or https URL: {base_url}")
        self._https = url.scheme == "https"
        self._prefix = url.path.rstrip("/")  # a server behind a path (a proxy's): every target is under it
        self._host = url.hostname
        self._port = url.port or (443 if self._https else 80)
        self._tls = tls if tls is not None else ssl.create_default_context  # called for each new connection
        self._maxsize = maxsize
        self._connect_timeout = connect_timeout
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()

    def request(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes | None = None, *, read_timeout: float
    ) -> Response:
        """Send one request and read its whole response; `target` is the path (under the base
        URL's) and the query."""
        conn = self._take(read_timeout)
        try:
            answer = self._exchange(conn, method, target, headers, body)
            try:
                data = answer.read()
            finally:
                answer.close()
        except BaseException:
            conn.close()
            raise
        if answer.will_close:
            conn.close()
        else:
            self._give_back(conn)
        return Response(answer.status, answer.headers, data)

    def stream(self, method: str, target: str, headers: Mapping[str, str], *, read_timeout: float) -> Stream:
        """Send one request and return its response unread; the caller must `close()` it."""
        conn = self._take(read_timeout)
        try:
            return Stream(conn, self._exchange(conn, method, target, headers, None))
        except BaseException:
            conn.close()
            raise

    def clear(self) -> None:
        """Close the idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _exchange(
        self, conn: _Connection, method: str, target: str, headers: Mapping[str, str], body: bytes | None
    ) -> _Answer:
        """Send the request (its head and body in one write, as http.client sends them) and read
        the answer's head."""
        assert conn.sock is not None
        conn.sock.sendall(self._head(method, self._prefix + target, headers, body) + (body or b""))
        fp = conn.sock.makefile("rb")
        try:
            return _Answer(fp, method)
        except BaseException:
            fp.close()
            raise

    def _head(self, method: str, target: str, headers: Mapping[str, str], body: bytes | None) -> bytes:
        """The request line and headers as http.client writes them: Host and `Accept-Encoding:
        identity` unless given, then Content-Length, then the caller's headers; what http.client
        refuses to send is refused the same way (an HTTPError for the target, else a ValueError)."""
        if found := _BAD_METHOD.search(method):
            raise ValueError(f"method can't contain control characters. {method!r} (found at least {found.group()!r})")
        if _BAD_TARGET.search(target):
            raise HTTPError(f"parse {go_quote(target)}: net/url: invalid control character in URL")
        given = {name.lower() for name in headers}
        lines = [f"{method} {target} HTTP/1.1".encode("ascii")]
        if "host" not in given:
            lines.append(b"Host: " + self._host_header())
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

    def _host_header(self) -> bytes:
        host = f"[{self._host.partition('%')[0]}]" if ":" in self._host else self._host  # no IPv6 zone
        if self._port != (443 if self._https else 80):
            host = f"{host}:{self._port}"
        return host.encode("ascii") if host.isascii() else host.encode("idna")

    def _take(self, read_timeout: float) -> _Connection:
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._connect(read_timeout)
            if conn.sock is not None and not _dropped(conn.sock):
                conn.sock.settimeout(read_timeout)
                return conn
            conn.close()

    def _connect(self, read_timeout: float) -> _Connection:
        tls = self._tls() if self._https else None
        sock = self._dial(tls)
        sock.settimeout(read_timeout)
        return _Connection(sock)

    def _dial(self, tls: ssl.SSLContext | None) -> socket.socket:
        """A TCP connection (TLS on it when `tls`) to the server. An ASCII host name is given as
        bytes: a str name goes through the IDNA codec (in the lookup and in TLS), which leaves an
        ASCII name as it is and whose import a short-lived command can do without
        (`upgrade-status`'s fast path, measured in bench/README.md)."""
        name: str | bytes = self._host.encode("ascii") if self._host.isascii() else self._host
        sock = socket.create_connection((name, self._port), self._connect_timeout)  # type: ignore[arg-type]
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no delayed small writes
            return sock if tls is None else tls.wrap_socket(sock, server_hostname=name)
        except BaseException:
            sock.close()
            raise

    def _give_back(self, conn: _Connection) -> None:
        with self._lock:
            if len(self._idle) < self._maxsize:
                self._idle.append(conn)
                return
        conn.close()


def go_cause(exc: BaseException, host: str, port: int) -> str:
    """A transport failure as Go's client words it, on one line, never Python's own wording
    (`[Errno 104]`, `RemoteDisconnected(...)`): `EOF`, `read tcp H:P: read: connection reset by
    peer`, `dial tcp H:P: connect: connection refused`, `net/http: HTTP/1.x transport connection
    broken: malformed HTTP response "…"`, ... `host`/`port` are the server's. Takes this module's
    HTTPError, OS and TLS errors, and what `http.client` raises (under urllib3: `httpget`)."""
    target = f"{host}:{port}"
    if isinstance(exc, HTTPError):
        return str(exc)
    stdlib = _stdlib_cause(exc)
    if stdlib:
        return stdlib
    if isinstance(exc, ConnectionResetError):
        return f"read tcp {target}: read: connection reset by peer"
    if isinstance(exc, BrokenPipeError):
        return f"write tcp {target}: write: broken pipe"
    if isinstance(exc, ConnectionRefusedError):
        return f"dial tcp {target}: connect: connection refused"
    if isinstance(exc, socket.gaierror):
        return f"dial tcp: lookup {host}: no such host"
    if isinstance(exc, TimeoutError):
        return f"dial tcp {target}: i/o timeout"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return "tls: failed to verify certificate: x509: " + os_text(exc.verify_message or "certificate verify failed")
    if isinstance(exc, ssl.SSLError):
        return "tls: " + os_text(exc.reason or exc.strerror or "handshake failure")
    if isinstance(exc, OSError) and exc.strerror:
        return f"dial tcp {target}: {os_text(exc.strerror)}"
    if type(exc) is OSError and exc.errno is None and len(exc.args) == 1:
        return str(exc)  # one of ours, already worded (a CA or client certificate that does not load)
    return f"{_BROKEN}unexpected answer"


def _stdlib_cause(exc: BaseException) -> str:
    """What `http.client` raised, as Go words it ("" for anything else). Such an error exists
    only where that module is loaded: a process that never loads it does not load it here."""
    client = sys.modules.get("http.client")
    if client is None:
        return ""
    if isinstance(exc, client.RemoteDisconnected):
        return "EOF"
    if isinstance(exc, client.BadStatusLine):
        line = str(exc.args[0] if exc.args else "").strip()
        return f"{_BROKEN}malformed HTTP response {go_quote(line[:100])}"
    if isinstance(exc, client.LineTooLong):
        return f"{_BROKEN}a response line is longer than {MAX_LINE} bytes"
    if isinstance(exc, client.IncompleteRead):
        return "unexpected EOF"
    if isinstance(exc, client.HTTPException) and "headers" in str(exc):
        return f"{_BROKEN}more than {MAX_HEADERS} response headers"
    return ""


def os_text(text: str) -> str:
    """An OS or OpenSSL reason as Go prints it: lower case, without `[Errno N]` or `(_ssl.c:N)`."""
    text = re.sub(r"\[Errno -?\d+\] ", "", str(text))
    text = re.sub(r" \(_ssl\.c:\d+\)$", "", text).strip()
    return text[:1].lower() + text[1:]


def _dropped(sock: socket.socket) -> bool:
    """Whether an idle connection is no longer usable: readable means the server closed it (or
    sent what no request asked for)."""
    try:
        if isinstance(sock, ssl.SSLSocket) and sock.pending():  # decrypted, not yet read
            return True
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True
