"""cvo_py.runtime.gotext against Go itself: go_quote is strconv.Quote, escape is %q without quotes for display,
decode_json refuses what encoding/json refuses, where it does."""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cvo_py.runtime import gotext
from cvo_py.runtime.gotext import (
    NumberRangeError,
    UnquoteError,
    UnsupportedValue,
    decode_json,
    escape,
    format_float32_g,
    go_quote,
    go_unquote,
    json_float,
    json_limit_problem,
    json_syntax_problem,
    marshal_json,
    parse_float,
    parse_int_base0,
    quote_char,
)
from cvo_py.runtime.safeload import DocumentError, load_document
from testkit.oracles import goprogram

GO_PROGRAM = Path(__file__).parent / "goquote" / "main.go"

# Characters whose treatment differs: escapes, controls, C1, bidi, separators, format characters,
# private use, astral printable and non-printable, combining marks, and plain text.
SPECIAL = (
    [chr(c) for c in range(0x00, 0x20)]
    + ["\x7f", '"', "\\", " ", "a", "Z", "0", "é", "中", "☃", "\u0301", "\ufffd", "\U0001f600", "\U0001d11e"]
    + [chr(c) for c in range(0x80, 0xA1)]
    + ["\u00ad", "\u061c", "\u200b", "\u200e", "\u200f", "\u2028", "\u2029", "\u3000", "\ufeff", "\ue000"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    + ["\U000e0001", "\U000f0000", "\U0010fffd"]
)
INVALID_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80", b"\xf4\x90\x80\x80", b"\xe2\x82"]

FIXED: list[tuple[bytes, str]] = [
    (b"4.19.1", '"4.19.1"'),
    (b"", '""'),
    (b'say "hi"\\', '"say \\"hi\\"\\\\"'),
    (b"a\tb\nc\rd", '"a\\tb\\nc\\rd"'),
    (b"\a\b\f\v", '"\\a\\b\\f\\v"'),
    (b"\x01\x1f\x7f", '"\\x01\\x1f\\x7f"'),
    ("héllo ☃ 中".encode(), '"héllo ☃ 中"'),
    ("\u00a0\u2028\u200b".encode(), '"\\u00a0\\u2028\\u200b"'),
    ("\U000e0001".encode(), '"\\U000e0001"'),
    ("\x1b]0;owned\x07\u202e".encode(), '"\\x1b]0;owned\\a\\u202e"'),
    ("\x85\x9b".encode(), '"\\u0085\\u009b"'),  # C1 controls
    (b"ok\xffbad\xc3", '"ok\\xffbad\\xc3"'),  # invalid UTF-8, byte by byte
]


@pytest.mark.parametrize(("raw", "quoted"), FIXED)
def test_go_quote_fixed_cases(raw: bytes, quoted: str) -> None:
    assert go_quote(raw) == quoted
    assert go_quote(raw.decode("utf-8", "surrogateescape")) == quoted


def test_escape_is_go_quote_without_quotes_and_keeps_printable_text() -> None:
    assert escape('a "quoted" C:\\path é 中') == 'a "quoted" C:\\path é 中'
    assert escape("\x1b[2J\rnode\u202e") == "\\x1b[2J\\rnode\\u202e"
    assert escape(b"\xff") == "\\xff"


def _random_cases(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(0, 12)):
            if rng.random() < 0.15:
                parts.append(rng.choice(INVALID_UTF8))
            else:
                parts.append(rng.choice(SPECIAL).encode("utf-8", "surrogatepass"))
        out.append(b"".join(parts))
    return out


def test_go_quote_matches_go_on_fixed_and_random_strings(tmp_path: Path) -> None:
    binary = goprogram.build(GO_PROGRAM, tmp_path)
    cases = [raw for raw, _ in FIXED] + [c.encode() for c in SPECIAL] + INVALID_UTF8 + _random_cases(2000, 11)
    want = goprogram.run_lines(binary, [c.hex() for c in cases])
    mismatches = [(c, go_quote(c), w) for c, w in zip(cases, want, strict=True) if go_quote(c) != w]
    assert not mismatches, mismatches[:10]
    # a str holding the same bytes (undecodable ones as surrogateescape) quotes the same
    for c, w in zip(cases, want, strict=True):
        assert go_quote(c.decode("utf-8", "surrogateescape")) == w


BAD = set(chr(c) for c in range(0x20)) | {"\x7f"} | {chr(c) for c in range(0x80, 0xA0)}
BAD |= {chr(c) for c in range(0x202A, 0x202F)} | {chr(c) for c in range(0x2066, 0x206A)} | {"\u2028", "\u2029"}


@given(st.text() | st.binary())
def test_escaped_text_has_no_raw_control_or_bidi_character(text: str | bytes) -> None:
    out = escape(text)
    assert not BAD & set(out)
    assert out.isprintable()
    if isinstance(text, str) and text.isprintable():
        assert out == text


GO_JSON_PROGRAM = Path(__file__).parent / "gojson" / "main.go"
CONSTANTS = ("NaN", "Infinity", "-Infinity")


def _random_json(rng: random.Random, depth: int = 0) -> str:
    """A JSON text that is valid but for the NaN, Infinity and -Infinity literals it may hold, with
    strings that spell them, escaped quotes and backslashes, and characters outside ASCII."""
    roll = rng.random()
    if depth > 3 or roll < 0.45:
        scalar = rng.choice(
            [*CONSTANTS, "1", "-2.5e3", "true", "null", '"NaN"', '"a\\"NaN"', '"\\\\"', '"é Infinity"', '"x"']
        )
        return scalar
    children = [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if roll < 0.7:
        return "[" + ", ".join(children) + "]"
    return "{" + ",".join(f'"k{i}\\"": {child}' for i, child in enumerate(children)) + "}"


def test_decode_json_refuses_what_go_refuses_where_go_does(tmp_path: Path) -> None:
    binary = goprogram.build(GO_JSON_PROGRAM, tmp_path)
    rng = random.Random(7)
    docs = ['{"a": NaN}', "[1, -Infinity]", "Infinity", ' {"NaN": "Infinity", "v": [NaN]}', '{"ok": 1}']
    docs += [_random_json(rng) for _ in range(3000)]
    want = goprogram.run_lines(binary, ["decode " + d.encode().hex() for d in docs])
    refused = 0
    for doc, go in zip(docs, want, strict=True):
        try:
            value = decode_json(doc)
        except json.JSONDecodeError as err:
            refused += 1
            got = f"syntax {len(doc[: err.pos + 1].encode())} invalid character {quote_char(doc[err.pos])} {err.msg}"
            assert got == go, doc
            assert json_syntax_problem(err).startswith(f"invalid character {quote_char(doc[err.pos])} at offset ")
        else:
            assert go == "ok", doc
            assert value == json.loads(doc)
    assert 100 < refused < len(docs) - 100  # both kinds were met


@pytest.mark.parametrize(
    ("ch", "quoted"),
    [("a", "'a'"), ("'", "'\\''"), ('"', "'\"'"), ("\\", "'\\\\'"), ("\x01", "'\\x01'"), ("é", "'\\xc3'")],
)
def test_quote_char_is_gos(ch: str, quoted: str) -> None:
    assert quote_char(ch) == quoted


@pytest.mark.parametrize(
    ("value", "text"),
    [(2.0, "2"), (0.5, "0.5"), (-0.0, "-0"), (1e21, "1000000000000000000000"), (1e-7, "0.0000001"),
     (0.1 + 0.2, "0.30000000000000004"), (float("nan"), "NaN"), (float("inf"), "+Inf"), (float("-inf"), "-Inf")],
)
def test_format_float_is_gos_shortest_decimal_without_exponent(value: float, text: str) -> None:
    assert gotext.format_float(value) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_format_float_reads_back_as_the_same_value(value: float) -> None:
    text = gotext.format_float(value)
    assert "e" not in text and float(text) == value


def test_format_float_matches_go_on_fixed_and_random_values(tmp_path: Path) -> None:
    binary = goprogram.build(Path(__file__).parent / "goformatfloat" / "main.go", tmp_path)
    rng = random.Random(7)
    values = [2.0, 0.5, -0.0, 0.0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, float("nan"), float("inf"),
              float("-inf")]
    values += [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(2000)]
    values += [rng.uniform(-1e6, 1e6) for _ in range(500)] + [float(rng.randint(-10**6, 10**6)) for _ in range(500)]
    want = goprogram.run_lines(binary, [struct.pack(">d", v).hex() for v in values])
    mismatches = [(v, gotext.format_float(v), w) for v, w in zip(values, want, strict=True)
                  if gotext.format_float(v) != w]
    assert not mismatches, mismatches[:10]


# -- Go's JSON encoding and number syntax (marshal_json, json_float, format_float32_g, parse_*) ----------

@pytest.fixture(scope="module")
def go_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return goprogram.build(GO_JSON_PROGRAM, tmp_path_factory.mktemp("gojson"))


def _bits(x: float) -> str:
    return struct.pack(">d", x).hex()


def _random_floats(rng: random.Random, n: int) -> list[float]:
    """Floats Go writes differently from Python: whole numbers, both exponent thresholds, tiny and
    huge ones, subnormals, negative zero, and random bit patterns."""
    fixed = [0.0, -0.0, 1.0, -1.0, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 9.99e20, 1e16, 1.5e16, 123456789.0,
             2.5e-320, 5e-324, 1.7976931348623157e308, 3.4028234663852886e38, 3.4028235677973366e38, 1e39,
             0.0001, 0.00001, 1e6, 999999.0, 1234567.0, 1.8446744073709552e19, 33.3]  # fmt: skip
    out = list(fixed)
    while len(out) < n:
        roll = rng.random()
        if roll < 0.4:
            x = struct.unpack(">d", rng.getrandbits(64).to_bytes(8, "big"))[0]
        elif roll < 0.7:
            x = rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
        else:
            x = float(rng.randint(-(10**18), 10**18)) / rng.choice([1, 10, 1000, 3])
        if math.isfinite(x):
            out.append(x)
    return out


def test_json_float_and_format_float32_g_are_gos(go_json: Path) -> None:
    floats = _random_floats(random.Random(11), 3000)
    lines = [f"json {_bits(x)}" for x in floats] + [f"g32 {_bits(x)}" for x in floats]
    by_go = goprogram.run_lines(go_json, lines)
    assert [json_float(x) for x in floats] == by_go[: len(floats)]
    assert [format_float32_g(x) for x in floats] == by_go[len(floats) :]


def test_nan_and_infinities_are_refused_as_go_refuses_them(go_json: Path) -> None:
    specials = [math.nan, math.inf, -math.inf]
    by_go = goprogram.run_lines(go_json, [f"json {_bits(x)}" for x in specials])
    for x, go in zip(specials, by_go, strict=True):
        with pytest.raises(UnsupportedValue) as caught:
            json_float(x)
        assert go == f"error {caught.value}"
        with pytest.raises(UnsupportedValue, match="^json: unsupported value: "):
            marshal_json({"a": [1, {"b": x}]})


STRING_PIECES = ["a", "<", ">", "&", "\u2028", "\u2029", '"', "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "\b",
                 "\f", "é", "中", "\U0001f600", "\u202e", "\ufffd", "1.5", ":", ",", "[", "e", "0"]  # fmt: skip


def test_marshal_json_writes_strings_and_documents_as_go(go_json: Path) -> None:
    rng = random.Random(12)
    texts = ["".join(rng.choice(STRING_PIECES) for _ in range(rng.randint(0, 12))) for _ in range(2000)]
    by_go = goprogram.run_lines(go_json, [f"str {t.encode().hex()}" for t in texts])
    assert [marshal_json(t).hex() for t in texts] == by_go
    # Keys sorted, compact; floats that look like text inside strings are left alone.
    doc = {"b": [1, 2.0, 1e21, "k:1.5,[2e3"], "a": {"z": None, "y": True, "x": -0.0, "w": 1.5e-7}, "<": "&"}
    assert marshal_json(doc) == (
        b'{"\\u003c":"\\u0026","a":{"w":1.5e-7,"x":-0,"y":true,"z":null},"b":[1,2,1e+21,"k:1.5,[2e3"]}'
    )
    assert marshal_json(2.0) == b"2" and marshal_json("\ud800") == b'"\\ufffd"'


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

def test_numbers_past_float64_are_refused_as_go_refuses_them(tmp_path: Path) -> None:
    """`1e400` is infinity to Python's decoder and an error to Go's: decode_json and load_document
    refuse it in Go's words; what Go reads (an underflow to 0, 1e308, a long integer) they read."""
    binary = goprogram.build(GO_JSON_PROGRAM, tmp_path)
    numbers = ["1e400", "-1e400", "1e308", "1.8e308", "1.7976931348623157e308", "1e-400", "-0.0", "4.14", "1E+309"]
    numbers += ["1" + "0" * 308, "1" + "0" * 309, "-" + "9" * 400, "12345678901234567890123"]
    docs = [f'{{"a": [{n}]}}' for n in numbers]
    want = goprogram.run_lines(binary, [d.encode().hex() for d in docs])
    for doc, number, go in zip(docs, numbers, want, strict=True):
        try:
            value = decode_json(doc)
        except NumberRangeError as exc:
            assert go == f"error {exc}" == f"error {json_limit_problem(exc)}", number
            with pytest.raises(DocumentError, match="cannot unmarshal number|a number of"):
                load_document(doc, source="f")
        else:
            assert go == "ok", number
            assert value == json.loads(doc)
            if len(number) <= 100:
                assert load_document(doc, source="f") == value
    assert str(pytest.raises(DocumentError, load_document, "[1e400]", source="f").value) == (
        "f: json: cannot unmarshal number 1e400 into Go value of type float64"
    )


def test_go_unquote_is_strconv_unquote_for_double_quoted_and_raw_literals(tmp_path: Path) -> None:
    binary = goprogram.build(GO_PROGRAM, tmp_path)
    rng = random.Random(13)
    pieces = ["a", "é", "\\", "\\\\", '\\"', "\\'", "\\n", "\\a", "\\x4", "\\x41", "\\xff", "\\u00e9",
              "\\ud800", "\\U0010ffff", "\\U00110000", "\\377", "\\400", "\\12", "\\0", "\n", "\r", "\t", '"',
              "`", "\x00", "\\u12", "\\e"]
    literals = []
    for _ in range(4000):
        quote = rng.choice(['"', "`"])
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 5)))
        literals.append(quote + body + rng.choice([quote, quote, "", '"']))
    want = goprogram.run_lines(binary, [lit.encode().hex() for lit in literals], "unquote")
    refused = 0
    for literal, go in zip(literals, want, strict=True):
        try:
            got = "ok " + go_unquote(literal).encode("utf-8", "surrogateescape").hex()
        except UnquoteError:
            got = "error"
            refused += 1
        assert got == go, repr(literal)
    assert 200 < refused < len(literals) - 200
