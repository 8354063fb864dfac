#!/usr/bin/env python3
"""A whole OpenShift update on a real local kube-apiserver, seen as a cluster admin sees it.

The demo starts the local API server, creates a small cluster's objects (a 4.13.0 ClusterVersion,
ClusterOperators, three MachineConfigPools, seven Nodes and their MachineConfigs), runs
`cluster-version-operator start` and `update-status-controller` as real processes, and plays the
parts that do not exist here (the kubelet, the other operators, the Machine Config Operator):

  1. the local API server, the CRDs and the install/ manifests;
  2. the cluster's objects at 4.13.0;
  3. the two controllers, and the opt-in ConfigMap of the update status API;
  4. an update to an unsigned image: the version Pod fails signature validation and
     ReleaseAccepted=False says so within a second;
  5. the update to a signed 4.14.0: payload retrieved, operators updated, pools rolled node by
     node (one node degrades and recovers), with `upgrade-status` printed at each step;
  6. a rollback to 4.13.0 under the 4.13 ClusterVersion CRD: status writes keep landing, and the
     capabilities the old CRD rejects are pruned and reported;
  7. a summary.

The cluster is left running afterwards (`make cluster-down` removes it); every process the demo
started is stopped, also on Ctrl-C or failure.

Environment: CVO_PY_DEMO_FAST=1 is --fast, CVO_PY_DEMO_PAUSE=SECONDS is --pause, and
CVO_PY_CLUSTER_DIR selects the cluster's data directory (default .local-cluster).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import yaml

from cvo_py.informer import Informer
from cvo_py.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    CONFIGMAPS,
    JSON,
    LEASES,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    NAMESPACES,
    NODES,
    PODS,
    SERVICEACCOUNTS,
    ApiError,
    KubeClient,
    Resource,
)
from cvo_py.testing import (
    localcluster,
    manifests,
)
from cvo_py.testing.cluster import LocalCluster, free_port
from cvo_py.testing.kubelet import Kubelet, waiting
from cvo_py.testing.manifests import LOCAL_ENDPOINTS
from cvo_py.testing.mco import CURRENT_CONFIG, DESIRED_CONFIG, MCO, REASON, STATE, now_rfc3339
from cvo_py.testing.statuswrite import write_status

REPO = Path(__file__).resolve().parent.parent

STAGES = 7
DEFAULT_PAUSE = 3.0

CVO_NAMESPACE = "openshift-cluster-version"
USC_NAMESPACE = "openshift-update-status-controller"
USC_SERVICE_ACCOUNT = "update-status-controller"
STATUS_CONFIGMAP = "status-api-cm-prototype"
VERSION_POD_SELECTOR = "k8s-app=retrieve-openshift-release"
INCLUDE = "include.release.openshift.io/self-managed-high-availability"
RELEASE_IMAGE_VERSION = "machineconfiguration.openshift.io/release-image-version"
DESIRED_DRAIN = "machineconfiguration.openshift.io/desiredDrain"
LAST_APPLIED_DRAIN = "machineconfiguration.openshift.io/lastAppliedDrain"

OLD, NEW = "4.13.0", "4.14.0"
BASELINE = "v4.11"  # a small install; 4.14 adds MachineAPI to this set, 4.13 does not know it
RELEASES = "quay.io/openshift-release-dev/ocp-release"
IMAGES = {
    OLD: f"{RELEASES}@sha256:" + "e3" * 32,
    NEW: f"{RELEASES}@sha256:" + "7a" * 32,
}
# A 4.14.0 build pushed somewhere without signatures: CRI-O's signature policy rejects the pull.
UNSIGNED_IMAGE = "registry.example.com/ocp/release@sha256:" + "0d" * 32
SIGNATURE_MESSAGE = (
    "image pull failed for {image} because the signature validation failed: "
    "Source image rejected: A signature was required, but no signature exists"
)

OPERATORS = (
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "openshift-apiserver",
    "authentication",
    "network",
    "machine-config",
)
# pool → (node names, node roles)
POOLS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "master": (("master-0", "master-1", "master-2"), ("master", "control-plane")),
    "worker": (("worker-0", "worker-1", "worker-2"), ("worker",)),
    "infra": (("infra-0",), ("worker", "infra")),
}
DEGRADING_NODE = "worker-1"
CVO_NODE = "master-0"

PRIORITYCLASSES = Resource("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False)


class DemoError(Exception):
    """The demo cannot go on; the text says what did not happen."""


# -- pure helpers (what the admin reads) ------------------------------------------------------------


def rendered_config(pool: str, version: str) -> str:
    return f"rendered-{pool}-{version.replace('.', '')}"


def find_condition(obj: JSON | None, type_: str) -> JSON | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == type_:
            return cond
    return None


def oc_adm_upgrade(cv: JSON) -> str:
    """The ClusterVersion as `oc adm upgrade` prints it (the parts a stuck update shows)."""
    status = cv.get("status") or {}
    spec = cv.get("spec") or {}
    lines: list[str] = []
    progressing = find_condition(cv, "Progressing") or {}
    history = status.get("history") or []
    current = next((h.get("version") for h in history if h.get("state") == "Completed"), "") or "<unknown>"
    if progressing.get("status") == "True":
        lines.append(f"info: An upgrade is in progress. {progressing.get('message', '')}".rstrip())
    else:
        lines.append(f"Cluster version is {current}")
    # oc prints Failing when True and ReleaseAccepted when not True, each with reason and message.
    for type_, shown_when_true in (("Failing", True), ("ReleaseAccepted", False)):
        cond = find_condition(cv, type_)
        if cond is not None and (cond.get("status") == "True") == shown_when_true:
            message = str(cond.get("message", "")).replace("\n", "\n  ")
            lines += [
                "",
                f"{type_}={cond.get('status')}",
                "",
                f"  Reason: {cond.get('reason', '')}",
                f"  Message: {message}",
            ]
    lines += ["", "Upstream is unset, so the cluster will use an appropriate default."]
    lines.append(f"Channel: {spec.get('channel') or '<unset>'}")
    return "\n".join(lines)


def wrap(text: str, indent: str = "    ", width: int = 108) -> str:
    out: list[str] = []
    for line in text.splitlines() or [""]:
        out.extend(
            textwrap.wrap(
                line,
                width,
                initial_indent=indent,
                subsequent_indent=indent + "  ",
                break_on_hyphens=False,  # names and image pull specs stay whole
                break_long_words=False,
            )
            or [indent]
        )
    return "\n".join(out)


def format_seconds(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


# -- processes ---------------------------------------------------------------------------------------


@dataclass
class Process:
    name: str
    args: list[str]
    log_path: Path
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Process:
        with open(self.log_path, "ab") as log:
            log.write(f"\n=== {' '.join(self.args)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                self.args,
                cwd=REPO,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
                start_new_session=True,  # a Ctrl-C in the terminal reaches the demo, which stops us
            )
        return self

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc else 0

    def check(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-15:])
            raise DemoError(f"{self.name} exited with code {self.proc.returncode}; last log lines:\n{tail}")

    def stop(self, timeout: float = 10.0) -> int | None:
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.proc = None
        return proc.returncode


class Processes:
    """Every process the demo starts; `stop_all()` ends them (also on Ctrl-C and failures)."""

    def __init__(self) -> None:
        self.running: dict[str, Process] = {}

    def start(self, process: Process) -> Process:
        self.stop(process.name)
        self.running[process.name] = process.start()
        return process

    def stop(self, name: str) -> None:
        process = self.running.pop(name, None)
        if process is not None:
            process.stop()

    def check(self) -> None:
        for process in self.running.values():
            process.check()

    def stop_all(self) -> None:
        for name in list(self.running):
            self.stop(name)


# -- watching what the controllers write -------------------------------------------------------------


class Watched:
    """An informer cache plus a condition to wait on; waits fail with a clear reason."""

    def __init__(self, informer: Informer, healthy: Callable[[], None]) -> None:
        self.informer = informer
        self.healthy = healthy  # raises DemoError when waiting longer makes no sense
        self.changed = threading.Condition()
        informer.add_handler(self._on_event)
        self.handlers: list[Callable[[str, JSON], None]] = []

    def _on_event(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        for handler in self.handlers:
            handler(event_type, obj)
        with self.changed:
            self.changed.notify_all()

    def start(self) -> Watched:
        self.informer.start()
        if not self.informer.wait_for_sync(30):
            raise DemoError(f"could not list {self.informer.resource.plural} within 30s")
        return self

    def get(self, name: str, namespace: str | None = None) -> JSON | None:
        return self.informer.get(name, namespace)

    def wait(self, what: str, check: Callable[[], Any], timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                result = check()
                if result:
                    return result
                self.healthy()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DemoError(f"timed out after {timeout:.0f}s waiting for {what}")
                self.changed.wait(min(left, 0.5))


# -- the demo ---------------------------------------------------------------------------------------


@dataclass
class Timings:
    stages: list[tuple[str, float]] = field(default_factory=list)
    signature_latency: float | None = None
    retrieval_seconds: float | None = None
    prune_latency: float | None = None
    degraded_latency: float | None = None
    opt_in_latency: float | None = None


class Demo:
    def __init__(self, cluster_dir: Path, pause: float) -> None:
        self.cluster_dir = cluster_dir
        self.pause_seconds = pause
        self.work = cluster_dir / "demo"
        self.payload_dir = self.work / "updatepayloads"
        self.processes = Processes()
        self.timings = Timings()
        self.stage_no = 0
        self.stage_started = 0.0
        self.started = time.monotonic()
        self.cluster: LocalCluster | None = None
        self.cv: Watched | None = None
        self.cm: Watched | None = None
        self.pods: Watched | None = None
        self.kubelet_actions: dict[str, str] = {}  # image → "reject-signature" | "copy-payload"
        self.kubelet_marks: dict[str, float] = {}  # image → monotonic time of the kubelet's write
        self.kubelet_seen: set[str] = set()
        self.kubelet_errors: list[str] = []
        self.cvo_metrics_port = 0

    # -- output --------------------------------------------------------------------------------

    def stage(self, title: str) -> None:
        now = time.monotonic()
        if self.stage_no:
            self.timings.stages[-1] = (self.timings.stages[-1][0], now - self.stage_started)
        self.stage_no += 1
        self.stage_started = now
        self.timings.stages.append((title, 0.0))
        print(f"\n[{self.stage_no}/{STAGES}] {title}  (t+{now - self.started:.1f}s)", flush=True)

    def say(self, text: str = "") -> None:
        # Commands are printed whole, so they can be copied.
        print(wrap(text, "    ") if text and not text.startswith("$ ") else f"    {text}", flush=True)

    def show(self, title: str, body: str) -> None:
        print(f"    ┌─ {title}", flush=True)
        for line in body.rstrip("\n").splitlines():
            print(f"    │ {line}", flush=True)
        print("    └─", flush=True)

    def pause(self) -> None:
        if self.pause_seconds > 0:
            time.sleep(self.pause_seconds)

    def check(self) -> None:
        """Fail at once when a controller process died or the demo's kubelet could not act."""
        self.processes.check()
        if self.kubelet_errors:
            raise DemoError("; ".join(self.kubelet_errors))

    @property
    def kube(self) -> KubeClient:
        assert self.cluster is not None
        return self.cluster.client

    # -- stage 1 ---------------------------------------------------------------------------------

    def start_cluster(self) -> None:
        self.stage("Starting the local kube-apiserver; applying the CRDs and the install/ manifests")
        localcluster.build()  # says so when it has to build (the first run: a few minutes)
        reused = localcluster.running(self.cluster_dir) is not None
        handle = localcluster.up(self.cluster_dir, quiet=True)
        self.cluster = LocalCluster(handle)
        version = self.kube.server_version().get("gitVersion", "?")
        self.say(
            f"kube-apiserver {version} with embedded etcd {handle.state.get('etcdVersion', '?')} "
            f"{'already running' if reused else 'started'} at {handle.server} (data in {self.cluster_dir})"
        )
        self.reset()
        # An earlier run may have ended after the rollback, with the older CRD in place.
        self.cluster.install_clusterversion_crd("current")
        self.say(f"CRDs: {', '.join(n.removesuffix('.yaml') for n in localcluster.DEFAULT_CRDS)}")
        # Present on every OpenShift cluster (other operators create it); `start`'s RBAC has a Role there.
        ensure(self.kube, NAMESPACES, {"metadata": {"name": "openshift-config-managed"}})
        for doc in manifests.load():
            try:
                manifests.apply(self.kube, [doc])
            except manifests.UnknownKind as exc:
                raise DemoError(str(exc)) from None
            meta = doc["metadata"]
            where = f"{meta['namespace']}/" if meta.get("namespace") else ""
            self.say(f"applied install/ {doc['kind']} {where}{meta['name']}")
        self.say(
            "Nothing runs the Deployment: this API server has no controller manager, scheduler or "
            "kubelet. The demo runs its container's command itself in stage 3, with the same "
            "ServiceAccount."
        )
        self.payload_dir.mkdir(parents=True, exist_ok=True)

    def reset(self) -> None:
        """Remove what an earlier run left, so every run starts from the same cluster."""
        reset_objects(self.kube)
        # Payloads left by an earlier run would be reused without a version Pod.
        shutil.rmtree(self.work, ignore_errors=True)

    # -- stage 2 ---------------------------------------------------------------------------------

    def create_cluster(self) -> None:
        self.stage(f"Creating a small {OLD} cluster: ClusterVersion, ClusterOperators, pools, nodes")
        kube = self.kube
        ensure(kube, NAMESPACES, {"metadata": {"name": CVO_NAMESPACE}})
        # The version Pod runs as `update-payload`, with this priority class; admission checks both.
        ensure(kube, SERVICEACCOUNTS, {"metadata": {"name": "update-payload", "namespace": CVO_NAMESPACE}})
        ensure(kube, PRIORITYCLASSES, {"metadata": {"name": "openshift-user-critical"}, "value": 1000000000})
        kube.create(
            CLUSTERVERSIONS,
            {
                "metadata": {"name": "version"},
                "spec": {
                    "clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13",
                    "channel": "stable-4.14",
                    "capabilities": {"baselineCapabilitySet": BASELINE},
                },
            },
        )
        self.say(f"ClusterVersion version (spec only: its status is written by `start`, running {OLD})")
        for name in OPERATORS:
            kube.create(
                CLUSTEROPERATORS, {"metadata": {"name": name, "annotations": {INCLUDE: "true"}}, "spec": {}}
            )
            set_operator(kube, name, OLD, progressing=False)
        self.say(f"{len(OPERATORS)} ClusterOperators at {OLD} ({INCLUDE}): {', '.join(OPERATORS)}")
        mco = MCO(kube)
        for pool, (nodes, roles) in POOLS.items():
            for version in (OLD, NEW):
                mco.client.create(
                    MACHINECONFIGS,
                    {
                        "metadata": {
                            "name": rendered_config(pool, version),
                            "annotations": {RELEASE_IMAGE_VERSION: version},
                            "labels": {"machineconfiguration.openshift.io/role": pool},
                        },
                        "spec": {"config": {"ignition": {"version": "3.4.0"}}},
                    },
                )
            selector = {f"node-role.kubernetes.io/{pool}": ""}
            mco.create_pool(pool, selector, rendered_config(pool, OLD))
            for node in nodes:
                mco.create_node(node, list(roles), rendered_config(pool, OLD))
                mco.annotate_node(
                    node,
                    {
                        DESIRED_DRAIN: f"uncordon-{rendered_config(pool, OLD)}",
                        LAST_APPLIED_DRAIN: f"uncordon-{rendered_config(pool, OLD)}",
                    },
                )
            self.set_pool_status(pool)
            self.say(
                f"pool {pool}: {len(nodes)} node(s) {', '.join(nodes)} on {rendered_config(pool, OLD)} "
                f"(MachineConfig with release-image-version {OLD})"
            )

    def set_pool_status(self, pool: str) -> None:
        """What the MCO reports for a pool, from its nodes' annotations."""
        kube = self.kube
        nodes, _ = POOLS[pool]
        target = kube.get(MACHINECONFIGPOOLS, pool)["spec"]["configuration"]["name"]
        states = [kube.get(NODES, n)["metadata"]["annotations"] for n in nodes]
        updated = sum(1 for a in states if a.get(CURRENT_CONFIG) == target and a.get(STATE) == "Done")
        degraded = sum(1 for a in states if a.get(STATE) == "Degraded")
        done = updated == len(nodes)

        def mutate(status: JSON) -> None:
            stamp = now_rfc3339()
            status.update(
                {
                    "observedGeneration": 1,
                    "configuration": {"name": target},
                    "machineCount": len(nodes),
                    "updatedMachineCount": updated,
                    "readyMachineCount": updated,
                    "unavailableMachineCount": sum(1 for a in states if a.get(STATE) != "Done"),
                    "degradedMachineCount": degraded,
                    "conditions": [
                        {"type": "Updated", "status": str(done), "lastTransitionTime": stamp},
                        {"type": "Updating", "status": str(not done), "lastTransitionTime": stamp},
                        {"type": "Degraded", "status": str(degraded > 0), "lastTransitionTime": stamp},
                    ],
                }
            )

        MCO(kube).set_pool_status(pool, mutate)

    # -- stage 3 ---------------------------------------------------------------------------------

    def start_controllers(self) -> None:
        self.stage("Starting `cluster-version-operator start` and `update-status-controller` as processes")
        self.start_cvo(OLD)
        assert self.cluster is not None
        token = self.cluster.service_account_token(USC_NAMESPACE, USC_SERVICE_ACCOUNT)
        usc_kubeconfig = self.cluster.write_kubeconfig(self.work / "usc.kubeconfig", token)
        usc = self.processes.start(
            Process(
                "update-status-controller",
                [
                    sys.executable,
                    "-m",
                    "cvo_py",
                    "update-status-controller",
                    "--kubeconfig",
                    usc_kubeconfig,
                    "--namespace",
                    USC_NAMESPACE,
                    "--listen=",
                    "--alerts-url=",  # no alerts API here
                    "--v=2",
                ],
                self.work / "update-status-controller.log",
                {},
            )
        )
        self.say(
            f"update-status-controller (pid {usc.pid}) runs as system:serviceaccount:{USC_NAMESPACE}:"
            f"{USC_SERVICE_ACCOUNT} with a token from the TokenRequest API: only the install/ RBAC applies"
        )
        self.cv = Watched(
            Informer(self.kube, CLUSTERVERSIONS, field_selector="metadata.name=version"), self.check
        ).start()
        self.cm = Watched(
            Informer(
                self.kube,
                CONFIGMAPS,
                namespace=USC_NAMESPACE,
                field_selector=f"metadata.name={STATUS_CONFIGMAP}",
            ),
            self.check,
        ).start()
        self.pods = Watched(
            Informer(self.kube, PODS, namespace=CVO_NAMESPACE, label_selector=VERSION_POD_SELECTOR),
            self.check,
        ).start()
        self.pods.handlers.append(self.play_kubelet)
        cv = self.cv.wait(
            f"ClusterVersion status from `start` (Available=True, Cluster version is {OLD})",
            lambda: self.cv_if(
                lambda c: (
                    (find_condition(c, "Available") or {}).get("status") == "True"
                    and (find_condition(c, "Progressing") or {}).get("status") == "False"
                )
            ),
            60,
        )
        self.say(
            "`start` wrote the ClusterVersion status: "
            f"{(find_condition(cv, 'Progressing') or {}).get('message')}"
        )
        created = time.monotonic()
        self.kube.create(CONFIGMAPS, {"metadata": {"name": STATUS_CONFIGMAP, "namespace": USC_NAMESPACE}})
        self.say(f"admin opts in: created ConfigMap {USC_NAMESPACE}/{STATUS_CONFIGMAP} (empty)")
        data = self.wait_insights(
            "the first insights in the ConfigMap", lambda d: any(k.startswith("usc-") for k in d)
        )
        elapsed = time.monotonic() - created
        self.timings.opt_in_latency = elapsed
        self.say(
            f"the controller published {sum(1 for k in data if k.startswith('usc-'))} insights "
            f"{format_seconds(elapsed)} after the opt-in"
        )
        self.upgrade_status("not updating")
        self.pause()

    def start_cvo(self, version: str, metrics: bool = False) -> Process:
        """`start` as the CVO of `version` (its Deployment would run that release's image)."""
        assert self.cluster is not None
        local = self.work / f"release-{version}"
        write_payload(local, version)
        listen = ["--listen="]
        if metrics:
            # HTTPS as upstream; the local API server's serving certificate is good for 127.0.0.1.
            self.cvo_metrics_port = free_port()
            pki = self.cluster.dir / "pki"
            listen = [
                f"--listen=127.0.0.1:{self.cvo_metrics_port}",
                "--serving-cert-file",
                str(pki / "serving.crt"),
                "--serving-key-file",
                str(pki / "serving.key"),
            ]
        process = self.processes.start(
            Process(
                "cluster-version-operator",
                [
                    sys.executable,
                    "-m",
                    "cvo_py",
                    "start",
                    "--kubeconfig",
                    self.cluster.kubeconfig,
                    "--release-image",
                    IMAGES[version],
                    "--node-name",
                    CVO_NODE,
                    *listen,
                    "--v=2",
                    *LOCAL_ENDPOINTS,
                ],
                self.work / "cluster-version-operator.log",
                {
                    "PAYLOAD_OVERRIDE": str(local),
                    "CVO_NAMESPACE": CVO_NAMESPACE,
                    "CVO_NAME": "version",
                    # Where the version Pod's hostPath is, on this machine (the demo's only node).
                    "UPDATE_PAYLOADS_DIR": str(self.payload_dir),
                },
            )
        )
        self.say(
            f"cluster-version-operator start (pid {process.pid}) runs release {version} "
            f"({IMAGES[version]}), as its Deployment on {CVO_NODE} would"
        )
        return process

    def cv_if(self, check: Callable[[JSON], bool]) -> JSON | None:
        assert self.cv is not None
        cv = self.cv.get("version")
        return cv if cv is not None and cv.get("status") and check(cv) else None

    def wait_insights(
        self, what: str, check: Callable[[dict[str, str]], bool], timeout: float = 30.0
    ) -> dict[str, str]:
        assert self.cm is not None

        def current() -> dict[str, str] | None:
            assert self.cm is not None
            cm = self.cm.get(STATUS_CONFIGMAP, USC_NAMESPACE)
            data = dict((cm or {}).get("data") or {})
            return data if cm is not None and check(data) else None

        result: dict[str, str] = self.cm.wait(
            f"{what} (published by update-status-controller)", current, timeout
        )
        return result

    def upgrade_status(self, moment: str, details: bool = False) -> str:
        assert self.cluster is not None
        args = [sys.executable, "-m", "cvo_py", "upgrade-status", "--kubeconfig", self.cluster.kubeconfig]
        if details:
            args.append("--details=all")
        proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=60)
        out = proc.stdout.rstrip()
        if proc.returncode != 0:
            out += f"\n(exit {proc.returncode}) {proc.stderr.strip()}"
        self.show(
            f"$ cluster-version-operator upgrade-status{' --details=all' if details else ''}   # {moment}",
            out,
        )
        return out

    # -- the kubelet of the version Pod ---------------------------------------------------------

    def play_kubelet(self, event_type: str, pod: JSON) -> None:
        """Runs on the Pod informer's thread: act once per Pod, on a thread of its own."""
        meta = pod["metadata"]
        if event_type == "DELETED":
            return
        if meta.get("deletionTimestamp"):
            # Graceful deletes of Pods bound to a node wait for the kubelet to confirm.
            threading.Thread(target=self._confirm_delete, args=(meta["name"],), daemon=True).start()
            return
        if meta["name"] in self.kubelet_seen:
            return
        self.kubelet_seen.add(meta["name"])
        threading.Thread(target=self._run_pod, args=(pod,), daemon=True).start()

    def _confirm_delete(self, name: str) -> None:
        with contextlib.suppress(ApiError):
            Kubelet(self.kube, CVO_NODE).finish_deletion(name, CVO_NAMESPACE)

    def _run_pod(self, pod: JSON) -> None:
        name = pod["metadata"]["name"]
        image = pod["spec"]["initContainers"][0]["image"]
        kubelet = Kubelet(self.kube, CVO_NODE)
        try:
            action = self.kubelet_actions.get(image, "copy-payload")
            first = pod["spec"]["initContainers"][0]["name"]
            if action == "reject-signature":
                # CRI-O refuses the unsigned image on the first pull: the first init container waits.
                self.kubelet_marks[image] = time.monotonic()
                kubelet.set_container_state(
                    name,
                    CVO_NAMESPACE,
                    first,
                    waiting("SignatureValidationFailed", SIGNATURE_MESSAGE.format(image=image)),
                    init=True,
                )
                return
            # The containers do their work: wipe the working directory, copy, rename into place.
            kubelet.set_phase(name, CVO_NAMESPACE, "Pending")
            kubelet.set_container_state(
                name, CVO_NAMESPACE, first, {"running": {"startedAt": now_rfc3339()}}, init=True
            )
            mount = Path(pod["spec"]["volumes"][0]["hostPath"]["path"])
            final = Path(pod["spec"]["containers"][0]["command"][-1])
            if mount.resolve() != self.payload_dir.resolve() or not final.is_relative_to(mount):
                raise DemoError(f"version Pod {name} writes to {final}, not under {self.payload_dir}")
            clean_payloads(mount)
            write_payload(final, version_of_image(image))
            self.kubelet_marks[image] = time.monotonic()
            kubelet.succeed(name, CVO_NAMESPACE)
        except (ApiError, OSError, KeyError, IndexError, DemoError) as exc:
            self.kubelet_errors.append(f"playing the kubelet for {name}: {exc}")

    # -- stage 4 ---------------------------------------------------------------------------------

    def unsigned_update(self) -> None:
        self.stage(f"Updating to an unsigned {NEW} image: the version Pod fails signature validation")
        self.kubelet_actions[UNSIGNED_IMAGE] = "reject-signature"
        update = {"version": NEW, "image": UNSIGNED_IMAGE, "force": True}
        self.say(f"$ oc adm upgrade --to-image={UNSIGNED_IMAGE} --allow-explicit-upgrade --force")
        requested = time.monotonic()
        self.kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": update}})
        assert self.pods is not None and self.cv is not None
        pod = self.pods.wait(
            "the version Pod for the unsigned image", lambda: self.version_pod(UNSIGNED_IMAGE), 30
        )
        self.say(
            f"`start` created version Pod {CVO_NAMESPACE}/{pod['metadata']['name']} on {CVO_NODE} "
            f"({format_seconds(time.monotonic() - requested)} after the request)"
        )
        self.say(
            "kubelet: init container `cleanup` is waiting: SignatureValidationFailed "
            "(CRI-O's policy requires a signature for this registry)"
        )
        cv = self.cv.wait(
            "ReleaseAccepted=False naming SignatureValidationFailed",
            lambda: self.cv_if(
                lambda c: (
                    (find_condition(c, "ReleaseAccepted") or {}).get("status") == "False"
                    and "SignatureValidationFailed"
                    in str((find_condition(c, "ReleaseAccepted") or {}).get("message"))
                )
            ),
            30,
        )
        seen = time.monotonic()
        mark = self.kubelet_marks.get(UNSIGNED_IMAGE, seen)
        self.timings.signature_latency = seen - mark
        self.show("$ oc adm upgrade", oc_adm_upgrade(cv))
        self.say(
            f"ReleaseAccepted=False appeared {format_seconds(seen - mark)} after the kubelet's Pod status "
            "write (upstream 4.18 and older waited for the Job's 120 s deadline and said only "
            '"Job was active longer than specified deadline")'
        )
        self.pause()

    def version_pod(self, image: str) -> JSON | None:
        assert self.pods is not None
        for pod in self.pods.informer.items():
            containers = (pod.get("spec") or {}).get("initContainers") or [{}]
            if containers[0].get("image") == image:
                return pod
        return None

    # -- stage 5 ---------------------------------------------------------------------------------

    def good_update(self) -> None:
        self.stage(f"Updating to the signed {NEW} release: payload, operators, then pools node by node")
        assert self.cv is not None
        self.say(f"$ oc adm upgrade --to={NEW}   # the signed release image {IMAGES[NEW]}")
        requested = time.monotonic()
        self.kube.patch(
            CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": {"version": NEW, "image": IMAGES[NEW]}}}
        )
        cv = self.cv.wait(
            f"ReleaseAccepted=True for {NEW}",
            lambda: self.cv_if(
                lambda c: (
                    (find_condition(c, "ReleaseAccepted") or {}).get("status") == "True"
                    and ((c["status"].get("desired") or {}).get("version") == NEW)
                )
            ),
            60,
        )
        accepted = time.monotonic()
        self.timings.retrieval_seconds = accepted - requested
        accepted_cond = find_condition(cv, "ReleaseAccepted") or {}
        self.say("kubelet: the version Pod copied the release manifests into place and Succeeded")
        self.say(f"ReleaseAccepted=True {accepted_cond.get('reason')}: {accepted_cond.get('message')}")
        self.say(f"payload retrieved and loaded {format_seconds(accepted - requested)} after the request")
        self.say(f"the {NEW} CVO takes over (its Deployment now runs the new release image)")
        self.start_cvo(NEW)

        half = len(OPERATORS) // 2
        for name in OPERATORS[:half]:
            set_operator(self.kube, name, NEW, progressing=False)
        set_operator(self.kube, OPERATORS[half], OLD, progressing=True, target=NEW)
        self.wait_cv_message(f"{half} of {len(OPERATORS)} done")
        self.wait_insights(
            f"the control plane at 50% with {OPERATORS[half]} updating",
            lambda d: (
                insight_value(d, "usc-cv-version").get("completion") == 50
                and insight_condition(d, f"usc-co-{OPERATORS[half]}", "Updating").startswith("True")
            ),
        )
        self.say(f"operators: {', '.join(OPERATORS[:half])} are at {NEW}; {OPERATORS[half]} is progressing")
        self.upgrade_status("control plane updating")
        self.pause()

        for name in OPERATORS[half:-1]:
            set_operator(self.kube, name, NEW, progressing=False)
        set_operator(self.kube, "machine-config", OLD, progressing=True, target=NEW)
        self.say(
            f"operators: all but machine-config are at {NEW}; the MCO renders {NEW} configs for every pool"
        )
        mco = MCO(self.kube)
        for pool in POOLS:
            mco.client.patch(
                MACHINECONFIGPOOLS, pool, {"spec": {"configuration": {"name": rendered_config(pool, NEW)}}}
            )
        # master pool, one node at a time; stop mid-way to look.
        self.update_node("master", "master-0")
        self.node_step("master", "master-1", "drain")
        self.set_pool_status("master")
        self.wait_nodes({"master-0": "Completed", "master-1": "Draining", "master-2": "Pending"})
        self.say("MCO: master-0 is updated, master-1 is draining")
        self.upgrade_status("master pool updating")
        self.pause()
        self.node_step("master", "master-1", "update")
        self.node_step("master", "master-1", "reboot")
        self.node_step("master", "master-1", "done")
        self.update_node("master", "master-2")
        self.set_pool_status("master")
        set_operator(self.kube, "machine-config", NEW, progressing=False)
        cv = self.cv.wait(
            f"the ClusterVersion to complete {NEW}",
            lambda: self.cv_if(
                lambda c: (
                    (c["status"].get("history") or [{}])[0].get("state") == "Completed"
                    and c["status"]["history"][0].get("version") == NEW
                )
            ),
            30,
        )
        self.say(f"control plane done: {(find_condition(cv, 'Progressing') or {}).get('message')}")

        # workers and infra roll in parallel, one node each at a time; worker-1 degrades.
        self.update_node("infra", "infra-0")
        self.update_node("worker", "worker-0")
        self.node_step("worker", DEGRADING_NODE, "drain")
        self.node_step("worker", DEGRADING_NODE, "update")
        degrade_reason = (
            'failed to drain node: worker-1: error when evicting pods/"api-6d9c7b5f4-x2k8q" -n "payments": '
            "Cannot evict pod as it would violate the pod's disruption budget."
        )
        degraded_at = time.monotonic()
        MCO(self.kube).annotate_node(DEGRADING_NODE, {STATE: "Degraded", REASON: degrade_reason})
        self.set_pool_status("worker")
        self.set_pool_status("infra")
        self.wait_insights(
            f"{DEGRADING_NODE} degraded",
            lambda d: (
                node_condition(d, DEGRADING_NODE, "Degraded").startswith("True")
                and nodes_in_phase(d, {"infra-0": "Completed", "worker-0": "Completed"})
            ),
        )
        self.timings.degraded_latency = time.monotonic() - degraded_at
        self.say(
            f"MCO: infra-0 and worker-0 updated; {DEGRADING_NODE} is Degraded (a PodDisruptionBudget blocks "
            f"its drain); the insight said so {format_seconds(self.timings.degraded_latency)} after the "
            "Machine Config Daemon's write"
        )
        self.upgrade_status(f"{DEGRADING_NODE} degraded", details=True)
        self.pause()
        self.say(f"the admin relaxes the PodDisruptionBudget; {DEGRADING_NODE} drains, reboots and recovers")
        MCO(self.kube).annotate_node(DEGRADING_NODE, {STATE: "Working", REASON: ""})
        self.node_step("worker", DEGRADING_NODE, "reboot")
        self.node_step("worker", DEGRADING_NODE, "done")
        for step in ("drain", "update", "reboot"):
            self.node_step("worker", "worker-2", step)
        self.set_pool_status("worker")
        self.wait_nodes({DEGRADING_NODE: "Completed", "worker-2": "Rebooting"})
        self.say(f"MCO: {DEGRADING_NODE} is updated; worker-2, the last node, is rebooting")
        self.upgrade_status("last node rebooting")
        self.pause()
        self.node_step("worker", "worker-2", "done")
        for pool in POOLS:
            self.set_pool_status(pool)
        self.wait_nodes(dict.fromkeys(all_nodes(), "Completed"))
        self.upgrade_status("update complete")
        self.pause()

    def wait_cv_message(self, text: str) -> None:
        assert self.cv is not None
        self.cv.wait(
            f"Progressing to mention {text!r}",
            lambda: self.cv_if(
                lambda c: text in str((find_condition(c, "Progressing") or {}).get("message"))
            ),
            30,
        )

    def wait_nodes(self, phases: dict[str, str]) -> None:
        what = ", ".join(f"{node} {reason}" for node, reason in phases.items())
        self.wait_insights(what, lambda d: nodes_in_phase(d, phases))

    def node_step(self, pool: str, node: str, step: str) -> None:
        """One step of the Machine Config Daemon on `node`, as Node annotations and conditions."""
        old, new = rendered_config(pool, OLD), rendered_config(pool, NEW)
        mco = MCO(self.kube)
        if step == "drain":
            mco.annotate_node(
                node,
                {
                    DESIRED_CONFIG: new,
                    STATE: "Working",
                    DESIRED_DRAIN: f"drain-{new}",
                    LAST_APPLIED_DRAIN: f"uncordon-{old}",
                },
            )
            mco.set_unschedulable(node, True)
        elif step == "update":
            mco.annotate_node(node, {LAST_APPLIED_DRAIN: f"drain-{new}"})
        elif step == "reboot":
            mco.annotate_node(node, {STATE: "Rebooting"})
            mco.set_node_condition(node, "Ready", "False", "KubeletNotReady", "node is rebooting")
        elif step == "done":
            mco.set_node_condition(node, "Ready", "True", "KubeletReady", "kubelet is posting ready status")
            mco.annotate_node(
                node,
                {
                    CURRENT_CONFIG: new,
                    STATE: "Done",
                    REASON: "",
                    DESIRED_DRAIN: f"uncordon-{new}",
                    LAST_APPLIED_DRAIN: f"uncordon-{new}",
                },
            )
            mco.set_unschedulable(node, False)
        else:
            raise ValueError(f"unknown node step {step!r}")

    def update_node(self, pool: str, node: str) -> None:
        for step in ("drain", "update", "reboot", "done"):
            self.node_step(pool, node, step)

    # -- stage 6 ---------------------------------------------------------------------------------

    def rollback(self) -> None:
        self.stage(f"Rolling back to {OLD}: the older ClusterVersion CRD, capability-tolerant status writes")
        assert self.cv is not None and self.cluster is not None
        cv = self.cv.get("version") or {}
        self.say(
            f"the cluster was installed with baselineCapabilitySet {BASELINE}; {NEW} expands that set "
            f"with MachineAPI, so {NEW} enabled: {', '.join(enabled_capabilities(cv))}"
        )
        self.say(f"$ oc adm upgrade --to-image={IMAGES[OLD]} --allow-explicit-upgrade --force   # a rollback")
        self.kube.patch(
            CLUSTERVERSIONS,
            "version",
            {"spec": {"desiredUpdate": {"version": OLD, "image": IMAGES[OLD], "force": True}}},
        )
        self.cv.wait(
            f"ReleaseAccepted=True for {OLD}",
            lambda: self.cv_if(
                lambda c: (
                    (c["status"].get("desired") or {}).get("version") == OLD
                    and (find_condition(c, "ReleaseAccepted") or {}).get("status") == "True"
                )
            ),
            60,
        )
        self.say(
            f"the {OLD} payload was retrieved and accepted; it re-applies its ClusterVersion CRD (run level "
            f"0000_00), whose capability enums do not know MachineAPI, Build, DeploymentConfig, ..."
        )
        self.cluster.install_clusterversion_crd("4.13")
        self.start_cvo(OLD, metrics=True)
        self.say(
            "$ oc patch clusterversion version --type=merge -p "
            '\'{"spec":{"capabilities":{"additionalEnabledCapabilities":["Console"]}}}\''
        )
        patched = time.monotonic()
        self.kube.patch(
            CLUSTERVERSIONS,
            "version",
            {
                "spec": {
                    "capabilities": {
                        "baselineCapabilitySet": BASELINE,
                        "additionalEnabledCapabilities": ["Console"],
                    }
                }
            },
        )
        self.say(
            "the enabled list changes, so the API server validates every item again (ratcheting spares "
            "only an unchanged list; OpenShift 4.17 and older do not ratchet status writes at all): "
            "upstream's CVO would fail every status write from now on with 422 Invalid"
        )
        self.cv.wait(
            "CapabilitiesPruned=True and Console enabled",
            lambda: self.cv_if(
                lambda c: (
                    (find_condition(c, "CapabilitiesPruned") or {}).get("status") == "True"
                    and "Console" in enabled_capabilities(c)
                )
            ),
            30,
        )
        self.timings.prune_latency = time.monotonic() - patched
        self.say(
            f"the {OLD} CVO wrote status without MachineAPI ({format_seconds(self.timings.prune_latency)} "
            "after the admin's change); the operators now roll back, and every progress write lands:"
        )
        half = len(OPERATORS) // 2
        for index, name in enumerate(OPERATORS, start=1):
            set_operator(self.kube, name, OLD, progressing=False)
            if index in (half, len(OPERATORS)):
                cv = self.wait_progress(index)
                self.say(f"  Progressing: {(find_condition(cv, 'Progressing') or {}).get('message')}")
        cv = self.cv.wait(
            f"the rollback to {OLD} to complete in history",
            lambda: self.cv_if(
                lambda c: (
                    (c["status"].get("history") or [{}])[0].get("version") == OLD
                    and c["status"]["history"][0].get("state") == "Completed"
                )
            ),
            30,
        )
        self.show("$ oc adm upgrade", oc_adm_upgrade(cv))
        excerpt = {
            "capabilities": cv["status"].get("capabilities"),
            "conditions": [
                c
                for c in cv["status"]["conditions"]
                if c.get("type") in ("CapabilitiesPruned", "ImplicitlyEnabledCapabilities")
            ],
            "history": [
                {k: h.get(k) for k in ("state", "version")} for h in cv["status"].get("history") or []
            ],
        }
        self.show(
            "$ oc get clusterversion version -o yaml   # status, excerpt",
            yaml.safe_dump({"status": excerpt}, sort_keys=False, width=100),
        )
        self.show(
            f"$ curl -s --cacert ca.crt --cert scraper.crt --key scraper.key "
            f"https://127.0.0.1:{self.cvo_metrics_port}/metrics | grep status_",
            "\n".join(self.scrape_status_metrics()),
        )
        self.say(
            f"status writes kept landing under the {OLD} CRD: the rejected names are left out and reported"
        )
        self.pause()

    def wait_progress(self, done: int) -> JSON:
        assert self.cv is not None
        cv: JSON = self.cv.wait(
            f"Progressing to count {done} operators at {OLD}",
            lambda: self.cv_if(lambda c: progress_count(c) >= done),
            30,
        )
        return cv

    def scrape_status_metrics(self) -> list[str]:
        assert self.cluster is not None
        state = self.cluster.handle.state
        url = f"https://127.0.0.1:{self.cvo_metrics_port}/metrics"
        try:
            context = ssl.create_default_context(cafile=self.cluster.handle.ca_file)
            # Presented as the cluster's Prometheus would: a client certificate from the client CA.
            context.load_cert_chain(state["scraperCertFile"], state["scraperKeyFile"])
            with urllib.request.urlopen(url, timeout=10, context=context) as resp:
                text = resp.read().decode()
        except (OSError, ssl.SSLError) as exc:
            return [f"(metrics not readable: {exc})"]
        wanted = ("cluster_version_status_write", "cluster_version_status_pruned")
        return [line for line in text.splitlines() if line.startswith(wanted)]

    # -- stage 7 ---------------------------------------------------------------------------------

    def summary(self) -> None:
        self.stage("Summary")
        self.timings.stages[-1] = (self.timings.stages[-1][0], 0.0)
        for number, (title, seconds) in enumerate(self.timings.stages[:-1], start=1):
            self.say(f"stage {number}: {seconds:6.1f} s  {title}")
        t = self.timings
        if t.signature_latency is not None:
            self.say(
                f"signature failure surfaced in ReleaseAccepted: {format_seconds(t.signature_latency)} "
                "after the kubelet's write"
            )
        if t.degraded_latency is not None:
            self.say(
                f"degraded node surfaced in the update status insights: {format_seconds(t.degraded_latency)} "
                "after the Machine Config Daemon's write"
            )
        if t.retrieval_seconds is not None:
            self.say(
                f"good payload retrieved and accepted: {format_seconds(t.retrieval_seconds)} "
                "after the request"
            )
        if t.prune_latency is not None:
            self.say(
                "first status write under the older CRD (capabilities pruned): "
                f"{format_seconds(t.prune_latency)} after the change that made it necessary"
            )
        if t.opt_in_latency is not None:
            self.say(f"first insights after the opt-in: {format_seconds(t.opt_in_latency)}")
        self.say(
            f"total: {time.monotonic() - self.started:.1f} s. The cluster is still running (kubeconfig "
            f"{self.cluster.kubeconfig if self.cluster else '?'}); `make cluster-down` removes it."
        )
        self.say(f"controller logs: {self.work}/*.log")

    def run(self) -> None:
        try:
            self.start_cluster()
            self.create_cluster()
            self.start_controllers()
            self.unsigned_update()
            self.good_update()
            self.rollback()
            self.check()
            self.summary()
        finally:
            self.processes.stop_all()
            for watched in (self.pods, self.cm, self.cv):
                if watched is not None:
                    watched.informer.stop()


