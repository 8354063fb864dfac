"""An answer's body read as it arrives: a successful answer's pieces, decompressed when it is
gzipped, fed to a reader that makes the answer of them (`KubeClient.request`'s `progress`), so that
a long LIST's items are worked on while the server still writes them and a gzipped body is never
decompressed whole. Whatever the reader cannot make the answer of (it says None), or a gzip stream
cut short or corrupt, is read from the whole body as before: the same answer, or the same error.

    streamed = StreamedBody(make_reader, compressed=True)
    pool.request(..., on_answer=streamed.on_answer)    # the reader fed as the body arrives
    answer = streamed.read()                           # None: decode the whole body
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from cvo_py.runtime.httpwire import Headers


class BodyReader(Protocol):
    """What reads an answer's body as it arrives (`KubeClient.request`'s `progress`)."""

    def feed(self, piece: bytes) -> None: ...

    def result(self) -> Any:
        """The answer read from the pieces fed (all of the body); None: decode the whole body."""


class StreamedBody:
    """A successful answer's body given to the `BodyReader` that `progress` makes, piece by piece
    as it arrives, decompressed when it is gzipped (`KubeClient.request`)."""

    def __init__(self, progress: Callable[[], BodyReader], compressed: bool) -> None:
        self._progress, self._compressed = progress, compressed
        self._reader: BodyReader | None = None
        self._inflate: Any = None  # a zlib decompressor, for a gzipped body
        self._failed = False

    def on_answer(self, status: int, head: Headers) -> Callable[[bytes], None] | None:
        if status >= 300:
            return None  # an error's body is the error's
        self._reader = self._progress()
        if self._compressed and head.get("Content-Encoding") == "gzip":
            import zlib

            self._inflate, self._failed = zlib.decompressobj(31), False
            return self._feed_gzipped
        self._inflate = None
        return self._reader.feed

    def _feed_gzipped(self, piece: bytes) -> None:
        assert self._reader is not None
        if self._failed or self._inflate.eof:
            return  # decided: the whole body's decompression says what it is
        try:
            out = self._inflate.decompress(piece)
        except Exception:  # noqa: BLE001 - zlib.error: the whole body's decompression words it
            self._failed = True
            return
        if out:
            self._reader.feed(out)

    def read(self) -> Any:
        """What the reader made of the whole body; None when it read none (an error answer) or
        not all of it: a gzip stream cut short or corrupt (the whole body's decompression then words its error), or
        one the reader did not read (decode the body)."""
        if self._reader is None:
            return None
        if self._inflate is not None and (self._failed or not self._inflate.eof):
            return None  # not one gzip member read to its end, as the whole body's decompression reads the first
        return self._reader.result()
