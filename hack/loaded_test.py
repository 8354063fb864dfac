#!/usr/bin/env python3
"""Run `make test` several times in a row on a fresh clone while CPU-burning processes and a
`go build` load the machine, to show the suite holds when it is starved of CPU (as on a shared CI
runner, or a developer's machine building something else).

    python3 hack/loaded_test.py                 # 5 runs, 2 burners, a go build beside, a clone of HEAD
    python3 hack/loaded_test.py --runs 3 --burners 4 --ref main --no-go-build

Beside each run: the burners, and one `go build` of the local API server (hack/kube-apiserver)
at a time, its output deleted before each, so one is always compiling and linking while the run
lasts (with Go's build cache as it is). Prints one line per run (pytest's result line, exit
code, wall time, the load averages at its end, how many go builds ran) and a total; exits 0 only
if every run passed. The burners, the go build and the run under way are always stopped, also on
Ctrl-C, SIGTERM or an error; the clone's local cluster is stopped after the runs. The clone is
removed afterwards unless a run failed or --keep is given (its path and each run's log are
printed). Only committed work is tested (a clone of --ref). A built local kube-apiserver
(.local-cluster/bin) is copied into the clone when present; `make build-apiserver` still rebuilds
it there if its sources differ.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[1]
RESULT_LINE = re.compile(r"^=+ (.*\b(passed|failed|error|errors|no tests ran)\b.*) =+$")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="times to run `make test` (default 5)")
    parser.add_argument("--burners", type=int, default=2, help="CPU-burning processes (default 2)")
    parser.add_argument("--ref", default="HEAD", help="commit to clone and test (default HEAD)")
    parser.add_argument("--keep", action="store_true", help="keep the clone and its logs")
    parser.add_argument(
        "--no-go-build", dest="go_build", action="store_false", help="no go build of the API server beside the runs"
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.burners < 0:
        parser.error("--runs must be at least 1 and --burners at least 0")
    return args


def clone(ref: str, into: Path) -> Path:
    target = into / "cvo-py"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "checkout", "--quiet", "--detach", ref], check=True)
    # The reference data the golden tests read from beside the repository (skipped when absent).
    shared = REPO.parent / "shared"
    if shared.is_dir():
        (into / "shared").symlink_to(shared)
    built = REPO / ".local-cluster" / "bin"
    if built.is_dir():
        shutil.copytree(built, target / ".local-cluster" / "bin")
    return target


def result_line(log: Path) -> str:
    lines = [m.group(1) for line in log.read_text(errors="replace").splitlines() if (m := RESULT_LINE.match(line))]
    return lines[-1] if lines else "no pytest result line (see the log)"


def run_make_test(target: Path, env: dict[str, str], out: IO[bytes]) -> int:
    """`make test` in its own process group, so that an interruption stops pytest and what it
    started too, not only make."""
    proc = subprocess.Popen(
        ["make", "test"], cwd=target, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        return proc.wait()
    finally:
        stop_group(proc)


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process started in its own session, and all it started: SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class GoBuilds:
    """One `go build` of the local API server at a time, its output deleted first, until stopped."""

    def __init__(self, src: Path, out: Path, log: Path) -> None:
        self.src, self.out, self.log = src, out, log
        self.finished: list[tuple[int, float]] = []  # (exit code, seconds) of each build
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._loop, name="go-build", daemon=True)

    def start(self) -> GoBuilds:
        self._thread.start()
        return self

    def _loop(self) -> None:
        with self.log.open("ab") as log:
            while True:
                with self._lock:  # no build starts once stop() has begun
                    if self._stop.is_set():
                        return
                    self.out.unlink(missing_ok=True)
                    began = time.monotonic()
                    proc = self._proc = subprocess.Popen(
                        ["go", "build", "-o", str(self.out), "."], cwd=self.src, stdout=log,
                        stderr=subprocess.STDOUT, start_new_session=True,
                    )  # fmt: skip
                code = proc.wait()
                if self._stop.is_set():
                    return
                self.finished.append((code, time.monotonic() - began))
                if code != 0:  # a build that cannot succeed would only spin
                    return

    def stop(self) -> None:
        with self._lock:
            self._stop.set()
            proc = self._proc
        if proc is not None:
            stop_group(proc)
        self._thread.join(60)

    def summary(self) -> str:
        if not self.finished:
            return "no go build finished"
        times = ", ".join(f"{seconds:.0f}s" for _, seconds in self.finished)
        failed = sum(code != 0 for code, _ in self.finished)
        return f"{len(self.finished)} go build(s) finished ({times})" + (f", {failed} failed" if failed else "")


def interrupted(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, interrupted)  # burners and runs are stopped on SIGTERM too
    workdir = Path(tempfile.mkdtemp(prefix="cvo-py-loaded-"))
    env = {k: v for k, v in os.environ.items() if k != "CVO_PY_CLUSTER_DIR"}  # the clone's own cluster
    burners: list[subprocess.Popen[bytes]] = []
    passed = 0
    target: Path | None = None
    started = time.monotonic()
    try:
        target = clone(args.ref, workdir)
        commit = subprocess.run(
            ["git", "-C", str(target), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        print(f"clone of {args.ref} ({commit.stdout.strip()}) in {target}", flush=True)
        for _ in range(args.burners):
            burners.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        print(f"{len(burners)} CPU burners running (pids {', '.join(str(b.pid) for b in burners)})", flush=True)
        for run in range(1, args.runs + 1):
            log = workdir / f"make-test-{run}.log"
            builds = None
            if args.go_build:
                out = workdir / "go-build" / "kube-apiserver-harness"
                out.parent.mkdir(exist_ok=True)
                builds = GoBuilds(target / "hack" / "kube-apiserver", out, workdir / f"go-build-{run}.log").start()
            began = time.monotonic()
            try:
                with log.open("wb") as out_log:
                    code = run_make_test(target, env, out_log)
            finally:
                if builds is not None:
                    builds.stop()
            wall = time.monotonic() - began
            passed += code == 0
            load = "/".join(f"{value:.1f}" for value in os.getloadavg())
            beside = f"; {builds.summary()}" if builds is not None else ""
            print(
                f"run {run}/{args.runs}: {result_line(log)} (exit {code}, wall {wall:.0f}s, load average {load} at "
                f"its end{beside}; log {log})",
                flush=True,
            )
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()
        # The clone's local cluster, if a run got far enough to start one (`make cluster-down`
        # would first install the venv).
        python = target / ".venv" / "bin" / "python" if target is not None else None
        if python is not None and python.exists():
            subprocess.run([str(python), "hack/localcluster.py", "down"], cwd=target, env=env, capture_output=True)
        print(f"{passed}/{args.runs} runs passed; total wall {time.monotonic() - started:.0f}s")
        if passed < args.runs or args.keep:
            print(f"clone and logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0 if passed == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
