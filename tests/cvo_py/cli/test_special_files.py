"""A FIFO, /dev/zero or a symlink to either, wherever a file is named: refused at once with one line
(exit 2 for a flag), never a hang, never memory without end. Each case runs the real command in a
child under a 1 GiB address-space rlimit and a timeout (`run_limited`), so a regression fails here
instead of taking the machine's memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.corpus.files import SPECIAL_FILE_FLAGS, SPECIAL_KINDS, cli, run_limited, special_file

TIMEOUT = 60.0  # a child that reads nothing it should not finishes in about a second
PEAK_RSS_BOUND = 200 << 20  # an interpreter's start-up and the command's imports: about 40-60 MB


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
@pytest.mark.parametrize("case", list(SPECIAL_FILE_FLAGS))
def test_a_special_file_is_refused_in_one_line(
    case: str, kind: str, tmp_path: Path, certificate: tuple[str, str]
) -> None:
    special = special_file(tmp_path, kind, "special")
    work = tmp_path / "work"
    work.mkdir()
    argv = SPECIAL_FILE_FLAGS[case](special, work, certificate)
    result = run_limited(cli(*argv), timeout=TIMEOUT, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert not result.timed_out, f"still running after {TIMEOUT:g}s: {result.stderr[-500:]}"
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr[-2000:]
    assert "not a regular file" in result.stderr, result.stderr
    assert result.peak_rss_bytes < PEAK_RSS_BOUND, f"peak RSS {result.peak_rss_bytes >> 20} MiB"
