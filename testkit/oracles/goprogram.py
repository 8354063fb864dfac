"""Small Go programs that tests and benchmarks compare the project with (Go's own strconv, sort,
text/tabwriter, text/template; `gofloor/`, the least a CVO must do to report a payload failure;
`gomanifests/`, how the CVO reads a payload's manifests; `gohttpserver/`, what Go's net/http server
answers to a request's bytes).

    binary = build(Path("main.go"), tmp_path)     # skips the test when no Go toolchain is installed
    outputs = run_lines(binary, inputs, *args)    # one input line in, one output line out
    binary = compile_program(Path("main.go"), workdir)   # for a benchmark: GoMissing instead of a skip

Most programs use the standard library only, so they build offline, outside any module, with the
local toolchain. A program beside a `go.mod` (`gomanifests/`: Kubernetes' apimachinery) is built
as that module, its dependencies checked against its `go.sum` and fetched from the Go module proxy
when the module cache lacks them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

FLOOR = Path(__file__).parent / "gofloor" / "main.go"


class GoMissing(Exception):
    """No Go toolchain on PATH."""


def build(source: Path, workdir: Path, cache: Path | None = None) -> Path:
    """`source` built into `workdir`; the calling test is skipped when `go` is not on PATH."""
    import pytest

    try:
        return compile_program(source, workdir, cache)
    except GoMissing as exc:
        pytest.skip(f"{exc}: cannot build {source.name} to compare with Go")


def compile_program(source: Path, workdir: Path, cache: Path | None = None) -> Path:
    """`source` built into `workdir` (Go's build cache in `cache`, default the user's)."""
    go = shutil.which("go")
    if go is None:
        raise GoMissing("the go toolchain is not on PATH")
    binary = workdir / source.parent.name
    module = (source.parent / "go.mod").is_file()
    env = {
        **os.environ,
        # A cache of the caller's (the bench keeps one beside its cluster), else the user's build
        # cache, as `go build` itself would use: the standard library is compiled once, not once per
        # test (about 45 s each on two busy cores).
        "GOCACHE": os.environ.get("GOCACHE") or (str(cache) if cache is not None else _user_cache()),
        "GO111MODULE": "on" if module else "off",
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-mod=readonly -buildvcs=false" if module else "",
        "CGO_ENABLED": "0",
        "HOME": str(workdir),
    }
    if module:  # the user's module cache, as `go build` itself would use (not one under the new HOME)
        gopath = os.environ.get("GOPATH") or os.path.expanduser("~/go")
        env["GOMODCACHE"] = os.environ.get("GOMODCACHE") or os.path.join(gopath.split(os.pathsep)[0], "pkg", "mod")
    target, cwd = (".", source.parent) if module else (str(source), workdir)
    subprocess.run([go, "build", "-o", str(binary), target], cwd=cwd, env=env, check=True, timeout=600)
    return binary


def _user_cache() -> str:
    """Go's default GOCACHE for this user ($XDG_CACHE_HOME or ~/.cache, then go-build)."""
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "go-build")


def run_lines(binary: Path, lines: list[str], *args: str) -> list[str]:
    """What `binary` (run with `args`) prints for `lines` (one output line per input line, none of
    them empty-terminated)."""
    done = subprocess.run(
        [str(binary), *args], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True, timeout=300
    )
    out = done.stdout.split("\n")[:-1]
    assert len(out) == len(lines), f"{binary.name}: {len(out)} lines for {len(lines)} inputs"
    return out
