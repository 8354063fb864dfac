"""Whether each conditional update is recommended, from its evaluated risks (pure).

`recommended(risks, outcomes, accepted, previous, now)` gives the `Recommended` condition by the
CVO's rules: status precedence False > Unknown > True, its reason-merging table, messages joined by
blank lines, and `lastTransitionTime` kept while the status is unchanged. `PromQLCache` holds the
CVO's evaluation cache and throttle (one real query a second, refresh after an hour, expiry after a
day), with `now` injected so it is deterministic under test.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cvo_py.runtime.gotext.messages import shortened
from cvo_py.runtime.gotext.numbers import format_float
from cvo_py.runtime.gotext.times import metav1_time
from updateservice.graph import sort_releases

JSON = dict[str, Any]

NOT_EXPOSED = "NotExposedToRisks"
ALL_ACCEPTED = "AllExposedRisksAccepted"
EVALUATION_FAILED = "EvaluationFailed"
EXPOSED = "ExposedToRisks"
MULTIPLE = "MultipleReasons"
APPLIES = "Applies"

NOT_EXPOSED_MESSAGE = "The update is recommended, because none of the conditional update risks apply to this cluster."
ALL_ACCEPTED_MESSAGE = ("The update is recommended, because either risk does not apply to this cluster or it is "
                        "accepted by cluster admins.")

_REASON_NAME = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
# metav1.Condition's limits, which the CRD checks on conditionalUpdates[].conditions: a longer
# reason or message would have the whole status rejected.
MAX_REASON = 1024
MAX_MESSAGE = 32768
_PRECEDENCE = {"False": 2, "Unknown": 1, "True": 0}


@dataclass(frozen=True)
class RiskOutcome:
    """A risk's exposure: `applies` True/False, or None with `error` when it could not be evaluated."""

    applies: bool | None
    error: str = ""
    # When it applies for a reason of its own (an in-cluster risk, e.g. a firing alert): the
    # `Applies` reason and message, and since when, if known.
    reason: str = ""
    detail: str = ""
    since: datetime | None = None


def merge_reason(current: str, new: str) -> str:
    """The CVO's reason merge for two risks' reasons."""
    if current == new or current == NOT_EXPOSED:
        return new
    if new == NOT_EXPOSED:
        return current
    if current == ALL_ACCEPTED:
        return new
    if current == EVALUATION_FAILED and new == EXPOSED:
        return new
    if current == EVALUATION_FAILED and new == ALL_ACCEPTED:
        return current
    if current == EXPOSED and new in (ALL_ACCEPTED, EVALUATION_FAILED):
        return current
    return MULTIPLE


