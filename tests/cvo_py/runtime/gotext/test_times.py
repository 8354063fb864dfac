"""cvo_py.runtime.gotext.times against Go's time package: RFC 3339 read and written on integer
nanoseconds, and the API's timestamps."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cvo_py.runtime.gotext.durations import (
    SECOND,
    TimeFormatError,
)
from cvo_py.runtime.gotext.times import (
    MAX_TIME,
    ZERO_TIME,
    epoch_seconds,
    format_time,
    metav1_time,
    micro_time,
    parse_time,
    rfc3339_seconds,
)
from testkit.checkout import PRODUCT, REPO
from testkit.oracles import goprogram


@pytest.mark.parametrize(
    "text,want",
    [
        ("2023-11-03T16:28:43Z", 1699028923 * SECOND),
        ("2023-11-03T16:28:43.000368975Z", 1699028923 * SECOND + 368_975),
        ("2023-11-03T17:28:43+01:00", 1699028923 * SECOND),
        ("0001-01-01T00:00:00Z", ZERO_TIME),
    ],
)
def test_parse_time_keeps_nanoseconds(text: str, want: int) -> None:
    assert parse_time(text) == want


def test_format_time_round_trips_nanoseconds_and_trims_zeros() -> None:
    t = parse_time("2023-11-03T16:28:43.1Z")
    assert format_time(t) == "2023-11-03T16:28:43.1Z"
    assert format_time(t, nanos=False) == "2023-11-03T16:28:43Z"
    assert format_time(ZERO_TIME) == "0001-01-01T00:00:00Z"


@pytest.mark.parametrize("bad", ["", "yesterday", "2023-13-01T00:00:00Z", "2023-11-03 16:28:43"])
def test_parse_time_rejects_bad_input_clearly(bad: str) -> None:
    with pytest.raises(TimeFormatError, match="timestamp"):
        parse_time(bad)


@pytest.mark.parametrize(
    "text",
    [
        "２０２３-１１-０１T00:00:00Z",  # full-width digits
        "2023-11-01T00:00:00+25:00",  # offset hour out of range
        "2023-11-01T00:00:00+23:61",  # offset minute out of range
        "2023-11-01t00:00:00Z",  # Go wants an upper-case T
        "2023-11-01T00:00:00z",  # and Z
        " 2023-11-01T00:00:00Z",  # nothing around it
        "2023-11-01T00:00:00.Z",  # a separator without digits
        "2023-11-01T00:00:00." + "1" * 60 + "Z",  # longer than the bound
        "2023-11-01T24:00:00Z",
        "2023-02-30T00:00:00Z",
    ],
)
def test_parse_time_refuses_what_go_refuses(text: str) -> None:
    with pytest.raises(TimeFormatError, match="invalid RFC 3339 timestamp"):
        parse_time(text)


@pytest.mark.parametrize(
    ("text", "equal_to"),
    [
        ("2024-01-01T00:00:00+24:00", "2023-12-31T00:00:00Z"),  # Go accepts offsets up to 24:60
        ("2024-01-01T00:00:00+23:60", "2023-12-31T00:00:00Z"),
        ("2024-01-01T00:00:00,5Z", "2024-01-01T00:00:00.5Z"),  # a comma before the fraction
        ("2024-01-01T00:00:00.1234567891234Z", "2024-01-01T00:00:00.123456789Z"),  # truncated to ns
    ],
)
def test_parse_time_accepts_what_go_accepts(text: str, equal_to: str) -> None:
    assert parse_time(text) == parse_time(equal_to)


def test_metav1_time_is_utc_seconds_and_refuses_naive_times() -> None:
    assert rfc3339_seconds(0) == "1970-01-01T00:00:00Z"
    with pytest.raises(ValueError, match="timezone-aware"):
        metav1_time(datetime(2024, 1, 1))


def test_api_timestamps_are_formatted_only_in_gotext_times() -> None:
    """metav1.Time and MicroTime are written by gotext.times alone (one copy elsewhere once skipped the UTC
    conversion): no other module of the product formats a timestamp with strftime."""
    home = REPO / "cvo_py/runtime/gotext/times.py"
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for top in PRODUCT
        for path in sorted((REPO / top).rglob("*.py"))
        if path != home
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"strftime\(\s*[\"']%Y", line)
    ]
    assert found == []


@pytest.mark.parametrize("fmt", [metav1_time, micro_time])
def test_api_timestamps_are_utc_and_refuse_a_naive_time(fmt: Callable[[datetime], str]) -> None:
    east = datetime(2026, 11, 23, 17, 30, 0, 250000, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    assert fmt(east).startswith("2026-11-23T12:00:00") and fmt(east).endswith("Z")
    with pytest.raises(ValueError, match="timezone-aware"):
        fmt(datetime(2026, 11, 23, 12, 0, 0))


def test_epoch_seconds_reads_api_timestamps_as_go_would_and_nothing_else() -> None:
    assert epoch_seconds("2024-01-01T01:00:00Z") == 1704070800.0
    assert epoch_seconds("2024-01-01T02:30:00+01:30") == 1704070800.0
    assert epoch_seconds("2024-01-01T01:00:00.5Z") == 1704070800.5
    # Absent, not text, or not RFC 3339 (a date alone or a time without a zone, which a local
    # clock would otherwise have read): no time.
    for value in (None, "", 17, "2024-01-01", "2024-01-01T01:00:00", "yesterday"):
        assert epoch_seconds(value) is None, value


GO_DURATIONS = Path(__file__).parent / "godurations" / "main.go"  # Go's time package, durations and instants
_TIMESTAMPS = [
    "2023-11-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "2024-02-29T12:30:45.5+05:30",
    "2023-11-01T1:02:03Z", "0000-02-29T00:00:00Z", "0001-01-01T00:00:00-24:60", "2100-02-29T00:00:00Z",
    "2000-02-29T00:00:00,123Z",
]


def _mutated_timestamp(rng: random.Random) -> str:
    chars = list(rng.choice(_TIMESTAMPS))
    for _ in range(rng.randint(0, 2)):
        i = rng.randrange(len(chars) + 1)
        roll = rng.random()
        ch = rng.choice([*"0123456789:-+TZtz.,5 9", "٣"])
        if roll < 0.4 and i < len(chars):
            chars[i] = ch
        elif roll < 0.7:
            chars.insert(i, ch)
        elif i < len(chars):
            del chars[i]
    return "".join(chars)


def test_parse_time_reads_and_refuses_what_go_does(tmp_path: Path) -> None:
    """time.Parse(time.RFC3339) on edge and mutated timestamps: year 0 (Go takes it), one-digit
    hours, commas, offsets up to 24:60, day ranges and leap years."""
    binary = goprogram.build(GO_DURATIONS, tmp_path)
    rng = random.Random(22)
    texts = [*_TIMESTAMPS, *(_mutated_timestamp(rng) for _ in range(6000))]
    want = goprogram.run_lines(binary, [f"parsetime {t.encode().hex()}" for t in texts])
    refused = 0
    for text, go in zip(texts, want, strict=True):
        try:
            ns = parse_time(text)
        except TimeFormatError:
            got = "error"
            refused += 1
        else:
            got = f"ok {ns // SECOND} {ns % SECOND}"
        assert got == go, repr(text)
    assert 500 < refused < len(texts) - 500


def test_format_time_writes_any_year_as_go_does(tmp_path: Path) -> None:
    """Year 0 (which parse_time takes), the Unix epoch, leap days, year 9999, and instants before
    year 0 and after 9999, as Go's RFC3339Nano formats them."""
    binary = goprogram.build(GO_DURATIONS, tmp_path)
    rng = random.Random(23)
    instants = [0, ZERO_TIME, MAX_TIME, parse_time("0000-01-01T00:00:00Z"), -1, 1]
    instants += [
        rng.randint(-70_000_000_000, 260_000_000_000) * SECOND + rng.choice([0, 1, 5 * 10**8]) for _ in range(3000)
    ]
    want = goprogram.run_lines(binary, [f"format {t // SECOND} {t % SECOND}" for t in instants])
    assert [format_time(t) for t in instants] == want
    assert format_time(parse_time("0000-01-01T00:00:00Z")) == "0000-01-01T00:00:00Z"
