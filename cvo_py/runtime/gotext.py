"""The one home for Go-compatible text: quoting and display escaping as Go's `%q`, Go `time`
semantics that oc's output depends on, bounded one-line messages, API timestamps, JSON decoded and
its errors worded as Go's, and short network-error phrases.

    go_quote(text) -> str   Go's strconv.Quote / `%q`: the quoted, escaped string.
    go_unquote(literal)     Go's strconv.Unquote of a "double-quoted" or `raw` string literal.
    escape(text) -> str     what every displayed string goes through: Go's `%q` escaping without the
                            surrounding quotes, and with `"` and `\\` left as they are, so printable
                            text is unchanged (byte-identical to what oc prints for it).

    decode_json(text)       JSON as Go's encoding/json decodes it: NaN and Infinity are syntax errors.
    go_base64_decode(text)  Go's base64.StdEncoding.DecodeString, with its error offsets.
    json_syntax_problem(e)  a decoding error as one line, naming the character as Go's `quoteChar`.

The quoting functions take `str` or `bytes`. Bytes that are not UTF-8 (and, in a `str`, the surrogates that stand
for them under Python's "surrogateescape", or any other lone surrogate as its UTF-8 bytes) are shown
as `\\xNN`, byte by byte, as Go shows invalid UTF-8. Escaped: `\\a \\b \\f \\n \\r \\t \\v`, other C0
controls and DEL as `\\xNN`, and every rune Go's unicode.IsPrint rejects (C1 controls, format
characters such as the bidi overrides U+202A–U+202E and isolates U+2066–U+2069, line and paragraph
separators, spaces other than U+0020, unassigned code points) as `\\uNNNN` or `\\UNNNNNNNN`.
unicode.IsPrint accepts letters, marks, numbers, punctuation, symbols and U+0020, which is
exactly what Python's str.isprintable() accepts.

Go `time` semantics are on integer nanoseconds:
Python's datetime stops at microseconds, but oc's snapshot "now" carries 368975 ns and some
columns print sub-second remainders, so every instant here is an int of nanoseconds since the
Unix epoch and every duration an int of nanoseconds (as Go's `time.Duration`).
"""

from __future__ import annotations

import functools
import json
import math
import re
import struct
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

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


NANOSECOND = 1
MICROSECOND = 1_000
MILLISECOND = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

# Go's zero time.Time (0001-01-01T00:00:00Z) in nanoseconds since the Unix epoch.
ZERO_TIME = -62_135_596_800 * SECOND
# The last instant RFC 3339 can write (9999-12-31T23:59:59.999999999Z).
MAX_TIME = 253_402_300_800 * SECOND - 1

