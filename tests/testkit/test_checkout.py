"""A test run without ../shared (oc's real outputs) is refused with one line, unless asked for:
by `make check-shared` (the first step of `make test`) and by pytest itself (tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testkit import checkout
from testkit.checkout import REPO

OPT_OUT = f"{checkout.WITHOUT_SHARED}=1"


def _clone(tmp_path: Path, with_shared: bool) -> Path:
    """A copy of the toolkit and tests/conftest.py in tmp_path/clone, with or without ../shared."""
    clone = tmp_path / "clone"
    for package in ("cvo_py", "testkit"):
        shutil.copytree(REPO / package, clone / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", clone / "pyproject.toml")
    (clone / "tests").mkdir()
    shutil.copy(REPO / "tests" / "conftest.py", clone / "tests" / "conftest.py")
    (clone / "tests" / "test_one.py").write_text("def test_one() -> None:\n    assert 1 + 1 == 2\n")
    if with_shared:
        (tmp_path / "shared" / "oc-examples").mkdir(parents=True)
    return clone


def _env(opt_out: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != checkout.WITHOUT_SHARED}
    return env | {checkout.WITHOUT_SHARED: "1"} if opt_out else env


def _check(clone: Path, opt_out: bool) -> subprocess.CompletedProcess[str]:
    """`python -m testkit.checkout` (make check-shared) with the standard library only."""
    env = {"PATH": "/usr/bin:/bin"} | ({checkout.WITHOUT_SHARED: "1"} if opt_out else {})
    return subprocess.run(
        [sys.executable, "-m", "testkit.checkout"], cwd=clone, capture_output=True, text=True, env=env
    )


def _pytest(clone: Path, opt_out: bool) -> subprocess.CompletedProcess[str]:
    env = _env(opt_out) | {"PYTHONPATH": str(clone)}  # the clone's toolkit, not this checkout's
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_one.py"],
        cwd=clone, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


def test_the_message_names_the_path_and_the_opt_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkout, "EXAMPLES", tmp_path / "shared" / "oc-examples")
    monkeypatch.delenv(checkout.WITHOUT_SHARED, raising=False)
    problem = checkout.missing()
    assert problem is not None and "\n" not in problem
    assert str(tmp_path / "shared" / "oc-examples") in problem and OPT_OUT in problem
    monkeypatch.setenv(checkout.WITHOUT_SHARED, "1")
    assert checkout.missing() is None
    monkeypatch.setenv(checkout.WITHOUT_SHARED, "yes")  # only the documented value opts out
    assert checkout.missing() == problem


def test_make_check_shared_refuses_with_one_line_without_shared(tmp_path: Path) -> None:
    done = _check(_clone(tmp_path, with_shared=False), opt_out=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
    assert str(tmp_path / "shared" / "oc-examples") in done.stderr and OPT_OUT in done.stderr


@pytest.mark.parametrize(("with_shared", "opt_out"), [(True, False), (False, True)], ids=["shared", "opted-out"])
def test_make_check_shared_passes_with_shared_or_the_opt_out(tmp_path: Path, with_shared: bool, opt_out: bool) -> None:
    done = _check(_clone(tmp_path, with_shared), opt_out)
    assert (done.returncode, done.stderr) == (0, "")


def test_pytest_refuses_to_start_with_one_line_without_shared(tmp_path: Path) -> None:
    done = _pytest(_clone(tmp_path, with_shared=False), opt_out=False)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    # one line (pytest follows it with a blank one)
    assert done.stderr.strip().count("\n") == 0 and done.stderr.startswith("ERROR: "), done.stderr
    assert str(tmp_path / "shared" / "oc-examples") in done.stderr and OPT_OUT in done.stderr
    assert "1 passed" not in done.stdout


@pytest.mark.parametrize(("with_shared", "opt_out"), [(True, False), (False, True)], ids=["shared", "opted-out"])
def test_pytest_runs_with_shared_or_the_opt_out(tmp_path: Path, with_shared: bool, opt_out: bool) -> None:
    done = _pytest(_clone(tmp_path, with_shared), opt_out)
    assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
    assert "1 passed" in done.stdout
