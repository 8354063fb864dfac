"""Reading dumps: gather time, alerts from an Insights archive, and the best answer plus one line
when pieces are missing."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from cvo_py import gotext
from cvo_py.cli import main as cli
from cvo_py.testing import dumps as conv
from cvo_py.testing.insight_objects import (
    MCO,
    T0_NS,
    at,
    clusterversion,
    machineconfigs,
    node,
    operator,
    pool,
)
from status.updatestatus import dump
from status.updatestatus.render import render
from status.updatestatus.snapshot import Snapshot

GATHERED = T0_NS + 30 * gotext.MINUTE


def cluster(**override: Any) -> Snapshot:
    snap = Snapshot(
        name="x",
        clusterversion=clusterversion(),
        operators=[operator("a"), operator("b", version="4.14.0", progressing="True")],
        machineconfigs=machineconfigs(),
        pools=[pool("master"), pool("worker")],
        nodes=[
            node("m1", role="master", current="rendered-master-new"),
            node("w1", current="rendered-worker-old", desired="rendered-worker-new", state="Working"),
            node("w2", state="Degraded", reason="failed to drain"),
        ],
        alerts=None,
        mco_deployment=None,
    )
    return dataclasses.replace(snap, **override)


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
    assert preamble[0].startswith(f"Assessed at {gotext.format_time(GATHERED, nanos=False)}, when must-gather ")
    assert preamble[0].endswith("was gathered (timestamp)")
    assert preamble[-1] == "Unable to fetch alerts, ignoring alerts in 'Update Health':  a must-gather holds no alerts"
    assert len(preamble) == 2
    assert text == status_of(snap, GATHERED)
    # a month later the same dump says the same: "now" is never the wall clock
    assert "30m" in text


def test_the_image_directory_uses_its_own_timestamp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = conv.must_gather_files(cluster(), GATHERED)
    files[f"{conv.IMAGE_DIR}/timestamp"] = (conv.go_time(GATHERED + gotext.SECOND) + "\n").encode()
    top = conv.write_tree(files, tmp_path / "mg")
    preamble, _ = from_dump(capsys, top / conv.IMAGE_DIR)
    assert preamble[0].startswith(f"Assessed at {gotext.format_time(GATHERED + gotext.SECOND, nanos=False)}")


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
    assert dump.parse_go_time("2024-02-27 15:50:03.102873468 +0000 UTC m=+0.041234567\n") == gotext.parse_time(
        "2024-02-27T15:50:03.102873468Z"
    )
    assert dump.parse_go_time("2024-02-27 17:50:03 +0200 CEST\n") == gotext.parse_time("2024-02-27T15:50:03Z")
    assert dump.parse_go_time("garbage\n") is None
    assert dump.parse_go_time("") is None
