"""What the available-updates poller found reaches ClusterVersion status, for its spec only."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from payload.release import Release
from status.clusterversion import desired as cs
from status.clusterversion.conditions import find_condition
from updateservice.poller import UpdatesState, updates_status
from updateservice.retrieval import failure, succeeded

T0 = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
IMG = "quay.io/openshift-release-dev/ocp-release@sha256:" + "a" * 64
RUNNING = Release("4.16.3", IMG)
SPEC = {"clusterID": "0b0ea3b8-4d5e-4c0f-8c0a-4b7d3c5a9e11", "channel": "stable-4.16", "upstream": "http://u/graph"}
FIVE = {"version": "4.16.5", "image": "five"}
NINE = {"release": {"version": "4.16.9", "image": "nine"}, "risks": [],
        "conditions": [{"type": "Recommended", "status": "False", "reason": "R", "message": "m",
                        "lastTransitionTime": "2026-11-23T11:00:00Z"}]}


def status_with(state: UpdatesState | None, spec: dict[str, Any] = SPEC) -> dict[str, Any]:
    cv = {"metadata": {"name": "version", "generation": 1}, "spec": spec}
    inputs = cs.StatusInputs(RUNNING, updates=updates_status(state, spec))
    return cs.desired_status(cv, [], inputs, T0)


def retrieved(status: dict[str, Any]) -> dict[str, Any]:
    found = find_condition(status["conditions"], "RetrievedUpdates")
    assert found is not None
    return dict(found)


def test_before_any_attempt_the_first_sync_placeholder_is_written() -> None:
    status = status_with(None)
    assert retrieved(status) == {"type": "RetrievedUpdates", "status": "False",
                                 "lastTransitionTime": "2026-11-23T12:00:00Z"}
    assert status["availableUpdates"] is None


def test_lists_condition_and_desired_metadata_from_the_graph() -> None:
    current = {"version": "4.16.3", "image": IMG, "url": "https://e/4.16.3", "channels": ["fast-4.16", "stable-4.16"]}
    state = UpdatesState("http://u/graph", "stable-4.16", succeeded(), available=(FIVE,), conditional=(NINE,),
                         current=current)
    status = status_with(state)
    assert status["availableUpdates"] == [FIVE]
    assert status["conditionalUpdates"] == [NINE]
    assert retrieved(status)["status"] == "True" and "reason" not in retrieved(status)
    assert status["desired"]["url"] == "https://e/4.16.3"
    assert status["desired"]["channels"] == ["fast-4.16", "stable-4.16"]


def test_a_failure_is_written_with_its_reason_and_message() -> None:
    state = UpdatesState("http://u/graph", "stable-4.16", failure("RemoteFailed", 'Get "http://u/graph": refused'),
                         available=(FIVE,))
    status = status_with(state)
    assert retrieved(status)["reason"] == "RemoteFailed"
    assert retrieved(status)["message"] == 'Unable to retrieve available updates: Get "http://u/graph": refused'
    assert status["availableUpdates"] == [FIVE]  # the last good list, marked by the condition


def test_findings_for_another_channel_are_not_written() -> None:
    state = UpdatesState("http://u/graph", "fast-4.16", succeeded(), available=(FIVE,))
    status = status_with(state)
    assert status["availableUpdates"] is None
    assert retrieved(status)["status"] == "False"
