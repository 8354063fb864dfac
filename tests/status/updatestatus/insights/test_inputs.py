"""What the caches keep of each object, and the facts read from the machine-config objects: one
definition for the controller, `upgrade-status --watch` and the one-shot reads."""

from __future__ import annotations

import pytest

from cvo_py.runtime.kube import JSON
from status.updatestatus.insights.inputs import (
    machineconfig_transform,
    machineconfig_versions,
    mco_image,
    node_transform,
    read_alike,
)
from status.updatestatus.insights.mco import RELEASE_IMAGE_VERSION as RELEASE_VERSION_ANNOTATION
from status.updatestatus.insights.objects import InputError


def test_machineconfig_transform_keeps_only_name_and_release_version() -> None:
    mc = {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": {
            "name": "rendered-worker-1",
            "resourceVersion": "7",
            "annotations": {RELEASE_VERSION_ANNOTATION: "4.16.0", "other": "x"},
            "managedFields": [{"manager": "m"}],
        },
        "spec": {"config": {"storage": {"files": ["x" * 10000]}}},
    }
    kept = machineconfig_transform(mc)
    assert kept == {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": {
            "name": "rendered-worker-1",
            "resourceVersion": "7",
            "annotations": {RELEASE_VERSION_ANNOTATION: "4.16.0"},
        },
    }
    assert machineconfig_versions([kept, machineconfig_transform({"metadata": {"name": "no-version"}})]) == {
        "rendered-worker-1": "4.16.0"
    }


def test_node_transform_drops_bulk_and_heartbeats() -> None:
    def node(rv: str, heartbeat: str) -> dict[str, object]:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": "n1",
                "resourceVersion": rv,
                "uid": "u",
                "creationTimestamp": "2024-01-01T00:00:00Z",
                "labels": {"node-role.kubernetes.io/worker": ""},
                "annotations": {
                    "machineconfiguration.openshift.io/state": "Done",
                    "volumes.kubernetes.io/x": "y",
                },
                "managedFields": [{"manager": "kubelet"}],
            },
            "spec": {"unschedulable": True},
            "status": {
                "images": [{"names": ["quay.io/x"], "sizeBytes": 1}],
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastHeartbeatTime": heartbeat,
                        "lastTransitionTime": "2024-01-01T00:00:00Z",
                    }
                ],
            },
        }

    a, b = node_transform(node("1", "t1")), node_transform(node("2", "t2"))
    assert a["metadata"]["annotations"] == {"machineconfiguration.openshift.io/state": "Done"}
    assert "managedFields" not in a["metadata"] and "images" not in a["status"]
    assert a["status"]["conditions"] == [
        {"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    ]
    assert a["spec"] == {"unschedulable": True}
    # A heartbeat-only update is no change at all for the controller.
    assert read_alike(a, b)
    assert not read_alike(a, node_transform(node("3", "t3") | {"spec": {}}))


def deployment(*containers: JSON) -> JSON:
    return {"spec": {"template": {"spec": {"containers": list(containers)}}}}


@pytest.mark.parametrize(
    ("obj", "image"),
    [
        (None, ""),
        ({}, ""),
        ({"spec": []}, ""),
        (deployment({"name": "other", "image": "x"}), ""),
        (deployment({"name": "other", "image": "x"}, {"name": "machine-config-operator", "image": "mco:1"}), "mco:1"),
        (deployment({"name": "machine-config-operator"}), ""),
        (deployment("not a container", {"name": "machine-config-operator", "image": "mco:2"}), "mco:2"),
    ],
)
def test_the_mco_image_is_its_containers_as_oc_reads_it(obj: JSON | None, image: str) -> None:
    assert mco_image(obj) == image


def test_an_mco_image_that_is_not_a_string_is_an_input_error() -> None:
    with pytest.raises(InputError, match="machine-config-operator container image is not a string"):
        mco_image(deployment({"name": "machine-config-operator", "image": 5}))


def test_a_versioned_machineconfig_without_a_string_name_is_an_input_error() -> None:
    mc = {"metadata": {"name": {"x": 1}, "annotations": {RELEASE_VERSION_ANNOTATION: "4.16.0"}}}
    with pytest.raises(InputError, match="MachineConfig metadata.name is dict, not a string"):
        machineconfig_versions([mc])


def test_a_versioned_machineconfig_without_a_name_is_left_out() -> None:
    versioned = {"annotations": {RELEASE_VERSION_ANNOTATION: "4.16.0"}}
    nameless = [{"metadata": versioned}, *({"metadata": {**versioned, "name": name}} for name in (None, ""))]
    named = {"metadata": {**versioned, "name": "rendered-worker-1"}}
    assert machineconfig_versions([*nameless, named]) == {"rendered-worker-1": "4.16.0"}


def test_a_transform_keeps_a_value_of_another_type_for_the_insights_to_judge() -> None:
    odd = {"metadata": ["not", "an", "object"], "status": {"conditions": "none"}}
    assert node_transform(odd) == odd
