"""The task graph of a pass: the payload's tasks (one per manifest, numbered 1..N in load order)
grouped into nodes that run their tasks in order, each node waiting for its predecessors.

    graph = task_graph(payload.manifests, Mode.UPDATING)
    graph.nodes[i].tasks    # task numbers, run in this order (empty: a spacer, nothing to run)
    graph.nodes[i].after    # the nodes that must all succeed before this one starts
    print(graph.dot(payload.manifests))   # what `cluster-version-util task-graph` prints

The shapes are upstream's:

- **Jobs** (`batch/v1` Job) split every mode's graph: each is a node of its own, after everything
  before it and before everything after it.
- **Run level and component** come from the file name, `0000_<level>_<component>_…` (levels
  compare as text: `05` is not `5`); a file that does not match breaks grouping.
- **Updating** (`by_number_and_component`): consecutive tasks of one level form a bucket; within
  a bucket of several components each run of one component is a node, and the bucket's nodes run
  in parallel; a bucket starts when every node of the one before has succeeded (a spacer node joins
  two buckets of several nodes). A level of one component, and an unmatched file, are appended to
  one serial node, which carries on until the next bucket of several components.
- **Initializing** and **Reconciling** (`flatten_by_number_and_component`): every run of one
  component within a level is a node, and all run at once (no level barriers; only Jobs order
  them). Reconciling then shuffles them, seeded by
  `attempt // 8`, and rotates them left by `attempt % 8` steps (of `len // 8` nodes from 8 nodes
  on), so a steady cluster (attempt 0 after each success) repeats one order and each failed
  attempt starts elsewhere. Go's math/rand order is not reproduced.

Nodes are listed in the order a runner hands out free nodes. Pure: file names and kinds in, the
graph out. Facts: `../shared/reference/sync-worker-facts.md` §3.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from syncworker.manifest import Manifest
from syncworker.modes import Mode

RUN_LEVEL = re.compile(r"^0000_(\d+)_([a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*?)_", re.ASCII)
SPACER_LABEL = "no manifests"
# Reconciling rotates by whole eighths of the nodes from this many nodes on.
ROTATION_STRIDE = 8


@dataclass(frozen=True)
class Node:
    """Tasks run in order (task numbers; empty for a spacer) once every node in `after` succeeded."""

    tasks: tuple[int, ...]
    after: frozenset[int] = frozenset()


@dataclass(frozen=True)
class TaskGraph:
    nodes: tuple[Node, ...]

    def successors(self) -> tuple[frozenset[int], ...]:
        """For each node, the nodes that wait for it."""
        out: list[set[int]] = [set() for _ in self.nodes]
        for index, node in enumerate(self.nodes):
            for before in node.after:
                out[before].add(index)
        return tuple(frozenset(s) for s in out)

    def dot(self, manifests: Sequence[Manifest]) -> str:
        """The graph in Graphviz DOT: a node per node, labelled with its tasks
        (`<kind> <ns>/<name> (i of N)`, one per line; `no manifests` for a spacer), an edge per
        dependency. `manifests` are the payload's, by task number."""
        lines = ["digraph tasks {", "  labelloc=t;", "  rankdir=TB;"]
        for index, node in enumerate(self.nodes):
            labels = [manifests[task - 1].label() for task in node.tasks] or [SPACER_LABEL]
            label = "\\n".join(_dot_text(text) for text in labels)
            lines.append(f'  {index} [label="{label}"];')
        for index, node in enumerate(self.nodes):
            for before in sorted(node.after):
                lines.append(f"  {before} -> {index};")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


Item = tuple[int, str]  # a task: its number and its file's name


def run_level(file: str) -> tuple[str, str] | None:
    """(level, component) of `0000_<level>_<component>_…`, or None."""
    match = RUN_LEVEL.match(file)
    return (match.group(1), match.group(2)) if match else None


