"""A real single-node cluster on this machine, for cvo-py's end-to-end tier (`make node-up`, ...).

    hack/localnode.py up       build what is missing, start the node, push the images, install as an installer
    hack/localnode.py down     stop everything, remove its state, and check that nothing is left
    hack/localnode.py status   print node.json and which processes run
    hack/localnode.py build    (re)build kube-node, CRI-O and pinns if their sources changed
    hack/localnode.py e2e      up, run tests/e2e, and down (also on failure or Ctrl-C)
    hack/localnode.py leftovers  list what a node left on this machine (exit 1 if anything)
    hack/localnode.py restart-agents  stop and start the kubelet and CRI-O (a node reboot, for them)

The node is its own control plane, apart from the test cluster of `make cluster-up`: an API server
(the same harness, with the ServiceAccount admission plugin) on 127.0.0.1:6443, as the Deployments
in install/ expect on a control-plane node; kube-controller-manager, kube-scheduler, kube-proxy
(nftables) and the kubelet from the same Kubernetes module, built into one binary (`kube-node`);
CRI-O with runc (both built from Go modules) and Debian's conmon; the bridge CNI plugin;
Debian's docker-registry on 127.0.0.1.

Every process is started by this module in its own session, its pid kept in `pids.json`, and
stopped by `down`; containers and their conmon processes live in the kubelet's cgroup root
(CGROUP_ROOT), which `down` empties and removes. Every state directory lies under
`$CVO_PY_CLUSTER_DIR/node`; the one path outside it is the node's /etc/cvo/updatepayloads, the
version Pod's hostPath, made a link into it while the node is up. `.local-cluster/node.json`
describes the running node: kubeconfig, node, registry, runtime, release_images.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cvo_py.runtime.kube import KubeClient, Resource
from testkit.checkout import REPO
from testkit.harness import localcluster, manifests
from testkit.harness import nodeconfig as cfg
from testkit.harness.localcluster import BIN_DIR, ClusterError, free_port
from testkit.harness.nodeconfig import NodePaths
from testkit.harness.payload import ensure_priority_class

NODE_SRC = REPO / "hack" / "node"
CRIO_SRC = REPO / "hack" / "cri-o"
KUBE_NODE = BIN_DIR / "kube-node"
CRIO = BIN_DIR / "crio"
PINNS = BIN_DIR / "pinns"
RUNC = BIN_DIR / "runc"
RUNC_MODULE = "github.com/opencontainers/runc"
CAPFILTER = Path(__file__).resolve().parent / "capfilter.py"
CRIO_MODULE = "github.com/cri-o/cri-o"
# No gpgme (containers/image's own OpenPGP code instead), no btrfs, no ostree: only libseccomp.
CRIO_TAGS = "containers_image_ostree_stub containers_image_openpgp exclude_graphdriver_btrfs seccomp"
PAYLOAD_LINK = Path("/etc/cvo/updatepayloads")
NODES = Resource("v1", "Node", "nodes", False)
ENDPOINTSLICES = Resource("discovery.k8s.io/v1", "EndpointSlice", "endpointslices", True)
MASTER_LABEL = "node-role.kubernetes.io/master"

# What the node runs, from Debian's packages: (a file the package installs, the package).
PACKAGES = (
    (cfg.CONMON, "conmon"),
    (f"{cfg.CNI_PLUGIN_DIR}/bridge", "containernetworking-plugins"),
    ("/usr/bin/docker-registry", "docker-registry"),
    ("/usr/sbin/nft", "nftables"),
    ("/usr/sbin/conntrack", "conntrack"),
    ("/usr/bin/socat", "socat"),
    ("/usr/bin/buildah", "buildah"),
    ("/bin/busybox", "busybox-static"),  # the pause image
    ("/usr/include/seccomp.h", "libseccomp-dev"),  # CRI-O's build
)
# Started in this order, stopped in the reverse one.
COMPONENTS = (
    "api-forwarder",
    "registry",
    "kube-controller-manager",
    "kube-scheduler",
    "crio",
    "kubelet",
    "kube-proxy",
)
NODE_JSON = "node.json"


def data_dir() -> Path:
    return localcluster.default_dir() / "node"


def node_json_path() -> Path:
    return localcluster.default_dir() / NODE_JSON


# -- host prerequisites and builds ----------------------------------------------------------------


def ensure_packages(quiet: bool = False) -> None:
    missing = sorted({package for path, package in PACKAGES if not Path(path).exists()})
    if not missing:
        return
    if os.geteuid() != 0:
        raise ClusterError(f"the local node needs Debian packages {', '.join(missing)} (run as root to install them)")
    if not quiet:
        print(f"installing {' '.join(missing)} with apt-get...", file=sys.stderr, flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *missing]):
        proc = subprocess.run(args, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise ClusterError(f"{' '.join(args[:2])} failed (exit {proc.returncode}): {' / '.join(tail)}")


def _crio_module_dir() -> Path:
    proc = subprocess.run(
        ["go", "list", "-mod=mod", "-m", "-f", "{{.Dir}}", CRIO_MODULE],
        cwd=CRIO_SRC,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise ClusterError(f"cannot locate the {CRIO_MODULE} module: {proc.stderr.strip()[-300:]}")
    return Path(proc.stdout.strip())


def build_pinns(force: bool = False) -> Path:
    """CRI-O's pinns (a small C program that pins namespaces), from the same module's sources."""
    stamp = BIN_DIR / ".pinns-hash"
    wanted = localcluster.source_hash(CRIO_SRC, "pinns")
    if not force and PINNS.exists() and stamp.exists() and stamp.read_text() == wanted:
        return PINNS
    sources = sorted((_crio_module_dir() / "pinns" / "src").glob("*.c"))
    BIN_DIR.mkdir(parents=True, exist_ok=True)
    args = ["cc", "-std=c99", "-O2", "-Wall", "-static", "-o", str(PINNS), *map(str, sources)]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ClusterError(f"building pinns failed: {proc.stderr.strip()[-500:]}")
    stamp.write_text(wanted)
    return PINNS


def build(force: bool = False, quiet: bool = False) -> None:
    """The API server harness, kube-node, CRI-O and pinns, each rebuilt only when its sources change."""
    ensure_packages(quiet)
    localcluster.build(force=force, quiet=quiet)
    localcluster.go_build(
        "kube-node (kubelet, kube-controller-manager, kube-scheduler, kube-proxy)",
        NODE_SRC,
        [(".", KUBE_NODE)],
        BIN_DIR / ".kube-node-hash",
        ldflags=localcluster.version_ldflags(),
        force=force,
        quiet=quiet,
    )
    localcluster.go_build(
        f"CRI-O and runc ({CRIO_MODULE}, {RUNC_MODULE})",
        CRIO_SRC,
        [(f"{CRIO_MODULE}/cmd/crio", CRIO), (RUNC_MODULE, RUNC)],
        BIN_DIR / ".crio-hash",
        tags=CRIO_TAGS,
        force=force,
        quiet=quiet,
        goflags="-mod=mod",
    )
    build_pinns(force)


# -- processes ---------------------------------------------------------------------------------------


def _read_pids(paths: NodePaths) -> dict[str, int]:
    """The recorded pid of each component, while that pid still names the process we started."""
    try:
        recorded: dict[str, list[int]] = json.loads(paths.pids.read_text())
    except (OSError, ValueError):
        return {}
    pids: dict[str, int] = {}
    for name, entry in recorded.items():
        with contextlib.suppress(TypeError, ValueError):
            pid, started = entry
            if _start_time(int(pid)) == int(started):
                pids[name] = int(pid)
    return pids


def _start_time(pid: int) -> int:
    """When the process started (clock ticks since boot): with the pid, it names one process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat.rsplit(")", 1)[1].split()[19])


