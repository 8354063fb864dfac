"""The sync worker's scheduling alone: the graph runner (syncworker.parallel), a pass's retries,
effects, reports and cancellation (syncworker.syncpass, syncworker.cancel), and the loop's
modes, back-off and wake-ups (syncworker.worker), with an applier that answers as each test
scripts it (what the API server does is in test_worker_live.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from cvo_py.runtime.kube import JSON
from syncworker import errors
from syncworker.applier import OperatorCache, PayloadErrors, task_ref
from syncworker.cancel import Cancel
from syncworker.errors import Effect, TaskError
from syncworker.graph import Node, TaskGraph, task_graph
from syncworker.load import Payload
from syncworker.manifest import Manifest
from syncworker.modes import Mode
from syncworker.parallel import NodeResult, run_graph
from syncworker.passes import TaskBackoff, Timing, Work
from syncworker.select import Selection
from syncworker.syncpass import run_pass
from syncworker.worker import SyncWorker
from testkit.harness.syncworker import Reports
from testkit.harness.wait import wait_until

FAST = TaskBackoff(0.01, 2.0, 4)  # 4 tries
NEVER = time.monotonic() + 3600


def far() -> Cancel:
    return Cancel(time.monotonic() + 3600)


@dataclass
class Call:
    name: str
    task: int
    mode: Mode
    started: float
    ended: float = 0.0


Script = Callable[[Manifest, int], TaskError | None]  # (manifest, try number from 1) → outcome


@dataclass
class ScriptedApplier:
    """Answers each try as `script` says (None: done), recording every call."""

    script: Script = lambda manifest, tries: None  # noqa: E731
    delay: float = 0.0
    calls: list[Call] = field(default_factory=list)
    precreated: list[str] = field(default_factory=list)
    payload_errors: PayloadErrors = field(default_factory=PayloadErrors)
    lock: threading.Lock = field(default_factory=threading.Lock)
    tries: dict[str, int] = field(default_factory=dict)

    def apply(self, manifest: Manifest, mode: Mode, owner_uid: str, operator_cache: OperatorCache) -> TaskError | None:
        call = Call(manifest.name, manifest.task, mode, time.monotonic())
        with self.lock:
            self.calls.append(call)
            self.tries[manifest.name] = self.tries.get(manifest.name, 0) + 1
            tries = self.tries[manifest.name]
        if self.delay:
            time.sleep(self.delay)
        outcome = self.script(manifest, tries)
        call.ended = time.monotonic()
        return outcome

    def precreate(self, manifest: Manifest, owner_uid: str) -> None:
        with self.lock:
            self.precreated.append(manifest.name)

    def names(self) -> list[str]:
        with self.lock:
            return [c.name for c in self.calls]


def retried(manifest: Manifest) -> TaskError:
    return errors.from_api_error(task_ref(manifest), 409, "Conflict")


def at_once(manifest: Manifest, effect: Effect = Effect.FAIL) -> TaskError:
    return TaskError(
        "ClusterOperatorNotAvailable", f"{manifest.name} is not available", effect, task=task_ref(manifest)
    )


def work_of(payload: Payload, selection: Selection | None = None) -> Work:
    return Work(payload, selection or Selection(), generation=1, cluster_version_uid="uid")


def no_operators(name: str) -> JSON | None:
    return None


def a_pass(payload: Payload, applier: ScriptedApplier, mode: Mode, cancel: Cancel | None = None) -> tuple:  # type: ignore[type-arg]
    progress: list[int] = []
    outcome = run_pass(
        work_of(payload),
        mode,
        0,
        applier=applier,
        operator_cache=no_operators,
        backoff=FAST,
        cancel=cancel or far(),
        progress=progress.append,
    )
    return outcome, progress


# -- the graph runner ----------------------------------------------------------------------------------


def test_no_more_nodes_run_at_once_than_workers_and_free_nodes_go_out_in_index_order() -> None:
    graph = TaskGraph(tuple(Node((i + 1,)) for i in range(8)))
    running, most, order = 0, 0, []
    lock = threading.Lock()

    def node(index: int) -> NodeResult:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            order.append(index)
        time.sleep(0.02)
        with lock:
            running -= 1
        return NodeResult.SUCCEEDED

    results = run_graph(graph, 3, node, far())
    assert results == [NodeResult.SUCCEEDED] * 8
    assert most <= 3
    assert order[:3] == [0, 1, 2]


def test_a_failed_node_stops_what_waits_for_it_and_nothing_else() -> None:
    graph = TaskGraph((Node((1,)), Node((2,)), Node((3,), frozenset({0})), Node((4,), frozenset({1, 2}))))
    results = run_graph(graph, 4, lambda i: NodeResult.FAILED if i == 0 else NodeResult.SUCCEEDED, far())
    assert results == [NodeResult.FAILED, NodeResult.SUCCEEDED, None, None]


def test_a_cancelled_graph_starts_no_further_node() -> None:
    cancel = far()
    graph = TaskGraph(tuple(Node((i + 1,), frozenset({i - 1}) if i else frozenset()) for i in range(4)))

    def node(index: int) -> NodeResult:
        if index == 1:
            cancel.cancel()
        return NodeResult.SUCCEEDED

    assert run_graph(graph, 2, node, cancel) == [NodeResult.SUCCEEDED, NodeResult.SUCCEEDED, None, None]


# -- a pass ------------------------------------------------------------------------------------------


def test_an_updating_pass_runs_each_level_after_the_one_before_and_reports_before_each_task(
    section8: Payload,
) -> None:
    applier = ScriptedApplier(delay=0.005)
    outcome, progress = a_pass(section8, applier, Mode.UPDATING)
    graph = task_graph(section8.manifests, Mode.UPDATING)
    by_task = {c.task: c for c in applier.calls}
    for index, node in enumerate(graph.nodes):
        started = min((by_task[t].started for t in node.tasks if t in by_task), default=None)
        for before in node.after:
            finished = max((by_task[t].ended for t in graph.nodes[before].tasks if t in by_task), default=None)
            if started is not None and finished is not None:
                assert started >= finished, f"node {index} started before node {before} ended"
    assert len(by_task) == len(section8.manifests) - 1
    assert "capability" not in applier.names(), "a manifest the apply-time selection skips is never applied"
    assert outcome.failure is None and outcome.done == len(section8.manifests) - 1
    assert len(progress) == outcome.done, "one report before each applied task"
    assert progress == sorted(progress) and progress[0] == 0 and progress[-1] < outcome.done, "N done so far"
    assert applier.precreated == ["f-op"]


def test_a_task_is_tried_again_within_its_back_off_and_every_failed_try_counts(section8: Payload) -> None:
    applier = ScriptedApplier(lambda m, tries: retried(m) if m.name == "plain" and tries < 3 else None)
    outcome, _ = a_pass(section8, applier, Mode.INITIALIZING)
    assert outcome.failure is None
    assert applier.names().count("plain") == 3
    assert applier.payload_errors.counts() == {"4.99.0": 2}


def test_a_task_failing_every_try_fails_with_its_last_error(section8: Payload) -> None:
    applier = ScriptedApplier(lambda m, tries: retried(m) if m.name == "plain" else None)
    outcome, _ = a_pass(section8, applier, Mode.INITIALIZING)
    assert applier.names().count("plain") == 4
    assert outcome.failure is not None
    assert outcome.failure.message == (
        'Could not update configmap "test-b/plain" (5 of 19): someone else is updating this resource'
    )
    assert outcome.failure.reason == "UpdatePayloadResourceConflict"


def test_an_error_that_is_not_retried_fails_its_node_at_once_and_what_follows_it(section8: Payload) -> None:
    applier = ScriptedApplier(lambda m, tries: at_once(m) if m.name == "plain" else None)
    outcome, _ = a_pass(section8, applier, Mode.UPDATING)
    names = applier.names()
    assert names.count("plain") == 1
    assert "createonly" not in names, "the rest of the node is not run"
    assert "migrate" not in names and "f-op" not in names, "no later level starts"
    assert outcome.failure is not None and outcome.failure.message == "plain is not available"


def test_a_report_effect_error_is_recorded_and_its_node_goes_on(section8: Payload) -> None:
    applier = ScriptedApplier(lambda m, tries: at_once(m, Effect.REPORT) if m.name == "f-op" else None)
    outcome, _ = a_pass(section8, applier, Mode.INITIALIZING)
    assert "widget" in applier.names()
    assert outcome.done == len(section8.manifests) - 1, "the Report task counts as done"
    assert outcome.failure is not None and outcome.failure.effect is Effect.REPORT, "the pass is not clean"


def test_a_pass_cut_short_names_its_incomplete_nodes(section8: Payload) -> None:
    cancel = far()

    def script(manifest: Manifest, tries: int) -> TaskError | None:
        if manifest.name == "migrate":
            cancel.cancel()
        return None

    outcome, _ = a_pass(section8, ScriptedApplier(script), Mode.UPDATING, cancel)
    assert outcome.cut
    assert outcome.failure is not None
    assert outcome.failure.message == '1 incomplete task nodes, beginning with clusteroperator "f-op" (15 of 19)'


def test_a_try_cut_short_in_its_back_off_fails_with_its_last_error(section8: Payload) -> None:
    """As upstream's: the pass's deadline passing during a back-off ends the task with the error
    it had (what an admin can act on), not with "incomplete task nodes"."""
    cancel = far()

    def script(manifest: Manifest, tries: int) -> TaskError | None:
        if manifest.name == "plain":
            cancel.cancel()
            return retried(manifest)
        return None

    applier = ScriptedApplier(script)
    outcome, _ = a_pass(section8, applier, Mode.UPDATING, cancel)
    assert applier.names().count("plain") == 1, "no try after the cut"
    assert outcome.cut
    assert outcome.failure is not None
    assert outcome.failure.message == (
        'Could not update configmap "test-b/plain" (5 of 19): someone else is updating this resource'
    )
    assert [e.reason for e in outcome.errors] == ["UpdatePayloadResourceConflict"]


def test_a_node_whose_run_raises_fails_with_one_line_and_the_pass_ends(section8: Payload) -> None:
    """A bug outside a task's tries fails its node with an error naming its first task; the
    other workers do not wait for the node until the pass's deadline."""
    cancel = Cancel(time.monotonic() + 600)
    outcome = run_pass(
        work_of(section8),
        Mode.UPDATING,
        0,
        applier=ScriptedApplier(),
        operator_cache=no_operators,
        backoff=FAST,
        cancel=cancel,
        progress=lambda done: (_ for _ in ()).throw(RuntimeError("progress broke")) if done == 3 else None,
    )
    assert not cancel.cancelled(), "the pass ended before its deadline"
    assert outcome.failure is not None
    assert outcome.failure.reason == "UpdatePayloadFailed"
    assert outcome.failure.message.startswith("Could not update "), outcome.failure.message


