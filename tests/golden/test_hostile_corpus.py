"""Every entry of the hostile corpus, through the real CLI in a subprocess: a one-line error naming the
file (exit 2) or escaped output, never a crash (exit 139), a traceback or a raw control character."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.checkout import REPO
from testkit.corpus.corpus import CORPUS, Case, environment
from testkit.corpus.values import RAW_CONTROL


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_hostile_snapshot(case: Case, tmp_path: Path) -> None:
    cv = case.write(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "cvo_py", "upgrade-status", "--mock-clusterversion", str(cv), *case.args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(),
    )
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == case.exit_code, (result.returncode, result.stderr[-2000:])
    assert not RAW_CONTROL.search(result.stdout + result.stderr), "a raw control or bidi character reached the terminal"
    if case.exit_code:
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1, result.stderr
        assert re.fullmatch("error: " + case.stderr + ".*\n", result.stderr), result.stderr
    for text in case.stdout:
        assert text in result.stdout, (text, result.stdout)
