"""Run a real local kube-apiserver (with embedded etcd) for cvo-py's tests and demo.

    hack/localcluster.py up [--dir DIR]        build if needed, start, wait for /readyz, install CRDs
    hack/localcluster.py down [--dir DIR]      stop it and remove its data (the built binary stays)
    hack/localcluster.py restart [--dir DIR]   stop and start again on the same port, keeping the data
    hack/localcluster.py status [--dir DIR]    print the state and whether it is ready
    hack/localcluster.py build                 (re)build the harness binary if its sources changed

DIR defaults to $CVO_PY_CLUSTER_DIR, else `.local-cluster` in the repository. The binary is
built once into `.local-cluster/bin/` and reused while hack/kube-apiserver/ is unchanged.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testkit.checkout import REPO

HARNESS_SRC = REPO / "hack" / "kube-apiserver"
BIN_DIR = REPO / ".local-cluster" / "bin"
BINARY = BIN_DIR / "kube-apiserver-harness"
CRD_DIR = REPO / "tests" / "crds"
# Installed by `up`; the 4.13-enum ClusterVersion variant is swapped in by tests that need it.
DEFAULT_CRDS = (
    "clusterversion.yaml",
    "clusteroperator.yaml",
    "machineconfigpool.yaml",
    "machineconfig.yaml",
    "servicemonitor.yaml",
    "prometheusrule.yaml",
)


class ClusterError(Exception):
    """A clear, one-paragraph reason why the local control plane is not usable."""


def default_dir() -> Path:
    return Path(os.environ.get("CVO_PY_CLUSTER_DIR") or REPO / ".local-cluster").resolve()


@dataclass
class Cluster:
    dir: Path
    state: dict[str, Any]

    @property
    def kubeconfig(self) -> str:
        return str(self.state["kubeconfig"])

    @property
    def server(self) -> str:
        return str(self.state["server"])

    @property
    def token(self) -> str:
        return str(self.state["adminToken"])

    @property
    def ca_file(self) -> str:
        return str(self.dir / "pki" / "ca.crt")


# -- build --------------------------------------------------------------------------------------


def source_hash(src: Path, extra: str = "") -> str:
    """A digest of a Go build's inputs: its .go/.mod/.sum files and `extra` (flags, tags)."""
    digest = hashlib.sha256(extra.encode())
    for path in sorted(src.iterdir()):
        if path.suffix in (".go", ".mod", ".sum"):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def version_ldflags() -> str:
    """Stamp the Kubernetes version the module build would otherwise report as v0.0.0-master."""
    mod = (HARNESS_SRC / "go.mod").read_text()
    version = next(line.split()[1] for line in mod.splitlines() if line.strip().startswith("k8s.io/kubernetes v"))
    major, minor = version.lstrip("v").split(".")[:2]
    pkg = "k8s.io/component-base/version"
    return " ".join(
        [
            f"-X {pkg}.gitVersion={version}",
            f"-X {pkg}.gitMajor={major}",
            f"-X {pkg}.gitMinor={minor}",
            f"-X {pkg}.gitTreeState=clean",
        ]
    )


