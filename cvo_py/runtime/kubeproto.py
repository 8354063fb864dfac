"""Kubernetes' protobuf encoding read down to the fields a caller uses, as the JSON encoding would
give them: the API server writes a LIST of 5,000 Nodes as protobuf in about a third of the time it
takes to write it as JSON (bench/README.md), which is most of what `upgrade-status --source
cluster` waits for.

    listed = read_list(body, {"metadata": {"continue": STR}, "items": [NODE]}, "NodeList")
    text = status_json(body)      # an error's Status, as the JSON the API server would have sent

(`cvo_py.runtime.liststream` reads a LIST as it arrives, with this module's wire reader.)

A body is `k8s\\x00` then a `runtime.Unknown` whose `raw` is the object. The messages this module
knows are in `_MESSAGES`: their fields' numbers as k8s.io/api and k8s.io/apimachinery define them,
and how the JSON encoding writes each (`omitempty`, a `metav1.Time` as RFC 3339 seconds or null,
maps with their keys in order). A caller's shape (`cvo_py.runtime.jsonfields`) names what is read;
the rest is skipped by the parser (google's `protobuf`, its C implementation) without being built.

What this module cannot give exactly as JSON would, it refuses with `Unreadable` (a ValueError),
so the caller reads that answer as JSON instead: a string that is not UTF-8 (the JSON encoder
would have replaced its bytes), a time outside years 1–9999, another kind or encoding than asked
for. google's protobuf is imported at the first read, not with this module.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.times import MAX_TIME, ZERO_TIME, format_time
from cvo_py.runtime.jsonfields import ANY, STR, STR_MAP, Only, Prefixed, Typed

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# How the JSON encoding writes a field: always, or only when it is not empty (`omitempty`).
ALWAYS, OMITEMPTY = "always", "omitempty"
# Field types: a scalar, a `metav1.Time` (read as its bytes: Go writes nothing for its zero time,
# which JSON writes as null, and a Timestamp of 0 s for 1970-01-01, which an implicit-presence field
# could not tell apart), a map of strings, or the name of a message (a one-item list of it: a
# repeated message; "?" after it: a pointer, written only when set).
STRING, BOOL, INT, TIME, MAP = "string", "bool", "int", "time", "map"

# message → JSON key → (field number, type, when JSON writes it)
_MESSAGES: dict[str, dict[str, tuple[int, Any, str]]] = {
    "Unknown": {
        "typeMeta": (1, "TypeMeta", ALWAYS),
        "raw": (2, "bytes", ALWAYS),
        "contentEncoding": (3, STRING, ALWAYS),
    },
    "TypeMeta": {"apiVersion": (1, STRING, OMITEMPTY), "kind": (2, STRING, OMITEMPTY)},
    "Time": {"seconds": (1, INT, ALWAYS), "nanos": (2, INT, ALWAYS)},
    "ListMeta": {
        "resourceVersion": (2, STRING, OMITEMPTY),
        "continue": (3, STRING, OMITEMPTY),
    },
    "ObjectMeta": {
        "name": (1, STRING, OMITEMPTY),
        "generateName": (2, STRING, OMITEMPTY),
        "namespace": (3, STRING, OMITEMPTY),
        "uid": (5, STRING, OMITEMPTY),
        "resourceVersion": (6, STRING, OMITEMPTY),
        "generation": (7, INT, OMITEMPTY),
        "creationTimestamp": (8, TIME, OMITEMPTY),  # `omitzero` since k8s.io/apimachinery 0.35
        "labels": (11, MAP, OMITEMPTY),
        "annotations": (12, MAP, OMITEMPTY),
    },
    "NodeList": {"metadata": (1, "ListMeta", ALWAYS), "items": (2, ["Node"], ALWAYS)},
    "Node": {
        "metadata": (1, "ObjectMeta", ALWAYS),
        "spec": (2, "NodeSpec", ALWAYS),
        "status": (3, "NodeStatus", ALWAYS),
    },
    "NodeSpec": {"unschedulable": (4, BOOL, OMITEMPTY)},
    "NodeStatus": {"conditions": (4, ["NodeCondition"], OMITEMPTY)},
    "NodeCondition": {
        "type": (1, STRING, ALWAYS),
        "status": (2, STRING, ALWAYS),
        "lastHeartbeatTime": (3, TIME, ALWAYS),
        "lastTransitionTime": (4, TIME, ALWAYS),
        "reason": (5, STRING, OMITEMPTY),
        "message": (6, STRING, OMITEMPTY),
    },
    "Status": {
        "metadata": (1, "ListMeta", ALWAYS),
        "status": (2, STRING, OMITEMPTY),
        "message": (3, STRING, OMITEMPTY),
        "reason": (4, STRING, OMITEMPTY),
        "details": (5, "StatusDetails?", OMITEMPTY),
        "code": (6, INT, OMITEMPTY),
    },
    "StatusDetails": {
        "name": (1, STRING, OMITEMPTY),
        "group": (2, STRING, OMITEMPTY),
        "kind": (3, STRING, OMITEMPTY),
        "uid": (6, STRING, OMITEMPTY),
        "causes": (4, ["StatusCause"], OMITEMPTY),
        "retryAfterSeconds": (5, INT, OMITEMPTY),
    },
    "StatusCause": {
        "reason": (1, STRING, OMITEMPTY),
        "message": (2, STRING, OMITEMPTY),
        "field": (3, STRING, OMITEMPTY),
    },
}
# The whole of a Status, as an error's body is read (`status_json`).
_STATUS_SHAPE = {
    "metadata": {"resourceVersion": STR, "continue": STR},
    "status": STR,
    "message": STR,
    "reason": STR,
    "details": {
        "name": STR,
        "group": STR,
        "kind": STR,
        "uid": STR,
        "causes": [{"reason": STR, "message": STR, "field": STR}],
        "retryAfterSeconds": ANY,
    },
    "code": ANY,
}


class Unreadable(ValueError):
    """A body this module does not read exactly as JSON would give it (read it as JSON instead)."""


_lock = threading.Lock()
_classes: dict[str, Any] = {}
_PACKAGE = "cvopy.kubeproto"
# descriptor.proto's numbers: FieldDescriptorProto's label and type
_OPTIONAL, _REPEATED = 1, 3
_TYPES = {STRING: 9, BOOL: 8, INT: 3, "bytes": 12}
_MESSAGE_TYPE = 11


def _message_classes() -> dict[str, Any]:
    """The message classes of `_MESSAGES`, made at the first use from a descriptor written here
    (no generated code). proto3, so that the parser refuses a string that is not UTF-8; a map is
    read as its repeated entries (the same on the wire), which iterate in C. Not as a map field:
    the parser drops an entry that carries another field than key and value, where Go's reader
    keeps it (a map field's keys are looked up in C, about 2 ms less per 1,000 Nodes' annotations)."""
    with _lock:
        if not _classes:
            try:
                # The C implementation's own pool and class maker: importing them costs about a
                # quarter of the public modules' import (those load the pure-Python
                # implementation as well), which is most of the reader's cost on a small cluster.
                from google._upb import _message as upb
                from google.protobuf.message import Message

                def make(descriptor: Any) -> Any:
                    return upb.MessageMeta(descriptor.name, (Message,), {"DESCRIPTOR": descriptor, "__module__": None})

                pool: Any = upb.DescriptorPool()
            except (ImportError, AttributeError):  # another implementation: the public way
                from google.protobuf import descriptor_pool, message_factory

                make, pool = message_factory.GetMessageClass, descriptor_pool.DescriptorPool()
            pool.AddSerializedFile(file_descriptor())
            for name in ("Entry", *_MESSAGES):
                _classes[name] = make(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
        return _classes


def file_descriptor() -> bytes:
    """A FileDescriptorProto of `_MESSAGES`, encoded (and an `Entry` of a map: key 1, value 2)."""
    entry = _field("key", 1, _OPTIONAL, _TYPES[STRING]) + _field("value", 2, _OPTIONAL, _TYPES[STRING])
    messages = [_bytes_field(1, b"Entry") + entry]
    for name, fields in _MESSAGES.items():
        encoded = _bytes_field(1, name.encode())
        for key, (number, kind, _) in fields.items():
            label = _REPEATED if isinstance(kind, list) or kind == MAP else _OPTIONAL
            target = (
                kind[0] if isinstance(kind, list) else "Entry" if kind == MAP else "bytes" if kind == TIME else kind
            )
            if target in _TYPES:
                encoded += _field(_attr(key), number, label, _TYPES[target])
            else:
                encoded += _field(_attr(key), number, label, _MESSAGE_TYPE, f".{_PACKAGE}.{target.rstrip('?')}")
        messages.append(encoded)
    file = _bytes_field(1, b"cvo_py/runtime/kubeproto.proto") + _bytes_field(2, _PACKAGE.encode())
    file += b"".join(_bytes_field(4, message) for message in messages)
    return file + _bytes_field(12, b"proto3")


def _field(name: str, number: int, label: int, kind: int, type_name: str = "") -> bytes:
    """A FieldDescriptorProto, as the `field` of a DescriptorProto."""
    encoded = _bytes_field(1, name.encode()) + _varint_field(3, number) + _varint_field(4, label)
    encoded += _varint_field(5, kind) + (_bytes_field(6, type_name.encode()) if type_name else b"")
    return _bytes_field(2, encoded)


def _bytes_field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _attr(key: str) -> str:
    """The field's name in the descriptor (a JSON key that is a Python keyword gets a suffix)."""
    return f"{key}_" if key in ("continue",) else key


