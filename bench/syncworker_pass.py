"""Passes of the sync worker over a payload of a real release's size, on the local API server.

Writes a synthetic payload of about 900 manifests that can be applied
(`testkit.objects.payloads.write_scale_payload(operators=True)`: a Namespace and a ClusterOperator
per component, CRDs, Deployments, ClusterRoles, ConfigMaps, a Job every 10 levels) and its update
(every Deployment's RELEASE_VERSION changes), then, as the CVO's ServiceAccount with upstream's
back-offs:

1. the install: Initializing, from PayloadLoaded to the completion report and to the last write;
2. a reconcile pass over the unchanged objects (target: ≤ 10 s and no write);
3. the update: Updating, from the new work to the completion report and to the last write.

The bench plays the ClusterOperators: each reports Available, not Degraded, at the payload's
version as soon as it exists; in the update, at the new version once a Deployment of its
component carries it. Targets: each first pass ≤ 60 s on this 2-core machine. Prints wall time,
the process's CPU (the worker, the bench's operators and informers), passes, and the requests per
verb and code read from the API server's audit log.

    CVO_PY_CLUSTER_DIR=.local-cluster-bench .venv/bin/python bench/syncworker_pass.py [--manifests 900]

It creates and removes about 900 objects (150 CRDs among them): a data dir of its own keeps them
away from the tests' API server.
"""

from __future__ import annotations

import argparse
import os
import queue
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import CLUSTEROPERATORS, CLUSTERVERSIONS, JSON, ApiError, KubeClient
from syncworker.applier import TYPED_RESOURCES, Applier
from syncworker.load import Payload, load_payload
from syncworker.modes import Mode
from syncworker.passes import Report, Timing, Work
from syncworker.select import Selection
from syncworker.worker import SyncWorker
from testkit.harness import cluster as local
from testkit.harness.clusterversion import put_co
from testkit.harness.syncworker import Audit, Reports, Request, cvo_client, fresh_cluster_version, remove_applied
from testkit.objects.payloads import SECTION8_TARGET, SECTION8_VERSION, image_of, write_scale_payload

DEPLOYMENTS = TYPED_RESOURCES[("apps/v1", "Deployment")]
SELECTION = Selection(known_capabilities=frozenset({"Console"}), enabled_capabilities=frozenset({"Console"}))
FIRST_PASS_TARGET = 60.0
RECONCILE_TARGET = 10.0


