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


@dataclass
class HostileServer:
    behaviour: str
    connections: int = 0
    _sock: socket.socket = field(init=False)
    _thread: threading.Thread = field(init=False)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        if self.behaviour not in BEHAVIOURS and not self.behaviour.startswith("redirect-to:"):
            raise ValueError(f"unknown behaviour {self.behaviour!r}")
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._thread = threading.Thread(target=self._serve, name=f"hostile-{self.behaviour}", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/path"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    self._read_request(conn)
                    self._respond(conn)

    @staticmethod
    def _read_request(conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk

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
