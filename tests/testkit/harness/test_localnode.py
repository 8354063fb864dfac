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

from status.clusterversion.capabilities import crd_enums
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


def test_node_up_applies_what_an_installer_does_and_the_payload_holds_the_rest() -> None:
    release = "127.0.0.1:5000/r@sha256:1"
    everything = install.load(data=RenderData(release_image=release))
    bootstrap = nodecluster.bootstrap_manifests(release)
    names = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in bootstrap}
    assert names == {
        ("Namespace", None, "openshift-cluster-version"),
        ("ServiceAccount", "openshift-cluster-version", "cluster-version-operator"),
        ("ServiceAccount", "openshift-cluster-version", "update-payload"),
        ("ClusterRoleBinding", None, "cvo-py-cluster-version-operator-admin"),
        ("Deployment", "openshift-cluster-version", "cluster-version-operator"),
    }
    # Exactly as install/ renders them, nothing added; the rest of install/ is left to start.
    assert all(doc in everything for doc in bootstrap)
    assert len(everything) > len(bootstrap)
    (deployment,) = [d for d in bootstrap if d["kind"] == "Deployment"]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == release
    assert "openshift-config-managed" in nodecluster.cluster_namespaces(release)
    assert set(nodecluster.installer_clusterversion("id")["spec"]) == {"clusterID"}  # no channel: no update service


def _release_root(tmp_path: Path, spec: nodecluster.ReleaseSpec) -> Path:
    """The payload a release image of `spec` holds: the cvo-py image's /manifests (install/), and
    what Dockerfile.release adds."""
    root = tmp_path / spec.version
    files = nodecluster.payload_files(spec, "127.0.0.1:5000/pause@sha256:1", "127.0.0.1:5000/absent@sha256:2")
    image.write_release_manifests(root, spec.version, (), {"cluster-version-operator": "r"}, files)
    for path in install.files():
        (root / "manifests" / path.name).write_text(path.read_text())
    return root


@pytest.mark.parametrize("spec", nodecluster.RELEASES, ids=lambda s: s.version)
def test_release_payloads_load_with_their_crds_and_operators(tmp_path: Path, spec: nodecluster.ReleaseSpec) -> None:
    from syncworker.load import load_payload
    from syncworker.select import Selection

    payload = load_payload(str(_release_root(tmp_path, spec)), release_image="r", selection=Selection())
    assert payload.release.version == spec.version
    kept = {(m.obj["kind"], m.obj["metadata"]["name"]) for m in payload.manifests}
    for crd in ("clusterversions", "clusteroperators", "featuregates", "servicemonitors", "machineconfigpools"):
        assert any(kind == "CustomResourceDefinition" and name.startswith(f"{crd}.") for kind, name in kept), crd
    # Nothing excluded for want of annotations: what is left out is install/'s feature-set and gated files.
    assert {e.reason for e in payload.excluded} <= {
        '"Default" is required, and release.openshift.io/feature-set=DevPreviewNoUpgrade',
        "feature gate ClusterUpdateAcceptRisks is required but not enabled",
    }, payload.excluded
    operators = {name for kind, name in kept if kind == "ClusterOperator"}
    assert operators == {*spec.operators, *([nodecluster.STUCK] if spec.stuck else [])}
    for manifest in payload.manifests:
        if manifest.obj["kind"] == "ClusterOperator":
            assert manifest.obj["status"]["versions"] == [{"name": "operator", "version": spec.version}]
    (cvo_crd,) = [m.obj for m in payload.manifests if m.obj["metadata"]["name"].startswith("clusterversions.")]
    enabled = crd_enums(cvo_crd)["enabledCapabilities"]
    assert enabled is not None and ("MachineAPI" in enabled) == (spec.api == nodecluster.API_CURRENT)
    # The CVO's own CRDs are in its level 00, ahead of its Deployment, as upstream's image has them.
    order = [(m.obj["kind"], m.obj["metadata"]["name"]) for m in payload.manifests]
    crd = order.index(("CustomResourceDefinition", "clusterversions.config.openshift.io"))
    assert crd < order.index(("Deployment", "cluster-version-operator"))


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
