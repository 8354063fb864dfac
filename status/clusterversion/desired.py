"""The whole ClusterVersion status cvo-py wants, from what it observes (pure).

`desired_status(cv, cluster_operators, inputs, now)` returns a complete `status` dict: the
fields cvo-py owns are recomputed, every other field (availableUpdates, conditionalUpdates,
conditions other controllers set, ...) is carried over from `cv` unchanged, so re-running it on a
freshly read object after a conflict never drops what others wrote.

Progress comes from the sync worker that applies the payload (`inputs.worker`: its latest pass
report, `status.clusterversion.progress`): `status.desired` is the release it applies (from its
first report), history turns `Completed` with a pass that completed, `Progressing` counts its
manifests and `Failing` says what its last pass failed on. A requested release is named by
`ReleaseAccepted` alone until its payload is accepted; `Upgradeable` comes from
`status.clusterversion.upgradeable`, `Invalid` from `status.clusterversion.validation`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cvo_py.runtime.jsondata import copy_json
from payload.acceptance import is_about, load_failed, payload_loaded
from payload.acceptance import retrieving as payload_retrieving
from payload.release import Acceptance, Release
from status.clusterversion import capabilities, progress, upgradeable
from status.clusterversion.availableupdates import retrieved_updates, with_available_updates
from status.clusterversion.conditions import (
    AVAILABLE,
    FAILING,
    IMPLICITLY_ENABLED,
    INVALID,
    JSON,
    PROGRESSING,
    RELEASE_ACCEPTED,
    RETRIEVED_UPDATES,
    Verdict,
    find_condition,
    remove_condition,
    set_condition,
)
from status.clusterversion.history import merge_history
from status.clusterversion.spec import InvalidSpec, current_release, requested_update
from syncworker.passes import Report


@dataclass(frozen=True)
class StatusInputs:
    running: Release  # the release cvo-py runs as (--release-image); seeds status.desired
    acceptance: Acceptance | None = None
    always_enabled: tuple[str, ...] = ()
    # Enabled names the status cannot carry (the CRD rejected them): still enabled, never dropped.
    prior_enabled: tuple[str, ...] = ()
    # What the available-updates poller found for this spec's upstream and channel
    # (updateservice.poller.updates_status); None leaves those fields as they are.
    updates: Mapping[str, Any] | None = None
    # The ClusterUpdateAcceptRisks feature gate: spec.desiredUpdate.acceptRisks is allowed.
    accept_risks: bool = False
    # The ImageStreamImportMode feature gate: status.desired.architecture says Multi for a
    # multi-architecture payload (blank without the gate, as upstream).
    release_architecture: bool = False
    # Every feature gate enabled for the running version (some make capabilities known).
    enabled_gates: frozenset[str] = frozenset()
    # The admin-ack ConfigMaps as read (None: the admin-ack source of Upgradeable is not consulted).
    admin_gates: upgradeable.ConfigMapRead | None = None
    admin_acks: upgradeable.ConfigMapRead | None = None
    # What the sync worker reported (None: no worker, as before its first report).
    worker: progress.WorkerState | None = None


def desired_status(
    cv: Mapping[str, Any],
    cluster_operators: Sequence[Mapping[str, Any]],
    inputs: StatusInputs,
    now: datetime,
) -> JSON:
    """The ClusterVersion status cvo-py wants given what it sees (pure; `cv` is not modified).

    Each field and condition comes from its own helper below; this only composes them, in
    upstream's order (conditions new to the status are appended in that order)."""
    if not isinstance(cv, Mapping) or not isinstance(cv.get("metadata"), dict):
        raise ValueError("cv must be a ClusterVersion object with metadata")
    status: JSON = copy_json(dict(cv.get("status") or {}))
    conditions: list[JSON] = [dict(c) for c in status.get("conditions") or [] if isinstance(c, dict)]

    aim = target(cv, inputs)
    worker = inputs.worker or progress.WorkerState()
    report = worker.report
    history = merge_history(
        status.get("history"), aim.desired, aim.verified, now, completed(report, aim.desired), aim.accepted_risks
    )
    status["history"] = history
    if aim.desired.image:
        shown = aim.desired if inputs.release_architecture else dataclasses.replace(aim.desired, architecture="")
        status["desired"] = shown.to_status()
    # Of the worker's latest report: a spec change that is no new work shows at its next pass.
    generation = report.generation if report is not None else (cv.get("metadata") or {}).get("generation")
    status["observedGeneration"] = int(generation or 0)
    if report is not None:
        status["versionHash"] = report.version_hash
    status.setdefault("versionHash", "")
    status.setdefault("availableUpdates", None)
    caps = capabilities_status(cv, inputs, aim.desired)
    status["capabilities"] = {"enabledCapabilities": list(caps.enabled), "knownCapabilities": list(caps.known)}

    _put(conditions, AVAILABLE, available(history, find_condition(conditions, AVAILABLE)), now)
    moving = _put_failing_and_progressing(conditions, aim, worker, history, now)
    verdict = invalid(aim.invalid)
    if verdict is None:
        remove_condition(conditions, INVALID)
    else:
        _put(conditions, INVALID, verdict, now)
    existing = find_condition(conditions, RELEASE_ACCEPTED)
    _put(conditions, RELEASE_ACCEPTED, release_accepted(aim, existing, worker.refused), now)
    _put(conditions, IMPLICITLY_ENABLED, implicitly_enabled(caps), now)
    remove_condition(conditions, "ImplicitlyEnabled")  # stale type from OCPBUGS-56114
    sources = upgradeable_sources(cv, cluster_operators, inputs, updating=moving.status == "True")
    _put_upgradeable(conditions, sources, now)
    status = with_available_updates(status, inputs.updates, release_architecture=inputs.release_architecture)
    existing = find_condition(conditions, RETRIEVED_UPDATES)
    _put(conditions, RETRIEVED_UPDATES, retrieved_updates(inputs.updates, existing), now)

    status["conditions"] = conditions
    return status


