"""Quoting and display escaping as Go's strconv does it.

    go_quote(text) -> str   Go's strconv.Quote / `%q`: the quoted, escaped string.
    go_unquote(literal)     Go's strconv.Unquote of a "double-quoted" or `raw` string literal.
    escape(text) -> str     what every displayed string goes through: Go's `%q` escaping without the
                            surrounding quotes, and with `"` and `\\` left as they are, so printable
                            text is unchanged (byte-identical to what oc prints for it).

The quoting functions take `str` or `bytes`. Bytes that are not UTF-8 (and, in a `str`, the surrogates that stand
for them under Python's "surrogateescape", or any other lone surrogate as its UTF-8 bytes) are shown
as `\\xNN`, byte by byte, as Go shows invalid UTF-8. Escaped: `\\a \\b \\f \\n \\r \\t \\v`, other C0
controls and DEL as `\\xNN`, and every rune Go's unicode.IsPrint rejects (C1 controls, format
characters such as the bidi overrides U+202A–U+202E and isolates U+2066–U+2069, line and paragraph
separators, spaces other than U+0020, unassigned code points) as `\\uNNNN` or `\\UNNNNNNNN`.
unicode.IsPrint accepts letters, marks, numbers, punctuation, symbols and U+0020, which is
exactly what Python's str.isprintable() accepts.
"""

from __future__ import annotations

_NAMED = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str | bytes) -> str:
    """Go's strconv.Quote(text) (what `%q` prints for a string)."""
    return '"' + _escape(text, quote=True) + '"'


def escape(text: str | bytes) -> str:
    """`text` with every character a terminal could act on shown as Go's `%q` shows it (no quotes added)."""
    if type(text) is str and text.isprintable():
        return text  # the common case, checked here first: renderers call this for every cell
    return _escape(text, quote=False)


def _escape(text: str | bytes, *, quote: bool) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    if text.isprintable() and (not quote or ('"' not in text and "\\" not in text)):
        return text  # the common case: nothing to escape
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if quote and ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _NAMED:
            out.append(_NAMED[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte under surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:  # any other lone surrogate: its (invalid) UTF-8 bytes
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass")))
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


class UnquoteError(ValueError):
    """A string literal Go's strconv.Unquote refuses."""


_SIMPLE_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}


def go_unquote(literal: str) -> str:
    """Go's strconv.Unquote for a double-quoted or raw (backquoted) string literal. Bytes written
    as `\\xNN` or octal escapes that are not UTF-8 come back as surrogateescape characters."""
    if len(literal) >= 2 and literal[0] == literal[-1] == "`":
        body = literal[1:-1]
        if "`" in body:
            raise UnquoteError(f"invalid syntax: {literal!r}")
        return body.replace("\r", "")  # Go drops carriage returns from raw strings
    if len(literal) < 2 or literal[0] != '"' or literal[-1] != '"':
        raise UnquoteError(f"invalid syntax: {literal!r}")
    body = literal[1:-1]
    if "\\" not in body and '"' not in body and "\n" not in body:
        return body
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch in ('"', "\n"):
            raise UnquoteError(f"invalid syntax: {literal!r}")
        if ch != "\\":
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
            continue
        if i + 1 >= len(body):
            raise UnquoteError(f"invalid syntax: {literal!r}")
        kind = body[i + 1]
        if kind in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[kind])
            i += 2
        elif kind in _HEX_DIGITS:
            digits = body[i + 2 : i + 2 + _HEX_DIGITS[kind]]
            if len(digits) != _HEX_DIGITS[kind] or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise UnquoteError(f"invalid syntax: {literal!r}")
            value = int(digits, 16)
            if kind == "x":
                out.append(value)
            elif value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                raise UnquoteError(f"invalid syntax: {literal!r}")
            else:
                out += chr(value).encode("utf-8")
            i += 2 + len(digits)
        elif kind in "01234567":
            digits = body[i + 1 : i + 4]
            if len(digits) != 3 or not all(c in "01234567" for c in digits) or int(digits, 8) > 255:
                raise UnquoteError(f"invalid syntax: {literal!r}")
            out.append(int(digits, 8))
            i += 4
        else:
            raise UnquoteError(f"invalid syntax: {literal!r}")
    return out.decode("utf-8", "surrogateescape")
