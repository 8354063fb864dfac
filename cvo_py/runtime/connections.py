"""Keep-alive HTTP(S) connections to one server: the API client's transport.

    pool = ConnectionPool("https://api.example:6443", make_ssl_context)
    response = pool.request("GET", "/api/v1/namespaces", headers, read_timeout=30.0)
    response.status, response.headers.get("Content-Type"), response.data

    stream = pool.stream("GET", "/api/v1/pods?watch=true", headers, read_timeout=300.0)
    for chunk in stream.chunks(): ...   # another thread may call stream.shutdown()
    stream.close()

HTTP/1.1 is written and read by `cvo_py.runtime.httpwire`, without the standard library's
`http.client` (see there why, and how it reads what a server answers).

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
from typing import NamedTuple
from urllib.parse import urlsplit

from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.httpwire import (
    BROKEN,
    MAX_HEADERS,
    MAX_LINE,
    READ_PIECE,
    Answer,
    Headers,
    HTTPError,
    host_header,
    request_head,
)

CONNECT_TIMEOUT = 10.0
STREAM_CHUNK = 65536


class Response(NamedTuple):
    status: int
    headers: Headers
    data: bytes


# (status, head) → None, or what is given each piece of the body as it arrives
OnAnswer = Callable[[int, Headers], Callable[[bytes], None] | None]


def _read_giving(answer: Answer, give: Callable[[bytes], None]) -> bytes:
    pieces = []
    for piece in answer.pieces(READ_PIECE):
        pieces.append(piece)
        give(piece)
    return b"".join(pieces)


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

    def __init__(self, conn: _Connection, answer: Answer) -> None:
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
    its response has been read, keeping at most `maxsize` idle ones. With `max_requests`, at most
    that many requests are in flight at once (the others wait for one to end), so requests never
    hold more connections than that, as Go's `Transport.MaxConnsPerHost` bounds them; streams
    (watches, held for minutes) are not counted."""

    def __init__(
        self,
        base_url: str,
        tls: Callable[[], ssl.SSLContext] | None = None,
        maxsize: int = 16,
        connect_timeout: float = CONNECT_TIMEOUT,
        max_requests: int | None = None,
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
        if max_requests is not None and max_requests < 1:
            raise ValueError(f"max_requests must be at least 1, not {max_requests}")
        self._slots = threading.BoundedSemaphore(max_requests) if max_requests else None

    def request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        *,
        read_timeout: float,
        on_answer: OnAnswer | None = None,
    ) -> Response:
        """Send one request and read its whole response; `target` is the path (under the base
        URL's) and the query. `on_answer`, given the answer's status and head before its body is
        read, may return a function that is then given each piece of the body as it arrives (the
        whole body is still in the Response); what it raises ends the request, as a read would."""
        if self._slots is None:
            return self._request(method, target, headers, body, read_timeout, on_answer)
        with self._slots:
            return self._request(method, target, headers, body, read_timeout, on_answer)

    def _request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
        read_timeout: float,
        on_answer: OnAnswer | None,
    ) -> Response:
        conn = self._take(read_timeout)
        try:
            answer = self._exchange(conn, method, target, headers, body)
            try:
                given = on_answer(answer.status, answer.headers) if on_answer is not None else None
                data = answer.read() if given is None else _read_giving(answer, given)
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
    ) -> Answer:
        """Send the request (its head and body in one write, as http.client sends them) and read
        the answer's head."""
        assert conn.sock is not None
        host = host_header(self._host, self._port, self._https)
        conn.sock.sendall(request_head(method, self._prefix + target, headers, body, host) + (body or b""))
        fp = conn.sock.makefile("rb")
        try:
            return Answer(fp, method)
        except BaseException:
            fp.close()
            raise

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
    return f"{BROKEN}unexpected answer"


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
        return f"{BROKEN}malformed HTTP response {go_quote(line[:100])}"
    if isinstance(exc, client.LineTooLong):
        return f"{BROKEN}a response line is longer than {MAX_LINE} bytes"
    if isinstance(exc, client.IncompleteRead):
        return "unexpected EOF"
    if isinstance(exc, client.HTTPException) and "headers" in str(exc):
        return f"{BROKEN}more than {MAX_HEADERS} response headers"
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
