"""Publication metadata: when the insights were computed, by whom, and what was left out.

The controller writes it into the main ConfigMap under its own key, `usc-meta` (see
`status.updatestatus.api.configmap` and `docs/configmap-api.md`), as one line of JSON
(readers take YAML too), shown here as YAML:

    computedAt: "2026-11-23T17:50:04.123456789Z"   # when the insights were last known current
    controller:
      identity: update-status-controller-5d9f_1a2b3c4d  # the Lease holder identity it runs as
      version: 0.1.0                                    # cvo-py's version
    resyncPeriod: 30s                                   # Go duration
    paced: true                                         # only while writes are held back (below)
    omitted:
      count: 12                                         # insights not published (size limit)
      kinds: {ClusterOperator: 2, Node: 10}             # by kind
      keys: [usc-co-a, ...]                             # their keys, most important first, at most OMITTED_KEYS_LISTED

`computedAt` is refreshed whenever an insight key changes and at least once per resync period
when nothing changes (`refresh`), so a reader can tell live data from data nobody maintains any
more: `warnings` (pure) says when the data is older than twice the resync period, when the
controller's Lease has expired, when insights were omitted (the reader reports unreadable keys one
by one), or when `paced` says that the controller holds writes back (many changes at once, see
`status.updatestatus.controller.pacing`): what is published is current as of `computedAt` and
changes after it may not be published yet. `paced` is written only while true, so a reader that
predates it reads every other value.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import Field, ValidationError, model_serializer

from cvo_py.runtime import safeload
from status.updatestatus.api.names import LEASE as LEASE  # re-exported
from status.updatestatus.api.sharding import omission_rank
from status.updatestatus.api.staleness import (  # re-exported: what a reader warns about
    META_KEY as META_KEY,
)
from status.updatestatus.api.staleness import ControllerIdentityShape, OmittedShape, PublicationMetadataShape
from status.updatestatus.api.staleness import LeaseState as LeaseState
from status.updatestatus.api.staleness import health_caveat as health_caveat
from status.updatestatus.api.staleness import lease_state as lease_state
from status.updatestatus.api.staleness import lease_warnings as lease_warnings
from status.updatestatus.api.staleness import warnings as warnings
from status.updatestatus.api.wire import VALUE_LIMITS
from status.updatestatus.insights.models import ApiModel, Duration, Time

OMITTED_KEYS_LISTED = 100  # keeps the value small (a key is at most 253 bytes: under 26 KB)
RESERVED = 32 * 1024  # bytes of the main ConfigMap kept free for this key

# The kind of insight each key prefix holds (as `status.updatestatus.api.configmap` names the keys).
_KIND_BY_PREFIX = (
    ("usc-cv-", "ClusterVersion"),
    ("usc-co-", "ClusterOperator"),
    ("usc-mcp-", "MachineConfigPool"),
    ("usc-node-", "Node"),
    ("usc-health-", "Health"),
)


class ControllerIdentity(ApiModel, ControllerIdentityShape):
    identity: str = Field(default="", max_length=253)
    version: str = Field(default="", max_length=64)


class Omitted(ApiModel, OmittedShape):
    count: int = Field(default=0, ge=0)
    kinds: dict[str, int] = Field(default_factory=dict)
    keys: list[str] = Field(default_factory=list, max_length=OMITTED_KEYS_LISTED)


class PublicationMetadata(ApiModel, PublicationMetadataShape):
    computed_at: Time
    controller: ControllerIdentity = Field(default_factory=ControllerIdentity)
    resync_period: Duration
    omitted: Omitted = Field(default_factory=Omitted)
    paced: bool = False

    @model_serializer(mode="wrap")
    def _omit_unpaced(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not data.get("paced"):
            data.pop("paced", None)  # written only while true: readers that predate it read the rest
        return data


class MetadataError(ValueError):
    """A `usc-meta` value that cannot be read; the message names the key."""


def kind_of_key(key: str) -> str:
    return next((kind for prefix, kind in _KIND_BY_PREFIX if key.startswith(prefix)), "other")


def omitted_of(keys: Iterable[str]) -> Omitted:
    """What the metadata says about the keys left out: counted by kind, and listed up to a bound
    the most important first (`sharding.omission_rank`, then by name), so the list names the pool
    or node that is missing before the thousands of alerts left out with it."""
    ordered = sorted(set(keys), key=lambda key: (omission_rank(key), key))
    kinds: dict[str, int] = {}
    for key in ordered:
        kind = kind_of_key(key)
        kinds[kind] = kinds.get(kind, 0) + 1
    return Omitted(count=len(ordered), kinds=dict(sorted(kinds.items())), keys=ordered[:OMITTED_KEYS_LISTED])


def build(
    now: int, identity: str, version: str, resync: int, omitted: Iterable[str], paced: bool = False
) -> PublicationMetadata:
    return PublicationMetadata(
        computed_at=now,
        controller=ControllerIdentity(identity=identity[:253], version=version[:64]),
        resync_period=resync,
        omitted=omitted_of(omitted),
        paced=paced,
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