# time.Parse(time.RFC3339, …) as Go reads it (its strict RFC 3339 reader, then its general layout
# reader for what that one refuses): ASCII digits only, an hour of one or two digits, upper-case T
# and Z, "." or "," before any number of fraction digits (truncated to nanoseconds), offsets up to
# ±24:60, years 0000 to 9999, nothing around it.
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?(?:(Z)|([+-])([0-9]{2}):([0-9]{2}))",
    re.ASCII,
)
MAX_TIME_TEXT = 64  # longer text is refused before it is matched (Go's longest useful form is 35 bytes)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class TimeFormatError(ValueError):
    """A timestamp or duration string that Go would not parse."""


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to the proleptic Gregorian date (any year, year 0 included, as Go counts)."""
    y = year - (month <= 2)
    era = y // 400
    year_of_era = y - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """The proleptic Gregorian (year, month, day) `days` after 1970-01-01 (the inverse of the above)."""
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + (3 if shifted_month < 10 else -9)
    return year_of_era + era * 400 + (month <= 2), month, day


@functools.lru_cache(maxsize=8192)
def parse_time(text: str) -> int:
    """RFC 3339 as Go's time.Parse(time.RFC3339, text) reads it → ns since the epoch.

    Cached: objects of one cluster share few distinct timestamps, and this runs per node.
    """
    m = _RFC3339.fullmatch(text) if len(text) <= MAX_TIME_TEXT else None
    if m is None:
        raise TimeFormatError(f"invalid RFC 3339 timestamp {go_quote(text[:MAX_TIME_TEXT])}")
    year, month, day, hour, minute, sec = (int(m.group(i)) for i in range(1, 7))
    problem = ""
    if not 1 <= month <= 12:
        problem = "month out of range"
    elif not 1 <= day <= _DAYS_IN_MONTH[month - 1] + (month == 2 and _leap(year)):
        problem = "day out of range"
    elif hour > 23:
        problem = "hour out of range"
    elif minute > 59:
        problem = "minute out of range"
    elif sec > 59:
        problem = "second out of range"
    if problem:
        raise TimeFormatError(f"invalid RFC 3339 timestamp {go_quote(text)}: {problem}")
    frac = (m.group(7) or "")[:9]
    ns = int(frac.ljust(9, "0")) if frac else 0
    offset = 0
    if m.group(9):
        hours, minutes = int(m.group(10)), int(m.group(11))
        if hours > 24 or minutes > 60:
            raise TimeFormatError(f"invalid RFC 3339 timestamp {go_quote(text)}: time zone offset out of range")
        offset = (hours * 60 + minutes) * 60
        if m.group(9) == "-":
            offset = -offset
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec
    return (seconds - offset) * SECOND + ns


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _epoch_seconds(dt: datetime) -> int:
    delta = dt - _EPOCH
    return delta.days * 86400 + delta.seconds


def from_datetime(dt: datetime) -> int:
    """An aware datetime → ns since the epoch (naive datetimes are rejected: ambiguous)."""
    if dt.tzinfo is None:
        raise TimeFormatError(f"naive datetime {dt!r}: give a timezone-aware value")
    return _epoch_seconds(dt.astimezone(UTC)) * SECOND + dt.microsecond * MICROSECOND


def to_now(value: datetime | int) -> int:
    """Accept the injected `now` as an aware datetime or as ns since the epoch."""
    if isinstance(value, bool):
        raise TypeError("now must be a datetime or an int of nanoseconds, not bool")
    if isinstance(value, int):
        return value
    if isinstance(value, datetime):
        return from_datetime(value)
    raise TypeError(f"now must be a datetime or an int of nanoseconds, not {type(value).__name__}")


def format_time(ns: int, nanos: bool = True) -> str:
    """ns since the epoch → RFC 3339 in UTC, as Go's Format(time.RFC3339) writes it (any year:
    year 0 as 0000, a negative one with its sign); with `nanos`, RFC3339Nano (trimmed fraction)."""
    sec, frac = divmod(ns, SECOND)
    days, clock = divmod(sec, 86400)
    year, month, day = _civil_from_days(days)
    sign = "-" if year < 0 else ""
    text = (
        f"{sign}{abs(year):04d}-{month:02d}-{day:02d}T{clock // 3600:02d}:{clock // 60 % 60:02d}:{clock % 60:02d}"
    )
    if nanos and frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + "Z"


@functools.lru_cache(maxsize=1024)
def duration_string(d: int) -> str:
    """Go's `time.Duration.String()` (cached: node estimates take a handful of values)."""
    if d == 0:
        return "0s"
    neg = d < 0
    u = -d if neg else d
    if u < SECOND:
        if u < MICROSECOND:
            text = f"{u}ns"
        elif u < MILLISECOND:
            text = _frac(u, 3) + "µs"
        else:
            text = _frac(u, 6) + "ms"
    else:
        secs = _frac(u, 9)
        whole = u // SECOND
        minutes = whole // 60
        if minutes == 0:
            text = secs + "s"
        else:
            sec_text = _frac(u % MINUTE, 9) + "s"
            hours = minutes // 60
            if hours == 0:
                text = f"{minutes}m{sec_text}"
            else:
                text = f"{hours}h{minutes % 60}m{sec_text}"
    return "-" + text if neg else text


def _frac(v: int, prec: int) -> str:
    """v / 10**prec printed with the fraction's trailing zeros (and a bare '.') removed."""
    unit = 10**prec
    whole, frac = divmod(v, unit)
    if frac == 0:
        return str(whole)
    return f"{whole}." + f"{frac:0{prec}d}".rstrip("0")


