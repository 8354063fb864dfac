"""What the ClusterVersion status loop hands the sync worker after each status write (pure).

The worker applies one payload at a time (`syncworker.passes.Work`). Which one, as upstream's
operator decides it at each sync (`../shared/reference/sync-worker-facts.md` §1, §3):

- the release `spec.desiredUpdate` asks for, once retrieval accepted it with its payload loaded
  (`Acceptance.payload`);
- the running release's own payload (`PAYLOAD_OVERRIDE`, else `/`) when the spec asks for nothing
  or for the running release;
- while a requested release is being retrieved, the worker keeps what it applies; it starts with
  nothing only when it has not yet been given work and the spec names another release: it then
  waits for that release's payload (a restarted operator resumes the update it was applying
  rather than applying its own, older payload over it);
- while the install has not completed (no `Completed` history entry), a newly requested release is
  ignored, as upstream: `Ignoring detected version change from <a> to <b> during payload
  initialization`.

The work carries the apply-time selection: the load-time one (profile, excluded identifier,
feature set and gates) with the capabilities status computes and `spec.overrides`; the
ClusterVersion's generation and UID; `force`. A new payload that would skip a resource the one
applied so far applies, because the resource moved into capabilities that are not enabled,
implicitly enables them, as upstream (`syncworker.select.implicitly_enabled`): they are enabled
in the work at once and in status from then on. The worker itself decides whether that is new work
(`syncworker.passes.new_work`). The first work's mode comes from history (`starting_mode`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from payload.release import Acceptance, Release
from status.clusterversion import validation
from syncworker.load import Payload
from syncworker.modes import Mode
from syncworker.passes import Work, starting_mode
from syncworker.select import Selection, implicitly_enabled


@dataclass(frozen=True)
class Handover:
    """What to hand the worker: its work and the first pass's mode (None: nothing now), and what
    to log about it ("" for nothing)."""

    work: Work | None
    mode: Mode = Mode.UPDATING
    note: str = ""
    # Capabilities the new payload implicitly enables (already in the work's selection).
    implicit: frozenset[str] = frozenset()


def requested(cv: Mapping[str, Any], accept_risks: bool) -> tuple[Release | None, bool]:
    """spec.desiredUpdate as a release (None when it asks for none or is invalid), and `force`."""
    if validation.validate(cv, accept_risks):
        return None, False
    update = (cv.get("spec") or {}).get("desiredUpdate") or {}
    return validation.requested(cv), bool(isinstance(update, Mapping) and update.get("force"))


def initializing(cv: Mapping[str, Any]) -> bool:
    """No history entry Completed: the install has not completed."""
    history = (cv.get("status") or {}).get("history") or []
    return not any(isinstance(e, Mapping) and e.get("state") == "Completed" for e in history)


def handover(
    cv: Mapping[str, Any],
    *,
    running: Release,
    local: Payload | None,
    acceptance: Acceptance | None,
    applying: Payload | None,
    selection: Selection,
    accept_risks: bool = False,
) -> Handover:
    """The work for the worker after a sync of `cv` (the module docstring): `local` is the running
    release's payload (None when it could not be loaded: nothing is applied), `applying` what the
    worker applies now (None before its first work), `selection` the apply-time selection."""
    target, force = requested(cv, accept_risks)
    payload: Payload | None = applying
    note = ""
    wants_other = target is not None and not target.same_as(running)
    accepted = acceptance.payload if acceptance is not None and acceptance.state.status == "True" else None
    if wants_other and target is not None and isinstance(accepted, Payload) and acceptance is not None:
        if not acceptance.target.same_as(target):
            pass  # about another request
        elif applying is not None and initializing(cv) and applying.release.image != accepted.release.image:
            note = (
                f"Ignoring detected version change from {applying.release.label()} to "
                f"{accepted.release.label()} during payload initialization"
            )
        else:
            payload = accepted
    elif not wants_other:
        payload = local
    elif applying is None:
        payload = None  # wait for the requested release's payload
    if payload is None:
        return Handover(None, note=note)
    implicit: frozenset[str] = frozenset()
    if applying is not None and payload is not applying:
        implicit = implicitly_enabled(applying.manifests, payload.manifests, selection)
        if implicit:
            selection = dataclasses.replace(
                selection, enabled_capabilities=selection.enabled_capabilities | implicit
            )
    meta = cv.get("metadata") or {}
    work = Work(
        payload=payload,
        selection=selection,
        generation=int(meta.get("generation") or 0),
        cluster_version_uid=str(meta.get("uid") or ""),
        force=force and payload is not local,
    )
    history = (cv.get("status") or {}).get("history") or []
    mode = starting_mode(history if isinstance(history, list) else [], payload.release.image)
    return Handover(work, mode, note, implicit)


def apply_selection(
    load: Selection, cv: Mapping[str, Any], known: tuple[str, ...], enabled: tuple[str, ...]
) -> Selection:
    """The apply-time selection: what the payloads were loaded with, the capabilities status
    computes (`known`, `enabled`) and `spec.overrides` as the API returns them."""
    overrides = (cv.get("spec") or {}).get("overrides")
    kept = tuple(o for o in overrides if isinstance(o, Mapping)) if isinstance(overrides, list) else ()
    return dataclasses.replace(
        load, known_capabilities=frozenset(known), enabled_capabilities=frozenset(enabled), overrides=kept
    )
