"""JSON as Go's encoding/json reads and writes it, and its errors in Go's words.

    decode_json(text)       JSON as Go decodes it: NaN and Infinity are syntax errors, a number past
                            float64 a NumberRangeError.
    json_syntax_problem(e)  a decoding error as one line, naming the character as Go's `quoteChar`.
    json_kind(value), json_limit_problem(exc): the rest of Go's decoding errors.
    marshal_json(value)     Go's json.Marshal: compact, keys sorted, HTML escaped, Go's floats.
    json_float(x)           a float64 as encoding/json writes it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from cvo_py.runtime.gotext.quoting import go_quote


def json_kind(value: object) -> str:
    """The JSON kind of a decoded value as Go's encoding/json names it in an UnmarshalTypeError
    ("bool", "number", "string", "array", "object")."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def json_limit_problem(exc: BaseException) -> str:
    """What Go's encoding/json says where Python's JSON decoder stops for its own limits: nesting
    past the interpreter's recursion limit (a RecursionError), a number past float64 (a
    `NumberRangeError`) and integers of more digits than Python converts (a ValueError); never
    Python's wording ("maximum recursion depth exceeded", "Exceeds the limit (4300 digits)")."""
    if isinstance(exc, RecursionError):
        return "exceeded max depth"
    if isinstance(exc, NumberRangeError):
        return str(exc)
    if isinstance(exc, ValueError) and "digits" in str(exc):
        return "json: cannot unmarshal number into Go value of type float64"
    return "invalid JSON"


class NumberRangeError(ValueError):
    """A JSON number past float64 (`1e400`), which Go's encoding/json refuses to decode into an
    interface{} (Python's decoder reads it as infinity); str() is Go's error."""

    def __init__(self, text: str) -> None:
        super().__init__(f"json: cannot unmarshal number {text} into Go value of type float64")


_MAX_FLOAT_DIGITS = 309  # float64's largest value has 309 integer digits: a shorter integer always fits
_INFINITY = float("inf")


def decode_json_float(text: str) -> float:
    """A JSON number with a fraction or exponent, as Go decodes it: past float64 is
    `NumberRangeError` (an underflow is 0, as in Go)."""
    value = float(text)
    if value in (_INFINITY, -_INFINITY):
        raise NumberRangeError(text)
    return value


def decode_json_int(text: str) -> int:
    """A JSON integer, kept exact (Go decodes it as a float64): past float64 is `NumberRangeError`."""
    if len(text) > _MAX_FLOAT_DIGITS and float(text) in (_INFINITY, -_INFINITY):
        raise NumberRangeError(text)
    return int(text)


def quote_char(ch: str) -> str:
    """How Go's encoding/json names the character its syntax error is about (`quoteChar`): `'x'`,
    `'\\''`, `'"'`, `'\\x01'`; a character outside ASCII by its first UTF-8 byte, as Go reads bytes."""
    first = ch.encode("utf-8", "surrogatepass")[:1]
    if first == b"'":
        return "'\\''"
    if first == b'"':
        return "'\"'"
    return "'" + go_quote(first)[1:-1] + "'"


class _JSONConstant(ValueError):
    """NaN, Infinity or -Infinity met by the decoder (Go's encoding/json has no such literals)."""


def _refuse_constant(_name: str) -> Any:
    raise _JSONConstant()


_GO_JSON = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=decode_json_float, parse_int=decode_json_int)

# A JSON string (skipped) or one of the literals Python's decoder accepts and Go's refuses.
_STRING_OR_CONSTANT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(-?Infinity|NaN)', re.DOTALL)


def decode_json(text: str) -> Any:
    """`text` decoded as Go's encoding/json decodes it, where Python's decoder is laxer: `NaN`,
    `Infinity` and `-Infinity` are syntax errors, raised as `json.JSONDecodeError` at the character
    Go stops at with Go's words (`looking for beginning of value`, `in numeric literal`), and a
    number past float64 (`1e400`) is a `NumberRangeError`. Every other failure is the decoder's own
    `json.JSONDecodeError`, `RecursionError` or `ValueError` (`json_limit_problem` words the last
    three)."""
    try:
        return _GO_JSON.decode(text)
    except _JSONConstant:
        raise _constant_error(text) from None