_UNITS = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "µs": MICROSECOND,  # U+00B5
    "μs": MICROSECOND,  # U+03BC
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}
_DURATION_NUMBER = re.compile(r"([0-9]*)(?:\.([0-9]*))?", re.ASCII)  # Go reads ASCII digits only
_DURATION_UNIT = re.compile(r"[^.0-9]*")
_UINT63 = 1 << 63  # the largest magnitude a Duration's text may reach (-2^63 is a Duration)


def parse_duration(text: str) -> int:
    """Go's `time.ParseDuration`: a sign, then one or more <number><unit> parts, within int64
    (`3000000h` is an error, as in Go), fractions computed in float64 as Go does; errors in Go's
    words (`time: invalid duration "…"`).

    Cached for short texts: a cluster's node insights share few distinct estimates, and this runs
    per node (a long text, which only hostile input holds, is parsed each time, never kept)."""
    return _parse_duration_cached(text) if len(text) <= 64 else _parse_duration(text)


@functools.lru_cache(maxsize=8192)
def _parse_duration_cached(text: str) -> int:
    return _parse_duration(text)


def _time_quote(text: str) -> str:
    """How Go's time package quotes text in its errors: `"` and `\\` escaped, every byte of a
    character outside ASCII and of every control character but DEL as `\\xNN`."""
    out = ['"']
    for ch in text:
        if " " <= ch < "\x80":
            out.append("\\" + ch if ch in '"\\' else ch)
        else:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out) + '"'


def _parse_duration(text: str) -> int:
    invalid = TimeFormatError(f"time: invalid duration {_time_quote(text)}")
    s = text
    neg = False
    if s[:1] in ("-", "+") and s:
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise invalid
    total = 0
    pos = 0
    while pos < len(s):
        number = _DURATION_NUMBER.match(s, pos)
        assert number is not None  # it matches the empty string
        whole, fraction = number.group(1), number.group(2)
        if not whole and not fraction:  # no digits before the unit (".s", "-.s", "s")
            raise invalid
        significant = whole.lstrip("0")
        if len(significant) > 19 or int(significant or "0") > _UINT63:
            raise invalid
        value = int(significant or "0")
        unit_match = _DURATION_UNIT.match(s, number.end())
        assert unit_match is not None
        unit_text = unit_match.group()
        if not unit_text:
            raise TimeFormatError(f"time: missing unit in duration {_time_quote(text)}")
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise TimeFormatError(f"time: unknown unit {_time_quote(unit_text)} in duration {_time_quote(text)}")
        if value > _UINT63 // unit:
            raise invalid
        value *= unit
        if fraction:
            digits, scale = _leading_fraction(fraction)
            if digits:
                value += int(float(digits) * (float(unit) / scale))  # float64, as Go computes it
                if value > _UINT63:
                    raise invalid
        total += value
        if total > _UINT63:
            raise invalid
        pos = unit_match.end()
    if neg:
        return -total
    if total > _UINT63 - 1:
        raise invalid
    return total


def _leading_fraction(digits: str) -> tuple[int, float]:
    """The fraction's digits as Go keeps them (those that fit in an int64; the rest are ignored) and
    its scale (10 per digit kept, multiplied in float64)."""
    value = 0
    scale = 1.0
    for ch in digits:
        if value > (_UINT63 - 1) // 10:
            break
        following = value * 10 + ord(ch) - 48
        if following > _UINT63:
            break
        value = following
        scale *= 10
    return value, scale


# time.Duration is an int64 of nanoseconds: about ±292 years (±2562047h47m16.854775807s).
MAX_DURATION = 2**63 - 1
MIN_DURATION = -(2**63)


def sub_times(t: int, u: int) -> int:
    """Go's `t.Sub(u)` (both ns since the epoch): the duration t − u, saturated to what a Duration
    holds (a gather time in year 9999 is 2562047h47m16.854775807s after a condition of 2024)."""
    return max(MIN_DURATION, min(MAX_DURATION, t - u))


def wrap_int64(v: int) -> int:
    """`v` as Go's int64 arithmetic leaves it: wrapped around, two's complement."""
    return (v + 2**63) % 2**64 - 2**63


