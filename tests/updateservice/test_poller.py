"""The available-updates poller against a real local update service (HTTP on 127.0.0.1), with the
ClusterVersion given as a plain object and `now` injected: every fault mode gives its reason."""

from __future__ import annotations

import copy
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cvo_py.runtime.promapi import APIError
from testkit.fakes.update_service import UpdateService, always_risk, graph, image_of, promql_risk
from updateservice.client import Transport, TransportError, fetch_graph
from updateservice.clusterrisks import ClusterRisk
from updateservice.poller import AvailableUpdatesPoller, PollerOptions, updates_status
from updateservice.recommend import EvaluationError

T0 = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
CLUSTER_ID = "0b0ea3b8-4d5e-4c0f-8c0a-4b7d3c5a9e11"
GRAPH = graph(
    ["4.16.3", "4.16.5", "4.16.8", "4.16.9"],
    edges=[("4.16.3", "4.16.5"), ("4.16.3", "4.16.8")],
    conditional=[([("4.16.3", "4.16.9")], [always_risk("DriverX", "Driver X may hang.")])],
    channels="stable-4.16,fast-4.16",
)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def service() -> Iterator[UpdateService]:
    with UpdateService(channels={"stable-4.16": GRAPH}) as svc:
        yield svc


def cluster_version(upstream: str, channel: str = "stable-4.16", version: str = "4.16.3") -> dict[str, Any]:
    return {"metadata": {"name": "version"},
            "spec": {"clusterID": CLUSTER_ID, "channel": channel, "upstream": upstream},
            "status": {"desired": {"version": version, "image": image_of(version)}}}


def make_poller(cv: dict[str, Any], clock: Clock, query: Any = None, timeout: float = 5.0,
                options: PollerOptions | None = None) -> AvailableUpdatesPoller:
    return AvailableUpdatesPoller(
        lambda: cv,
        fetch=lambda url, transport, total: fetch_graph(url, user_agent="ClusterVersionOperator/4.16.3",
                                                        transport=transport, total_timeout=total),
        transport=lambda: Transport(),
        query=query,
        on_change=lambda: None,
        options=options or PollerOptions(arch="amd64", total_timeout=timeout),
        now=clock,
    )


def fields(poller: AvailableUpdatesPoller, cv: dict[str, Any]) -> dict[str, Any]:
    out = updates_status(poller.state(), cv["spec"])
    assert out is not None
    return out


def test_available_and_conditional_updates_with_the_cvo_request(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    poller = make_poller(cv, Clock())
    poller.tick()
    out = fields(poller, cv)
    assert out["condition"] == {"type": "RetrievedUpdates", "status": "True"}
    assert [r["version"] for r in out["availableUpdates"]] == ["4.16.8", "4.16.5"]
    assert out["availableUpdates"][0]["channels"] == ["fast-4.16", "stable-4.16"]
    (conditional,) = out["conditionalUpdates"]
    assert conditional["release"]["version"] == "4.16.9"
    assert conditional["conditions"][0]["status"] == "False"
    assert conditional["conditions"][0]["reason"] == "DriverX"
    assert out["current"]["url"] == "https://access.example.com/errata/4.16.3"
    assert service.requests[-1] == {"arch": ["amd64"], "channel": ["stable-4.16"], "id": [CLUSTER_ID],
                                    "version": ["4.16.3"]}
    assert service.headers[-1]["Accept"] == "application/json"
    assert service.headers[-1]["User-Agent"] == "ClusterVersionOperator/4.16.3"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("fault", "reason", "message"),
    [
        ("error", "ResponseFailed", "unexpected HTTP status: 500 Internal Server Error"),
        ("garbage", "ResponseInvalid", "invalid character '<'"),
        ("huge", "ResponseFailed", "larger than the 8388608 bytes accepted"),
        ("endless", "ResponseFailed", "context deadline exceeded"),
        ("slow", "RemoteFailed", "context deadline exceeded"),
        ("slow-headers", "RemoteFailed", "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"),
        ("missing-version", "VersionNotFound",
         'currently reconciling cluster version 4.16.3 not found in the "stable-4.16" channel'),
    ],
)
def test_fault_modes(service: UpdateService, fault: str, reason: str, message: str) -> None:
    service.fault = fault
    cv = cluster_version(service.url)
    poller = make_poller(cv, Clock(), timeout=1.0)
    poller.tick()
    condition = fields(poller, cv)["condition"]
    assert condition["status"] == "False" and condition["reason"] == reason
    assert condition["message"].startswith("Unable to retrieve available updates: ")
    assert message in condition["message"]


