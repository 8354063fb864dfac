"""The docs check (hack/check_docs.py, run by `make lint`) passes on this checkout and fails, one
line per reference, on a planted stale path, a broken link and an unknown flag."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testkit.checkout import REPO

CHECK = [sys.executable, str(REPO / "hack" / "check_docs.py")]


def run(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(CHECK + ["--root", str(root)], capture_output=True, text=True, timeout=300)


def git_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_the_docs_of_this_checkout_name_only_what_exists() -> None:
    result = run(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_a_stale_path_a_broken_link_and_an_unknown_flag_each_fail(tmp_path: Path) -> None:
    root = git_tree(tmp_path, {
        "payload/retrieval.py": "",
        "docs/page.md": "# page\n\nSee [home](../README.md) and [gone](gone.md).\n",
        "README.md": (
            "# x\n\nThe retriever is `payload/retrieval.py`; the classifier `payload/classify.py`.\n"
            "Run `cluster-version-operator upgrade-status --details=all --no-such-flag`.\n"
            "```sh\nignored payload/in-a-fence.py\n```\nA pattern `payload/*.py` is not a path.\n"
        ),
    })
    result = run(root)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "README.md:3: names payload/classify.py, which does not exist",
        "README.md:4: names the flag --no-such-flag, which no command takes",
        "docs/page.md:3: names gone.md, which does not exist",
    ]
    assert "3 stale reference(s)" in result.stderr
