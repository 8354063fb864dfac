"""One server connection's bytes, plain or TLS, for the metrics server's event loop.

    stream = Stream(reader, writer)                      # plain HTTP
    stream = await TLSStream.accept(reader, writer, ctx) # HTTPS: the handshake, then the same calls
    await stream.read(n); stream.write(data); await stream.drain(); stream.abort()

TLS runs on `ssl.SSLObject` over memory buffers rather than asyncio's own TLS transport, for one
reason: a handshake that fails (no shared version or cipher, an untrusted client certificate) then
still sends its TLS alert, as Go's server does, so the client reads "handshake failure" or
"protocol version" instead of an unexplained EOF. Bytes are pulled from the socket only when TLS
asks for more, so what a connection buffers stays bounded by the reader's limit.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any


class Stream:
    """A plain connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, size: int) -> bytes:
        """Up to `size` bytes; b"" at the end of the stream."""
        return await self._reader.read(size)

    def write(self, data: bytes) -> None:
        self._writer.write(data)

    async def drain(self) -> None:
        await self._writer.drain()

    def peercert(self) -> dict[str, Any] | None:
        return None

    async def close(self) -> None:
        """Send what is buffered and close (bounded by the caller's timeout)."""
        self._writer.close()
        await self._writer.wait_closed()

    def abort(self) -> None:
        self._writer.transport.abort()


class TLSStream(Stream):
    """A TLS connection on `ssl.SSLObject` (server side)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, context: ssl.SSLContext) -> None:
        super().__init__(reader, writer)
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._chunk = 1 << 16

    @classmethod
    async def accept(
        cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, context: ssl.SSLContext
    ) -> TLSStream:
        """The handshake; a failure (ssl.SSLError, or OSError at the end of the stream) is raised
        after the TLS alert, if any, has been sent."""
        stream = cls(reader, writer, context)
        while True:
            try:
                stream._tls.do_handshake()
            except ssl.SSLWantReadError:
                await stream._flush()
                if not await stream._fill():
                    raise ConnectionResetError("the client closed the connection during the TLS handshake") from None
                continue
            except ssl.SSLError:
                await stream._flush()  # the alert says why
                raise
            await stream._flush()
            return stream

    async def read(self, size: int) -> bytes:
        while True:
            try:
                data = self._tls.read(size)
            except ssl.SSLWantReadError:
                await self._flush()
                if not await self._fill():
                    return b""
                continue
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                return b""
            await self._flush()  # what reading produced (a key update's answer)
            return data

    def write(self, data: bytes) -> None:
        self._tls.write(data)
        self._writer.write(self._outgoing.read())

    def peercert(self) -> dict[str, Any] | None:
        return self._tls.getpeercert() or None

    async def _flush(self) -> None:
        data = self._outgoing.read()
        if data:
            self._writer.write(data)
            await self._writer.drain()

    async def _fill(self) -> bool:
        """Feed TLS the next bytes from the socket; False at the end of the stream."""
        chunk = await self._reader.read(self._chunk)
        if not chunk:
            self._incoming.write_eof()
            return False
        self._incoming.write(chunk)
        return True
