"""The built image (`make image-test`): its commands work as an arbitrary UID in group 0 with a
read-only root, `upgrade-status` prints what the host prints, `update-status-controller`
publishes insights to the real local API server, and the image carries no compilers, caches or
test files."""

from __future__ import annotations

import base64
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from cvo_py.runtime.kube import KubeClient
from testkit.checkout import EXAMPLES, PRODUCT, REPO
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster, free_port
from tests.image import runner
from tests.image.runner import ImageContainer

size_bytes = runner.build.size_bytes
COMPILERS = ("gcc", "g++", "cc", "c++", "clang", "clang++", "tcc", "cpp", "ld", "as", "make", "go", "rustc")


def test_runs_as_an_arbitrary_uid_in_group_0_on_a_read_only_root(image: ImageContainer) -> None:
    script = 'id -u; id -g; touch /tmp/x || echo "/tmp: read-only"; touch "$HOME/x" || echo "home: read-only"'
    result = image.run(["sh", "-c", script])
    lines = result.stdout.split("\n")
    assert lines[:2] == ["4242", "0"], result.stdout + result.stderr
    assert "/tmp: read-only" in result.stdout and "home: read-only" in result.stdout, result.stdout + result.stderr


def test_version_client(image: ImageContainer) -> None:
    result = image.run(["cluster-version-operator", "version", "--client"])
    host = subprocess.run(
        [sys.executable, "-m", "cvo_py", "version", "--client"], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout) == (0, host.stdout), result.stderr
    print(f"\n  in the image: {result.stdout.strip()}")


def test_every_module_imports(image: ImageContainer) -> None:
    """Every module of every package the project ships imports in the image (a package the build
    left out would crash a subcommand there and nowhere else)."""
    script = (
        "import importlib, pkgutil; "
        "mods = [i.name for top in " + repr(PRODUCT) + " "
        "for i in pkgutil.walk_packages(importlib.import_module(top).__path__, top + '.') "
        "if not i.name.endswith('__main__')]; "
        "[importlib.import_module(m) for m in mods]; print('ok', len(mods))"
    )
    # Through sh (as the other commands here): the script is sh's $0, so no quoting is involved.
    result = image.run(["sh", "-c", '/opt/cvo-py/bin/python -c "$0"', script])
    assert result.returncode == 0 and result.stdout.startswith("ok "), result.stdout[-500:] + result.stderr[-2000:]
    assert int(result.stdout.split()[1]) > 50, result.stdout  # every package walked, not an empty list


SHIPPED = PRODUCT


def shipped_names() -> set[str]:
    """The file names of the product's own modules (a toolkit module may share one, e.g. `kubelet.py`)."""
    return {p.name for top in SHIPPED for p in (REPO / top).rglob("*.py")}


def test_the_image_holds_nothing_of_the_development_toolkit(image: ImageContainer) -> None:
    """The toolkit (testkit/) and the tests stay in the checkout: no file of theirs in the image,
    and no module of theirs importable there."""
    toolkit = {p.name for p in (REPO / "testkit").rglob("*.py")} - {"__init__.py"}
    assert {"checkout.py", "localcluster.py", "kubelet.py"} <= toolkit
    find = "find / -xdev -type f \\( -name '*.py' -o -name '*.pyc' -o -name '*.go' \\) 2>/dev/null"
    listing = image.run(["sh", "-c", find])
    files = listing.stdout.split()
    assert len(files) > 500, listing.stdout[-500:] + listing.stderr[-500:]  # the listing did list the venv
    ours = [f for f in files if "/site-packages/" in f and f.split("/site-packages/")[1].split("/")[0] in SHIPPED]
    assert ours, files[:20]
    found = [f for f in files if "testkit" in f or "/tests/e2e/" in f]
    found += [f for f in ours if f.rsplit("/", 1)[1].split(".")[0] + ".py" in toolkit - shipped_names()]
    assert found == [], found
    probe = image.run(["/opt/cvo-py/bin/python", "-c", "import testkit"])
    assert probe.returncode != 0 and "No module named 'testkit'" in probe.stderr, probe.stdout + probe.stderr


def test_upgrade_status_from_a_snapshot_prints_what_the_host_prints(image: ImageContainer) -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found (looked in {EXAMPLES.resolve()})")
    examples = sorted(p.name for p in EXAMPLES.glob("*-cv.yaml"))
    assert examples, f"no *-cv.yaml in {EXAMPLES}"
    for name in examples:
        for details in ("none", "all"):
            args = ["upgrade-status", "--details", details, "--mock-clusterversion"]
            inside = image.run(
                ["cluster-version-operator", *args, f"/examples/{name}"], volumes=[f"{EXAMPLES.resolve()}:/examples:ro"]
            )
            host = subprocess.run(
                [sys.executable, "-m", "cvo_py", *args, str(EXAMPLES / name)],
                capture_output=True,
                text=True,
                check=False,
            )
            assert (inside.returncode, inside.stdout) == (host.returncode, host.stdout), (
                f"{name} --details {details}: {inside.stderr}"
            )
            assert inside.stdout.strip(), f"{name}: no output"
    print(f"\n  {len(examples)} snapshots x 2 detail levels: identical to the host run")


