"""Every structurally broken object in a snapshot file is a one-line error naming that file (exit 2),
never a traceback: each object-or-list field of each object in a real example, in turn, is
replaced by a string and the whole CLI is run."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from cvo_py.cli import main as cli
from testkit.checkout import EXAMPLES

EXAMPLE = "4.14.1-workers-started-updating-multiple-pools"
FILES = ("-cv.yaml", "-co.yaml", "-mc.yaml", "-mcp.yaml", "-node.yaml")


def containers(value: Any, path: tuple[str, ...] = (), depth: int = 4) -> Iterator[tuple[str, ...]]:
    """Paths of the dict and list values in `value`, down to `depth` keys (list items by index)."""
    if depth == 0:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in items:
        if isinstance(child, dict | list) and child:
            yield (*path, str(key))
            yield from containers(child, (*path, str(key)), depth - 1)


def replace(doc: Any, path: tuple[str, ...], new: Any) -> None:
    """Set the value at `path`; a string value becomes a list, anything else the string "broken"."""
    for key in path[:-1]:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    key: Any = int(path[-1]) if isinstance(doc, list) else path[-1]
    doc[key] = [doc[key]] if isinstance(doc[key], str) else new


def cases() -> list[tuple[str, tuple[str, ...]]]:
    if not EXAMPLES.is_dir():
        return []
    out = []
    for suffix in FILES:
        doc = yaml.safe_load((EXAMPLES / f"{EXAMPLE}{suffix}").read_text())
        # the first object of a list stands for the others
        first = doc["items"][0] if isinstance(doc.get("items"), list) and doc["items"] else doc
        prefix = ("items", "0") if first is not doc else ()
        out += [(suffix, (*prefix, *p)) for p in containers(first)]
        # and each annotation value, as a list instead of a string
        annotations = (first.get("metadata") or {}).get("annotations") or {}
        out += [(suffix, (*prefix, "metadata", "annotations", key)) for key in annotations]
    return out


CASES = cases()


def test_there_are_cases() -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found (looked in {EXAMPLES.resolve()})")
    assert len(CASES) > 50


@pytest.mark.parametrize(("suffix", "path"), CASES, ids=[f"{s}:{'.'.join(p)}" for s, p in CASES])
def test_a_broken_field_names_its_file(
    suffix: str, path: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in FILES:
        shutil.copy(EXAMPLES / f"{EXAMPLE}{name}", tmp_path / f"{EXAMPLE}{name}")
    broken = tmp_path / f"{EXAMPLE}{suffix}"
    doc = yaml.safe_load(broken.read_text())
    replace(doc, path, "broken")
    broken.write_text(yaml.safe_dump(doc))
    code = cli.main(
        [
            "upgrade-status",
            "--mock-clusterversion",
            str(tmp_path / f"{EXAMPLE}-cv.yaml"),
            "--details",
            "all",
            "--now",
            "2024-01-01T00:00:00Z",
        ]
    )
    err = capsys.readouterr().err
    # Some fields are not read at all (e.g. managedFields): then the output is simply printed.
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith(f"error: {broken}: ") and err.count("\n") == 1, err
