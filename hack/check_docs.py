"""The docs agree with the tree: every repository path a Markdown file names exists, and every
command-line flag it names is one a command of this project (or a tool it documents) takes.

Run by `make lint`; exits 1 with one line per stale reference (`file:line: ...`).

A path is a backquoted word or a link target that starts with one of the repository's top-level
entries (`payload/retrieval.py`, `tests/e2e/`, `install/`), or a link relative to the Markdown file.
A name with a `*`, `<`, `{` or `…` in it is a pattern, not a path. `path::name` checks the path.
A flag is a backquoted word starting with `--`; the flags of every `cluster-version-operator`
subcommand and every script under hack/ and bench/ are read from their `--help`, and the few
flags of other tools the docs mention are listed in `OTHER_TOOLS` with the tool.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUBCOMMANDS = ("start", "update-status-controller", "upgrade-status", "version")
# Flags of tools other than cvo-py's own that the docs name, by tool: checked against this list
# so that a typo in one of ours is not taken for theirs.
OTHER_TOOLS: dict[str, frozenset[str]] = {
    "oc adm upgrade": frozenset({"--include-not-recommended", "--to-multi-arch", "--to", "--to-image",
                                 "--allow-explicit-upgrade", "--allow-upgrade-with-warnings", "--force",
                                 "--to-latest", "--details"}),
    "pytest": frozenset({"--node", "--runxfail", "--hypothesis-profile", "--lf"}),
    "go build": frozenset({"--apiserver-arg"}),
    "promtool / prometheus": frozenset({"--config.file", "--web.enable-lifecycle"}),
    "buildah": frozenset({"--storage-driver", "--layers"}),
    "mypy": frozenset({"--strict"}),
    "CRI-O / kubelet": frozenset({"--node-ip"}),
}
# Flags named only as examples of what is refused.
REFUSED_EXAMPLES = frozenset({"--kube"})  # an abbreviation of --kubeconfig: Go's flags take whole names only
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9.-]*[a-z0-9])")
_FENCE = re.compile(r"^\s*```")


def markdown_files(root: Path) -> list[Path]:
    """The Markdown files of the project (not of its virtualenv, caches or cluster data)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.md"], cwd=root,
                            capture_output=True, text=True, check=True).stdout.split()
    return sorted(root / name for name in listed)


def top_level(root: Path) -> frozenset[str]:
    return frozenset(p.name for p in root.iterdir() if not p.name.startswith("."))


def is_pattern(word: str) -> bool:
    return any(c in word for c in "*<>{}…$|") or " " in word


def paths_named(text: str, tops: frozenset[str]) -> Iterator[tuple[int, str, str]]:
    """(line, path, how) for each repository path the text names: `how` is "root" (from the
    checkout's root), "file" (a link, from the Markdown file's folder) or "suffix" (a module or
    folder named within its package, such as `fakes/versionpod.py` or `insights/`; a longer
    folder path that does not start at the root is some other tree's, such as an archive's)."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in _CODE.finditer(line):
            word = match.group(1).split("::")[0].rstrip(".,;:")
            if is_pattern(word) or "/" not in word and "." not in word:
                continue
            if word.split("/")[0] in tops:
                yield number, word, "root"
            elif "://" not in word and not word.startswith(("/", "~", ".")) and (
                word.endswith(".py") and "/" in word or word.endswith("/") and word.count("/") == 1
            ):
                yield number, word, "suffix"
        for match in _LINK.finditer(line):
            target = match.group(1)
            if "://" not in target and not target.startswith("mailto:"):
                yield number, target, "file"


def flags_named(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), 1):
        for match in _CODE.finditer(line):
            for flag in _FLAG.findall(match.group(1)):
                yield number, flag.split("=")[0]


def help_flags(commands: Iterable[list[str]]) -> frozenset[str]:
    """Every `--flag` the given commands' `--help` prints (argparse's, with `--no-` forms)."""
    found: set[str] = set()
    for command in commands:
        out = subprocess.run(command + ["--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise SystemExit(f"check_docs: {' '.join(command)} --help exited {out.returncode}: "
                             f"{(out.stderr.strip().splitlines() or [''])[-1]}")
        found.update(flag.split("=")[0] for flag in _FLAG.findall(out.stdout))
    return frozenset(found)


def own_commands() -> list[list[str]]:
    python = [sys.executable]
    commands = [python + ["-m", "cvo_py"]] + [python + ["-m", "cvo_py", sub] for sub in SUBCOMMANDS]
    for folder in ("hack", "bench"):
        for script in sorted((ROOT / folder).glob("*.py")):
            text = script.read_text(encoding="utf-8")
            if "argparse" in text or "import main" in text:  # its own parser, or a thin entry to one
                commands.append(python + [str(script.relative_to(ROOT))])
    return commands


def tracked_paths(root: Path) -> frozenset[str]:
    """Every tracked file and folder, as "/path" and "/folder/", for the suffix check."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root,
                           capture_output=True, text=True, check=True).stdout.split()
    paths: set[str] = set()
    for name in files:
        parts = name.split("/")
        paths.add("/" + name)
        paths.update("/" + "/".join(parts[:i]) + "/" for i in range(1, len(parts)))
    return frozenset(paths)


def exists(root: Path, md: Path, path: str, how: str, tracked: frozenset[str]) -> bool:
    if how == "suffix":
        return any(p.endswith("/" + path) for p in tracked)
    return ((md.parent if how == "file" else root) / path).exists()


def stale_references(root: Path, known_flags: frozenset[str]) -> list[str]:
    tops = top_level(root)
    tracked = tracked_paths(root)
    problems: list[str] = []
    for md in markdown_files(root):
        text = md.read_text(encoding="utf-8")
        where = md.relative_to(root)
        for number, path, how in paths_named(text, tops):
            if not exists(root, md, path, how, tracked):
                problems.append(f"{where}:{number}: names {path}, which does not exist")
        for number, flag in flags_named(text):
            if flag not in known_flags and flag not in REFUSED_EXAMPLES:
                problems.append(f"{where}:{number}: names the flag {flag}, which no command takes")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to check (default: this one)")
    args = parser.parse_args(argv)
    known = help_flags(own_commands()) | frozenset().union(*OTHER_TOOLS.values())
    problems = stale_references(args.root.resolve(), known)
    for line in problems:
        print(line)
    if problems:
        print(f"check_docs: {len(problems)} stale reference(s) in the docs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