def test_update_status_controller_publishes_insights(
    image: ImageContainer,
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    clusterversion_cleanup: None,
    tmp_path: Path,
) -> None:
    docs = h.render(h.load_manifests(), namespace)
    h.apply(kube, docs)
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, "4.15.8", now - timedelta(days=1))
    h.create_operator(kube, "dns", "4.15.8", now)
    # In-cluster configuration, as in its Pod: the ServiceAccount's token, the cluster CA and the
    # namespace where a Pod finds them (read-only), the API server's address in the environment.
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(cluster.service_account_token(namespace, h.SERVICE_ACCOUNT))
    (account / "ca.crt").write_bytes(_cluster_ca(cluster))
    (account / "namespace").write_text(namespace)
    for f in account.iterdir():
        f.chmod(0o644)  # readable by the arbitrary UID
    server = urlsplit(kube.server)
    h.create_configmap(kube, namespace)
    log = tmp_path / "usc.log"
    proc = image.start(
        # --alerts-url=: no in-cluster Thanos here, and nothing may leave the machine.
        ["cluster-version-operator", "update-status-controller", f"--listen=127.0.0.1:{free_port()}", "--v=2",
         "--alerts-url="],
        log,
        # /var/run is a link to /run in the image: mount where it points.
        volumes=[f"{account}:/run/secrets/kubernetes.io/serviceaccount:ro"],
        env={"KUBERNETES_SERVICE_HOST": str(server.hostname), "KUBERNETES_SERVICE_PORT": str(server.port)},
    )
    try:
        h.wait_for(
            "insights published by the controller in the image",
            lambda: _alive(proc, log) and (h.configmap_data(kube, namespace) or {}).get("usc-cv-version"),
            timeout=90,
        )
        data = h.configmap_data(kube, namespace) or {}
    finally:
        code = ImageContainer.stop(proc)
        h.delete(kube, h.outside(docs, namespace))
    assert "usc-co-dns" in data, sorted(data)
    # Stopped; not its exit code: buildah's chroot runner ends the command with SIGKILL when it is
    # itself terminated (graceful shutdown is tested on the host: tests/status/updatestatus/controller/).
    assert code is not None, "the controller in the image did not stop"
    print(f"\n  published {len(data)} keys: {', '.join(sorted(data))}")


def _alive(proc: subprocess.Popen[bytes], log: Path) -> bool:
    assert proc.poll() is None, f"exited with {proc.returncode}: {log.read_text()[-3000:]}"
    return True


def _cluster_ca(cluster: LocalCluster) -> bytes:
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    entry = config["clusters"][0]["cluster"]
    if "certificate-authority-data" in entry:
        return base64.b64decode(entry["certificate-authority-data"])
    return Path(entry["certificate-authority"]).read_bytes()


def test_no_compilers_caches_or_test_files(image: ImageContainer) -> None:
    root = image.root
    found: list[str] = []
    for directory in ("usr/bin", "usr/local/bin", "bin", "usr/sbin", "opt/cvo-py/bin"):
        for tool in COMPILERS:
            if (root / directory / tool).exists():
                found.append(f"/{directory}/{tool}")
    for path in (root / "opt" / "cvo-py").rglob("*"):
        rel = "/" + str(path.relative_to(root))
        if path.is_dir() and path.name in ("tests", "test", "e2e_test"):
            found.append(rel)
        elif path.is_file() and (path.name.startswith("test_") or path.name == "conftest.py"):
            found.append(rel)
        elif path.name in ("pip", "setuptools", "wheel") and path.is_dir():
            found.append(rel)
    for leftover in ("root/.cache", "var/lib/cvo-py/.cache", "src", "wheels", "etc/pip.conf", "tests"):
        if (root / leftover).exists() and (not (root / leftover).is_file() or (root / leftover).stat().st_size):
            found.append("/" + leftover)
    assert found == [], f"the image holds build tools, caches or test files: {found[:20]}"


def test_modules_are_byte_compiled(image: ImageContainer) -> None:
    """Every module of the project and its dependencies has byte code beside it: the container
    cannot write any, so a module without it would be compiled from source by every process."""
    site = next((image.root / "opt" / "cvo-py" / "lib").glob("python3*/site-packages"))
    tag = "cpython-" + site.parent.name.removeprefix("python").replace(".", "")  # the image's Python
    missing = [
        str(path.relative_to(site))
        for path in site.rglob("*.py")
        if not (path.parent / "__pycache__" / f"{path.stem}.{tag}.pyc").is_file()
    ]
    checked = sum(1 for _ in site.rglob("*.py"))
    assert checked > 1000, f"only {checked} modules found under {site}"
    assert missing == [], f"{len(missing)} of {checked} modules have no byte code: {missing[:10]}"


def test_size(image: ImageContainer) -> None:
    size = image.size()
    print(f"\n  {image.ref}: {size} (uncompressed layers, as buildah images shows it)")
    assert size_bytes(size) < 400e6, size


def test_the_build_leaves_no_image_without_a_name() -> None:
    """In vfs storage each layer is a whole copy of the file system: an image of the project that
    lost its name to a newer build and stayed would fill the disk over repeated builds."""
    assert runner.build.unnamed_images() == []