def components(paths: NodePaths) -> dict[str, int]:
    """The pid of each running component of the node in `paths`."""
    return _read_pids(paths)


def component_pids() -> list[int]:
    """The pids of the running node's components, its API server's included (empty without a node)."""
    paths = NodePaths(data_dir())
    apiserver = localcluster.running(paths.apiserver)
    return [*_read_pids(paths).values(), *([int(apiserver.state["pid"])] if apiserver else [])]


def _write_pids(paths: NodePaths, pids: dict[str, int]) -> None:
    tmp = paths.pids.with_suffix(".tmp")
    tmp.write_text(json.dumps({name: [pid, _start_time(pid)] for name, pid in pids.items()}, indent=2))
    tmp.replace(paths.pids)


def spawn(paths: NodePaths, name: str, args: Sequence[str], env: dict[str, str] | None = None) -> int:
    """Start a component in its own session (a Ctrl-C at the terminal is for the caller, who
    stops the node in order), its output appended to logs/<name>.log; its pid is recorded."""
    paths.logs.mkdir(parents=True, exist_ok=True)
    with open(paths.logs / f"{name}.log", "ab") as log:
        proc = subprocess.Popen(
            list(args),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    pids = _read_pids(paths)
    pids[name] = proc.pid
    _write_pids(paths, pids)
    return proc.pid


def stop(paths: NodePaths, name: str, timeout: float = 20.0) -> None:
    pids = _read_pids(paths)
    pid = pids.pop(name, 0)
    if pid and localcluster.pid_alive(pid):
        localcluster.stop_pid(pid, timeout)
    _write_pids(paths, pids)


def log_tail(paths: NodePaths, name: str, lines: int = 15) -> str:
    try:
        text = (paths.logs / f"{name}.log").read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


def _wait(what: str, check: Any, timeout: float, paths: NodePaths, component: str) -> Any:
    deadline = time.monotonic() + timeout
    pid = _read_pids(paths).get(component, 0)
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        if pid and not localcluster.pid_alive(pid):
            raise ClusterError(f"{component} exited while waiting for {what}:\n{log_tail(paths, component)}")
        time.sleep(0.2)
    raise ClusterError(f"{what} within {timeout:.0f}s; {component}'s log ends:\n{log_tail(paths, component)}")


def port_open(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        raise ClusterError(f"{' '.join(args)} failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}")
    return proc


# -- host state: bridge, cgroups, payload link ------------------------------------------------------


def cgroup_hierarchies() -> list[Path]:
    """Every mounted cgroup hierarchy (v1 controllers and the unified one)."""
    found: list[Path] = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[2] in ("cgroup", "cgroup2"):
            found.append(Path(fields[1]))
    return found


# Enabled in the kernel (/proc/cgroups) but not mounted on this machine: CRI-O then asks runc for
# hugetlb limits, which fails ("cannot set hugetlb limit: container could not join or create
# cgroup"). The node mounts the hierarchy while it is up, as an init system would have.
HUGETLB = Path("/sys/fs/cgroup/hugetlb")


def _hugetlb_marker(paths: NodePaths) -> Path:
    return paths.root / "mounted-hugetlb"


def mount_hugetlb(paths: NodePaths) -> None:
    enabled = any(
        line.split()[:1] == ["hugetlb"] and line.split()[-1] == "1"
        for line in Path("/proc/cgroups").read_text().splitlines()
    )
    if not enabled or HUGETLB in cgroup_hierarchies() or not Path("/sys/fs/cgroup/memory").is_dir():
        return  # not in the kernel, already mounted, or not a cgroup v1 layout
    HUGETLB.mkdir(exist_ok=True)
    _run("mount", "-t", "cgroup", "-o", "hugetlb", "cgroup", str(HUGETLB))
    _hugetlb_marker(paths).touch()


def unmount_hugetlb(paths: NodePaths) -> None:
    if _hugetlb_marker(paths).exists():
        _run("umount", str(HUGETLB), check=False)
        with contextlib.suppress(OSError):
            HUGETLB.rmdir()
        if not HUGETLB.exists():
            _hugetlb_marker(paths).unlink()


def make_cgroup_root() -> None:
    """The kubelet needs its cgroup root to exist in every hierarchy; cpuset needs its CPUs and memory nodes."""
    for hierarchy in cgroup_hierarchies():
        root = hierarchy / cfg.CGROUP_ROOT
        root.mkdir(exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):
            if (root / name).exists() and not (root / name).read_text().strip():
                (root / name).write_text((hierarchy / name).read_text())


def bridge_up() -> None:
    """The Pods' bridge with the gateway address, made before the first Pod so that the API
    forwarder can listen on it; the bridge CNI plugin adopts it."""
    if _run("ip", "link", "show", cfg.BRIDGE, check=False).returncode != 0:
        _run("ip", "link", "add", cfg.BRIDGE, "type", "bridge")
    prefix = cfg.POD_SUBNET.split("/")[1]
    if f"{cfg.GATEWAY}/" not in _run("ip", "-o", "addr", "show", "dev", cfg.BRIDGE).stdout:
        _run("ip", "addr", "add", f"{cfg.GATEWAY}/{prefix}", "dev", cfg.BRIDGE)
    _run("ip", "link", "set", cfg.BRIDGE, "up")


def link_payloads(paths: NodePaths) -> None:
    paths.payloads.mkdir(parents=True, exist_ok=True)
    if PAYLOAD_LINK.is_symlink():
        if Path(os.readlink(PAYLOAD_LINK)) == paths.payloads:
            return
        raise ClusterError(f"{PAYLOAD_LINK} links to {os.readlink(PAYLOAD_LINK)}: another local node is up")
    if PAYLOAD_LINK.exists():
        raise ClusterError(f"{PAYLOAD_LINK} exists on this machine: it is not the local node's to replace")
    PAYLOAD_LINK.parent.mkdir(parents=True, exist_ok=True)
    PAYLOAD_LINK.symlink_to(paths.payloads)


def unlink_payloads(paths: NodePaths) -> None:
    if PAYLOAD_LINK.is_symlink() and Path(os.readlink(PAYLOAD_LINK)) == paths.payloads:
        PAYLOAD_LINK.unlink()
        with contextlib.suppress(OSError):
            PAYLOAD_LINK.parent.rmdir()  # /etc/cvo, when nothing else is in it


# -- leftovers --------------------------------------------------------------------------------------


def _mounts_under(prefixes: Sequence[Path]) -> list[str]:
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if any(point == str(p) or point.startswith(f"{p}/") for p in prefixes):
            found.append(point)
    return found


def _cgroups() -> list[Path]:
    return [h / cfg.CGROUP_ROOT for h in cgroup_hierarchies() if (h / cfg.CGROUP_ROOT).exists()]


def _cgroup_pids() -> set[int]:
    pids: set[int] = set()
    for root in _cgroups():
        for procs in root.rglob("cgroup.procs"):
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(line) for line in procs.read_text().split())
    return pids


def _node_processes(paths: NodePaths, whole_node: bool = True) -> dict[int, str]:
    """Processes whose command line names the node's directory; with `whole_node`, also those in
    its cgroups and those running its binaries (whatever their directory)."""
    found: dict[int, str] = {}
    in_cgroups = _cgroup_pids() if whole_node else set()
    marks = (str(paths.root), str(KUBE_NODE), str(CRIO), f"bind={cfg.GATEWAY}") if whole_node else (str(paths.root),)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        pid = int(entry.name)
        if pid in in_cgroups or any(mark in cmdline for mark in marks):
            found[pid] = cmdline or "(no command line)"
    return found


def _interfaces() -> list[str]:
    """The bridge and any veth left in this namespace (the node's Pods are the only veth makers here)."""
    out = _run("ip", "-o", "link", "show", check=False).stdout
    names = [line.split(":")[1].strip().split("@")[0] for line in out.splitlines() if ":" in line]
    return [n for n in names if n == cfg.BRIDGE or n.startswith("veth")]


def _nft_tables() -> list[str]:
    if not shutil.which("nft"):
        return []
    out = _run("nft", "list", "tables", check=False).stdout
    return [line.strip() for line in out.splitlines() if line.strip().endswith(" kube-proxy")]


def leftovers(paths: NodePaths | None = None) -> list[str]:
    """What a stopped node would have left behind: one line per mount, process, cgroup,
    interface, nftables table or path outside its directory; empty when clean."""
    paths = paths or NodePaths(data_dir())
    found = [f"mount {m}" for m in _mounts_under([paths.root, PAYLOAD_LINK])]
    if _hugetlb_marker(paths).exists():
        found.append(f"mount {HUGETLB} (the node mounted it)")
    found += [f"process {pid}: {cmd[:200]}" for pid, cmd in sorted(_node_processes(paths).items())]
    found += [f"cgroup {c}" for c in _cgroups()]
    found += [f"interface {i}" for i in _interfaces()]
    found += [f"nftables table {t}" for t in _nft_tables()]
    if PAYLOAD_LINK.is_symlink():
        found.append(f"link {PAYLOAD_LINK} -> {os.readlink(PAYLOAD_LINK)}")
    return found


def _kill_cgroup_processes(timeout: float = 15.0) -> None:
    """Containers and conmon processes outlive the runtime by design: end them through their cgroups."""
    deadline = time.monotonic() + timeout
    sig = signal.SIGTERM
    while (pids := _cgroup_pids()) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        time.sleep(0.5)
        sig = signal.SIGKILL
    for pid in _cgroup_pids():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _unmount_all(paths: NodePaths) -> None:
    for _ in range(5):
        points = _mounts_under([paths.root])
        if not points:
            return
        for point in sorted(points, key=lambda p: p.count("/"), reverse=True):
            if _run("umount", point, check=False).returncode != 0:
                _run("umount", "-l", point, check=False)


def _remove_cgroups() -> None:
    for root in _cgroups():
        for directory in sorted((d for d in root.rglob("*") if d.is_dir()), key=lambda d: len(d.parts), reverse=True):
            with contextlib.suppress(OSError):
                directory.rmdir()
        with contextlib.suppress(OSError):
            root.rmdir()


def _kill_strays(paths: NodePaths, whole_node: bool = True) -> None:
    """Components whose pid was not recorded (a crash between start and record, a lost pids.json)."""
    for pid in _node_processes(paths, whole_node):
        with contextlib.suppress(ProcessLookupError):
            localcluster.stop_pid(pid, 10.0)


def clean_directory(paths: NodePaths) -> None:
    """End every process naming the node's directory and unmount everything under it (what
    `down` does for the directory; the cgroups, bridge and rules are the node's, left alone)."""
    _kill_strays(paths, whole_node=False)
    _unmount_all(paths)


def _clean_host(paths: NodePaths) -> None:
    _kill_strays(paths)
    _kill_cgroup_processes()
    _unmount_all(paths)
    _remove_cgroups()
    if KUBE_NODE.exists():
        # kube-proxy's own cleanup of its nftables (and any iptables/ipvs) rules.
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run([str(KUBE_NODE), "kube-proxy", "--cleanup"], capture_output=True, timeout=60)
    for table in _nft_tables():
        _run("nft", "delete", "table", *table.split()[1:], check=False)
    for name in _interfaces():
        _run("ip", "link", "delete", name, check=False)
    unlink_payloads(paths)
    unmount_hugetlb(paths)


# -- node.json ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeInfo:
    """What `.local-cluster/node.json` says about the running node."""

    kubeconfig: str
    node: str
    registry: str
    runtime: str
    release_images: list[dict[str, str]]
    data_dir: str
    # {"cvo": the cvo-py image, "releases": release_images, "variants": {name: broken release image}}
    images: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None = None) -> NodeInfo:
        raw = json.loads((path or node_json_path()).read_text())
        return cls(**{k: raw[k] for k in cls.__dataclass_fields__ if k in raw})

    def release(self, version: str) -> str:
        for entry in self.release_images:
            if entry["version"] == version:
                return entry["image"]
        raise KeyError(f"node.json lists no release image of version {version}")


