"""Go's time.Duration on integer nanoseconds: its units, `String()` and `ParseDuration`, its int64
arithmetic (saturated or wrapped as Go's is), `Round`, `Truncate`, `Seconds()`, and oc's
`shortDuration`.

Every duration is an int of nanoseconds (as Go's `time.Duration`); instants are in
`cvo_py.runtime.gotext.times`.
"""

from __future__ import annotations

import functools
import re

NANOSECOND = 1
MICROSECOND = 1_000
MILLISECOND = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE


class TimeFormatError(ValueError):
    """A timestamp or duration string that Go would not parse."""


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
