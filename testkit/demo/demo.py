"""A whole OpenShift update on a real local kube-apiserver, seen as a cluster admin sees it.

`cluster-version-operator start` and `update-status-controller` run as real processes beside the
local API server, a real Prometheus scraping both over HTTPS with install/'s rules, and a local
update service; the testing toolkit plays the kubelet of the version Pod, the other operators and
the Machine Config Operator. The story is STAGES_TABLE: seven stages of steps, each saying what is
done, what is waited for and what is shown (setup; a 4.13.0 cluster; the controllers and `oc adm
upgrade`'s recommended updates; an unsigned image rejected, with ClusterReleaseNotAccepted firing;
the update to 4.14.0 node by node, with an alert in Update Health and a degraded node; a rollback
under the 4.13 CRD; a summary). The cluster is left running; every process the demo started is
stopped, also on Ctrl-C or failure.

Environment: CVO_PY_DEMO_FAST=1 is --fast, CVO_PY_DEMO_PAUSE=SECONDS is --pause, and
CVO_PY_CLUSTER_DIR selects the cluster's data directory (default .local-cluster).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from cvo_py.runtime.kube import CLUSTERVERSIONS, CONFIGMAPS, JSON, LEASES, PODS, ApiError, KubeClient
from payload.podspec import POD_LABEL_SELECTOR
from testkit.demo.story import Step as BaseStep
from testkit.demo.story import Story, StoryError, add_pause_arguments, resolve_pause, seconds, tell
from testkit.fakes.mco import MCO, REASON, STATE
from testkit.fakes.update_service import UpdateService, always_risk, graph, image_of
from testkit.fakes.versionpod import VersionPodKubelet
from testkit.harness import localcluster, localprometheus, manifests, usc
from testkit.harness.cluster import LocalCluster, ensure_namespace
from testkit.harness.clusterversion import completed, condition, progress_count
from testkit.harness.payload import ClusterVerification, StartProcess, ensure_priority_class
from testkit.harness.usc import insight_condition, node_condition, nodes_in_phase
from testkit.objects import smallcluster
from testkit.objects.payloads import write_operators_payload
from testkit.objects.smallcluster import OPERATORS, POOL_OF, POOLS
from testkit.oracles.adm_upgrade import adm_upgrade

DEFAULT_PAUSE = 3.0
CVO_NAMESPACE, CVO_JOB, CVO_NODE = "openshift-cluster-version", "cluster-version-operator", "master-0"
USC_NAMESPACE, USC_JOB = usc.NAMESPACE, "update-status-controller"
OLD, NEW = "4.13.0", "4.14.0"
BASELINE = "v4.11"  # a small install; 4.14 adds MachineAPI to this set, 4.13 does not know it
CHANNEL = "stable-4.14"
RELEASES = "quay.io/openshift-release-dev/ocp-release@sha256:"
IMAGES = {v: image_of(v, RELEASES) for v in ("4.13.0", "4.13.10", "4.14.0", "4.14.1", "4.14.5")}
# A 4.14.0 build pushed somewhere without signatures: CRI-O's signature policy rejects the pull.
UNSIGNED_IMAGE = "registry.example.com/ocp/release@sha256:" + "0d" * 32
RISK = "DemoEtcdDefragRisk"
GRAPH = graph(
    list(IMAGES), [(OLD, "4.13.10"), (OLD, NEW), (NEW, "4.14.5")],
    [([(OLD, "4.14.1")], [always_risk(RISK, "Clusters updating to 4.14.1 may see etcd defragmentation stall.")])],
    channels=CHANNEL, image_prefix=RELEASES,
)  # fmt: skip
HALF = len(OPERATORS) // 2
DEGRADE_REASON = ('failed to drain node: worker-1: error when evicting pods/"api-6d9c7b5f4-x2k8q" -n "payments": '
                  "Cannot evict pod as it would violate the pod's disruption budget.")  # fmt: skip
# The demo's own rule standing in for kube-state-metrics' alert (not here): it fires while the
# machine-config operator is Progressing, i.e. while nodes drain.
PDB_ALERT = "PodDisruptionBudgetAtLimit"
PDB_RULE = {"alert": PDB_ALERT,
            "expr": 'max(cluster_operator_conditions{name="machine-config", condition="Progressing"}) == 1',
            "labels": {"severity": "warning", "namespace": "payments", "poddisruptionbudget": "api"},
            "annotations": {
                "summary": "The pod disruption budget is preventing further disruption to pods.",
                "description": "The pod disruption budget is at the minimum disruptions allowed level."}}  # fmt: skip
FOR = "3s"  # ClusterReleaseNotAccepted's `for:` here (upstream: 60m)


def cond(cv: JSON | None, type_: str, field: str = "status") -> str:
    return str((condition(cv or {}, type_) or {}).get(field) or "")


Step = BaseStep["Demo"]


class Demo(Story):
    def __init__(self, cluster_dir: Path, pause: float) -> None:
        super().__init__(pause)
        self.cluster_dir, self.work = cluster_dir, cluster_dir / "demo"
        self.cluster: LocalCluster | None = None
        self.prom: localprometheus.LocalPrometheus | None = None
        self.service: UpdateService | None = None
        self.verification: ClusterVerification | None = None
        self.kubelet: VersionPodKubelet | None = None
        self.cvo: StartProcess | None = None
        self.usc: usc.ControllerProcess | None = None

    @property
    def kube(self) -> KubeClient:
        assert self.cluster is not None
        return self.cluster.client

    def run(self) -> None:
        try:
            self.run_stages(STAGES_TABLE)
        finally:
            self.stop_all()

    def healthy(self) -> bool:
        """Fail at once when a process the demo started died or its kubelet could not act."""
        for name, proc in (("cluster-version-operator start", self.cvo), ("update-status-controller", self.usc)):
            if proc is not None and proc.proc.poll() is not None:
                tail = "\n".join(proc.log().splitlines()[-15:])
                raise StoryError(f"{name} exited with code {proc.proc.returncode}; last log lines:\n{tail}")
        if self.kubelet is not None and self.kubelet.errors:
            raise StoryError("; ".join(self.kubelet.errors))
        return True

    def stop_all(self) -> None:
        for process in (self.cvo, self.usc, self.kubelet):
            if process is not None:
                process.stop()
        if self.service is not None:
            self.service.close()
        if self.verification is not None:
            self.verification.remove()
        if self.prom is not None:
            localprometheus.stop(self.prom.dir)

    # -- what the steps do ------------------------------------------------------------------------

    def start_cluster(self) -> None:
        localcluster.build()  # says so when it has to build (the first run: a few minutes)
        reused = localcluster.running(self.cluster_dir) is not None
        self.cluster = LocalCluster(localcluster.up(self.cluster_dir, quiet=True))
        handle = self.cluster.handle
        self.say(f"kube-apiserver {self.kube.server_version().get('gitVersion', '?')} with embedded etcd "
                 f"{handle.state.get('etcdVersion', '?')} {'already running' if reused else 'started'} at "
                 f"{handle.server} (data in {self.cluster_dir})")  # fmt: skip
        localprometheus.stop(self.work / "prometheus")  # one an interrupted run could not stop
        reset_objects(self.kube)
        shutil.rmtree(self.work, ignore_errors=True)  # payloads left behind would be reused
        self.work.mkdir(parents=True)
        self.cluster.install_clusterversion_crd("current")  # a run may have ended after the rollback
        self.say(f"CRDs: {', '.join(n.removesuffix('.yaml') for n in localcluster.DEFAULT_CRDS)}")
        for namespace in ("openshift-config-managed", "openshift-config"):  # `start` has Roles there
            ensure_namespace(self.kube, namespace)
        for doc in manifests.load():
            manifests.apply(self.kube, [doc])
            meta = doc["metadata"]
            where = f"{meta['namespace']}/" if meta.get("namespace") else ""
            self.say(f"applied install/ {doc['kind']} {where}{meta['name']}")

    def start_prometheus(self) -> None:
        assert self.cluster is not None
        rules = self.work / "demo-rules.yaml"
        rules.write_text(yaml.safe_dump({"groups": [{"name": "demo", "interval": "1s", "rules": [PDB_RULE]}]}))
        self.prom = localprometheus.up(self.cluster.handle, self.work / "prometheus", scrape_interval="1s",
                                       evaluation_interval="1s", rule_interval="1s", extra_rule_files=[str(rules)],
                                       for_override={"ClusterReleaseNotAccepted": FOR}, quiet=True)  # fmt: skip

    def start_cvo(self, version: str) -> None:
        """`start` as the CVO of `version` (its Deployment's command), scraped by Prometheus."""
        assert self.cluster is not None and self.prom is not None
        if self.cvo is not None:
            self.cvo.stop()
        self.cvo = StartProcess(self.cluster.kubeconfig, CVO_NAMESPACE, self.work, version,
                                *self.prom.scrape_flags(CVO_JOB), "--update-service=",  # spec.upstream
                                node=CVO_NODE, release_image=IMAGES[version], payload=self.payload(version),
                                env={"CVO_PY_RECONCILE_INTERVAL": "5"})  # fmt: skip
        self.say(f"cluster-version-operator start (pid {self.cvo.proc.pid}) runs release {version} "
                 f"({IMAGES[version]}), as its Deployment on {CVO_NODE} would; Prometheus scrapes it")  # fmt: skip

    def payload(self, version: str) -> Path:
        """The release image's root of `version`: its payload holds the cluster's ClusterOperators,
        which the sync worker waits on (written once)."""
        root = self.work / f"release-{version}"
        if not root.exists():
            write_operators_payload(root, version, OPERATORS)
        return root

    def start_usc(self) -> None:
        assert self.cluster is not None and self.prom is not None
        token = self.cluster.service_account_token(USC_NAMESPACE, usc.SERVICE_ACCOUNT)
        kubeconfig = self.cluster.write_kubeconfig(self.work / "usc.kubeconfig", token)
        self.usc = usc.ControllerProcess(kubeconfig, USC_NAMESPACE, self.work / "update-status-controller.log",
                                         *self.prom.scrape_flags(USC_JOB), "--alerts-url", self.prom.url,
                                         "--alerts-interval", "1")  # fmt: skip
        self.say(f"update-status-controller (pid {self.usc.proc.pid}) runs as system:serviceaccount:{USC_NAMESPACE}:"
                 f"{usc.SERVICE_ACCOUNT} with a token from the TokenRequest API (only the install/ RBAC applies); "
                 f"it reads firing alerts from {self.prom.url}")  # fmt: skip

    def create_cluster(self) -> None:
        assert self.service is not None
        ensure_priority_class(self.kube)  # the version Pod's; admission checks it exists
        self.kube.create(CLUSTERVERSIONS, {"metadata": {"name": "version"}, "spec": {
            "clusterID": "5a0c8f4e-2f3b-4c7d-9e61-0d4f2b7c9a13", "channel": CHANNEL, "upstream": self.service.url,
            "capabilities": {"baselineCapabilitySet": BASELINE}}})  # fmt: skip
        self.say(f"ClusterVersion version: channel {CHANNEL}, upstream {self.service.url} (its status is "
                 f"written by `start`, running {OLD})")  # fmt: skip
        for line in smallcluster.create(self.kube, OLD, NEW):
            self.say(line)

    def nodes(self, *steps: str, sync: tuple[str, ...] = ()) -> None:
        smallcluster.roll(self.kube, OLD, NEW, *steps, sync=sync)

    def operators(self, names: tuple[str, ...], version: str, progressing: bool = False) -> None:
        smallcluster.set_operators(self.kube, names, version, progressing)

    def update(self, image: str, version: str = "", force: bool = False) -> None:
        self.kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": {
            "version": version, "image": image, "force": force}}})  # fmt: skip

    # -- what the steps wait for and show ---------------------------------------------------------

    def cv(self, check: Callable[[JSON], bool] = lambda cv: True) -> JSON | None:
        cv = self.kube.get(CLUSTERVERSIONS, "version")
        return cv if cv.get("status") and check(cv) else None

    def insights(self, check: Callable[[dict[str, str]], bool]) -> dict[str, str] | None:
        data = usc.configmap_data(self.kube, USC_NAMESPACE)
        return data if data is not None and check(data) else None

    def upgrade_status(self, moment: str, details: str = "") -> tuple[str, str]:
        assert self.cluster is not None
        out = usc.upgrade_status(self.cluster.kubeconfig, *([details] if details else []))
        return f"$ cluster-version-operator upgrade-status{' ' + details if details else ''}   # {moment}", out

    def adm_upgrade(self, include_not_recommended: bool = False) -> tuple[str, str]:
        out, err = adm_upgrade(self.cv() or {}, include_not_recommended)
        flag = " --include-not-recommended" if include_not_recommended else ""
        return f"$ oc adm upgrade{flag}", out + err

    def alert_view(self, name: str) -> tuple[str, str]:
        assert self.prom is not None
        alert = self.prom.firing(name) or {}
        labels = ", ".join(f'{k}="{v}"' for k, v in sorted(alert.get("labels", {}).items()) if k != "alertname")
        body = (f"{name}{{{labels}}} {alert.get('state')} since {alert.get('activeAt')}\n"
                f"  {(alert.get('annotations') or {}).get('description', '')}")  # fmt: skip
        return f"$ curl -s {self.prom.url}/api/v1/alerts   # the firing {name}", body

    def summary(self) -> None:
        self.stage_times[-1] = (self.stage_times[-1][0], 0.0)
        self.stage_summary()
        for key, text in FIGURES:
            if key in self.figures:
                self.say(text.format(seconds(self.figures[key])))
        self.say(f"total: {time.monotonic() - self.started:.1f} s. The cluster is still running (kubeconfig "
                 f"{self.cluster.kubeconfig if self.cluster else '?'}); `make cluster-down` removes it.")  # fmt: skip
        self.say(f"controller logs: {self.work}/*.log")


