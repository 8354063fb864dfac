"""At 2,000 and 5,000 nodes (copies of an oc example's nodes, one of them degraded), the live
`upgrade-status` (ConfigMap API on the real local API server), the snapshot and the must-gather
archive print the same, at both detail levels; hundreds of equal health insights come out in the
order Go's pdqsort gives them."""

from __future__ import annotations

from pathlib import Path

import pytest

from cvo_py.cli import main as cli
from cvo_py.runtime.gotext.times import format_time
from testkit.harness import cluster as local
from testkit.objects import scale


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = cli.main(["upgrade-status", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@pytest.mark.parametrize("nodes", [2000, 5000])
def test_live_snapshot_and_must_gather_agree_at_scale(
    nodes: int, cluster: local.LocalCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not scale.EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found (looked in {scale.EXAMPLES.resolve()})")
    snap = scale.example_at_scale(nodes)
    now = snap.mock_now()
    stamp = format_time(now)
    insights, _ = snap.insights(now)
    scale.publish(cluster.client, insights, now)
    cv_path = scale.write_as_snapshot(snap, tmp_path / "snapshot")
    archive = scale.write_must_gather(snap, tmp_path / "must-gather.tar.gz", now)
    for details in ("none", "all"):
        live = run(capsys, "--kubeconfig", cluster.kubeconfig, "--now", stamp, "--details", details)
        mock = run(capsys, "--mock-clusterversion", str(cv_path), "--now", stamp, "--details", details)
        dumped = run(capsys, "--from", str(archive), "--details", details)
        assert live == mock
        assert dumped.endswith(mock) and dumped[: -len(mock)].startswith("Assessed at ")
    degraded = [line for line in mock.splitlines() if line.startswith("Message: Node ") and "is degraded" in line]
    assert len(degraded) > 12  # past insertion sort: the order is pdqsort's
    in_input_order = sorted(degraded, key=lambda line: line.split()[2])
    assert degraded != in_input_order  # sort.Slice is not stable here, as in oc