def add_durations(a: int, b: int) -> int:
    """Go's `a + b` on Durations (it wraps around past the int64 range, it does not saturate)."""
    return wrap_int64(a + b)


def float_to_int64(x: float) -> int:
    """Go's conversion of a float64 to int64 on amd64: toward zero; NaN or out of range gives the
    smallest int64 (what the CVTTSD2SQ instruction returns)."""
    if x != x or not -(2.0**63) <= x < 2.0**63:
        return MIN_DURATION
    return int(x)


def go_rem(d: int, m: int) -> int:
    """Go's `%` on int64: the remainder takes the sign of the dividend."""
    r = abs(d) % m
    return -r if d < 0 else r


def round_duration(d: int, m: int) -> int:
    """Go's `Duration.Round`: nearest multiple of m, halfway away from zero; saturated to the
    largest (smallest) Duration where the multiple is beyond it."""
    if m <= 0:
        return d
    r = go_rem(d, m)
    if d < 0:
        r = -r
        if r + r < m:
            return d + r
        return max(MIN_DURATION, d - m + r)
    if r + r < m:
        return d - r
    return min(MAX_DURATION, d + m - r)


def truncate_duration(d: int, m: int) -> int:
    """Go's `Duration.Truncate`: toward zero."""
    if m <= 0:
        return d
    return d - go_rem(d, m)


def go_percent(value: float) -> int:
    """Go's `%.0f` (round half to even on the binary value) as an int."""
    return int(f"{value:.0f}")


def seconds(d: int) -> float:
    """Go's `Duration.Seconds()`."""
    sec = d // SECOND if d >= 0 else -((-d) // SECOND)
    nsec = d - sec * SECOND
    return float(sec) + float(nsec) / 1e9


def short_duration(d: int) -> str:
    """oc's `shortDuration`: drop zero trailing units and fractions (see the sub-second quirk)."""
    orig = duration_string(d)
    if orig in ("0h0m0s", "0s"):
        return "now"
    if orig.endswith("h0m0s"):
        return orig[:-4]
    if orig.endswith("m0s"):
        return orig[:-2]
    if orig.endswith("h0m"):
        return orig[:-2]
    if "." in orig:
        try:
            whole = parse_duration(orig.split(".")[0] + "s")
        except TimeFormatError:
            return orig
        return short_duration(whole)
    return orig


# -- bounded one-line messages ------------------------------------------------------------------------

_ELISION = " […] "


def _keep_ends(flat: str, limit: int) -> str:
    """`flat` if it fits in `limit` characters; else its head and its tail (where errors are)."""
    if len(flat) <= limit:
        return flat
    keep = max(limit - len(_ELISION), 2)
    head = keep * 2 // 3
    return flat[:head] + _ELISION + flat[len(flat) - (keep - head) :]


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


