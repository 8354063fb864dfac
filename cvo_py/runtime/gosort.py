"""Go's `sort.Slice` and `sort.SliceStable`, element for element.

oc orders what it prints with Go's sort package. `sort.Slice` is pattern-defeating quicksort
(pdqsort): deterministic, but not stable, so beyond 12 equal elements the order of equals is not
their input order. Printing what oc prints therefore takes Go's exact sequence of comparisons and
swaps, which this module reproduces (Go 1.19 and later; the algorithm has not changed since):

- `slice_sort(items, less)`: `sort.Slice` — pdqsort with insertion sort up to 12 elements, Tukey's
  ninther pivots, partial insertion sort for nearly sorted input, an equal-elements partition,
  pattern breaking with a xorshift generator seeded by the length, and heapsort after too many
  unbalanced partitions;
- `slice_stable(items, less)`: `sort.SliceStable` — insertion sort of blocks of 20, then SymMerge
  (Kim and Kutzner) with block rotations.

`less(x, y)` compares two elements (Go's `less(i, j)` on `items[i], items[j]`); both functions sort
the list in place. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence
from typing import TypeVar

T = TypeVar("T")
Less = Callable[[T, T], bool]

_MAX_INSERTION = 12
_SHORTEST_NINTHER = 50
_MAX_SWAPS = 4 * 3
_MASK64 = (1 << 64) - 1

_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


def slice_sort(items: MutableSequence[T], less: Less[T]) -> None:
    """Go's `sort.Slice(items, less)`: pdqsort, in place, not stable."""
    n = len(items)
    _pdqsort(items, less, 0, n, n.bit_length())


def slice_stable(items: MutableSequence[T], less: Less[T]) -> None:
    """Go's `sort.SliceStable(items, less)`: insertion sort of blocks of 20, then SymMerge."""
    n = len(items)
    block = 20
    a, b = 0, block
    while b <= n:
        _insertion_sort(items, less, a, b)
        a = b
        b += block
    _insertion_sort(items, less, a, n)
    while block < n:
        a, b = 0, 2 * block
        while b <= n:
            _sym_merge(items, less, a, a + block, b)
            a = b
            b += 2 * block
        m = a + block
        if m < n:
            _sym_merge(items, less, a, m, n)
        block *= 2