def _constant_error(text: str) -> json.JSONDecodeError:
    # The decoder stops at the first literal outside a string (it reads in order): find it.
    for match in _STRING_OR_CONSTANT.finditer(text):
        token = match.group(1)
        if token is None:
            continue
        if token.startswith("-"):  # Go reads "-" as a number's sign, then meets "I"
            return json.JSONDecodeError("in numeric literal", text, match.start(1) + 1)
        return json.JSONDecodeError("looking for beginning of value", text, match.start(1))
    return json.JSONDecodeError("looking for beginning of value", text, 0)  # not reached: the decoder met one


def json_syntax_problem(err: json.JSONDecodeError) -> str:
    """A syntax error as one line: Go's `unexpected end of JSON input` at the end, else
    `invalid character <Go's quoteChar> at offset <1-based>: <what was expected>`."""
    text, pos = err.doc, err.pos
    if pos >= len(text.rstrip()):
        return "unexpected end of JSON input"
    return f"invalid character {quote_char(text[pos])} at offset {pos + 1}: {err.msg.lower()}"


_HTML_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))

# A float's token in compact JSON written by Python (it always holds "." or an exponent), after the
# character that can precede a value; strings are matched whole so that text inside them is kept.
_FLOAT_HINT = re.compile(r"[:,\[]-?[0-9]+[.eE]")
_STRING_OR_NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"|(?<=[:,\[])-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?')


class UnsupportedValue(ValueError):
    """What Go's json.Marshal refuses: NaN and the infinities (`json: unsupported value: NaN`)."""


def marshal_json(value: Any) -> bytes:
    """`value` (dicts with str keys, lists, str, int, float, bool, None) as Go's json.Marshal writes
    it: compact, keys sorted, `<` `>` `&` U+2028 U+2029 escaped as `\\u003c`…, floats in Go's form
    (`1` for 1.0, `100000000000000000000` for 1e20, `1e-7`), NaN and infinities refused
    (UnsupportedValue). A lone surrogate becomes `\\ufffd`, as Go writes invalid UTF-8."""
    if type(value) is float:
        return json_float(value).encode()
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:  # only NaN and the infinities: every other input is JSON data
        raise UnsupportedValue(f"json: unsupported value: {_unsupported(value)}") from exc
    for raw, escaped in _HTML_ESCAPES:
        if raw in text:
            text = text.replace(raw, escaped)
    if _FLOAT_HINT.search(text):  # a float, or text in a string that looks like one: reformat floats
        text = _STRING_OR_NUMBER.sub(_go_number, text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return re.sub("[\ud800-\udfff]", "\\\\ufffd", text).encode("utf-8")


def _go_number(match: re.Match[str]) -> str:
    token = match.group(0)
    if token[0] == '"' or not any(c in token for c in ".eE"):
        return token
    return json_float(float(token))


def _unsupported(value: Any) -> str:
    """The first NaN or infinity in `value`, as Go's %v prints it (`NaN`, `+Inf`, `-Inf`)."""
    pending = [value]
    while pending:
        cur = pending.pop()
        if isinstance(cur, dict):
            pending.extend(reversed(list(cur.values())))
        elif isinstance(cur, list):
            pending.extend(reversed(cur))
        elif isinstance(cur, float) and not math.isfinite(cur):
            return "NaN" if cur != cur else ("+Inf" if cur > 0 else "-Inf")
    return "NaN"


def json_float(x: float) -> str:
    """A float64 as Go's encoding/json writes it: the shortest digits that read back as `x`, in
    plain notation from 1e-6 to below 1e21, else as `1e+21` / `1e-7`."""
    if not math.isfinite(x):
        raise UnsupportedValue(f"json: unsupported value: {_unsupported(x)}")
    shortest = repr(x)  # Python's repr holds the same shortest digits as Go's strconv
    magnitude = abs(x)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, _, exponent = shortest.partition("e")  # repr is in exponent form in these ranges
        if exponent.startswith("-0"):
            exponent = "-" + exponent[2:]
        return f"{mantissa}e{exponent}"
    if "e" in shortest:
        from decimal import Decimal  # rare (from 1e16): not loaded by every reader of this module

        return format(Decimal(shortest), "f")
    return shortest[:-2] if shortest.endswith(".0") else shortest