FIGURES = (
    ("signature", "signature failure surfaced in ReleaseAccepted: {} after the kubelet's write"),
    ("alert", f"ClusterReleaseNotAccepted firing in Prometheus: {{}} after the kubelet's write (for: {FOR}, "
              "scrape and rule evaluation every 1 s)"),  # fmt: skip
    ("degraded", "degraded node surfaced in the update status insights: {} after the Machine Config Daemon's write"),
    ("pdb", "PodDisruptionBudgetAtLimit in the insights: {} after the machine-config operator started progressing"),
    ("retrieval", "good payload retrieved and accepted: {} after the request"),
    ("prune", "first status write under the older CRD (capabilities pruned): {} after the change that made it "
              "necessary"),  # fmt: skip
    ("opt_in", "first insights after the opt-in: {}"),
)


def _request_unsigned(d: Demo) -> None:
    assert d.kubelet is not None
    d.kubelet.unsigned.add(UNSIGNED_IMAGE)
    d.update(UNSIGNED_IMAGE, NEW, force=True)


def _older_crd_and_cvo(d: Demo) -> None:
    assert d.cluster is not None
    d.cluster.install_clusterversion_crd("4.13")
    d.start_cvo(OLD)


def _sign(d: Demo) -> None:
    d.verification = ClusterVerification(d.kube)
    for version in (OLD, NEW):
        d.verification.sign(IMAGES[version])


