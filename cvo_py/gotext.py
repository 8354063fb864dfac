"""The one home for Go-compatible text helpers.

    go_quote(text) -> str   Go's strconv.Quote / `%q`: the quoted, escaped string.
    escape(text) -> str     what every displayed string goes through: Go's `%q` escaping without the
                            surrounding quotes, and with `"` and `\\` left as they are, so printable
                            text is unchanged (byte-identical to what oc prints for it).

Both take `str` or `bytes`. Bytes that are not UTF-8 (and, in a `str`, the surrogates that stand
for them under Python's "surrogateescape", or any other lone surrogate as its UTF-8 bytes) are shown
as `\\xNN`, byte by byte, as Go shows invalid UTF-8. Escaped: `\\a \\b \\f \\n \\r \\t \\v`, other C0
controls and DEL as `\\xNN`, and every rune Go's unicode.IsPrint rejects (C1 controls, format
characters such as the bidi overrides U+202A–U+202E and isolates U+2066–U+2069, line and paragraph
separators, spaces other than U+0020, unassigned code points) as `\\uNNNN` or `\\UNNNNNNNN`.
unicode.IsPrint accepts letters, marks, numbers, punctuation, symbols and U+0020, which is
exactly what Python's str.isprintable() accepts.
"""

from __future__ import annotations

__all__ = ["escape", "go_quote"]

_NAMED = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str | bytes) -> str:
    """Go's strconv.Quote(text) (what `%q` prints for a string)."""
    return '"' + _escape(text, quote=True) + '"'


def escape(text: str | bytes) -> str:
    """`text` with every character a terminal could act on shown as Go's `%q` shows it (no quotes added)."""
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