def _put_failing_and_progressing(
    conditions: list[JSON],
    aim: Target,
    worker: progress.WorkerState,
    history: Sequence[Mapping[str, Any]],
    now: datetime,
) -> Verdict:
    """Failing and Progressing from the worker's latest report; what Progressing says now."""
    report = worker.report
    settled = reconciling(report, history, aim.desired)
    if report is None:
        # Nothing reported yet (the worker starts within a moment): what was said stays.
        decision = progress.Decision(progress.NOT_FAILING, True)
        if find_condition(conditions, FAILING) is None:
            _put(conditions, FAILING, Verdict(*decision.failing), now)
    else:
        decision = progress.judge(report, worker.since, now)
        _put(conditions, FAILING, Verdict(*decision.failing), now)
    moving = progressing(aim, settled, report, decision)
    if report is not None or aim.invalid is not None or find_condition(conditions, PROGRESSING) is None:
        _put(conditions, PROGRESSING, moving, now)
        return moving
    return Verdict(str((find_condition(conditions, PROGRESSING) or {}).get("status") or ""))


def _put_upgradeable(conditions: list[JSON], sources: upgradeable.Sources, now: datetime) -> None:
    """Upgradeable from its sources' risks (none: no condition); upstream's older types removed."""
    blocked = upgradeable.condition(upgradeable.risks(sources))
    if blocked is None:
        remove_condition(conditions, upgradeable.UPGRADEABLE)
    else:
        _put(conditions, upgradeable.UPGRADEABLE, Verdict(blocked.status, blocked.reason, blocked.message), now)
    for legacy in upgradeable.LEGACY_CONDITIONS:
        remove_condition(conditions, legacy)


