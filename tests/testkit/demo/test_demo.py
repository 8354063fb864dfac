"""`make demo` in its fast mode, against the session's real API server: every stage's key output."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from cvo_py.runtime.kube import KubeClient
from testkit.checkout import REPO
from testkit.demo import demo
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import progress_count
from testkit.harness.usc import node_condition, nodes_in_phase

DEMO = REPO / "hack" / "demo.py"


@pytest.fixture
def demo_run(cluster: LocalCluster, kube: KubeClient) -> Iterator[subprocess.CompletedProcess[str]]:
    env = {**os.environ, "CVO_PY_CLUSTER_DIR": str(cluster.dir), "CVO_PY_DEMO_PAUSE": "5"}
    try:
        yield subprocess.run(
            [sys.executable, str(DEMO), "--fast"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,  # a hang bound; the demo itself takes seconds
        )
    finally:
        # The demo leaves its cluster objects for the admin to look at; other tests want none.
        demo.reset_objects(kube)
        cluster.install_clusterversion_crd("current")


def stage_output(out: str, number: int) -> str:
    match = re.search(rf"^\[{number}/7\] .*?(?=^\[{number + 1}/7\] |\Z)", out, re.M | re.S)
    assert match, f"no stage {number} in the demo output:\n{out}"
    return match.group(0)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return False


def test_fast_demo_shows_every_stage(demo_run: subprocess.CompletedProcess[str]) -> None:
    out = demo_run.stdout
    assert demo_run.returncode == 0, f"demo failed:\n{out}\n{demo_run.stderr}"
    assert "(fast mode)" in out  # --fast wins over CVO_PY_DEMO_PAUSE
    titles = re.findall(r"^\[(\d)/7\] ", out, re.M)
    assert titles == [str(n) for n in range(1, 8)], titles

    setup = stage_output(out, 1)
    assert "applied install/ Deployment openshift-update-status-controller/update-status-controller" in setup
    assert "Nothing runs the Deployments" in setup
    assert re.search(r"Prometheus \(pid \d+\) at http://127\.0\.0\.1:\d+ loads install/'s rules", setup), setup
    assert re.search(r"update service at http://127\.0\.0\.1:\d+/api/upgrades_info/v1/graph: channel stable-4", setup)

    cluster_objects = stage_output(out, 2)
    assert "8 ClusterOperators at 4.13.0" in cluster_objects
    assert re.search(r"pool infra: 1 node\(s\) infra-0", cluster_objects)

    controllers = stage_output(out, 3)
    assert "`start` wrote the ClusterVersion status: Cluster version is 4.13.0" in controllers
    assert "system:serviceaccount:openshift-update-status-controller:update-status-controller" in controllers
    assert "The cluster is not updating." in controllers
    # `oc adm upgrade`'s view of the local update service's graph, from the status `start` wrote.
    assert re.search(r"Upstream: http://127\.0\.0\.1:\d+/api/upgrades_info/v1/graph\n", controllers)
    assert "Channel: stable-4.14 (available channels: stable-4.14)" in controllers
    assert re.search(r"Recommended updates:\n\s+│\s+\n\s+│\s+VERSION\s+IMAGE\n\s+│\s+4\.14\.0\s+quay\.io/.*\n"
                     r"\s+│\s+4\.13\.10\s+quay\.io/", controllers), controllers
    assert "Additional updates which are not recommended for your cluster configuration are available" in controllers
    assert "$ oc adm upgrade --include-not-recommended" in controllers
    assert re.search(r"Updates with known issues:\n\s+│\s+\n\s+│\s+Version: 4\.14\.1\n.*\n"
                     r"\s+│\s+Reason: DemoEtcdDefragRisk\n", controllers), controllers

    unsigned = stage_output(out, 4)
    assert "ReleaseAccepted=False" in unsigned
    # A refused payload is named by ReleaseAccepted only: the cluster is not said to be updating.
    assert "Cluster version is 4.13.0\n" in unsigned
    assert "An upgrade is in progress" not in unsigned and "Working towards" not in unsigned
    assert "  Reason: RetrievePayload" in unsigned
    assert re.search(
        r"Message: Retrieving payload failed version=\"4\.14\.0\" image=\"registry\.example\.com/.*"
        r"init container cleanup.*SignatureValidationFailed: image pull failed for .* because the signature "
        r"validation failed: Source image rejected: A signature was required, but no signature exists",
        unsigned,
    ), unsigned
    assert re.search(
        r"ReleaseAccepted=False appeared [\d.]+ m?s after the kubelet's Pod status write", unsigned
    )
    # Prometheus's view: install/'s rule on what it scraped from `start`.
    assert re.search(
        r'ClusterReleaseNotAccepted\{name="version", namespace="openshift-cluster-version", '
        r'reason="RetrievePayload", severity="warning"\} firing since ',
        unsigned,
    ), unsigned
    assert re.search(r"ClusterReleaseNotAccepted firing [\d.]+ m?s after the kubelet's write", unsigned)

    update = stage_output(out, 5)
    assert 'ReleaseAccepted=True PayloadLoaded: Payload loaded version="4.14.0"' in update
    assert update.count("$ cluster-version-operator upgrade-status") == 5
    assert "Target Version:  4.14.0 (from 4.13.0)" in update
    assert re.search(r"Completion:\s+50% \(4 operators updated, 1 updating, 3 waiting\)", update)
    assert re.search(r"master-1\s+Progressing\s+Draining\s+4\.13\.0", update)
    assert re.search(r"worker\s+Degraded\s+33% \(1/3\)", update)
    assert re.search(r"worker-1\s+Degraded\s+Updating\s+4\.13\.0", update)
    assert "Message: Node worker-1 is degraded" in update
    assert re.search(r"worker-2\s+Progressing\s+Rebooting", update)
    # A firing alert became an Update Health line while the nodes drained.
    assert re.search(
        r"Warning\s+Unknown\s+Alert is firing: The pod disruption budget is preventing further disruption", update
    ), update
    # After the update, the available updates are those of 4.14.0.
    after = update.split("available updates follow the new version", 1)[1]
    assert re.search(r"Cluster version is 4\.14\.0\n", after)
    assert re.search(r"VERSION\s+IMAGE\n\s+│\s+4\.14\.5\s+quay\.io/", after), after
    assert "4.13.10" not in after

    rollback = stage_output(out, 6)
    assert "type: CapabilitiesPruned" in rollback
    assert re.search(r"enabledCapabilities (\w+, )*MachineAPI", rollback), rollback
    assert (
        'cluster_version_status_pruned_capabilities{field="enabledCapabilities",name="MachineAPI"} 1\n'
        in rollback
    )
    assert "Progressing: Cluster version is 4.13.0" in rollback
    # The forced rollback's waived precondition failures, in the history entry of 4.13.0.
    assert "acceptedRisks: Forced through blocking failures: Multiple precondition checks failed:" in rollback
    assert re.search(r"rollbacks\s+that\s+change\s+major\s+or\s+minor\s+versions\s+are\s+not\s+recommended", rollback)
    caps = re.search(r"enabledCapabilities:\n((?:\s+│\s+- .*\n)+)", rollback)
    assert caps and "MachineAPI" not in caps.group(1) and "Console" in caps.group(1), rollback

    summary = stage_output(out, 7)
    assert re.search(r"signature failure surfaced in ReleaseAccepted: [\d.]+ m?s", summary)
    assert re.search(r"degraded node surfaced in the update status insights: [\d.]+ m?s", summary)
    assert re.search(r"ClusterReleaseNotAccepted firing in Prometheus: [\d.]+ m?s", summary)
    assert re.search(r"PodDisruptionBudgetAtLimit in the insights: [\d.]+ m?s", summary)
    assert re.search(r"total: [\d.]+ s\. The cluster is still running", summary)

    # Every controller process the demo started has been stopped.
    pids = [int(p) for p in re.findall(r"\(pid (\d+)\)", out)]
    assert len(pids) == 5, pids  # Prometheus; start at 4.13.0, 4.14.0, 4.13.0 again; update-status-controller
    assert not [p for p in pids if alive(p)]


def test_help_documents_fast_and_pause() -> None:
    proc = subprocess.run([sys.executable, str(DEMO), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    for text in (
        "--fast",
        "--pause SECONDS",
        "CVO_PY_DEMO_FAST=1",
        "CVO_PY_DEMO_PAUSE=SECONDS",
        "CVO_PY_CLUSTER_DIR",
    ):
        assert text in proc.stdout


@pytest.mark.parametrize(
    ("args", "env", "error"),
    [
        (["--pause", "soon"], {}, "invalid pause 'soon': want seconds"),
        (["--pause", "-1"], {}, "invalid pause '-1': want 0 to 60 seconds"),
        ([], {"CVO_PY_DEMO_PAUSE": "x"}, "CVO_PY_DEMO_PAUSE: invalid pause 'x'"),
    ],
)
def test_bad_pause_is_a_usage_error(args: list[str], env: dict[str, str], error: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(DEMO), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )
    assert proc.returncode == 2
    assert error in proc.stderr


# -- the demo's pure helpers (no cluster) ------------------------------------------------------------

def cv_with(message: str) -> dict[str, object]:
    return {"status": {"conditions": [{"type": "Progressing", "status": "True", "message": message}]}}


UPDATING_DRAINING = {"type": "Updating", "status": "True", "reason": "Draining"}


@pytest.mark.parametrize(
    ("message", "done"),
    [
        ("Working towards 4.13.0: 4 of 8 done (50% complete)", 4),
        ("Cluster version is 4.13.0", 8),
        ("Working towards 4.13.0", 0),
        ("", 0),
    ],
)
def test_progress_count(message: str, done: int) -> None:
    assert progress_count(cv_with(message), 8) == done


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"usc-node-worker-1": json.dumps({"conditions": [UPDATING_DRAINING]})},
            "True Draining",
        ),
        ({"usc-node-worker-1": "conditions:\n- type: Degraded\n  status: 'False'\n"}, ""),
        ({"usc-node-worker-1": "[not: yaml"}, ""),
        ({"usc-node-worker-1": "just text"}, ""),
        ({}, ""),
    ],
    ids=["flow-style", "other-condition", "bad-yaml", "not-a-mapping", "absent"],
)
def test_node_condition(data: dict[str, str], expected: str) -> None:
    assert node_condition(data, "worker-1", "Updating") == expected


@pytest.mark.parametrize(
    ("argv", "env", "fast", "pause"),
    [
        ([], {}, False, 3.0),
        (["--fast"], {}, True, 0.0),
        ([], {"CVO_PY_DEMO_FAST": "1"}, True, 0.0),
        (["--pause", "0.5"], {}, False, 0.5),
        ([], {"CVO_PY_DEMO_PAUSE": "2"}, False, 2.0),
        (["--pause", "1"], {"CVO_PY_DEMO_PAUSE": "2"}, False, 1.0),
        (["--fast", "--pause", "1"], {}, True, 0.0),
    ],
)
def test_pause_flags_and_env(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], fast: bool, pause: float
) -> None:
    monkeypatch.delenv("CVO_PY_DEMO_FAST", raising=False)
    monkeypatch.delenv("CVO_PY_DEMO_PAUSE", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    args = demo.parse_args(argv)
    assert (args.fast, args.pause) == (fast, pause)


@pytest.mark.parametrize(
    ("phases", "expected"),
    [
        ({"master-0": "Completed", "master-1": "Draining"}, True),
        ({"master-0": "Completed", "master-1": "Updating"}, False),
        ({"master-2": "Pending"}, False),  # no insight yet
        ({}, True),
    ],
)
def test_nodes_in_phase(phases: dict[str, str], expected: bool) -> None:
    data = {
        "usc-node-master-0": json.dumps(
            {"conditions": [{"type": "Updating", "status": "False", "reason": "Completed"}]}
        ),
        "usc-node-master-1": json.dumps({"conditions": [UPDATING_DRAINING]}),
    }
    assert nodes_in_phase(data, phases) is expected
