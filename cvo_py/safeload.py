"""The one loader for YAML and JSON documents that come from outside: snapshot files, ConfigMap values, dumps.

    load_document(data, *, source, limits=DEFAULT_LIMITS, yaml_floats=True) -> Any

returns plain Python data (dict, list, str, int, float, bool, None) or raises `DocumentError`, whose
`str()` is one line: `<source>: <problem>` (`source` names the file or ConfigMap key). Nothing else
escapes for any input, however hostile.

Bounds (`Limits`, the defaults in `DEFAULT_LIMITS`):

- input size: at most 64 MiB (`max_bytes`). A larger document is refused before it is parsed (a
  100 MB snapshot is one line). Memory follows the input: measured peak RSS of `upgrade-status` is
  about 40 MB plus 3.5× (JSON) to 5× (YAML) the input, under 400 MB at the limit
  (bench/hostile_inputs.py prints the figures).
- nesting: at most 128 levels of mappings and sequences (`max_depth`). Nothing here recurses: YAML
  is built from the event stream of libyaml's parser (which keeps its own heap stack); Python's
  JSON scanner recurses only under the interpreter's recursion guard (a deeper document is an
  error, not a crash), and what it returns is measured level by level.
- aliases: at most 64 alias references (`max_aliases`), which together may stand for at most
  10,000 nodes (`max_alias_nodes`, counted as if every alias were expanded). Aliases are shared,
  not copied, so a "billion laughs" document is refused after a few events and never grows.
- numbers: an integer or float written with more than 100 characters (`max_number_chars`) is
  refused (Go's int64 needs 19); JSON's NaN and Infinity are refused.
- types: only the standard tags (null, bool, int, float, str, map, seq, merge); timestamps stay
  strings (the readers parse them with nanoseconds); any other tag, a non-scalar mapping key,
  several documents in one input, or bytes that are not UTF-8 are errors. Lone UTF-16 surrogates
  written as escapes become U+FFFD, as Go's decoders do.

`yaml_floats=False` keeps YAML floats as their text (`4.14` stays "4.14", the way snapshot files
mean versions); JSON numbers are numbers either way.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import ScalarNode

from cvo_py.gotext import escape

__all__ = ["DEFAULT_LIMITS", "DocumentError", "Limits", "load_document"]


class DocumentError(ValueError):
    """A document that cannot be used. `str()` is one line: `<source>: <problem>`."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = escape(" ".join(problem.split())[:300])  # printable, whatever the input held
        super().__init__(f"{escape(source)}: {self.problem}")


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 64 * 1024 * 1024
    max_depth: int = 128
    max_aliases: int = 64
    max_alias_nodes: int = 10_000
    max_number_chars: int = 100


DEFAULT_LIMITS = Limits()

_TAG = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = (_TAG + t for t in ("str", "null", "bool", "int", "float"))
_MERGE, _TIMESTAMP, _VALUE = _TAG + "merge", _TAG + "timestamp", _TAG + "value"
_MAP_TAGS = {None, "!", _TAG + "map"}
_SEQ_TAGS = {None, "!", _TAG + "seq"}


class _Resolver(yaml.resolver.Resolver):
    """YAML 1.1 implicit types, except timestamps (kept as strings)."""


_Resolver.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP]
    for ch, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_RESOLVER = _Resolver()
_SCALAR_EVENT = yaml.ScalarEvent
_STREAM_END_EVENT = yaml.StreamEndEvent
_CACHED_SCALAR = 64  # plain scalars up to this length have their resolved tag cached


def _resolve_plain(value: str) -> str:
    """The tag of a plain (unquoted, untagged) scalar."""
    return str(_RESOLVER.resolve(ScalarNode, value, (True, False)))  # type: ignore[no-untyped-call]