def _put(conditions: list[JSON], type_: str, verdict: Verdict | None, now: datetime) -> None:
    """Set `type_` to `verdict`; None leaves the condition as it is."""
    if verdict is not None:
        set_condition(conditions, type_, verdict.status, verdict.reason, verdict.message, now)


@dataclass(frozen=True)
class Target:
    """What the spec asks for, and the release status.desired names."""

    current: Release  # status.desired before this sync (the running release before the first)
    requested: Release | None  # spec.desiredUpdate; None when absent or invalid
    invalid: str | None  # the Invalid condition's message while the spec is invalid
    acceptance: Acceptance | None  # retrieval's verdict about `requested`, else None
    desired: Release
    verified: bool
    pending: bool  # `requested` is not the desired release yet (retrieval under way or failed)
    # The desired release's acceptedRisks, from its acceptance (None: no acceptance to tell, keep
    # what history says; upstream also blanks it while a retarget is refused, cvo-py keeps it).
    accepted_risks: str | None = None


def target(cv: Mapping[str, Any], inputs: StatusInputs) -> Target:
    """The desired release: the one the sync worker applies, from its first report; before that,
    the requested one once retrieval accepted it, else the current one."""
    current = current_release(cv, inputs.running)
    invalid_spec: str | None = None
    try:
        requested = requested_update(cv, inputs.accept_risks)
    except InvalidSpec as exc:
        requested, invalid_spec = None, str(exc)
    acceptance = inputs.acceptance
    if acceptance is not None and (requested is None or not acceptance.target.same_as(requested)):
        acceptance = None  # about a target the spec no longer asks for
    pending = requested is not None and not requested.same_as(current)
    desired, verified = current, False
    accepted = acceptance is not None and acceptance.state.status == "True"
    if acceptance is not None and accepted and not acceptance.target.same_as(current):
        desired, verified, pending = acceptance.target, acceptance.verified, False
    report = inputs.worker.report if inputs.worker is not None else None
    if report is not None and report.release.image:
        desired = report.release
        verified = acceptance is not None and accepted and acceptance.target.same_as(desired) and acceptance.verified
        pending = requested is not None and not requested.same_as(desired)
    risks = None
    if acceptance is not None and accepted and acceptance.target.same_as(desired):
        risks = None if acceptance.local else acceptance.accepted_risks
        if risks is not None and inputs.accept_risks:
            updates = inputs.updates if inputs.updates is not None else cv.get("status") or {}
            names = accepted_exposure(desired.image, updates.get("conditionalUpdates") or ())
            risks = with_accepted_exposure(risks, acceptance.warned, desired.image, names)
    return Target(current, requested, invalid_spec, acceptance, desired, verified, pending, risks)


def accepted_exposure(image: str, conditional: Sequence[Mapping[str, Any]]) -> list[str]:
    """The risk names of the conditional update to `image` when it is recommended only because the
    admin accepted every risk it is exposed to (`Recommended=True/AllExposedRisksAccepted`)."""
    for update in conditional:
        if (update.get("release") or {}).get("image") != image:
            continue
        for condition in update.get("conditions") or ():
            if condition.get("type") == "Recommended" and (condition.get("status"), condition.get("reason")) == (
                "True",
                "AllExposedRisksAccepted",
            ):
                names = update.get("riskNames") or [r.get("name", "") for r in update.get("risks") or ()]
                return sorted({str(n) for n in names})
    return []


def with_accepted_exposure(accepted_risks: str, warned: bool, image: str, names: Sequence[str]) -> str:
    """acceptedRisks with its third part (the ClusterUpdateAcceptRisks gate): the accepted risks the
    target is exposed to, appended to the precondition warning when there is one, else a line."""
    if not names:
        return accepted_risks
    exposure = f"the risks [{','.join(names)}] which were all explicitly accepted by the cluster administrator."
    if warned:
        return f"{accepted_risks}; It is exposed to {exposure}"
    line = f"The target release {image} is exposed to {exposure}"
    return f"{accepted_risks}\n{line}" if accepted_risks else line


