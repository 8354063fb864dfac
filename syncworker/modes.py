"""The sync worker's three modes, named as upstream names them in its logs and conditions."""

from __future__ import annotations

from enum import Enum


class Mode(Enum):
    """How a pass runs: the task graph, its parallelism, its retries and which checks apply."""

    INITIALIZING = "Initializing"  # no Completed history entry: the install itself
    UPDATING = "Updating"  # a new release (or new work) is being applied
    RECONCILING = "Reconciling"  # the release is complete: keep the cluster at it
