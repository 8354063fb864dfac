"""Waiting for an outcome with a bound: the one polling loop of tests, benchmarks and the demo."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    check: Callable[[], T | None],
    timeout: float = 20.0,
    what: str = "condition",
    *,
    interval: float = 0.05,
    tolerate: tuple[type[Exception], ...] = (),
) -> T:
    """Poll `check` until it returns something truthy, and return that (never None).

    `timeout` is a liveness bound, not a timing: past it, fail naming `what` (and the last of the
    `tolerate`d errors `check` raised meanwhile, e.g. an object that does not exist yet)."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            result = check()
            if result:
                return result
        except tolerate as exc:
            last_error = exc
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what} not reached within {timeout:.0f}s" + (f" (last error: {last_error})" if last_error else "")
            )
        time.sleep(interval)
