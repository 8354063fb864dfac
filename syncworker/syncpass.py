"""One pass over the task graph of a payload.

`run_pass` runs `task_graph(manifests, mode, attempt)` with upstream's parallelism
(`passes.parallelism`): a node starts once every node before it succeeded, free nodes go out in
index order (`syncworker.parallel`); it first precreates its ClusterOperators, then runs its tasks
in order. A task the apply-time selection skips is logged (`Skipping <task>: <why>`) and never
done; before every other task the pass reports N done. A task is tried with its mode's back-off
(`Timing.backoff`): an error with `retry` (an API error, a CRD not yet Established) is tried
again, any other (a ClusterOperator not available, a Deployment that cannot roll out) fails the
task at once; every failed try counts in `applier.payload_errors`. A failed task ends its node,
and no node after it starts this pass; the others carry on. A `Report`-effect error (a Degraded
ClusterOperator while installing) is recorded and the node goes on. The pass's errors are
condensed by `errors.summarize`; a pass cut short (new work, a stop, its timeout) where no node
failed says `<n> incomplete task nodes, beginning with <task>`, and tries cut short are no
errors. Facts: `../shared/reference/sync-worker-facts.md` §3 and §5.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from cvo_py.runtime import klog
from cvo_py.runtime.gotext.quoting import escape
from syncworker import errors, operators, select
from syncworker.applier import OperatorCache, PayloadErrors, task_ref
from syncworker.cancel import Cancel
from syncworker.errors import Effect, TaskError
from syncworker.graph import TaskGraph, task_graph
from syncworker.manifest import Manifest
from syncworker.modes import Mode
from syncworker.parallel import NodeResult, run_graph
from syncworker.passes import TaskBackoff, Work, incomplete, parallelism

log = logging.getLogger(__name__)


class TaskApplier(Protocol):
    """What a pass needs of the applier (`syncworker.applier.Applier`)."""

    payload_errors: PayloadErrors

    def apply(
        self, manifest: Manifest, mode: Mode, owner_uid: str, operator_cache: OperatorCache
    ) -> TaskError | None: ...

    def precreate(self, manifest: Manifest, owner_uid: str) -> None: ...


@dataclass(frozen=True)
class PassOutcome:
    """A pass's end: N done, every task error it recorded (Report ones included), its failure
    (condensed, or the incomplete-nodes error), and whether it was cut short."""

    done: int
    errors: tuple[TaskError, ...]
    failure: TaskError | None
    cut: bool


@dataclass
class _Pass:
    """What the nodes of one pass share: its work and seams, and what they counted so far (under
    `lock`, as nodes run on several threads)."""

    work: Work
    mode: Mode
    applier: TaskApplier
    operator_cache: OperatorCache
    schedule: tuple[int, tuple[float, ...]]  # the task back-off's (tries, sleeps)
    cancel: Cancel
    progress: Callable[[int], None]
    graph: TaskGraph
    verbose: int
    done: int = 0
    errors: list[TaskError] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run_node(self, index: int) -> NodeResult:
        """A node's ClusterOperators precreated, then its tasks in order. A bug fails the node with
        one line, never the pass (whose other workers would wait for it) or the process."""
        manifests = self.work.payload.manifests
        tasks = [manifests[number - 1] for number in self.graph.nodes[index].tasks]
        try:
            return self._run_tasks(tasks)
        except Exception as exc:
            detail = f"unexpected error: {type(exc).__name__}: {exc}"
            log.error("error running node %d: %s", index, escape(detail))
            if tasks:
                with self.lock:
                    self.errors.append(errors.from_other(task_ref(tasks[0]), detail))
            return NodeResult.FAILED

    def _run_tasks(self, tasks: list[Manifest]) -> NodeResult:
        for manifest in tasks:
            if self.cancel.cancelled():
                return NodeResult.CUT
            if (
                operators.is_cluster_operator(manifest.obj)
                and select.excluded_at_apply(manifest, self.work.selection) is None
            ):
                self.applier.precreate(manifest, self.work.cluster_version_uid)
        for manifest in tasks:
            if self.cancel.cancelled():
                return NodeResult.CUT
            result = self.run_task(manifest)
            if result is not None:
                return result
        return NodeResult.SUCCEEDED

    def run_task(self, manifest: Manifest) -> NodeResult | None:
        """One task, unless the apply-time selection skips it; what ends its node (None: the
        node goes on)."""
        task = task_ref(manifest)
        why = select.excluded_at_apply(manifest, self.work.selection)
        if why is not None:
            klog.v(klog.NORMAL).info("Skipping %s: %s", task, escape(why))
            return None
        with self.lock:
            self.progress(self.done)
        klog.v(self.verbose).info("Running sync for %s", task)
        outcome = self.tries(manifest)
        if outcome is not None:
            with self.lock:
                self.errors.append(outcome)
            if outcome.effect is not Effect.REPORT:
                return NodeResult.FAILED
        with self.lock:
            self.done += 1
        klog.v(self.verbose).info("Done syncing for %s", task)
        return None

    def tries(self, manifest: Manifest) -> TaskError | None:
        """The task's tries within its back-off: done (None) or its last error, also when the
        pass's cancellation cuts the back-off short."""
        task = task_ref(manifest)
        tries, sleeps = self.schedule
        error: TaskError | None = None
        for index in range(tries):
            try:
                error = self.applier.apply(manifest, self.mode, self.work.cluster_version_uid, self.operator_cache)
            except Exception as exc:  # a bug must fail the task, never the pass or the process
                error = errors.from_other(task, f"unexpected error: {type(exc).__name__}: {exc}")
            if error is None:
                return None
            self.applier.payload_errors.add(self.work.release.version)
            log.error("error running apply for %s: %s", task, escape(error.detail or error.message))
            if not error.retry:
                return error
            if index < len(sleeps) and self.cancel.sleep(sleeps[index]):
                return error  # as upstream's: a back-off cut short ends with the last error, not none
        return error

    def outcome(self, results: list[NodeResult | None]) -> PassOutcome:
        """The pass's end from its nodes' results (None: a node that never started)."""
        failure = errors.summarize(self.errors)
        nodes = self.graph.nodes
        unfinished = [i for i, result in enumerate(results) if result in (None, NodeResult.CUT)]
        failed = any(result is NodeResult.FAILED for result in results)
        if unfinished and not failed:
            first = next((i for i in unfinished if nodes[i].tasks), None)
            if first is not None:
                manifest = self.work.payload.manifests[nodes[first].tasks[0] - 1]
                failure = incomplete(len(unfinished), str(task_ref(manifest)))
        return PassOutcome(self.done, tuple(self.errors), failure, bool(unfinished) and self.cancel.cancelled())


def run_pass(
    work: Work,
    mode: Mode,
    attempt: int,
    *,
    applier: TaskApplier,
    operator_cache: OperatorCache,
    backoff: TaskBackoff,
    cancel: Cancel,
    progress: Callable[[int], None],
    graph: TaskGraph | None = None,
) -> PassOutcome:
    """One pass over `work` in `mode` (module docstring); `progress(N)` before each task."""
    graph = graph or task_graph(work.payload.manifests, mode, attempt)
    verbose = klog.DEBUG if mode is Mode.RECONCILING and attempt == 0 else klog.NORMAL
    state = _Pass(work, mode, applier, operator_cache, backoff.schedule(), cancel, progress, graph, verbose)
    workers = parallelism(mode, len(graph.nodes))
    results = run_graph(graph, workers, state.run_node, cancel, name=f"sync-{mode.value.lower()}")
    return state.outcome(results)