def test_a_pass_past_its_deadline_is_cut_short(section8: Payload) -> None:
    outcome, _ = a_pass(section8, ScriptedApplier(delay=0.05), Mode.UPDATING, Cancel(time.monotonic() + 0.2))
    assert outcome.cut and outcome.failure is not None and "incomplete task nodes" in outcome.failure.message


def test_an_applier_that_raises_fails_its_task_with_one_line(section8: Payload) -> None:
    def script(manifest: Manifest, tries: int) -> TaskError | None:
        if manifest.name == "plain":
            raise KeyError("spec")
        return None

    outcome, _ = a_pass(section8, ScriptedApplier(script), Mode.UPDATING)
    assert outcome.failure is not None
    assert outcome.failure.reason == "UpdatePayloadFailed"
    assert outcome.failure.detail == "unexpected error: KeyError: 'spec'"


# -- the loop ----------------------------------------------------------------------------------------


class Operators:
    """The ClusterOperator informer as the worker sees it: a cache and its handlers."""

    def __init__(self) -> None:
        self.cache: dict[str, JSON] = {}
        self.handlers: list[Callable[[str, JSON, JSON | None], None]] = []

    def get(self, name: str, namespace: str | None = None) -> JSON | None:
        return self.cache.get(name)

    def add_handler(self, handler: Callable[[str, JSON, JSON | None], None]) -> None:
        self.handlers.append(handler)

    def version_changed(self, name: str) -> None:
        old = {"metadata": {"name": name}, "status": {"versions": [{"name": "operator", "version": "1"}]}}
        new = {"metadata": {"name": name}, "status": {"versions": [{"name": "operator", "version": "2"}]}}
        for handler in self.handlers:
            handler("MODIFIED", new, old)