def write_node_json(info: NodeInfo) -> None:
    path = node_json_path()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(info.__dict__, indent=2) + "\n")
    tmp.replace(path)


def running() -> NodeInfo | None:
    """The node described by node.json, when its API server answers and its kubelet runs."""
    try:
        info = NodeInfo.load()
    except (OSError, ValueError, KeyError, TypeError):
        return None
    paths = NodePaths(Path(info.data_dir))
    pids = _read_pids(paths)
    alive = all(localcluster.pid_alive(pids.get(name, 0)) for name in COMPONENTS)
    return info if alive and localcluster.running(paths.apiserver) else None


def node_ready(client: KubeClient) -> bool:
    try:
        node = client.get(NODES, cfg.NODE_NAME)
    except Exception:  # noqa: BLE001 - not registered yet
        return False
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


def prepare(client: KubeClient) -> None:
    """A control-plane node: the master role label and taint; the `kubernetes` Service's endpoint
    for Pods; the PriorityClass OpenShift defines for user-critical workloads."""
    node = client.get(NODES, cfg.NODE_NAME)
    taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("key") != MASTER_LABEL]
    taints.append({"key": MASTER_LABEL, "effect": "NoSchedule"})
    client.patch(
        NODES,
        cfg.NODE_NAME,
        {
            "metadata": {"labels": {MASTER_LABEL: "", "node-role.kubernetes.io/control-plane": ""}},
            "spec": {"taints": taints},
        },
    )
    manifests.create_or_replace(client, ENDPOINTSLICES, cfg.kubernetes_endpointslice())
    ensure_priority_class(client)