def upgradeable_sources(
    cv: Mapping[str, Any], cluster_operators: Sequence[Mapping[str, Any]], inputs: StatusInputs, updating: bool
) -> upgradeable.Sources:
    """What the Upgradeable condition is computed from; `updating`: Progressing is True."""
    overrides = (cv.get("spec") or {}).get("overrides")
    return upgradeable.Sources(
        version=inputs.running.version or current_release(cv, inputs.running).version,
        updating=updating,
        overrides=[o for o in overrides if isinstance(o, Mapping)] if isinstance(overrides, list) else [],
        cluster_operators=cluster_operators,
        admin_gates=inputs.admin_gates,
        admin_acks=inputs.admin_acks,
        deletions=inputs.worker.pending_deletions if inputs.worker is not None else (),
    )


def upgradeable_risks(
    cv: Mapping[str, Any], cluster_operators: Sequence[Mapping[str, Any]], inputs: StatusInputs
) -> list[upgradeable.Risk]:
    """The risks behind the Upgradeable condition of `cv` as written (its Progressing says
    whether it is updating)."""
    moving = find_condition((cv.get("status") or {}).get("conditions") or [], PROGRESSING) or {}
    sources = upgradeable_sources(cv, cluster_operators, inputs, updating=moving.get("status") == "True")
    return upgradeable.risks(sources)


def precondition_view(
    cv: Mapping[str, Any], cluster_operators: Sequence[Mapping[str, Any]], inputs: StatusInputs
) -> JSON:
    """The ClusterVersion the precondition checks read: `cv`, with Upgradeable as its sources say
    now (upstream reads the condition last written; recomputing it spares a check the lag)."""
    view: JSON = copy_json(dict(cv))
    if not isinstance(view.get("status"), dict):
        view["status"] = {}
    status = view["status"]
    conditions: list[JSON] = [dict(c) for c in status.get("conditions") or [] if isinstance(c, dict)]
    moving = find_condition(conditions, PROGRESSING)
    sources = upgradeable_sources(cv, cluster_operators, inputs, updating=(moving or {}).get("status") == "True")
    remove_condition(conditions, upgradeable.UPGRADEABLE)
    blocked = upgradeable.condition(upgradeable.risks(sources))
    if blocked is not None:
        found = {"type": upgradeable.UPGRADEABLE, "status": blocked.status}
        conditions.append({**found, "reason": blocked.reason, "message": blocked.message})
    status["conditions"] = conditions
    return view


def capabilities_status(cv: Mapping[str, Any], inputs: StatusInputs, desired: Release) -> capabilities.CapabilityStatus:
    """status.capabilities: what spec enables, never disabling what status or the writer had enabled."""
    status = cv.get("status") or {}
    return capabilities.compute(
        (cv.get("spec") or {}).get("capabilities"),
        inputs.running.version or desired.version,
        prior_enabled=[
            *((status.get("capabilities") or {}).get("enabledCapabilities") or []),
            *inputs.prior_enabled,
        ],
        always_enabled=inputs.always_enabled,
        enabled_gates=inputs.enabled_gates,
    )


def available(history: Sequence[Mapping[str, Any]], existing: Mapping[str, Any] | None) -> Verdict | None:
    """Available: once anything completed, the newest completed release is what the cluster runs;
    before that, False when there is no such condition yet (None: keep the existing one)."""
    last_completed = next((h for h in history if h.get("state") == "Completed"), None)
    if last_completed is not None:
        done = last_completed.get("version") or last_completed.get("image")
        return Verdict("True", "", f"Done applying {done}")
    return Verdict("False") if existing is None else None


def completed(report: Report | None, desired: Release) -> bool:
    """Whether the worker completed a pass of the desired release (its history entry turns
    Completed; once Completed it stays so)."""
    return (
        report is not None
        and report.release.same_as(desired)
        and (report.completed or report.completed_passes > 0)
    )