def _object(body: bytes, kind: str) -> Any:
    """The parsed message of `kind` in a body (Unreadable: not a protobuf of that kind)."""
    from google.protobuf.message import DecodeError

    if not body.startswith(MAGIC):
        raise Unreadable("not a Kubernetes protobuf body")
    classes = _message_classes()
    try:
        try:
            found, raw, encoded = _envelope(body)
        except (Unreadable, UnicodeDecodeError):
            found, raw, encoded = "", None, True
        if found == kind and not encoded:
            data: Any = memoryview(body)[raw[0] : raw[1]] if raw else b""  # parsed where it lies
        else:  # not plainly such an envelope: the parser says what it is
            unknown = classes["Unknown"].FromString(memoryview(body)[len(MAGIC) :])
            if unknown.typeMeta.kind != kind or unknown.contentEncoding:
                raise Unreadable(f"a {unknown.typeMeta.kind or 'object'} where a {kind} was asked for")
            data = unknown.raw
        return classes[kind].FromString(data)
    except DecodeError as exc:
        raise Unreadable(f"a {kind} that does not parse: {exc}") from None


def _envelope(body: bytes | bytearray | Spliced) -> tuple[str, tuple[int, int] | None, bool]:
    """(the kind its TypeMeta names, where its `raw` lies, whether that is encoded) of a body's
    runtime.Unknown, read without copying `raw`: parsing the envelope, then the object from the
    `raw` the parser copies out, took three times as long as the object alone (2.8 MB of 1,000
    Nodes). Its strings are checked as the parser checks them (UnicodeDecodeError); Unreadable
    where the envelope is not plainly one (`_fields`), a field given twice included (the parser
    merges a message given twice)."""
    envelope = _fields(body, len(MAGIC), len(body), once=True)
    type_meta = _fields(body, *envelope.get(1, (0, 0)), once=True)
    _text(body, type_meta, 1)  # apiVersion: a string, as the parser requires
    return _text(body, type_meta, 2), envelope.get(2), bool(_text(body, envelope, 3))


