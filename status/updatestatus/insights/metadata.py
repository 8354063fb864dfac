"""Publication metadata: when the insights were computed, by whom, and what was left out.

The controller writes it into the main ConfigMap under its own key, `usc-meta` (see
`status.updatestatus.configmap` and the README's ConfigMap API section), as one line of JSON
(readers take YAML too), shown here as YAML:

    computedAt: "2026-11-23T17:50:04.123456789Z"   # when the insights were last known current
    controller:
      identity: update-status-controller-5d9f_1a2b3c4d  # the Lease holder identity it runs as
      version: 0.1.0                                    # cvo-py's version
    resyncPeriod: 30s                                   # Go duration
    omitted:
      count: 12                                         # insights not published (size limit)
      kinds: {ClusterOperator: 2, Node: 10}             # by kind
      keys: [usc-co-a, ...]                             # their keys, at most OMITTED_KEYS_LISTED

`computedAt` is refreshed whenever an insight key changes and at least once per resync period
when nothing changes (`refresh`), so a reader can tell live data from data nobody maintains any
more: `warnings` (pure) says when the data is older than twice the resync period, when the
controller's Lease has expired, or when insights were omitted (the reader reports unreadable keys one by one).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import Field, ValidationError

from cvo_py import gotext, safeload
from status.updatestatus.configmap import VALUE_LIMITS
from status.updatestatus.insights.models import ApiModel, Duration, Time
from status.updatestatus.names import LEASE as LEASE  # re-exported

META_KEY = "usc-meta"
OMITTED_KEYS_LISTED = 100  # keeps the value small (a key is at most 253 bytes: under 26 KB)
RESERVED = 32 * 1024  # bytes of the main ConfigMap kept free for this key

# The kind of insight each key prefix holds (as `status.updatestatus.configmap` names the keys).
_KIND_BY_PREFIX = (
    ("usc-cv-", "ClusterVersion"),
    ("usc-co-", "ClusterOperator"),
    ("usc-mcp-", "MachineConfigPool"),
    ("usc-node-", "Node"),
    ("usc-health-", "Health"),
)


class ControllerIdentity(ApiModel):
    identity: str = Field(default="", max_length=253)
    version: str = Field(default="", max_length=64)


class Omitted(ApiModel):
    count: int = Field(default=0, ge=0)
    kinds: dict[str, int] = Field(default_factory=dict)
    keys: list[str] = Field(default_factory=list, max_length=OMITTED_KEYS_LISTED)


class PublicationMetadata(ApiModel):
    computed_at: Time
    controller: ControllerIdentity = Field(default_factory=ControllerIdentity)
    resync_period: Duration
    omitted: Omitted = Field(default_factory=Omitted)


class MetadataError(ValueError):
    """A `usc-meta` value that cannot be read; the message names the key."""


def kind_of_key(key: str) -> str:
    return next((kind for prefix, kind in _KIND_BY_PREFIX if key.startswith(prefix)), "other")


def omitted_of(keys: Iterable[str]) -> Omitted:
    """What the metadata says about the keys left out (sorted, counted by kind, listed up to a bound)."""
    ordered = sorted(set(keys))
    kinds: dict[str, int] = {}
    for key in ordered:
        kind = kind_of_key(key)
        kinds[kind] = kinds.get(kind, 0) + 1
    return Omitted(count=len(ordered), kinds=dict(sorted(kinds.items())), keys=ordered[:OMITTED_KEYS_LISTED])


def build(now: int, identity: str, version: str, resync: int, omitted: Iterable[str]) -> PublicationMetadata:
    return PublicationMetadata(
        computed_at=now,
        controller=ControllerIdentity(identity=identity[:253], version=version[:64]),
        resync_period=resync,
        omitted=omitted_of(omitted),
    )


def encode(meta: PublicationMetadata) -> str:
    """JSON, like every value the controller writes (JSON is YAML: readers take either)."""
    # ASCII only: no line separator or C1 control a YAML reader could take for a line break
    return json.dumps(meta.to_api(), ensure_ascii=True, separators=(",", ":"))


def prepare_reader() -> None:
    """Build now the validator `decode` uses (pydantic builds it when first used)."""
    PublicationMetadata.model_rebuild()


def decode(value: str) -> PublicationMetadata:
    # Anyone who may edit the ConfigMap may write this key: the bounded loader of every value.
    try:
        doc = safeload.load_document(value, source=f"ConfigMap key {META_KEY}", limits=VALUE_LIMITS)
    except safeload.DocumentError as exc:
        raise MetadataError(str(exc)) from None
    if not isinstance(doc, dict):
        raise MetadataError(f"ConfigMap key {META_KEY}: expected a mapping, got {type(doc).__name__}")
    try:
        return PublicationMetadata.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "value"
        raise MetadataError(f"ConfigMap key {META_KEY}: {where}: {first['msg']}") from None


def refresh(
    previous: PublicationMetadata | None, desired: PublicationMetadata, insights_changed: bool
) -> PublicationMetadata:
    """What to publish: `desired` (stamped now) when the insights changed, when anything else in the
    metadata changed, or when the published stamp is half a resync period old (so a sync run by
    the resync timer refreshes it once per period); otherwise `previous` unchanged (no write)."""
    if previous is None or insights_changed:
        return desired
    unchanged = previous.model_copy(update={"computed_at": desired.computed_at}) == desired
    fresh = desired.computed_at - previous.computed_at < desired.resync_period // 2
    return previous if unchanged and fresh else desired


# --- what a reader warns about -----------------------------------------------------------------


@dataclass(frozen=True)
class LeaseState:
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
        renewed = gotext.parse_time(renew) if isinstance(renew, str) else None
    except gotext.TimeFormatError:
        renewed = None
    duration = seconds * gotext.SECOND if isinstance(seconds, int) and not isinstance(seconds, bool) else None
    return LeaseState(holder=holder if isinstance(holder, str) else "", renewed_at=renewed, duration=duration)


def warnings(
    meta: PublicationMetadata | None,
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
            ago = gotext.short_duration(gotext.truncate_duration(age, gotext.SECOND))
            out.append(
                f"the insights are stale: computed {ago}"
                f" ago at {gotext.format_time(meta.computed_at)}, more than twice the controller's resync period "
                f"({gotext.duration_string(meta.resync_period)}); the update status controller may not be running"
            )
        if meta.omitted.count:
            kinds = ", ".join(f"{n} {kind}" for kind, n in meta.omitted.kinds.items())
            out.append(
                f"{meta.omitted.count} insights were omitted by the controller (ConfigMap size limit): {kinds}; "
                "completion, node and health counts below are partial"
            )
    if lease is not None:
        out.extend(lease_warnings(lease, now))
    return out


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
            f"the update status controller's Lease expired "
            f"{gotext.short_duration(gotext.truncate_duration(expired, gotext.SECOND))} ago (holder "
            f"{lease.holder}, "
            f"last renewed {gotext.format_time(lease.renewed_at)}): the insights may be stale"
        ]
    return []


def health_caveat(warning_lines: Sequence[str]) -> str | None:
    """What the health section says instead of "Update is proceeding well" when there are warnings."""
    if not warning_lines:
        return None
    return "Update health is not known: the insights may be stale or partial (see the warnings above)"
