"""Loading oc-style snapshots: sibling files, YAML or JSON, lists, "now", one-line errors naming the file."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.times import format_time, parse_time
from status.updatestatus.client import snapshot
from testkit.checkout import EXAMPLES
from testkit.objects.insight_objects import MCO, clusterversion, node, operator, pool, small_cluster, write_snapshot


def test_loads_a_snapshot_in_yaml_and_in_json(tmp_path: Path) -> None:
    for as_json in (False, True):
        snap = snapshot.load(write_snapshot(tmp_path, as_json=as_json))
        assert snap.clusterversion["kind"] == "ClusterVersion"
        assert [o["metadata"]["name"] for o in snap.operators] == ["a", "b"]
        assert snap.machineconfig_versions() == {"rendered-worker-old": "4.14.0"}
        assert (snap.alerts, snap.mco_image()) == (None, "")


def test_optional_files(tmp_path: Path) -> None:
    deployment = {
        "kind": "Deployment",
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "other", "image": "x"},
                        {"name": "machine-config-operator", "image": "quay.io/mco@sha256:1"},
                    ]
                }
            }
        },
    }
    cv = write_snapshot(
        tmp_path,
        **{"-mco-deployment.yaml": deployment, "-alerts.json": {"status": "success", "data": {"alerts": []}}},
    )
    snap = snapshot.load(cv)
    assert snap.mco_image() == "quay.io/mco@sha256:1"
    assert snap.alerts == {"status": "success", "data": {"alerts": []}}


def test_clusterversion_list_uses_its_first_item(tmp_path: Path) -> None:
    first, second = clusterversion(desired="4.15.0"), clusterversion(desired="4.16.0")
    cv = write_snapshot(tmp_path, **{"-cv.yaml": {"kind": "ClusterVersionList", "items": [first, second]}})
    assert snapshot.load(cv).clusterversion["status"]["desired"]["version"] == "4.15.0"


def test_unquoted_timestamps_and_versions_stay_strings(tmp_path: Path) -> None:
    text = yaml.safe_dump(clusterversion()).replace("'2024-01-01T10:00:00Z'", "2024-01-01T10:00:00Z")
    text = text.replace("desired:\n    version: 4.14.1", "desired:\n    version: 4.14")
    assert "lastTransitionTime: 2024-01-01T10:00:00Z" in text
    snap = snapshot.load(write_snapshot(tmp_path, **{"-cv.yaml": text}))
    assert snap.clusterversion["status"]["conditions"][0]["lastTransitionTime"] == "2024-01-01T10:00:00Z"
    assert snap.clusterversion["status"]["desired"]["version"] == "4.14"


def test_mock_now_is_the_newest_condition_plus_368975ns(tmp_path: Path) -> None:
    ops = {
        "kind": "List",
        "items": [operator("a", ltt="2024-01-01T12:00:00Z"), operator("b", ltt="2024-01-01T11:00:00Z")],
    }
    snap = snapshot.load(write_snapshot(tmp_path, **{"-co.yaml": ops}))
    assert snap.mock_now() == parse_time("2024-01-01T12:00:00Z") + 368_975


@pytest.mark.parametrize(
    "suffix,content,message",
    [
        ("-node.yaml", None, r"x-node.yaml: file not found"),
        ("-co.yaml", "items: [unclosed", r"x-co.yaml: cannot parse at line \d+"),
        ("-mcp.yaml", {"kind": "Pod"}, r"x-mcp.yaml: unexpected object type Pod"),
        (
            "-co.yaml",
            {"kind": "List", "items": [{"kind": "Pod"}]},
            r"x-co.yaml: unexpected object type Pod in List content at index 0",
        ),
        ("-cv.yaml", {"kind": "List", "items": []}, r"x-cv.yaml: the list holds no ClusterVersion"),
        ("-alerts.json", "[1, 2", r"x-alerts.json: cannot parse"),
        ("-mc.yaml", "just text", r"x-mc.yaml: expected a MachineConfig or a list of them"),
    ],
)
def test_bad_files_are_one_line_errors_naming_the_file(
    tmp_path: Path, suffix: str, content: Any, message: str
) -> None:
    cv = write_snapshot(tmp_path, **{suffix: content})
    with pytest.raises(snapshot.SnapshotError, match=message) as info:
        snapshot.load(cv)
    assert "\n" not in str(info.value)


def test_the_path_must_name_a_cv_file(tmp_path: Path) -> None:
    with pytest.raises(snapshot.SnapshotError, match="must end with -cv.yaml"):
        snapshot.load(tmp_path / "x.yaml")


def test_shared_examples_load() -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found (looked in {EXAMPLES.resolve()})")
    snap = snapshot.load(EXAMPLES / "4.14.1-degraded-cv.yaml")
    assert (
        len(snap.operators) == 33
        and len(snap.nodes) == 6
        and [p["metadata"]["name"] for p in snap.pools] == ["master", "worker"]
    )
    newest = max(
        parse_time(c["lastTransitionTime"])
        for obj in [snap.clusterversion, *snap.operators]
        for c in obj["status"]["conditions"]
    )
    assert snap.mock_now() == newest + 368_975
    # the Failing condition is the newest: oc shows it as "now"
    assert format_time(snap.mock_now()) == "2023-11-03T17:26:54.000368975Z"


def test_snapshot_insights_age_nodes_at_the_wall_clock_unless_now_is_given(tmp_path: Path) -> None:
    from status.updatestatus.insights.kinds import HealthInsightShape

    ops = {"kind": "List", "items": [operator("a", ltt="2024-01-01T10:01:00Z")]}
    nodes = {
        "kind": "List",
        "items": [node("worker-node-1", ready="False", ready_ltt="2024-01-01T10:00:00Z")],
    }
    snap = snapshot.load(write_snapshot(tmp_path, **{"-co.yaml": ops, "-node.yaml": nodes}))
    mock_now = snap.mock_now()

    def node_health(insights: list[object]) -> int:
        return sum(
            isinstance(i, HealthInsightShape) and i.scope.resources[0].resource == "nodes" for i in insights
        )

    fresh, at_now = snap.insights(wall_clock=mock_now)
    assert at_now == mock_now and node_health(fresh) == 0  # 1 minute not ready: not serious yet
    later, at_now = snap.insights(wall_clock=mock_now + 3600 * SECOND)
    assert at_now == mock_now and node_health(later) == 1
    explicit, at_now = snap.insights(now=mock_now, wall_clock=mock_now + 3600 * SECOND)
    assert at_now == mock_now and node_health(explicit) == 0


def test_a_non_string_image_is_an_error_naming_the_file(tmp_path: Path) -> None:
    deployment = {
        "kind": "Deployment",
        "spec": {"template": {"spec": {"containers": [{"name": "machine-config-operator", "image": ["x"]}]}}},
    }
    snap = snapshot.load(write_snapshot(tmp_path, **{"-mco-deployment.yaml": deployment}))
    with pytest.raises(
        snapshot.SnapshotError, match=r"x-mco-deployment\.yaml: machine-config-operator container image"
    ):
        snap.insights()


def named(obj: dict[str, Any], name: Any) -> dict[str, Any]:
    obj["metadata"]["name"] = name
    return obj


VERSIONED_MC = {
    "kind": "MachineConfig",
    "metadata": {"name": "rendered-worker-old", "annotations": {MCO + "release-image-version": "4.14.0"}},
}


@pytest.mark.parametrize(
    ("suffix", "objects", "message"),
    [
        # Whether or not it carries a release version: oc's decoder refuses the whole file either way.
        (
            "-mc.yaml",
            [named(copy.deepcopy(VERSIONED_MC), {"a": "b"})],
            "MachineConfig in List content at index 0: metadata.name is dict, not a string",
        ),
        (
            "-mc.yaml",
            [VERSIONED_MC, {"kind": "MachineConfig", "metadata": {"name": 7}}],
            "MachineConfig in List content at index 1: metadata.name is int, not a string",
        ),
        (
            "-mcp.yaml",
            [pool("master"), named(pool("worker"), 7)],
            "MachineConfigPool in List content at index 1: metadata.name is int, not a string",
        ),
        (
            "-node.yaml",
            [named(node("w1"), ["w1"])],
            "Node in List content at index 0: metadata.name is list, not a string",
        ),
        (
            "-co.yaml",
            [operator("a"), named(operator("b"), True)],
            "ClusterOperator in List content at index 1: metadata.name is bool, not a string",
        ),
        ("-cv.yaml", named(clusterversion(), False), "ClusterVersion: metadata.name is bool, not a string"),
    ],
    ids=["machineconfig", "unversioned-machineconfig", "pool", "node", "operator", "clusterversion"],
)
def test_a_name_that_is_not_a_string_is_an_error_naming_the_file_and_the_object(
    tmp_path: Path, suffix: str, objects: Any, message: str
) -> None:
    content = objects if isinstance(objects, dict) else {"apiVersion": "v1", "kind": "List", "items": objects}
    cv = write_snapshot(tmp_path, **{suffix: content})
    with pytest.raises(snapshot.SnapshotError) as info:
        snapshot.load(cv)
    assert str(info.value) == f"{tmp_path / ('x' + suffix)}: {message}"


def test_a_versioned_machineconfig_without_a_name_is_left_out_as_oc_never_looks_it_up(tmp_path: Path) -> None:
    nameless = {"kind": "MachineConfig", "metadata": {"annotations": {MCO + "release-image-version": "4.13.0"}}}
    null = named(copy.deepcopy(nameless), None)
    cv = write_snapshot(tmp_path, **{"-mc.yaml": {"kind": "List", "items": [VERSIONED_MC, nameless, null]}})
    assert snapshot.load(cv).machineconfig_versions() == {"rendered-worker-old": "4.14.0"}


def test_a_machineconfig_error_of_a_dump_names_the_dump_not_a_cv_file() -> None:
    snap = small_cluster()
    snap.name = "must-gather.local.1"
    snap.machineconfigs.append(named(copy.deepcopy(VERSIONED_MC), 5))  # not read through a file's checks
    with pytest.raises(snapshot.SnapshotError) as info:
        snap.insights()
    assert str(info.value) == "must-gather.local.1: MachineConfig metadata.name is int, not a string"
