"""What a status sync asks payload retrieval for: the target and force spec.desiredUpdate names,
the precondition checks bound to what that sync saw, and the text of what they read."""

from __future__ import annotations

import copy
from typing import Any

from payload.release import Release
from status.clusterversion.desired import StatusInputs
from status.clusterversion.retrievalrequest import ClusterChecks, checks_inputs, retrieval_request
from testkit.harness.clusterversion import IMG_4141, status_414

RUNNING = Release("4.14.1", IMG_4141)
IMG_4160 = "quay.io/openshift-release-dev/ocp-release@sha256:" + "6" * 64


def cv(desired_update: dict[str, Any] | None = None, channel: str = "stable-4.14") -> dict[str, Any]:
    spec: dict[str, Any] = {"clusterID": "2f0c1f6e-0b8a-4a55-9d1e-3c3e5b1e7a10", "channel": channel}
    if desired_update is not None:
        spec["desiredUpdate"] = desired_update
    return {"metadata": {"name": "version", "resourceVersion": "7"}, "spec": spec, "status": status_414()}


def test_nothing_is_asked_for_without_a_target_other_than_the_current_release() -> None:
    inputs = StatusInputs(RUNNING)
    assert retrieval_request(cv(), cv(), [], inputs) is None
    current = cv({"version": "4.14.1", "image": IMG_4141})
    assert retrieval_request(current, current, [], inputs) is None


def test_the_request_names_the_target_and_force_and_carries_checks_bound_to_what_the_sync_saw() -> None:
    asked = cv({"version": "4.16.0", "image": IMG_4160, "force": True})
    seen = copy.deepcopy(asked)
    seen["metadata"]["resourceVersion"] = "8"  # our last write, newer than the cache
    inputs = StatusInputs(RUNNING)
    request = retrieval_request(asked, seen, [], inputs)
    assert request is not None and request.key == (Release("4.16.0", IMG_4160), True)
    assert request.checks == ClusterChecks(seen, [], inputs)
    assert request.checks_inputs() == checks_inputs(seen)


def test_the_bound_checks_refuse_a_giant_hop_unless_forced() -> None:
    checks = ClusterChecks(cv(), [], StatusInputs(RUNNING))
    target = Release("4.16.0", IMG_4160)
    refused = checks(target, False)
    assert refused.blocked and 'Precondition "ClusterVersionGiantHop" failed' in refused.message
    forced = checks(target, True)
    assert not forced.blocked and 'Precondition "ClusterVersionGiantHop" failed' in forced.message


def test_what_the_checks_read_changes_with_upgradeable_and_the_channel_not_with_release_accepted() -> None:
    before = cv()
    accepted = cv()
    accepted["status"]["conditions"].append({"type": "ReleaseAccepted", "status": "False", "reason": "x"})
    assert checks_inputs(accepted) == checks_inputs(before)  # a refusal itself changes nothing it read
    blocked = cv()
    next(c for c in blocked["status"]["conditions"] if c["type"] == "Upgradeable")["status"] = "False"
    assert checks_inputs(blocked) != checks_inputs(before)
    assert checks_inputs(cv(channel="fast-4.14")) != checks_inputs(before)


def test_a_restarted_operator_retrieves_the_release_it_was_updating_to() -> None:
    """The spec names the release status already names as desired, but the sync worker applies
    another one (a restarted operator of the older release, mid-update): it is retrieved again, as
    upstream's worker reloads it; once the worker applies it, nothing is asked."""
    updating = cv({"version": "4.16.0", "image": IMG_4160})
    updating["status"]["desired"] = {"version": "4.16.0", "image": IMG_4160}
    inputs = StatusInputs(RUNNING)
    assert retrieval_request(updating, updating, [], inputs) is None  # no worker: nothing to resume
    request = retrieval_request(updating, updating, [], inputs, applied=RUNNING)
    assert request is not None and request.key == (Release("4.16.0", IMG_4160), False)
    assert retrieval_request(updating, updating, [], inputs, applied=Release("4.16.0", IMG_4160)) is None
