"""Plain block YAML, the shape kubectl, oc and client-go write kubeconfigs in, read without PyYAML.

    read(text, limits) -> the document, or NOT_PLAIN

A short-lived command (`upgrade-status`) reads one kubeconfig, and importing PyYAML for it costs
about 9 ms of its start-up. This reader takes only documents whose every line is one of:

    key: value        key:        - value        - key: value        -        # a comment

in block mappings and sequences indented with spaces, where a key is a plain word and a value is
a plain scalar on one line, a one-line quoted scalar without escapes, `{}` or `[]`. Plain values
are read only where their YAML 1.1 type is sure: the boolean and null words, decimal integers,
and text, including text that starts with a digit but cannot be a number (hex tokens, UIDs).
Anything that could be a float, a timestamp, a merge key or an octal number is not read here;
nor is anything else: flow collections, block scalars, anchors, aliases, tags, document markers,
comments after content, tabs, carriage returns and non-ASCII text. Those documents are
NOT_PLAIN, and `cvo_py.runtime.safeyaml` reads them (and reports their errors).

What this reader returns equals what `safeyaml` builds from the same text, types and key order
included (tests/cvo_py/runtime/test_plainyaml.py compares them on random documents).
"""

from __future__ import annotations

import re
from typing import Any

from cvo_py.runtime.docbounds import Limits

__all__ = ["MAX_BYTES", "NOT_PLAIN", "read"]

NOT_PLAIN: Any = object()
# Larger documents (snapshots, dumps) go to libyaml: this reader pays only for a small file.
MAX_BYTES = 256 << 10
_DECIMAL_DIGITS = 18  # an int64 has 19: any 18-digit decimal is one
_MAX_KEY = 1000  # libyaml refuses a key of more than 1,024 characters
_MAX_DEPTH = 64  # levels read here (the reader recurses); a deeper document goes to libyaml

