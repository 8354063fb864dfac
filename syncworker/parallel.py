"""A task graph's nodes run on worker threads: a node once every node it waits for succeeded, free
nodes in index order, none after a cancellation (`../shared/reference/sync-worker-facts.md` §3)."""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable
from enum import Enum

from syncworker.cancel import Cancel
from syncworker.graph import TaskGraph


class NodeResult(Enum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CUT = "cut"  # cancelled before its tasks were done


def run_graph(
    graph: TaskGraph, workers: int, run_node: Callable[[int], NodeResult], cancel: Cancel, name: str = "graph"
) -> list[NodeResult | None]:
    """Run the graph's nodes on `workers` threads (joined before returning): a node once all the
    nodes it waits for succeeded, free nodes in index order; none after a cancellation. Each
    node's result, None for a node that never started."""
    nodes = graph.nodes
    results: list[NodeResult | None] = [None] * len(nodes)
    waiting = [len(node.after) for node in nodes]
    successors = graph.successors()
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    running = 0
    changed = threading.Condition()

    def wake() -> None:
        with changed:
            changed.notify_all()

    cancel.on_cancel(wake)

    def work() -> None:
        nonlocal running
        while True:
            with changed:
                while not ready:
                    if running == 0 or cancel.cancelled():
                        return
                    changed.wait(cancel.remaining())
                if cancel.cancelled():
                    return
                index = heapq.heappop(ready)
                running += 1
            result = NodeResult.FAILED  # if run_node raises: the others must not wait for it
            try:
                result = run_node(index)
            finally:
                with changed:
                    running -= 1
                    results[index] = result
                    if result is NodeResult.SUCCEEDED:
                        for after in sorted(successors[index]):
                            waiting[after] -= 1
                            if waiting[after] == 0:
                                heapq.heappush(ready, after)
                    changed.notify_all()

    threads = [
        threading.Thread(target=work, name=f"{name}-{i}", daemon=True) for i in range(max(1, min(workers, len(nodes))))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