def go_build(
    what: str,
    src: Path,
    targets: list[tuple[str, Path]],
    stamp: Path,
    *,
    ldflags: str = "",
    tags: str = "",
    force: bool = False,
    quiet: bool = False,
    goflags: str = "",
) -> None:
    """`go build` each (package, output binary) of the module in `src`, unless the binaries exist
    and `stamp` records a build from the same sources and flags. `goflags` is GOFLAGS for the build."""
    wanted = source_hash(src, ldflags + (f"\0{tags}" if tags else "") + (f"\0{goflags}" if goflags else ""))
    current = stamp.exists() and stamp.read_text() == wanted
    if not force and current and all(out.exists() for _pkg, out in targets):
        return
    if shutil.which("go") is None:
        raise ClusterError(f"cannot build {what}: the `go` toolchain is not on PATH")
    if not quiet:
        print(f"building {what} from Go modules (first build takes a few minutes)...", file=sys.stderr, flush=True)
    started = time.monotonic()
    stamp.unlink(missing_ok=True)
    for package, out in targets:
        out.parent.mkdir(parents=True, exist_ok=True)
        # Niced: a cold build takes minutes on a small machine that tests share.
        args = ["nice", "-n", "10"] if shutil.which("nice") else []
        args += ["go", "build", "-ldflags", ldflags, "-o", str(out)]
        if tags:
            args += ["-tags", tags]
        env = {**os.environ, "GOFLAGS": f"{os.environ.get('GOFLAGS', '')} {goflags}".strip()} if goflags else None
        proc = subprocess.run([*args, package], cwd=src, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
            raise ClusterError(f"building {out.name} failed (go build exit {proc.returncode}):\n{tail}")
    stamp.write_text(wanted)
    if not quiet:
        print(f"built {what} in {time.monotonic() - started:.0f}s", file=sys.stderr)


def build(force: bool = False, quiet: bool = False) -> Path:
    go_build(
        "the local kube-apiserver",
        HARNESS_SRC,
        [(".", BINARY)],
        BIN_DIR / ".source-hash",
        ldflags=version_ldflags(),
        force=force,
        quiet=quiet,
    )
    return BINARY


# -- lifecycle ----------------------------------------------------------------------------------


def _read_state(data_dir: Path) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads((data_dir / "state.json").read_text())
        return state
    except (OSError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours is not alive.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return True


def _runs_replaced_binary(pid: int) -> bool:
    """Whether the process runs an executable that has since been rebuilt (Linux; else False)."""
    try:
        return os.readlink(f"/proc/{pid}/exe").endswith(" (deleted)")
    except OSError:
        return False


def _ready(cluster: Cluster, timeout: float = 2.0) -> bool:
    context = ssl.create_default_context(cafile=cluster.ca_file)
    request = urllib.request.Request(cluster.server + "/readyz", headers={"Authorization": f"Bearer {cluster.token}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ssl.SSLError):
        return False


def running(data_dir: Path | None = None) -> Cluster | None:
    data_dir = data_dir or default_dir()
    state = _read_state(data_dir)
    if not state or not pid_alive(int(state.get("pid", 0))):
        return None
    cluster = Cluster(data_dir, state)
    return cluster if _ready(cluster) else None


def _log_tail(data_dir: Path, lines: int = 20) -> str:
    try:
        text = (data_dir / "apiserver.log").read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    interesting = [line for line in text if "harness:" in line or line.startswith(("E", "F"))]
    return "\n".join((interesting or text)[-lines:])


def up(
    data_dir: Path | None = None,
    port: int = 0,
    timeout: float = 120.0,
    quiet: bool = False,
    apiserver_args: tuple[str, ...] = (),
    crds: Sequence[str] = DEFAULT_CRDS,
) -> Cluster:
    """Start the API server in `data_dir` (or return the one running there); `apiserver_args`
    (`--name=value`) replace the harness's own kube-apiserver flags of the same name; the `crds`
    of tests/crds are installed (a real node's come from its installer and release instead)."""
    data_dir = data_dir or default_dir()
    existing = running(data_dir)
    if existing:
        build(quiet=quiet)
        if not _runs_replaced_binary(int(existing.state["pid"])):
            if not quiet:
                print(f"local cluster already running at {existing.server} (kubeconfig {existing.kubeconfig})")
            install_crds(existing, crds)
            return existing
        # The harness sources changed since it started: what tests expect of it may be missing.
        print("the local cluster runs an older harness build: restarting it on the new one", file=sys.stderr)
        port = port or int(existing.state["port"])
        stop_pid(int(existing.state["pid"]))
    old = _read_state(data_dir)
    if old and pid_alive(int(old.get("pid", 0))):
        stop_pid(int(old["pid"]))
    binary = build(quiet=quiet)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "state.json").unlink(missing_ok=True)
    args = [str(binary), "--data-dir", str(data_dir)]
    if port:
        args += ["--port", str(port)]
    args += [f"--apiserver-arg={arg}" for arg in apiserver_args]
    with open(data_dir / "apiserver.log", "ab") as log:
        proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, stdin=subprocess.DEVNULL
        )
    deadline = time.monotonic() + timeout
    cluster: Cluster | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ClusterError(
                f"the local kube-apiserver exited with code {proc.returncode} during start-up:\n"
                f"{_log_tail(data_dir)}\n(full log: {data_dir / 'apiserver.log'})"
            )
        state = _read_state(data_dir)
        if state and state.get("pid") == proc.pid:
            cluster = Cluster(data_dir, state)
            if _ready(cluster):
                break
        time.sleep(0.25)
    else:
        proc.terminate()
        raise ClusterError(f"the local kube-apiserver was not ready within {timeout:.0f}s:\n{_log_tail(data_dir)}")
    assert cluster is not None
    install_crds(cluster, crds)
    if not quiet:
        print(
            f"local cluster ready at {cluster.server} "
            f"(Kubernetes {cluster.state['kubernetesVersion']}, etcd {cluster.state['etcdVersion']})"
        )
        print(f"kubeconfig: {cluster.kubeconfig}")
    return cluster


def stop_pid(pid: int, timeout: float = 15.0) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.1)
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
        while pid_alive(pid):
            time.sleep(0.05)
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def stop(data_dir: Path | None = None) -> None:
    """Stop the server but keep its data (a later `up` resumes it)."""
    data_dir = data_dir or default_dir()
    state = _read_state(data_dir)
    if state and pid_alive(int(state.get("pid", 0))):
        stop_pid(int(state["pid"]))


# A real node's state beside the test cluster's data (hack/localnode.py keeps it in the same
# directory): `make node-down` removes it, never the test cluster's `down`, which would pull a
# running node's certificates and data from under it.
NODE_ENTRIES = ("node", "node.json")


def down(data_dir: Path | None = None) -> None:
    data_dir = data_dir or default_dir()
    stop(data_dir)
    if data_dir.exists():
        for entry in data_dir.iterdir():
            if entry.resolve() == BIN_DIR.resolve() or entry.name in NODE_ENTRIES:
                continue
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        node_beside = any((data_dir / name).exists() for name in NODE_ENTRIES)
        if data_dir.resolve() != BIN_DIR.parent.resolve() and not node_beside:
            shutil.rmtree(data_dir, ignore_errors=True)
    print(f"local cluster in {data_dir} stopped and its data removed")


def restart(data_dir: Path | None = None) -> Cluster:
    data_dir = data_dir or default_dir()
    state = _read_state(data_dir)
    stop(data_dir)
    return up(data_dir, port=int(state["port"]) if state else 0, quiet=True)


# -- CRDs and etcd --------------------------------------------------------------------------------


def admin_client(cluster: Cluster) -> Any:
    from cvo_py.runtime.kube import connect

    return connect(cluster.kubeconfig, user_agent="cvo-py-localcluster")


def apply_crd(cluster: Cluster, path: Path, timeout: float = 30.0) -> None:
    """Create or replace a CRD from a file and wait until it is Established."""
    import yaml

    from cvo_py.runtime.kube import CRDS, ApiError

    client = admin_client(cluster)
    body = yaml.safe_load(path.read_text())
    name = body["metadata"]["name"]
    try:
        current = client.get(CRDS, name)
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        client.replace(CRDS, body)
    except ApiError as exc:
        if not exc.is_not_found():
            raise
        client.create(CRDS, body)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        crd = client.get(CRDS, name)
        conditions = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
        if conditions.get("Established") == "True" and _served(client, crd):
            return
        time.sleep(0.1)
    raise ClusterError(f"CRD {name} from {path.name} was not Established within {timeout:.0f}s")


def _served(client: Any, crd: dict[str, Any]) -> bool:
    """Established is not enough: the resource's storage may still be initializing (429)."""
    from cvo_py.runtime.kube import ApiError

    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("served"))
    path = f"/apis/{spec['group']}/{version}/{spec['names']['plural']}"
    try:
        client.request("GET", path, query={"limit": 1}, timeout=5.0, busy_retries=0)
        return True
    except ApiError:
        return False