def read_list(body: bytes, shape: Mapping[str, Any], kind: str) -> Any:
    """A LIST's body, its `kind` (e.g. NodeList) read down to `shape` as JSON would give it."""
    message = _object(body, kind)
    try:
        return _reader(kind, shape)(message)
    except UnicodeDecodeError:
        raise Unreadable(f"a {kind} with a string that is not UTF-8") from None


class Spliced:
    """A body of which only the bytes before and after one span are held: the envelope's fields
    around its `raw`, as `_envelope` reads them (it skips `raw` by its length). Reading into the
    span is Unreadable: the envelope is then not the one seen as the body arrived."""

    def __init__(self, head: bytes, gap: int, tail: bytes) -> None:
        self._head, self._gap, self._tail = head, gap, tail
        self._tail_at = len(head) + gap

    def __len__(self) -> int:
        return self._tail_at + len(self._tail)

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, slice):
            start, stop, _ = key.indices(len(self))
            if stop <= len(self._head):
                return self._head[start:stop]
            if start >= self._tail_at:
                return self._tail[start - self._tail_at : stop - self._tail_at]
            if start >= stop:
                return b""
        elif key < len(self._head):
            return self._head[key]
        elif key >= self._tail_at:
            return self._tail[key - self._tail_at]
        raise Unreadable("the envelope reads into its raw")


PEEKED_FIELDS = 8  # fields of the envelope or its TypeMeta that `_envelope` reads at most


