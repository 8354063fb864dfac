"""How much of the update service's answer goes into ClusterVersion status (pure).

Upstream copies whatever the graph offers. A graph well within the decoder's bounds (8 MiB, 50,000
nodes) can offer more than one object may hold: the API server refuses a write over 3 MiB, and
etcd's default limit is 1.5 MiB. Then every status write fails, for as long as the graph is served.
So, newest first:

* each list holds at most `LIST_BUDGET` bytes of JSON (a channel's lists are a few kilobytes
  today), so both stay under 2 × `LIST_BUDGET` whatever the graph;
* at most `MAX_CONDITIONAL_UPDATES` conditional updates, each with at most `MAX_RISKS` risks (the
  CRD's limits). An update with more risks is left out whole: without some of its risks it would
  look safer than it is;
* with the ClusterUpdateAcceptRisks gate, at most `MAX_RISK_NAMES` distinct risk names over all
  conditional updates (`status.conditionalUpdateRisks` lists each once, and the CRD takes at most
  500): the risks of the newest targets first, an update that would bring more left out whole
  (`within_risk_names`; upstream has no such bound, and then every status write is refused);
* a risk's message is cut to `MAX_RISK_MESSAGE` characters, its head and tail kept (its name, URL
  and rules are never cut: that would change what they mean);
* a release (available, conditional, or the current one, whose URL and channels fill
  `status.desired`) keeps the channels that fit in `MAX_CHANNELS_BYTES` and no URL longer than
  `MAX_URL` (a real release names a few channels and a short errata URL).

`bound(updates)` applies them to the selection, before risks are evaluated (so a hostile graph
costs no evaluation work beyond what status can show); `fit(...)` applies the byte budget again,
exactly, to the lists as written (a conditional update with its `Recommended` condition, and
recommended ones also in `availableUpdates`). An update that does not fit is skipped, and older
ones may still fit. What was left out is counted in `Omitted`, which `RetrievedUpdates` (reason
`UpdatesOmitted`) and an Event report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cvo_py.runtime.gotext import messages
from updateservice.graph import Updates

JSON = dict[str, Any]

LIST_BUDGET = 256 * 1024
MAX_CONDITIONAL_UPDATES = 500
MAX_RISKS = 200
MAX_RISK_NAMES = 500
MAX_RISK_MESSAGE = 4096
MAX_CHANNELS_BYTES = 8 * 1024
MAX_URL = 2048


@dataclass(frozen=True)
class Omitted:
    """What the graph offered that status does not show."""

    available: int = 0  # available updates over the budget
    available_offered: int = 0
    conditional: int = 0  # conditional updates left out, for any reason
    conditional_offered: int = 0
    too_many_risks: tuple[str, ...] = ()  # versions of conditional updates with more than MAX_RISKS risks
    # Versions of conditional updates whose risks would take the distinct names past MAX_RISK_NAMES.
    too_many_names: tuple[str, ...] = ()
    messages_cut: int = 0  # risk messages cut to MAX_RISK_MESSAGE
    releases_cut: int = 0  # releases whose channels or URL were cut

    def __bool__(self) -> bool:
        return bool(self.available or self.conditional or self.messages_cut or self.releases_cut)

    def message(self) -> str:
        """One sentence for RetrievedUpdates and the Event; '' when nothing was left out."""
        if not self:
            return ""
        parts = []
        if self.available:
            parts.append(f"{self.available} of {self.available_offered} available updates")
        if self.conditional:
            part = f"{self.conditional} of {self.conditional_offered} conditional updates"
            if self.too_many_risks:
                part += f" ({len(self.too_many_risks)} with more than {MAX_RISKS} risks: {_some(self.too_many_risks)})"
            if self.too_many_names:
                part += (f" ({len(self.too_many_names)} whose risks would take conditionalUpdateRisks past "
                         f"{MAX_RISK_NAMES} names: {_some(self.too_many_names)})")
            parts.append(part)
        if self.messages_cut:
            parts.append(f"the middle of {self.messages_cut} risk messages over {MAX_RISK_MESSAGE} characters")
        if self.releases_cut:
            parts.append(
                f"channels or URLs of {self.releases_cut} releases (over {MAX_CHANNELS_BYTES // 1024} KiB of channels, "
                f"URLs over {MAX_URL} characters)"
            )
        return (
            f"The updates found hold more than status does (at most {LIST_BUDGET // 1024} KiB of each list, "
            f"{MAX_CONDITIONAL_UPDATES} conditional updates of at most {MAX_RISKS} risks), so status leaves out "
            + "; ".join(parts)
            + "."
        )


def _some(versions: Sequence[str]) -> str:
    return ", ".join(versions[:5]) + (", …" if len(versions) > 5 else "")


def size(value: Any) -> int:
    """Bytes of `value` as the API client encodes it."""
    return len(json.dumps(value))


def _fits(items: Sequence[Any], budget: int) -> list[Any]:
    """The items, in order, that fit in `budget` bytes of a JSON list (each skipped one may be
    followed by smaller ones that fit)."""
    kept: list[Any] = []
    used = 2  # []
    for item in items:
        cost = size(item) + 2  # and ", "
        if used + cost <= budget:
            kept.append(item)
            used += cost
    return kept


def bounded_release(release: JSON) -> JSON:
    """`release` with the channels that fit in MAX_CHANNELS_BYTES and no URL over MAX_URL (itself
    when within both)."""
    channels = release.get("channels") or []
    url = str(release.get("url") or "")
    if len(url) <= MAX_URL and size(channels) <= MAX_CHANNELS_BYTES:
        return release
    out = {k: v for k, v in release.items() if k not in ("url", "channels")}
    if url and len(url) <= MAX_URL:
        out["url"] = url
    kept = [str(c) for c in _fits(channels, MAX_CHANNELS_BYTES)]
    if kept:
        out["channels"] = kept
    return out


def bound(updates: Updates) -> tuple[Updates, Omitted]:
    """The selection as status may hold it, and what was left out (see the module docstring)."""
    releases_cut = 0

    def release_of(release: JSON) -> JSON:
        nonlocal releases_cut
        out = bounded_release(release)
        releases_cut += out is not release
        return out

    current = release_of(updates.current)
    available = _fits([release_of(r) for r in updates.available], LIST_BUDGET)
    usable, too_many, cut = _within_risk_limits(updates.conditional, release_of)
    conditional = _fits(usable, LIST_BUDGET)[:MAX_CONDITIONAL_UPDATES]
    omitted = Omitted(
        available=len(updates.available) - len(available),
        available_offered=len(updates.available),
        conditional=len(updates.conditional) - len(conditional),
        conditional_offered=len(updates.conditional),
        too_many_risks=tuple(too_many),
        messages_cut=cut,
        releases_cut=releases_cut,
    )
    return Updates(current, tuple(available), tuple(conditional)), omitted


def _within_risk_limits(
    conditional: Sequence[JSON], release_of: Callable[[JSON], JSON]
) -> tuple[list[JSON], list[str], int]:
    """The conditional updates with at most MAX_RISKS risks (messages cut to MAX_RISK_MESSAGE),
    the versions of those left out, and how many messages were cut."""
    usable: list[JSON] = []
    too_many: list[str] = []
    cut = 0
    for update in conditional:
        risks = update.get("risks") or []
        if len(risks) > MAX_RISKS:
            too_many.append(str(update["release"].get("version", "")))
            continue
        shortened = []
        for risk in risks:
            message = str(risk.get("message", ""))
            if len(message) > MAX_RISK_MESSAGE:
                risk = {**risk, "message": messages.shortened(message, MAX_RISK_MESSAGE)}
                cut += 1
            shortened.append(risk)
        usable.append({**update, "release": release_of(update["release"]), "risks": shortened})
    return usable, too_many, cut


def with_risk_limits(conditional: Sequence[JSON], omitted: Omitted) -> tuple[list[JSON], Omitted]:
    """`conditional` after risks were added to it (the in-cluster risks): again at most MAX_RISKS
    risks per update and MAX_RISK_MESSAGE characters per message, what this left out added to `omitted`."""
    usable, too_many, cut = _within_risk_limits(conditional, lambda release: release)
    if not too_many and not cut:
        return usable, omitted
    return usable, replace(
        omitted,
        conditional=omitted.conditional + len(too_many),
        conditional_offered=max(omitted.conditional_offered, len(conditional)),
        too_many_risks=omitted.too_many_risks + tuple(too_many),
        messages_cut=omitted.messages_cut + cut,
    )


def risk_names(update: Mapping[str, Any]) -> set[str]:
    """The names of a conditional update's risks."""
    return {str(risk.get("name", "")) for risk in update.get("risks") or () if isinstance(risk, Mapping)}