def _insertion_sort(d: MutableSequence[T], less: Less[T], a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and less(d[j], d[j - 1]):
            d[j], d[j - 1] = d[j - 1], d[j]
            j -= 1


def _sift_down(d: MutableSequence[T], less: Less[T], lo: int, hi: int, first: int) -> None:
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and less(d[first + child], d[first + child + 1]):
            child += 1
        if not less(d[first + root], d[first + child]):
            return
        d[first + root], d[first + child] = d[first + child], d[first + root]
        root = child


def _heap_sort(d: MutableSequence[T], less: Less[T], a: int, b: int) -> None:
    first, lo, hi = a, 0, b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(d, less, i, hi, first)
    for i in range(hi - 1, -1, -1):
        d[first], d[first + i] = d[first + i], d[first]
        _sift_down(d, less, lo, i, first)


def _pdqsort(d: MutableSequence[T], less: Less[T], a: int, b: int, limit: int) -> None:
    was_balanced = True
    was_partitioned = True
    while True:
        length = b - a
        if length <= _MAX_INSERTION:
            _insertion_sort(d, less, a, b)
            return
        if limit == 0:
            _heap_sort(d, less, a, b)
            return
        if not was_balanced:
            _break_patterns(d, a, b)
            limit -= 1
        pivot, hint = _choose_pivot(d, less, a, b)
        if hint == _DECREASING:
            _reverse_range(d, a, b)
            pivot = (b - 1) - (pivot - a)
            hint = _INCREASING
        if was_balanced and was_partitioned and hint == _INCREASING and _partial_insertion_sort(d, less, a, b):
            return
        if a > 0 and not less(d[a - 1], d[pivot]):
            a = _partition_equal(d, less, a, b, pivot)
            continue
        mid, was_partitioned = _partition(d, less, a, b, pivot)
        left_len, right_len = mid - a, b - mid
        balance_threshold = length // 8
        if left_len < right_len:
            was_balanced = left_len >= balance_threshold
            _pdqsort(d, less, a, mid, limit)
            a = mid + 1
        else:
            was_balanced = right_len >= balance_threshold
            _pdqsort(d, less, mid + 1, b, limit)
            b = mid


def _partition(d: MutableSequence[T], less: Less[T], a: int, b: int, pivot: int) -> tuple[int, bool]:
    d[a], d[pivot] = d[pivot], d[a]
    i, j = a + 1, b - 1
    while i <= j and less(d[i], d[a]):
        i += 1
    while i <= j and not less(d[j], d[a]):
        j -= 1
    if i > j:
        d[j], d[a] = d[a], d[j]
        return j, True
    d[i], d[j] = d[j], d[i]
    i += 1
    j -= 1
    while True:
        while i <= j and less(d[i], d[a]):
            i += 1
        while i <= j and not less(d[j], d[a]):
            j -= 1
        if i > j:
            break
        d[i], d[j] = d[j], d[i]
        i += 1
        j -= 1
    d[j], d[a] = d[a], d[j]
    return j, False


def _partition_equal(d: MutableSequence[T], less: Less[T], a: int, b: int, pivot: int) -> int:
    d[a], d[pivot] = d[pivot], d[a]
    i, j = a + 1, b - 1
    while True:
        while i <= j and not less(d[a], d[i]):
            i += 1
        while i <= j and less(d[a], d[j]):
            j -= 1
        if i > j:
            return i
        d[i], d[j] = d[j], d[i]
        i += 1
        j -= 1


def _partial_insertion_sort(d: MutableSequence[T], less: Less[T], a: int, b: int) -> bool:
    max_steps, shortest_shifting = 5, 50
    i = a + 1
    for _ in range(max_steps):
        while i < b and not less(d[i], d[i - 1]):
            i += 1
        if i == b:
            return True
        if b - a < shortest_shifting:
            return False
        d[i], d[i - 1] = d[i - 1], d[i]
        if i - a >= 2:  # shift the smaller one to the left
            j = i - 1
            while j >= 1:
                if not less(d[j], d[j - 1]):
                    break
                d[j], d[j - 1] = d[j - 1], d[j]
                j -= 1
        if b - i >= 2:  # shift the greater one to the right
            j = i + 1
            while j < b:
                if not less(d[j], d[j - 1]):
                    break
                d[j], d[j - 1] = d[j - 1], d[j]
                j += 1
    return False


def _break_patterns(d: MutableSequence[T], a: int, b: int) -> None:
    length = b - a
    if length < 8:
        return
    random = length  # Go's xorshift(length): a uint64 state seeded with the length
    modulus = 1 << length.bit_length()  # nextPowerOfTwo
    idx = a + (length // 4) * 2 - 1
    while idx <= a + (length // 4) * 2 + 1:
        random ^= (random << 13) & _MASK64
        random ^= random >> 7
        random ^= (random << 17) & _MASK64
        other = random & (modulus - 1)
        if other >= length:
            other -= length
        d[idx], d[a + other] = d[a + other], d[idx]
        idx += 1


def _choose_pivot(d: MutableSequence[T], less: Less[T], a: int, b: int) -> tuple[int, int]:
    length = b - a
    swaps = [0]
    i = a + length // 4 * 1
    j = a + length // 4 * 2
    k = a + length // 4 * 3
    if length >= 8:
        if length >= _SHORTEST_NINTHER:
            i = _median(d, less, i - 1, i, i + 1, swaps)
            j = _median(d, less, j - 1, j, j + 1, swaps)
            k = _median(d, less, k - 1, k, k + 1, swaps)
        j = _median(d, less, i, j, k, swaps)
    if swaps[0] == 0:
        return j, _INCREASING
    if swaps[0] == _MAX_SWAPS:
        return j, _DECREASING
    return j, _UNKNOWN


def _median(d: MutableSequence[T], less: Less[T], a: int, b: int, c: int, swaps: list[int]) -> int:
    """The index of the median of d[a], d[b], d[c] (Go's median_func with its order2 swap count)."""
    if less(d[b], d[a]):
        swaps[0] += 1
        a, b = b, a
    if less(d[c], d[b]):
        swaps[0] += 1
        b, c = c, b
    if less(d[b], d[a]):
        swaps[0] += 1
        a, b = b, a
    return b


def _reverse_range(d: MutableSequence[T], a: int, b: int) -> None:
    i, j = a, b - 1
    while i < j:
        d[i], d[j] = d[j], d[i]
        i += 1
        j -= 1


def _swap_range(d: MutableSequence[T], a: int, b: int, n: int) -> None:
    for i in range(n):
        d[a + i], d[b + i] = d[b + i], d[a + i]


def _sym_merge(d: MutableSequence[T], less: Less[T], a: int, m: int, b: int) -> None:
    if m - a == 1:
        # binary search for the lowest i in [m, b) with d[i] >= d[a], then move d[a] before it
        i, j = m, b
        while i < j:
            h = (i + j) >> 1
            if less(d[h], d[a]):
                i = h + 1
            else:
                j = h
        for k in range(a, i - 1):
            d[k], d[k + 1] = d[k + 1], d[k]
        return
    if b - m == 1:
        # binary search for the lowest i in [a, m) with d[i] > d[m], then move d[m] there
        i, j = a, m
        while i < j:
            h = (i + j) >> 1
            if not less(d[m], d[h]):
                i = h + 1
            else:
                j = h
        for k in range(m, i, -1):
            d[k], d[k - 1] = d[k - 1], d[k]
        return
    mid = (a + b) >> 1
    n = mid + m
    if m > mid:
        start, r = n - b, mid
    else:
        start, r = a, m
    p = n - 1
    while start < r:
        c = (start + r) >> 1
        if not less(d[p - c], d[c]):
            start = c + 1
        else:
            r = c
    end = n - start
    if start < m < end:
        _rotate(d, start, m, end)
    if a < start < mid:
        _sym_merge(d, less, a, start, mid)
    if mid < end < b:
        _sym_merge(d, less, mid, end, b)


def _rotate(d: MutableSequence[T], a: int, m: int, b: int) -> None:
    i, j = m - a, b - m
    while i != j:
        if i > j:
            _swap_range(d, m - i, m, j)
            i -= j
        else:
            _swap_range(d, m - i, m + j - i, i)
            j -= i
    _swap_range(d, m - i, m, i)
