"""Loading a release payload of a real release's size, and building its task graphs (target: the
load well under 2 s on this machine, the graphs in milliseconds).

Writes a synthetic payload (`testkit.objects.payloads.write_scale_payload`: the CVO's own two
manifests, then ~900 documents over 60 components and 30 run levels, CRDs with schemas,
Deployments, ClusterRoles, ConfigMaps, a Job every 10 levels) into a temporary directory, then
times `syncworker.load.load_payload` (read, render, parse, select, hash), versionHash alone (FNV-1
over the manifests' bytes, to extrapolate to a real payload's tens of MB), and `task_graph` in
each mode with its DOT text. Prints best and median of `--repeat` runs, wall and CPU.

    .venv/bin/python bench/payload_load.py [--manifests 900] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from syncworker.graph import task_graph
from syncworker.load import load_payload, version_hash
from syncworker.modes import Mode
from syncworker.select import Selection
from testkit.objects.payloads import RELEASE_IMAGE, write_scale_payload


def timed(run: Callable[[], object], repeat: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return walls, cpus


def line(what: str, walls: list[float], cpus: list[float], unit: float = 1000.0, suffix: str = "ms") -> str:
    return (
        f"{what}: best {min(walls) * unit:.1f} {suffix}, median {statistics.median(walls) * unit:.1f} {suffix} "
        f"(CPU best {min(cpus) * unit:.1f} {suffix})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifests", type=int, default=900)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="payload-bench-") as tmp:
        root = write_scale_payload(Path(tmp) / "payload", args.manifests)
        files = list((root / "release-manifests").iterdir()) + list((root / "manifests").iterdir())
        on_disk = sum(p.stat().st_size for p in files)

        def load() -> object:
            return load_payload(str(root), release_image=RELEASE_IMAGE, selection=Selection())

        payload = load_payload(str(root), release_image=RELEASE_IMAGE, selection=Selection())  # warm-up
        raw_bytes = sum(len(m.raw) for m in payload.manifests)
        print(f"load average {os.getloadavg()[0]:.2f}; {args.repeat} runs each")
        print(
            f"payload: {len(payload.manifests)} manifests kept, {len(payload.excluded)} excluded, "
            f"{len(files) - 2} files, {on_disk / 1e6:.2f} MB on disk, {raw_bytes / 1e6:.2f} MB of JSON bytes"
        )
        print(line("load_payload (read, render, parse, select, hash)", *timed(load, args.repeat)))
        raws = [m.raw for m in payload.manifests]
        hash_walls, hash_cpus = timed(lambda: version_hash(raws), args.repeat)
        print(line("versionHash alone", hash_walls, hash_cpus) + f"; {raw_bytes / 1e6 / min(hash_walls):.1f} MB/s")
        for mode in Mode:

            def build(mode: Mode = mode) -> object:
                return task_graph(payload.manifests, mode)

            graph = task_graph(payload.manifests, mode)
            print(line(f"task_graph {mode.value} ({len(graph.nodes)} nodes)", *timed(build, args.repeat)))
        graph = task_graph(payload.manifests, Mode.UPDATING)
        print(line("DOT text of the Updating graph", *timed(lambda: graph.dot(payload.manifests), args.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