# -- up / down ------------------------------------------------------------------------------------


def _apiserver_args() -> tuple[str, ...]:
    return (
        # Pods get their ServiceAccount token, as on any cluster (the test cluster leaves it out).
        "--disable-admission-plugins=",
        "--kubelet-preferred-address-types=InternalIP",
    )


def start_control_plane(paths: NodePaths, quiet: bool) -> localcluster.Cluster:
    for conflict in (cfg.API_PORT,):
        if port_open("127.0.0.1", conflict) and not localcluster.running(paths.apiserver):
            raise ClusterError(f"port {conflict} on 127.0.0.1 is in use: the node's API server needs it")
    # No CRD of tests/crds: the installer and the release's payload bring the node's.
    cluster = localcluster.up(
        paths.apiserver, port=cfg.API_PORT, quiet=True, apiserver_args=_apiserver_args(), crds=()
    )
    kubeconfig, pki = cluster.kubeconfig, paths.apiserver / "pki"
    if "kube-controller-manager" not in _live(paths):
        spawn(
            paths,
            "kube-controller-manager",
            [
                str(KUBE_NODE), "kube-controller-manager",
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "--bind-address=127.0.0.1", "--secure-port=0",
                "--leader-elect=false",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}",
                "--use-service-account-credentials=false",
                "--controllers=*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle,-persistentvolume-binder",
                "--v=1",
            ],
        )  # fmt: skip
    if "kube-scheduler" not in _live(paths):
        spawn(
            paths,
            "kube-scheduler",
            [
                str(KUBE_NODE), "kube-scheduler",
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "--bind-address=127.0.0.1", "--secure-port=0",
                "--leader-elect=false", "--v=1",
            ],
        )  # fmt: skip
    return cluster


