"""The YAML half of `cvo_py.runtime.safeload`: documents built from libyaml's event stream within `Limits`.

An explicit stack instead of recursion (no depth can crash it), aliases shared rather than copied
and counted as if expanded, YAML 1.1 implicit types without timestamps. Use it through
`cvo_py.runtime.safeload.load_document`, which imports this module only for a document that is not JSON.

`go=True` reads a document as Kubernetes reads a manifest (`sigs.k8s.io/yaml` over go-yaml v2, through
`safeload.load_go_yaml`): go-yaml's own implicit types (`y`, `n`, `on`, `off` are booleans; `0o17`,
`017`, `0x1F`, `1_000` integers; `1e3` a float; integers past int64 up to uint64), its merge keys (a
merged value overrides the keys before it), only the first document, and mapping keys turned into
the strings `sigs.k8s.io/yaml` writes for JSON (`true`, `1`, a float as float32 `%g`).
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

import yaml
from yaml.nodes import ScalarNode

from cvo_py.runtime.docbounds import DocumentError, Limits, containers
from cvo_py.runtime.gotext.numbers import INT64_MAX, INT64_MIN, format_float32_g, parse_float, parse_int_base0
from cvo_py.runtime.gotext.quoting import go_quote

__all__ = ["Builder"]

_TAG = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = (_TAG + t for t in ("str", "null", "bool", "int", "float"))
_MERGE, _TIMESTAMP, _VALUE, _BINARY = _TAG + "merge", _TAG + "timestamp", _TAG + "value", _TAG + "binary"
_MAP_TAGS = {None, "!", _TAG + "map"}
_SEQ_TAGS = {None, "!", _TAG + "seq"}


class _Resolver(yaml.resolver.Resolver):
    """YAML 1.1 implicit types, except timestamps (kept as strings)."""


_Resolver.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP]
    for ch, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_RESOLVER = _Resolver()
# The text each standard scalar tag can hold: what would resolve to it untagged (YAML 1.1). An
# explicit tag on any other text (`!!bool maybe`, `!!int ''`) is an error, as in Go's YAML decoder.
_TAG_TEXT = {
    tag: rx
    for resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.values()
    for tag, rx in resolvers
    if tag != _TAG + "yaml"
}
_INFINITY = float("inf")
_SCALAR_EVENT = yaml.ScalarEvent
_STREAM_END_EVENT = yaml.StreamEndEvent
_DOCUMENT_END_EVENT = yaml.DocumentEndEvent
_CACHED_SCALAR = 64  # plain scalars up to this length have their resolved tag cached


def _short(tag: str) -> str:
    """A standard tag as YAML writes it (`!!int`)."""
    return "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag


def _resolve_plain(value: str) -> str:
    """The tag of a plain (unquoted, untagged) scalar."""
    return str(_RESOLVER.resolve(ScalarNode, value, (True, False)))  # type: ignore[no-untyped-call]


# A snapshot repeats the same short plain scalars (names, labels, booleans) thousands of times.
_plain_tag = functools.lru_cache(maxsize=16384)(_resolve_plain)
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_PARSER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# libyaml (from the one in PyYAML 6.0.4's wheels) refuses nesting past 1,000 levels itself, while
# scanning ahead of the events this builder counts: the same verdict as ours, told as ours.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"
_NO_KEY = object()
_MERGE_KEY = object()


class _Frame:
    __slots__ = ("anchor", "key", "obj", "size")

    def __init__(self, obj: dict[Any, Any] | list[Any], anchor: str | None) -> None:
        self.obj = obj
        self.anchor = anchor
        self.key: Any = _NO_KEY
        self.size = 1


# go-yaml v2's resolution of plain scalars (its resolve.go): the words it looks up, the characters
# that make a scalar worth looking at, and the float syntax it accepts once integers failed.
_GO_WORDS: dict[str, tuple[str, Any]] = {
    **{w: (_BOOL, True) for w in "y Y yes Yes YES true True TRUE on On ON".split()},
    **{w: (_BOOL, False) for w in "n N no No NO false False FALSE off Off OFF".split()},
    **{w: (_NULL, None) for w in ("", "~", "null", "Null", "NULL")},
    **{w: (_FLOAT, math.nan) for w in (".nan", ".NaN", ".NAN")},
    **{w: (_FLOAT, math.inf) for w in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{w: (_FLOAT, -math.inf) for w in ("-.inf", "-.Inf", "-.INF")},
}
_GO_HINTS = frozenset("+-0123456789yYnNtTfFoO~.")
_GO_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")


def _go_resolve(value: str) -> tuple[str, Any]:
    """The tag and value go-yaml v2 gives a plain scalar decoded into interface{} (a timestamp stays
    its text, as go-yaml keeps it for interface{})."""
    if value == "<<":
        return _MERGE, _MERGE_KEY
    if value and value[0] not in _GO_HINTS:
        return _STR, value
    word = _GO_WORDS.get(value)
    if word is not None:
        return word
    if value[0] == ".":
        number = parse_float(value)
        return (_FLOAT, number) if number is not None else (_STR, value)
    if value[0] in "+-0123456789":
        plain = value.replace("_", "")
        integer = parse_int_base0(plain)
        if integer is None:
            integer = parse_int_base0(plain, signed=False)
        if integer is not None:
            return _INT, integer
        if _GO_YAML_FLOAT.fullmatch(plain):
            number = parse_float(plain)
            if number is not None:
                return _FLOAT, number
    return _STR, value


_go_resolve_cached = functools.lru_cache(maxsize=16384)(_go_resolve)


def _go_plain_tag(value: str) -> str:
    return (_go_resolve_cached(value) if len(value) <= _CACHED_SCALAR else _go_resolve(value))[0]


# The hot path's: short plain scalars, their tags cached (the values are, by _go_resolve_cached).
_go_plain_tag_cached = functools.lru_cache(maxsize=16384)(_go_plain_tag)


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag


class _UnsupportedKey:
    """A mapping key go mode cannot turn into a JSON key, with the error it is if it stays."""

    __slots__ = ("error",)

    def __init__(self, error: DocumentError) -> None:
        self.error = error


class Builder:
    """Builds the document from parser events with an explicit stack (no recursion)."""

    def __init__(self, source: str, limits: Limits, floats: bool, go: bool = False) -> None:
        self.source = source
        self.limits = limits
        self.floats = floats
        self.go = go
        self.unsupported_keys = 0
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
        go = self.go
        plain_tag = _plain_tag if not go else _go_plain_tag_cached
        resolve_long = _resolve_plain if not go else _go_plain_tag
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
                        tag = plain_tag(value) if len(value) <= _CACHED_SCALAR else resolve_long(value)
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
                        frame.key = value if not go or type(value) is str else self.go_key(value, event)
                    elif frame.key is _MERGE_KEY:
                        frame.size -= 1
                        self.add(value, 1, event)
                    else:
                        obj[frame.key] = value
                        frame.key = _NO_KEY
                elif kind is _STREAM_END_EVENT or event is None or (go and kind is _DOCUMENT_END_EVENT):
                    break  # go-yaml reads the first document and ignores what follows
                else:
                    self.event(event)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f" at line {mark.line + 1}" if mark is not None else ""
            if exc.problem == _LIBYAML_TOO_DEEP:  # libyaml's own bound (PyYAML 6.0.4), far beyond ours
                raise DocumentError(
                    self.source, f"nested more than {self.limits.max_depth} levels deep{where}"
                ) from None
            raise DocumentError(
                self.source, f"cannot parse{where}: {exc.problem or exc.context or 'invalid YAML'}"
            ) from None
        except yaml.YAMLError as exc:
            raise DocumentError(self.source, f"cannot parse: {str(exc)[:200]}") from None
        finally:
            if loader is not None:
                loader.dispose()
        if self.unsupported_keys:
            self.check_keys()
        return self.root

    def event(self, event: Any) -> None:
        if isinstance(event, yaml.ScalarEvent):
            value = self.scalar(event)
            if event.anchor is not None:
                self.anchors[event.anchor] = (value, 1)
            self.add(value, 1, event)
        elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            is_map = isinstance(event, yaml.MappingStartEvent)
            if event.tag not in (_MAP_TAGS if is_map else _SEQ_TAGS) and not self.go:  # go-yaml ignores them
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
        if self.go:
            return self.go_scalar(event, tag)
        explicit = False
        if tag is None:
            tag = event.tag
            if tag is None or tag == "!":
                tag = _RESOLVER.resolve(ScalarNode, value, event.implicit)  # type: ignore[no-untyped-call]
            elif tag != _STR:
                explicit = True
                pattern = _TAG_TEXT.get(tag)
                if pattern is None:
                    raise self.fail(f"unsupported tag {tag!r}", event)
                if pattern.match(value) is None:
                    raise self.fail(f"{_short(tag)} cannot hold {go_quote(value[:40])}", event)
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
                number = _CONSTRUCTOR.construct_yaml_float(ScalarNode(tag, value))
            except ValueError:
                if not explicit:
                    return value  # text that only looks like a number (`0x_`): Go's decoder keeps it as text
                raise self.fail(f"invalid number {go_quote(value[:40])}", event) from None
            if number in (_INFINITY, -_INFINITY) and "inf" not in value.lower():
                # Past float64 (`1.0e+400`): Go's decoder keeps such plain text as text, and refuses it tagged.
                if not explicit:
                    return value
                raise self.fail(f"{_short(tag)} out of range: {go_quote(value[:40])}", event)
            return number
        if tag == _MERGE:
            return _MERGE_KEY
        raise self.fail(f"unsupported tag {tag!r}", event)

    def go_scalar(self, event: Any, tag: str | None) -> Any:
        """A scalar's value as go-yaml v2 decodes it into interface{}."""
        value: str = event.value
        if tag is None:
            explicit = event.tag
            if explicit is None:
                tag = _go_plain_tag(value) if event.implicit[0] else _STR
            elif explicit in (_INT, _FLOAT, _BOOL):
                tag = _go_plain_tag(value)
                if tag != explicit and not (explicit == _FLOAT and tag == _INT):
                    wanted = _short_tag(explicit)
                    raise self.fail(f"cannot decode {_short_tag(tag)} `{value[:40]}` as a {wanted}", event)
                if tag == _INT and explicit == _FLOAT:
                    return float(_go_resolve(value)[1])
            elif explicit == _BINARY:
                raise self.fail(f"unsupported tag {explicit!r}", event)
            else:  # !!str, and every tag go-yaml does not resolve (local ones, !!null…): the text
                tag = _STR
        if tag == _STR:
            return value
        # No bound on a number's length: go-yaml's integers stop at 64 bits, and longer text is a
        # float or a string, each read in time proportional to its length.
        return (_go_resolve_cached(value) if len(value) <= _CACHED_SCALAR else _go_resolve(value))[1]

    def go_key(self, key: Any, event: Any) -> Any:
        """A mapping key as `sigs.k8s.io/yaml` turns it into a JSON object's key."""
        if key is True or key is False:
            return "true" if key else "false"
        if type(key) is int and INT64_MIN <= key <= INT64_MAX:
            return str(key)
        if type(key) is float:
            text = format_float32_g(key)
            return {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}.get(text, text)
        # A key JSON cannot have (null, past int64) fails only if it is still there at the end, as
        # Kubernetes converts the decoded document: a later duplicate key may replace its mapping.
        kind = "<nil>" if key is None else "uint64" if type(key) is int else type(key).__name__
        self.unsupported_keys += 1
        return _UnsupportedKey(self.fail(f"unsupported map key of type: {kind}", event))

    def check_keys(self) -> None:
        """Fail on the first unsupported key left in the document (see `go_key`)."""
        for cur in containers(self.root):
            for key in cur if isinstance(cur, dict) else ():
                if type(key) is _UnsupportedKey:
                    raise key.error

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
            frame.key = value if not self.go or type(value) is str or value is _MERGE_KEY else self.go_key(value, event)
            return
        key, frame.key = frame.key, _NO_KEY
        if key is _MERGE_KEY:
            sources = value if isinstance(value, list) else [value]
            if not all(isinstance(s, dict) for s in sources):
                raise self.fail("a merge key (<<) whose value is not a mapping or a list of mappings", event)
            if self.go:  # in place, overriding the keys before it; of several, the first wins
                for merged in reversed(sources):
                    obj.update(merged)
                return
            for merged in sources:
                for k, v in merged.items():
                    obj.setdefault(k, v)
            return
        obj[key] = "<<" if value is _MERGE_KEY else value
