"""`desired_status` composed of one helper per field and condition is a fixed point: recomputing the
status it wrote, with the same observations and a later `now` within every grace period, changes
nothing (no condition flips, no transition time moves, no history entry is added), in every state
the status tests build. How the grace periods themselves move conditions is in
test_progress.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from payload.acceptance import payload_loaded, retrieval_failed, retrieving
from payload.release import Acceptance, Release
from status.clusterversion import desired as cs
from testkit.checkout import EXAMPLES
from updateservice.poller import UpdatesState, updates_status
from updateservice.retrieval import failure, succeeded

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
LATER = T0 + timedelta(minutes=25)  # within the shortest grace period (30 minutes)
IMG_A = "quay.io/openshift-release-dev/ocp-release@sha256:" + "a" * 64
IMG_B = "quay.io/openshift-release-dev/ocp-release@sha256:" + "b" * 64
RUNNING = Release("4.14.1", IMG_A)
TARGET = Release("4.14.2", IMG_B)
SPEC = {"clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13", "channel": "stable-4.14", "upstream": "http://u/graph"}


def co(name: str, version: str, available: str = "True", degraded: str = "False") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"},
        },
        "status": {
            "versions": [{"name": "operator", "version": version}],
            "conditions": [{"type": "Available", "status": available}, {"type": "Degraded", "status": degraded}],
        },
    }


def cv(status: dict[str, Any] | None = None, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "version", "generation": 3}, "spec": spec or dict(SPEC)}
    if status is not None:
        obj["status"] = status
    return obj


State = tuple[dict[str, Any], list[dict[str, Any]], cs.StatusInputs]


def states() -> Iterator[tuple[str, State]]:
    """Every branch of every helper, and each step of an update written by the one before."""
    done = [co("etcd", "4.14.1"), co("dns", "4.14.1")]
    installed = cs.desired_status(cv(), done, cs.StatusInputs(RUNNING), T0)
    to_b = {**SPEC, "desiredUpdate": {"image": IMG_B, "version": "4.14.2"}}
    graph = {"version": "4.14.1", "image": IMG_A, "url": "https://e/4.14.1", "channels": ["stable-4.14"]}
    found = UpdatesState(
        "http://u/graph", "stable-4.14", succeeded(), available=({"version": "4.14.2", "image": IMG_B},), current=graph
    )
    refused = UpdatesState("http://u/graph", "stable-4.14", failure("RemoteFailed", "refused"))
    yield "installing", (cv(), [co("etcd", "4.13.9"), co("dns", "4.14.1")], cs.StatusInputs(RUNNING))
    yield "no release operators", (cv(), [], cs.StatusInputs(RUNNING))
    yield "installed", (cv(installed), done, cs.StatusInputs(RUNNING))
    yield (
        "degraded",
        (cv(installed), [co("etcd", "4.14.1", degraded="True"), co("dns", "4.14.1")], cs.StatusInputs(RUNNING)),
    )
    yield (
        "unavailable and degraded",
        (
            cv(installed),
            [co("etcd", "4.14.1", available="False"), co("dns", "4.14.1", available="False", degraded="True")],
            cs.StatusInputs(RUNNING),
        ),
    )
    yield (
        "invalid spec",
        (cv(installed, {**SPEC, "desiredUpdate": {"version": "9.9.9"}}), done, cs.StatusInputs(RUNNING)),
    )
    yield "retrieval not reported", (cv(installed, to_b), done, cs.StatusInputs(RUNNING))
    yield (
        "retrieving",
        (cv(installed, to_b), done, cs.StatusInputs(RUNNING, Acceptance(TARGET, retrieving("4.14.2", IMG_B)))),
    )
    failed = Acceptance(TARGET, retrieval_failed("4.14.2", IMG_B, "Unable to download and prepare the update: boom"))
    yield "retrieval failed", (cv(installed, to_b), done, cs.StatusInputs(RUNNING, failed))
    accepted = Acceptance(TARGET, payload_loaded("4.14.2", IMG_B), verified=True)
    updating = cs.desired_status(cv(installed, to_b), done, cs.StatusInputs(RUNNING, accepted), T0)
    yield "accepted", (cv(installed, to_b), done, cs.StatusInputs(RUNNING, accepted))
    yield (
        "updating",
        (cv(updating, to_b), [co("etcd", "4.14.2"), co("dns", "4.14.1")], cs.StatusInputs(RUNNING, accepted)),
    )
    yield (
        "updating and degraded",
        (
            cv(updating, to_b),
            [co("etcd", "4.14.2", degraded="True"), co("dns", "4.14.1")],
            cs.StatusInputs(RUNNING, accepted),
        ),
    )
    yield (
        "updated",
        (cv(updating, to_b), [co("etcd", "4.14.2"), co("dns", "4.14.2")], cs.StatusInputs(RUNNING, accepted)),
    )
    yield (
        "updated, acceptance forgotten",
        (cv(updating, to_b), [co("etcd", "4.14.2"), co("dns", "4.14.2")], cs.StatusInputs(RUNNING)),
    )
    yield "request withdrawn", (cv(updating), done, cs.StatusInputs(RUNNING))
    yield (
        "capabilities implicitly enabled",
        (
            cv(installed, {**SPEC, "capabilities": {"baselineCapabilitySet": "None"}}),
            done,
            cs.StatusInputs(RUNNING, always_enabled=("Ingress",), prior_enabled=("Console",)),
        ),
    )
    yield "updates found", (cv(installed), done, cs.StatusInputs(RUNNING, updates=updates_status(found, SPEC)))
    yield "updates refused", (cv(installed), done, cs.StatusInputs(RUNNING, updates=updates_status(refused, SPEC)))


@pytest.mark.parametrize(("state"), [s for _, s in states()], ids=[name for name, _ in states()])
def test_desired_status_is_a_fixed_point(state: State) -> None:
    obj, operators, inputs = state
    first = cs.desired_status(obj, operators, inputs, T0 + timedelta(minutes=1))
    again = cs.desired_status({**obj, "status": first}, operators, inputs, LATER)
    assert again == first


def test_the_real_degraded_snapshot_is_a_fixed_point() -> None:
    path = EXAMPLES / "4.14.1-degraded-cv.yaml"
    if not path.exists():
        pytest.skip("../shared/oc-examples not found")
    obj = yaml.safe_load(path.read_text())
    operators = yaml.safe_load((EXAMPLES / "4.14.1-degraded-co.yaml").read_text())["items"]
    inputs = cs.StatusInputs(Release.from_dict(obj["status"]["desired"]))
    first = cs.desired_status(obj, operators, inputs, datetime(2023, 11, 3, 18, 0, tzinfo=UTC))
    assert cs.desired_status({**obj, "status": first}, operators, inputs, datetime(2023, 11, 4, tzinfo=UTC)) == first
