"""Go text/tabwriter as oc configures it (padding 3, spaces, trailing cells never padded)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cvo_py.testing import goprogram
from status.updatestatus.render.tabwriter import TabWriter


@pytest.mark.parametrize(
    "text,want",
    [
        ("a\tbb\tc\nccc\td\te\n", "a     bb   c\nccc   d    e\n"),
        # an empty trailing cell still pads the column before it
        ("NAME\tEST\tMESSAGE\nn1\t?\t\n", "NAME   EST   MESSAGE\nn1     ?     \n"),
        # a line without tabs ends every column block: later rows align on their own
        ("x\ty\nlong-name\tz\nbreak\nq\tr\n", "x           y\nlong-name   z\nbreak\nq   r\n"),
        # empty cells are padded too: a continuation line aligns under the last column
        (
            "a\tb\tc\n\t\tcontinued\nlonger\tb\tc\n",
            "a        b   c\n             continued\nlonger   b   c\n",
        ),
        # widths count code points, not bytes
        ("µµ\tx\nab\ty\n", "µµ   x\nab   y\n"),
        ("no tabs at all\n", "no tabs at all\n"),
        # text ending without a newline: its empty last cell is dropped, so the cell before it is not padded
        ("x\tyy\t", "x   yy"),
        ("", ""),
    ],
)
def test_tabwriter_matches_go(text: str, want: str) -> None:
    tw = TabWriter()
    tw.write(text)
    assert tw.flush() == want


def test_flush_empties_the_buffer() -> None:
    tw = TabWriter()
    tw.write("a\tb\n")
    tw.flush()
    assert tw.flush() == ""


GO_PROGRAM = Path(__file__).parent / "gotabwriter" / "main.go"
# What the renderer gives the tab writer: escaped cells (no control characters other than tab and
# newline, which Go's writer would treat specially), multi-byte characters, empty cells and lines.
CELLS = ["", "a", "bb", "node-1", "µµ", "Progressing", "4.14.1", "Pending", "?", "日本語", "x" * 30]


def _random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        lines = []
        for _ in range(rng.randint(0, 40)):
            columns = rng.choice([0, 1, 2, 5, 5, 5, 6])
            lines.append("\t".join(rng.choice(CELLS) for _ in range(columns + rng.randint(0, 1))))
        texts.append("\n".join(lines) + rng.choice(["", "\n"]))
    return texts


def test_tabwriter_matches_go_on_random_tables(tmp_path: Path) -> None:
    binary = goprogram.build(GO_PROGRAM, tmp_path)
    texts = _random_texts(3000, 20261123)
    want = [bytes.fromhex(line).decode() for line in goprogram.run_lines(binary, [t.encode().hex() for t in texts])]
    mismatches = []
    for text, expected in zip(texts, want, strict=True):
        tw = TabWriter()
        tw.write(text)
        if tw.flush() != expected:
            mismatches.append((text, expected))
    assert not mismatches, mismatches[:3]