def _fields(buf: bytes | bytearray | Spliced, at: int, end: int, *, once: bool = False) -> dict[int, tuple[int, int]]:
    """Field number → (start, end) of its bytes, for the length-delimited fields of the message in
    buf[at:end] (the last of a repeated one; with `once`, Unreadable for one given twice); numbers
    and fixed-size fields skipped; Unreadable for another wire type, a length past the end, or more
    than PEEKED_FIELDS fields."""
    found: dict[int, tuple[int, int]] = {}
    for _ in range(PEEKED_FIELDS):
        if at >= end:
            return found
        tag, at = _parser_varint(buf, at, 5)
        if not 0 < tag >> 3 <= MAX_FIELD_NUMBER:
            raise Unreadable(f"field number {tag >> 3}")
        wire = tag & 7
        if wire == 0:
            _, at = _parser_varint(buf, at, 10)
            continue
        size = {1: 8, 5: 4}.get(wire)
        if size is None:
            if wire != 2:
                raise Unreadable(f"field {tag >> 3} of wire type {wire}")
            size, at = _parser_varint(buf, at, 5)
            if once and tag >> 3 in found:
                raise Unreadable(f"field {tag >> 3} given twice")
            found[tag >> 3] = (at, at + size)
        if at + size > end:
            raise Unreadable(f"field {tag >> 3} past the end of its message")
        at += size
    if at < end:
        raise Unreadable(f"a message of more than {PEEKED_FIELDS} fields")
    return found


MAX_FIELD_NUMBER = (1 << 29) - 1  # as the parser takes them


def _parser_varint(buf: bytes | bytearray | Spliced, at: int, most: int) -> tuple[int, int]:
    """A varint of at most `most` bytes, as the parser reads one (5 for a tag or a length, 10 for
    a number): Unreadable for a longer one, which it refuses."""
    value, end = _read_varint(buf, at)
    if end - at > most:
        raise Unreadable(f"a varint of {end - at} bytes where the parser reads {most} at most")
    return value, end


def _text(buf: bytes | bytearray | Spliced, fields: dict[int, tuple[int, int]], number: int) -> str:
    """String field `number` of those `_fields` found ("" when absent)."""
    start, stop = fields.get(number, (0, 0))
    return buf[start:stop].decode()


def status_json(body: bytes) -> bytes | None:
    """An error answer's protobuf Status as the JSON the API server would have written; None for
    one this module does not read so (a message that is not UTF-8: ask for the error as JSON)."""
    try:
        status = _reader("Status", _STATUS_SHAPE)(_object(body, "Status"))
    except (Unreadable, UnicodeDecodeError):
        return None
    return json.dumps({"kind": "Status", "apiVersion": "v1", **status}).encode()


_readers: dict[tuple[str, str], Callable[[Any], Any]] = {}


def _reader(message: str, shape: Mapping[str, Any]) -> Callable[[Any], dict[str, Any]]:
    """A function reading a `message` down to `shape`, built once per (message, shape)."""
    key = (message, repr(shape))
    found = _readers.get(key)
    if found is None:
        found = _readers[key] = _build_reader(message, shape)
    return found


def _build_reader(message: str, shape: Mapping[str, Any]) -> Callable[[Any], dict[str, Any]]:
    """The reader's source, one statement per field of `shape`, compiled: a Node is read in about
    two thirds of the time a loop over the fields takes (a Node has about 40 fields to read).
    A shape naming what this module does not read is a TypeError: the caller's mistake, never the
    body's (not a ValueError, which a reader of bodies would take for a body to read as JSON)."""
    fields = _MESSAGES[message]
    names: dict[str, Any] = {"time_text": time_text}
    lines = ["def read(v):", "    out = {}"]
    for key, sub in shape.items():
        if key not in fields:
            if key in ("apiVersion", "kind"):
                continue  # a LIST's items carry no type in either encoding
            raise TypeError(f"{message}.{key} is not read from protobuf (add it to kubeproto._MESSAGES)")
        lines.extend(f"    {line}" for line in _statements(message, key, sub, fields[key], names))
    lines.append("    return out")
    namespace: dict[str, Any] = dict(names)
    exec(compile("\n".join(lines), f"<kubeproto {message}>", "exec"), namespace)  # noqa: S102 - source built above from _MESSAGES' names
    read: Callable[[Any], dict[str, Any]] = namespace["read"]
    return read


