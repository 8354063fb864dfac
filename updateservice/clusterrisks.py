"""In-cluster risks merged into the updates (the ClusterUpdateAcceptRisks gate; pure).

With the gate on, upstream's CVO adds risks it finds in the cluster itself to what the update
service says, as `Always` risks:

* firing alerts of interest (`alert_risks`) apply to every target;
* the risks behind `Upgradeable` (the status side computes them and the composition root passes
  them down as `ClusterRisk`s) apply to *bump* targets only: a higher major, or a higher minor of
  the same major; a version that is not semver counts as one (`is_bump`).

`merged` adds them to the graph's updates: an unconditional update exposed to one becomes a
conditional update with those risks; a conditional update gets them beside its own. Names must
match `^[A-Z][A-Za-z0-9.-]*$` (`checked` drops the others and says why). Which risks apply, and
whether each update is recommended, is then decided as for the graph's risks
(`updateservice.recommend`): an in-cluster risk always applies, and accepting it in
`spec.desiredUpdate.acceptRisks` makes its updates `AllExposedRisksAccepted`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from updateservice import semver
from updateservice.graph import sort_releases

JSON = dict[str, Any]

NAME = re.compile(r"^[A-Z][A-Za-z0-9.-]*$")
MAX_NAME = 256  # the CRD's limit on a riskNames item

FIRING = "firing"
FIRING_REASON = "Alert:firing"
RUNBOOK_NOT_FOUND = "https://github.com/openshift/runbooks/tree/master/alerts?runbook=notfound"

CRITICAL_IMPACT = "suggesting significant cluster issues worth investigating"
DRAIN_IMPACT = "which might slow node drains"
NODE_IMPACT = "which may slow workload redistribution during rolling node updates"
PRECHECK_IMPACT = "suggesting issues worth investigating before updating the cluster"
PDB_AT_LIMIT = "PodDisruptionBudgetAtLimit"
PDB_LIMIT = "PodDisruptionBudgetLimit"
NODE_ALERTS = frozenset({
    "KubeContainerWaiting", "KubeletHealthState", "KubeNodeNotReady", "KubeNodeReadinessFlapping",
    "KubeNodeUnreachable", "VirtHandlerDaemonSetRolloutFailing", "VMCannotBeEvicted",
})
PRECHECK_LABEL = "openShiftUpdatePrecheck"


@dataclass(frozen=True)
class ClusterRisk:
    """A risk found in the cluster: it applies (an `Always` risk). `reason`/`detail` are its
    `Applies` condition's reason and message ("" for the project's `Match` wording); `since` is
    when it began, when known (an alert's `activeAt`)."""

    name: str
    message: str
    url: str
    reason: str = ""
    detail: str = ""
    since: datetime | None = None

    def as_risk(self) -> JSON:
        """The risk as a conditional update carries it."""
        return {"url": self.url, "name": self.name, "message": self.message,
                "matchingRules": [{"type": "Always"}]}


def checked(risks: Iterable[ClusterRisk]) -> tuple[list[ClusterRisk], list[str]]:
    """The risks whose names may be merged, and one line for each one that may not."""
    kept: list[ClusterRisk] = []
    errors: list[str] = []
    for risk in risks:
        if len(risk.name) > MAX_NAME or not NAME.match(risk.name):
            shown = risk.name if len(risk.name) <= MAX_NAME else risk.name[:MAX_NAME] + "…"
            errors.append(f"in-cluster risk name {shown!r} does not match {NAME.pattern} (at most {MAX_NAME} "
                          "characters): not merged into the conditional updates")
            continue
        kept.append(risk)
    return kept, errors


# -- alerts ------------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _impact(name: str, labels: Mapping[str, Any]) -> str | None:
    """Why an alert matters before an update (None: it does not select the alert)."""
    if labels.get("severity") == "critical":
        if name == PDB_LIMIT:
            return (f"{CRITICAL_IMPACT}. Namespace={_text(labels.get('namespace'))}, "
                    f"PodDisruptionBudget={_text(labels.get('poddisruptionbudget'))}")
        return CRITICAL_IMPACT
    if name == PDB_AT_LIMIT:
        return DRAIN_IMPACT
    if name in NODE_ALERTS:
        return NODE_IMPACT
    if labels.get(PRECHECK_LABEL) == "true":
        return PRECHECK_IMPACT
    return None


def _active_at(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def alert_risk(alert: Mapping[str, Any]) -> ClusterRisk | None:
    """One alert of `GET /api/v1/alerts` as a risk, or None: not firing, or not of interest."""
    labels = alert.get("labels")
    annotations = alert.get("annotations")
    labels = labels if isinstance(labels, Mapping) else {}
    annotations = annotations if isinstance(annotations, Mapping) else {}
    name = _text(labels.get("alertname"))
    if alert.get("state") != FIRING or not name:
        return None
    impact = _impact(name, labels)
    if impact is None:
        return None
    summary = _text(annotations.get("summary"))
    extra = _text(annotations.get("message"))
    runbook = _text(annotations.get("runbook_url"))
    detail = (f"{_text(labels.get('severity'))} alert {name} firing, {impact}. {summary} The alert description is: "
              f"{_text(annotations.get('description'))}{' | ' + extra if extra else ''} {runbook}")
    return ClusterRisk(name, f"{summary}.", runbook or RUNBOOK_NOT_FOUND, FIRING_REASON, detail,
                       _active_at(alert.get("activeAt")))


def alert_risks(alerts: Sequence[Any]) -> list[ClusterRisk]:
    """The firing alerts of interest as risks, one per alert name, sorted by name: alerts of one
    name join their messages with "; " and keep the earliest `activeAt`."""
    by_name: dict[str, ClusterRisk] = {}
    for alert in alerts:
        risk = alert_risk(alert) if isinstance(alert, Mapping) else None
        if risk is None:
            continue
        seen = by_name.get(risk.name)
        if seen is None:
            by_name[risk.name] = risk
            continue
        starts = [t for t in (seen.since, risk.since) if t is not None]
        by_name[risk.name] = ClusterRisk(seen.name, seen.message, seen.url, seen.reason,
                                         f"{seen.detail}; {risk.detail}", min(starts) if starts else None)
    return [by_name[name] for name in sorted(by_name)]


# -- the merge ---------------------------------------------------------------------------------------


def is_bump(current: str, target: str) -> bool:
    """A higher major, or a higher minor of the same major; a version that is not semver counts."""
    try:
        now, then = semver.parse(current), semver.parse(target)
    except semver.SemverError:
        return True
    return then.major > now.major or (then.major == now.major and then.minor > now.minor)


def _exposure(version: str, current: str, every: Sequence[ClusterRisk], bump: Sequence[ClusterRisk]) -> list[JSON]:
    exposed = {r.name: r for r in (*(bump if is_bump(current, version) else ()), *every)}
    return [exposed[name].as_risk() for name in sorted(exposed)]


def merged(
    available: Sequence[Mapping[str, Any]],
    conditional: Sequence[Mapping[str, Any]],
    *,
    current: str,
    every_target: Sequence[ClusterRisk] = (),
    bump_targets: Sequence[ClusterRisk] = (),
) -> tuple[list[JSON], list[JSON]]:
    """The graph's (available releases, conditional updates) with the in-cluster risks added:
    `every_target` to each update, `bump_targets` to updates to a higher major or minor. An exposed
    unconditional update moves to the conditional ones; a risk already named by an update is not
    added again. Both lists newest first."""
    if not every_target and not bump_targets:
        return [dict(r) for r in available], [dict(u) for u in conditional]
    out_available: list[JSON] = []
    out_conditional: list[JSON] = []
    for release in available:
        risks = _exposure(str(release.get("version", "")), current, every_target, bump_targets)
        if risks:
            out_conditional.append({"release": dict(release), "risks": risks})
        else:
            out_available.append(dict(release))
    for update in conditional:
        release = dict(update.get("release") or {})
        own = [dict(r) for r in update.get("risks") or ()]
        names = {r.get("name") for r in own}
        more = [r for r in _exposure(str(release.get("version", "")), current, every_target, bump_targets)
                if r["name"] not in names]
        out_conditional.append({**update, "release": release, "risks": own + more})
    indexed = [{"version": u["release"].get("version", ""), "index": i} for i, u in enumerate(out_conditional)]
    return out_available, [out_conditional[int(r["index"])] for r in sort_releases(indexed)]