def _relax(d: Demo) -> None:
    MCO(d.kube).annotate_node("worker-1", {STATE: "Working", REASON: ""})
    d.nodes("worker-1:reboot", "worker-1:done", "worker-2:drain", "worker-2:update", "worker-2:reboot",
            sync=("worker",))


def _degrade(d: Demo) -> None:
    d.nodes("infra-0", "worker-0", "worker-1:drain", "worker-1:update")
    d.marks["degraded"] = time.monotonic()
    MCO(d.kube).annotate_node("worker-1", {STATE: "Degraded", REASON: DEGRADE_REASON})
    d.nodes(sync=("worker", "infra"))


def _roll_masters(d: Demo) -> None:
    d.operators(OPERATORS[HALF:-1], NEW)
    d.marks["mco"] = time.monotonic()
    d.operators(("machine-config",), OLD, progressing=True)
    smallcluster.target(d.kube, NEW)
    d.nodes("master-0", "master-1:drain", sync=("master",))


def _enable_console(d: Demo) -> None:
    d.marks["patched"] = time.monotonic()
    d.kube.patch(CLUSTERVERSIONS, "version", {"spec": {"capabilities": {
        "baselineCapabilitySet": BASELINE, "additionalEnabledCapabilities": ["Console"]}}})  # fmt: skip


