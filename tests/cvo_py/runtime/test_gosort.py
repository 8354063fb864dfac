"""cvo_py.runtime.gosort against Go itself: the same inputs sorted by a small Go program give the same
permutation, element for element, for sort.Slice (not stable: the order of equals is Go's) and
sort.SliceStable, and for oc's two-pass order of health insights."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from cvo_py.runtime import gosort
from testkit.oracles import goprogram

GO_PROGRAM = Path(__file__).parent / "gosort" / "main.go"

Item = tuple[int, int, int]  # (input index, key, key2)


def _by_key(x: Item, y: Item) -> bool:
    return x[1] < y[1]


def _oc(items: list[Item]) -> None:
    gosort.slice_sort(items, lambda x, y: x[1] > y[1])
    gosort.slice_stable(items, lambda x, y: x[2] > y[2])


MODES: dict[str, Callable[[list[Item]], None]] = {
    "slice": lambda items: gosort.slice_sort(items, _by_key),
    "stable": lambda items: gosort.slice_stable(items, _by_key),
    "oc": _oc,
}


def _inputs() -> list[list[tuple[int, int]]]:
    rng = random.Random(20260415)
    sizes = [*range(0, 60), 64, 100, 127, 128, 129, 255, 500, 1000, 2000, 4999, 5000]
    sizes += [rng.randrange(13, 5001) for _ in range(30)]
    cases: list[list[tuple[int, int]]] = []
    for n in sizes:
        distinct = rng.choice([1, 2, 3, 5, 10, n // 3 + 1, n + 1])  # many ties, few ties
        keys = [(rng.randrange(distinct), rng.randrange(4)) for _ in range(n)]
        cases.append(keys)
        # patterns pdqsort treats specially: sorted, reversed, sorted with a few swaps, all equal
        ordered = sorted(keys)
        cases.append(ordered)
        cases.append(ordered[::-1])
        if n > 2:
            nearly = list(ordered)
            for _ in range(3):
                i, j = rng.randrange(n), rng.randrange(n)
                nearly[i], nearly[j] = nearly[j], nearly[i]
            cases.append(nearly)
    return cases


@pytest.fixture(scope="module")
def go_sort(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return goprogram.build(GO_PROGRAM, tmp_path_factory.mktemp("gosort"))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_same_permutation_as_go(go_sort: Path, mode: str) -> None:
    cases = _inputs()
    lines = [" ".join([mode, *(f"{k} {k2}" for k, k2 in keys)]) for keys in cases]
    go_orders = goprogram.run_lines(go_sort, lines)
    unstable_seen = False
    for keys, go_order in zip(cases, go_orders, strict=True):
        items: list[Item] = [(i, k, k2) for i, (k, k2) in enumerate(keys)]
        MODES[mode](items)
        got = [i for i, _, _ in items]
        assert got == [int(x) for x in go_order.split()], f"{mode}, {len(keys)} elements: {keys[:40]}..."
        if mode == "slice" and got != [i for i, _, _ in sorted(items, key=lambda it: (it[1], it[0]))]:
            unstable_seen = True
    if mode == "slice":
        assert unstable_seen, "the inputs never showed sort.Slice's instability: they test nothing beyond stable"


def test_small_slices_are_stable() -> None:
    # up to 12 elements sort.Slice is an insertion sort: equal elements keep their order
    items: list[Item] = [(i, i % 2, 0) for i in range(12)]
    gosort.slice_sort(items, _by_key)
    assert [i for i, _, _ in items] == [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]


def test_large_slices_are_sorted_but_not_stable() -> None:
    items: list[Item] = [(i, i % 3, 0) for i in range(200)]
    gosort.slice_sort(items, _by_key)
    assert [k for _, k, _ in items] == sorted(k for _, k, _ in items)
    assert [i for i, _, _ in items] != sorted(range(200), key=lambda i: (i % 3, i))