@pytest.fixture
def loop() -> Callable[..., tuple[SyncWorker, Reports, Operators]]:
    started: list[SyncWorker] = []

    def make(applier: ScriptedApplier, interval: float = 0.4) -> tuple[SyncWorker, Reports, Operators]:
        reports, operators = Reports(), Operators()
        timing = Timing(interval=interval, install_backoff=FAST, task_backoff=FAST)
        worker = SyncWorker(applier, operators, reports, timing, jitter=lambda: 0.0)
        started.append(worker.start())
        return worker, reports, operators

    yield make
    for worker in started:
        worker.stop()


def test_the_loop_is_idle_until_its_first_work_then_reconciles_after_a_success(section8: Payload, loop) -> None:  # type: ignore[no-untyped-def]
    applier = ScriptedApplier()
    worker, reports, _ = loop(applier)
    time.sleep(0.2)
    assert applier.calls == []
    worker.update(work_of(section8), Mode.INITIALIZING)
    wait_until(lambda: len(reports.ends()) >= 2, what="two passes")
    first, second = reports.ends()[:2]
    assert (first.mode, first.completed, first.completed_passes) == (Mode.INITIALIZING, True, 1)
    assert (second.mode, second.completed, second.completed_passes) == (Mode.RECONCILING, True, 2)
    assert (second.at - first.at).total_seconds() >= 0.3, "the next pass waits for the interval"