# A snapshot repeats the same short plain scalars (names, labels, booleans) thousands of times.
_plain_tag = functools.lru_cache(maxsize=16384)(_resolve_plain)
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_PARSER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_document(
    data: bytes | str,
    *,
    source: str,
    limits: Limits = DEFAULT_LIMITS,
    yaml_floats: bool = True,
) -> Any:
    """Parse one YAML or JSON document within `limits`; see the module docstring."""
    if isinstance(data, str):
        try:
            size = len(data.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise DocumentError(source, f"not UTF-8 (a lone surrogate at character {exc.start})") from None
    else:
        size = len(data)
    if size > limits.max_bytes:
        raise DocumentError(source, f"{size} bytes, more than the limit of {limits.max_bytes} bytes")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocumentError(source, f"not UTF-8 (invalid byte at offset {exc.start})") from None
    else:
        text = data
    head = text.lstrip(" \t\r\n\ufeff")[:1]
    doc: Any
    if head in ("{", "["):
        doc = _json(text, source, limits)
        if doc is not _NOT_JSON:
            return _fix_surrogates(doc, text)
    doc = _Builder(source, limits, yaml_floats).build(text)
    return _fix_surrogates(doc, text)


# --- JSON ----------------------------------------------------------------------------------------

_NOT_JSON = object()


@functools.lru_cache(maxsize=8)
def _json_decoder(limits: Limits) -> json.JSONDecoder:
    """One decoder per bounds (building one per document costs more than decoding a small value)."""

    def number(kind: type[int] | type[float]) -> Any:
        def parse(s: str) -> int | float:
            if len(s) > limits.max_number_chars:
                raise _NumberError(
                    f"a number of {len(s)} characters (the limit is {limits.max_number_chars})"
                )
            return kind(s)

        return parse

    def constant(s: str) -> Any:
        raise _NumberError(f"{s} is not a JSON number")

    return json.JSONDecoder(parse_int=number(int), parse_float=number(float), parse_constant=constant)


class _NumberError(ValueError):
    """A number the bounds refuse (a ValueError the JSON scanner passes through unchanged)."""


def _json(text: str, source: str, limits: Limits) -> Any:
    """The JSON document, or `_NOT_JSON` when the text is not JSON (YAML flow style may still read it).

    Python's JSON scanner recurses, but through the interpreter's recursion guard: a document
    nested past it is a RecursionError, not a crash. What it returns is measured without recursion."""
    try:
        doc = _json_decoder(limits).decode(text)
    except json.JSONDecodeError:
        return _NOT_JSON
    except _NumberError as exc:
        raise DocumentError(source, str(exc)) from None
    except RecursionError:
        raise DocumentError(source, f"nested more than {limits.max_depth} levels deep") from None
    if len(text) > limits.max_depth and _deeper_than(doc, limits.max_depth):  # a level takes a character
        raise DocumentError(source, f"nested more than {limits.max_depth} levels deep")
    return doc


def _deeper_than(doc: Any, limit: int) -> bool:
    """Whether mappings and sequences nest more than `limit` levels, walked level by level."""
    level = [doc] if type(doc) in (dict, list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        add = below.append
        for container in level:
            for value in container.values() if type(container) is dict else container:
                kind = type(value)
                if kind is dict or kind is list:
                    add(value)
        level = below
    return False


# --- YAML ----------------------------------------------------------------------------------------

_NO_KEY = object()
_MERGE_KEY = object()


class _Frame:
    __slots__ = ("anchor", "key", "obj", "size")

    def __init__(self, obj: dict[Any, Any] | list[Any], anchor: str | None) -> None:
        self.obj = obj
        self.anchor = anchor
        self.key: Any = _NO_KEY
        self.size = 1


class _Builder:
    """Builds the document from parser events with an explicit stack (no recursion)."""

    def __init__(self, source: str, limits: Limits, floats: bool) -> None:
        self.source = source
        self.limits = limits
        self.floats = floats
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.aliases = 0
        self.alias_nodes = 0
        self.stack: list[_Frame] = []
        self.root: Any = None
        self.documents = 0

    def fail(self, problem: str, event: Any = None) -> DocumentError:
        mark = getattr(event, "start_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        return DocumentError(self.source, f"{problem}{where}")

    def build(self, text: str) -> Any:
        """The document. Scalars in a collection, nearly every event, are handled inline; every
        other event (and a scalar with an anchor, a tag or a merge key) goes through `event()`."""
        stack = self.stack
        loader = None
        try:
            loader = _PARSER(text)
            get_event = loader.get_event
            while True:
                event = get_event()
                kind = type(event)
                if kind is _SCALAR_EVENT and event.anchor is None and event.tag is None and stack:
                    value = event.value
                    if event.implicit[0]:  # plain: its type follows from its text
                        tag = _plain_tag(value) if len(value) <= _CACHED_SCALAR else _resolve_plain(value)
                        if tag != _STR:
                            value = self.scalar(event, tag)
                            if value is _MERGE_KEY:
                                self.add(value, 1, event)
                                continue
                    frame = stack[-1]
                    frame.size += 1
                    obj = frame.obj
                    if type(obj) is list:
                        obj.append(value)
                    elif frame.key is _NO_KEY:
                        frame.key = value
                    elif frame.key is _MERGE_KEY:
                        frame.size -= 1
                        self.add(value, 1, event)
                    else:
                        obj[frame.key] = value
                        frame.key = _NO_KEY
                elif kind is _STREAM_END_EVENT or event is None:
                    break
                else:
                    self.event(event)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise DocumentError(
                self.source, f"cannot parse{where}: {exc.problem or exc.context or 'invalid YAML'}"
            ) from None
        except yaml.YAMLError as exc:
            raise DocumentError(self.source, f"cannot parse: {str(exc)[:200]}") from None
        finally:
            if loader is not None:
                loader.dispose()
        return self.root

    def event(self, event: Any) -> None:
        if isinstance(event, yaml.ScalarEvent):
            value = self.scalar(event)
            if event.anchor is not None:
                self.anchors[event.anchor] = (value, 1)
            self.add(value, 1, event)
        elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            is_map = isinstance(event, yaml.MappingStartEvent)
            if event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS):
                raise self.fail(f"unsupported tag {event.tag!r}", event)
            if len(self.stack) >= self.limits.max_depth:
                raise self.fail(f"nested more than {self.limits.max_depth} levels deep", event)
            if self.stack and self.stack[-1].key is _NO_KEY and isinstance(self.stack[-1].obj, dict):
                raise self.fail("a mapping key that is not a scalar", event)
            self.stack.append(_Frame({} if is_map else [], event.anchor))
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            frame = self.stack.pop()
            if frame.anchor is not None:
                self.anchors[frame.anchor] = (frame.obj, frame.size)
            self.add(frame.obj, frame.size, event)
        elif isinstance(event, yaml.AliasEvent):
            found = self.anchors.get(event.anchor or "")
            if found is None:
                raise self.fail(f"alias *{event.anchor} names no complete anchor", event)
            self.aliases += 1
            self.alias_nodes += found[1]
            if self.aliases > self.limits.max_aliases:
                raise self.fail(f"more than {self.limits.max_aliases} aliases", event)
            if self.alias_nodes > self.limits.max_alias_nodes:
                raise self.fail(f"aliases expand to more than {self.limits.max_alias_nodes} nodes", event)
            self.add(found[0], found[1], event)
        elif isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise self.fail("more than one document", event)

    def scalar(self, event: Any, tag: str | None = None) -> Any:
        """The value of a scalar event (`tag`: its resolved tag when the caller knows it)."""
        value: str = event.value
        if tag is None:
            tag = event.tag
            if tag is None or tag == "!":
                tag = _RESOLVER.resolve(ScalarNode, value, event.implicit)  # type: ignore[no-untyped-call]
        if tag in (_STR, _TIMESTAMP, _VALUE):
            return value
        if tag == _NULL:
            return None
        if tag == _BOOL:
            return _CONSTRUCTOR.construct_yaml_bool(ScalarNode(tag, value))
        if tag in (_INT, _FLOAT):
            if tag == _FLOAT and not self.floats:
                return value
            if len(value) > self.limits.max_number_chars:
                raise self.fail(
                    f"a number of {len(value)} characters (the limit is {self.limits.max_number_chars})", event
                )
            try:
                if tag == _INT:
                    return _CONSTRUCTOR.construct_yaml_int(ScalarNode(tag, value))
                return _CONSTRUCTOR.construct_yaml_float(ScalarNode(tag, value))
            except ValueError:
                raise self.fail(f"invalid number {value[:40]!r}", event) from None
        if tag == _MERGE:
            return _MERGE_KEY
        raise self.fail(f"unsupported tag {tag!r}", event)

    def add(self, value: Any, size: int, event: Any) -> None:
        if not self.stack:
            if value is _MERGE_KEY:
                value = "<<"
            self.root = value
            return
        frame = self.stack[-1]
        frame.size += size
        obj = frame.obj
        if isinstance(obj, list):
            obj.append("<<" if value is _MERGE_KEY else value)
            return
        if frame.key is _NO_KEY:
            if isinstance(value, dict | list):
                raise self.fail("a mapping key that is not a scalar", event)
            frame.key = value
            return
        key, frame.key = frame.key, _NO_KEY
        if key is _MERGE_KEY:
            sources = value if isinstance(value, list) else [value]
            if not all(isinstance(s, dict) for s in sources):
                raise self.fail("a merge key (<<) whose value is not a mapping or a list of mappings", event)
            for merged in sources:
                for k, v in merged.items():
                    obj.setdefault(k, v)
            return
        obj[key] = "<<" if value is _MERGE_KEY else value


# --- strings -------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
# The escapes that could write one (libyaml refuses them in YAML; JSON's scanner takes them).
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")


def _fix_surrogates(doc: Any, text: str) -> Any:
    """Lone surrogates (only escapes can write them) become U+FFFD, as in Go; walked without recursion."""
    if _SURROGATE_ESCAPE.search(text) is None:
        return doc

    def fix(v: Any) -> Any:
        return _SURROGATE.sub("\ufffd", v) if isinstance(v, str) else v

    pending: list[Any] = [doc]
    seen: set[int] = set()
    while pending:
        cur = pending.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, dict):
            for k in list(cur):
                v = cur[k]
                nk = fix(k)
                if nk != k:
                    del cur[k]
                cur[nk] = fix(v)
                if isinstance(v, dict | list):
                    pending.append(v)
        elif isinstance(cur, list):
            for i, v in enumerate(cur):
                cur[i] = fix(v)
                if isinstance(v, dict | list):
                    pending.append(v)
    return fix(doc)
