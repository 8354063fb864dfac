"""What the caches keep of each object, and the facts read from the machine-config objects: one
definition for the controller, `upgrade-status --watch` and the one-shot reads."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cvo_py.runtime.gotext.times import parse_time
from cvo_py.runtime.jsonfields import trim
from cvo_py.runtime.kube import JSON
from status.updatestatus.insights import compute, mco, unavailability
from status.updatestatus.insights.inputs import (
    NODE_CONDITIONS_READ,
    NODE_READ_ONCE,
    machineconfig_transform,
    machineconfig_versions,
    mco_image,
    node_transform,
    read_alike,
)
from status.updatestatus.insights.mco import MCO_PREFIX
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


# Nodes read once (`NODE_READ_ONCE`: the MCD annotations and the conditions the insights read)
# give the insights whole nodes give, whatever else they carry.
_MCO_KEYS = sorted(v for k, v in vars(mco).items() if k.isupper() and isinstance(v, str) and v.startswith(MCO_PREFIX))
_CONFIGS = st.sampled_from(["", "rendered-worker-1", "rendered-worker-2"])
_ANNOTATION_VALUES = {  # values that make each annotation matter, by its name's end
    "Config": _CONFIGS,
    "Drain": st.sampled_from(
        ["", "drain-rendered-worker-2", "uncordon-rendered-worker-2", "uncordon-rendered-worker-1"]
    ),
    "state": st.sampled_from(["", "Done", "Working", "Degraded", "Unreconcilable", "Rebooting"]),
    "Image": st.sampled_from(["", "image@sha256:1", "image@sha256:2"]),
}


def _annotation_value(key: str) -> st.SearchStrategy[str]:
    found = [values for end, values in _ANNOTATION_VALUES.items() if key.endswith(end)]
    return found[0] if found else st.text(max_size=4)


_CONDITION = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["Ready", "DiskPressure", "NetworkUnavailable", "MemoryPressure", "PIDPressure"]),
        "status": st.sampled_from(["True", "False", "Unknown"]),
    },
    optional={
        "reason": st.text(max_size=3),
        "message": st.text(max_size=5),
        "lastTransitionTime": st.sampled_from(["2024-02-07T16:00:00Z", "2024-02-07T16:44:00Z"]),
        "lastHeartbeatTime": st.just("2024-02-07T16:45:00Z"),
    },
)
_NODE = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {
                "labels": st.sampled_from([{"node-role.kubernetes.io/worker": ""}, {"node-role.kubernetes.io/x": ""}]),
                "annotations": st.fixed_dictionaries(
                    {}, optional={key: _annotation_value(key) for key in [*_MCO_KEYS, "other/x"]}
                ),
            },
            optional={"uid": st.just("u"), "resourceVersion": st.just("7")},
        ),
        "status": st.fixed_dictionaries({"conditions": st.lists(_CONDITION, max_size=5)}),
    },
    optional={"spec": st.fixed_dictionaries({}, optional={"unschedulable": st.booleans()})},
)
_WORKER_POOL = {
    "metadata": {"name": "worker"},
    "spec": {
        "nodeSelector": {"matchLabels": {"node-role.kubernetes.io/worker": ""}},
        "configuration": {"name": "rendered-worker-2"},
    },
    "status": {"configuration": {"name": "rendered-worker-1"}, "machineCount": 3},
}
_CLUSTERVERSION = {"metadata": {"name": "version"}, "status": {"history": [{"version": "4.14.1", "state": "Partial"}]}}


def _example(annotations: dict[str, str]) -> list[JSON]:
    """A ready node with these MCD annotations (rare at random: each matters only with others)."""
    conditions = [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-02-07T16:00:00Z"}]
    labels = {"node-role.kubernetes.io/worker": ""}
    named = {f"{MCO_PREFIX}{key}": value for key, value in annotations.items()}
    return [{"metadata": {"labels": labels, "annotations": named}, "status": {"conditions": conditions}}]


@settings(max_examples=300)
@given(st.lists(_NODE, max_size=4), st.booleans())
# done only with both images, or neither
@example(
    _example(
        {
            "currentConfig": "rendered-worker-1",
            "desiredConfig": "rendered-worker-1",
            "state": "Done",
            "currentImage": "image@sha256:1",
        }
    ),
    False,
)
# draining while updating
@example(
    _example(
        {
            "currentConfig": "rendered-worker-1",
            "desiredConfig": "rendered-worker-2",
            "state": "Working",
            "desiredDrain": "drain-rendered-worker-2",
            "lastAppliedDrain": "uncordon-rendered-worker-1",
        }
    ),
    False,
)
def test_nodes_read_once_give_the_insights_whole_nodes_give(nodes: list[JSON], paused: bool) -> None:
    named = [{**node, "metadata": {**node["metadata"], "name": f"n{i}"}} for i, node in enumerate(nodes)]
    pool = {**_WORKER_POOL, "spec": {**_WORKER_POOL["spec"], "paused": paused}}
    versions = {"rendered-worker-1": "4.14.0", "rendered-worker-2": "4.14.1"}
    now = parse_time("2024-02-07T16:45:07Z")

    def insights(items: list[JSON]) -> list[object]:
        return list(compute.node_insights(items, [pool], versions, now, cv=_CLUSTERVERSION))

    assert insights([trim(node, NODE_READ_ONCE) for node in named]) == insights(named)


def test_the_conditions_read_once_are_those_the_unavailability_rules_read() -> None:
    assert set(unavailability._CONDITION_CHECKS) == NODE_CONDITIONS_READ