def within_risk_names(conditional: Sequence[JSON], limit: int = MAX_RISK_NAMES) -> tuple[list[JSON], list[JSON]]:
    """(kept, left out): the conditional updates, newest first, whose risks name at most `limit`
    distinct risks together; an update that would name more is left out whole (older ones whose
    risks are already named may still be kept)."""
    names: set[str] = set()
    kept: list[JSON] = []
    left_out: list[JSON] = []
    for update in conditional:
        more = risk_names(update) - names
        if len(names) + len(more) > limit:
            left_out.append(update)
            continue
        names |= more
        kept.append(update)
    return kept, left_out


def with_risk_name_limit(conditional: Sequence[JSON], omitted: Omitted) -> tuple[list[JSON], Omitted]:
    """`conditional` with at most MAX_RISK_NAMES distinct risk names (the ClusterUpdateAcceptRisks
    gate), what this left out added to `omitted`."""
    kept, left_out = within_risk_names(conditional)
    if not left_out:
        return kept, omitted
    versions = tuple(str((u.get("release") or {}).get("version", "")) for u in left_out)
    return kept, replace(
        omitted,
        conditional=omitted.conditional + len(left_out),
        conditional_offered=max(omitted.conditional_offered, len(conditional)),
        too_many_names=omitted.too_many_names + versions,
    )


def fit(
    available: Sequence[JSON] | None, conditional: Sequence[JSON] | None, omitted: Omitted
) -> tuple[list[JSON] | None, list[JSON] | None, Omitted]:
    """The lists as written into status, each within `LIST_BUDGET` (None for an empty list), and
    `omitted` with what this left out added."""
    kept_available = _fits(available or (), LIST_BUDGET)
    kept_conditional = _fits(conditional or (), LIST_BUDGET)
    more = replace(
        omitted,
        available=omitted.available + len(available or ()) - len(kept_available),
        conditional=omitted.conditional + len(conditional or ()) - len(kept_conditional),
    )
    return kept_available or None, kept_conditional or None, more
