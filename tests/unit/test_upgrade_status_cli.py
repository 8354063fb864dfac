"""`cluster-version-operator upgrade-status`: snapshot mode, live mode over the ConfigMap API, bad input."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cvo_py import gotext
from cvo_py.cli import main as cli
from cvo_py.kube import CONFIGMAPS, ApiError, KubeClient
from cvo_py.testing import cluster as local
from cvo_py.testing.insight_objects import at, clusterversion, node, operator, pool, write_snapshot
from status.updatestatus import configmap, snapshot
from status.updatestatus.insights import compute
from status.updatestatus.render import render

EXAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "oc-examples"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["upgrade-status", *args])
    out, err = capsys.readouterr()
    return code, out, err


def updating_snapshot(tmp_path: Path) -> Path:
    ops = {
        "kind": "List",
        "items": [operator("a", ltt=at(10)), operator("b", version="4.14.0", progressing="True")],
    }
    nodes = {
        "kind": "List",
        "items": [node("m1", role="master"), node("w1", ready="False", ready_ltt=at(-30))],
    }
    mcs = {
        "kind": "List",
        "items": [
            {
                "kind": "MachineConfig",
                "metadata": {
                    "name": n,
                    "annotations": {"machineconfiguration.openshift.io/release-image-version": v},
                },
            }
            for n, v in (("rendered-master-old", "4.14.0"), ("rendered-worker-old", "4.14.0"))
        ],
    }
    return write_snapshot(tmp_path, **{"-co.yaml": ops, "-node.yaml": nodes, "-mc.yaml": mcs})


@pytest.mark.parametrize("details,suffix", [("none", ".output"), ("all", ".detailed-output")])
def test_snapshot_mode_prints_what_oc_prints(
    capsys: pytest.CaptureFixture[str], details: str, suffix: str
) -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found (looked in {EXAMPLES.resolve()})")
    name = "4.14.1-degraded"
    code, out, err = run(
        capsys, "--mock-clusterversion", str(EXAMPLES / f"{name}-cv.yaml"), "--details", details
    )
    assert (code, err) == (0, "")
    assert out == (EXAMPLES / f"{name}{suffix}").read_text()


def test_snapshot_mode_defaults_now_to_the_snapshot_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cv = updating_snapshot(tmp_path)
    code, out, _ = run(capsys, "--mock-clusterversion", str(cv))
    assert code == 0
    assert "Duration:        10m" in out  # newest condition is 10 minutes after the update started
    code, later, _ = run(capsys, "--mock-clusterversion", str(cv), "--now", at(45))
    assert code == 0 and "Duration:        45m" in later
    assert "Node w1 is not ready" in later


@pytest.mark.parametrize(
    "args,message",
    [
        (["--details", "everything"], "invalid value for --details: everything"),
        (["--now", "yesterday"], "--now: invalid RFC 3339 timestamp"),
        (["--mock-clusterversion", "/nowhere/x.yaml"], "must name a NAME-cv.yaml file"),
    ],
)
def test_bad_flags_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_missing_snapshot_file_exits_2_naming_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cv = updating_snapshot(tmp_path)
    (tmp_path / "x-mcp.yaml").unlink()
    code, out, err = run(capsys, "--mock-clusterversion", str(cv))
    assert (code, out) == (2, "")
    assert err == f"error: {tmp_path / 'x-mcp.yaml'}: file not found\n"


def test_malformed_object_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = clusterversion()
    bad["status"]["history"][0]["startedTime"] = "not a time"
    cv = write_snapshot(tmp_path, **{"-cv.yaml": bad})
    code, _, err = run(capsys, "--mock-clusterversion", str(cv))
    assert code == 2 and "x-cv.yaml" in err and "invalid RFC 3339 timestamp 'not a time'" in err
    assert err.count("\n") == 1


# --- live: the ConfigMap API on the real API server ---------------------------------------------


@pytest.fixture
def status_configmaps(kube: KubeClient) -> Iterator[list[str]]:
    """The fixed namespace of the API; the ConfigMaps created here are removed afterwards."""
    local.ensure_namespace(kube, configmap.NAMESPACE)
    created: list[str] = []
    yield created
    for name in created:
        try:
            kube.delete(CONFIGMAPS, name, namespace=configmap.NAMESPACE)
        except ApiError:
            pass


def _put(kube: KubeClient, name: str, data: dict[str, str]) -> None:
    body = {"metadata": {"name": name, "namespace": configmap.NAMESPACE}, "data": data}
    try:
        kube.delete(CONFIGMAPS, name, namespace=configmap.NAMESPACE)
    except ApiError:
        pass
    kube.create(CONFIGMAPS, body, namespace=configmap.NAMESPACE)


def test_live_mode_reads_the_configmap_and_its_shards(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    cluster: local.LocalCluster,
    kube: KubeClient,
    status_configmaps: list[str],
) -> None:
    cv_path = updating_snapshot(tmp_path)
    snap = snapshot.load(cv_path)
    now = snap.mock_now()
    insights = compute.all_insights(
        snap.clusterversion, snap.operators, snap.nodes, snap.pools, snap.machineconfig_versions(), now
    )
    # a budget just above the control-plane insights forces node insights into shards, as at 5,000 nodes
    data = configmap.encode(insights)
    budget = configmap.data_size({k: v for k, v in data.items() if not k.startswith("usc-node-")}) + 64
    plan = configmap.plan(data, budget=budget)
    assert plan.shards >= 1 and plan.ok, plan.problems
    for name, data in plan.configmaps.items():
        status_configmaps.append(name)
        _put(kube, name, data)

    now_text = "--now=" + gotext.format_time(now)
    for details in ("none", "all"):
        code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig, now_text, "--details", details)
        assert (code, err) == (0, "")
        _, from_snapshot, _ = run(capsys, "--mock-clusterversion", str(cv_path), "--details", details)
        assert out == from_snapshot == render(insights, now, details)


def test_live_mode_without_the_configmap_says_so(
    capsys: pytest.CaptureFixture[str],
    cluster: local.LocalCluster,
    kube: KubeClient,
    status_configmaps: list[str],
) -> None:
    try:
        kube.delete(CONFIGMAPS, configmap.CONFIGMAP, namespace=configmap.NAMESPACE)
    except ApiError:
        pass
    code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig)
    assert (code, out) == (1, "")
    assert "status-api-cm-prototype does not exist" in err and err.count("\n") == 1


def test_pools_listed_by_name_match_the_live_order() -> None:
    # a live cluster lists pools by name; decode restores that order whatever the write order
    insights = compute.all_insights(
        clusterversion(),
        [operator("a")],
        [node("w1", labels={"node-role.kubernetes.io/infra": ""})],
        [pool("worker"), pool("master"), pool("infra")],
        {},
        0,
    )
    decoded = configmap.decode(configmap.encode(insights))
    assert [
        getattr(i, "name", "") for i in decoded if type(i).__name__ == "MachineConfigPoolStatusInsight"
    ] == ["infra", "master", "worker"]
