"""A local update service: serves graphs in the update service's JSON format on 127.0.0.1, per
channel, with fault modes a test can switch on (slow, an HTTP error, garbage, a huge body, a body
that never finishes, a graph without the cluster's version).

    with UpdateService() as service:
        service.channels["stable-4.16"] = graph(...)
        spec["upstream"] = service.url
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

JSON = dict[str, Any]

FAULTS = ("slow", "slow-headers", "error", "garbage", "huge", "endless", "missing-version")


def graph(
    versions: Sequence[str],
    edges: Sequence[tuple[str, str]] = (),
    conditional: Sequence[tuple[Sequence[tuple[str, str]], Sequence[JSON]]] = (),
    *,
    channels: str = "",
    image_prefix: str = "registry.example.com/ocp/release@sha256:",
) -> JSON:
    """A graph document: nodes for `versions`, edges between version strings, and conditional
    edge groups `([(from, to), ...], [risk, ...])`."""
    index = {v: i for i, v in enumerate(versions)}
    nodes = []
    for version in versions:
        node: JSON = {"version": version, "payload": image_of(version, image_prefix),
                      "metadata": {"url": f"https://access.example.com/errata/{version}"}}
        if channels:
            node["metadata"]["io.openshift.upgrades.graph.release.channels"] = channels
        nodes.append(node)
    return {
        "nodes": nodes,
        "edges": [[index[a], index[b]] for a, b in edges],
        "conditionalEdges": [
            {"edges": [{"from": a, "to": b} for a, b in group], "risks": list(risks)} for group, risks in conditional
        ],
    }


def image_of(version: str, prefix: str = "registry.example.com/ocp/release@sha256:") -> str:
    return prefix + version.replace(".", "").ljust(64, "0")[:64]


def promql_risk(name: str, query: str, message: str = "", url: str = "") -> JSON:
    return {"name": name, "url": url or f"https://issues.example.com/{name}", "message": message or f"{name} applies.",
            "matchingRules": [{"type": "PromQL", "promql": {"promql": query}}]}


def always_risk(name: str, message: str = "", url: str = "") -> JSON:
    return {"name": name, "url": url or f"https://issues.example.com/{name}", "message": message or f"{name} applies.",
            "matchingRules": [{"type": "Always"}]}


# -- graphs a hostile (or broken) update service may send, within the decoder's bounds ----------------


def release_digest(index: int) -> str:
    return f"quay.io/openshift-release-dev/ocp-release@sha256:{index:064x}"


def all_reachable(nodes: int, minor: str = "4.15") -> JSON:
    """`nodes` releases `<minor>.0` … `<minor>.<nodes-1>`, every one an update of the first."""
    return {
        "nodes": [{"version": f"{minor}.{i}", "payload": release_digest(i)} for i in range(nodes)],
        "edges": [[0, i] for i in range(1, nodes)],
    }


def many_risks(risks: int, minor: str = "4.15", message: str = "") -> JSON:
    """One conditional update, `<minor>.0` → `<minor>.1`, with `risks` PromQL risks."""
    return {
        "nodes": [{"version": f"{minor}.{i}", "payload": release_digest(i)} for i in range(2)],
        "edges": [],
        "conditionalEdges": [
            {
                "edges": [{"from": f"{minor}.0", "to": f"{minor}.1"}],
                "risks": [
                    {"name": f"R{i}", "url": f"https://r.example/{i}", "message": message or "m",
                     "matchingRules": [{"type": "PromQL", "promql": {"promql": f"x{i}"}}]}
                    for i in range(risks)
                ],
            }
        ],
    }


def many_conditional_edges(edges: int, nodes: int = 3_000, minor: str = "4.15") -> JSON:
    """`nodes` releases and `edges` conditional edges from the first to the others (round robin),
    in one group with one risk: what made selection quadratic (150,000 edges are 5.4 MB)."""
    doc = all_reachable(nodes, minor)
    doc["edges"] = []
    doc["conditionalEdges"] = [
        {
            "edges": [{"from": f"{minor}.0", "to": f"{minor}.{1 + i % (nodes - 1)}"} for i in range(edges)],
            "risks": [always_risk("Everything")],
        }
    ]
    return doc


def many_channels(channels: int, minor: str = "4.15") -> JSON:
    """`<minor>.0` → `<minor>.1`, both nodes naming `channels` channels (each node's list is one
    comma-separated metadata value)."""
    names = ",".join(f"channel-{i}" for i in range(channels))
    doc = all_reachable(2, minor)
    for node in doc["nodes"]:
        node["metadata"] = {"io.openshift.upgrades.graph.release.channels": names}
    return doc


@dataclass
class UpdateService:
    """The server; `channels` maps a channel to its graph, `fault` selects a fault mode (or None)."""

    channels: dict[str, JSON] = field(default_factory=dict)
    fault: str | None = None
    slow_seconds: float = 3.0
    requests: list[dict[str, list[str]]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
                return

            def do_GET(self) -> None:  # noqa: N802 - the base's name
                service._serve(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # close() ends every request under way (their sockets shut) and waits for its thread.
        self._server.daemon_threads = False
        self._server.block_on_close = True
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._server.serve_forever, name="update-service", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/upgrades_info/v1/graph"

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        with self._open_lock:
            self._open.add(handler.connection)
        try:
            self._answer(handler)
        finally:
            with self._open_lock:
                self._open.discard(handler.connection)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        query = parse_qs(urlsplit(handler.path).query, keep_blank_values=True)
        self.requests.append(query)
        self.headers.append({k: v for k, v in handler.headers.items()})
        fault = self.fault
        if fault == "slow":
            self._stopping.wait(self.slow_seconds)
        if fault == "error":
            self._send(handler, 500, b"internal error")
            return
        if fault == "garbage":
            self._send(handler, 200, b"<html>this is not a graph</html>")
            return
        if fault == "huge":
            self._send(handler, 200, b"[" + b" " * (10 * 1024 * 1024) + b"]")
            return
        if fault == "slow-headers":  # an answer whose headers never end, a byte at a time
            try:
                handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
                while not self._stopping.is_set():
                    handler.wfile.write(b"X")
                    handler.wfile.flush()
                    self._stopping.wait(0.2)
            except OSError:
                pass
            return
        if fault == "endless":
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.end_headers()
            try:
                while not self._stopping.is_set():
                    handler.wfile.write(b" ")
                    handler.wfile.flush()
                    self._stopping.wait(0.2)
            except OSError:
                pass
            return
        channel = (query.get("channel") or [""])[0]
        doc = self.channels.get(channel)
        if doc is None:
            self._send(handler, 404, b"unknown channel")
            return
        if fault == "missing-version":
            version = (query.get("version") or [""])[0]
            doc = {**doc, "nodes": [n for n in doc["nodes"] if n["version"] != version], "edges": []}
        self._send(handler, 200, json.dumps(doc).encode())

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, code: int, body: bytes) -> None:
        try:
            handler.send_response(code)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:
            pass

    def close(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        with self._open_lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> UpdateService:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


@contextmanager
def update_service(**channels: JSON) -> Iterator[UpdateService]:
    with UpdateService(channels=dict(channels)) as service:
        yield service

