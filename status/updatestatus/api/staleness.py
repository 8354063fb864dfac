"""What a reader of the insights warns about (pure, without pydantic): how old they are, whether
the controller's Lease is held, what was left out.

`status.updatestatus.api.metadata` defines the publication metadata the controller writes
under `usc-meta` (pydantic models) and re-exports everything here; a client reads that key with
the plain classes generated from those models (`status.updatestatus.api.plain`), which also
holds their shapes (re-exported here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from cvo_py.runtime.gotext.durations import SECOND, TimeFormatError, duration_string, short_duration, truncate_duration
from cvo_py.runtime.gotext.times import format_time, parse_time
from status.updatestatus.api.names import LEASE
from status.updatestatus.api.plain import ControllerIdentityShape as ControllerIdentityShape
from status.updatestatus.api.plain import OmittedShape as OmittedShape
from status.updatestatus.api.plain import PublicationMetadataShape as PublicationMetadataShape

META_KEY = "usc-meta"


# --- what a reader warns about -----------------------------------------------------------------


class LeaseState(NamedTuple):
    """What a reader learnt of the controller's leader-election Lease."""

    holder: str = ""
    renewed_at: int | None = None  # ns since the epoch
    duration: int | None = None  # ns
    problem: str = ""  # non-empty: the Lease could not be read (said in one line, not an error)
    missing: bool = False


def lease_state(lease: object) -> LeaseState:
    """A coordination.k8s.io/v1 Lease object → what `warnings` needs (odd content: a problem line)."""
    spec = lease.get("spec") if isinstance(lease, dict) else None
    if not isinstance(spec, dict):
        return LeaseState(problem=f"the update status controller's Lease {LEASE} has no spec: cannot tell if it runs")
    holder = spec.get("holderIdentity")
    renew = spec.get("renewTime")
    seconds = spec.get("leaseDurationSeconds")
    try:
        renewed = parse_time(renew) if isinstance(renew, str) else None
    except TimeFormatError:
        renewed = None
    duration = seconds * SECOND if isinstance(seconds, int) and not isinstance(seconds, bool) else None
    return LeaseState(holder=holder if isinstance(holder, str) else "", renewed_at=renewed, duration=duration)


def warnings(
    meta: PublicationMetadataShape | None,
    now: int,
    lease: LeaseState | None = None,
    meta_problem: str = "",
) -> list[str]:
    """The warnings a reader prints above the insights (each one line, without `warning: `)."""
    out: list[str] = []
    if meta_problem:
        out.append(f"{meta_problem}: cannot tell when the insights were computed or what was left out")
    elif meta is None:
        out.append(
            f"the ConfigMap has no {META_KEY} key: cannot tell when the insights were computed or whether "
            "some were left out; they may be stale"
        )
    else:
        age = now - meta.computed_at
        if age > 2 * meta.resync_period:
            out.append(
                f"the insights are stale: computed {ago(age)}"
                f" at {format_time(meta.computed_at)}, more than twice the controller's resync period "
                f"({duration_string(meta.resync_period)}); the update status controller may not be running"
            )
        if meta.paced:
            out.append(
                "the update status controller is holding writes back after many changes at once: the insights "
                f"are current as of {format_time(meta.computed_at)} and may miss later changes; "
                "node and pool counts below may be partial"
            )
        if meta.omitted.count:
            kinds = ", ".join(f"{n} {kind}" for kind, n in meta.omitted.kinds.items())
            out.append(
                f"{meta.omitted.count} insights were omitted by the controller (ConfigMap size limit): {kinds}"
                f"{_not_shown(meta.omitted)}; completion, node and health counts below are partial"
            )
    if lease is not None:
        out.extend(lease_warnings(lease, now))
    return out


def ago(age: int) -> str:
    """How long ago something happened, `age` ns before now, worded as oc words a moment in its
    SINCE column (`shortDuration` of the age in whole seconds): `5s ago`, `1m15s ago`, and `now`
    under a second (never `now ago`)."""
    since = short_duration(truncate_duration(age, SECOND))
    return since if since == "now" else f"{since} ago"

OMITTED_NAMED = 5  # omitted keys a warning names (the controller lists the most important first)


def _not_shown(omitted: OmittedShape) -> str:
    """The keys a warning names of those left out: the most important, as the controller lists them."""
    named = [str(key) for key in omitted.keys[:OMITTED_NAMED]]
    if not named:
        return ""
    more = omitted.count - len(named)
    return f" (not shown: {', '.join(named)}" + (f" and {more} more)" if more > 0 else ")")


def lease_warnings(lease: LeaseState, now: int) -> list[str]:
    if lease.problem:
        return [lease.problem]
    if lease.missing:
        return []  # a controller run without leader election has none: the data's age tells
    if lease.renewed_at is None or lease.duration is None or not lease.holder:
        return ["the update status controller's Lease has no holder: no controller is maintaining the insights"]
    expired = now - (lease.renewed_at + lease.duration)
    if expired > 0:
        return [
            f"the update status controller's Lease expired {ago(expired)} (holder "
            f"{lease.holder}, "
            f"last renewed {format_time(lease.renewed_at)}): the insights may be stale"
        ]
    return []


def health_caveat(warning_lines: Sequence[str]) -> str | None:
    """What the health section says instead of "Update is proceeding well" when there are warnings."""
    if not warning_lines:
        return None
    return "Update health is not known: the insights may be stale or partial (see the warnings above)"
