"""Numbers as Go's strconv writes and reads them: `FormatFloat` ('f' and 32-bit 'g', shortest),
`ParseInt`/`ParseUint` with base 0, `ParseFloat` of decimal text."""

from __future__ import annotations

import math
import re
import struct
from decimal import Decimal


def format_float(value: float) -> str:
    """Go's strconv.FormatFloat(value, 'f', -1, 64) (also Prometheus's sample value as `%v`
    prints it): the shortest decimal that reads back as `value`, never in exponent form; NaN,
    +Inf, -Inf."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_float32_g(x: float) -> str:
    """strconv.FormatFloat(x, 'g', -1, 32): `x` rounded to float32, in its shortest digits, in
    exponent form below 1e-4 and from 1e+06 (`+Inf`, `-Inf`, `NaN` as Go writes them)."""
    if x != x:
        return "NaN"
    single = _float32(x)
    if math.isinf(single):
        return "+Inf" if single > 0 else "-Inf"
    digits, point = "0", 1
    for precision in range(9):  # a float32 needs at most 9 significant digits
        text = f"{single:.{precision}e}"
        if _float32(float(text)) == single:
            mantissa, _, exponent = text.partition("e")
            digits = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
            point = int(exponent) + 1
            break
    sign = "-" if math.copysign(1.0, single) < 0 else ""
    exp = point - 1
    if single == 0:
        return sign + "0"
    if exp < -4 or exp >= 6:  # Go's shortest %g switches to exponent form at precision 6
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _float32(x: float) -> float:
    """`x` rounded to float32 (Go's float32(x)): ±Inf past its range."""
    try:
        value: float = struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)
    return value


_INT_DIGITS = {2: re.compile("[01]+"), 8: re.compile("[0-7]+"), 10: re.compile("[0-9]+"),
               16: re.compile("[0-9a-fA-F]+")}  # fmt: skip
_FLOAT_SYNTAX = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
INT64_MIN, INT64_MAX, UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def parse_int_base0(text: str, *, signed: bool = True) -> int | None:
    """strconv.ParseInt(text, 0, 64) (`signed`) or ParseUint(text, 0, 64): an optional sign (signed
    only), then `0x`/`0o`/`0b` or a leading `0` for octal, else decimal, underscores only between
    digits; None when Go refuses it (bad syntax or out of the 64-bit range)."""
    body = text
    negative = False
    if signed and body[:1] in ("+", "-"):
        negative = body[0] == "-"
        body = body[1:]
    if not body:
        return None
    if "_" in body:
        if not _underscores_ok(body):
            return None
        body = body.replace("_", "")
    base = 10
    if body[0] == "0":
        prefix = body[1:2].lower()
        if len(body) >= 3 and prefix in ("b", "o", "x"):
            base, body = {"b": 2, "o": 8, "x": 16}[prefix], body[2:]
        else:
            base, body = 8, body[1:]
            if not body:
                return 0
    if not _INT_DIGITS[base].fullmatch(body):
        return None
    if len(body.lstrip("0")) > 64:  # past 64 bits in any base: refused without converting it
        return None
    value = -int(body, base) if negative else int(body, base)
    low, high = (INT64_MIN, INT64_MAX) if signed else (0, UINT64_MAX)
    return value if low <= value <= high else None


def _underscores_ok(digits: str) -> bool:
    """Go's underscoreOK (after the sign): each `_` between two digits, or after a base prefix."""
    saw = "^"  # ^ start, 0 a digit or base prefix, _ an underscore, ! anything else
    i = 0
    hexadecimal = False
    if len(digits) >= 2 and digits[0] == "0" and digits[1].lower() in "box":
        i, saw, hexadecimal = 2, "0", digits[1].lower() == "x"
    for ch in digits[i:]:
        if "0" <= ch <= "9" or (hexadecimal and "a" <= ch.lower() <= "f"):
            saw = "0"
        elif ch == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def parse_float(text: str) -> float | None:
    """strconv.ParseFloat(text, 64) for decimal text (`1.5`, `.5`, `1e3`, `-2.`, `1_000.5`): None
    when Go refuses it, out of range (±Inf) included. Hexadecimal floats, `inf` and `nan` are not
    read."""
    if "_" in text:
        if not _underscores_ok(text[1:] if text[:1] in ("+", "-") else text):
            return None
        text = text.replace("_", "")
    if not _FLOAT_SYNTAX.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None