def reconciling(report: Report | None, history: Sequence[Mapping[str, Any]], desired: Release) -> bool:
    """Whether the desired release is applied and is being kept so: the worker reconciles it, or
    its last pass completed; before any report, the newest history entry is its Completed one."""
    if report is not None:
        return report.reconciling or report.completed
    head = history[0] if history else {}
    return head.get("state") == "Completed" and Release.from_dict(head).same_as(desired)


def progressing(aim: Target, settled: bool, report: Report | None, decision: progress.Decision) -> Verdict:
    """Progressing about the desired release only: a requested release is named by ReleaseAccepted
    alone until its payload is accepted, as upstream (4.23+ and before). `settled`: reconciling."""
    label = aim.desired.label()
    if not decision.working:
        if settled:
            return Verdict("False", decision.progress_reason, f"Error while reconciling {label}: {decision.tail}")
        return Verdict("True", decision.progress_reason, f"Unable to apply {label}: {decision.tail}")
    if settled:
        if aim.invalid is not None:
            return Verdict("False", "InvalidClusterVersion", f"Stopped at {label}: the cluster version is invalid")
        return Verdict("False", "", f"Cluster version is {label}")
    if aim.invalid is not None:
        return Verdict("True", "InvalidClusterVersion", f"Reconciling {label}: the cluster version is invalid")
    message = f"Working towards {label}"
    done = report.done if report is not None and report.total > 0 else 0
    if done > 0 and report is not None:
        message += f": {done} of {report.total} done ({done * 100 // report.total}% complete)"
    if decision.tail:
        message += (", " if done > 0 else ": ") + decision.tail
    return Verdict("True", decision.progress_reason, message)


def invalid(message: str | None) -> Verdict | None:
    """Invalid while the spec is invalid (`message`); None: no such condition."""
    if message is None:
        return None
    return Verdict("True", "InvalidClusterVersion", message)


def release_accepted(aim: Target, existing: Mapping[str, Any] | None, refused: str = "") -> Verdict | None:
    """ReleaseAccepted: retrieval's verdict on the requested release; `refused`, why the running
    release's own payload could not be loaded (nothing is applied); None keeps the existing one."""
    if aim.acceptance is not None:
        state = aim.acceptance.state
        return Verdict(state.status, state.reason, state.message)
    pending = aim.requested if aim.pending else None
    if pending is not None:
        # Retrieval of the new target has not reported yet: say it is being retrieved, never leave
        # a state about an earlier target beside a Progressing that names this one. A failure of
        # this same target (e.g. found by the operator's previous run) stays until the next
        # attempt ends, as within a run: the admin keeps seeing why.
        if (
            existing is not None
            and existing.get("status") == "False"
            and is_about(str(existing.get("message") or ""), pending.version, pending.image)
        ):
            return None
        retrieving = payload_retrieving(pending.version, pending.image)
        return Verdict(retrieving.status, retrieving.reason, retrieving.message)
    if refused:
        state = load_failed(aim.desired.version, aim.desired.image, refused)
        return Verdict(state.status, state.reason, state.message)
    loaded = payload_loaded(aim.desired.version, aim.desired.image)
    if (
        existing is None
        or existing.get("status") != "True"
        or not str(existing.get("message") or "").startswith(loaded.message)
    ):
        # Nothing pending: the accepted payload is the desired one (upstream's reset message),
        # also when the condition still names another release (e.g. written by an earlier run).
        return Verdict(loaded.status, loaded.reason, loaded.message)
    return None


def implicitly_enabled(caps: capabilities.CapabilityStatus) -> Verdict:
    if caps.implicitly_enabled:
        return Verdict(
            "True",
            "CapabilitiesImplicitlyEnabled",
            "The following capabilities could not be disabled: " + ", ".join(caps.implicitly_enabled),
        )
    return Verdict("False", "AsExpected", "Capabilities match configured spec")