# -- cluster objects ---------------------------------------------------------------------------------


def all_nodes() -> list[str]:
    return [n for nodes, _ in POOLS.values() for n in nodes]


def insight_value(data: dict[str, str], key: str) -> dict[str, Any]:
    """One decoded insight of the ConfigMap API ({} when absent or unreadable)."""
    try:
        value = yaml.safe_load(data.get(key) or "")
    except yaml.YAMLError:
        return {}
    return value if isinstance(value, dict) else {}


def insight_condition(data: dict[str, str], key: str, type_: str) -> str:
    """`<status> <reason>` of an insight's condition, or "" when the insight has none (yet)."""
    for cond in insight_value(data, key).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == type_:
            return f"{cond.get('status')} {cond.get('reason')}"
    return ""


def node_condition(data: dict[str, str], node: str, type_: str) -> str:
    return insight_condition(data, f"usc-node-{node}", type_)


def nodes_in_phase(data: dict[str, str], phases: dict[str, str]) -> bool:
    """Whether every node's insight shows its Updating reason (Draining, Rebooting, Completed, ...)."""
    return all(
        node_condition(data, node, "Updating").endswith(f" {reason}") for node, reason in phases.items()
    )


def enabled_capabilities(cv: JSON) -> list[str]:
    return list((((cv.get("status") or {}).get("capabilities") or {}).get("enabledCapabilities")) or [])


