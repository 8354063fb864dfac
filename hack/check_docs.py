"""The docs agree with the tree: every repository path the project's text names exists, every
section it points to is there, and every command-line flag the docs name is one a command of this
project (or a tool it documents) takes.

Run by `make lint`; exits 1 with one line per stale reference (`file:line: ...`).

Every tracked text file is read (code, comments, manifests, the Makefile, the Dockerfile, CI), not
only the Markdown pages:
- a path is a backquoted word that starts with one of the repository's top-level entries
  (`payload/retrieval.py`, `tests/e2e/`, `install/`); in Markdown also a link target relative to
  the page, and a module or folder named within its package (`fakes/versionpod.py`). A name with a
  `*`, `<`, `{` or `…` in it is a pattern, not a path; `path::name` checks the path;
- a section is a link's `#anchor` (`deploying.md#rbac-minimal`, `#the-commands`), a heading named
  in quotes after its page (`README "Quick start"`, `docs/design.md "Data flow"`) or a numbered
  section (`docs/design.md §4`): the page must have that heading (anchors as GitHub makes them);
- a flag (Markdown only) is a backquoted word starting with `--`; the flags of every
  `cluster-version-operator` subcommand and every script under hack/ and bench/ are read from their
  `--help`, and the few flags of other tools the docs mention are listed in `OTHER_TOOLS`.
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
# A page's section: a link with an anchor; a quoted heading after a page; a numbered section.
_ANCHOR_LINK = re.compile(r"\]\(([^)\s#]*)#([^)\s]+)\)")
_PAGE = r"((?:[\w.-]+/)*[\w.-]+\.md|README)"
_BARE_ANCHOR = re.compile(r"(?<![\w/(])((?:[\w.-]+/)*[\w.-]+\.md)#([a-z0-9_-]+)")
_QUOTED_HEADING = re.compile(_PAGE + r"(?:'s)? \"([^\"]+)\"")
_NUMBERED = re.compile(_PAGE + r" §(\d+)")
_POSSESSIVE = re.compile(r"\bthe " + _PAGE + r"'s ([A-Za-z][\w` /-]*?) section")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
# Files that are data, not text anyone reads for directions (fixtures, goldens, generated output).
_DATA = ("tests/golden/", "tests/crds/", "dashboards/", "go.sum", "tests/hack/test_check_docs.py")


def text_files(root: Path) -> list[Path]:
    """The project's text files (tracked or new, not ignored): not its virtualenv, caches, cluster
    data, binary files or data files."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root,
                            capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in listed:
        path = root / name
        if name.startswith(_DATA) or name.endswith(_DATA) or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        found.append(path)
    return sorted(found)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]|\[([^]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(page: Path) -> tuple[frozenset[str], frozenset[str]]:
    """A Markdown page's headings (their text) and anchors (repeated ones numbered as GitHub does)."""
    texts: list[str] = []
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line)):
            texts.append(match.group(1))
    anchors: list[str] = []
    seen: dict[str, int] = {}
    for text in texts:
        base = slug(text)
        anchors.append(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return frozenset(texts), frozenset(anchors)


def page_of(root: Path, source: Path, name: str) -> Path | None:
    """The Markdown page a reference names: from the source's folder, else from the root, else by
    its file name anywhere in docs/ (README is the root's README.md)."""
    if name in ("", "README"):
        return source if name == "" else root / "README.md"
    for candidate in (source.parent / name, root / name, root / "docs" / Path(name).name):
        if candidate.is_file():
            return candidate
    return None


def sections_named(text: str) -> Iterator[tuple[int, str, str, str]]:
    """(line, page, kind, what) for each section the text points to: kind "anchor", "heading" or
    "number"; page "" is the text's own page."""
    for number, line in enumerate(text.splitlines(), 1):
        for match in _ANCHOR_LINK.finditer(line):
            yield number, match.group(1), "anchor", match.group(2)
        for match in _BARE_ANCHOR.finditer(line):
            yield number, match.group(1), "anchor", match.group(2)
        for match in _QUOTED_HEADING.finditer(line):
            yield number, match.group(1), "heading", match.group(2)
        for match in _NUMBERED.finditer(line):
            yield number, match.group(1), "number", match.group(2)
        for match in _POSSESSIVE.finditer(line):
            yield number, match.group(1), "heading", match.group(2)


def section_exists(page: Path, kind: str, what: str) -> bool:
    texts, anchors = headings(page)
    if kind == "anchor":
        return what in anchors
    if kind == "heading":  # as written, or without its section number ("3. Data flow")
        bare = {re.sub(r"^\d+(\.\d+)*\.?\s+", "", text).replace("`", "").lower() for text in texts}
        return what in texts or what.replace("`", "").lower() in bare
    return any(re.match(rf"{what}\.?\s", text) for text in texts)


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
            word = match.group(1).split("::")[0].split("#")[0].rstrip(".,;:")
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
    for source in text_files(root):
        text = source.read_text(encoding="utf-8")
        where = source.relative_to(root)
        markdown = source.suffix == ".md"
        for number, path, how in paths_named(text, tops):
            if (markdown or how == "root") and not exists(root, source, path, how, tracked):
                problems.append(f"{where}:{number}: names {path}, which does not exist")
        for number, name, kind, what in sections_named(text):
            page = page_of(root, source, name)
            if page is None or page.suffix != ".md":
                # A bare page name found nowhere here is another tree's (the reference facts beside
                # the checkout); a path must exist (an anchor's page is checked as a path, above).
                if "/" in name and kind != "anchor" and page is None:
                    problems.append(f"{where}:{number}: names the page {name}, which does not exist")
            elif not section_exists(page, kind, what):
                shown = {"anchor": f"#{what}", "heading": f'"{what}"', "number": f"§{what}"}[kind]
                page_name = page.relative_to(root)
                problems.append(f"{where}:{number}: names {shown} in {page_name}, which has no such section")
        if markdown:
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