def _pruned_metrics(d: Demo) -> list[str]:
    lines = d.prom.samples('{__name__=~"cluster_version_status_(write|pruned).*"}') if d.prom else []
    return lines if any("pruned_capabilities" in line for line in lines) else []


def _excerpt(d: Demo) -> tuple[str, str]:
    status = (d.cv() or {})["status"]
    excerpt = {"capabilities": status.get("capabilities"),
               "conditions": [c for c in status["conditions"]
                              if c["type"] in ("CapabilitiesPruned", "ImplicitlyEnabledCapabilities")],
               "history": [{"state": h["state"], "version": h["version"]} for h in status["history"]]}  # fmt: skip
    return "$ oc get clusterversion version -o yaml   # status, excerpt", yaml.safe_dump(
        {"status": excerpt}, sort_keys=False, width=100)


def _caps(d: Demo) -> str:
    return ", ".join(((d.cv() or {})["status"].get("capabilities") or {}).get("enabledCapabilities") or [])


def _versions(cv: JSON) -> list[str]:
    return sorted(u.get("version", "") for u in (cv["status"].get("availableUpdates") or []))


STAGES_TABLE: list[tuple[str, list[Step]]] = [
    ("Starting the local kube-apiserver and Prometheus; applying the CRDs and the install/ manifests", [
        Step(do=Demo.start_cluster, then="Nothing runs the Deployments: this API server has no controller manager, "
             "scheduler or kubelet. The demo runs their containers' commands itself in stage 3."),
        Step(do=Demo.start_prometheus, then=lambda d: (
            f"Prometheus (pid {d.prom.pid if d.prom else 0}) at {d.prom.url if d.prom else '?'} loads install/'s "
            f"rules (ClusterReleaseNotAccepted's `for:` shortened to {FOR}) and the demo's own "
            "PodDisruptionBudgetAtLimit rule (firing while machine-config is Progressing); it scrapes both "
            "controllers over HTTPS with the client certificate the cluster's Prometheus presents")),
        Step(do=lambda d: setattr(d, "service", UpdateService(channels={CHANNEL: GRAPH})), then=lambda d: (
            f"update service at {d.service.url if d.service else '?'}: channel {CHANNEL}, {OLD} → 4.13.10 and "
            f"{NEW}; {NEW} → 4.14.5; {OLD} → 4.14.1 conditional (risk {RISK}, matching rule Always)")),
        Step(do=_sign, then="release signatures: a verification ConfigMap in openshift-config-managed (a throwaway "
             f"key) and a local signature store holding signatures of {OLD} and {NEW}"),
    ]),
    (f"Creating a small {OLD} cluster: ClusterVersion, ClusterOperators, pools, nodes", [
        Step(do=Demo.create_cluster),
    ]),
    ("Starting `cluster-version-operator start` and `update-status-controller` as processes", [
        Step(do=lambda d: d.start_cvo(OLD)),
        Step(do=Demo.start_usc),
        Step(do=lambda d: setattr(d, "kubelet", VersionPodKubelet(
            d.kube, CVO_NAMESPACE, CVO_NODE, d.work / "updatepayloads", {i: v for v, i in IMAGES.items()},
            {IMAGES[v]: d.payload(v) for v in (OLD, NEW)}).start())),
        Step(wait=lambda d: d.cv(lambda c: cond(c, "Available") == "True" and cond(c, "Progressing") == "False"),
             what=f"ClusterVersion status from `start` (Cluster version is {OLD})", timeout=60,
             then=lambda d: f"`start` wrote the ClusterVersion status: {cond(d.got, 'Progressing', 'message')}"),
        Step(say=f"admin opts in: created ConfigMap {USC_NAMESPACE}/{usc.CONFIGMAP} (empty)",
             do=lambda d: usc.create_configmap(d.kube, USC_NAMESPACE), figure="opt_in",
             wait=lambda d: d.insights(lambda data: any(k.startswith("usc-") for k in data)), what="the first insights",
             then=lambda d: f"the controller published {sum(k.startswith('usc-') for k in d.got)} insights "
                            f"{seconds(d.figures['opt_in'])} after the opt-in",
             show=lambda d: d.upgrade_status("not updating")),
        Step(wait=lambda d: d.cv(lambda c: cond(c, "RetrievedUpdates") == "True" and len(_versions(c)) == 2),
             what="available updates from the local update service",
             then=f"`start` asked the update service named by spec.upstream for channel {CHANNEL} at {OLD}:",
             show=Demo.adm_upgrade),
        Step(show=lambda d: d.adm_upgrade(include_not_recommended=True), pause=True),
    ]),
    (f"Updating to an unsigned {NEW} image: the version Pod fails signature validation", [
        Step(say=f"$ oc adm upgrade --to-image={UNSIGNED_IMAGE} --allow-explicit-upgrade --force",
             do=_request_unsigned,
             wait=lambda d: d.kubelet and d.kubelet.acted_on(UNSIGNED_IMAGE), what="the version Pod run by the kubelet",
             figure="pod",
             then=lambda d: f"`start` created version Pod {CVO_NAMESPACE}/{d.got['metadata']['name']} on {CVO_NODE}; "
                            f"the kubelet ran it {seconds(d.figures['pod'])} after the request"),
        Step(say="kubelet: init container `cleanup` is waiting: SignatureValidationFailed (CRI-O's policy requires "
                 "a signature for this registry)",
             wait=lambda d: d.cv(lambda c: cond(c, "ReleaseAccepted") == "False"
                                 and "SignatureValidationFailed" in cond(c, "ReleaseAccepted", "message")),
             what="ReleaseAccepted=False naming SignatureValidationFailed", figure="signature",
             since=lambda d: d.kubelet.marks[UNSIGNED_IMAGE] if d.kubelet else 0.0, show=Demo.adm_upgrade,
             then=lambda d: f"ReleaseAccepted=False appeared {seconds(d.figures['signature'])} after the kubelet's "
                            "Pod status write (upstream 4.18 and older waited for the Job's 120 s deadline and said "
                            'only "Job was active longer than specified deadline")'),
        Step(say=f"Prometheus's view: `start` exports ReleaseAccepted as cluster_operator_conditions 0; install/'s "
                 f"ClusterReleaseNotAccepted fires after its `for:` ({FOR} here, 60m upstream)",
             wait=lambda d: d.prom and d.prom.firing("ClusterReleaseNotAccepted"), what="the alert firing",
             timeout=60, figure="alert", since=lambda d: d.kubelet.marks[UNSIGNED_IMAGE] if d.kubelet else 0.0,
             show=lambda d: d.alert_view("ClusterReleaseNotAccepted"),
             then=lambda d: f"ClusterReleaseNotAccepted firing {seconds(d.figures['alert'])} after the kubelet's "
                            "write", pause=True),
    ]),
    (f"Updating to the signed {NEW}, a recommended update: payload, operators, then pools node by node", [
        Step(say=f"$ oc adm upgrade --to={NEW}   # the release image {IMAGES[NEW]}, from availableUpdates",
             do=lambda d: d.update(IMAGES[NEW], NEW), figure="retrieval", timeout=60, what=f"{NEW} accepted",
             wait=lambda d: d.cv(lambda c: cond(c, "ReleaseAccepted") == "True"
                                 and (c["status"].get("desired") or {}).get("version") == NEW),
             then=lambda d: "kubelet: the version Pod copied the release manifests into place and Succeeded\n"
                            f"ReleaseAccepted=True {cond(d.got, 'ReleaseAccepted', 'reason')}: "
                            f"{cond(d.got, 'ReleaseAccepted', 'message')}\npayload retrieved and loaded "
                            f"{seconds(d.figures['retrieval'])} after the request"),
        Step(say=f"the {NEW} CVO takes over (its Deployment now runs the new release image)",
             do=lambda d: d.start_cvo(NEW)),
        Step(do=(lambda d: d.operators(OPERATORS[:HALF], NEW),
                 lambda d: d.operators(OPERATORS[HALF:HALF + 1], OLD, True)),
             wait=lambda d: d.cv(lambda c: f"{HALF} of {len(OPERATORS)} done" in cond(c, "Progressing", "message"))
             and d.insights(lambda data: usc.unwrap(usc.insight(data, "usc-cv-version") or {}).get("completion") == 50
                            and insight_condition(data, f"usc-co-{OPERATORS[HALF]}", "Updating").startswith("True")),
             what="the control plane at 50%",
             then=f"operators: {', '.join(OPERATORS[:HALF])} are at {NEW}; {OPERATORS[HALF]} is progressing",
             show=lambda d: d.upgrade_status("control plane updating"), pause=True),
        Step(say=f"operators: all but machine-config are at {NEW}; the MCO renders {NEW} configs for every pool "
                 "and rolls the nodes; draining them brings the payments PodDisruptionBudget to its limit",
             do=_roll_masters, figure="pdb", since=lambda d: d.marks["mco"], timeout=60,
             wait=lambda d: d.insights(lambda data: nodes_in_phase(data, {
                 "master-0": "Completed", "master-1": "Draining", "master-2": "Pending"})
                 and any(PDB_ALERT in v for v in data.values())),
             what="master-1 draining and PodDisruptionBudgetAtLimit in the insights",
             then=lambda d: "MCO: master-0 is updated, master-1 is draining; Prometheus fires "
                            "PodDisruptionBudgetAtLimit, and the controller turned it into an Update Health line "
                            f"{seconds(d.figures['pdb'])} after machine-config started progressing",
             show=lambda d: d.upgrade_status("master pool updating"), pause=True),
        Step(do=(lambda d: d.nodes("master-1:update", "master-1:reboot", "master-1:done", "master-2", sync=("master",)),
                 lambda d: d.operators(("machine-config",), NEW)),
             wait=lambda d: d.cv(lambda c: completed(c, NEW)), what=f"the ClusterVersion to complete {NEW}",
             then=lambda d: f"control plane done: {cond(d.got, 'Progressing', 'message')}"),
        Step(do=_degrade, figure="degraded", since=lambda d: d.marks["degraded"],
             wait=lambda d: d.insights(lambda data: node_condition(data, "worker-1", "Degraded").startswith("True")
                                       and nodes_in_phase(data, {"infra-0": "Completed", "worker-0": "Completed"})),
             what="worker-1 degraded",
             then=lambda d: "MCO: infra-0 and worker-0 updated; worker-1 is Degraded (a PodDisruptionBudget blocks "
                            f"its drain); the insight said so {seconds(d.figures['degraded'])} after the Machine "
                            "Config Daemon's write",
             show=lambda d: d.upgrade_status("worker-1 degraded", "--details=all"), pause=True),
        Step(say="the admin relaxes the PodDisruptionBudget; worker-1 drains, reboots and recovers", do=_relax,
             wait=lambda d: d.insights(lambda data: nodes_in_phase(data, {"worker-1": "Completed",
                                                                          "worker-2": "Rebooting"})),
             what="worker-1 updated, worker-2 rebooting",
             then="MCO: worker-1 is updated; worker-2, the last node, is rebooting",
             show=lambda d: d.upgrade_status("last node rebooting"), pause=True),
        Step(do=lambda d: d.nodes("worker-2:done", sync=tuple(POOLS)), what="every node updated",
             wait=lambda d: d.insights(lambda data: nodes_in_phase(data, dict.fromkeys(POOL_OF, "Completed"))),
             show=lambda d: d.upgrade_status("update complete"), pause=True),
        Step(wait=lambda d: d.cv(lambda c: _versions(c) == ["4.14.5"]), what=f"the available updates of {NEW}",
             then=f"available updates follow the new version: the {NEW} CVO asked the update service at {NEW}",
             show=Demo.adm_upgrade, pause=True),
    ]),
    (f"Rolling back to {OLD}: the older ClusterVersion CRD, capability-tolerant status writes", [
        Step(say=lambda d: f"the cluster was installed with baselineCapabilitySet {BASELINE}; {NEW} expands that "
                           f"set with MachineAPI, so {NEW} enabled: {_caps(d)}"),
        Step(say=f"$ oc adm upgrade --to-image={IMAGES[OLD]} --allow-explicit-upgrade --force   # a rollback",
             do=lambda d: d.update(IMAGES[OLD], OLD, True), timeout=60, what=f"{OLD} accepted",
             wait=lambda d: d.cv(lambda c: cond(c, "ReleaseAccepted") == "True"
                                 and (c["status"].get("desired") or {}).get("version") == OLD),
             then=lambda d: f"the {OLD} payload was retrieved and accepted. The precondition checks refuse a rollback "
                            "to another minor; --force turned that into a risk its history entry records:\n"
                            f"acceptedRisks: {d.got['status']['history'][0].get('acceptedRisks', '')}\n"
                            "The payload re-applies its ClusterVersion CRD (run level 0000_00), whose capability enums "
                            "do not know MachineAPI, Build, DeploymentConfig, ..."),
        Step(do=_older_crd_and_cvo),
        Step(say="$ oc patch clusterversion version --type=merge -p "
                 '\'{"spec":{"capabilities":{"additionalEnabledCapabilities":["Console"]}}}\'',
             do=_enable_console, figure="prune", since=lambda d: d.marks["patched"],
             wait=lambda d: d.cv(lambda c: cond(c, "CapabilitiesPruned") == "True" and "Console" in _caps(d)),
             what="CapabilitiesPruned=True and Console enabled",
             then=lambda d: "the enabled list changes, so the API server validates every item again (ratcheting "
                            "spares only an unchanged list; OpenShift 4.17 and older do not ratchet status writes "
                            "at all): upstream's CVO would fail every status write from now on with 422 Invalid. "
                            f"The {OLD} CVO wrote status without MachineAPI ({seconds(d.figures['prune'])} after the "
                            "admin's change); the operators now roll back, and every progress write lands:"),
        Step(do=lambda d: d.operators(OPERATORS[:HALF], OLD), what=f"{HALF} operators at {OLD}",
             wait=lambda d: d.cv(lambda c: progress_count(c, len(OPERATORS)) >= HALF),
             then=lambda d: f"  Progressing: {cond(d.got, 'Progressing', 'message')}"),
        Step(do=lambda d: d.operators(OPERATORS[HALF:], OLD), wait=lambda d: d.cv(lambda c: completed(c, OLD)),
             what=f"the rollback to {OLD} to complete", show=Demo.adm_upgrade,
             then=lambda d: f"  Progressing: {cond(d.got, 'Progressing', 'message')}"),
        Step(show=_excerpt),
        Step(wait=lambda d: _pruned_metrics(d), what="the status-write metrics in Prometheus",
             show=lambda d: ("$ curl -s '" + (d.prom.url if d.prom else "") + "/api/v1/query?query={__name__=~"
                             '"cluster_version_status_(write|pruned).*"}\'   # target labels left out',
                             "\n".join(d.got)),
             then=f"status writes kept landing under the {OLD} CRD: the rejected names are left out and reported",
             pause=True),
    ]),
    ("Summary", [Step(do=Demo.summary)]),
]