def test_a_failed_pass_keeps_its_mode_and_counts_attempts(section8: Payload, loop) -> None:  # type: ignore[no-untyped-def]
    applier = ScriptedApplier(lambda m, tries: at_once(m) if m.name == "plain" else None)
    worker, reports, _ = loop(applier, interval=0.8)
    worker.update(work_of(section8), Mode.UPDATING)
    wait_until(lambda: len(reports.ends()) >= 3, what="three passes")
    ends = reports.ends()[:3]
    assert [(r.mode, r.attempt) for r in ends] == [(Mode.UPDATING, 0), (Mode.UPDATING, 1), (Mode.UPDATING, 2)]
    assert all(r.failure is not None and not r.completed for r in ends)
    gap = (ends[1].at - ends[0].at).total_seconds()
    assert 0.1 <= gap, "the first retry waits an eighth of the interval"


def test_new_work_cuts_the_pass_short_and_the_next_one_updates_at_once(section8: Payload, loop) -> None:  # type: ignore[no-untyped-def]
    gate = threading.Event()
    applier = ScriptedApplier(lambda m, tries: (gate.wait(10), None)[1] if m.name == "migrate" else None)
    worker, reports, _ = loop(applier)
    worker.update(work_of(section8), Mode.RECONCILING)
    wait_until(lambda: "migrate" in applier.names(), what="the pass at the Job")
    worker.update(work_of(section8, Selection(enabled_gates=frozenset({"SomeGate"}))), Mode.RECONCILING)
    gate.set()
    wait_until(lambda: reports.ends(), what="a pass to end")
    end = reports.ends()[0]
    assert end.mode is Mode.UPDATING, "new work on a settled cluster is an update"
    assert end.completed
    assert "gate-negated" not in [c.name for c in applier.calls if c.mode is Mode.UPDATING], "the new gates apply"


def test_a_cluster_operator_change_wakes_an_update_but_not_a_settled_cluster(section8: Payload, loop) -> None:  # type: ignore[no-untyped-def]
    waiting = {"on": True}
    applier = ScriptedApplier(lambda m, tries: at_once(m, Effect.NONE) if m.name == "f-op" and waiting["on"] else None)
    worker, reports, operators = loop(applier, interval=30.0)
    worker.update(work_of(section8), Mode.UPDATING)
    wait_until(lambda: reports.ends(), what="the first pass")
    assert reports.ends()[0].failure is not None
    waiting["on"] = False
    operators.version_changed("f-op")
    wait_until(lambda: len(reports.ends()) >= 2, what="a pass started by the operator's change")
    assert reports.ends()[1].completed
    calls = len(applier.calls)
    operators.version_changed("f-op")
    time.sleep(0.5)
    assert len(applier.calls) == calls, "a settled cluster waits for its interval"


def test_stopping_cuts_the_pass_short_and_gives_no_report_of_it(section8: Payload, loop) -> None:  # type: ignore[no-untyped-def]
    applier = ScriptedApplier(delay=0.2)
    worker, reports, _ = loop(applier)
    worker.update(work_of(section8), Mode.INITIALIZING)
    wait_until(lambda: applier.calls, what="the first task")
    began = time.monotonic()
    worker.stop()
    assert time.monotonic() - began < 2.0, "within about one request"
    assert reports.ends() == []
    assert not any(t.name.startswith("sync-") for t in threading.enumerate())


def test_reports_never_go_back_within_a_pass(section8: Payload, loop) -> None:  # type: ignore[no-untyped-def]
    worker, reports, _ = loop(ScriptedApplier(delay=0.002))
    worker.update(work_of(section8), Mode.INITIALIZING)
    wait_until(lambda: reports.ends(), what="the first pass")
    first_pass = [r for r in reports.items if r.mode is Mode.INITIALIZING]
    assert [r.done for r in first_pass] == sorted(r.done for r in first_pass)
    assert first_pass[-1].at >= first_pass[0].at >= datetime(2020, 1, 1, tzinfo=UTC)
