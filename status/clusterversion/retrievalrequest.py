"""What the ClusterVersion asks payload retrieval for, as one status sync sees the cluster: the
target spec.desiredUpdate names (when it is not the current one), whether it is forced, and the
precondition checks bound to that sync's view, so the retrieval coordinator runs them on its own
thread without reading the status loop's state."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cvo_py.runtime import klog
from payload.acceptance import PreconditionOutcome
from payload.coordinator import RetrievalRequest
from payload.release import Release
from status.clusterversion import desired, preconditions, upgradeable
from status.clusterversion.conditions import RETRIEVED_UPDATES, find_condition
from status.clusterversion.desired import StatusInputs
from status.clusterversion.spec import InvalidSpec, pending_update, requested_update


@dataclass(frozen=True)
class ClusterChecks:
    """The precondition checks of a target on the ClusterVersion and ClusterOperators one sync saw.
    `inputs` gives the running release and the admin-ack ConfigMaps."""

    cv: Mapping[str, Any]
    operators: Sequence[Mapping[str, Any]]
    inputs: StatusInputs

    def __call__(self, target: Release, force: bool) -> PreconditionOutcome:
        view = desired.precondition_view(self.cv, self.operators, self.inputs)
        outcome = preconditions.summarize(preconditions.run(view, target.version), force)
        klog.v(2).info(
            "Precondition checks of %s: %s",
            target.label(),
            "blocked" if outcome.blocked else outcome.message or "passed",
        )
        return outcome


def checks_inputs(cv: Mapping[str, Any]) -> str:
    """What the precondition checks read from the written ClusterVersion (Upgradeable, the
    updates, the current target, the channel), as one text: a refused target is checked again when
    it changes, rather than after the retry delay."""
    status = cv.get("status") or {}
    conditions = status.get("conditions") or []
    seen = (
        find_condition(conditions, upgradeable.UPGRADEABLE),
        find_condition(conditions, RETRIEVED_UPDATES),
        [status.get(k) for k in ("desired", "availableUpdates", "conditionalUpdates")],
        (cv.get("spec") or {}).get("channel"),
        (status.get("history") or [{}])[0],
    )
    return json.dumps(seen, sort_keys=True)


def retrieval_request(
    cv: Mapping[str, Any],
    seen: Mapping[str, Any],
    operators: Sequence[Mapping[str, Any]],
    inputs: StatusInputs,
    applied: Release | None = None,
) -> RetrievalRequest | None:
    """What `cv`'s spec asks payload retrieval for (None: nothing, the current release). `seen` is
    the ClusterVersion the checks read (the newest known: the cache may not have our last write
    yet); `inputs` what status is computed from (the running release, the accept-risks gate, the
    admin-ack ConfigMaps the checks read). `applied` is the release the sync worker applies (the
    running one before it is given any): a requested release that is already the current one
    but not what the worker applies (a restarted operator resuming an update to another release)
    is retrieved too."""
    pending = pending_update(cv, inputs.running, inputs.accept_risks)
    if pending is None and applied is not None:
        pending = _resumed_update(cv, inputs, applied)
    if pending is None:
        return None
    target, force = pending
    checks = ClusterChecks(seen, operators, inputs)
    return RetrievalRequest(target, force, checks=checks, checks_inputs=functools.partial(checks_inputs, seen))


def _resumed_update(cv: Mapping[str, Any], inputs: StatusInputs, applied: Release) -> tuple[Release, bool] | None:
    """The (release, force) spec.desiredUpdate asks for when neither the sync worker nor this
    process runs it, although status already names it as current."""
    try:
        requested = requested_update(cv, inputs.accept_risks)
    except InvalidSpec:
        return None
    if requested is None or requested.same_as(applied) or requested.same_as(inputs.running):
        return None
    update = (cv.get("spec") or {}).get("desiredUpdate") or {}
    return requested, bool(update.get("force"))
