#!/usr/bin/env python3
"""Available updates from hostile graphs: decoding, selecting and bounding what status holds, in
the poller's order, for graphs within the decoder's bounds (8 MiB, 50,000 nodes); the attempt's
deadline is 30 s. Prints the body size and per-stage times (median and range of the repeats).

    .venv/bin/python bench/update_selection.py [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from testkit.fakes.update_service import all_reachable, many_channels, many_conditional_edges, many_risks
from updateservice import bounds
from updateservice import graph as g

GRAPHS: dict[str, Callable[[], dict[str, Any]]] = {
    "150,000 conditional edges, 3,000 nodes": lambda: many_conditional_edges(150_000),
    "49,999 releases, all updates of the current one": lambda: all_reachable(49_999),
    "one conditional update with 50,000 risks": lambda: many_risks(50_000),
    "150,000 channels on each release": lambda: many_channels(150_000),
}
DEADLINE = 30.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per graph (default 5)")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; deadline {DEADLINE:g} s per attempt")
    for name, make in GRAPHS.items():
        body = json.dumps(make()).encode()
        stages: dict[str, list[float]] = {"decode": [], "select": [], "bound": [], "total": []}
        kept = ""
        for _ in range(args.repeats):
            began = time.perf_counter()
            graph = g.parse_graph(body)
            decoded = time.perf_counter()
            updates = g.select_updates(graph, "4.15.0")
            selected = time.perf_counter()
            bounded, omitted = bounds.bound(updates)
            done = time.perf_counter()
            for stage, seconds in (("decode", decoded - began), ("select", selected - decoded),
                                   ("bound", done - selected), ("total", done - began)):
                stages[stage].append(seconds)
            kept = (f"{len(bounded.available)} available, {len(bounded.conditional)} conditional kept; "
                    f"{omitted.available + omitted.conditional} left out")
        print(f"\n{name}: {len(body):,} bytes; {kept}")
        for stage, samples in stages.items():
            low, high = min(samples), max(samples)
            print(f"  {stage:<7} median {statistics.median(samples):6.2f} s  range {low:6.2f}–{high:6.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
