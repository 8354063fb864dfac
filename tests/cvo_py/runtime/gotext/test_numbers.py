"""cvo_py.runtime.gotext.numbers against Go's strconv: FormatFloat's shortest decimal, ParseInt and
ParseFloat."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cvo_py.runtime.gotext.numbers import format_float, parse_float, parse_int_base0
from testkit.oracles import goprogram


@pytest.mark.parametrize(
    ("value", "text"),
    [(2.0, "2"), (0.5, "0.5"), (-0.0, "-0"), (1e21, "1000000000000000000000"), (1e-7, "0.0000001"),
     (0.1 + 0.2, "0.30000000000000004"), (float("nan"), "NaN"), (float("inf"), "+Inf"), (float("-inf"), "-Inf")],
)
def test_format_float_is_gos_shortest_decimal_without_exponent(value: float, text: str) -> None:
    assert format_float(value) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_format_float_reads_back_as_the_same_value(value: float) -> None:
    text = format_float(value)
    assert "e" not in text and float(text) == value


def test_format_float_matches_go_on_fixed_and_random_values(tmp_path: Path) -> None:
    binary = goprogram.build(Path(__file__).parent / "goformatfloat" / "main.go", tmp_path)
    rng = random.Random(7)
    values = [2.0, 0.5, -0.0, 0.0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, float("nan"), float("inf"),
              float("-inf")]
    values += [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(2000)]
    values += [rng.uniform(-1e6, 1e6) for _ in range(500)] + [float(rng.randint(-10**6, 10**6)) for _ in range(500)]
    want = goprogram.run_lines(binary, [struct.pack(">d", v).hex() for v in values])
    mismatches = [(v, format_float(v), w) for v, w in zip(values, want, strict=True)
                  if format_float(v) != w]
    assert not mismatches, mismatches[:10]


def _bits(x: float) -> str:
    return struct.pack(">d", x).hex()


NUMBER_TEXTS = ["0", "-0", "+0", "017", "08", "0x1F", "0X1f", "0o17", "0O17", "0b101", "0B11", "0x", "0b", "0o",
                "+5", "-5", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                "-9223372036854775809", "18446744073709551615", "18446744073709551616", "+18446744073709551615",
                "1e3", "1.5", ".5", "5.", "-.5", "1e400", "1e-400", "-1e400", "1.5e-7", "e3", ".", "-", "", "1_0",
                "0x1p3", "inf", "NaN", " 1", "1 ", "٣", "00", "0777", "0x-5", "1e+3", "1E-3", ".5_0", "._5", "1__0",
                "_1", "1_", "0x_1f", "0_17", "-1_000.5_5", "1_e3", "1e_3", "0" * 100 + "17", "1" * 100,
                "0x" + "f" * 17, "0x" + "0" * 80 + "f" * 16]  # fmt: skip


def test_parse_int_base0_and_parse_float_read_what_go_reads(go_json: Path) -> None:
    texts = [t for t in NUMBER_TEXTS if t.strip() == t and t]
    ints = goprogram.run_lines(go_json, [f"int {t}" for t in texts])
    floats = goprogram.run_lines(go_json, [f"float {t}" for t in texts])
    for text, go_int, go_float in zip(texts, ints, floats, strict=True):
        value = parse_int_base0(text)
        if value is None:
            value = parse_int_base0(text, signed=False)
        assert (str(value) if value is not None else "none") == go_int, text
        number = parse_float(text)
        if text.lower() in ("inf", "nan") or text.startswith("0x"):
            continue  # Go reads these; no manifest scalar reaches parse_float with them
        assert (_bits(number) if number is not None else "none") == go_float, text
