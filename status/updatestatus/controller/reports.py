"""What the Update Status Controller logs once per change rather than once per sync: a key of its
own that holds what it cannot read (overwritten), an object it cannot assess (a health insight is
published in its place), a layout it cannot fit, insights past the API server's size limit, and
whether the API's main ConfigMap exists (the opt-in). The gauges read the last of them
(`status.updatestatus.controller.metrics`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from status.updatestatus.api.sharding import data_size

log = logging.getLogger("status.updatestatus.controller.sync")


class Reports:
    def __init__(self, namespace: str, configmap: str, size_limit: int, unassessable_prefix: str) -> None:
        self.namespace = namespace
        self.configmap = configmap
        self.size_limit = size_limit
        self.unassessable_prefix = unassessable_prefix
        self.configmap_exists: bool | None = None
        self.omitted: tuple[str, ...] = ()
        self.problems: tuple[str, ...] = ()
        self._faults: set[str] = set()
        self._unreadable: dict[str, str] = {}  # key of ours → the value last reported unreadable

    def unreadable(self, key: str, value: object, exc: Exception) -> None:
        """Log, once per value, that a key of ours holds what cannot be read (it is overwritten)."""
        if self._unreadable.get(key) != str(value):
            self._unreadable[key] = str(value)
            log.warning(
                "Overwriting ConfigMap %s/%s key %s, which cannot be read: %s", self.namespace, self.configmap, key, exc
            )

    def opt_in(self, exists: bool) -> bool:
        """Whether the main ConfigMap exists now; True when that changed (logged)."""
        if exists == self.configmap_exists:
            return False
        self.configmap_exists = exists
        if exists:
            log.info("ConfigMap %s/%s exists: publishing update status insights", self.namespace, self.configmap)
        else:
            log.info(
                "ConfigMap %s/%s does not exist: nothing to publish until an administrator creates it",
                self.namespace,
                self.configmap,
            )
        return True

    def faults(self, data: Mapping[str, str]) -> None:
        """Log each object that newly cannot be assessed (its health insight is published instead)."""
        faults = {k for k in data if k.startswith(self.unassessable_prefix)}
        for key in sorted(faults - self._faults):
            log.warning("An object cannot be assessed; publishing health insight %s in its place", key)
        self._faults = faults

    def layout_problems(self, problems: tuple[str, ...]) -> None:
        if problems != self.problems:
            for problem in problems:
                log.error("%s", problem)
        self.problems = problems

    def left_out(self, omitted: tuple[str, ...], data: Mapping[str, str]) -> None:
        if omitted != self.omitted:
            if omitted:
                log.error(
                    "The ConfigMap API in %s would exceed the API server's limit of %d bytes per ConfigMap "
                    "(%d bytes of insights in total): %d insights not published (first: %s)",
                    self.namespace,
                    self.size_limit,
                    data_size(data),
                    len(omitted),
                    ", ".join(omitted[:5]),
                )
            else:
                log.info("The ConfigMap API in %s fits again: all insights published", self.namespace)
        self.omitted = omitted
