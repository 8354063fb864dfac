#!/usr/bin/env python3
"""How fast does the admin see why payload retrieval fails, against the floor?

For each failure mode: time from the kubelet's status write on the version Pod to the moment the
ClusterVersion's ReleaseAccepted condition carries that mode's reason, measured on the real local
API server for two implementations, each a separate process:

* the floor: `testkit/oracles/gofloor`, a Go program that only watches the version Pods and, on a
  change of status, PUTs one ClusterVersion condition with the Pod's reasons (the bench creates
  its Pods); its time is the least any CVO can take on this machine;
* `cluster-version-operator start` as its Deployment runs it (the bench asks for each target in
  spec.desiredUpdate; `start` verifies it and creates the version Pod).

They take turns in blocks (one sample per mode and pacing each, after a warm-up sample that is
not counted; each implementation is started for its block and stopped after it, so only one
writes the ClusterVersion), the order swapped every block. Prints p50/p99 per mode for each, the
ratios `start` / floor, whether `start` is within p50 ≤ 1.15× and p99 ≤ 1.5× of the floor, and
upstream's bound (upstream fails fast on two modes only; the others surface when the Pod's 120 s
active deadline kills it). Exit status 1 when that target is not met.

Two pacings (`--pacing`, default both):

* back-to-back: the kubelet writes as soon as the new target's "Retrieving" status is visible,
  while the operator is still busy with that target (its writes, their echoes, the Pod's events);
* isolated: the system is left idle (`--idle`, default 1 s) before each kubelet write, so one
  event meets an operator at rest (its rate limit refilled, nothing else in flight).

`--hops` runs `start` at -v=5 and breaks each isolated sample down from its log timestamps:
kubelet write → Pod event dequeued → classified → ReleaseAccepted reported → status sync started
→ status written → seen by a watch.

    CVO_PY_CLUSTER_DIR=.local-cluster-bench python bench/payload_failure_latency.py [--runs 30] [--impl start]

The floor needs a Go toolchain (`go` on PATH); its build cache is kept in the cluster's data dir.

It deletes and recreates the ClusterVersion `version` of that cluster: use a dedicated data dir.
Every kubelet write and every status write waits for an etcd WAL fsync; the run ends with how many
fsyncs were slow. On a disk that stalls them, they are the tail: put the data dir on tmpfs
(`CVO_PY_CLUSTER_DIR=/dev/shm/cvo-bench`) to measure the operator rather than the disk.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import CLUSTERVERSIONS, MERGE_PATCH, PODS, ApiError, KubeClient
from payload.podspec import POD_LABEL_SELECTOR
from testkit.fakes.kubelet import Kubelet, running, terminated, waiting
from testkit.fakes.update_service import UpdateService
from testkit.harness import cluster as local
from testkit.harness.clusterversion import create_cv, status_414
from testkit.harness.payload import NODE, ClusterVerification, StartProcess, ensure_priority_class
from testkit.oracles import goprogram
from testkit.oracles.floor import FloorProcess, version_pod

DEADLINE_MSG = "Pod was active on the node longer than the specified deadline"

Act = Callable[[Kubelet, str, str, str], Any]  # (kubelet, pod, namespace, image)


def init(container: str, reason: str, message: str, **extra: Any) -> Act:
    return lambda k, pod, ns, image: k.set_container_state(
        pod, ns, container, waiting(reason, message.format(image=image)), init=True, **extra
    )


def init_exit(container: str) -> Act:
    return lambda k, pod, ns, image: k.set_container_state(
        pod,
        ns,
        container,
        terminated(1, "Error", "cp: cannot stat '/manifests': No such file or directory"),
        init=True,
    )


def main_exit() -> Act:
    return lambda k, pod, ns, image: k.set_container_state(
        pod, ns, "rename-to-final-location", terminated(1, "Error", "mv: Read-only file system")
    )


def phase_failed(reason: str, message: str) -> Act:
    return lambda k, pod, ns, image: k.set_phase(pod, ns, "Failed", reason, message)


def delete(k: Kubelet, pod: str, ns: str, image: str) -> Any:
    return k.client.delete(PODS, pod, ns)


FAST, SLOW = "fails fast", "120 s (pod deadline)"
FLOOR_NAME, START_NAME = "floor", "start"
P50_TARGET, P99_TARGET = 1.15, 1.5  # `start` against the floor, all modes of a pacing
# (mode, what the kubelet does, text the condition must carry, upstream's bound)
MODES: list[tuple[str, Act, str, str]] = [
    (
        "SignatureValidationFailed",
        init(
            "cleanup",
            "SignatureValidationFailed",
            "image pull failed for {image} because the signature validation "
            "failed: Source image rejected: A signature was required, but no signature exists",
        ),
        "SignatureValidationFailed",
        FAST,
    ),
    (
        "ErrImagePull manifest unknown",
        init(
            "cleanup",
            "ErrImagePull",
            "reading manifest in quay.io/openshift-release-dev/ocp-release: manifest unknown",
        ),
        "manifest unknown",
        FAST,
    ),
    (
        "ErrImagePull unauthorized",
        init("cleanup", "ErrImagePull", "reading manifest: unauthorized: authentication required"),
        "unauthorized",
        SLOW,
    ),
    (
        "ErrImagePull other (transient)",
        init("cleanup", "ErrImagePull", "dial tcp 10.0.0.1:443: i/o timeout"),
        "i/o timeout",
        SLOW,
    ),
    (
        "ImagePullBackOff (transient)",
        init("cleanup", "ImagePullBackOff", 'Back-off pulling image "{image}"'),
        "ImagePullBackOff",
        SLOW,
    ),
    (
        "InvalidImageName",
        init("cleanup", "InvalidImageName", "couldn't parse image name"),
        "InvalidImageName",
        SLOW,
    ),
    (
        "CreateContainerConfigError",
        init(
            "cleanup", "CreateContainerConfigError", "container has runAsNonRoot and image will run as root"
        ),
        "CreateContainerConfigError",
        SLOW,
    ),
    (
        "CreateContainerError",
        init("cleanup", "CreateContainerError", "context deadline exceeded"),
        "CreateContainerError",
        SLOW,
    ),
    (
        "RunContainerError",
        init("cleanup", "RunContainerError", 'exec: "sh": executable file not found'),
        "RunContainerError",
        SLOW,
    ),
    ("init container exit 1", init_exit("cleanup"), "exit code 1", FAST),
    ("main container exit 1", main_exit(), "exit code 1", SLOW),  # the Pod is Running by then
    (
        "CrashLoopBackOff",
        init(
            "cleanup", "CrashLoopBackOff", "back-off 10s restarting failed container=cleanup", restartCount=2
        ),
        "CrashLoopBackOff",
        SLOW,
    ),
    ("Failed DeadlineExceeded", phase_failed("DeadlineExceeded", DEADLINE_MSG), "DeadlineExceeded", FAST),
    (
        "Failed Evicted",
        phase_failed("Evicted", "The node was low on resource: ephemeral-storage."),
        "Evicted",
        FAST,
    ),
    ("pod deleted", delete, "being deleted", "240 s (retrieval timeout)"),
    (
        "unknown reason (transient)",
        init("cleanup", "ImageInspectError", "Failed to inspect image"),
        "ImageInspectError",
        SLOW,
    ),
]


class ConditionWatch:
    """Records when ReleaseAccepted first carries some text, from the ClusterVersion watch."""

    def __init__(self, kube: KubeClient) -> None:
        self.cond = threading.Condition()
        self.message = ""
        self.seen_at = 0.0
        self.informer = Informer(kube, CLUSTERVERSIONS, field_selector="metadata.name=version")
        self.informer.add_handler(self._on_event)

    def _on_event(self, _type: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        now = time.monotonic()
        for c in (obj.get("status") or {}).get("conditions") or []:
            if c.get("type") == "ReleaseAccepted":
                with self.cond:
                    if c.get("message", "") != self.message:
                        self.message, self.seen_at = c.get("message", ""), now
                        self.cond.notify_all()

    def wait_for(self, text: str, image: str, timeout: float = 30.0) -> float:
        with self.cond:
            ok = self.cond.wait_for(lambda: image in self.message and text in self.message, timeout)
            if not ok:
                raise TimeoutError(f"condition never carried {text!r}; last: {self.message}")
            return self.seen_at


def with_updates(status: dict[str, Any], available: int = 10, conditional: int = 8) -> dict[str, Any]:
    """`status` with the available and conditional updates a 4.14 cluster on a channel carries (12
    KB of status in all, as in oc's examples): what every status write encodes, sends and stores."""
    channels = ["candidate-4.14", "candidate-4.15", "eus-4.14", "fast-4.14", "stable-4.14"]

    def release(patch: int) -> dict[str, Any]:
        return {
            "channels": channels,
            "image": f"quay.io/openshift-release-dev/ocp-release@sha256:{patch:064x}",
            "url": f"https://access.redhat.com/errata/RHSA-2024:{1000 + patch}",
            "version": f"4.14.{patch}",
        }

    risk = {
        "matchingRules": [
            {"type": "PromQL", "promql": {"promql": 'group(cluster_operator_conditions{name="aro"}) or 0 * group(up)'}}
        ],
        "message": "Adding a new worker node can fail on clusters of this kind until the fix ships.",
        "name": "ExampleRisk",
        "url": "https://issues.example.com/browse/EXAMPLE-1",
    }
    recommended = {
        "lastTransitionTime": "2024-02-07T16:31:06Z",
        "message": "The update is recommended, because none of the conditional update risks apply to this cluster.",
        "reason": "AsExpected",
        "status": "True",
        "type": "Recommended",
    }
    return {
        **status,
        "availableUpdates": [release(2 + i) for i in range(available)],
        "conditionalUpdates": [
            {"conditions": [recommended], "release": release(2 + available + i), "risks": [risk]}
            for i in range(conditional)
        ],
    }


def wait_pod(kube: KubeClient, ns: str, image: str, timeout: float = 60.0) -> str:
    """The version Pod of `image` (not one of an earlier target still being pruned)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pod in kube.list(PODS, ns, label_selector=POD_LABEL_SELECTOR).get("items") or []:
            containers = (pod.get("spec") or {}).get("containers") or [{}]
            if not pod["metadata"].get("deletionTimestamp") and containers[0].get("image") == image:
                return str(pod["metadata"]["name"])
        time.sleep(0.01)
    raise TimeoutError(f"no version pod for {image}")


# klog lines of `start` at -v=5 that mark each hop, in path order (text the line contains).
HOPS: list[tuple[str, Callable[[str], bool]]] = [
    ("pod event", lambda line: "] version pod " in line and line.rstrip().endswith(" event")),
    ("classified", lambda line: "] version pod " in line and not line.rstrip().endswith(" event")),
    ("reported", lambda line: "] ReleaseAccepted=" in line),
    ("sync started", lambda line: "] clusterversion-status: sync" in line),
    ("status written", lambda line: "status written at resourceVersion" in line),
]
KLOG_TIME = re.compile(r"^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2}\.\d{6}) ")


def klog_seconds(line: str) -> float | None:
    """Seconds since midnight (local time, as klog stamps) of a klog line; None for other lines."""
    m = KLOG_TIME.match(line)
    if m is None:
        return None
    return int(m.group(3)) * 3600 + int(m.group(4)) * 60 + float(m.group(5))


def hop_times(log: str, started: float, seen: float) -> dict[str, float] | None:
    """For one sample (local wall-clock seconds since midnight of the kubelet write and of the watch
    seeing the result), when each hop first happened after the write, as ms since the write."""
    found: dict[str, float] = {}
    order = iter(HOPS)
    hop = next(order)
    for line in log.splitlines():
        at = klog_seconds(line)
        if at is None or at < started:
            continue
        if at > seen:
            break
        name, matches = hop
        if matches(line):
            found[name] = (at - started) * 1000
            nxt = next(order, None)
            if nxt is None:
                break
            hop = nxt
    return found if len(found) == len(HOPS) else None


def wall_of_day() -> float:
    now = datetime.now()  # klog stamps local time
    return now.hour * 3600 + now.minute * 60 + now.second + now.microsecond / 1e6


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


class Implementation:
    """What reports the failures in a block: `begin()` starts it, `prepare(image)` makes a new
    version Pod for `image` and waits until its "Retrieving" condition is visible (returns the
    Pod's name), `end()` stops it."""

    name = ""

    def __init__(self, handle: local.LocalCluster, ns: str, watch: ConditionWatch) -> None:
        self.handle, self.ns, self.watch = handle, ns, watch

    def begin(self) -> None:
        raise NotImplementedError

    def prepare(self, image: str) -> str:
        raise NotImplementedError

    def end(self) -> None:
        raise NotImplementedError


class Start(Implementation):
    """`cluster-version-operator start` as its Deployment runs it: the bench asks for each target
    in spec.desiredUpdate, `start` verifies it and creates the version Pod."""

    name = "start"

    def __init__(
        self, handle: local.LocalCluster, ns: str, watch: ConditionWatch, workdir: Path, hops: bool, extra: list[str]
    ) -> None:
        super().__init__(handle, ns, watch)
        self.workdir = workdir
        self.verbosity = 5 if hops else 2
        self.extra = extra
        self.verification = ClusterVerification(handle.client)  # every image is signed: the Pod path is measured
        self.process: StartProcess | None = None

    def begin(self) -> None:
        self.process = StartProcess(
            self.handle.kubeconfig, self.ns, self.workdir, "4.14.1", *self.extra, verbosity=self.verbosity
        )

    def prepare(self, image: str) -> str:
        kube = self.handle.client
        self.verification.sign(image)
        kube.patch(CLUSTERVERSIONS, "version", {"spec": {"desiredUpdate": {"image": image}}}, content_type=MERGE_PATCH)
        pod = wait_pod(kube, self.ns, image)
        self.watch.wait_for("Retrieving and verifying payload", image)
        return pod

    def end(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def log(self) -> str:
        return self.process.log() if self.process is not None else ""

    def close(self) -> None:
        self.verification.remove()


class Floor(Implementation):
    """The floor program (testkit/oracles/gofloor): the bench creates each version Pod itself."""

    name = "floor"

    def __init__(self, handle: local.LocalCluster, ns: str, watch: ConditionWatch, binary: Path) -> None:
        super().__init__(handle, ns, watch)
        self.binary = binary
        self.process: FloorProcess | None = None

    def begin(self) -> None:
        self.process = FloorProcess(self.binary, self.handle.client.config, self.ns)

    def prepare(self, image: str) -> str:
        kube = self.handle.client
        for pod in kube.list(PODS, self.ns, label_selector=POD_LABEL_SELECTOR).get("items") or []:
            try:
                kube.delete(PODS, pod["metadata"]["name"], self.ns, grace_period_seconds=0)
            except ApiError as exc:
                if not exc.is_not_found():
                    raise
        pod = kube.create(PODS, version_pod(image, self.ns, NODE))
        self.watch.wait_for("Retrieving and verifying payload", image)
        return str(pod["metadata"]["name"])

    def end(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


Samples = dict[str, dict[str, dict[str, list[float]]]]  # implementation → pacing → mode → seconds


def measure(
    impl: Implementation,
    kubelet: Kubelet,
    watch: ConditionWatch,
    mode: tuple[str, Act, str, str],
    pacing: str,
    idle: float,
) -> tuple[float, float]:
    """One sample: a new version Pod, then the kubelet's write; (seconds until the condition
    carried the mode's text, local wall-clock seconds of day when the write began)."""
    name, act, text, _bound = mode
    ns = impl.ns
    image = f"quay.io/openshift-release-dev/ocp-release@sha256:{uuid.uuid4().hex * 2}"
    pod = impl.prepare(image)
    if name == "pod deleted":
        kubelet.set_container_state(pod, ns, "cleanup", running(), init=True)
    if pacing == "isolated":
        time.sleep(idle)  # let everything settle: one event meets an idle operator
    started, started_wall = time.monotonic(), wall_of_day()
    act(kubelet, pod, ns, image)
    seen = watch.wait_for(text, image)
    if "transient" in name:
        # End the retrieval so the next target starts at once.
        kubelet.set_phase(pod, ns, "Failed", "DeadlineExceeded", DEADLINE_MSG)
        watch.wait_for("DeadlineExceeded", image)
    if name == "pod deleted":
        kubelet.finish_deletion(pod, ns)
    return seen - started, started_wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="blocks per implementation (default 30)")
    parser.add_argument("--mode", action="append", default=[], help="only modes containing this text")
    parser.add_argument(
        "--pacing",
        choices=("both", "back-to-back", "isolated"),
        default="both",
        help="back-to-back (act at once), isolated (idle first), or both (default)",
    )
    parser.add_argument(
        "--impl",
        choices=("both", "floor", "start"),
        default="both",
        help="measure the floor and `start` in alternating blocks (default), or only one",
    )
    parser.add_argument("--idle", type=float, default=1.0, help="seconds idle before an isolated write (default 1)")
    parser.add_argument("--hops", action="store_true", help="break isolated samples down by hop (start at -v=5)")
    parser.add_argument("--keep-log", metavar="PATH", help="copy the log of `start` here at the end")
    parser.add_argument(
        "--stalled-update-service",
        action="store_true",
        help="give the cluster a channel and an update service that never finishes its answers (the "
        "available-updates poller stalls on it throughout): payload failures must surface as fast",
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if not 0 <= args.idle <= 60:
        parser.error("--idle must be between 0 and 60 seconds")
    pacings = ["back-to-back", "isolated"] if args.pacing == "both" else [args.pacing]
    names = [FLOOR_NAME, START_NAME] if args.impl == "both" else [args.impl]
    modes = [m for m in MODES if not args.mode or any(s.lower() in m[0].lower() for s in args.mode)]
    if not modes:
        parser.error(f"no mode contains {args.mode}")

    print(f"{datetime.now().isoformat(timespec='seconds')}, load average {load_average()}", flush=True)
    handle = local.start()
    kube = handle.client
    ns = local.unique_name("bench-payload")
    local.ensure_namespace(kube, ns)
    ensure_priority_class(kube)
    local.delete_all_cluster_scoped_update_objects(kube)
    kubelet = Kubelet(kube)
    results: Samples = {n: {p: {m[0]: [] for m in modes} for p in pacings} for n in names}
    hops: list[dict[str, float]] = []
    stalled = UpdateService(fault="endless") if args.stalled_update_service else None
    spec: dict[str, str] = {"clusterID": str(uuid.uuid4())}
    extra: list[str] = []
    if stalled is not None:
        spec.update(channel="stable-4.14", upstream=stalled.url)
        extra.append("--update-service=")  # spec.upstream: the stalled service
    fsyncs_before = handle.wal_fsyncs()
    # Before `start` runs: it would create a default ClusterVersion of its own.
    create_cv(kube, spec, with_updates(status_414()))
    with tempfile.TemporaryDirectory() as tmp:
        watch = ConditionWatch(kube)
        watch.informer.start()
        impls: dict[str, Implementation] = {}
        start: Start | None = None
        if START_NAME in names:
            impls[START_NAME] = start = Start(handle, ns, watch, Path(tmp), args.hops, extra)
        if FLOOR_NAME in names:
            # Go's build cache next to the cluster's data: later runs do not compile the standard library again.
            binary = goprogram.compile_program(goprogram.FLOOR, Path(tmp), cache=handle.dir / "go-build-cache")
            impls[FLOOR_NAME] = Floor(handle, ns, watch, binary)
        try:
            for run in range(args.runs):
                # Alternating blocks, each order as often: a drift in the machine's speed weighs on both alike.
                for name in names if run % 2 == 0 else names[::-1]:
                    impl = impls[name]
                    impl.begin()
                    try:
                        measure(impl, kubelet, watch, modes[0], "back-to-back", args.idle)  # warm-up, not counted
                        for pacing in pacings:
                            for mode in modes:
                                seconds, started_wall = measure(impl, kubelet, watch, mode, pacing, args.idle)
                                results[name][pacing][mode[0]].append(seconds)
                                if args.hops and pacing == "isolated" and isinstance(impl, Start):
                                    broken = hop_times(impl.log(), started_wall, started_wall + seconds + 0.001)
                                    if broken is not None:
                                        hops.append({**broken, "seen by a watch": seconds * 1000})
                    finally:
                        if args.keep_log and isinstance(impl, Start):
                            Path(args.keep_log).write_text(impl.log())
                        impl.end()
                print(f"run {run + 1}/{args.runs} done", file=sys.stderr)
        finally:
            watch.informer.stop()
            for impl in impls.values():
                impl.end()
            if start is not None:
                start.close()
            local.delete_all_cluster_scoped_update_objects(kube)
            if stalled is not None:
                stalled.close()

    met = report(results, modes, pacings, args.runs)
    if hops:
        print(f"\nisolated samples of `start` by hop ({len(hops)} samples; ms after the kubelet write began)\n")
        print(f"| {'hop':<20} | {'p50 ms':>7} | {'p99 ms':>7} |")
        for name in [h[0] for h in HOPS] + ["seen by a watch"]:
            values = [sample[name] for sample in hops]
            print(f"| {name:<20} | {percentile(values, 0.5):7.1f} | {percentile(values, 0.99):7.1f} |")
    print(wal_fsync_summary(fsyncs_before, handle.wal_fsyncs()))
    print(f"{datetime.now().isoformat(timespec='seconds')}, load average {load_average()}")
    return 0 if met else 1


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def report(results: Samples, modes: list[tuple[str, Act, str, str]], pacings: list[str], runs: int) -> bool:
    """Prints each pacing's table; True when `start` is within the targets of the floor (or only
    one implementation ran)."""
    names = list(results)
    both = names == [FLOOR_NAME, START_NAME]
    met = True
    for pacing in pacings:
        print(
            f"\n{pacing}: kubelet status write → ReleaseAccepted carries the reason ({runs} blocks of one sample "
            f"per mode and implementation; real kube-apiserver, each a separate process)\n"
        )
        head = "".join(f" {n + ' p50':>10} | {n + ' p99':>10} |" for n in names)
        ratios = f" {'p50 ×':>6} | {'p99 ×':>6} |" if both else ""
        print(f"| {'mode':<32} |{head}{ratios} upstream bound")
        print(f"|{'-' * 34}|" + "------------|" * 2 * len(names) + ("--------|" * 2 if both else "") + "-" * 26)
        rows = [(m[0], [results[n][pacing][m[0]] for n in names], m[3]) for m in modes]
        rows.append(("all modes", [[v for vs in results[n][pacing].values() for v in vs] for n in names], ""))
        for label, samples, bound in rows:
            cells = "".join(
                f" {percentile(v, 0.5) * 1000:10.1f} | {percentile(v, 0.99) * 1000:10.1f} |" for v in samples
            )
            if both:
                p50 = percentile(samples[1], 0.5) / percentile(samples[0], 0.5)
                p99 = percentile(samples[1], 0.99) / percentile(samples[0], 0.99)
                cells += f" {p50:6.2f} | {p99:6.2f} |"
                if label == "all modes":
                    met = met and p50 <= P50_TARGET and p99 <= P99_TARGET
            print(f"| {label:<32} |{cells} {bound}")
    if both:
        verdict = "met" if met else "NOT met"
        print(f"\ntarget: `start` p50 ≤ {P50_TARGET}× and p99 ≤ {P99_TARGET}× the floor's, every pacing: {verdict}")
    return met


def wal_fsync_summary(before: dict[float, int], after: dict[float, int]) -> str:
    """etcd's WAL fsyncs during the run: each API write waits for one, so slow ones are the tail
    of every figure above whatever the operator does."""
    during = {le: after[le] - before.get(le, 0) for le in sorted(after)}
    total = during.get(float("inf"), 0)
    slow = {ms: total - during.get(ms / 1000, total) for ms in (16, 64, 256)}
    return (
        f"\netcd WAL fsyncs during the run: {total}; over 16 ms: {slow[16]}, over 64 ms: {slow[64]}, "
        f"over 256 ms: {slow[256]} (etcd asks for a p99 under 10 ms; a data dir on tmpfs has none slow)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
