"""The local node's configuration (pure), release-image metadata, install/ as the node applies it,
and the leftover check that `make node-down` and `make e2e` end with."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from syncworker.render import RenderData
from testkit.harness import image, localnode, nodecluster
from testkit.harness import manifests as install
from testkit.harness import nodeconfig as cfg
from testkit.harness.nodeconfig import NodePaths
from testkit.harness.wait import wait_until

ROOT = Path("/data/cluster/node")
PATHS = NodePaths(ROOT)
BINARIES = {"/usr/bin/conmon", "/usr/lib/cni", "/bin/pinns", "/bin/runc"}


def _paths_in(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if value.startswith("/") else []
    if isinstance(value, dict):
        return [p for v in value.values() for p in _paths_in(v)]
    if isinstance(value, list):
        return [p for v in value for p in _paths_in(v)]
    return []


def test_runtime_state_lives_under_the_node_directory() -> None:
    config = tomllib.loads(cfg.crio_config(PATHS, "127.0.0.1:5000/pause:3.10", Path("/bin/pinns"), Path("/bin/runc")))
    outside = [p for p in _paths_in(config) if not p.startswith(f"{ROOT}/") and p not in BINARIES]
    assert not outside, outside
    assert config["crio"]["runtime"]["cgroup_manager"] == "cgroupfs"
    assert config["crio"]["runtime"]["conmon_cgroup"] == "pod"  # conmon in the Pod's cgroup: down ends it there
    assert config["crio"]["image"]["pause_image"].startswith("127.0.0.1:")


def test_kubelet_runs_on_this_machine_with_its_limits() -> None:
    config = yaml.safe_load(cfg.kubelet_config(PATHS, "/ca.crt", 10250, 10248))
    assert config["cgroupDriver"] == "cgroupfs" and config["failCgroupV1"] is False and config["failSwapOn"] is False
    assert config["address"] == cfg.GATEWAY and config["healthzBindAddress"] == "127.0.0.1"
    assert config["cgroupRoot"] == f"/{cfg.CGROUP_ROOT}"
    for key in ("containerRuntimeEndpoint", "podLogsDir", "resolvConf"):
        assert str(ROOT) in config[key], key


def test_pods_get_no_route_off_the_machine() -> None:
    plugin = json.loads(cfg.cni_config(PATHS))["plugins"][0]
    assert plugin["isDefaultGateway"] is False and plugin["ipMasq"] is False
    assert plugin["ipam"]["routes"] == [{"dst": cfg.SERVICE_SUBNET, "gw": cfg.GATEWAY}]
    assert plugin["ipam"]["dataDir"].startswith(f"{ROOT}/")


def test_signature_policy_requires_signatures_only_where_asked() -> None:
    policy = json.loads(cfg.signature_policy("127.0.0.1:5000", Path("/k.pub")))
    assert policy["default"] == [{"type": "reject"}]  # no registry but the local one
    docker = policy["transports"]["docker"]
    assert docker["127.0.0.1:5000"] == [{"type": "insecureAcceptAnything"}]
    (signed,) = docker[f"127.0.0.1:5000/{cfg.SIGNED_REPOSITORY}"]
    assert signed["type"] == "sigstoreSigned" and signed["keyPath"] == "/k.pub"


def test_registry_listens_on_loopback_only() -> None:
    config = yaml.safe_load(cfg.registry_config(PATHS, 5000))
    assert config["http"]["addr"] == "127.0.0.1:5000"
    assert config["storage"]["filesystem"]["rootdirectory"].startswith(f"{ROOT}/")


def test_release_manifests_name_the_version_and_the_component_images(tmp_path: Path) -> None:
    manifests = image.write_release_manifests(
        tmp_path, "4.21.1", ["4.21.0"], {"cluster-version-operator": "r@sha256:1"}
    )
    metadata = json.loads((manifests / "release-metadata").read_text())
    assert metadata == {"kind": "cincinnati-metadata-v0", "version": "4.21.1", "previous": ["4.21.0"]}
    stream = json.loads((manifests / "image-references").read_text())
    assert stream["kind"] == "ImageStream" and stream["metadata"]["name"] == "4.21.1"
    assert stream["spec"]["tags"] == [
        {"name": "cluster-version-operator", "from": {"kind": "DockerImage", "name": "r@sha256:1"}}
    ]


@pytest.mark.parametrize(
    ("destination", "expected"),
    [
        ("127.0.0.1:5000/cvo-py:dev", "127.0.0.1:5000/cvo-py@sha256:ab"),
        ("127.0.0.1:5000/a/b", "127.0.0.1:5000/a/b@sha256:ab"),
        ("localhost:5000/x:1.2@sha256:00", "localhost:5000/x@sha256:ab"),
    ],
)
def test_pull_spec_by_digest(destination: str, expected: str) -> None:
    assert image.by_digest(destination, "sha256:ab") == expected


def test_install_is_applied_as_is_but_for_what_the_cluster_provides() -> None:
    release = "127.0.0.1:5000/r@sha256:1"
    docs = install.load(data=RenderData(release_image=release))
    rendered = nodecluster.render(release)
    assert release in json.dumps(rendered)
    for before, after in zip(docs, rendered, strict=True):
        if after["kind"] == "Deployment":
            spec = after["spec"]["template"]["spec"]
            scc = after["spec"]["template"]["metadata"]["annotations"]["openshift.io/required-scc"]
            # The UID restricted-v2 would assign; nothing else of the Pod changes.
            assigned = spec.get("securityContext", {}).pop("runAsUser", None)
            assert (assigned == nodecluster.RESTRICTED_UID) == (scc == "restricted-v2"), after["metadata"]
            if not spec.get("securityContext"):
                spec.pop("securityContext", None)
        assert before == after


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounting needs root")
def test_leftovers_finds_and_clean_up_removes_mounts_and_processes(tmp_path: Path) -> None:
    """What the leftover check reports for a node directory, and that the clean-up ends it."""
    paths = NodePaths(tmp_path / "node")
    mount_point = paths.root / "kubelet" / "pods" / "volume"
    mount_point.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(mount_point)], check=True)
    # A process that names the directory (a component whose pid was never recorded).
    stray = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", str(paths.root)])
    try:
        # Until the child has exec'd, its command line is still this process's: wait for its own.
        cmdline = Path(f"/proc/{stray.pid}/cmdline")
        wait_until(lambda: str(paths.root).encode() in cmdline.read_bytes(), 60, "the stray process's command line")
        mine = [line for line in localnode.leftovers(paths) if str(paths.root) in line]
        assert f"mount {mount_point}" in mine
        assert any(line.startswith(f"process {stray.pid}: ") for line in mine), mine
        localnode.clean_directory(paths)
        assert stray.wait(timeout=15) is not None
        assert not [line for line in localnode.leftovers(paths) if str(paths.root) in line]
    finally:
        if stray.poll() is None:
            stray.kill()
            stray.wait()
        subprocess.run(["umount", "-l", str(mount_point)], check=False, capture_output=True)


def test_capability_filter_keeps_what_the_bounding_set_allows(tmp_path: Path) -> None:
    from testkit.harness import capfilter

    # This machine's CapBnd: every capability up to CHECKPOINT_RESTORE but SYS_RESOURCE (bit 24).
    allowed = capfilter.bounding_set("Name:\tx\nCapBnd:\t000001fffeffffff\n")
    assert "CAP_SYS_ADMIN" in allowed and "CAP_CHECKPOINT_RESTORE" in allowed
    assert "CAP_SYS_RESOURCE" not in allowed and len(allowed) == 40
    caps = {"bounding": ["CAP_SYS_ADMIN", "CAP_SYS_RESOURCE"], "effective": ["CAP_SYS_RESOURCE"]}
    assert capfilter.limit(caps, allowed) == {"bounding": ["CAP_SYS_ADMIN"], "effective": []}
    bundle = tmp_path / "bundle"
    assert capfilter.spec_files(["--root", "/r", "create", "--bundle", str(bundle), "id"]) == [bundle / "config.json"]
    assert capfilter.spec_files(["exec", "--process", "/p.json", "id"]) == [Path("/p.json")]
    assert capfilter.spec_files(["state", "id"]) == []
