"""Peak memory and time of `upgrade-status` on each hostile corpus entry and on large snapshots.

Each case runs `python -m cvo_py upgrade-status --mock-clusterversion …` in its own child process;
the peak RSS is that child's own (os.wait4), the time is wall time from start to exit. The corpus
is cvo_py/testing/hostile/corpus.py (the one the tests use); the large cases are generated snapshots whose
-node.yaml holds N nodes padded to the size asked for, as JSON (API server output) or YAML.

    .venv/bin/python bench/hostile_inputs.py [--large-mb 100 16] [--yaml-mb 16]

Bounds guaranteed (cvo_py.safeload): a file over 64 MiB is refused with one line before it is read;
nesting, aliases and numbers are refused after a few events; see the printed table for what an
accepted large snapshot costs.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cvo_py.safeload import DEFAULT_LIMITS
from cvo_py.testing.hostile.corpus import CORPUS
from cvo_py.testing.insight_objects import node, write_snapshot

REPO = Path(__file__).resolve().parents[1]


def run_child(cv: Path, *args: str) -> tuple[int, float, int, str]:
    """(exit code, seconds, peak RSS in KiB, first stderr line) of one upgrade-status process."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cvo_py", "upgrade-status", "--mock-clusterversion", str(cv), *args],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.monotonic() - start
        err.seek(0)
        first = err.read().decode(errors="replace").splitlines()[:1]
    return proc.returncode, elapsed, usage.ru_maxrss, (first[0] if first else "")


def large_snapshot(tmp: Path, megabytes: int, as_yaml: bool) -> Path:
    """A snapshot whose -node.yaml is about `megabytes` MB: nodes with a padding annotation."""
    pad = "p" * 2000
    items = []
    size = 0
    i = 0
    while size < megabytes * 1_000_000:
        n = node(f"worker-{i:06d}", extra_annotations={"example.com/padding": pad})
        items.append(n)
        size += len(json.dumps(n))
        i += 1
    doc = {"apiVersion": "v1", "kind": "List", "items": items}
    if as_yaml:
        import yaml

        text = yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), width=1 << 20)
    else:
        text = json.dumps(doc)
    files: dict[str, Any] = {"-node.yaml": text}
    return write_snapshot(tmp, **files)


def _write_large(megabytes: int, fmt: str, tmp: Path) -> Path:
    return write_large(tmp, megabytes, fmt)


def write_large(tmp: Path, megabytes: int, fmt: str) -> Path:
    """`large_snapshot` in a child process: this one stays small, so the measured children (which
    start as copies of it) do not inherit its memory."""
    subprocess.run([sys.executable, __file__, "--write", str(tmp), str(megabytes), fmt], check=True)
    return tmp / "x-cv.yaml"


def main() -> int:
    if sys.argv[1:2] == ["--write"]:
        large_snapshot(Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "yaml")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--large-mb", type=int, nargs="*", default=[100, 16], help="JSON -node.yaml sizes (MB)")
    parser.add_argument("--yaml-mb", type=int, nargs="*", default=[16], help="YAML -node.yaml sizes (MB)")
    args = parser.parse_args()
    cases: list[tuple[str, Callable[[Path], Path], tuple[str, ...]]] = [(c.name, c.write, c.args) for c in CORPUS]
    for fmt, sizes in (("json", args.large_mb), ("yaml", args.yaml_mb)):
        for mb in sizes:
            cases.append((f"{mb} MB snapshot ({fmt.upper()} nodes)", functools.partial(_write_large, mb, fmt), ()))
    print(f"{'CASE':<46} {'INPUT':>9} {'EXIT':>4} {'SECONDS':>8} {'PEAK RSS':>10}  FIRST STDERR LINE")
    for name, write, extra in cases:
        with tempfile.TemporaryDirectory() as tmp:
            cv = write(Path(tmp))
            size = sum(p.stat().st_size for p in Path(tmp).iterdir())
            code, seconds, rss, line = run_child(cv, *extra)
        print(
            f"{name[:46]:<46} {size / 1e6:>7.1f}MB {code:>4} {seconds:>8.2f} {rss / 1024:>8.0f}MB  {line[:90]}",
            flush=True,
        )
    limits = DEFAULT_LIMITS
    print(
        f"\nbounds: files over {limits.max_bytes} bytes refused before reading; depth {limits.max_depth}; "
        f"{limits.max_aliases} aliases standing for at most {limits.max_alias_nodes} nodes; "
        f"numbers of at most {limits.max_number_chars} characters"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
