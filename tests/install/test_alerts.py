"""install/'s alerting rules as upstream's CVO ships them (names, groups, `for:`, severity, the
annotations the references quote, and runbook URLs that exist in openshift/runbooks), read from
the rendered manifests. Their behaviour is unit-tested with promtool (tests/rules/)."""

from __future__ import annotations

from typing import Any

from testkit.harness import manifests

RUNBOOKS = "https://github.com/openshift/runbooks/blob/master/alerts/"
# alert: (PrometheusRule, group, for, severity, runbook file or None)
UPSTREAM = {
    "ClusterVersionOperatorDown": ("cluster-version-operator", "cluster-version", "10m", "critical",
                                   "cluster-version-operator/ClusterVersionOperatorDown.md"),
    "CannotRetrieveUpdates": ("cluster-version-operator", "cluster-version", None, "warning", None),
    "UpdateAvailable": ("cluster-version-operator", "cluster-version", None, "info", None),
    "ClusterReleaseNotAccepted": ("cluster-version-operator", "cluster-version", "60m", "warning", None),
    "ClusterNotUpgradeable": ("cluster-version-operator", "cluster-operators", "60m", "info", None),
    # The cluster monitoring operator's runbooks, where openshift/runbooks keeps them.
    "ClusterOperatorDown": ("cluster-version-operator", "cluster-operators", "10m", "critical",
                            "cluster-monitoring-operator/ClusterOperatorDown.md"),
    "ClusterOperatorDegraded": ("cluster-version-operator", "cluster-operators", "30m", "warning",
                                "cluster-monitoring-operator/ClusterOperatorDegraded.md"),
    "ClusterOperatorFlapping": ("cluster-version-operator", "cluster-operators", "10m", "warning", None),
    "CannotEvaluateConditionalUpdates": ("cluster-version-operator", "cluster-operators", None, "warning", None),
    "OpenShiftUpdateRiskMightApply": ("cluster-version-operator-accept-risks", "cluster-version-tech-preview", "15m",
                                      "warning", "cluster-version-operator/OpenShiftUpdateRiskMightApply.md"),
}
SUMMARIES = {
    "ClusterNotUpgradeable": "One or more cluster operators have been blocking minor or major version cluster "
    "updates for at least an hour.",
    "OpenShiftUpdateRiskMightApply": "The cluster might have been exposed to the conditional update risk for 15 "
    "minutes.",
}
DESCRIPTION_STARTS = {
    "ClusterNotUpgradeable": "In most cases, you will still be able to apply patch releases.",
    "OpenShiftUpdateRiskMightApply": "The conditional update risk {{ $labels.risk }} might apply to the cluster "
    "because of {{ $labels.reason }}, and the cluster update to a version exposed to the risk is not recommended. "
    "For more information refer to 'oc adm upgrade'.",
}


# Whole descriptions, as upstream has them since 2023 (the rendered text, before Prometheus fills it).
DESCRIPTIONS = {
    "CannotEvaluateConditionalUpdates": "Failure to evaluate conditional update matches means that Cluster Version "
    "Operator cannot decide whether an update path is recommended or not.",
}
RETRIEVED_UPDATES_POINTER = (
    "For more information refer to "
    """`oc get clusterversion/version -o=jsonpath="{.status.conditions[?(.type=='RetrievedUpdates')]}{'\\n'}"`"""
)


def cvo_alerts() -> dict[str, tuple[str, str, dict[str, Any]]]:
    out = {}
    for doc in manifests.load("0000_90_cluster-version-operator_*"):
        if doc["kind"] != "PrometheusRule":
            continue
        for group in doc["spec"]["groups"]:
            for rule in group["rules"]:
                assert rule["alert"] not in out, f"{rule['alert']} defined twice"
                out[rule["alert"]] = (doc["metadata"]["name"], group["name"], rule)
    return out


def test_the_alerts_are_upstreams() -> None:
    alerts = cvo_alerts()
    assert sorted(alerts) == sorted(UPSTREAM)
    for name, (rule_object, group, rule) in alerts.items():
        want_object, want_group, want_for, severity, runbook = UPSTREAM[name]
        assert (rule_object, group, rule.get("for"), rule["labels"]["severity"]) == (
            want_object, want_group, want_for, severity), name
        assert rule["annotations"].get("runbook_url") == (RUNBOOKS + runbook if runbook else None), name
        assert rule["annotations"]["summary"] and rule["annotations"]["description"], name


def test_the_annotations_the_references_quote() -> None:
    alerts = cvo_alerts()
    for name, summary in SUMMARIES.items():
        assert alerts[name][2]["annotations"]["summary"] == summary
    for name, start in DESCRIPTION_STARTS.items():
        assert alerts[name][2]["annotations"]["description"].startswith(start)


def test_the_descriptions_upstream_changed_read_as_upstreams_now() -> None:
    """CannotRetrieveUpdates points at the RetrievedUpdates condition (which says why), and
    CannotEvaluateConditionalUpdates ends after what it means; the rule object calls for attention."""
    alerts = cvo_alerts()
    for name, description in DESCRIPTIONS.items():
        assert alerts[name][2]["annotations"]["description"] == description
    retrieve = alerts["CannotRetrieveUpdates"][2]["annotations"]["description"]
    assert RETRIEVED_UPDATES_POINTER + "{{ with $console_url" in retrieve
    assert "'oc adm upgrade'" not in retrieve
    [rules] = [d for d in manifests.load("0000_90_cluster-version-operator_03_prometheusrule.yaml")]
    assert rules["metadata"]["annotations"]["kubernetes.io/description"] == (
        "Alerting rules for when cluster-version operator metrics call for administrator attention.")


def test_the_accept_risks_rule_is_behind_its_feature_gate() -> None:
    [doc] = [d for d in manifests.load("0000_90_cluster-version-operator_*accept-risks*")]
    assert doc["metadata"]["annotations"]["release.openshift.io/feature-gate"] == "ClusterUpdateAcceptRisks"
