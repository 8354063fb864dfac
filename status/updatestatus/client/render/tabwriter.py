"""Go's `text/tabwriter` as oc configures it: minwidth 0, tabwidth 0, padding 3, pad ' ', no flags.

Cells end with a tab (or a vertical tab); the text after a line's last tab belongs to no column
and is never padded. A column's width is computed over each run of consecutive lines that have a
cell in it, so a line without enough cells (for instance a multi-line message's continuation)
starts a new alignment block. A form feed ends its line like a newline (and is written as one)
and also ends every block. Widths count code points, as Go counts runes.

`cell` is what a renderer writes into a cell: escaped for the terminal, except for the characters
the writer itself consumes (tab, vertical tab, newline, form feed), which oc passes to Go's writer
as they are. `testkit.oracles.gotabwriter` is the plain port of Go's writer this one is compared with.
"""

from __future__ import annotations

import re

from cvo_py.runtime.gotext.quoting import escape

_TABLE_CONTROLS = re.compile("([\t\n\v\f])")


def cell(text: str) -> str:
    """`text` escaped for display, keeping what the tab writer turns into padding and line ends."""
    if text.isprintable():
        return text  # the common case, checked first: this runs for every cell of every row
    parts = _TABLE_CONTROLS.split(text)
    parts[::2] = map(escape, parts[::2])
    return "".join(parts)


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
        if "\v" in text:
            text = text.replace("\v", "\t")  # without flags, a vertical tab ends a cell as a tab does
        if "\f" not in text:
            return self._formatted(text)
        # Go flushes at a form feed after ending its line: each section is formatted on its own
        *sections, last = text.split("\f")
        return "".join(self._formatted(section + "\n") for section in sections) + self._formatted(last)

    def _formatted(self, text: str) -> str:
        lines = [line.split("\t") for line in text.split("\n")]
        if len(lines[-1]) > 1 and lines[-1][-1] == "":
            lines[-1].pop()  # Go's Flush drops an unterminated empty cell: the cell before it is then the last
        cells = [len(line) - 1 for line in lines]  # tab-terminated cells: the columns a line takes part in
        out: list[str] = []
        self._format(out, lines, cells, [], 0, len(lines))
        return "".join(out)

    def _format(
        self, out: list[str], lines: list[list[str]], cells: list[int], widths: list[int], line0: int, line1: int
    ) -> None:
        column = len(widths)
        this = line0
        while this < line1:
            if cells[this] <= column:
                this += 1
                continue
            # a block of consecutive lines with a cell in this column starts here
            self._write_lines(out, lines, widths, line0, this)
            end = this + 1
            while end < line1 and cells[end] > column:
                end += 1
            width = max(self.minwidth, max([len(line[column]) for line in lines[this:end]]) + self.padding)
            self._format(out, lines, cells, [*widths, width], this, end)
            line0 = this = end
        self._write_lines(out, lines, widths, line0, line1)

    def _write_lines(self, out: list[str], lines: list[list[str]], widths: list[int], line0: int, line1: int) -> None:
        if line0 >= line1:
            return
        columns = len(widths)
        # a line with one cell past the aligned columns (a table's usual line): one format call
        aligned = "".join(f"{{:<{width}}}" for width in widths) + "{}"
        block = []
        for cells in lines[line0:line1]:
            if len(cells) == columns + 1:
                block.append(aligned.format(*cells))
            else:
                padded = min(columns, len(cells) - 1)  # a line's last cell is never padded
                block.append("".join(map(str.ljust, cells[:padded], widths)) + "".join(cells[padded:]))
        out.append("\n".join(block))
        if line1 < len(lines):  # every line but the last ends with a newline
            out.append("\n")