# What no accepted document holds: a byte that is not printable ASCII (tabs, CRs, non-ASCII), a
# comment after content (or an indented one).
_UNREADABLE = re.compile("[^\n\x20-\x7e]| #")
# YAML 1.1's typed words (PyYAML's resolver) among plain scalars that start with a letter.
_WORDS: dict[str, Any] = {
    **{w: True for w in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{w: False for w in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{w: None for w in ("null", "Null", "NULL")},
}


class _NotPlain(Exception):
    """The document is not in the shape this reader takes."""


def read(text: str, limits: Limits) -> Any:
    """The document `text` holds, or NOT_PLAIN (see the module docstring)."""
    if len(text) > MAX_BYTES or _UNREADABLE.search(text) is not None:
        return NOT_PLAIN
    lines: list[tuple[int, str]] = []
    for line in text.split("\n"):
        content = line.rstrip(" ")
        stripped = content.lstrip(" ")
        if stripped and stripped[0] != "#":
            lines.append((len(content) - len(stripped), stripped))
    if not lines:
        return NOT_PLAIN
    try:
        doc, end = _Reader(lines, min(limits.max_depth, _MAX_DEPTH), limits.max_number_chars).block(0, 1)
    except _NotPlain:
        return NOT_PLAIN
    return doc if end == len(lines) else NOT_PLAIN


class _Reader:
    __slots__ = ("lines", "max_depth", "max_number_chars")

    def __init__(self, lines: list[tuple[int, str]], max_depth: int, max_number_chars: int) -> None:
        self.lines = lines
        self.max_depth = max_depth
        self.max_number_chars = max_number_chars

    def block(self, i: int, depth: int) -> tuple[Any, int]:
        """The collection whose first line is line `i`, and the line after it."""
        indent, content = self.lines[i]
        if _is_item(content):
            return self.sequence(i, indent, depth)
        return self.mapping(i, indent, depth)

    def mapping(self, i: int, indent: int, depth: int) -> tuple[dict[str, Any], int]:
        if depth > self.max_depth:
            raise _NotPlain
        lines, n = self.lines, len(self.lines)
        out: dict[str, Any] = {}
        while i < n:
            col, content = lines[i]
            if col < indent:
                break
            if col > indent or _is_item(content):
                raise _NotPlain
            key, rest = self.key(content)
            i += 1
            if rest:
                out[key] = self.scalar(rest, depth + 1)
            elif i < n and lines[i][0] > indent:
                out[key], i = self.block(i, depth + 1)
            elif i < n and lines[i][0] == indent and _is_item(lines[i][1]):
                out[key], i = self.sequence(i, indent, depth + 1)  # `- ` under its key, unindented
            else:
                out[key] = None
        return out, i

    def sequence(self, i: int, indent: int, depth: int) -> tuple[list[Any], int]:
        if depth > self.max_depth:
            raise _NotPlain
        lines, n = self.lines, len(self.lines)
        out: list[Any] = []
        while i < n:
            col, content = lines[i]
            if col < indent or (col == indent and not _is_item(content)):
                break
            if col > indent:
                raise _NotPlain
            rest = content[1:].lstrip(" ")
            if not rest:  # `-` alone: the block below it, or null
                i += 1
                if i < n and lines[i][0] > indent:
                    item, i = self.block(i, depth + 1)
                else:
                    item = None
            elif _is_item(rest):
                raise _NotPlain  # `- - a`: not a shape kubeconfigs take
            elif rest.find(": ") >= 0 or rest[-1] == ":":
                # `- key: value`: a mapping whose first line shares the item's
                lines[i] = (col + len(content) - len(rest), rest)
                item, i = self.mapping(i, lines[i][0], depth + 1)
            else:
                item = self.scalar(rest, depth + 1)
                i += 1
            out.append(item)
        return out, i

    def key(self, content: str) -> tuple[str, str]:
        """A mapping line's key and what follows it (empty when the value is on the lines below)."""
        at = content.find(": ")
        if at >= 0:
            key, rest = content[:at], content[at + 2 :].lstrip(" ")
        elif content[-1] == ":":
            key, rest = content[:-1], ""
        else:
            raise _NotPlain
        if not key or len(key) > _MAX_KEY or key[-1] in " :" or not _is_word(key) or key in _WORDS:
            raise _NotPlain  # a key read as anything but a string is not read here
        return key, rest

    def scalar(self, text: str, depth: int) -> Any:
        """A value written on one line after `key: ` or `- ` (`depth`: its level, were it a collection)."""
        first = text[0]
        if first == "'":
            inner = text[1:-1]
            if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
                raise _NotPlain
            return inner.replace("''", "'")
        if first == '"':
            inner = text[1:-1]
            if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
                raise _NotPlain
            return inner
        if text in ("{}", "[]"):
            if depth > self.max_depth:
                raise _NotPlain  # an empty collection is a level too
            return {} if text == "{}" else []
        if first.isdigit():
            if text.isdigit():
                if (first != "0" or text == "0") and len(text) <= min(_DECIMAL_DIGITS, self.max_number_chars):
                    return int(text)
                raise _NotPlain  # octal, or long
            # YAML 1.1 numbers other than decimals hold `.`, `:` or `_`, or start 0x or 0b; timestamps
            # start with a year and `-` (the builder keeps them as text, but leaves them to it).
            if text[:2] in ("0x", "0b") or any(c in "._:" for c in text) or (text[4:5] == "-" and text[:4].isdigit()):
                raise _NotPlain
            if ": " in text or text[-1] == ":":
                raise _NotPlain
            return text  # a hex token that starts with a digit, say
        if not _is_word(text) or text[-1] == ":" or ": " in text:
            raise _NotPlain
        return _WORDS.get(text, text)


def _is_item(content: str) -> bool:
    return content[0] == "-" and (len(content) == 1 or content[1] == " ")


def _is_word(text: str) -> bool:
    """A plain scalar that starts with a letter, `_` or `/` (no YAML indicator, number or float word)."""
    first = text[0]
    return first.isalpha() or first in "_/"
