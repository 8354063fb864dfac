"""Go text/tabwriter as oc configures it (padding 3, spaces, trailing cells never padded), compared
with Go's own writer and with the plain port of it (`testkit.oracles.gotabwriter`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cvo_py.runtime.gotext.quoting import escape
from status.updatestatus.client.render.tabwriter import TabWriter, cell
from testkit.oracles import goprogram
from testkit.oracles.gotabwriter import ReferenceTabWriter


@pytest.mark.parametrize(
    "text,want",
    [
        ("a\tbb\tc\nccc\td\te\n", "a     bb   c\nccc   d    e\n"),
        # an empty trailing cell still pads the column before it
        ("NAME\tEST\tMESSAGE\nn1\t?\t\n", "NAME   EST   MESSAGE\nn1     ?     \n"),
        # a line without tabs ends every column block: later rows align on their own
        ("x\ty\nlong-name\tz\nbreak\nq\tr\n", "x           y\nlong-name   z\nbreak\nq   r\n"),
        # a multi-line trailing cell: its continuation ends the block, the next row is aligned anew
        (
            "NAME\tMESSAGE\nnode-with-long-name\tpull failed:\nline 2 of the log\nn2\tok\n",
            "NAME                  MESSAGE\nnode-with-long-name   pull failed:\nline 2 of the log\nn2   ok\n",
        ),
        # empty cells are padded too: a continuation line aligns under the last column
        (
            "a\tb\tc\n\t\tcontinued\nlonger\tb\tc\n",
            "a        b   c\n             continued\nlonger   b   c\n",
        ),
        # widths count code points, not bytes or display columns
        ("µµ\tx\nab\ty\n", "µµ   x\nab   y\n"),
        ("日本\tx\nabc\ty\n", "日本    x\nabc   y\n"),
        ("no tabs at all\n", "no tabs at all\n"),
        # text ending without a newline: its empty last cell is dropped, so the cell before it is not padded
        ("x\tyy\t", "x   yy"),
        # a vertical tab ends a cell as a tab does; a form feed ends the line and every block
        ("a\vb\nccc\td\n", "a     b\nccc   d\n"),
        ("a\tb\fccc\td\n", "a   b\nccc   d\n"),
        ("", ""),
    ],
)
def test_tabwriter_matches_go(text: str, want: str) -> None:
    for writer in (TabWriter(), ReferenceTabWriter()):
        writer.write(text)
        assert writer.flush() == want, type(writer).__name__


def test_flush_empties_the_buffer() -> None:
    tw = TabWriter()
    tw.write("a\tb\n")
    tw.flush()
    assert tw.flush() == ""


def test_cells_keep_what_the_writer_consumes_and_escape_the_rest() -> None:
    assert cell("plain text") == "plain text"
    assert cell("line 1\nline 2\tx\vy\fz") == "line 1\nline 2\tx\vy\fz"
    assert cell("\x1b[2J\r\u202e\nnext") == "\\x1b[2J\\r\\u202e\nnext"
    assert cell("\x00\t\x85") == "\\x00\t\\u0085"


GO_PROGRAM = Path(__file__).parent / "gotabwriter" / "main.go"
# What cells hold: names and versions, empty cells, multi-line messages (newlines inside a cell),
# tabs that split a cell, carriage returns, vertical tabs and form feeds, East Asian wide and
# combining characters, characters outside the BMP, and escape sequences after escaping.
ESCAPED = [escape(s) for s in ("\x1b[31mred\x1b[0m", "\x1b]0;title\x07", "\u202eevil", "\x00\x85")]
WORDS = [
    "", "", "a", "bb", "node-1", "µµ", "Progressing", "4.14.1", "Pending", "?", "x" * 30,
    "日本語", "한국어", "ＡＢＣ", "e\u0301", "n\u0303o\u0308", "\u200d", "👍🏽", "𝔘𝔫𝔦",
    *ESCAPED, cell("podman pull failed:\x1b[0m\ntrying to pull"),
]  # fmt: skip
CONTROLS = ["\n", "\t", "\r", "\v", "\f", "\n\n", "\r\n", "\t\t"]


def _random_cell(rng: random.Random) -> str:
    parts = [rng.choice(WORDS) for _ in range(rng.randint(0, 3))]
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        parts.insert(rng.randint(0, len(parts)), rng.choice(CONTROLS))
    return "".join(parts)


def random_tables(n: int, seed: int) -> list[str]:
    """Tables as oc writes them: rows of cells ended by tabs, a trailing cell and a newline (some
    rows short, some with trailing tabs, the last sometimes unterminated)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        columns = rng.choice([1, 2, 4, 6])
        rows = []
        for _ in range(rng.randint(0, 12)):
            width = rng.choice([columns, columns, columns, 0, 1, columns + 1])
            row = "\t".join(_random_cell(rng) for _ in range(width))
            rows.append(row + "\t" * rng.choice([0, 0, 0, 1, 2]))
        texts.append("\n".join(rows) + rng.choice(["", "\n", "\n", "\n"]))
    return texts