def shortened(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters; else its head and tail (lines are kept)."""
    return _keep_ends(text, limit)


def bounded(text: str, limit: int) -> str:
    """One line, at most `limit` characters; long text keeps its head and tail (where errors are)."""
    return _keep_ends(" // ".join(line.strip() for line in text.strip().splitlines() if line.strip()), limit)


def clipped(text: str, limit: int) -> str:
    """At most `limit` characters, line breaks kept; long text keeps its head and tail."""
    return _keep_ends(text, limit)


def one_line(text: str, limit: int) -> str:
    """Newlines become ` // ` (as upstream); over `limit`, the head and the tail are kept."""
    return _keep_ends(text.replace("\n", " // "), limit)


# -- API timestamps -----------------------------------------------------------------------------------


def epoch_seconds(value: object) -> float | None:
    """An API timestamp as the seconds since the epoch a metric carries; None when it is absent or
    not RFC 3339 (which the API's Go types would not have taken)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value) / SECOND
    except TimeFormatError:
        return None


def metav1_time(now: datetime) -> str:
    """metav1.Time: RFC 3339 in UTC with second precision."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time(now: datetime) -> str:
    """metav1.MicroTime (a Lease's acquire and renew times): RFC 3339 in UTC with microseconds."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339_seconds(seconds: int) -> str:
    """Unix seconds as metav1.Time."""
    return metav1_time(datetime.fromtimestamp(seconds, UTC))


def time_string(ns: int) -> str:
    """Go's time.Time.String() of an instant in UTC (a process whose local zone is UTC, as in the
    CVO's image), as `%v` prints a metav1.Time: "2006-01-02 15:04:05.999999999 +0000 UTC"."""
    text = format_time(ns).removesuffix("Z").replace("T", " ", 1)
    return text + " +0000 UTC"


# -- JSON decoding errors ------------------------------------------------------------------------------


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


_INFINITY = float("inf")


def quote_char(ch: str) -> str:
    """How Go's encoding/json names the character its syntax error is about (`quoteChar`): `'x'`,
    `'\\''`, `'"'`, `'\\x01'`; a character outside ASCII by its first UTF-8 byte, as Go reads bytes."""
    first = ch.encode("utf-8", "surrogatepass")[:1]
    if first == b"'":
        return "'\\''"
    if first == b'"':
        return "'\"'"
    return "'" + _escape(first, quote=True) + "'"


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


# -- JSON encoding and number syntax -------------------------------------------------------------------

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

# -- base64 -------------------------------------------------------------------------------------------

_BASE64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BASE64_VALUE = {c: i for i, c in enumerate(_BASE64_ALPHABET)}
_NEWLINES = (0x0A, 0x0D)


class Base64Error(ValueError):
    """Text Go's base64.StdEncoding refuses; str() is Go's `illegal base64 data at input byte N`."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        super().__init__(f"illegal base64 data at input byte {offset}")


def go_base64_decode(text: str | bytes) -> bytes:
    """Go's base64.StdEncoding.DecodeString (what encoding/json does with a string for a []byte
    field, such as a kubeconfig's certificate-authority-data): padding required, CR and LF skipped
    anywhere, the bits after the last byte not checked; the offset of an error counts UTF-8 bytes."""
    src = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    out = bytearray()
    pos = 0
    end = len(src)
    while pos < end:
        quantum: list[int] = []
        while len(quantum) < 4:
            if pos == end:
                if not quantum:
                    return bytes(out)
                raise Base64Error(pos - len(quantum))  # a quantum cut short, without padding
            byte = src[pos]
            pos += 1
            value = _BASE64_VALUE.get(byte)
            if value is not None:
                quantum.append(value)
                continue
            if byte in _NEWLINES:
                continue
            if byte != 0x3D or len(quantum) < 2:  # not "=", or "=" too early in the quantum
                raise Base64Error(pos - 1)
            if len(quantum) == 2:  # "==" expected: the second "=" after any line breaks
                while pos < end and src[pos] in _NEWLINES:
                    pos += 1
                if pos == end:
                    raise Base64Error(end)
                if src[pos] != 0x3D:
                    raise Base64Error(pos - 1)
                pos += 1
            while pos < end and src[pos] in _NEWLINES:
                pos += 1
            if pos < end:
                raise Base64Error(pos)  # anything after the padding
            break
        bits = 0
        for value in quantum:
            bits = bits << 6 | value
        bits <<= 6 * (4 - len(quantum))
        out += bits.to_bytes(3, "big")[: len(quantum) - 1]
    return bytes(out)


# -- network errors ------------------------------------------------------------------------------------

# The phrase an admin recognises in a urllib3/requests error chain, as it is shown.
_NETWORK_PHRASES = {
    "Connection refused": "connection refused",
    "Name or service not known": "name or service not known",
    "No route to host": "no route to host",
    "timed out": "timed out",
    "CERTIFICATE_VERIFY_FAILED": "certificate verify failed",
    "certificate verify failed": "certificate verify failed",
}


def network_phrase(text: str) -> str:
    """The recognisable phrase of a network error ("" when `text` has none)."""
    for marker, phrase in _NETWORK_PHRASES.items():
        if marker in text:
            return phrase
    return ""


def short_error(text: str, limit: int = 200) -> str:
    """A network error as its recognisable phrase; any other error as its first line, at most `limit`."""
    return network_phrase(text) or (text.splitlines()[0][:limit] if text else "")
