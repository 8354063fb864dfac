"""Instants as Go's `time` package reads and writes them, and the API's timestamps.

Python's datetime stops at microseconds, but oc's snapshot "now" carries 368975 ns and some
columns print sub-second remainders, so every instant here is an int of nanoseconds since the
Unix epoch (durations, and their units, are in `cvo_py.runtime.gotext.durations`).

    parse_time(text)        RFC 3339 as Go's time.Parse(time.RFC3339, …) reads it.
    format_time(ns)         Go's Format(time.RFC3339Nano) (or RFC3339) in UTC, any year.
    time_string(ns)         Go's time.Time.String() in UTC, as `%v` prints a metav1.Time.
    metav1_time(now), micro_time(now), rfc3339_seconds(s), epoch_seconds(value): the API's timestamps.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from cvo_py.runtime.gotext.durations import MICROSECOND, SECOND, TimeFormatError
from cvo_py.runtime.gotext.quoting import go_quote

if TYPE_CHECKING:
    from datetime import datetime

# `datetime` is imported only by the functions that take or make one: what reads and writes
# instants as ints (an `upgrade-status` run whose Node LIST is one JSON page) does without its import.

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


def from_datetime(dt: datetime) -> int:
    """An aware datetime → ns since the epoch (naive datetimes are rejected: ambiguous)."""
    from datetime import UTC, datetime

    if dt.tzinfo is None:
        raise TimeFormatError(f"naive datetime {dt!r}: give a timezone-aware value")
    delta = dt.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * SECOND + dt.microsecond * MICROSECOND


def to_now(value: datetime | int) -> int:
    """Accept the injected `now` as an aware datetime or as ns since the epoch."""
    if isinstance(value, bool):
        raise TypeError("now must be a datetime or an int of nanoseconds, not bool")
    if isinstance(value, int):
        return value
    from datetime import datetime

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


def time_string(ns: int) -> str:
    """Go's time.Time.String() of an instant in UTC (a process whose local zone is UTC, as in the
    CVO's image), as `%v` prints a metav1.Time: "2006-01-02 15:04:05.999999999 +0000 UTC"."""
    text = format_time(ns).removesuffix("Z").replace("T", " ", 1)
    return text + " +0000 UTC"


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
    from datetime import UTC

    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time(now: datetime) -> str:
    """metav1.MicroTime (a Lease's acquire and renew times): RFC 3339 in UTC with microseconds."""
    from datetime import UTC

    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339_seconds(seconds: int) -> str:
    """Unix seconds as metav1.Time."""
    from datetime import UTC, datetime

    return metav1_time(datetime.fromtimestamp(seconds, UTC))
