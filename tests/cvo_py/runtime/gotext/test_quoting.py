"""cvo_py.runtime.gotext.quoting against Go itself: go_quote is strconv.Quote, escape is %q without
quotes for display, go_unquote is strconv.Unquote."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cvo_py.runtime.gotext.quoting import UnquoteError, escape, go_quote, go_unquote
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
