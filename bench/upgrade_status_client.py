"""`upgrade-status` as a support engineer runs it: wall time and peak RSS of the whole process at
60 / 500 / 2,000 / 5,000 nodes, live (ConfigMap API on the local API server), from a snapshot and from
a must-gather .tar.gz.

The cluster is an oc example with its nodes copied (every seventh degraded, see
testkit/objects/scale.py). Each figure is one `cluster-version-operator upgrade-status --details=all`
process (the installed console script, as a user runs it; `python -m cvo_py` where there is none),
started fresh; wall is the median of --repeat runs, RSS the largest.
The project's modules are byte-compiled first, as in an installed package or the image: a
process that compiles them from source (PYTHONDONTWRITEBYTECODE with no `__pycache__`) spends
about 30 ms more on every run.
Targets on a 2-core machine with the image's interpreter, median wall, live and JSON snapshot
alike: 60 nodes 0.10 s, 500 nodes 0.13 s, 2,000 nodes 0.20 s, 5,000 nodes 0.35 s (each row says
whether it is met); the must-gather archive under 2 s and 300 MB. Each row ends with a reference
loop's time measured right after it (see `reference_ms`): rows compare only at similar reference times.

    .venv/bin/python bench/upgrade_status_client.py [--nodes 60,500,2000,5000] [--repeat 5] [--no-live]

Live from the objects (`--source cluster`, what every cluster without the update status controller
gets): the example's objects are loaded into the local API server (about a minute at 5,000 nodes)
and the run computes the insights from them; its rows end with oc's own figures for the same sizes
as issue 36 gives them (oc is not on this machine: they are a reference measured elsewhere, on the
local API server, not a measurement of this run). `--sources` picks the rows (default all).

`--also PATH` measures another build's `cluster-version-operator` console script in the same run
(e.g. the commit before a change, installed in a venv of its own), its runs interleaved with
this one's on the same inputs, so a before and an after meet the same machine.

Another interpreter is measured from a venv made with it, e.g. Debian's (the image's), with the
project installed as the image installs it (a wheel, not editable: an editable install's import
hook costs every run about 15 ms; reinstall after each change):

    /usr/bin/python3.11 -m venv /tmp/venv-deb && /tmp/venv-deb/bin/pip install .
    PYTHONPATH=. /tmp/venv-deb/bin/python bench/upgrade_status_client.py
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from cvo_py.runtime.gotext.times import format_time
from testkit.checkout import PRODUCT, REPO
from testkit.harness import cluster as local
from testkit.objects import livecluster, scale

_SCRIPT = Path(sys.executable).parent / "cluster-version-operator"
COMMAND = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "cvo_py"]


def reference_ms() -> float:
    """This machine's speed right now: the best of three runs of a fixed pure-Python loop, in ms.

    A shared machine's CPU speed changes by up to 2x within minutes; rows measured at different
    speeds compare only through this column."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        total = 0
        for i in range(1_000_000):
            total += i
        best = min(best, time.perf_counter() - start)
    return best * 1000


# The median wall time each size must stay under, live and from a JSON snapshot.
TARGETS = {60: 0.10, 500: 0.13, 2000: 0.20, 5000: 0.35}
# oc adm upgrade status, median wall on this machine's local API server, as issue 36 gives them (62
# nodes for the smallest): the target of `--source cluster`, printed as a reference, never measured here.
OC_REFERENCE = {60: 0.09, 500: 0.18, 2000: 0.24, 5000: 0.32}
SOURCES = ("cluster", "live", "yaml", "json", "must-gather")


