"""Clients that misbehave against an HTTP(S) endpoint, and a prober that times /healthz meanwhile.

    with Attack(host, port, kind="slow-loris", connections=120, tls=context):
        latencies = probe_for(url, seconds=10, context=context)

    with attacking(port, [("slow-loris", 120), ("header-stuffing", 120)], tls=True):  # in a child process
        latencies = probe_for(url, seconds=10, context=context)

Kinds (each connection in its own way holds what a careless server would keep):
- `idle`: connects (and, over TLS, does nothing: not even a ClientHello) and waits;
- `slow-loris`: sends a request line and then one header byte every `drip` seconds, never ending;
- `header-stuffing`: sends a request line and 99 headers of 65,000 bytes (6.4 MB, the most
  Python's own HTTP server would have taken), then stalls.
All of it runs on one thread per attack, on non-blocking sockets: the attacker costs the test
little, whatever the server does. `Attack.refused` counts connections the server closed or reset.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

KINDS = ("idle", "slow-loris", "header-stuffing")
HEADER_COUNT = 99
HEADER_VALUE_BYTES = 65_000


def stuffed_headers(count: int = HEADER_COUNT, size: int = HEADER_VALUE_BYTES) -> bytes:
    """A request line and `count` headers of `size` bytes each, without the blank line that ends them."""
    value = b"a" * size
    return b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-Stuff-%d: %s\r\n" % (i, value) for i in range(count))


@dataclass
class _Conn:
    sock: socket.socket | ssl.SSLSocket
    pending: bytes
    sent: int = 0


@dataclass
class Attack:
    """Connections of one `kind`, opened when the block starts and held until it ends."""

    host: str
    port: int
    kind: str
    connections: int = 120
    tls: ssl.SSLContext | None = None
    drip: float = 1.0
    headers: int = HEADER_COUNT  # header-stuffing: how many headers of `header_bytes`
    header_bytes: int = HEADER_VALUE_BYTES
    refused: int = 0
    opened: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Attack:
        if self.kind not in KINDS:
            raise ValueError(f"unknown attack {self.kind!r}: one of {', '.join(KINDS)}")
        self._thread = threading.Thread(target=self._run, name=f"attack-{self.kind}", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _open(self) -> _Conn | None:
        try:
            sock: socket.socket | ssl.SSLSocket = socket.create_connection((self.host, self.port), timeout=5)
            if self.tls is not None and self.kind != "idle":
                sock = self.tls.wrap_socket(sock, server_hostname=self.host)
        except (OSError, ssl.SSLError):
            self.refused += 1
            return None
        self.opened += 1
        if self.kind == "idle":
            payload = b""
        elif self.kind == "slow-loris":
            payload = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
        else:
            payload = stuffed_headers(self.headers, self.header_bytes)
        sock.setblocking(False)
        return _Conn(sock, payload)

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        conns: list[_Conn] = []
        for _ in range(self.connections):
            if self._stop.is_set():
                break
            conn = self._open()
            if conn is not None:
                conns.append(conn)
                selector.register(conn.sock, selectors.EVENT_READ, conn)
        next_drip = time.monotonic() + self.drip
        try:
            while not self._stop.is_set() and conns:
                for conn in list(conns):
                    if conn.pending and not self._send(conn):
                        self._drop(conn, conns, selector)
                for key, _events in selector.select(timeout=0.05):
                    conn = key.data
                    if not self._still_open(conn):
                        self._drop(conn, conns, selector)
                if self.kind == "slow-loris" and time.monotonic() >= next_drip:
                    next_drip += self.drip
                    for conn in list(conns):
                        conn.pending += b"a"
        finally:
            for conn in conns:
                with contextlib.suppress(OSError):
                    conn.sock.close()
            selector.close()

    def _send(self, conn: _Conn) -> bool:
        """Send what the connection still has to say; False when the server closed it."""
        try:
            while conn.pending:
                n = conn.sock.send(conn.pending[:65536])
                conn.pending = conn.pending[n:]
                conn.sent += n
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            return True  # the server reads no more for now: stall here, as an attacker would
        except OSError:
            return False
        return True

    def _still_open(self, conn: _Conn) -> bool:
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return True
        except OSError:
            return False
        return False if not data else True  # an answer (431, 408) means it is being closed too

    def _drop(self, conn: _Conn, conns: list[_Conn], selector: selectors.BaseSelector) -> None:
        self.refused += 1
        conns.remove(conn)
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(conn.sock)
        with contextlib.suppress(OSError):
            conn.sock.close()


@contextlib.contextmanager
def attacking(port: int, attacks: Sequence[tuple[str, int]], *, tls: bool, drip: float = 0.5) -> Iterator[int]:
    """The attacks (kind, connections) on 127.0.0.1:`port` from a child process, so that their CPU
    is not the prober's. Yields, once every connection is open or refused, how many were refused
    (closed or reset by the server) so far; holds the rest open until the block ends."""
    spec = ",".join(f"{kind}:{n}" for kind, n in attacks)
    child = subprocess.Popen(
        [sys.executable, "-m", "testkit.corpus.clients", str(port), spec, "tls" if tls else "plain", str(drip)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        ready = child.stdout.readline()
        if not ready.startswith("ready"):
            raise RuntimeError(f"the attacking process did not start: {ready!r}")
        yield int(ready.split()[1])
    finally:
        _end(child)


def _attack_main(argv: Sequence[str]) -> int:
    """`python -m testkit.corpus.clients PORT KIND:N[,KIND:N] tls|plain DRIP`: attack until stdin ends."""
    port, spec, mode, drip = int(argv[0]), argv[1], argv[2], float(argv[3])
    tls = None
    if mode == "tls":
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        tls.check_hostname = False
        tls.verify_mode = ssl.CERT_NONE
    plan = [(kind, int(n)) for kind, n in (item.split(":") for item in spec.split(","))]
    with contextlib.ExitStack() as stack:
        attacks = [stack.enter_context(Attack("127.0.0.1", port, kind, n, tls, drip)) for kind, n in plan]
        deadline = time.monotonic() + 120
        while any(a.opened + a.refused < n for a, (_, n) in zip(attacks, plan, strict=True)):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        print(f"ready {sum(a.refused for a in attacks)}", flush=True)
        sys.stdin.read()
    return 0


_SERVER_CHILD = """
import sys
from prometheus_client import CollectorRegistry
from cvo_py.runtime.serving.certificates import ServingContext
from cvo_py.runtime.serving.server import MetricsServer
serving = ServingContext(sys.argv[1], sys.argv[2], client_auth=True) if sys.argv[1] else None
server = MetricsServer("127.0.0.1:0", CollectorRegistry(), serving=serving).start()
print(server.port, flush=True)
sys.stdin.read()
print(server.evicted, flush=True)
"""


@dataclass
class ServedChild:
    """The metrics server (default bounds) in a child process: its port and pid; `evicted` is
    set when the block ends (connections it closed to keep its bounds)."""

    port: int
    pid: int
    evicted: int = -1


@contextlib.contextmanager
def metrics_server_child(certificate: tuple[str, str] | None, memory_bytes: int = 1 << 30) -> Iterator[ServedChild]:
    """`cvo_py.runtime.serving.server.MetricsServer` (HTTPS with `certificate`, else HTTP) in a child whose
    address space is capped at `memory_bytes` (RLIMIT_AS): a bound that does not hold fails there."""
    import resource

    cert, key = certificate or ("", "")
    child = subprocess.Popen(
        [sys.executable, "-c", _SERVER_CHILD, cert, key], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes)),
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        served = ServedChild(int(child.stdout.readline()), child.pid)
        yield served
        child.stdin.close()
        served.evicted = int(child.stdout.readline() or -1)
    finally:
        _end(child)


def _end(child: subprocess.Popen[str]) -> None:
    """Close a child's stdin (its cue to stop), wait for it (killing it after a minute), close its stdout."""
    assert child.stdin is not None and child.stdout is not None
    if not child.stdin.closed:
        child.stdin.close()
    try:
        child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    child.stdout.close()