def task_graph(manifests: Sequence[Manifest], mode: Mode, attempt: int = 0) -> TaskGraph:
    """The graph a pass in `mode` runs over the payload's `manifests` (in task order); `attempt`
    (the failed passes in a row) decides Reconciling's order."""
    rng = random.Random(attempt // ROTATION_STRIDE)
    nodes: list[Node] = []
    previous: list[int] = []  # the nodes the next bucket waits for
    for segment in split_on_jobs(manifests):
        if len(segment) <= 1:
            buckets = [[[task for task, _ in segment]]]
        elif mode is Mode.UPDATING:
            buckets = by_number_and_component(segment)
        else:
            bucket = flatten_by_number_and_component(segment)
            if mode is Mode.RECONCILING:
                bucket = permuted(bucket, attempt, rng)
            buckets = [bucket]
        for bucket in buckets:
            if len(previous) > 1 and len(bucket) > 1:
                nodes.append(Node((), frozenset(previous)))
                previous = [len(nodes) - 1]
            first = len(nodes)
            nodes.extend(Node(tuple(tasks), frozenset(previous)) for tasks in bucket)
            previous = list(range(first, len(nodes)))
    return TaskGraph(tuple(nodes))


def split_on_jobs(manifests: Sequence[Manifest]) -> list[list[Item]]:
    """The tasks in order, cut before and after every Job: the runs between Jobs, each Job alone."""
    segments: list[list[Item]] = []
    run: list[Item] = []
    for manifest in manifests:
        if manifest.is_job():
            if run:
                segments.append(run)
                run = []
            segments.append([(manifest.task, manifest.file)])
        else:
            run.append((manifest.task, manifest.file))
    if run:
        segments.append(run)
    return segments


def by_number_and_component(items: Sequence[Item]) -> list[list[list[int]]]:
    """Updating's buckets (each a list of nodes run in parallel, each node its tasks in order)."""
    levels = [run_level(file) for _, file in items]
    buckets: list[list[list[int]]] = []
    serial: list[int] | None = None  # the node single-component runs are appended to
    i = 0
    while i < len(items):
        groups, j = _component_runs(items, levels, i)
        if len(groups) > 1:
            buckets.append(groups)
            serial = None
        elif serial is None:
            serial = list(groups[0])
            buckets.append([serial])
        else:
            serial.extend(groups[0])
        i = j
    return buckets


def flatten_by_number_and_component(items: Sequence[Item]) -> list[list[int]]:
    """Initializing's and Reconciling's nodes, all free to run at once: every run of one
    component within a level (an unmatched file alone) is a node."""
    levels = [run_level(file) for _, file in items]
    nodes: list[list[int]] = []
    i = 0
    while i < len(items):
        groups, i = _component_runs(items, levels, i)
        nodes.extend(groups)
    return nodes


def _component_runs(items: Sequence[Item], levels: list[tuple[str, str] | None], i: int) -> tuple[list[list[int]], int]:
    """The runs of one component in the level that starts at `i` (one run when `i`'s file does not
    match), and where the next level starts."""
    groups: list[list[int]] = []
    start = i
    j = i + 1
    base = levels[i]
    while j < len(items):
        following = levels[j]
        if base is None or following is None or base[0] != following[0]:
            break
        if base[1] != following[1]:
            groups.append([task for task, _ in items[start:j]])
            start = j
        base = following
        j += 1
    groups.append([task for task, _ in items[start:j]])
    return groups, j


def permuted(nodes: list[list[int]], attempt: int, rng: random.Random) -> list[list[int]]:
    """Reconciling's order of one bucket: shuffled by `rng` (seeded with `attempt // 8`), then
    rotated left by `attempt % 8` steps of one node, or of `len // 8` nodes from 8 nodes on."""
    order = list(nodes)
    if len(order) < 2:
        return order
    rng.shuffle(order)
    step = attempt % ROTATION_STRIDE
    shift = step * (len(order) // ROTATION_STRIDE) if len(order) >= ROTATION_STRIDE else step
    shift %= len(order)
    return order[shift:] + order[:shift]