@pytest.fixture(scope="module")
def go_tabwriter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Go's text/tabwriter behind hex lines, built once for this file."""
    return goprogram.build(GO_PROGRAM, tmp_path_factory.mktemp("gotabwriter"))


def _go(binary: Path, texts: list[str], *flags: str) -> list[str]:
    outputs = goprogram.run_lines(binary, [t.encode().hex() for t in texts], *flags)
    return [bytes.fromhex(line).decode() for line in outputs]


@pytest.mark.parametrize(
    ("padding", "minwidth", "cases"),
    [(3, 0, 6000), (1, 14, 2000)],
    ids=["upgrade-status", "recommended-updates"],
)
def test_tabwriter_matches_go_on_random_tables(go_tabwriter: Path, padding: int, minwidth: int, cases: int) -> None:
    texts = random_tables(cases, 20261123 + padding)
    # the cases this comparison exists for are there in numbers
    assert sum("\t" in t and "\n" in t.rstrip("\n").split("\n", 1)[-1] for t in texts) > cases // 2
    assert sum(any(c in t for c in "\r\v\f") for t in texts) > cases // 10
    want = _go(go_tabwriter, texts, f"-padding={padding}", f"-minwidth={minwidth}")
    mismatches = []
    for text, expected in zip(texts, want, strict=True):
        for writer in (TabWriter(padding, minwidth), ReferenceTabWriter(padding, minwidth)):
            writer.write(text)
            if writer.flush() != expected:
                mismatches.append((type(writer).__name__, text, expected))
    assert not mismatches, mismatches[:3]


def test_the_reference_reads_bytes_as_go_does(go_tabwriter: Path) -> None:
    """Invalid UTF-8 counts one rune per byte, and Go's Escape byte (0xff) brackets text whose
    width excludes the two escapes: bytes no renderer writes, checked so the oracle stays Go's."""
    rng = random.Random(7)
    pieces = [b"a", b"\t", b"\n", b"\xff", b"\xe2\x82", b"\xc3", b"\xed\xa0\x80", "日".encode(), b"\xf0\x9f\x91"]
    texts = [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 24))) for _ in range(2000)]
    outputs = goprogram.run_lines(go_tabwriter, [t.hex() for t in texts])
    for text, expected in zip(texts, outputs, strict=True):
        writer = ReferenceTabWriter()
        writer.write_bytes(text)
        assert writer.flush_bytes() == bytes.fromhex(expected), text


PIECES = ["a", "bb", "日", "e\u0301", "\t", "\n", "\v", "\f", "\r", " "]
TEXT = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


@given(TEXT, st.integers(0, 4), st.integers(0, 16))
def test_the_fast_writer_is_the_reference_writer(text: str, padding: int, minwidth: int) -> None:
    fast, reference = TabWriter(padding, minwidth), ReferenceTabWriter(padding, minwidth)
    for writer in (fast, reference):
        for piece in text.split(" "):  # several writes, as the renderer makes them
            writer.write(piece)
    assert fast.flush() == reference.flush()