def _live(paths: NodePaths) -> set[str]:
    return {name for name, pid in _read_pids(paths).items() if localcluster.pid_alive(pid)}


def start_registry(paths: NodePaths, port: int) -> str:
    address = f"127.0.0.1:{port}"
    if "registry" in _live(paths):
        return address
    if port_open("127.0.0.1", port):
        raise ClusterError(f"port {port} on 127.0.0.1 is in use: the local registry cannot listen there")
    paths.registry.mkdir(parents=True, exist_ok=True)
    paths.registry_config.write_text(cfg.registry_config(paths, port))
    spawn(paths, "registry", ["/usr/bin/docker-registry", "serve", str(paths.registry_config)])
    _wait(f"the local registry to listen on {address}", lambda: port_open("127.0.0.1", port), 30, paths, "registry")
    return address


def stop_registry(paths: NodePaths) -> None:
    stop(paths, "registry")


def start_forwarder(paths: NodePaths) -> None:
    """Pods reach the API server through the `kubernetes` Service, whose endpoint is the bridge's
    address: this forwards it to the API server on 127.0.0.1."""
    if "api-forwarder" in _live(paths):
        return
    listen = f"TCP4-LISTEN:{cfg.API_PORT},bind={cfg.GATEWAY},reuseaddr,fork"
    spawn(paths, "api-forwarder", ["/usr/bin/socat", listen, f"TCP4:127.0.0.1:{cfg.API_PORT}"])
    _wait("the API forwarder to listen", lambda: port_open(cfg.GATEWAY, cfg.API_PORT), 15, paths, "api-forwarder")


