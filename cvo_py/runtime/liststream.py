"""A Kubernetes LIST in protobuf read as its body arrives (`upgrade-status --source cluster`'s
Node LIST): its items parsed in batches as soon as they are whole, with `cvo_py.runtime.kubeproto`'s
message classes and wire reader, so that they are worked on while the API server still writes the
rest; at the end, exactly what `kubeproto.read_list` gives of the whole body, or None.

    streamed = StreamedList(shape, "NodeList", on_items)   # on_items(items): each batch, in order
    streamed.feed(piece) ...                                # as the body arrives (decompressed)
    listed = streamed.result()                              # None: not plainly a LIST, read it whole
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cvo_py.runtime.kubeproto import MAGIC, Spliced, Unreadable, _envelope, _fields, _message_classes, _reader, _text

STREAMED_BATCH = 256  # items of a LIST read as it arrives parsed together (one parser call)


class StreamedList:
    """A LIST of `kind` read as its body arrives (`feed`, piece by piece): its items, read down to
    `shape`, are given to `on_items` as soon as `batch` of them (or the last) are whole, so that
    they are worked on while the server still writes the rest. Once the body has been fed whole,
    `result()` is what `read_list(body, shape, kind)` gives, made of those batches; None when the
    body is not plainly such a LIST (read it whole with `read_list`, which says what it is).

    Plainly a LIST is as the API server writes one: the envelope's TypeMeta, then its `raw`,
    which holds the ListMeta and then the items, then the envelope's other fields. Anything else
    (another order, a field given twice, another kind, an encoding, an item the parser refuses, a
    body cut short) stops the reading as it arrives. Only what is not read yet is held (and the
    envelope's fields around `raw`, to check them as `_envelope` checks a whole body)."""

    def __init__(
        self, shape: Mapping[str, Any], kind: str, on_items: Callable[[list[Any]], object], batch: int | None = None
    ) -> None:
        self._shape, self._kind, self._on_items = shape, kind, on_items
        self._batch = batch or STREAMED_BATCH
        self._work = bytearray()  # the body from `_base` on: what is not read yet
        self._base = 0  # where `_work` begins in the body
        self._at = 0  # where the next field of the envelope or the list begins, in the body
        self._head = b""  # the body up to `raw`'s bytes
        self._raw: tuple[int, int] | None = None  # where the envelope's `raw` lies, once its head is read
        self._listed: dict[str, Any] | None = None  # the list read from its ListMeta alone, once it is whole
        self._items = 0  # whole items not given yet
        self._batches: list[list[Any]] = []
        self._stopped = False
        self.reused = False  # whether `result` gave the items given to `on_items`

    def feed(self, piece: bytes) -> None:
        if self._stopped:
            return
        self._work += piece
        try:
            self._read()
        except (Unreadable, UnicodeDecodeError):  # `read_list` will say what it is
            self._stop()

    def result(self) -> Any:
        """`read_list` of the body fed, from the batches; None when it is not plainly a LIST."""
        raw, listed = self._raw, self._listed
        if self._stopped or raw is None or listed is None or self._at != raw[1] or self._items:
            self._stop()
            return None
        body = Spliced(self._head, raw[1] - raw[0], bytes(self._work))
        try:
            found, where, encoded = _envelope(body)
        except (Unreadable, UnicodeDecodeError):
            found, where, encoded = "", None, True
        if found != self._kind or where != raw or encoded:
            self._stop()
            return None
        listed["items"] = [item for batch in self._batches for item in batch]
        self.reused = True
        return listed

    def _stop(self) -> None:
        self._stopped, self._work, self._batches = True, bytearray(), []

    def _read(self) -> None:
        if self._raw is None:
            if self._base + len(self._work) < len(MAGIC) + 2:
                return
            if not self._work.startswith(MAGIC):
                raise Unreadable("not a Kubernetes protobuf body")
            type_meta = self._whole_field(len(MAGIC), 1)
            if type_meta is None:
                return
            kind = _text(self._work, _fields(self._work, *type_meta, once=True), 2)
            if kind != self._kind:
                raise Unreadable(f"a {kind or 'object'} where a {self._kind} was asked for")
            raw = self._field_head(type_meta[1], 2)
            if raw is None:
                return
            begins, size = raw
            self._raw, self._head, self._at = (begins, begins + size), bytes(self._work[:begins]), begins
            self._drop(begins)
        end = self._raw[1]
        if self._listed is None:
            meta = self._whole_field(self._at, 1, end)  # the ListMeta, read as the parser reads it
            if meta is None:
                return
            with memoryview(self._work) as view:
                listed = read_list_part(view[: meta[1] - self._base], self._shape, self._kind)
            if "items" not in listed:  # a shape without the items: read whole
                raise Unreadable(f"a shape of {self._kind} without its items")
            self._listed, self._at = listed, meta[1]
            self._drop(self._at)
        while self._at < end:
            item = self._whole_field(self._at, 2, end)
            if item is None:
                break
            self._at, self._items = item[1], self._items + 1
            if self._items == self._batch:
                self._give()
        if self._at == end and self._items:
            self._give()

    def _give(self) -> None:
        """The whole items read and not given yet, parsed together (in place) and given."""
        with memoryview(self._work) as view:
            items = read_list_part(view[: self._at - self._base], self._shape, self._kind).get("items") or []
        self._drop(self._at)
        self._items = 0
        self._batches.append(items)
        self._on_items(items)

    def _drop(self, upto: int) -> None:
        """Forget the body before `upto` (read)."""
        del self._work[: upto - self._base]
        self._base = upto

    def _field_head(self, at: int, number: int) -> tuple[int, int] | None:
        """(where its bytes begin, their length) of field `number` (length-delimited) whose tag is
        at `at`; None when its head has not all arrived; Unreadable for another field."""
        head = _two_varints(self._work, at - self._base)
        if head is None:
            return None
        tag, size, begins = head
        if tag != (number << 3 | 2):
            raise Unreadable(f"field {tag >> 3} where field {number} was expected")
        return self._base + begins, size

    def _whole_field(self, at: int, number: int, end: int | None = None) -> tuple[int, int] | None:
        """(start, end) of field `number` at `at` once all of it has arrived (None before);
        Unreadable for another field, or one past `end`."""
        head = self._field_head(at, number)
        if head is None:
            return None
        start, size = head
        if end is not None and start + size > end:
            raise Unreadable(f"field {number} past the end of its message")
        return None if start + size > self._base + len(self._work) else (start, start + size)


def _two_varints(buf: bytearray, at: int) -> tuple[int, int, int] | None:
    """A tag and a length from `at` (varints of at most 5 bytes, as the parser reads them) and
    where they end; None when they have not both arrived; Unreadable for a longer one."""
    values = []
    for _ in range(2):
        value, shift, start = 0, 0, at
        while True:
            if at >= len(buf):
                return None
            byte = buf[at]
            value |= (byte & 0x7F) << shift
            at, shift = at + 1, shift + 7
            if byte < 0x80:
                break
            if at - start >= 5:
                raise Unreadable("a tag or length of more than 5 bytes")
        values.append(value)
    return values[0], values[1], at


def read_list_part(data: Any, shape: Mapping[str, Any], kind: str) -> Any:
    """Part of a LIST's `raw` (whole fields of it) read down to `shape`; Unreadable as `read_list`
    refuses a body."""
    from google.protobuf.message import DecodeError

    classes = _message_classes()
    try:
        return _reader(kind, shape)(classes[kind].FromString(data))
    except UnicodeDecodeError:
        raise Unreadable(f"a {kind} with a string that is not UTF-8") from None
    except DecodeError as exc:
        raise Unreadable(f"a {kind} that does not parse: {exc}") from None
