"""Available updates on the real local API server: `start` (its Deployment's command line) asks a
local update service for `spec.channel` and writes availableUpdates, conditionalUpdates and
RetrievedUpdates as the CVO does; follows channel changes; gives each fault its reason; and a
PromQL risk evaluated against a real Prometheus matches and un-matches as the metric changes."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from cvo_py.runtime.kube import CLUSTERVERSIONS, CONFIGMAPS, MERGE_PATCH, KubeClient
from cvo_py.runtime.promapi import PrometheusAPI
from testkit.fakes.update_service import UpdateService, always_risk, graph, image_of, promql_risk
from testkit.harness.cluster import LocalCluster, free_port
from testkit.harness.clusterversion import (
    IMG_4141,
    condition,
    create_cv,
    enable_feature_gates,
    put_admin_acks,
    put_co,
    status_414,
)
from testkit.harness.payload import StartProcess, ensure_priority_class
from testkit.harness.prometheus import FAST as FAST_PROMETHEUS
from testkit.harness.prometheus import LocalPrometheus
from testkit.harness.wait import wait_until
from testkit.oracles.adm_upgrade import adm_upgrade
from updateservice.client import Transport, fetch_graph
from updateservice.poller import AvailableUpdatesPoller, PollerOptions, updates_status
from updateservice.prometheus import promql_query  # the adapter `start` uses

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

STABLE = graph(
    ["4.14.1", "4.14.2", "4.14.5", "4.14.7"],
    edges=[("4.14.1", "4.14.2"), ("4.14.1", "4.14.5")],
    conditional=[([("4.14.1", "4.14.7")], [always_risk("DriverX", "Driver X may hang.")])],
    channels="stable-4.14,fast-4.14",
)
FAST = graph(["4.14.1", "4.14.9"], edges=[("4.14.1", "4.14.9")], channels="fast-4.14")


@pytest.fixture
def service() -> Iterator[UpdateService]:
    with UpdateService(channels={"stable-4.14": STABLE, "fast-4.14": FAST}) as svc:
        yield svc


def cluster_version(kube: KubeClient) -> dict[str, Any]:
    return kube.get(CLUSTERVERSIONS, "version")


def versions(cv: dict[str, Any], field: str) -> list[str]:
    items = (cv.get("status") or {}).get(field) or []
    return [(i.get("release") or i).get("version", "") for i in items]


def retrieved(cv: dict[str, Any]) -> dict[str, Any]:
    return condition(cv, "RetrievedUpdates") or {}


def edit_spec(kube: KubeClient, changes: dict[str, Any]) -> None:
    """Change ClusterVersion's spec as an admin's `oc patch --type merge` does: `start` writes its
    status meanwhile, so a read-modify-write PUT of the whole object could meet a 409."""
    kube.patch(CLUSTERVERSIONS, "version", {"spec": changes}, content_type=MERGE_PATCH)


def set_channel(kube: KubeClient, channel: str) -> None:
    edit_spec(kube, {"channel": channel})


def test_start_writes_available_and_conditional_updates_and_follows_the_channel(
    kube: KubeClient, start: Any, service: UpdateService
) -> None:
    cluster_id = str(uuid.uuid4())
    create_cv(kube, {"clusterID": cluster_id, "channel": "stable-4.14", "upstream": service.url}, status_414())
    running = start(IMG_4141, "4.14.1", "--update-service=")  # spec.upstream, not the local default

    wait_until(lambda: versions(cluster_version(kube), "availableUpdates") == ["4.14.5", "4.14.2"],
               what="availableUpdates from the update service")
    cv = cluster_version(kube)
    assert retrieved(cv)["status"] == "True" and "reason" not in retrieved(cv)
    (conditional,) = cv["status"]["conditionalUpdates"]
    assert conditional["release"] == {"version": "4.14.7", "image": image_of("4.14.7"),
                                      "url": "https://access.example.com/errata/4.14.7",
                                      "channels": ["fast-4.14", "stable-4.14"]}
    (recommended,) = conditional["conditions"]
    assert (recommended["type"], recommended["status"], recommended["reason"]) == ("Recommended", "False", "DriverX")
    assert recommended["message"] == "Driver X may hang. https://issues.example.com/DriverX"
    assert cv["status"]["desired"]["channels"] == ["fast-4.14", "stable-4.14"]  # from the graph's current node
    # The CVO's request: the cluster's version, channel, ID and architecture.
    query = service.requests[-1]
    assert (query["version"], query["channel"], query["id"]) == (["4.14.1"], ["stable-4.14"], [cluster_id])
    assert query["arch"][0] and service.headers[-1]["User-Agent"] == "ClusterVersionOperator/4.14.1"

    out, err = adm_upgrade(cv)
    assert "Recommended updates:" in out and "4.14.5" in out and err == ""
    assert "Additional updates which are not recommended for your cluster configuration are available" in out

    set_channel(kube, "fast-4.14")  # a channel change is asked about at once, not at the next poll
    wait_until(lambda: versions(cluster_version(kube), "availableUpdates") == ["4.14.9"], what="the fast channel")
    assert cluster_version(kube)["status"].get("conditionalUpdates") is None

    metrics = running.metrics()
    assert metrics[f'cluster_version_available_updates{{channel="fast-4.14",upstream="{service.url}"}}'] == 1.0
    assert metrics['cluster_version_operator_update_retrieval_timestamp_seconds{name=""}'] > 0


@pytest.mark.parametrize(
    ("fault", "reason", "fragment"),
    [
        ("error", "ResponseFailed", "unexpected HTTP status: 500 Internal Server Error"),
        ("garbage", "ResponseInvalid", "invalid character '<'"),
        ("missing-version", "VersionNotFound",
         'currently reconciling cluster version 4.14.1 not found in the "stable-4.14" channel'),
    ],
)
def test_each_fault_of_the_update_service_is_its_reason(
    kube: KubeClient, start: Any, service: UpdateService, fault: str, reason: str, fragment: str
) -> None:
    service.fault = fault
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.14", "upstream": service.url}, status_414())
    start(IMG_4141, "4.14.1", "--update-service=")
    wait_until(lambda: retrieved(cluster_version(kube)).get("reason") == reason, what=f"RetrievedUpdates {reason}")
    condition_ = retrieved(cluster_version(kube))
    assert condition_["status"] == "False"
    assert condition_["message"].startswith("Unable to retrieve available updates: ")
    assert fragment in condition_["message"]
    _, err = adm_upgrade(cluster_version(kube))
    assert err.startswith(f"warning: Cannot display available updates:\n  Reason: {reason}\n")


def test_an_unreachable_update_service_and_no_channel(kube: KubeClient, start: Any) -> None:
    with UpdateService() as gone:
        url = gone.url  # a port that refuses once the service is closed
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "", "upstream": url}, status_414())
    start(IMG_4141, "4.14.1", "--update-service=")
    wait_until(lambda: retrieved(cluster_version(kube)).get("reason") == "NoChannel", what="NoChannel")
    assert retrieved(cluster_version(kube))["message"] == "The update channel has not been configured."
    set_channel(kube, "stable-4.14")
    wait_until(lambda: retrieved(cluster_version(kube)).get("reason") == "RemoteFailed", what="RemoteFailed")
    assert "connect: connection refused" in retrieved(cluster_version(kube))["message"]


# The last sample scraped, not the instant value: a scrape that fails under load (a 1 s scrape
# timeout on a busy machine) writes staleness markers, and an instant query then finds no series
# until the next good scrape. The risk is about the metric, not about the latest scrape.
DNS_DEGRADED = 'last_over_time(cluster_operator_conditions{name="dns", condition="Degraded"}[1m])'
DEGRADED = f"max({DNS_DEGRADED}) or vector(0)"


def test_a_promql_risk_matches_and_unmatches_as_the_metric_changes(
    cluster: LocalCluster, kube: KubeClient, namespace: str, tmp_path: Path,
    prometheus: Callable[..., LocalPrometheus],
) -> None:
    ensure_priority_class(kube)
    prom = prometheus()
    put_co(kube, "dns", "4.14.1", degraded="False")
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.14"}, status_414())
    # `start` serves cluster_operator_conditions; the local Prometheus scrapes it as the cluster's would.
    cert, key = prom.serving_certificate("cluster-version-operator")
    port = free_port()
    cvo = StartProcess(cluster.kubeconfig, namespace, tmp_path, "4.14.1", f"--listen=127.0.0.1:{port}",
                       f"--serving-cert-file={cert}", f"--serving-key-file={key}")
    prom.register("cluster-version-operator", f"127.0.0.1:{port}")
    doc = graph(["4.14.1", "4.14.7"], conditional=[([("4.14.1", "4.14.7")], [promql_risk("DNSDegraded", DEGRADED)])])
    api = PrometheusAPI(prom.url)
    clock = [datetime.now(UTC)]
    try:
        try:
            wait_until(lambda: bool(api.query(DNS_DEGRADED)), timeout=60, what="the dns condition scraped")
        except AssertionError as exc:  # say why: the target's health and last scrape error
            targets = [(t.get("scrapePool"), t.get("health"), t.get("lastError")) for t in prom.targets()]
            raise AssertionError(f"{exc}; scrape targets: {targets}") from None
        with UpdateService(channels={"stable-4.14": doc}) as svc:
            poller = AvailableUpdatesPoller(
                lambda: cluster_version(kube),
                fetch=lambda url, t, total: fetch_graph(url, user_agent="test", transport=t, total_timeout=total),
                transport=Transport, query=promql_query(api), on_change=lambda: None,
                options=PollerOptions(arch="amd64", risk_refresh=timedelta(0)), now=lambda: clock[0],
            )

            def recommended() -> dict[str, Any]:
                clock[0] += timedelta(minutes=5)  # past the poll interval and the query throttle
                poller.tick()
                state = updates_status(poller.state(), cluster_version(kube)["spec"])
                assert state is not None and state["conditionalUpdates"], state
                return dict(state["conditionalUpdates"][0]["conditions"][0])

            edit_spec(kube, {"upstream": svc.url})
            first = recommended()
            assert (first["status"], first["reason"]) == ("True", "NotExposedToRisks")
            put_co(kube, "dns", "4.14.1", degraded="True")
            wait_until(lambda: recommended()["status"] == "False", timeout=60, what="the risk to match")
            matched = recommended()
            assert matched["reason"] == "DNSDegraded"
            assert matched["message"] == "DNSDegraded applies. https://issues.example.com/DNSDegraded"
            put_co(kube, "dns", "4.14.1", degraded="False")
            wait_until(lambda: recommended()["status"] == "True", timeout=60, what="the risk to un-match")
    finally:
        cvo.stop()


def test_accepted_risks_with_the_gate_on(
    cluster: LocalCluster, kube: KubeClient, start: Any, service: UpdateService, featuregate_api: None
) -> None:
    """With ClusterUpdateAcceptRisks enabled for the running version, `start` honours
    spec.desiredUpdate.acceptRisks: the accepted risk's update is recommended (and available), each
    risk says whether it applies, status.conditionalUpdateRisks lists them, and
    cluster_version_risk_conditions is served."""
    cluster.install_clusterversion_crd("current")  # the CRD with the gated status fields
    enable_feature_gates(kube, "4.14.1", "ClusterUpdateAcceptRisks")
    spec = {"clusterID": str(uuid.uuid4()), "channel": "stable-4.14", "upstream": service.url,
            "desiredUpdate": {"acceptRisks": [{"name": "DriverX"}]}}
    create_cv(kube, spec, status_414())
    running = start(IMG_4141, "4.14.1", "--update-service=")

    def recommended(cv: dict[str, Any]) -> dict[str, Any]:
        conditional = (cv.get("status") or {}).get("conditionalUpdates") or [{}]
        return dict((conditional[0].get("conditions") or [{}])[0])

    wait_until(lambda: recommended(cluster_version(kube)).get("reason") == "AllExposedRisksAccepted",
               what="the accepted risk's update recommended")
    cv = cluster_version(kube)
    assert condition(cv, "Invalid") is None  # acceptRisks alone is a valid desiredUpdate with the gate
    assert recommended(cv)["status"] == "True"
    assert "4.14.7" in versions(cv, "availableUpdates")
    (conditional,) = cv["status"]["conditionalUpdates"]
    assert conditional["riskNames"] == ["DriverX"]
    (applies,) = conditional["risks"][0]["conditions"]
    assert (applies["type"], applies["status"], applies["reason"]) == ("Applies", "True", "Match")
    (risk,) = cv["status"]["conditionalUpdateRisks"]
    assert (risk["name"], risk["message"], risk["conditions"]) == ("DriverX", "Driver X may hang.", [applies])
    assert running.metrics()['cluster_version_risk_conditions{condition="Applies",reason="Match",risk="DriverX"}'] == 1

    # No longer accepted: not recommended again; the risks are still listed (the gate is on).
    edit_spec(kube, {"desiredUpdate": None})
    wait_until(lambda: recommended(cluster_version(kube)).get("reason") == "DriverX", what="the risk not accepted")
    cv = cluster_version(kube)
    assert "4.14.7" not in versions(cv, "availableUpdates")
    assert [r["name"] for r in cv["status"]["conditionalUpdateRisks"]] == ["DriverX"]


ALERT_SUMMARY = "The test etcd member is down"
ALERT_RUNBOOK = "https://runbooks.example.com/TestEtcdDown.md"


def firing_alert_prometheus(prometheus: Callable[..., LocalPrometheus], tmp_path: Path) -> LocalPrometheus:
    """A local Prometheus with a critical alert firing (and one that stays pending), once it fires."""
    rules = [
        {"alert": "TestEtcdDown", "expr": "vector(1)", "labels": {"severity": "critical"},
         "annotations": {"summary": ALERT_SUMMARY, "description": "etcd is down.", "runbook_url": ALERT_RUNBOOK}},
        {"alert": "TestStillPending", "expr": "vector(1)", "for": "1h", "labels": {"severity": "critical"}},
    ]
    path = tmp_path / "alerts.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "test-alerts", "interval": "1s", "rules": rules}]}))
    # install/'s alerts keep their own `for:` (10 minutes and more), so none of them (e.g. the critical
    # ClusterVersionOperatorDown, as nothing here is scraped as the CVO) fires during the test.
    prom = prometheus(**{**FAST_PROMETHEUS, "for_override": {}}, extra_rule_files=[str(path)])
    wait_until(lambda: prom.firing("TestEtcdDown"), timeout=60, what="the critical alert firing")
    return prom


def test_a_firing_critical_alert_guards_every_update_with_the_gate_on(
    cluster: LocalCluster, kube: KubeClient, start: Any, service: UpdateService, featuregate_api: None,
    prometheus: Callable[..., LocalPrometheus], tmp_path: Path,
) -> None:
    """With ClusterUpdateAcceptRisks, `start` reads the firing alerts from Prometheus: a critical one
    makes every update conditional with that risk (Applies=True, Alert:firing), listed in
    conditionalUpdateRisks and cluster_version_risk_conditions; a pending one is not a risk;
    accepting the alert's risk recommends the updates again."""
    prom = firing_alert_prometheus(prometheus, tmp_path)
    cluster.install_clusterversion_crd("current")
    enable_feature_gates(kube, "4.14.1", "ClusterUpdateAcceptRisks")
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.14", "upstream": service.url},
              status_414())
    running = start(IMG_4141, "4.14.1", "--update-service=", f"--promql-url={prom.url}")

    def guarded() -> list[str]:
        return [u["release"]["version"] for u in cluster_version(kube)["status"].get("conditionalUpdates") or []
                if "TestEtcdDown" in (u.get("riskNames") or [])]

    wait_until(lambda: guarded() == ["4.14.7", "4.14.5", "4.14.2"], what="every update guarded by the alert")
    cv = cluster_version(kube)
    assert not cv["status"].get("availableUpdates")
    by_version = {u["release"]["version"]: u for u in cv["status"]["conditionalUpdates"]}
    assert by_version["4.14.7"]["riskNames"] == ["DriverX", "TestEtcdDown"]
    plain = by_version["4.14.5"]
    assert plain["riskNames"] == ["TestEtcdDown"]
    recommended = plain["conditions"][0]
    assert (recommended["status"], recommended["reason"], recommended["message"]) == (
        "False", "TestEtcdDown", f"{ALERT_SUMMARY}. {ALERT_RUNBOOK}")
    (applies,) = plain["risks"][0]["conditions"]
    assert (applies["status"], applies["reason"]) == ("True", "Alert:firing")
    assert applies["message"] == (
        "critical alert TestEtcdDown firing, suggesting significant cluster issues worth investigating. "
        f"{ALERT_SUMMARY} The alert description is: etcd is down. {ALERT_RUNBOOK}")
    assert [r["name"] for r in cv["status"]["conditionalUpdateRisks"]] == ["DriverX", "TestEtcdDown"]
    metric = 'cluster_version_risk_conditions{condition="Applies",reason="Alert:firing",risk="TestEtcdDown"}'
    wait_until(lambda: running.metrics().get(metric) == 1, what="the alert risk's metric")

    edit_spec(kube, {"desiredUpdate": {"acceptRisks": [{"name": "TestEtcdDown"}]}})
    wait_until(lambda: versions(cluster_version(kube), "availableUpdates") == ["4.14.5", "4.14.2"],
               what="the updates recommended once the alert's risk is accepted")
    by_version = {u["release"]["version"]: u for u in cluster_version(kube)["status"]["conditionalUpdates"]}
    assert by_version["4.14.5"]["conditions"][0]["reason"] == "AllExposedRisksAccepted"
    assert by_version["4.14.7"]["conditions"][0]["status"] == "False"  # DriverX is not accepted