def test_unreachable_and_unknown_channel(service: UpdateService) -> None:
    url = f"http://127.0.0.1:{closed_port()}/graph"
    cv = cluster_version(url)
    poller = make_poller(cv, Clock())
    poller.tick()
    condition = fields(poller, cv)["condition"]
    assert condition["reason"] == "RemoteFailed"
    assert condition["message"] == (
        f'Unable to retrieve available updates: Get "{url}?arch=amd64&channel=stable-4.16&id={CLUSTER_ID}'
        f'&version=4.16.3": dial tcp 127.0.0.1:{url.split(":")[2].split("/")[0]}: connect: connection refused')
    other = cluster_version(service.url, channel="nope-4.16")
    poller = make_poller(other, Clock())
    poller.tick()
    assert fields(poller, other)["condition"]["message"].endswith("unexpected HTTP status: 404 Not Found")


def test_a_failed_refresh_keeps_the_last_good_updates_and_a_new_channel_clears_them(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    clock = Clock()
    poller = make_poller(cv, clock)
    poller.tick()
    service.fault = "error"
    clock.now += timedelta(minutes=5)
    poller.tick()
    out = fields(poller, cv)
    assert out["condition"]["reason"] == "ResponseFailed"
    assert [r["version"] for r in out["availableUpdates"]] == ["4.16.8", "4.16.5"]
    service.fault = None
    cv["spec"]["channel"] = "fast-4.16"
    service.channels["fast-4.16"] = graph(["4.16.3", "4.17.0"], edges=[("4.16.3", "4.17.0")])
    clock.now += timedelta(seconds=1)
    poller.tick()  # a channel change is fetched at once, not at the next interval
    out = fields(poller, cv)
    assert [r["version"] for r in out["availableUpdates"]] == ["4.17.0"]
    assert out["conditionalUpdates"] is None


def test_lists_nobody_could_confirm_for_a_day_are_cleared(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    clock = Clock()
    poller = make_poller(cv, clock)
    poller.tick()
    service.fault = "error"
    clock.now += timedelta(hours=23)
    poller.tick()
    assert [r["version"] for r in fields(poller, cv)["availableUpdates"]] == ["4.16.8", "4.16.5"]
    clock.now += timedelta(hours=1, minutes=1)  # a day and a minute after the last success
    poller.tick()
    out = fields(poller, cv)
    assert out["condition"]["reason"] == "ResponseFailed"
    assert out["availableUpdates"] is None and out["conditionalUpdates"] is None
    service.fault = None
    clock.now += timedelta(minutes=5)
    poller.tick()  # a success brings them back
    assert [r["version"] for r in fields(poller, cv)["availableUpdates"]] == ["4.16.8", "4.16.5"]


def test_a_multi_architecture_payload_asks_for_the_multi_graph(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    clock = Clock()
    poller = make_poller(cv, clock, options=PollerOptions(running_multi=True, total_timeout=5.0))
    poller.tick()
    assert service.requests[-1]["arch"] == ["multi"]
    # Its updates, not only its own version (what a single-architecture cluster moving to multi gets).
    assert [r["version"] for r in fields(poller, cv)["availableUpdates"]] == ["4.16.8", "4.16.5"]
    # `oc adm upgrade --to-multi-arch` on a single-architecture cluster: the multi payload of its version.
    cv["spec"]["desiredUpdate"] = {"architecture": "Multi", "version": "4.16.3"}
    single = make_poller(cv, clock, options=PollerOptions(arch="amd64", total_timeout=5.0))
    single.tick()
    assert service.requests[-1]["arch"] == ["multi"]
    assert [r["version"] for r in fields(single, cv)["availableUpdates"]] == ["4.16.3"]


def test_a_new_running_version_is_asked_about_at_once(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    clock = Clock()
    poller = make_poller(cv, clock)
    poller.tick()
    cv["status"]["desired"] = {"version": "4.16.5", "image": image_of("4.16.5")}
    clock.now += timedelta(seconds=5)
    poller.tick()
    assert service.requests[-1]["version"] == ["4.16.5"]
    assert fields(poller, cv)["availableUpdates"] is None


def test_promql_risks_are_evaluated_one_query_a_second() -> None:
    doc = graph(["4.16.3", "4.16.9", "4.16.10"],
                conditional=[([("4.16.3", "4.16.9")], [promql_risk("A", "a_query")]),
                             ([("4.16.3", "4.16.10")], [promql_risk("B", "b_query")])])
    answers = {"a_query": True, "b_query": False}
    asked: list[str] = []

    def query(q: str) -> bool:
        asked.append(q)
        return answers[q]

    with UpdateService(channels={"stable-4.16": doc}) as svc:
        cv = cluster_version(svc.url)
        clock = Clock()
        poller = make_poller(cv, clock, query=query)
        wait = poller.tick()
        first = fields(poller, cv)["conditionalUpdates"]
        # Newest target first: B is asked; A's query is throttled (one a second) and Unknown for now.
        assert {u["release"]["version"]: u["conditions"][0]["status"] for u in first} == {
            "4.16.10": "True", "4.16.9": "Unknown"}
        assert "evaluation is throttled until 12:00:01Z" in first[1]["conditions"][0]["message"]
        assert wait == 1.0
        clock.now += timedelta(seconds=1)
        poller.tick()
        out = fields(poller, cv)
        assert {u["release"]["version"]: u["conditions"][0]["status"] for u in out["conditionalUpdates"]} == {
            "4.16.10": "True", "4.16.9": "False"}
        assert [r["version"] for r in out["availableUpdates"]] == ["4.16.10"]
        assert sorted(asked) == ["a_query", "b_query"]


def test_evaluation_failures_are_reported() -> None:
    def query(_q: str) -> bool:
        raise EvaluationError("Get \"https://thanos/api/v1/query\": connection refused")

    doc = graph(["4.16.3", "4.16.9"], conditional=[([("4.16.3", "4.16.9")], [promql_risk("A", "q", "A hurts.")])])
    with UpdateService(channels={"stable-4.16": doc}) as svc:
        cv = cluster_version(svc.url)
        poller = make_poller(cv, Clock(), query=query)
        poller.tick()
        condition = fields(poller, cv)["conditionalUpdates"][0]["conditions"][0]
        assert condition["status"] == "Unknown" and condition["reason"] == "EvaluationFailed"
        assert condition["message"].startswith("Could not evaluate exposure to update risk A (Get ")
        assert "A description: A hurts." in condition["message"]


def test_without_prometheus_risks_are_unknown_and_say_why() -> None:
    doc = graph(["4.16.3", "4.16.9"], conditional=[([("4.16.3", "4.16.9")], [promql_risk("A", "q")])])
    with UpdateService(channels={"stable-4.16": doc}) as svc:
        cv = cluster_version(svc.url)
        poller = make_poller(cv, Clock())
        poller.tick()
        message = fields(poller, cv)["conditionalUpdates"][0]["conditions"][0]["message"]
        assert "no Prometheus query endpoint is configured" in message


def test_prechecks_need_no_request(service: UpdateService) -> None:
    cv = cluster_version(service.url, channel="")
    poller = make_poller(cv, Clock())
    poller.tick()
    assert fields(poller, cv)["condition"]["reason"] == "NoChannel"
    assert service.requests == []


def test_state_applies_only_to_the_upstream_and_channel_it_was_retrieved_for(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    poller = make_poller(cv, Clock())
    poller.tick()
    other = copy.deepcopy(cv["spec"])
    other["channel"] = "fast-4.16"
    assert updates_status(poller.state(), other) is None


def test_the_thread_follows_pokes_and_stops(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    changed = threading.Event()
    poller = AvailableUpdatesPoller(
        lambda: cv, fetch=lambda url, t, total: fetch_graph(url, user_agent="x", transport=t, total_timeout=total),
        transport=Transport, query=None, on_change=changed.set, options=PollerOptions(arch="amd64"),
    ).start()
    try:
        assert changed.wait(10)
        changed.clear()
        cv["spec"]["channel"] = "fast-4.16"
        service.channels["fast-4.16"] = graph(["4.16.3", "4.17.0"], edges=[("4.16.3", "4.17.0")])
        poller.poke()
        assert changed.wait(10)
    finally:
        poller.stop()
    assert "available-updates" not in {t.name for t in threading.enumerate()}


def test_an_unreadable_proxy_or_ca_configuration_is_retried_and_not_reported(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    broken = True

    def transport() -> Transport:
        if broken:
            raise TransportError("reading Proxy cluster: 503")
        return Transport()

    poller = AvailableUpdatesPoller(
        lambda: cv, fetch=lambda url, t, total: fetch_graph(url, user_agent="x", transport=t, total_timeout=total),
        transport=transport, query=None, on_change=lambda: None, options=PollerOptions(arch="amd64"), now=Clock(),
    )
    first, second = poller.tick(), poller.tick()
    assert 0 < first < second <= 1000  # backing off
    assert poller.state() is None and service.requests == []
    broken = False
    poller.tick()
    assert fields(poller, cv)["condition"]["status"] == "True"


# -- in-cluster risks (the ClusterUpdateAcceptRisks gate) ------------------------------------------------

FIRING = {"labels": {"alertname": "EtcdDown", "severity": "critical"}, "state": "firing",
          "annotations": {"summary": "etcd is down", "description": "d", "runbook_url": "https://r.example/etcd"},
          "activeAt": "2026-11-23T11:00:00Z"}
PENDING = {**FIRING, "labels": {"alertname": "EtcdSlow", "severity": "critical"}, "state": "pending"}


class Alerts:
    """What GET /api/v1/alerts answers, or the APIError it raises."""

    def __init__(self, *alerts: dict[str, Any]) -> None:
        self.answer: list[dict[str, Any]] | APIError = list(alerts)
        self.calls = 0

    def __call__(self) -> list[dict[str, Any]]:
        self.calls += 1
        if isinstance(self.answer, APIError):
            raise self.answer
        return self.answer


def gated_poller(cv: dict[str, Any], clock: Clock, alerts: Alerts, gate: bool) -> AvailableUpdatesPoller:
    return AvailableUpdatesPoller(
        lambda: cv,
        fetch=lambda url, transport, total: fetch_graph(url, user_agent="test", transport=transport,
                                                        total_timeout=total),
        transport=lambda: Transport(), query=None, on_change=lambda: None, alerts=alerts,
        options=PollerOptions(arch="amd64", accept_risks=gate, alerts_interval=timedelta(seconds=30)), now=clock,
    )


def test_gate_off_in_cluster_risks_change_nothing(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    plain = make_poller(cv, Clock())
    plain.tick()
    alerts = Alerts(FIRING)
    poller = gated_poller(cv, Clock(), alerts, gate=False)
    poller.set_upgradeable_risks([ClusterRisk("ClusterVersionOverrides", "m", "https://u")])
    poller.tick()
    assert fields(poller, cv) == fields(plain, cv)
    assert alerts.calls == 0  # not even read
    assert fields(poller, cv)["conditionalUpdateRisks"] is None


def test_gate_on_a_firing_alert_guards_every_update_and_the_last_good_answer_is_kept(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    clock = Clock()
    alerts = Alerts(FIRING, PENDING)
    poller = gated_poller(cv, clock, alerts, gate=True)
    poller.tick()
    out = fields(poller, cv)
    assert out["availableUpdates"] is None
    assert [(u["release"]["version"], u["riskNames"]) for u in out["conditionalUpdates"]] == [
        ("4.16.9", ["DriverX", "EtcdDown"]), ("4.16.8", ["EtcdDown"]), ("4.16.5", ["EtcdDown"])]
    assert [r["name"] for r in out["conditionalUpdateRisks"]] == ["DriverX", "EtcdDown"]  # the pending one is not
    etcd = out["conditionalUpdateRisks"][1]
    assert (etcd["message"], etcd["url"], etcd["conditions"][0]["reason"]) == (
        "etcd is down.", "https://r.example/etcd", "Alert:firing")
    assert etcd["conditions"][0]["lastTransitionTime"] == "2026-11-23T11:00:00Z"

    alerts.answer = APIError("https://thanos/api/v1/alerts: connection refused")
    clock.now += timedelta(minutes=1)
    poller.tick()
    assert alerts.calls == 2 and fields(poller, cv)["conditionalUpdates"] == out["conditionalUpdates"]

    alerts.answer = []  # resolved: a new answer recomputes the updates before the next fetch is due
    clock.now += timedelta(seconds=30)
    poller.tick()
    out = fields(poller, cv)
    assert [r["version"] for r in out["availableUpdates"]] == ["4.16.8", "4.16.5"]
    assert [u["release"]["version"] for u in out["conditionalUpdates"]] == ["4.16.9"]


def test_gate_on_upgradeable_risks_guard_bump_targets_only() -> None:
    doc = graph(["4.16.3", "4.16.5", "4.17.1"], edges=[("4.16.3", "4.16.5"), ("4.16.3", "4.17.1")])
    with UpdateService(channels={"stable-4.16": doc}) as svc:
        cv = cluster_version(svc.url)
        cv["spec"]["desiredUpdate"] = {"acceptRisks": [{"name": "ClusterVersionOverrides"}]}
        poller = gated_poller(cv, Clock(), Alerts(), gate=True)
        poller.tick()
        assert [r["version"] for r in fields(poller, cv)["availableUpdates"]] == ["4.17.1", "4.16.5"]
        poller.set_upgradeable_risks([ClusterRisk("ClusterVersionOverrides", "Overrides.", "https://u"),
                                      ClusterRisk("lower-case", "dropped", "https://u")])
        poller.tick()
        out = fields(poller, cv)
        (update,) = out["conditionalUpdates"]
        assert (update["release"]["version"], update["riskNames"]) == ("4.17.1", ["ClusterVersionOverrides"])
        assert update["conditions"][0]["reason"] == "AllExposedRisksAccepted"  # accepted
        assert [r["version"] for r in out["availableUpdates"]] == ["4.17.1", "4.16.5"]
        cv["spec"]["desiredUpdate"] = None
        poller.tick()
        recommended = fields(poller, cv)["conditionalUpdates"][0]["conditions"][0]
        assert (recommended["status"], recommended["reason"], recommended["message"]) == (
            "False", "ClusterVersionOverrides", "Overrides. https://u")


def test_gate_on_an_update_with_more_risks_than_status_holds_is_left_out_and_said(service: UpdateService) -> None:
    cv = cluster_version(service.url)
    storm = [{**FIRING, "labels": {"alertname": f"Alert{i:03d}", "severity": "critical"},
              "annotations": {"summary": "s"}} for i in range(199)]
    storm.append({**FIRING, "labels": {"alertname": "Long", "severity": "critical"},
                  "annotations": {"summary": "x" * 5000}})
    poller = gated_poller(cv, Clock(), Alerts(*storm), gate=True)
    poller.tick()
    out = fields(poller, cv)
    # 4.16.9 has DriverX besides the 200 alerts: left out whole; the others keep all 200, a long message cut.
    assert [u["release"]["version"] for u in out["conditionalUpdates"]] == ["4.16.8", "4.16.5"]
    assert all(len(u["riskNames"]) == 200 for u in out["conditionalUpdates"])
    assert all(len(r["message"]) <= 4096 for r in out["conditionalUpdateRisks"])
    assert out["condition"]["reason"] == "UpdatesOmitted"
    assert "(1 with more than 200 risks: 4.16.9)" in out["condition"]["message"]
    assert "the middle of 2 risk messages over 4096 characters" in out["condition"]["message"]


def test_gate_on_risks_past_500_names_leave_out_the_oldest_updates_and_say_so() -> None:
    """status.conditionalUpdateRisks holds at most 500 names (the CRD's limit, which upstream does
    not keep, so its every status write is then refused): the risks of the newest targets first."""
    groups = [([("4.16.3", f"4.16.{5 + i}")], [always_risk(f"U{i}R{j}") for j in range(200)]) for i in range(3)]
    doc = graph(["4.16.3", "4.16.5", "4.16.6", "4.16.7"], conditional=groups)
    with UpdateService(channels={"stable-4.16": doc}) as svc:
        cv = cluster_version(svc.url)
        poller = gated_poller(cv, Clock(), Alerts(), gate=True)
        poller.tick()
        out = fields(poller, cv)
    assert [u["release"]["version"] for u in out["conditionalUpdates"]] == ["4.16.7", "4.16.6"]
    assert len(out["conditionalUpdateRisks"]) == 400
    assert out["condition"]["reason"] == "UpdatesOmitted"
    assert "1 of 3 conditional updates (1 whose risks would take conditionalUpdateRisks past 500 names: 4.16.5)" in (
        out["condition"]["message"])