@dataclass(frozen=True)
class Probe:
    seconds: float
    status: int | None  # None: no answer (the error is in `error`)
    error: str = ""


def probe(url: str, context: ssl.SSLContext | None = None, timeout: float = 30.0) -> Probe:
    """One GET on a new connection, as the kubelet's probe does."""
    start = time.monotonic()
    try:
        with urllib.request.urlopen(url, context=context, timeout=timeout) as response:
            response.read()
            return Probe(time.monotonic() - start, response.status)
    except urllib.error.HTTPError as exc:
        return Probe(time.monotonic() - start, exc.code)
    except (OSError, urllib.error.URLError) as exc:
        return Probe(time.monotonic() - start, None, str(exc))


def probe_as_kubelet(url: str, context: ssl.SSLContext | None = None, failure_threshold: int = 3) -> list[Probe]:
    """Probes of `url` until one answers or `failure_threshold` in a row do not (the kubelet's
    default: a container is restarted only after three failed probes in a row); every attempt."""
    attempts = [probe(url, context)]
    while attempts[-1].status is None and len(attempts) < failure_threshold:
        attempts.append(probe(url, context))
    return attempts


def probe_for(url: str, seconds: float, context: ssl.SSLContext | None = None, every: float = 0.25) -> list[Probe]:
    """Probe `url` every `every` seconds for `seconds`."""
    results: list[Probe] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        results.append(probe(url, context))
        time.sleep(every)
    return results


if __name__ == "__main__":
    sys.exit(_attack_main(sys.argv[1:]))