def _statements(message: str, key: str, sub: Any, field: tuple[int, Any, str], names: dict[str, Any]) -> list[str]:
    """The statements that set `out[key]` as JSON would, or leave it out."""
    _, kind, when = field
    got = f"v.{_attr(key)}"
    store = [f"out[{key!r}] = x"] if when == ALWAYS else ["if x:", f"    out[{key!r}] = x"]
    if kind in (STRING, BOOL, INT):
        if isinstance(sub, Mapping | list | Prefixed | Only | Typed) or sub == STR_MAP:
            raise TypeError(f"{message}.{key} is a {kind}, not {sub!r}")
        return [f"x = {got}", *store]
    if kind == TIME:  # omitempty: `omitzero`, the zero time left out; else written as null
        if when == ALWAYS:
            return [f"out[{key!r}] = time_text({got})"]
        return [f"x = {got}", "if x:", f"    out[{key!r}] = time_text(x)"]
    if kind == MAP:
        if isinstance(sub, Prefixed):  # as `jsonfields.trim` keeps it: {} when no key has the prefix
            names[f"prefix_{key}"] = sub.prefix
            read = f"{{k: e.value for e in x if (k := e.key).startswith(prefix_{key})}}"
        elif isinstance(sub, Only):  # the values of the others are never built
            names[f"keys_{key}"] = sub.keys
            read = f"{{k: e.value for e in x if (k := e.key) in keys_{key}}}"
        elif sub in (STR_MAP, ANY):
            read = "{e.key: e.value for e in x}"
        else:
            raise TypeError(f"{message}.{key} is a map of strings, not {sub!r}")
        return _stored(key, got, read, when)
    if isinstance(kind, list) and isinstance(sub, Typed) and isinstance(sub.item, Mapping):
        if "type" not in _MESSAGES[kind[0]]:
            raise TypeError(f"{message}.{key} is a list of {kind[0]}, which has no type to keep items by")
        names[f"read_{key}"], names[f"types_{key}"] = _reader(kind[0], sub.item), sub.types
        # omitempty on the list as sent: `trim` keeps a list of which no item is kept
        return _stored(key, got, f"[read_{key}(i) for i in x if i.type in types_{key}]", when)
    if isinstance(kind, list):
        if not (isinstance(sub, list) and isinstance(sub[0], Mapping)):
            raise TypeError(f"{message}.{key} is a list of {kind[0]}, read with a one-item list of its shape")
        names[f"read_{key}"] = _reader(kind[0], sub[0])
        return [f"x = [read_{key}(i) for i in {got}]", *store]
    if not isinstance(sub, Mapping):
        raise TypeError(f"{message}.{key} is a {kind.rstrip('?')}, read with a shape of its fields")
    names[f"read_{key}"] = _reader(kind.rstrip("?"), sub)
    if kind.endswith("?"):  # a pointer: JSON writes it only when it is set
        return [f"if v.HasField({_attr(key)!r}):", f"    out[{key!r}] = read_{key}({got})"]
    return [f"out[{key!r}] = read_{key}({got})"]


def _stored(key: str, got: str, read: str, when: str) -> list[str]:
    """The statements that set `out[key]` to `read` of `x` (the field `got`), always, or only when
    the field is not empty (`omitempty`)."""
    if when == ALWAYS:
        return [f"x = {got}", f"out[{key!r}] = {read}"]
    return [f"x = {got}", "if x:", f"    out[{key!r}] = {read}"]


_times: dict[bytes, str | None] = {b"": None}


def time_text(raw: bytes) -> str | None:
    """A `metav1.Time` (its encoded Timestamp) as JSON writes it: UTC to the second, null for the
    zero time (nothing on the wire). Unreadable: a Timestamp this reader does not know."""
    found = _times.get(raw, "")
    if found != "":
        return found
    text = rfc3339(_seconds(raw))
    if len(_times) < 4096:  # a cluster's nodes share few distinct times; a hostile list cannot grow it
        _times[raw] = text
    return text


def _seconds(raw: bytes) -> int:
    """The seconds of an encoded google.protobuf.Timestamp-shaped `metav1.Time` (field 1, an int64
    varint; field 2, the nanoseconds, which JSON does not write)."""
    seconds, at = 0, 0
    while at < len(raw):
        tag, at = _read_varint(raw, at)
        if tag & 7 != 0 or tag >> 3 not in (1, 2):
            raise Unreadable(f"a time with field {tag >> 3} of wire type {tag & 7}")
        value, at = _read_varint(raw, at)
        if tag >> 3 == 1:
            seconds = value - (1 << 64) if value >= 1 << 63 else value
    return seconds


def _read_varint(raw: bytes | bytearray | Spliced, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if at >= len(raw) or shift > 63:
            raise Unreadable("a varint that is cut short")
        byte = raw[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value & ((1 << 64) - 1), at


def rfc3339(seconds: int) -> str:
    """Seconds from 1970 as JSON writes a `metav1.Time`: UTC, to the second, a four-digit year
    (years 1 to 9999; a time outside them is Unreadable, its answer read as JSON instead)."""
    if not ZERO_TIME <= seconds * SECOND <= MAX_TIME:
        raise Unreadable(f"a time {seconds} s from 1970 JSON does not write")
    return format_time(seconds * SECOND, nanos=False)