def install_crds(cluster: Cluster, names: Sequence[str] = DEFAULT_CRDS) -> None:
    for name in names:
        path = CRD_DIR / name
        if path.exists():
            apply_crd(cluster, path)


def etcd_revision(cluster: Cluster) -> int:
    body = _etcd_post(cluster, "/v3/kv/range", {"key": "AA=="})
    return int(body["header"]["revision"])


def compact(cluster: Cluster) -> int:
    """Compact etcd at its current revision: older resourceVersions are gone (410 for watches)."""
    revision = etcd_revision(cluster)
    _etcd_post(cluster, "/v3/kv/compaction", {"revision": str(revision), "physical": True})
    return revision


def etcd_wal_fsyncs(cluster: Cluster) -> dict[float, int]:
    """etcd's WAL fsync histogram so far: upper bound in seconds → fsyncs that took at most that.

    Every write to the API server waits for one: a disk whose fsyncs stall (etcd asks for a p99
    under 10 ms) shows in every write-latency figure measured on this cluster."""
    with urllib.request.urlopen(cluster.state["etcdClientURL"] + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    buckets: dict[float, int] = {}
    for line in text.splitlines():
        match = re.match(r'etcd_disk_wal_fsync_duration_seconds_bucket\{le="([^"]+)"\} (\S+)', line)
        if match:
            buckets[float(match.group(1))] = int(float(match.group(2)))
    return buckets


def _etcd_post(cluster: Cluster, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        cluster.state["etcdClientURL"] + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        result: dict[str, Any] = json.loads(resp.read())
        return result


# -- command line ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="localcluster.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=["up", "down", "restart", "status", "build"])
    parser.add_argument(
        "--dir", type=Path, default=None, help="data directory (default $CVO_PY_CLUSTER_DIR or .local-cluster)"
    )
    parser.add_argument("--port", type=int, default=0, help="API server port for `up` (default: previous or free)")
    args = parser.parse_args(argv)
    data_dir = args.dir.resolve() if args.dir else default_dir()
    try:
        if args.command == "build":
            build()
        elif args.command == "up":
            up(data_dir, port=args.port)
        elif args.command == "down":
            down(data_dir)
        elif args.command == "restart":
            cluster = restart(data_dir)
            print(f"local cluster restarted at {cluster.server}")
        else:
            current = running(data_dir)
            if current is None:
                print(f"no local cluster running in {data_dir}")
                return 1
            print(json.dumps({k: v for k, v in current.state.items() if k != "adminToken"}, indent=2))
    except ClusterError as exc:
        print(f"localcluster: {exc}", file=sys.stderr)
        return 1
    return 0


def free_port() -> int:
    """A loopback TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


if __name__ == "__main__":
    raise SystemExit(main())
