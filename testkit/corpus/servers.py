"""HTTP servers that answer badly, byte for byte, for the clients of other services (the update
service's, the alerts and PromQL API's).

    with HostileServer("escape-status") as server:
        httpget.get(server.url, ...)

Each behaviour is what one connection gets after its request has been read:
- `escape-status`: `HTTP/1.1 500 <ESC]0;owned BEL ESC[2J>`: escape sequences in the reason phrase;
- `close`: the connection closed without a word (Go: EOF);
- `reset`: the connection reset (RST);
- `garbage`: not HTTP at all;
- `truncated`: a body shorter than its Content-Length;
- `bad-chunk`: a chunked body whose chunk size is not hexadecimal;
- `long-header`: a header line of 70,000 bytes;
- `many-headers`: 150 headers;
- `huge-error`: a 12 MB Prometheus API error text (`{"status":"error","error":"xxxx…"}`);
- `deep-json`: a 200 whose JSON nests 100,000 levels;
- `huge-number`: a 200 whose JSON holds a 5,000-digit integer;
- `redirect-loop`: a redirect to itself, for ever;
- `redirect-to:URL`: one redirect to URL (e.g. a port nothing listens on, `http://[::1`, `ftp://x`).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

ESCAPES = "\x1b]0;owned\x07\x1b[2J"
BEHAVIOURS = (
    "escape-status", "close", "reset", "garbage", "truncated", "bad-chunk", "long-header", "many-headers",
    "huge-error", "deep-json", "huge-number", "redirect-loop",
)


def _answer(status: str, body: bytes, *extra: str) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", "Content-Type: application/json", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


class ScriptedServer:
    """A TCP server on 127.0.0.1 that answers each connection on a thread of its own with
    `answer(connection, n)` (n: the connection's number, from 1), until the block ends; every
    thread it started is joined then.

        with ScriptedServer(lambda conn, n: conn.sendall(b"...")) as server:
            ... server.port ...
    """

    def __init__(self, answer: Callable[[socket.socket, int], None], name: str = "scripted") -> None:
        self._answer = answer
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._workers: list[threading.Thread] = []
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)

    @property
    def port(self) -> int:
        port: int = self._sock.getsockname()[1]
        return port

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        for worker in self._workers:
            worker.join(timeout=30)
        self._sock.close()

    def _serve(self) -> None:
        n = 0
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            n += 1
            worker = threading.Thread(target=self._answer_one, args=(conn, n), daemon=True)
            self._workers.append(worker)
            worker.start()

    def _answer_one(self, conn: socket.socket, n: int) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(5)
            self._answer(conn, n)


def read_request_head(conn: socket.socket) -> bytes:
    """A request's head, read up to its blank line (b"" when the client closed first)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    return data


@dataclass
class HostileServer:
    behaviour: str
    connections: int = 0
    _server: ScriptedServer = field(init=False)

    def __post_init__(self) -> None:
        if self.behaviour not in BEHAVIOURS and not self.behaviour.startswith("redirect-to:"):
            raise ValueError(f"unknown behaviour {self.behaviour!r}")
        self._server = ScriptedServer(self._answer_connection, name=f"hostile-{self.behaviour}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.port}/path"

    def __enter__(self) -> HostileServer:
        self._server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.__exit__(*exc)

    def _answer_connection(self, conn: socket.socket, n: int) -> None:
        self.connections = max(self.connections, n)
        if read_request_head(conn):
            self._respond(conn)

    def _respond(self, conn: socket.socket) -> None:
        kind = self.behaviour
        if kind == "close":
            return
        if kind == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        if kind.startswith("redirect-to:"):
            conn.sendall(_answer("302 Found", b"", f"Location: {kind.removeprefix('redirect-to:')}"))
            return
        answers: dict[str, Callable[[], bytes]] = {
            "escape-status": lambda: _answer(f"500 {ESCAPES}", b"{}"),
            "garbage": lambda: b"\x1b[2Jnot http at all\r\n\r\n",
            "truncated": lambda: _answer("200 OK", b"{}")[:-2].replace(b"Content-Length: 2", b"Content-Length: 100"),
            "bad-chunk": lambda: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
            "long-header": lambda: _answer("200 OK", b"{}", "X-Long: " + "a" * 70_000),
            "many-headers": lambda: _answer("200 OK", b"{}", *(f"X-H{i}: v" for i in range(150))),
            "huge-error": lambda: _answer(
                "422 Unprocessable Entity", b'{"status":"error","errorType":"bad_data","error":"' + b"x" * (12 << 20)
                + b'"}'
            ),
            "deep-json": lambda: _answer("200 OK", b"[" * 100_000 + b"]" * 100_000),
            "huge-number": lambda: _answer("200 OK", b'{"status":"success","data":' + b"9" * 5000 + b"}"),
            "redirect-loop": lambda: _answer("302 Found", b"", "Location: /path"),
        }
        conn.sendall(answers[kind]())
