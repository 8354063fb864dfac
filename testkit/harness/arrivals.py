"""Watch events as they arrive, with their arrival time: how the end-to-end tier measures how
long after the kubelet's status write (the Pod event's arrival) the ClusterVersion says so."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import JSON, KubeClient, Resource


@dataclass(frozen=True)
class Arrival:
    at: float  # time.monotonic() when the event reached this process
    type: str  # ADDED, MODIFIED, DELETED
    object: JSON


class Arrivals:
    """Every event of one informer, in order of arrival; `wait_for` finds the first that matches."""

    def __init__(
        self, kube: KubeClient, resource: Resource, *, namespace: str | None = None, label_selector: str = ""
    ) -> None:
        self.events: list[Arrival] = []
        self._changed = threading.Condition()
        self.informer = Informer(kube, resource, namespace=namespace, label_selector=label_selector or None)
        self.informer.add_handler(self._record)

    def _record(self, event_type: str, obj: JSON, _old: JSON | None) -> None:
        with self._changed:
            self.events.append(Arrival(time.monotonic(), event_type, obj))
            self._changed.notify_all()

    def __enter__(self) -> Arrivals:
        self.informer.start()
        if not self.informer.wait_for_sync(30):
            self.informer.stop()
            raise TimeoutError(f"could not list {self.informer} within 30s")
        return self

    def __exit__(self, *_exc: object) -> None:
        self.informer.stop()

    def mark(self) -> int:
        """A position: `wait_for(..., after=mark)` looks only at events that arrive later."""
        with self._changed:
            return len(self.events)

    def wait_for(self, what: str, matches: Callable[[Arrival], bool], timeout: float, after: int = 0) -> Arrival:
        deadline = time.monotonic() + timeout
        checked = after
        with self._changed:
            while True:
                for arrival in self.events[checked:]:
                    if matches(arrival):
                        return arrival
                checked = len(self.events)
                left = deadline - time.monotonic()
                if left <= 0:
                    last = self.events[-1].object if self.events else None
                    raise AssertionError(f"no event within {timeout:.0f}s: {what}; last object seen: {last}")
                self._changed.wait(left)
