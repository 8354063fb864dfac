"""The available-updates metrics, with the CVO's names and labels, computed at scrape time.

`cluster_version_operator_update_retrieval_timestamp_seconds{name=""}`: when the lists were last
confirmed by the update service or their inputs last changed (once there is a first attempt);
`cluster_version_conditional_update_condition_seconds{version,condition,status,reason}`: when each
conditional update's `Recommended` condition last changed;
`cluster_version_risk_conditions{condition,risk,reason}` (with the ClusterUpdateAcceptRisks gate):
each conditional update risk's `Applies` condition. (`cluster_version_available_updates` is with
the other ClusterVersion metrics, as it is read from status.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from cvo_py.runtime.gotext.times import epoch_seconds
from updateservice.poller import UpdatesState


def risk_conditions_family(cv: Mapping[str, Any] | None) -> GaugeMetricFamily | None:
    """`cluster_version_risk_conditions{condition="Applies",risk,reason}`: 1 True, 0 False, -1
    Unknown for each risk in status.conditionalUpdateRisks (None when there are none)."""
    risks = ((cv or {}).get("status") or {}).get("conditionalUpdateRisks") or []
    family = GaugeMetricFamily(
        "cluster_version_risk_conditions",
        "The Applies condition of each conditional update risk: 1 True, 0 False, -1 Unknown.",
        labels=["condition", "risk", "reason"],
    )
    for risk in risks if isinstance(risks, list) else []:
        if not isinstance(risk, dict):
            continue
        for condition in risk.get("conditions") or ():
            if isinstance(condition, dict) and condition.get("type") == "Applies":
                value = {"True": 1.0, "False": 0.0}.get(str(condition.get("status")), -1.0)
                family.add_metric(["Applies", str(risk.get("name") or ""), str(condition.get("reason") or "")], value)
    return family if family.samples else None


def families(state: UpdatesState | None, cv: Mapping[str, Any] | None, accept_risks: bool = False) -> list[Metric]:
    out: list[Metric] = []
    if state is not None and state.sync_or_config_change is not None:
        retrieval = GaugeMetricFamily(
            "cluster_version_operator_update_retrieval_timestamp_seconds",
            "Unix timestamp of the last successful retrieval of available updates, or of the last change of its "
            "inputs (upstream, channel, architecture).",
            labels=["name"],
        )
        retrieval.add_metric([""], state.sync_or_config_change.timestamp())
        out.append(retrieval)
    conditional = ((cv or {}).get("status") or {}).get("conditionalUpdates") or []
    recommended = GaugeMetricFamily(
        "cluster_version_conditional_update_condition_seconds",
        "Unix timestamp of the last transition of each conditional update's condition.",
        labels=["version", "condition", "status", "reason"],
    )
    for update in conditional:
        version = str((update.get("release") or {}).get("version") or "")
        for condition in update.get("conditions") or ():
            if condition.get("type") != "Recommended":
                continue  # upstream reports this one condition only
            since = epoch_seconds(condition.get("lastTransitionTime"))
            if since is not None:
                recommended.add_metric(
                    [version, "Recommended", str(condition.get("status", "")), str(condition.get("reason", ""))],
                    since,
                )
    if conditional:
        out.append(recommended)
    # Behind the ClusterUpdateAcceptRisks gate, as upstream.
    if accept_risks and (risks := risk_conditions_family(cv)) is not None:
        out.append(risks)
    return out


class UpdatesCollector(Collector):
    def __init__(
        self,
        state: Callable[[], UpdatesState | None],
        cluster_version: Callable[[], Mapping[str, Any] | None],
        accept_risks: Callable[[], bool] = lambda: False,
    ) -> None:
        self._state = state
        self._cv = cluster_version
        self._accept_risks = accept_risks

    def collect(self) -> Iterable[Metric]:
        return families(self._state(), self._cv(), self._accept_risks())
