"""Warnings shown above `upgrade-status` output: `warning: <text>` lines at the top of stdout,
each also written once to stderr (so a script reading only stdout still sees them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from cvo_py.runtime.gotext.quoting import escape


def warning_text(warnings: Sequence[str]) -> str:
    """The `warning: ...` lines, one per warning, in order: each on one line, escaped like every
    displayed string (a warning may quote a key or value anyone could write)."""
    return "".join(f"warning: {escape(' '.join(w.split()))}\n" for w in warnings)


def emit(warnings: Sequence[str], text: str, out: TextIO, err: TextIO) -> None:
    """Write the warnings at the top of `out` followed by `text`, and each warning once to `err`."""
    lines = warning_text(warnings)
    err.write(lines)
    out.write(lines + text)