def _signing_key(paths: NodePaths) -> Path:
    if not paths.signing_key.exists():
        private = paths.crio / "signing-key.pem"
        _run("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(private))
        _run("openssl", "ec", "-in", str(private), "-pubout", "-out", str(paths.signing_key))
        private.unlink()  # nothing is ever signed: the policy only needs a key to require
    return paths.signing_key


def start_runtime(paths: NodePaths, registry: str) -> None:
    if "crio" in _live(paths):
        return
    for directory in (
        paths.crio,
        paths.crio / "conf.d",
        paths.crio / "policies",
        paths.crio / "tmp",
        paths.cni_config_dir,
    ):
        directory.mkdir(parents=True, exist_ok=True)
    # runc through the capability filter (testkit/harness/capfilter.py): this machine cannot grant
    # every capability a privileged container asks for.
    wrapper = paths.crio / "runc"
    wrapper.write_text(f'#!/bin/sh\nexec /usr/bin/python3 {CAPFILTER} {RUNC} "$@"\n')
    wrapper.chmod(0o755)
    paths.crio_config.write_text(cfg.crio_config(paths, f"{registry}/{cfg.PAUSE_IMAGE}", PINNS, wrapper))
    paths.registries_conf.write_text(cfg.registries_conf(registry))
    paths.policy.write_text(cfg.signature_policy(registry, _signing_key(paths)))
    (paths.cni_config_dir / "10-cvo-py.conflist").write_text(cfg.cni_config(paths))
    paths.crio_socket.unlink(missing_ok=True)
    env = {
        "CONTAINERS_REGISTRIES_CONF": str(paths.registries_conf),
        "CONTAINERS_STORAGE_CONF": str(paths.crio / "storage.conf"),
        "CONTAINERS_REGISTRIES_CONF_DIR": str(paths.crio / "registries.conf.d"),
        "REGISTRIES_CONFIG_PATH": str(paths.crio / "registries.d"),
    }
    (paths.crio / "storage.conf").write_text(
        f'[storage]\ndriver = "overlay"\ngraphroot = "{paths.crio / "storage"}"\nrunroot = "{paths.crio / "run"}"\n'
    )
    spawn(
        paths,
        "crio",
        [str(CRIO), f"--config={paths.crio_config}", f"--config-dir={paths.crio / 'conf.d'}", "--log-level=info"],
        env,
    )
    _wait("CRI-O to serve its socket", paths.crio_socket.exists, 60, paths, "crio")


def start_kubelet(paths: NodePaths, cluster: localcluster.Cluster) -> None:
    if "kubelet" in _live(paths):
        return
    paths.kubelet.mkdir(parents=True, exist_ok=True)
    paths.pod_logs.mkdir(parents=True, exist_ok=True)
    # No name server: Pods resolve nothing, and nothing they look up leaves the machine.
    paths.resolv_conf.write_text("options ndots:1\n")
    paths.kubelet_config.write_text(
        cfg.kubelet_config(paths, str(cluster.state["clientCAFile"]), free_port(), free_port())
    )
    spawn(
        paths,
        "kubelet",
        [
            str(KUBE_NODE), "kubelet",
            f"--config={paths.kubelet_config}",
            f"--kubeconfig={cluster.kubeconfig}",
            f"--root-dir={paths.kubelet}",
            f"--cert-dir={paths.kubelet / 'pki'}",
            f"--hostname-override={cfg.NODE_NAME}",
            f"--node-ip={cfg.GATEWAY}",
            "--v=2",
        ],
    )  # fmt: skip


def start_proxy(paths: NodePaths, cluster: localcluster.Cluster) -> None:
    if "kube-proxy" in _live(paths):
        return
    paths.proxy_config.write_text(cfg.kube_proxy_config(Path(cluster.kubeconfig), free_port(), free_port()))
    spawn(paths, "kube-proxy", [str(KUBE_NODE), "kube-proxy", f"--config={paths.proxy_config}", "--v=1"])


def restart_apiserver(paths: NodePaths | None = None) -> localcluster.Cluster:
    """The node's API server stopped and started again on its port, with its data (etcd's) and
    its flags: what a control-plane node sees when kube-apiserver restarts."""
    paths = paths or NodePaths(data_dir())
    localcluster.stop(paths.apiserver)
    return localcluster.up(paths.apiserver, port=cfg.API_PORT, quiet=True, apiserver_args=_apiserver_args(), crds=())


def restart_agents(paths: NodePaths | None = None, cluster: localcluster.Cluster | None = None) -> None:
    """A node reboot as far as the node's agents go: the kubelet and the runtime stop and start again."""
    paths = paths or NodePaths(data_dir())
    cluster = cluster or localcluster.running(paths.apiserver)
    if cluster is None:
        raise ClusterError("the node's API server is not running")
    registry = NodeInfo.load().registry
    stop(paths, "kubelet")
    stop(paths, "crio")
    start_runtime(paths, registry)
    start_kubelet(paths, cluster)


def up(quiet: bool = False, registry_port: int = 0) -> tuple[localcluster.Cluster, NodeInfo]:
    """Start every component (each one not already running) and wait until the Node is Ready."""
    if os.geteuid() != 0:
        raise ClusterError("the local node runs a kubelet and a container runtime: run it as root")
    build(quiet=quiet)
    paths = NodePaths(data_dir())
    paths.root.mkdir(parents=True, exist_ok=True)
    link_payloads(paths)
    mount_hugetlb(paths)
    make_cgroup_root()
    bridge_up()
    cluster = start_control_plane(paths, quiet)
    start_forwarder(paths)
    previous = _previous_registry_port()
    registry = start_registry(paths, registry_port or previous or free_port())
    start_runtime(paths, registry)
    start_kubelet(paths, cluster)
    start_proxy(paths, cluster)
    client = localcluster.admin_client(cluster)
    _wait("the Node to be Ready", lambda: node_ready(client), 120, paths, "kubelet")
    prepare(client)
    info = NodeInfo(
        kubeconfig=cluster.kubeconfig,
        node=cfg.NODE_NAME,
        registry=registry,
        runtime=f"cri-o {_crio_version()} ({cfg.RUNTIME}, conmon)",
        release_images=[],
        data_dir=str(paths.root),
    )
    write_node_json(info)
    return cluster, info


def _previous_registry_port() -> int:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return int(NodeInfo.load().registry.rsplit(":", 1)[1])
    return 0


def _crio_version() -> str:
    proc = subprocess.run([str(CRIO), "--version"], capture_output=True, text=True, timeout=30)
    first = (proc.stdout.splitlines() or ["?"])[0]  # "crio version 1.34.0"
    return first.rsplit(" ", 1)[-1]


def down(quiet: bool = False) -> list[str]:
    """Stop every component, clean the host, remove the node's state; returns what was left (empty)."""
    paths = NodePaths(data_dir())
    for name in reversed(COMPONENTS):
        stop(paths, name)
    localcluster.stop(paths.apiserver)
    from testkit.harness import localprometheus

    localprometheus.stop(paths.prometheus)
    _clean_host(paths)
    left = leftovers(paths)
    if not left and paths.root.exists():
        shutil.rmtree(paths.root, ignore_errors=True)
    node_json_path().unlink(missing_ok=True)
    if not quiet:
        if left:
            print("the local node left behind:\n  " + "\n  ".join(left), file=sys.stderr)
        else:
            print("local node stopped; no process, mount, cgroup, interface or rule of it is left")
    return left


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait while the node is being stopped (a second Ctrl-C would leave half of it)."""
    received: list[int] = []
    previous = {s: signal.signal(s, lambda n, _f: received.append(n)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