def test_a_firing_alert_changes_nothing_with_the_gate_off(
    cluster: LocalCluster, kube: KubeClient, start: Any, service: UpdateService,
    prometheus: Callable[..., LocalPrometheus], tmp_path: Path,
) -> None:
    prom = firing_alert_prometheus(prometheus, tmp_path)
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.14", "upstream": service.url},
              status_414())
    start(IMG_4141, "4.14.1", "--update-service=", f"--promql-url={prom.url}")
    wait_until(lambda: retrieved(cluster_version(kube)).get("status") == "True", what="the updates retrieved")
    cv = cluster_version(kube)
    assert versions(cv, "availableUpdates") == ["4.14.5", "4.14.2"]
    (conditional,) = cv["status"]["conditionalUpdates"]
    assert conditional["release"]["version"] == "4.14.7" and "riskNames" not in conditional
    assert [r["name"] for r in conditional["risks"]] == ["DriverX"]
    assert "conditionalUpdateRisks" not in cv["status"]


PATCH_AND_MINOR = graph(["4.14.1", "4.14.5", "4.15.2"], edges=[("4.14.1", "4.14.5"), ("4.14.1", "4.15.2")])


def minor_update_guarded(
    cluster: LocalCluster, kube: KubeClient, start: Any, upstream: str, **spec: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`start` at 4.14.1 with ClusterUpdateAcceptRisks, offered a patch and a minor update, once an
    Upgradeable risk guards the minor one (not the patch one): the ClusterVersion and that update."""
    cluster.install_clusterversion_crd("current")
    enable_feature_gates(kube, "4.14.1", "ClusterUpdateAcceptRisks")
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.14", "upstream": upstream, **spec},
              status_414())
    start(IMG_4141, "4.14.1", "--update-service=")
    wait_until(lambda: versions(cluster_version(kube), "conditionalUpdates") == ["4.15.2"],
               what="the minor update guarded by an Upgradeable risk")
    cv = cluster_version(kube)
    assert versions(cv, "availableUpdates") == ["4.14.5"]
    (update,) = cv["status"]["conditionalUpdates"]
    return cv, update


def test_the_upgradeable_risks_guard_minor_updates_with_the_gate_on(
    cluster: LocalCluster, kube: KubeClient, start: Any, featuregate_api: None
) -> None:
    """With ClusterUpdateAcceptRisks, what blocks Upgradeable (here an unmanaged override) also
    guards the update to the next minor, not the patch update; accepting it recommends the minor
    update while Upgradeable stays False."""
    override = {"kind": "Deployment", "group": "apps", "name": "x", "namespace": "y", "unmanaged": True}
    with UpdateService(channels={"stable-4.14": PATCH_AND_MINOR}) as svc:
        cv, update = minor_update_guarded(cluster, kube, start, svc.url, overrides=[override])
        assert update["riskNames"] == ["ClusterVersionOverrides"]
        assert (update["conditions"][0]["status"], update["conditions"][0]["reason"]) == (
            "False", "ClusterVersionOverrides")
        assert (condition(cv, "Upgradeable") or {}).get("reason") == "ClusterVersionOverrides"

        edit_spec(kube, {"desiredUpdate": {"acceptRisks": [{"name": "ClusterVersionOverrides"}]}})
        wait_until(lambda: versions(cluster_version(kube), "availableUpdates") == ["4.15.2", "4.14.5"],
                   what="the minor update recommended once the risk is accepted")
        assert (condition(cluster_version(kube), "Upgradeable") or {}).get("status") == "False"

        edit_spec(kube, {"overrides": None})
        wait_until(lambda: not cluster_version(kube)["status"].get("conditionalUpdates"),
                   what="no conditional update once nothing blocks Upgradeable")


def test_an_admin_ack_configmap_that_cannot_be_read_guards_minor_updates_with_the_gate_on(
    cluster: LocalCluster, kube: KubeClient, start: Any, featuregate_api: None
) -> None:
    """With ClusterUpdateAcceptRisks, a missing admin-acks ConfigMap is the risk AdminAckUnknown, as
    upstream's: it guards the minor update (not the patch update), is listed in
    conditionalUpdateRisks and applies; recreating the ConfigMap lifts it."""
    with UpdateService(channels={"stable-4.14": PATCH_AND_MINOR}) as svc:
        kube.delete(CONFIGMAPS, "admin-acks", "openshift-config")
        cv, update = minor_update_guarded(cluster, kube, start, svc.url)
        assert update["riskNames"] == ["AdminAckUnknown"]
        message = ('Failed to retrieve ConfigMap admin-acks from namespace openshift-config: configmap "admin-acks" '
                   "not found")
        (risk,) = cv["status"]["conditionalUpdateRisks"]
        assert (risk["name"], risk["message"], risk["conditions"][0]["status"]) == ("AdminAckUnknown", message, "True")
        assert (update["conditions"][0]["status"], update["conditions"][0]["reason"]) == ("False", "AdminAckUnknown")
        assert condition(cv, "Upgradeable") == {**(condition(cv, "Upgradeable") or {}), "status": "False",
                                                "reason": "AdminAckUnknown", "message": message}

        put_admin_acks(kube, {}, {})
        wait_until(lambda: versions(cluster_version(kube), "availableUpdates") == ["4.15.2", "4.14.5"],
                   what="the minor update recommended once admin-acks is back")
        assert condition(cluster_version(kube), "Upgradeable") is None