def recommended(
    risks: Sequence[Mapping[str, Any]],
    outcomes: Mapping[str, RiskOutcome],
    *,
    accepted: frozenset[str] = frozenset(),
    previous: Mapping[str, Any] | None = None,
    now: datetime,
) -> JSON:
    """The `Recommended` condition (metav1.Condition) of one conditional update."""
    status, reason, messages = "True", NOT_EXPOSED, []
    for risk in risks:
        name = str(risk.get("name", ""))
        outcome = outcomes.get(name, RiskOutcome(None, "risk was not evaluated"))
        if outcome.applies is None:
            risk_status, risk_reason = "Unknown", EVALUATION_FAILED
            messages.append(_not_evaluated(name, risk, outcome))
        elif not outcome.applies:
            continue
        elif name in accepted:
            risk_status, risk_reason = "True", ALL_ACCEPTED
        else:
            risk_status = "False"
            risk_reason = name if len(name) <= MAX_REASON and _REASON_NAME.match(name) else EXPOSED
            messages.append(f"{risk.get('message', '')} {risk.get('url', '')}")
        if _PRECEDENCE[risk_status] > _PRECEDENCE[status]:
            status = risk_status
        reason = merge_reason(reason, risk_reason)
    if status == "True":
        message = ALL_ACCEPTED_MESSAGE if reason == ALL_ACCEPTED else NOT_EXPOSED_MESSAGE
    else:
        message = shortened("\n\n".join(messages), MAX_MESSAGE)
    since = metav1_time(now)
    if previous and previous.get("status") == status and previous.get("lastTransitionTime"):
        since = str(previous["lastTransitionTime"])
    return {"type": "Recommended", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": since}


def _not_evaluated(name: str, risk: Mapping[str, Any], outcome: RiskOutcome) -> str:
    return (
        f"Could not evaluate exposure to update risk {name} ({outcome.error})\n"
        f"  {name} description: {risk.get('message', '')}\n  {name} URL: {risk.get('url', '')}"
    )


def applies(risk: Mapping[str, Any], outcome: RiskOutcome, previous: Mapping[str, Any] | None, now: datetime) -> JSON:
    """A risk's `Applies` condition (with the ClusterUpdateAcceptRisks gate): True/Match,
    False/NotMatch, or Unknown/EvaluationFailed saying why; `lastTransitionTime` kept while the
    status is unchanged. The Match and NotMatch messages are cvo-py's words."""
    name = str(risk.get("name", ""))
    if outcome.applies is None:
        status, reason, message = "Unknown", EVALUATION_FAILED, _not_evaluated(name, risk, outcome)
    elif outcome.applies:
        status, reason = "True", outcome.reason or "Match"
        message = outcome.detail or f"The risk {name} applies to this cluster."
    else:
        status, reason, message = "False", "NotMatch", f"The risk {name} does not apply to this cluster."
    since = metav1_time(outcome.since if outcome.applies and outcome.since is not None else now)
    if previous and previous.get("status") == status and previous.get("lastTransitionTime"):
        since = str(previous["lastTransitionTime"])
    return {"type": APPLIES, "status": status, "reason": reason,
            "message": shortened(message, MAX_MESSAGE), "lastTransitionTime": since}


def conditional_update_risks(conditional: Sequence[Mapping[str, Any]] | None) -> list[JSON] | None:
    """`status.conditionalUpdateRisks` (gated): every risk of the conditional updates once, by
    name, sorted by name, with its `Applies` condition; None when there is none."""
    by_name: dict[str, JSON] = {}
    for update in conditional or ():
        for risk in update.get("risks") or ():
            by_name.setdefault(str(risk.get("name", "")), dict(risk))
    return [by_name[name] for name in sorted(by_name)] or None


def decisive_outcome(rules: Sequence[Mapping[str, Any]], evaluate: Callable[[Mapping[str, Any]], bool]) -> RiskOutcome:
    """Rules in order; the first that evaluates without error decides; all failing is Unknown.
    `evaluate` raises EvaluationError for a rule it cannot evaluate."""
    errors = []
    for rule in rules:
        if rule.get("type") == "Always":
            return RiskOutcome(True)
        try:
            return RiskOutcome(evaluate(rule))
        except EvaluationError as err:
            errors.append(str(err))
    return RiskOutcome(None, "; ".join(errors) or "no rule could be evaluated")


class EvaluationError(Exception):
    """A rule that could not be evaluated; str() says why, in one line."""


def distinct_risks(conditional_updates: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Each risk name once, with its definition from the highest target version (the list is
    sorted newest first, so the first seen wins)."""
    out: dict[str, Mapping[str, Any]] = {}
    for update in conditional_updates:
        for risk in update.get("risks") or ():
            out.setdefault(str(risk.get("name", "")), risk)
    return out


# -- the PromQL evaluation cache ---------------------------------------------------------------------

MIN_QUERY_INTERVAL = timedelta(seconds=1)
REFRESH_AFTER = timedelta(hours=1)
EXPIRE_AFTER = timedelta(hours=24)


@dataclass
class _Entry:
    value: bool | None
    error: str
    at: datetime


@dataclass
class PromQLCache:
    """The CVO's cache for PromQL rules (keyed by the rule's JSON): at most one real query per
    second overall; results refreshed after an hour (stalest requested entry first) and dropped
    after a day; a throttled call with nothing cached is an error naming when it may run."""

    query: Callable[[str], bool]
    refresh_after: timedelta = REFRESH_AFTER
    entries: dict[str, _Entry] = field(default_factory=dict)
    last_query: datetime | None = None

    def evaluate(self, rule: Mapping[str, Any], now: datetime) -> bool:
        key = json.dumps(rule, sort_keys=True, separators=(",", ":"))
        for stale in [k for k, e in self.entries.items() if now - e.at >= EXPIRE_AFTER]:
            del self.entries[stale]
        entry = self.entries.get(key)
        if entry is not None and now - entry.at < self.refresh_after:
            return self._result(entry)
        if self.last_query is not None and now - self.last_query < MIN_QUERY_INTERVAL:
            if entry is not None:
                return self._result(entry)
            until = self.last_query + MIN_QUERY_INTERVAL
            raise EvaluationError(f"evaluation is throttled until {until.strftime('%H:%M:%S')}{_zone(until)}")
        if entry is not None and not self._stalest(key, now):
            return self._result(entry)
        self.last_query = now
        try:
            value = self.query(str(rule["promql"]["promql"]))
        except EvaluationError as err:
            self.entries[key] = _Entry(None, str(err), now)
            raise
        self.entries[key] = _Entry(value, "", now)
        return value

    def _stalest(self, key: str, now: datetime) -> bool:
        due = [(e.at, k) for k, e in self.entries.items() if now - e.at >= self.refresh_after]
        return not due or min(due)[1] == key

    @staticmethod
    def _result(entry: _Entry) -> bool:
        if entry.value is None:
            raise EvaluationError(entry.error)
        return entry.value


def _zone(at: datetime) -> str:
    # Go's "Z07:00": Z for UTC, else ±hh:mm.
    offset = at.utcoffset()
    if not offset:
        return "Z"
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def sample_verdict(samples: Sequence[Mapping[str, Any]]) -> bool:
    """An instant query's vector as a match: exactly one sample, 1 (match) or 0 (no match), with
    upstream's error texts."""
    if len(samples) != 1:
        raise EvaluationError(f"invalid PromQL result length must be one, but is {len(samples)}")
    raw = (samples[0].get("value") or [None, None])[1]
    try:
        value = float(raw) if isinstance(raw, str) else math.nan
    except ValueError:
        value = math.nan
    if value == 1:
        return True
    if value == 0:
        return False
    shown = format_float(value) if isinstance(raw, str) and not math.isnan(value) else str(raw)
    raise EvaluationError(f"invalid PromQL result (must be 0 or 1): {shown}")


def vector_verdict(data: Any) -> bool:
    """The `data` of an instant query's answer as a match: a vector of exactly one sample, 1 or 0."""
    kind = data.get("resultType") if isinstance(data, Mapping) else None
    if kind != "vector":
        raise EvaluationError(f"invalid PromQL result type is {kind}, not vector")
    result = data.get("result")
    return sample_verdict([s for s in result if isinstance(s, Mapping)] if isinstance(result, list) else [])


def with_recommendations(
    available: Sequence[Mapping[str, Any]],
    conditional: Sequence[Mapping[str, Any]],
    outcomes: Mapping[str, RiskOutcome],
    *,
    accepted: frozenset[str] = frozenset(),
    previous: Sequence[Mapping[str, Any]] = (),
    now: datetime,
    gated: bool = False,
) -> tuple[list[JSON] | None, list[JSON] | None]:
    """`status.availableUpdates` and `status.conditionalUpdates`: each conditional update gets its
    `Recommended` condition (carried over by image from `previous`); a recommended one is also
    available. Lists keep the given order (newest first); empty lists are null. `gated` (the
    ClusterUpdateAcceptRisks gate): each update also names its risks (`riskNames`, sorted) and each
    risk carries its `Applies` condition (carried over by image and risk name)."""
    before = {}
    before_applies: dict[tuple[str, str], Mapping[str, Any]] = {}
    for update in previous:
        image = (update.get("release") or {}).get("image")
        for condition in update.get("conditions") or ():
            if condition.get("type") == "Recommended" and image:
                before[image] = condition
        for risk in update.get("risks") or ():
            for condition in risk.get("conditions") or ():
                if condition.get("type") == APPLIES and image:
                    before_applies[(str(image), str(risk.get("name", "")))] = condition
    out_available = [dict(r) for r in available]
    images = {r.get("image") for r in out_available}
    out_conditional: list[JSON] = []
    for update in conditional:
        release = dict(update["release"])
        condition = recommended(update.get("risks") or (), outcomes, accepted=accepted,
                                previous=before.get(release.get("image")), now=now)
        risks = [dict(r) for r in update.get("risks") or ()]
        entry: JSON = {"release": release, "risks": risks, "conditions": [condition]}
        if gated:
            for risk in risks:
                name = str(risk.get("name", ""))
                outcome = outcomes.get(name, RiskOutcome(None, "risk was not evaluated"))
                risk["conditions"] = [
                    applies(risk, outcome, before_applies.get((str(release.get("image")), name)), now)
                ]
            entry = {"release": release, "riskNames": sorted({str(r.get("name", "")) for r in risks}), **entry}
        out_conditional.append(entry)
        if condition["status"] == "True" and release.get("image") not in images:
            images.add(release.get("image"))
            out_available.append(release)
    return (sort_releases(out_available) or None, out_conditional or None)