def reset_objects(kube: KubeClient) -> None:
    """Delete the objects the demo creates (cluster-scoped singletons included)."""
    smallcluster.reset(kube, (OLD, NEW))
    doomed = [(CONFIGMAPS, usc.CONFIGMAP, USC_NAMESPACE), (LEASES, "version", CVO_NAMESPACE),
              (CONFIGMAPS, "admin-gates", "openshift-config-managed"), (CONFIGMAPS, "admin-acks", "openshift-config"),
              (LEASES, usc.LEASE, USC_NAMESPACE)]  # leases an interrupted run held would delay the next leader
    with contextlib.suppress(ApiError):  # the namespace does not exist before the first run
        doomed += [(PODS, pod["metadata"]["name"], CVO_NAMESPACE)
                   for pod in kube.list(PODS, CVO_NAMESPACE, label_selector=POD_LABEL_SELECTOR).get("items") or []]
    for res, name, namespace in doomed:
        try:
            kube.delete(res, name, namespace, grace_period_seconds=0 if res is PODS else None)
        except ApiError as exc:
            if not exc.is_not_found():
                raise


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="hack/demo.py", description=__doc__.split("\n\nEnvironment:", 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=textwrap.dedent(f"""\
            Run it as `make demo` (add flags with DEMO_ARGS="--fast").

            environment:
              CVO_PY_DEMO_FAST=1        same as --fast
              CVO_PY_DEMO_PAUSE=SECONDS same as --pause SECONDS (default {DEFAULT_PAUSE:g})
              CVO_PY_CLUSTER_DIR=DIR    the local cluster's data directory (default .local-cluster)

            The cluster stays up afterwards; `make cluster-down` stops it and removes its data."""),
    )  # fmt: skip
    add_pause_arguments(parser, DEFAULT_PAUSE)
    parser.add_argument("--dir", type=Path, default=None,
                        help="cluster data directory (default $CVO_PY_CLUSTER_DIR, else .local-cluster)")  # fmt: skip
    args = parser.parse_args(argv)
    resolve_pause(parser, args, DEFAULT_PAUSE, "CVO_PY_DEMO")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    demo = Demo((args.dir or localcluster.default_dir()).resolve(), args.pause)
    print("cvo-py demo: a whole update on a real local kube-apiserver"
          + (" (fast mode)" if args.fast else f" (pausing {args.pause:g}s per step; --fast to skip)"), flush=True)
    return tell(demo.run, (localcluster.ClusterError, ApiError, manifests.UnknownKind),
                lambda: f"in stage {demo.stage_no}/{len(STAGES_TABLE)} (controller logs: {demo.work})")


if __name__ == "__main__":
    raise SystemExit(main())
