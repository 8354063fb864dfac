"""What a client of the metrics server may make it hold (`ServingLimits`), which connections it
holds, and which it closes to stay within those bounds.

At most `max_connections`; those still waiting for their request (handshaking, sending headers,
idle) may take all but `reserve` of them, so a probe that connects while others stall gets in:
the longest-waiting stalled connection makes room. (On a starved machine, a probe whose request is
not read before an attack's connections have all churned is itself the longest waiting: that
attempt is closed, and the kubelet's next one, as it retries before it counts a failure, gets in.)
The header bytes held across all connections are bounded too: past `max_buffered_bytes` the
connection holding the most is closed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from cvo_py.runtime import klog
from cvo_py.runtime.errors import ServerError
from cvo_py.runtime.serving.stream import Stream


@dataclass(frozen=True)
class ServingLimits:
    """What one client, or all of them together, may make the server hold (see
    `cvo_py.runtime.serving.server`'s docstring)."""

    max_header_bytes: int = 1 << 20  # request line and headers, as Go's http.DefaultMaxHeaderBytes
    max_header_lines: int = 1000
    header_timeout: float = 10.0  # from connecting (TLS handshake included) to the end of the headers
    idle_timeout: float = 90.0  # a kept-alive connection until its next request starts (scrapes: 30 s apart)
    write_timeout: float = 10.0
    max_connections: int = 128
    reserve: int = 16  # connections only ever open to newcomers: stalled ones make room beyond the rest
    max_buffered_bytes: int = 8 << 20  # unparsed header bytes across all connections
    read_chunk: int = 1 << 16


DEFAULT_LIMITS = ServingLimits()


class Evicted(ServerError):
    """This connection was closed to keep the bounds (raised in its own task)."""


@dataclass(eq=False)
class Connection:
    """One client connection, as the admission and eviction rules see it."""

    stream: Stream
    task: asyncio.Task[Any] | None
    waiting_since: float  # when it started waiting for its next request (or its handshake)
    busy: bool = False  # a whole request read: answering it
    buffered: int = 0  # header bytes held for it

    def close(self) -> None:
        """Abort the connection and end its task (from another connection's task or the server's)."""
        self.stream.abort()
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()


class Connections:
    """The connections a server holds; used from its event loop's thread only."""

    def __init__(self, limits: ServingLimits) -> None:
        self.limits = limits
        self._held: dict[int, Connection] = {}
        self.buffered = 0  # header bytes held across all connections
        self.evicted = 0  # connections closed to make room or to stay within the header-byte bound

    def __contains__(self, connection: Connection) -> bool:
        return id(connection) in self._held

    def all(self) -> list[Connection]:
        return list(self._held.values())

    def admit(self, connection: Connection) -> bool:
        """Room for a new connection: stalled ones beyond all but the reserve make room, oldest first."""
        waiting = sorted((c for c in self._held.values() if not c.busy), key=lambda c: c.waiting_since)
        room = self.limits.max_connections - self.limits.reserve
        for stalled in waiting[: max(0, len(waiting) - room + 1)]:
            self.evict(stalled, "to make room for a new connection")
        if len(self._held) >= self.limits.max_connections:
            return False  # every one busy answering: refuse rather than grow
        self._held[id(connection)] = connection
        return True

    def evict(self, connection: Connection, why: str) -> None:
        self.evicted += 1
        klog.v(4).info("Closing a metrics connection that has not sent its request %s", why)
        self.forget(connection)
        connection.close()

    def forget(self, connection: Connection) -> None:
        if self._held.pop(id(connection), None) is not None:
            self.buffered -= connection.buffered
            connection.buffered = 0

    def hold(self, connection: Connection, size: int) -> None:
        """Account `size` header bytes held for `connection`; past the bound for all connections,
        the one holding the most is closed (perhaps this one: then Evicted is raised)."""
        if id(connection) not in self._held:
            raise Evicted  # closed meanwhile: holds nothing any more
        self.buffered += size - connection.buffered
        connection.buffered = size
        while self.buffered > self.limits.max_buffered_bytes:
            largest = max((c for c in self._held.values() if not c.busy), key=lambda c: c.buffered, default=None)
            if largest is None or largest.buffered == 0:
                return
            self.evict(largest, "to keep the header bytes of all connections bounded")
            if largest is connection:
                raise Evicted