def measure(commands: list[list[str]], args: list[str], repeat: int) -> list[tuple[float, float, float, int]]:
    """For each command: (median wall s, max wall s, median CPU s, peak RSS MB) of
    `COMMAND upgrade-status ARGS`, the commands' runs interleaved.

    CPU (user + system) is what the process itself needed: on a busy machine wall time also counts
    waiting for a core. CPU and RSS come from GNU time around the process (a child forked from this
    large process would count this one's pages in its peak RSS until it execs)."""
    walls: list[list[float]] = [[] for _ in commands]
    cpus: list[list[float]] = [[] for _ in commands]
    peaks = [0 for _ in commands]
    for _ in range(repeat):
        for i, command in enumerate(commands):
            start = time.perf_counter()
            done = subprocess.run(
                ["/usr/bin/time", "-f", "%M %U %S", *command, "upgrade-status", *args],
                cwd=REPO,
                env=_CHILD_ENV,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )
            walls[i].append(time.perf_counter() - start)
            lines = done.stderr.strip().splitlines()
            if done.returncode != 0 or not lines:
                raise SystemExit(f"{command[0]} upgrade-status {' '.join(args)} failed: {done.stderr.strip()}")
            rss_kb, user, system = lines[-1].split()
            cpus[i].append(float(user) + float(system))
            peaks[i] = max(peaks[i], int(rss_kb) // 1024)
    return [
        (statistics.median(w), max(w), statistics.median(c), p) for w, c, p in zip(walls, cpus, peaks, strict=True)
    ]


# The measured process imports the installed package, as in the image: not the checkout that
# PYTHONPATH may name for this script's own imports (testkit).
_CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def interpreter() -> str:
    """Which Python runs the commands: the same code's figures differ by the interpreter's build
    (on this machine pyenv's 3.11.7, built from source, runs the reference loop about 25% slower
    than Debian's python3.11, the image's interpreter)."""
    return f"Python {platform.python_version()} at {sys.base_prefix}"


def byte_compile() -> None:
    """Compile the project's modules into their `__pycache__` directories (ignored by git), which
    the measured processes then read even where PYTHONDONTWRITEBYTECODE is set."""
    packages = [str(REPO / name) for name in PRODUCT]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True, stdout=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="60,500,2000,5000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-live", action="store_true", help="skip the live figures (no API server needed)")
    parser.add_argument("--sources", default=",".join(SOURCES), help=f"the rows to measure, of {', '.join(SOURCES)}")
    parser.add_argument(
        "--also", metavar="PATH", help="another build's cluster-version-operator script, measured in the same run"
    )
    opts = parser.parse_args()
    wanted = set(opts.sources.split(","))
    if wanted - set(SOURCES):
        parser.error(f"--sources: unknown {', '.join(sorted(wanted - set(SOURCES)))}")
    commands = [("this", COMMAND)]
    if opts.also:
        if not Path(opts.also).is_file():
            parser.error(f"--also: {opts.also} is not a file")
        commands.append(("also", [opts.also]))
    if not scale.EXAMPLES.is_dir():
        print(f"oc examples not found in {scale.EXAMPLES.resolve()}", file=sys.stderr)
        return 1
    byte_compile()
    cluster = None if opts.no_live else local.start(local.cluster_dir())
    stamp = datetime.now().isoformat(timespec="seconds")
    print(f"{stamp}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {interpreter()}")
    for label, command in commands:
        print(f"  {label}: {' '.join(command)}")
    header = f"{'nodes':>6}  {'source':<26} {'build':<5} {'wall median':>11} {'wall max':>9} {'CPU':>7} {'peak RSS':>9}"
    print(f"{header} {'ref loop':>9}  target")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in opts.nodes.split(",")):
            snap = scale.example_at_scale(n)
            now = snap.mock_now()
            stamp = format_time(now)
            cv_path = scale.write_as_snapshot(snap, Path(tmp) / f"snapshot-{n}")
            json_path = scale.write_as_snapshot(snap, Path(tmp) / f"json-snapshot-{n}", as_json=True)
            archive = scale.write_must_gather(snap, Path(tmp) / f"must-gather-{n}.tar.gz", now)
            runs: list[tuple[str, list[str]]] = []
            loaded = None
            if cluster is not None and "cluster" in wanted:
                loaded = livecluster.load(cluster.client, snap)
                args = ["--kubeconfig", cluster.kubeconfig, "--source", "cluster", "--now", stamp]
                runs.append(("live, from the objects", args))
            if cluster is not None and "live" in wanted:
                insights, _ = snap.insights(now)
                scale.publish(cluster.client, insights, now)
                runs.append(("live", ["--kubeconfig", cluster.kubeconfig, "--source", "controller", "--now", stamp]))
            if "yaml" in wanted:
                runs.append(("snapshot (YAML files)", ["--mock-clusterversion", str(cv_path), "--now", stamp]))
            if "json" in wanted:
                runs.append(("snapshot (JSON files)", ["--mock-clusterversion", str(json_path), "--now", stamp]))
            size = archive.stat().st_size / 1e6
            if "must-gather" in wanted:
                runs.append((f"must-gather ({size:.1f} MB)", ["--from", str(archive)]))
            try:
                measure_rows(commands, runs, n, opts.repeat)
            finally:
                if loaded is not None:
                    loaded.remove()
    return 0


def measure_rows(
    commands: list[tuple[str, list[str]]], runs: list[tuple[str, list[str]]], n: int, repeat: int
) -> None:
    """Measure and print one row per source and build."""
    for label, args in runs:
        results = measure([c for _, c in commands], [*args, "--details", "all"], repeat)
        ref = reference_ms()
        target = TARGETS.get(n) if label.startswith(("live", "snapshot (JSON")) else None
        if label.startswith("live, from the objects"):
            target = OC_REFERENCE.get(n)
        for (build, _), (median, worst, cpu, rss) in zip(commands, results, strict=True):
            verdict = "" if target is None else f"<= {target:.2f} s: {'met' if median <= target else 'NOT met'}"
            if label.startswith("live, from the objects") and target is not None:
                verdict += f" (oc: {target:.2f} s, issue 36's reference, not measured here)"
            print(
                f"{n:>6}  {label:<26} {build:<5} {median:>10.3f}s {worst:>8.3f}s {cpu:>6.3f}s {rss:>6d} MB "
                f"{ref:>6.0f} ms  {verdict}",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
