"""cvo_py.runtime.gotext.jsoncodec against Go's encoding/json: decode_json refuses what it refuses,
where it does; marshal_json and json_float write what it writes."""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path

import pytest

from cvo_py.runtime.gotext.jsoncodec import (
    NumberRangeError,
    UnsupportedValue,
    decode_json,
    json_float,
    json_limit_problem,
    json_syntax_problem,
    marshal_json,
    quote_char,
)
from cvo_py.runtime.gotext.numbers import format_float32_g
from cvo_py.runtime.safeload import DocumentError, load_document
from testkit.oracles import goprogram

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
