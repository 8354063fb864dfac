"""cvo_py.runtime.gotext.durations against Go's time.Duration and oc's shortDuration."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.gotext.durations import (
    HOUR,
    MAX_DURATION,
    MICROSECOND,
    MILLISECOND,
    MIN_DURATION,
    MINUTE,
    SECOND,
    TimeFormatError,
    add_durations,
    duration_string,
    float_to_int64,
    parse_duration,
    round_duration,
    seconds,
    short_duration,
    sub_times,
    truncate_duration,
    wrap_int64,
)
from cvo_py.runtime.gotext.times import (
    MAX_TIME,
    ZERO_TIME,
    parse_time,
)
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
    assert duration_string(d) == want


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
    assert short_duration(d) == want


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
    assert round_duration(d, m) == rounded
    assert truncate_duration(d, m) == truncated


def test_seconds_truncates_toward_zero_then_adds_the_fraction() -> None:
    assert seconds(-1500 * MILLISECOND) == -1.5
    assert seconds(90 * SECOND + 1) == 90.000000001


@pytest.mark.parametrize(
    "text,want",
    [("10m0s", 10 * MINUTE), ("1h4m41s", 3881 * SECOND), ("1.5µs", 1500), ("-2m", -2 * MINUTE), ("0", 0)],
)
def test_parse_duration_matches_go(text: str, want: int) -> None:
    assert parse_duration(text) == want


@pytest.mark.parametrize("bad", ["", "10", "5 minutes", "m"])
def test_parse_duration_rejects_bad_input(bad: str) -> None:
    with pytest.raises(TimeFormatError):
        parse_duration(bad)


GO_DURATIONS = Path(__file__).parent / "godurations" / "main.go"

# Instants from year 1 to year 9999 (as oc may meet them in a gather time or a condition) and the
# Durations around the int64 bounds.
INSTANTS = [ZERO_TIME, ZERO_TIME + 1, MAX_TIME, 0, parse_time("2024-01-01T10:00:00Z")]
EDGES = [MAX_DURATION, MIN_DURATION, MAX_DURATION - 29 * SECOND, MIN_DURATION + 1, 0, 1, -1]


def _cases(rng: random.Random) -> list[tuple[str, tuple[Any, ...]]]:
    cases: list[tuple[str, tuple[Any, ...]]] = []
    for _ in range(400):
        t = rng.choice(INSTANTS) + rng.randint(-10**12, 10**12) * rng.choice([0, 1])
        u = rng.choice(INSTANTS) + rng.randint(-10**12, 10**12) * rng.choice([0, 1])
        t, u = (max(ZERO_TIME, min(MAX_TIME, v)) for v in (t, u))
        cases.append(("sub", (t, u)))
        d = rng.choice([*EDGES, rng.randint(MIN_DURATION, MAX_DURATION)])
        m = rng.choice([SECOND, MINUTE, HOUR, 7, rng.randint(1, 10**12)])
        cases += [("round", (d, m)), ("truncate", (d, m)), ("string", (d,))]
        cases.append(("add", (d, rng.choice([*EDGES, rng.randint(MIN_DURATION, MAX_DURATION)]))))
        scale = rng.choice([1e10, -1e10, 9.3e18, -9.3e18, 1e300, 2.5e9, -7.75e9, 1.5])
        cases.append(("seconds", (scale * rng.random(),)))
    return cases


def _python(op: str, args: tuple[Any, ...]) -> str:
    if op == "sub":
        return str(sub_times(*args))
    if op == "round":
        return str(round_duration(*args))
    if op == "truncate":
        return str(truncate_duration(*args))
    if op == "string":
        return duration_string(*args)
    if op == "add":
        return str(add_durations(*args))
    return str(wrap_int64(float_to_int64(args[0]) * SECOND))


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
    assert duration_string(sub_times(MAX_TIME, 0)) == "2562047h47m16.854775807s"


_DURATION_NUMBERS = [
    "", "0", "1", "00", "9223372036854775807", "9223372036854775808", "2562047", "2562048", "3000000",
    "99999999999999999999", "000000000000000000000001", "153722867", "1.5", ".5", "5.", ".",
    "1.999999999999999999999999", "0.3333333333333", "12.345678901234567890123", "9223372036854.775807",
    "2562047.788015215",
]
_DURATION_UNITS = ["ns", "us", "µs", "μs", "ms", "s", "m", "h", "", "x", "mss", "µ", "H"]


def _random_duration(rng: random.Random) -> str:
    if rng.random() < 0.4:
        alphabet = [*"0123456789.-+ nsumh", "µ", "μ", "é", "\x7f", "\x01", '"', "\\"]
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
    parts = [rng.choice(_DURATION_NUMBERS) + rng.choice(_DURATION_UNITS) for _ in range(rng.randint(1, 3))]
    return rng.choice(["", "-", "+", "--", "+-"]) + "".join(parts)


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
            got = f"ok {parse_duration(text)}"
        except TimeFormatError as exc:
            got = f"error {exc}"
            refused += 1
        assert got == go, repr(text)
    assert 500 < refused < len(texts) - 500
    assert str(pytest.raises(TimeFormatError, parse_duration, "3000000h").value) == (
        'time: invalid duration "3000000h"'
    )
