"""Go's `text/tabwriter`, ported statement by statement: the plain reference writer that the fast
one in `status.updatestatus.client.render.tabwriter` is compared with (on random tables, and on random
insights through the renderer).

It reads bytes as Go's `Writer.Write` does, cell by cell: a tab or a vertical tab ends a cell, a
newline or a form feed ends a line, a line with a single cell (or a form feed) flushes what is
buffered, so the rows after it align on their own; `Flush` ends the last cell only when it is not
empty. Widths are rune counts (an invalid UTF-8 byte counts one). Escaped text (Go's 0xff
`Escape` byte) is handled as Go handles it, although UTF-8 text never holds that byte. Flags
other than none, and padding with tabs, are not ported: oc uses neither.
"""

from __future__ import annotations

from dataclasses import dataclass

ESCAPE = 0xFF


@dataclass
class _Cell:
    size: int = 0  # bytes
    width: int = 0  # runes
    htab: bool = False  # ended by a horizontal tab (unused without DiscardEmptyColumns)


def _rune_count(data: bytes) -> int:
    """utf8.RuneCount: each invalid byte counts as one rune."""
    count = 0
    i = 0
    while i < len(data):
        b = data[i]
        size = 1
        if b >= 0xC2 and b <= 0xF4:
            need = 1 if b < 0xE0 else 2 if b < 0xF0 else 3
            tail = data[i + 1 : i + 1 + need]
            if len(tail) == need and all(0x80 <= t <= 0xBF for t in tail):
                text = data[i : i + 1 + need]
                try:
                    text.decode("utf-8")
                    size = 1 + need
                except UnicodeDecodeError:
                    size = 1
        count += 1
        i += size
    return count


class ReferenceTabWriter:
    """`tabwriter.NewWriter(out, minwidth, 0, padding, ' ', 0)`, writing into a buffer."""

    def __init__(self, padding: int = 3, minwidth: int = 0) -> None:
        self.minwidth = minwidth
        self.padding = padding
        self._out = bytearray()
        self._reset()

    # -- Go's Writer, field for field --------------------------------------------------------------

    def _reset(self) -> None:
        self.buf = bytearray()
        self.pos = 0
        self.cell = _Cell()
        self.end_char = 0
        self.lines: list[list[_Cell]] = []
        self.widths: list[int] = []
        self._add_line()

    def _add_line(self) -> None:
        self.lines.append([])

    def _append(self, text: bytes) -> None:
        self.buf += text
        self.cell.size += len(text)

    def _update_width(self) -> None:
        self.cell.width += _rune_count(bytes(self.buf[self.pos :]))
        self.pos = len(self.buf)

    def _terminate_cell(self, htab: bool) -> int:
        self.cell.htab = htab
        line = self.lines[-1]
        line.append(self.cell)
        self.cell = _Cell()
        return len(line)

    def _start_escape(self, ch: int) -> None:
        self.end_char = ch  # only Escape: HTML filtering is a flag oc does not set

    def _end_escape(self) -> None:
        self._update_width()
        self.cell.width -= 2  # the Escape bytes are not counted (StripEscape is not set)
        self.pos = len(self.buf)
        self.end_char = 0

    def _write_padding(self, textw: int, cellw: int) -> None:
        self._out += b" " * (cellw - textw)

    def _write_lines(self, pos0: int, line0: int, line1: int) -> int:
        pos = pos0
        for i in range(line0, line1):
            line = self.lines[i]
            for j, c in enumerate(line):
                if c.size == 0:
                    if j < len(self.widths):
                        self._write_padding(c.width, self.widths[j])
                else:
                    self._out += self.buf[pos : pos + c.size]
                    pos += c.size
                    if j < len(self.widths):
                        self._write_padding(c.width, self.widths[j])
            if i + 1 == len(self.lines):
                self._out += self.buf[pos : pos + self.cell.size]
                pos += self.cell.size
            else:
                self._out += b"\n"
        return pos

    def _format(self, pos0: int, line0: int, line1: int) -> int:
        pos = pos0
        column = len(self.widths)
        this = line0
        while this < line1:
            line = self.lines[this]
            if column >= len(line) - 1:
                this += 1
                continue
            pos = self._write_lines(pos, line0, this)
            line0 = this
            width = self.minwidth
            while this < line1:
                line = self.lines[this]
                if column >= len(line) - 1:
                    break
                width = max(width, line[column].width + self.padding)
                this += 1
            self.widths.append(width)
            pos = self._format(pos, line0, this)
            self.widths.pop()
            line0 = this
        return self._write_lines(pos, line0, line1)

    def _flush(self) -> None:
        if self.cell.size > 0:
            if self.end_char != 0:
                self._end_escape()
            self._terminate_cell(False)
        self._format(0, 0, len(self.lines))
        self._reset()

    def write_bytes(self, data: bytes) -> None:
        n = 0
        for i, ch in enumerate(data):
            if self.end_char == 0:
                if ch in (0x09, 0x0B, 0x0A, 0x0C):  # \t \v \n \f
                    self._append(data[n:i])
                    self._update_width()
                    n = i + 1
                    ncells = self._terminate_cell(ch == 0x09)
                    if ch in (0x0A, 0x0C):
                        self._add_line()
                        if ch == 0x0C or ncells == 1:
                            self._flush()
                elif ch == ESCAPE:
                    self._append(data[n:i])
                    self._update_width()
                    n = i
                    self._start_escape(ESCAPE)
            elif ch == self.end_char:
                self._append(data[n : i + 1])
                n = i + 1
                self._end_escape()
        self._append(data[n:])

    # -- the interface of the fast writer ----------------------------------------------------------

    def write(self, text: str) -> None:
        self.write_bytes(text.encode("utf-8", "surrogateescape"))

    def flush_bytes(self) -> bytes:
        self._flush()
        out = bytes(self._out)
        self._out = bytearray()
        return out

    def flush(self) -> str:
        return self.flush_bytes().decode("utf-8", "surrogateescape")