def progress_count(cv: JSON) -> int:
    """Operators done, from `Working towards X: N of M done`; M once the update completed."""
    message = str((find_condition(cv, "Progressing") or {}).get("message") or "")
    match = re.search(r": (\d+) of (\d+) done", message)
    if match:
        return int(match.group(1))
    if message.startswith("Cluster version is"):
        return len(OPERATORS)
    return 0




def version_of_image(image: str) -> str:
    for version, known in IMAGES.items():
        if known == image:
            return version
    return NEW


def write_payload(directory: Path, version: str) -> None:
    """What a release image carries under /manifests and /release-manifests (the parts read here)."""
    (directory / "manifests").mkdir(parents=True, exist_ok=True)
    (directory / "release-manifests").mkdir(parents=True, exist_ok=True)
    metadata = {"kind": "cincinnati-metadata-v0", "version": version, "previous": []}
    (directory / "release-manifests" / "release-metadata").write_text(json.dumps(metadata))
    (directory / "release-manifests" / "image-references").write_text(
        json.dumps({"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "spec": {"tags": []}})
    )
    (directory / "manifests" / "0000_00_cluster-version-operator_00_namespace.yaml").write_text(
        f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {CVO_NAMESPACE}\n"
    )


def clean_payloads(mount: Path) -> None:
    """What the `cleanup` init container does (`rm -fR ./*` in the payload directory)."""
    if not mount.is_dir():
        return
    for entry in mount.iterdir():
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def set_operator(kube: KubeClient, name: str, version: str, progressing: bool, target: str = "") -> None:
    stamp = now_rfc3339()
    message = f"Working towards {target}" if progressing else f"All is well at {version}"

    def mutate(status: JSON) -> None:
        status["versions"] = [{"name": "operator", "version": version}]
        status["conditions"] = [
            {"type": "Available", "status": "True", "reason": "AsExpected", "lastTransitionTime": stamp},
            {"type": "Degraded", "status": "False", "reason": "AsExpected", "lastTransitionTime": stamp},
            {
                "type": "Progressing",
                "status": str(progressing),
                "reason": "Upgrading" if progressing else "AsExpected",
                "message": message,
                "lastTransitionTime": stamp,
            },
            {"type": "Upgradeable", "status": "True", "reason": "AsExpected", "lastTransitionTime": stamp},
        ]

    write_status(kube, CLUSTEROPERATORS, name, lambda obj: mutate(obj.setdefault("status", {})))


def ensure(kube: KubeClient, res: Resource, body: JSON) -> None:
    try:
        kube.create(res, body, body["metadata"].get("namespace"))
    except ApiError as exc:
        if not exc.is_already_exists():
            raise






def reset_objects(kube: KubeClient) -> None:
    """Delete the objects the demo creates (cluster-scoped singletons included)."""

    def delete(res: Resource, name: str, namespace: str | None = None) -> None:
        try:
            kube.delete(res, name, namespace, grace_period_seconds=0 if res is PODS else None)
        except ApiError as exc:
            if not exc.is_not_found():
                raise

    # Every ClusterVersion and ClusterOperator: others would change what the controllers report.
    for res in (CLUSTERVERSIONS, CLUSTEROPERATORS):
        for item in kube.list(res).get("items") or []:
            delete(res, item["metadata"]["name"])
    for pool in POOLS:
        delete(MACHINECONFIGPOOLS, pool)
        for version in (OLD, NEW):
            delete(MACHINECONFIGS, rendered_config(pool, version))
    for node in all_nodes():
        delete(NODES, node)
    delete(CONFIGMAPS, STATUS_CONFIGMAP, USC_NAMESPACE)
    for pod in kube.list(PODS, CVO_NAMESPACE, label_selector=VERSION_POD_SELECTOR).get("items") or []:
        delete(PODS, pod["metadata"]["name"], CVO_NAMESPACE)
    # Leases of processes an interrupted run could not release would delay the next leader.
    delete(LEASES, "version", CVO_NAMESPACE)
    delete(LEASES, "update-status-controller-lock", USC_NAMESPACE)


# -- command line ------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="hack/demo.py",
        description=__doc__.split("\n\nEnvironment:", 1)[0],
        epilog=textwrap.dedent(
            f"""\
            Run it as `make demo` (add flags with DEMO_ARGS="--fast").

            environment:
              CVO_PY_DEMO_FAST=1        same as --fast
              CVO_PY_DEMO_PAUSE=SECONDS same as --pause SECONDS (default {DEFAULT_PAUSE:g})
              CVO_PY_CLUSTER_DIR=DIR    the local cluster's data directory (default .local-cluster)

            The cluster stays up afterwards; `make cluster-down` stops it and removes its data."""
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    env_fast = os.environ.get("CVO_PY_DEMO_FAST", "").lower() in ("1", "true", "yes")
    parser.add_argument(
        "--fast", action="store_true", default=env_fast, help="no pauses between steps (for tests and CI)"
    )
    parser.add_argument(
        "--pause",
        type=_pause,
        default=None,
        metavar="SECONDS",
        help=f"pause after each step so the output can be read (default {DEFAULT_PAUSE:g})",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="cluster data directory (default $CVO_PY_CLUSTER_DIR, else .local-cluster)",
    )
    args = parser.parse_args(argv)
    if args.pause is None:
        raw = os.environ.get("CVO_PY_DEMO_PAUSE")
        try:
            args.pause = _pause(raw) if raw else DEFAULT_PAUSE
        except argparse.ArgumentTypeError as exc:
            parser.error(f"CVO_PY_DEMO_PAUSE: {exc}")
    if args.fast:
        args.pause = 0.0
    return args


def _pause(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid pause {text!r}: want seconds, e.g. 1.5") from None
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"invalid pause {text!r}: want 0 to 60 seconds")
    return value


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cluster_dir = (args.dir or localcluster.default_dir()).resolve()

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    # Also when started in the background, where SIGINT may be inherited as ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    demo = Demo(cluster_dir, args.pause)
    print(
        "cvo-py demo: a whole update on a real local kube-apiserver"
        + (" (fast mode)" if args.fast else f" (pausing {args.pause:g}s per step; --fast to skip)"),
        flush=True,
    )
    try:
        demo.run()
    except KeyboardInterrupt:
        print("\ninterrupted: the demo's processes are stopped; the cluster keeps running", file=sys.stderr)
        return 130
    except (DemoError, localcluster.ClusterError, ApiError) as exc:
        print(f"\ndemo failed in stage {demo.stage_no}/{STAGES}: {exc}", file=sys.stderr)
        print(f"controller logs: {demo.work}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
