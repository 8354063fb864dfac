"""Go text/tabwriter as oc configures it (padding 3, spaces, trailing cells never padded)."""

from __future__ import annotations

import pytest

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
