"""Pausing the cyclic garbage collector around a burst of allocation.

    with paused():
        ...  # build thousands of small objects

Without the pause, full collections rescan everything alive (informer caches, parsed documents,
the objects already built) again and again while the burst runs: at 5,000 nodes that was a third
of building the insights and about a fifth of a whole `upgrade-status` run. A bare pause leaves
a debt instead: every object allocated meanwhile counts towards the young generation, so the
first allocation after it runs one young collection over all of them, on memory no longer in
the CPU caches. What is built in such a burst holds no reference cycles and outlives it, so that
scan can find nothing: `gc.freeze()` followed by `gc.unfreeze()` moves every tracked object to the
oldest generation and resets the young count without scanning anything. That would also thaw
what a process froze on purpose (`start` freezes its start-up heap, see `cvo_py.runtime.process`), so
then the collector is only resumed. The collector's previous state is restored; pauses nest.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:  # the outermost pause hands everything over once
            # Read, then freeze: safe because nothing in the project freezes concurrently
            # (`start` freezes once before its controllers run, and runs no pause).
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
