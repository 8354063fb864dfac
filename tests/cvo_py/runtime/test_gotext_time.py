"""Go-compatible text: Go time semantics, short network-error phrases, API timestamps."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime import gotext
from cvo_py.runtime.gotext import HOUR, MICROSECOND, MILLISECOND, MINUTE, SECOND
from testkit.checkout import PRODUCT, REPO
from testkit.oracles import goprogram


@pytest.mark.parametrize(
    "d,want",
    [
        (0, "0s"),
        (1, "1ns"),
        (1500, "1.5µs"),
        (368_975, "368.975µs"),
        (500 * MILLISECOND, "500ms"),
        (45 * SECOND, "45s"),
        (415 * SECOND, "6m55s"),
        (HOUR + 5 * SECOND, "1h0m5s"),
        (HOUR + 59 * MINUTE, "1h59m0s"),
        (2 * HOUR, "2h0m0s"),
        (415 * SECOND + 368_975, "6m55.000368975s"),
        (-5 * MINUTE, "-5m0s"),
        (-1500 * MICROSECOND, "-1.5ms"),
    ],
)
def test_duration_string_matches_go(d: int, want: str) -> None:
    assert gotext.duration_string(d) == want


@pytest.mark.parametrize(
    "d,want",
    [
        (0, "now"),
        (2 * HOUR, "2h"),
        (HOUR + 59 * MINUTE, "1h59m"),
        (5 * MINUTE, "5m"),
        (45 * SECOND, "45s"),
        (HOUR + 4 * MINUTE + 41 * SECOND + 368_975, "1h4m41s"),
        (2 * MINUTE + 368_975, "2m"),  # 2m0.000368975s → 2m0s → 2m
        (368_975, "6m8s"),  # oc's quirk: "368.975µs" → "368s" → 6m8s
        (500 * MILLISECOND, "500ms"),
        (-5 * MINUTE, "-5m"),
    ],
)
def test_short_duration_reproduces_oc(d: int, want: str) -> None:
    assert gotext.short_duration(d) == want


@pytest.mark.parametrize(
    "d,m,rounded,truncated",
    [
        (90 * SECOND, MINUTE, 2 * MINUTE, MINUTE),  # halfway rounds away from zero
        (89 * SECOND, MINUTE, MINUTE, MINUTE),
        (-90 * SECOND, MINUTE, -2 * MINUTE, -MINUTE),
        (-89 * SECOND, MINUTE, -MINUTE, -MINUTE),
        (1_499_999_999, SECOND, SECOND, SECOND),
    ],
)
def test_round_and_truncate_match_go(d: int, m: int, rounded: int, truncated: int) -> None:
    assert gotext.round_duration(d, m) == rounded
    assert gotext.truncate_duration(d, m) == truncated


def test_seconds_truncates_toward_zero_then_adds_the_fraction() -> None:
    assert gotext.seconds(-1500 * MILLISECOND) == -1.5
    assert gotext.seconds(90 * SECOND + 1) == 90.000000001


@pytest.mark.parametrize(
    "text,want",
    [
        ("2023-11-03T16:28:43Z", 1699028923 * SECOND),
        ("2023-11-03T16:28:43.000368975Z", 1699028923 * SECOND + 368_975),
        ("2023-11-03T17:28:43+01:00", 1699028923 * SECOND),
        ("0001-01-01T00:00:00Z", gotext.ZERO_TIME),
    ],
)
def test_parse_time_keeps_nanoseconds(text: str, want: int) -> None:
    assert gotext.parse_time(text) == want


def test_format_time_round_trips_nanoseconds_and_trims_zeros() -> None:
    t = gotext.parse_time("2023-11-03T16:28:43.1Z")
    assert gotext.format_time(t) == "2023-11-03T16:28:43.1Z"
    assert gotext.format_time(t, nanos=False) == "2023-11-03T16:28:43Z"
    assert gotext.format_time(gotext.ZERO_TIME) == "0001-01-01T00:00:00Z"


@pytest.mark.parametrize("bad", ["", "yesterday", "2023-13-01T00:00:00Z", "2023-11-03 16:28:43"])
def test_parse_time_rejects_bad_input_clearly(bad: str) -> None:
    with pytest.raises(gotext.TimeFormatError, match="timestamp"):
        gotext.parse_time(bad)


@pytest.mark.parametrize(
    "text,want",
    [("10m0s", 10 * MINUTE), ("1h4m41s", 3881 * SECOND), ("1.5µs", 1500), ("-2m", -2 * MINUTE), ("0", 0)],
)
def test_parse_duration_matches_go(text: str, want: int) -> None:
    assert gotext.parse_duration(text) == want


@pytest.mark.parametrize("bad", ["", "10", "5 minutes", "m"])
def test_parse_duration_rejects_bad_input(bad: str) -> None:
    with pytest.raises(gotext.TimeFormatError):
        gotext.parse_duration(bad)


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
    with pytest.raises(gotext.TimeFormatError, match="invalid RFC 3339 timestamp"):
        gotext.parse_time(text)


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
    assert gotext.parse_time(text) == gotext.parse_time(equal_to)


@pytest.mark.parametrize(
    "text,phrase",
    [
        ("Max retries exceeded ([Errno 111] Connection refused)", "connection refused"),
        ("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed", "certificate verify failed"),
        ("Read timed out. (read timeout=5)", "timed out"),
        ("[Errno 113] No route to host", "no route to host"),
        ("first line\nsecond line", "first line"),
        ("x" * 300, "x" * 200),
        ("", ""),
    ],
)
def test_short_error_names_network_failures_by_their_phrase(text: str, phrase: str) -> None:
    assert gotext.short_error(text) == phrase


def test_metav1_time_is_utc_seconds_and_refuses_naive_times() -> None:
    assert gotext.rfc3339_seconds(0) == "1970-01-01T00:00:00Z"
    with pytest.raises(ValueError, match="timezone-aware"):
        gotext.metav1_time(datetime(2024, 1, 1))


# -- Duration arithmetic at its bounds, against Go itself --------------------------------------------

GO_DURATIONS = Path(__file__).parent / "godurations" / "main.go"
# Instants from year 1 to year 9999 (as oc may meet them in a gather time or a condition) and the
# Durations around the int64 bounds.
INSTANTS = [gotext.ZERO_TIME, gotext.ZERO_TIME + 1, gotext.MAX_TIME, 0, gotext.parse_time("2024-01-01T10:00:00Z")]
EDGES = [gotext.MAX_DURATION, gotext.MIN_DURATION, gotext.MAX_DURATION - 29 * SECOND, gotext.MIN_DURATION + 1, 0, 1, -1]


def _cases(rng: random.Random) -> list[tuple[str, tuple[Any, ...]]]:
    cases: list[tuple[str, tuple[Any, ...]]] = []
    for _ in range(400):
        t = rng.choice(INSTANTS) + rng.randint(-10**12, 10**12) * rng.choice([0, 1])
        u = rng.choice(INSTANTS) + rng.randint(-10**12, 10**12) * rng.choice([0, 1])
        t, u = (max(gotext.ZERO_TIME, min(gotext.MAX_TIME, v)) for v in (t, u))
        cases.append(("sub", (t, u)))
        d = rng.choice([*EDGES, rng.randint(gotext.MIN_DURATION, gotext.MAX_DURATION)])
        m = rng.choice([SECOND, MINUTE, HOUR, 7, rng.randint(1, 10**12)])
        cases += [("round", (d, m)), ("truncate", (d, m)), ("string", (d,))]
        cases.append(("add", (d, rng.choice([*EDGES, rng.randint(gotext.MIN_DURATION, gotext.MAX_DURATION)]))))
        scale = rng.choice([1e10, -1e10, 9.3e18, -9.3e18, 1e300, 2.5e9, -7.75e9, 1.5])
        cases.append(("seconds", (scale * rng.random(),)))
    return cases


def _python(op: str, args: tuple[Any, ...]) -> str:
    if op == "sub":
        return str(gotext.sub_times(*args))
    if op == "round":
        return str(gotext.round_duration(*args))
    if op == "truncate":
        return str(gotext.truncate_duration(*args))
    if op == "string":
        return gotext.duration_string(*args)
    if op == "add":
        return str(gotext.add_durations(*args))
    return str(gotext.wrap_int64(gotext.float_to_int64(args[0]) * SECOND))


def _go_line(op: str, args: tuple[Any, ...]) -> str:
    if op == "sub":
        return "sub " + " ".join(f"{v // SECOND} {v % SECOND}" for v in args)
    return " ".join([op, *(repr(a) if isinstance(a, float) else str(a) for a in args)])


def test_duration_arithmetic_at_the_int64_bounds_is_gos(tmp_path: Path) -> None:
    """Time.Sub saturates, Round saturates, + wraps, a float converts to the smallest int64 when
    out of range: what oc prints for a gather time in year 1 or 9999."""
    binary = goprogram.build(GO_DURATIONS, tmp_path)
    cases = _cases(random.Random(9999))
    want = goprogram.run_lines(binary, [_go_line(op, args) for op, args in cases])
    got = [_python(op, args) for op, args in cases]
    mismatches = [(case, w, g) for case, w, g in zip(cases, want, got, strict=True) if g != w]
    assert not mismatches, mismatches[:5]
    assert gotext.duration_string(gotext.sub_times(gotext.MAX_TIME, 0)) == "2562047h47m16.854775807s"


def test_api_timestamps_are_formatted_only_in_gotext() -> None:
    """metav1.Time and MicroTime are written by gotext alone (one copy elsewhere once skipped the UTC
    conversion): no other module of the product formats a timestamp with strftime."""
    home = REPO / "cvo_py/runtime/gotext.py"
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for top in PRODUCT
        for path in sorted((REPO / top).rglob("*.py"))
        if path != home
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"strftime\(\s*[\"']%Y", line)
    ]
    assert found == []


@pytest.mark.parametrize("fmt", [gotext.metav1_time, gotext.micro_time])
def test_api_timestamps_are_utc_and_refuse_a_naive_time(fmt: Callable[[datetime], str]) -> None:
    east = datetime(2026, 11, 23, 17, 30, 0, 250000, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    assert fmt(east).startswith("2026-11-23T12:00:00") and fmt(east).endswith("Z")
    with pytest.raises(ValueError, match="timezone-aware"):
        fmt(datetime(2026, 11, 23, 12, 0, 0))


def test_epoch_seconds_reads_api_timestamps_as_go_would_and_nothing_else() -> None:
    assert gotext.epoch_seconds("2024-01-01T01:00:00Z") == 1704070800.0
    assert gotext.epoch_seconds("2024-01-01T02:30:00+01:30") == 1704070800.0
    assert gotext.epoch_seconds("2024-01-01T01:00:00.5Z") == 1704070800.5
    # Absent, not text, or not RFC 3339 (a date alone or a time without a zone, which a local
    # clock would otherwise have read): no time.
    for value in (None, "", 17, "2024-01-01", "2024-01-01T01:00:00", "yesterday"):
        assert gotext.epoch_seconds(value) is None, value


_DURATION_NUMBERS = [
    "", "0", "1", "00", "9223372036854775807", "9223372036854775808", "2562047", "2562048", "3000000",
    "99999999999999999999", "000000000000000000000001", "153722867", "1.5", ".5", "5.", ".",
    "1.999999999999999999999999", "0.3333333333333", "12.345678901234567890123", "9223372036854.775807",
    "2562047.788015215",
]
_DURATION_UNITS = ["ns", "us", "µs", "μs", "ms", "s", "m", "h", "", "x", "mss", "µ", "H"]
_TIMESTAMPS = [
    "2023-11-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "2024-02-29T12:30:45.5+05:30",
    "2023-11-01T1:02:03Z", "0000-02-29T00:00:00Z", "0001-01-01T00:00:00-24:60", "2100-02-29T00:00:00Z",
    "2000-02-29T00:00:00,123Z",
]


def _random_duration(rng: random.Random) -> str:
    if rng.random() < 0.4:
        alphabet = [*"0123456789.-+ nsumh", "µ", "μ", "é", "\x7f", "\x01", '"', "\\"]
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
    parts = [rng.choice(_DURATION_NUMBERS) + rng.choice(_DURATION_UNITS) for _ in range(rng.randint(1, 3))]
    return rng.choice(["", "-", "+", "--", "+-"]) + "".join(parts)


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


def test_parse_duration_reads_and_refuses_what_go_does_in_gos_words(tmp_path: Path) -> None:
    """time.ParseDuration on edge and random texts: the int64 bound (`3000000h`,
    `9223372036854775808ns`), fractions computed in float64, units, signs, the error texts."""
    binary = goprogram.build(GO_DURATIONS, tmp_path)
    rng = random.Random(21)
    texts = ["3000000h", "9223372036854775808ns", "-9223372036854775808ns", "99999999999999999999h", "2562048h"]
    texts += [_random_duration(rng) for _ in range(6000)]
    want = goprogram.run_lines(binary, [f"parseduration {t.encode().hex()}" for t in texts])
    refused = 0
    for text, go in zip(texts, want, strict=True):
        try:
            got = f"ok {gotext.parse_duration(text)}"
        except gotext.TimeFormatError as exc:
            got = f"error {exc}"
            refused += 1
        assert got == go, repr(text)
    assert 500 < refused < len(texts) - 500
    assert str(pytest.raises(gotext.TimeFormatError, gotext.parse_duration, "3000000h").value) == (
        'time: invalid duration "3000000h"'
    )


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
            ns = gotext.parse_time(text)
        except gotext.TimeFormatError:
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
    instants = [0, gotext.ZERO_TIME, gotext.MAX_TIME, gotext.parse_time("0000-01-01T00:00:00Z"), -1, 1]
    instants += [
        rng.randint(-70_000_000_000, 260_000_000_000) * SECOND + rng.choice([0, 1, 5 * 10**8]) for _ in range(3000)
    ]
    want = goprogram.run_lines(binary, [f"format {t // SECOND} {t % SECOND}" for t in instants])
    assert [gotext.format_time(t) for t in instants] == want
    assert gotext.format_time(gotext.parse_time("0000-01-01T00:00:00Z")) == "0000-01-01T00:00:00Z"
