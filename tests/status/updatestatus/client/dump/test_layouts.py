"""Reading dumps: gather time, alerts from an Insights archive, and the best answer plus one line
when pieces are missing."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from cvo_py.cli import main as cli
from cvo_py.runtime.gotext.durations import MINUTE, SECOND
from cvo_py.runtime.gotext.times import format_time, parse_time
from status.updatestatus.client.dump import layouts as dump
from status.updatestatus.client.render import render
from status.updatestatus.client.snapshot import Snapshot
from testkit.objects import dumps as conv
from testkit.objects.insight_objects import (
    MCO,
    T0_NS,
    at,
    clusterversion,
    machineconfigs,
    node,
    operator,
    small_cluster,
)

GATHERED = T0_NS + 30 * MINUTE


def cluster(**override: Any) -> Snapshot:
    return small_cluster(**override)


def from_dump(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> tuple[list[str], str]:
    """(the preamble's lines, the status after them) of `upgrade-status --from path`."""
    code = cli.main(["upgrade-status", "--from", str(path), *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    start = out.index("= Control Plane =") if "= Control Plane =" in out else out.index("The cluster")
    return out[:start].splitlines(), out[start:]


def status_of(snap: Snapshot, now: int, details: str = "none") -> str:
    insights, at_ = snap.insights(now)
    return render(insights, at_, details)


def test_a_must_gather_is_assessed_at_its_gather_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snap = cluster()
    top = conv.write_tree(conv.must_gather_files(snap, GATHERED), tmp_path / "mg")
    preamble, text = from_dump(capsys, top)
    assert preamble[0].startswith(f"Assessed at {format_time(GATHERED, nanos=False)}, when must-gather ")
    assert preamble[0].endswith("was gathered (timestamp)")
    assert preamble[-1] == "Unable to fetch alerts, ignoring alerts in 'Update Health':  a must-gather holds no alerts"
    assert len(preamble) == 2
    assert text == status_of(snap, GATHERED)
    # a month later the same dump says the same: "now" is never the wall clock
    assert "30m" in text


def test_the_image_directory_uses_its_own_timestamp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = conv.must_gather_files(cluster(), GATHERED)
    files[f"{conv.IMAGE_DIR}/timestamp"] = (conv.go_time(GATHERED + SECOND) + "\n").encode()
    top = conv.write_tree(files, tmp_path / "mg")
    preamble, _ = from_dump(capsys, top / conv.IMAGE_DIR)
    assert preamble[0].startswith(f"Assessed at {format_time(GATHERED + SECOND, nanos=False)}")


def test_without_a_gather_time_the_newest_condition_time_is_used_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = cluster()
    files = {k: v for k, v in conv.must_gather_files(snap, GATHERED).items() if not k.endswith("timestamp")}
    top = conv.write_tree(files, tmp_path / "mg")
    preamble, text = from_dump(capsys, top)
    assert "no gather time" in preamble[0]
    assert text == status_of(snap, snap.mock_now())


@pytest.mark.parametrize(
    ("change", "note"),
    [
        ({"machineconfigs": []}, "no MachineConfigs in the dump: node versions are unknown (shown as ?)"),
        ({"pools": []}, "no MachineConfigPools in the dump: nodes and pools are not assessed"),
        ({"nodes": []}, "no Nodes in the dump: nodes are not assessed"),
    ],
    ids=["no-machineconfigs", "no-pools", "no-nodes"],
)
def test_missing_pieces_give_the_best_answer_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], note: str
) -> None:
    snap = cluster(**change)
    path = tmp_path / "mg.tar.gz"
    path.write_bytes(conv.tar_bytes(conv.must_gather_files(snap, GATHERED), prefix="mg/"))
    preamble, text = from_dump(capsys, path, "--details", "all")
    assert note in preamble
    assert text == status_of(snap, GATHERED, "all")


def test_some_machineconfigs_missing_and_nodes_without_mco_annotations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = node("w3")
    bare["metadata"]["annotations"] = {}
    snap = cluster(
        machineconfigs=[mc for mc in machineconfigs() if mc["metadata"]["name"] != "rendered-worker-new"],
        nodes=[*cluster().nodes, bare],
    )
    top = conv.write_tree(conv.insights_files(snap, obfuscated=True), tmp_path / "insights-2024-01-01-103000")
    preamble, text = from_dump(capsys, top)
    assert preamble[0].startswith("Assessed at 2024-01-01T10:30:00Z, when Insights archive ")
    assert "names and addresses are obfuscated in this archive (consistently within it)" in preamble
    assert f"1 of 4 Nodes carry no {MCO.rstrip('/')} annotations: their versions and progress are unknown" in preamble
    assert any(line.startswith("1 of the 3 MachineConfigs the Nodes name are missing") for line in preamble)
    assert text == status_of(snap, GATHERED)


def test_insights_alerts_become_the_alert_insights_oc_derives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thanos = {
        "status": "success",
        "data": {
            "alerts": [
                {
                    "labels": {"alertname": "PodDisruptionBudgetAtLimit", "severity": "warning", "namespace": "ns"},
                    "annotations": {"summary": "PDB at limit", "runbook_url": "https://example.com/pdb"},
                    "state": "firing",
                    "activeAt": at(5),
                },
                {
                    "labels": {"alertname": "KubeNodeNotReady", "severity": "critical"},
                    "annotations": {"description": "node down", "message": "really"},
                    "state": "firing",
                    "activeAt": at(10),
                },
                {"labels": {"alertname": "Info", "severity": "info"}, "annotations": {}, "state": "firing",
                 "activeAt": at(10)},
            ]
        },
    }
    snap = cluster(alerts=thanos)
    files = conv.insights_files(snap)
    assert json.loads(files["config/alerts.json"])[0]["status"]["state"] == "active"
    archive = tmp_path / "insights-2024-01-01-103000.tar.gz"
    archive.write_bytes(conv.tar_bytes(files))
    preamble, text = from_dump(capsys, archive, "--details", "health")
    assert not any(line.startswith("Unable to fetch alerts") for line in preamble)
    assert text == status_of(snap, GATHERED, "health")
    assert "Alert is firing: PDB at limit" in text and "Alert is firing: KubeNodeNotReady" in text


def test_insights_without_alerts_says_so_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "insights-2024-01-01-103000.tar.gz"
    archive.write_bytes(conv.tar_bytes(conv.insights_files(cluster())))
    preamble, _ = from_dump(capsys, archive)
    assert preamble.count(
        "Unable to fetch alerts, ignoring alerts in 'Update Health':  the archive holds no alerts.json"
    ) == 1


def test_a_not_updating_cluster_reads_no_alerts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snap = cluster(
        clusterversion=clusterversion(progressing="False"),
        operators=[operator("a")],
        nodes=[node("m1", role="master", current="rendered-master-new")],
    )
    top = conv.write_tree(conv.must_gather_files(snap, GATHERED), tmp_path / "mg")
    preamble, text = from_dump(capsys, top)
    assert text == "The cluster is not updating.\n"
    assert len(preamble) == 1


def test_format_must_match_the_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    top = conv.write_tree(conv.insights_files(cluster()), tmp_path / "insights-2024-01-01-103000")
    code = cli.main(["upgrade-status", "--from", str(top), "--format", "must-gather"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "no ClusterVersion" in err and err.count("\n") == 1
    preamble, _ = from_dump(capsys, top, "--format", "insights")
    assert preamble[0].startswith("Assessed at 2024-01-01T10:30:00Z")


def test_go_time_lines() -> None:
    assert dump.parse_go_time("2024-02-27 15:50:03.102873468 +0000 UTC m=+0.041234567\n") == parse_time(
        "2024-02-27T15:50:03.102873468Z"
    )
    assert dump.parse_go_time("2024-02-27 17:50:03 +0200 CEST\n") == parse_time("2024-02-27T15:50:03Z")
    assert dump.parse_go_time("garbage\n") is None
    assert dump.parse_go_time("") is None


# -- objects written without TypeMeta --------------------------------------------------------------


def test_an_insights_archive_of_objects_without_typemeta_is_read_by_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = cluster()
    files = conv.insights_files(snap)
    assert all(b'"kind"' not in data for path, data in files.items() if path.startswith("config/")), files
    archive = tmp_path / "insights-2024-01-01-103000.tar.gz"
    archive.write_bytes(conv.tar_bytes(files))
    preamble, text = from_dump(capsys, archive, "--details", "all")
    assert preamble[0].startswith("Assessed at 2024-01-01T10:30:00Z, when Insights archive ")
    assert text == status_of(snap, GATHERED, "all")


def test_a_must_gather_of_objects_and_lists_without_typemeta_is_read_by_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = cluster()
    for lists in (False, True):
        files = conv.must_gather_files(snap, GATHERED, lists=lists)
        for path, data in list(files.items()):
            if "cluster-scoped-resources" in path:
                doc = conv.yaml.safe_load(data)
                if lists:
                    doc = {"items": [conv.without_typemeta(item) for item in doc["items"]]}
                files[path] = conv._yaml(conv.without_typemeta(doc))
        top = conv.write_tree(files, tmp_path / f"mg-{lists}")
        _, text = from_dump(capsys, top, "--details", "all")
        assert text == status_of(conv.by_name(snap) if not lists else snap, GATHERED, "all")


@pytest.mark.parametrize(
    ("path", "content", "fragment"),
    [
        ("config/version.json", {"kind": "Node", "metadata": {"name": "version"}}, "unexpected object type Node"),
        ("config/node/w1.json", {"kind": "Pod", "metadata": {"name": "w1"}}, "unexpected object type Pod"),
        (
            "config/clusteroperator/a.json",
            {"apiVersion": "apps/v1", "metadata": {"name": "a"}},
            "apiVersion apps/v1 without a kind is not a ClusterOperator",
        ),
        (
            "config/node/w1.json",
            {"apiVersion": "config.openshift.io/v1", "metadata": {"name": "w1"}},
            "apiVersion config.openshift.io/v1 without a kind is not a Node",
        ),
        ("config/node/w1.json", {"items": [{"kind": "Pod"}]}, "unexpected object type Pod in List content at index 0"),
    ],
    ids=["kind-in-version", "kind-in-node", "group-in-operator", "group-in-node", "kind-in-list"],
)
def test_a_kind_or_group_that_contradicts_the_path_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, content: dict[str, Any], fragment: str
) -> None:
    files = conv.insights_files(cluster())
    files[path] = json.dumps(content).encode()
    code = cli.main(["upgrade-status", "--from", str(conv.write_tree(files, tmp_path / "insights"))])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: "), err
    assert path in err and fragment in err, err


def test_a_core_node_may_carry_its_apiversion_without_a_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = cluster()
    files = conv.insights_files(snap)
    files["config/node/w1.json"] = json.dumps({**conv.without_typemeta(snap.nodes[1]), "apiVersion": "v1"}).encode()
    _, text = from_dump(capsys, conv.write_tree(files, tmp_path / "insights-2024-01-01-103000"))
    assert text == status_of(snap, GATHERED)


def test_a_47_era_anonymized_archive_gives_the_best_answer_and_says_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = conv.anonymized(cluster(nodes=[*cluster().nodes, node("worker-with-a-long-name", state="Degraded",
                                                                 reason="drain of worker-with-a-long-name failed")]))
    assert all(n["metadata"]["name"].endswith(conv.ANONYMIZED_DOMAIN) for n in snap.nodes)
    files = conv.insights_47_files(snap)
    assert not any(p.startswith(("config/machineconfig", "config/alerts", "insights-operator/")) for p in files)
    archive = tmp_path / "insights-2024-01-01-103000.tar.gz"
    archive.write_bytes(conv.tar_bytes(files))
    preamble, text = from_dump(capsys, archive, "--details", "all")
    assert preamble[1:] == [
        "no MachineConfigPools in the dump: nodes and pools are not assessed",
        "no MachineConfigs in the dump: node versions are unknown (shown as ?)",
        "Unable to fetch alerts, ignoring alerts in 'Update Health':  the archive holds no alerts.json",
    ]
    assert text == status_of(dataclasses.replace(snap, pools=[], machineconfigs=[]), GATHERED, "all")


# -- gather times that cannot be read, or at the ends of Go's calendar -------------------------------


@pytest.mark.parametrize(
    "stamp",
    [
        b"\xff\xfe2024-01-01 10:30:00 +0000 UTC\n",  # not UTF-8
        "2024-01-01 10:30:00 +0000 UTC\n".encode("utf-16"),
        b"0000-01-01 00:00:00 +0000 UTC\n",  # year 0: Go reads it, but no gather ran then
        b"2024-13-01 10:30:00 +0000 UTC\n",
        b"yesterday\n",
        b"\0" * 100_000,
        b"",
    ],
    ids=["not-utf-8", "utf-16", "year-0", "month-13", "words", "zeros", "empty"],
)
def test_a_timestamp_that_cannot_be_read_falls_back_to_the_condition_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stamp: bytes
) -> None:
    snap = cluster()
    files = conv.must_gather_files(snap, GATHERED)
    for path in [p for p in files if p.endswith("timestamp")]:
        files[path] = stamp
    preamble, text = from_dump(capsys, conv.write_tree(files, tmp_path / "mg"))
    assert "no gather time in must-gather" in preamble[0], preamble
    assert text == status_of(snap, snap.mock_now())


def _gathered_at(tmp_path: Path, capsys: pytest.CaptureFixture[str], stamp: str) -> tuple[list[str], str]:
    snap = cluster(operators=[operator("a"), operator("b", version="4.14.0", progressing="True", reason="Rolling")])
    files = conv.must_gather_files(snap, GATHERED)
    files["timestamp"] = (stamp + "\n").encode()
    return from_dump(capsys, conv.write_tree(files, tmp_path / "mg"), "--details", "all")


def test_a_gather_time_in_year_9999_prints_durations_as_go_caps_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """now − start is past what a Duration holds: Time.Sub saturates at 2562047h47m16.854775807s
    (Round(1m) gives 2562047h47m); the estimate's seconds times a second wrap around in int64, so
    the update looks stalled, as oc shows it."""
    preamble, text = _gathered_at(tmp_path, capsys, "9999-12-31 23:59:59.999999999 +0000 UTC m=+0.1")
    assert preamble[0].startswith("Assessed at 9999-12-31T23:59:59Z, when must-gather ")
    assert "Assessment:      Stalled\n" in text
    assert "Duration:        2562047h47m (Est. Time Remaining: N/A; estimate duration was " in text
    assert "\nb      2562047h47m16s   Rolling  " in text


def test_a_gather_time_in_year_1_prints_durations_as_go_caps_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preamble, text = _gathered_at(tmp_path, capsys, "0001-01-01 00:00:00 +0000 UTC")
    assert preamble[0].startswith("Assessed at 0001-01-01T00:00:00Z, when must-gather ")
    assert "Duration:        unknown: history[0].startedTime is after now (Est. Time Remaining: " in text
    assert "\nb      -2562047h47m16s   Rolling  " in text


@pytest.mark.parametrize("mtime", [10**12, -(10**12)], ids=["year-33658", "before-year-1"])
def test_an_archive_time_stamp_go_cannot_print_is_no_gather_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mtime: int
) -> None:
    snap = cluster()
    archive = tmp_path / "archive.tar.gz"  # no gather time in the name: the member's time stamp is next
    archive.write_bytes(conv.tar_bytes(conv.insights_files(snap), mtime=mtime))
    preamble, text = from_dump(capsys, archive)
    assert "no gather time in Insights archive" in preamble[0], preamble
    assert text == status_of(snap, snap.mock_now())


@pytest.mark.parametrize("layout", ["must-gather", "insights"])
@pytest.mark.parametrize("kind", ["MachineConfig", "MachineConfigPool", "Node", "ClusterOperator"])
def test_an_object_whose_name_is_not_a_string_is_one_line_naming_its_member(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str, kind: str
) -> None:
    snap = cluster()
    objects = {
        "MachineConfig": snap.machineconfigs,
        "MachineConfigPool": snap.pools,
        "Node": snap.nodes,
        "ClusterOperator": snap.operators,
    }[kind]
    objects[0]["metadata"]["name"] = 5  # its file is then named 5.yaml or 5.json
    files = conv.must_gather_files(snap, GATHERED) if layout == "must-gather" else conv.insights_files(snap)
    [member] = [path for path in files if path.endswith(("/5.yaml", "/5.json"))]
    top = conv.write_tree(files, tmp_path / layout)
    code = cli.main(["upgrade-status", "--from", str(top)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == f"error: {top}: {member}: {kind}: metadata.name is int, not a string\n"
