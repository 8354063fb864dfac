"""syncworker.graph: the task graphs of the three modes have upstream's shapes, on the facts'
synthetic payload and on random sequences of files (every task once, order kept within a node,
Jobs as barriers, level barriers only while Updating), and render as DOT."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from syncworker.graph import TaskGraph, by_number_and_component, permuted, run_level, task_graph
from syncworker.load import Payload
from syncworker.manifest import RELEASE_MANIFESTS, Manifest
from syncworker.modes import Mode


def shape(graph: TaskGraph) -> list[tuple[tuple[int, ...], list[int]]]:
    return [(node.tasks, sorted(node.after)) for node in graph.nodes]


def test_the_facts_updating_graph(section8: Payload) -> None:
    """`[1,2] → {[4] ∥ [5]} → [6a,6b,7b,7c,7d,9,10×3] → [11] → [12,13,14,15,16]`, in task numbers."""
    assert shape(task_graph(section8.manifests, Mode.UPDATING)) == [
        ((1, 2), []),
        ((3,), [0]),
        ((4,), [0]),
        ((5, 6, 7, 8, 9, 10, 11, 12, 13), [1, 2]),
        ((14,), [3]),
        ((15, 16, 17, 18, 19), [4]),
    ]


def test_the_facts_initializing_graph(section8: Payload) -> None:
    """`{[1,2],[4],[5],[level 10],[level 20]} → [11] → {[12],[13,14],[15],[16]}`, in task numbers."""
    assert shape(task_graph(section8.manifests, Mode.INITIALIZING)) == [
        ((1, 2), []),
        ((3,), []),
        ((4,), []),
        ((5, 6, 7, 8, 9), []),
        ((10, 11, 12, 13), []),
        ((14,), [0, 1, 2, 3, 4]),
        ((15,), [5]),
        ((16, 17), [5]),
        ((18,), [5]),
        ((19,), [5]),
    ]


def test_reconciling_permutes_initializings_nodes_the_same_way_for_an_attempt(section8: Payload) -> None:
    initializing = task_graph(section8.manifests, Mode.INITIALIZING)
    orders = {attempt: task_graph(section8.manifests, Mode.RECONCILING, attempt) for attempt in range(17)}
    for graph in orders.values():
        assert sorted(n.tasks for n in graph.nodes) == sorted(n.tasks for n in initializing.nodes)
        job = next(i for i, n in enumerate(graph.nodes) if n.tasks == (14,))
        assert graph.nodes[job].after == frozenset(range(job))  # the Job still waits for all before it
    assert orders[0] == task_graph(section8.manifests, Mode.RECONCILING, 0)  # reproducible
    assert len({repr(shape(g)) for g in orders.values()}) > 4  # failed attempts start elsewhere


def test_the_dot_text_of_the_facts_updating_graph(section8: Payload) -> None:
    dot = task_graph(section8.manifests, Mode.UPDATING).dot(section8.manifests)
    assert dot.splitlines()[:5] == [
        "digraph tasks {",
        "  labelloc=t;",
        "  rankdir=TB;",
        '  0 [label="namespace openshift-cluster-version (1 of 19)\\n'
        'configmap openshift-cluster-version/render (2 of 19)"];',
        '  1 [label="customresourcedefinition widgets.example.com (3 of 19)"];',
    ]
    assert dot.splitlines()[-7:] == ["  0 -> 1;", "  0 -> 2;", "  1 -> 3;", "  2 -> 3;", "  3 -> 4;", "  4 -> 5;", "}"]


def test_two_buckets_of_several_nodes_are_joined_by_a_spacer() -> None:
    files = ["0000_03_a_x.yaml", "0000_03_b_x.yaml", "0000_05_c_x.yaml", "0000_05_d_x.yaml"]
    graph = task_graph(_manifests(files, set()), Mode.UPDATING)
    assert shape(graph) == [((1,), []), ((2,), []), ((), [0, 1]), ((3,), [2]), ((4,), [2])]
    assert '  2 [label="no manifests"];' in graph.dot(_manifests(files, set()))


def test_run_levels_and_components_come_from_file_names() -> None:
    assert run_level("0000_00_cluster-version-operator_30_deployment.yaml") == ("00", "cluster-version-operator")
    assert run_level("0000_50_olm_00-namespace.yaml") == ("50", "olm")
    assert run_level("0000_05_a-b-c_d.yaml") == ("05", "a-b-c")
    assert run_level("0000_5_x_y.json") == ("5", "x")
    assert run_level("0001_00_x_y.yaml") is None and run_level("0000_00_x.yaml") is None
    assert run_level("0000_٣_x_y.yaml") is None  # ASCII digits only, as Go's \\d


def test_single_component_levels_and_unmatched_files_share_a_serial_node() -> None:
    files = ["0000_10_a_x.yaml", "0000_20_b_x.yaml", "notes.yaml", "0000_30_c_x.yaml", "0000_30_d_x.yaml",
             "0000_40_e_x.yaml"]  # fmt: skip
    assert by_number_and_component(list(enumerate(files, start=1))) == [[[1, 2, 3]], [[4], [5]], [[6]]]


def test_permutation_rotates_by_eighths_from_eight_nodes() -> None:
    import random

    nodes = [[i] for i in range(16)]
    base = permuted(nodes, 0, random.Random(0))
    assert permuted(nodes, 3, random.Random(0)) == base[6:] + base[:6]  # 3 steps of 16 // 8
    small = [[i] for i in range(5)]
    shuffled = permuted(small, 0, random.Random(0))
    assert permuted(small, 7, random.Random(0)) == shuffled[2:] + shuffled[:2]  # 7 steps of one, modulo 5


# -- properties on random payloads ------------------------------------------------------------------------

FILES = st.lists(
    st.tuples(
        st.one_of(
            st.builds(
                lambda level, comp: f"0000_{level}_{comp}_00_x.yaml",
                st.sampled_from(["00", "05", "5", "10", "90"]),
                st.sampled_from(["a", "b", "c-d"]),
            ),
            st.just("unmatched.yaml"),
        ),
        st.integers(1, 3),  # documents in the file
        st.booleans(),  # a Job among them
    ),
    max_size=14,
)  # fmt: skip


def _manifests(files: Sequence[str], jobs: set[int]) -> list[Manifest]:
    total = len(files)
    return [
        Manifest(
            RELEASE_MANIFESTS,
            file,
            0,
            b"{}",
            {},
            "batch" if task in jobs else "",
            "v1",
            "Job" if task in jobs else "ConfigMap",
            "ns",
            f"n{task}",
            {},
            task,
            total,
        )  # fmt: skip
        for task, file in enumerate(files, start=1)
    ]


def _expand(files: list[tuple[str, int, bool]]) -> list[Manifest]:
    names: list[str] = []
    jobs: set[int] = set()
    for file, documents, job in sorted(files):
        for d in range(documents):
            names.append(file)
            if job and d == documents - 1:
                jobs.add(len(names))
    return _manifests(names, jobs)


def _ancestors(graph: TaskGraph) -> list[set[int]]:
    out: list[set[int]] = []
    for node in graph.nodes:  # listed after their predecessors
        seen = set(node.after)
        for before in node.after:
            seen |= out[before]
        out.append(seen)
    return out


def _check_common(graph: TaskGraph, manifests: list[Manifest]) -> tuple[dict[int, int], list[set[int]]]:
    node_of: dict[int, int] = {}
    for index, node in enumerate(graph.nodes):
        assert all(before < index for before in node.after), "listed after its predecessors"
        if node.tasks:
            first = node.tasks[0]
            assert node.tasks == tuple(range(first, first + len(node.tasks))), "a run of tasks, in order"
        for task in node.tasks:
            assert task not in node_of, "every task once"
            node_of[task] = index
    assert sorted(node_of) == [m.task for m in manifests], "every task"
    ancestors = _ancestors(graph)
    for m in manifests:
        if m.is_job():
            job = node_of[m.task]
            assert graph.nodes[job].tasks == (m.task,), "a Job is a node of its own"
            for other in manifests:
                if other.task < m.task:
                    assert node_of[other.task] in ancestors[job]
                elif other.task > m.task:
                    assert job in ancestors[node_of[other.task]]
    return node_of, ancestors


def _segment(m: Manifest, manifests: list[Manifest]) -> tuple[int, tuple[str, str] | None]:
    """Which run of one level (between Jobs and unmatched files) a task is in, and its level and component."""
    run = 0
    previous: tuple[str, str] | None = None
    for other in manifests:
        level = run_level(other.file)
        if other.is_job() or level is None or previous is None or level[0] != previous[0]:
            run += 1
        previous = None if other.is_job() else level
        if other.task == m.task:
            return run, level
    raise AssertionError(m)


@given(FILES)
def test_updating_runs_levels_in_order_and_components_of_a_level_in_parallel(
    files: list[tuple[str, int, bool]],
) -> None:
    manifests = _expand(files)
    graph = task_graph(manifests, Mode.UPDATING)
    node_of, ancestors = _check_common(graph, manifests)
    for a in manifests:
        for b in manifests:
            if a.task >= b.task or node_of[a.task] == node_of[b.task]:
                continue
            ordered = node_of[a.task] in ancestors[node_of[b.task]]
            (run_a, level_a), (run_b, level_b) = _segment(a, manifests), _segment(b, manifests)
            parallel = run_a == run_b and level_a is not None and level_b is not None and level_a[1] != level_b[1]
            assert ordered != parallel, (a.task, b.task)


@given(FILES, st.integers(0, 20))
def test_initializing_and_reconciling_order_nodes_only_through_jobs(
    files: list[tuple[str, int, bool]], attempt: int
) -> None:
    manifests = _expand(files)
    for mode in (Mode.INITIALIZING, Mode.RECONCILING):
        graph = task_graph(manifests, mode, attempt)
        node_of, ancestors = _check_common(graph, manifests)
        for a in manifests:
            for b in manifests:
                if a.task >= b.task or node_of[a.task] == node_of[b.task]:
                    continue
                job_between = any(m.is_job() and a.task <= m.task <= b.task for m in manifests)
                assert (node_of[a.task] in ancestors[node_of[b.task]]) == job_between
        for node in graph.nodes:  # a node is one component of one level (or one unmatched file)
            levels = {run_level(manifests[t - 1].file) for t in node.tasks}
            assert len(levels) == 1
            assert None not in levels or len(node.tasks) == 1