class PlayedOperators:
    """The release's operators: each ClusterOperator reports Available, not Degraded, at the version
    its component runs (`version`, or `target` once one of its Deployments carries `target`)."""

    def __init__(self, kube: KubeClient, version: str) -> None:
        self.kube = kube
        self.version = version
        self.target = ""
        self.updated: set[str] = set()
        self.reported: dict[str, str] = {}
        self._todo: queue.Queue[str | None] = queue.Queue()
        self._operators = Informer(kube, CLUSTEROPERATORS)
        self._deployments = Informer(kube, DEPLOYMENTS)
        self._operators.add_handler(lambda kind, obj, old: self._todo.put(obj["metadata"]["name"]))
        self._deployments.add_handler(self._on_deployment)
        self._thread = threading.Thread(target=self._run, name="played-operators", daemon=True)

    def start(self) -> None:
        self._operators.start()
        self._deployments.start()
        self._thread.start()

    def stop(self) -> None:
        self._todo.put(None)
        self._thread.join(10)
        self._operators.stop()
        self._deployments.stop()

    def update_to(self, target: str, without_deployments: Sequence[str]) -> None:
        self.target = target
        self.updated.update(without_deployments)
        for name in without_deployments:
            self._todo.put(name)

    def _on_deployment(self, kind: str, obj: JSON, old: JSON | None) -> None:
        containers = obj["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e.get("value") for c in containers for e in c.get("env") or []}
        component = str(obj["metadata"]["namespace"]).removeprefix("ns-")
        if self.target and env.get("RELEASE_VERSION") == self.target and component not in self.updated:
            self.updated.add(component)
            self._todo.put(component)

    def _run(self) -> None:
        while (name := self._todo.get()) is not None:
            version = self.target if name in self.updated else self.version
            if self.reported.get(name) == version:
                continue
            try:
                put_co(self.kube, name, version)
                self.reported[name] = version
            except ApiError as exc:
                print(f"  (operator {name}: {exc}; again)")
                self._todo.put(name)


def verbs(requests: Sequence[Request]) -> str:
    counted = Counter(f"{r.verb} {r.code}" for r in requests)
    return ", ".join(f"{key}: {count}" for key, count in sorted(counted.items()))


def seconds(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds()


def first_pass(
    name: str,
    worker: SyncWorker,
    reports: Reports,
    audit: Audit,
    kube: KubeClient,
    work: Work,
    mode: Mode,
    loaded: datetime,
) -> Report:
    """Hand `work` to the worker and wait for its first completed pass; print what it took."""
    cpu = time.process_time()
    worker.update(work, mode)
    done = reports.wait_end(lambda r: r.completed and r.release == work.release, f"the {name}", timeout=900)
    cpu = time.process_time() - cpu
    requests = [r for r in audit.requests(kube) if loaded < r.received <= done.at]
    writes = [r for r in requests if r.is_write and r.succeeded]
    last_write = max((r.completed for r in writes), default=loaded)
    passes = [r for r in reports.ends() if r.release == work.release and r.at <= done.at]
    to_last = seconds(loaded, last_write)
    met = "met" if to_last <= FIRST_PASS_TARGET else "NOT met"
    print(
        f"{name} ({mode.value}, {done.total} manifests, {done.done} done): {len(passes)} passes; "
        f"PayloadLoaded → completion {seconds(loaded, done.at):.1f} s, → last write {to_last:.1f} s "
        f"(target ≤ {FIRST_PASS_TARGET:.0f} s: {met}); CPU {cpu:.1f} s"
    )
    for report in passes[:-1]:
        print(f"  a pass failed at {report.done}/{report.total}: {report.failure.message if report.failure else ''}")
    print(f"  {len(requests)} requests: {verbs(requests)}")
    return done


def reconcile_pass(reports: Reports, audit: Audit, kube: KubeClient, after: Report) -> None:
    """Wait for the next completed reconcile pass; print its time, CPU and requests."""
    cpu = time.process_time()
    done = reports.wait_end(lambda r: r.reconciling and r.completed and r.at > after.at, "a reconcile pass", 300)
    cpu = time.process_time() - cpu
    began = next(r.at for r in reports.all() if r.at > after.at and r.reconciling)
    requests = [r for r in audit.requests(kube) if after.at < r.received <= done.at]
    writes = [r for r in requests if r.is_write and r.succeeded]
    conflicts = [r for r in requests if r.is_write and not r.succeeded]
    took = seconds(began, done.at)
    met = "met" if took <= RECONCILE_TARGET and not writes else "NOT met"
    print(
        f"reconcile pass ({done.done}/{done.total} done): {took:.1f} s, {len(writes)} writes "
        f"(target ≤ {RECONCILE_TARGET:.0f} s and no write: {met}); CPU {cpu:.1f} s (with the wait for it)"
    )
    print(
        f"  {len(requests)} requests: {verbs(requests)}; "
        f"refused writes: {len(conflicts)} (ClusterOperator precreations)"
    )


def components_without_deployments(payload: Payload) -> list[str]:
    operators = {m.name for m in payload.manifests if m.kind == "ClusterOperator"}
    with_deployments = {m.namespace.removeprefix("ns-") for m in payload.manifests if m.kind == "Deployment"}
    return sorted(operators - with_deployments)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifests", type=int, default=900)
    parser.add_argument("--interval", type=float, default=8.0, help="the minimum reconcile interval, seconds")
    parser.add_argument("--keep", action="store_true", help="leave the objects (and ClusterVersion) behind")
    args = parser.parse_args()

    cluster = local.start()
    kube = cluster.client
    with tempfile.TemporaryDirectory(prefix="syncworker-bench-") as tmp:
        roots = [
            write_scale_payload(Path(tmp) / v, args.manifests, v, operators=True)
            for v in (SECTION8_VERSION, SECTION8_TARGET)
        ]
        payloads = [
            load_payload(str(r), release_image=image_of(v), selection=SELECTION)
            for r, v in zip(roots, (SECTION8_VERSION, SECTION8_TARGET), strict=True)
        ]
    current, target = payloads
    print(f"load average {os.getloadavg()[0]:.2f}; {len(current.manifests)} manifests; interval {args.interval} s")
    remove_applied(kube, [*current.manifests, *target.manifests])
    owner = fresh_cluster_version(kube)
    cvo = cvo_client(cluster, SECTION8_VERSION)
    audit = Audit(cluster.state["auditLog"])
    operators = Informer(cvo, CLUSTEROPERATORS).start()
    played = PlayedOperators(kube, SECTION8_VERSION)
    played.start()
    reports = Reports()
    worker = SyncWorker(Applier(cvo), operators, reports, Timing(interval=args.interval)).start()
    try:
        installed = first_pass(
            "install",
            worker,
            reports,
            audit,
            kube,
            Work(current, SELECTION, 1, owner),
            Mode.INITIALIZING,
            datetime.now(UTC),
        )
        reconcile_pass(reports, audit, kube, installed)
        played.update_to(SECTION8_TARGET, components_without_deployments(target))
        first_pass(
            "update",
            worker,
            reports,
            audit,
            kube,
            Work(target, SELECTION, 2, owner),
            Mode.UPDATING,
            datetime.now(UTC),
        )
        print(f"load average {os.getloadavg()[0]:.2f}")
    finally:
        worker.stop()
        operators.stop()
        played.stop()
        if not args.keep:
            remove_applied(kube, [*current.manifests, *target.manifests])
            try:
                kube.delete(CLUSTERVERSIONS, "version")
            except ApiError:
                pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
