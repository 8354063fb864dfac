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


def test_a_section_that_is_gone_fails_wherever_it_is_named(tmp_path: Path) -> None:
    """Anchors, quoted headings, numbered sections and "the README's ... section", named from a
    page or from any other tracked text file (a Makefile, a Dockerfile, a comment)."""
    root = git_tree(tmp_path, {
        "README.md": "# x\n\n## Quick start\n\nSee [flow](docs/design.md#3-data-flow) and [gone](#the-commands).\n",
        "docs/design.md": (
            "# design\n\n## 3. Data flow\n\n## Quick start\n\n## Quick start\n\nLinks: [twice](#quick-start-1).\n"
        ),
        "Makefile": '# see README "Quick start" and README "A real node"\n',
        "Dockerfile": '# docs/design.md §3 holds; docs/design.md §9 does not; `docs/gone.md#x`\n',
        "hack/tool.py": '"""Read the README\'s Quick start section, and the README\'s ConfigMap API section."""\n',
    })
    result = run(root)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "Dockerfile:1: names docs/gone.md, which does not exist",
        "Dockerfile:1: names §9 in docs/design.md, which has no such section",
        'Makefile:1: names "A real node" in README.md, which has no such section',
        "README.md:5: names #the-commands in README.md, which has no such section",
        'hack/tool.py:1: names "ConfigMap API" in README.md, which has no such section',
    ]
