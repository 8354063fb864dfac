"""Go's `text/tabwriter` as oc configures it: minwidth 0, tabwidth 0, padding 3, pad ' ', no flags.

Cells end with a tab; the text after a line's last tab belongs to no column and is never padded.
A column's width is computed over each run of consecutive lines that have a cell in it, so a line
without enough cells (for instance a multi-line message's continuation) starts a new alignment
block. Widths count code points, as Go counts runes.
"""

from __future__ import annotations


class TabWriter:
    def __init__(self, padding: int = 3, minwidth: int = 0) -> None:
        self.padding = padding
        self.minwidth = minwidth
        self._buf: list[str] = []

    def write(self, text: str) -> None:
        self._buf.append(text)

    def flush(self) -> str:
        """The formatted text of everything written since the last flush."""
        text = "".join(self._buf)
        self._buf = []
        lines = [line.split("\t") for line in text.split("\n")]
        out: list[str] = []
        self._format(out, lines, [], 0, len(lines))
        return "".join(out)

    def _format(self, out: list[str], lines: list[list[str]], widths: list[int], line0: int, line1: int) -> None:
        column = len(widths)
        this = line0
        while this < line1:
            if column >= len(lines[this]) - 1:
                this += 1
                continue
            # a block of consecutive lines with a cell in this column starts here
            self._write_lines(out, lines, widths, line0, this)
            line0 = this
            width = self.minwidth
            while this < line1 and column < len(lines[this]) - 1:
                width = max(width, len(lines[this][column]) + self.padding)
                this += 1
            self._format(out, lines, [*widths, width], line0, this)
            line0 = this
        self._write_lines(out, lines, widths, line0, line1)

    def _write_lines(self, out: list[str], lines: list[list[str]], widths: list[int], line0: int, line1: int) -> None:
        for i in range(line0, line1):
            cells = lines[i]
            for j, cell in enumerate(cells):
                out.append(cell)
                if j < len(widths) and j < len(cells) - 1:
                    out.append(" " * (widths[j] - len(cell)))
            if i + 1 < len(lines):
                out.append("\n")
