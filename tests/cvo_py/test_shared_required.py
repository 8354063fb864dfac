"""A test run without ../shared (oc's real outputs) is refused with one line, unless asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cvo_py.testing import shared


def test_without_shared_a_run_is_refused_naming_the_path_and_the_opt_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared, "EXAMPLES", tmp_path / "shared" / "oc-examples")
    monkeypatch.delenv(shared.WITHOUT_SHARED, raising=False)
    problem = shared.missing()
    assert problem is not None and "\n" not in problem
    assert str(tmp_path / "shared" / "oc-examples") in problem and f"{shared.WITHOUT_SHARED}=1" in problem
    monkeypatch.setenv(shared.WITHOUT_SHARED, "1")
    assert shared.missing() is None


def test_with_shared_a_run_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(shared.WITHOUT_SHARED, raising=False)
    assert shared.EXAMPLES.is_dir()  # this run itself was allowed to start
    assert shared.missing() is None
    done = subprocess.run([sys.executable, "-m", "cvo_py.testing.shared"], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")


def test_the_check_fails_make_test_with_one_line(tmp_path: Path) -> None:
    """`python -m cvo_py.testing.shared` (make check-shared) run from a copy of the toolkit whose
    ../shared does not exist: exit 1, one line on stderr."""
    copy = tmp_path / "clone" / "cvo_py" / "testing"
    copy.mkdir(parents=True)
    (copy.parent / "__init__.py").write_text("")
    (copy / "__init__.py").write_text("")
    (copy / "shared.py").write_text(Path(shared.__file__).read_text())
    done = subprocess.run(
        [sys.executable, "-c", "import runpy; runpy.run_path('cvo_py/testing/shared.py', run_name='__main__')"],
        cwd=tmp_path / "clone", capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
    assert str(tmp_path / "shared" / "oc-examples") in done.stderr
