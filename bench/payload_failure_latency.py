#!/usr/bin/env python3
"""How fast does the admin see why payload retrieval fails?

For each failure mode: time from the kubelet's status write on the version Pod to the moment the
ClusterVersion's ReleaseAccepted condition carries that mode's reason, measured on the real local
API server with `cluster-version-operator start` running as a separate process. Prints p50/p99
per mode and upstream's bound for comparison (upstream fails fast on two modes only; the others
surface when the Pod's 120 s active deadline kills it).

Two pacings (`--pacing`, default both):

* back-to-back: the kubelet writes as soon as the new target's "Retrieving" status is visible,
  while the operator is still busy with that target (its writes, their echoes, the Pod's events);
* isolated: the system is left idle (`--idle`, default 1 s) before each kubelet write, so one
  event meets an operator at rest (its rate limit refilled, nothing else in flight).

`--hops` runs `start` at -v=5 and breaks each isolated sample down from its log timestamps:
kubelet write → Pod event dequeued → classified → ReleaseAccepted reported → status sync started
→ status written → seen by a watch.

    CVO_PY_CLUSTER_DIR=.local-cluster-bench python bench/payload_failure_latency.py [--runs 30]

It deletes and recreates the ClusterVersion `version` of that cluster: use a dedicated data dir.
Every kubelet write and every status write waits for an etcd WAL fsync; the run ends with how many
fsyncs were slow. On a disk that stalls them, they are the tail: put the data dir on tmpfs
(`CVO_PY_CLUSTER_DIR=/dev/shm/cvo-bench`) to measure the operator rather than the disk.
"""

from __future__ import annotations

import argparse
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

from cvo_py.informer import Informer
from cvo_py.kube import CLUSTERVERSIONS, MERGE_PATCH, PODS, KubeClient
from cvo_py.testing import cluster as local
from cvo_py.testing.clusterversion import create_cv, status_414
from cvo_py.testing.kubelet import Kubelet, running, terminated, waiting
from cvo_py.testing.payload import ClusterVerification, StartProcess, ensure_priority_class
from cvo_py.testing.update_service import UpdateService
from payload.podspec import POD_LABEL_SELECTOR

REPO = Path(__file__).resolve().parents[1]

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


def wait_pod(kube: KubeClient, ns: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pods = [
            p
            for p in kube.list(PODS, ns, label_selector=POD_LABEL_SELECTOR).get("items") or []
            if not p["metadata"].get("deletionTimestamp")
        ]
        if pods:
            return str(pods[0]["metadata"]["name"])
        time.sleep(0.01)
    raise TimeoutError("no version pod")


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per mode (default 30)")
    parser.add_argument("--mode", action="append", default=[], help="only modes containing this text")
    parser.add_argument(
        "--pacing",
        choices=("both", "back-to-back", "isolated"),
        default="both",
        help="back-to-back (act at once), isolated (idle first), or both (default)",
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

    handle = local.start()
    kube = handle.client
    ns = local.unique_name("bench-payload")
    local.ensure_namespace(kube, ns)
    ensure_priority_class(kube)
    local.delete_all_cluster_scoped_update_objects(kube)
    kubelet = Kubelet(kube)
    modes = [m for m in MODES if not args.mode or any(s.lower() in m[0].lower() for s in args.mode)]
    results: dict[str, dict[str, list[float]]] = {p: {m[0]: [] for m in modes} for p in pacings}
    hops: list[dict[str, float]] = []
    verification = ClusterVerification(kube)  # every image is signed: the Pod path is measured
    stalled = UpdateService(fault="endless") if args.stalled_update_service else None
    spec: dict[str, str] = {"clusterID": str(uuid.uuid4())}
    extra: list[str] = []
    if stalled is not None:
        spec.update(channel="stable-4.14", upstream=stalled.url)
        extra.append("--update-service=")  # spec.upstream: the stalled service
    fsyncs_before = handle.wal_fsyncs()
    # Before `start` runs: it would create a default ClusterVersion of its own.
    create_cv(kube, spec, status_414())
    with tempfile.TemporaryDirectory() as tmp:
        start = StartProcess(handle.kubeconfig, ns, Path(tmp), "4.14.1", *extra, verbosity=5 if args.hops else 2)
        watch = ConditionWatch(kube)
        watch.informer.start()
        try:
            for run in range(args.runs):
                for pacing in pacings:
                    for name, act, text, _bound in modes:
                        image = f"quay.io/openshift-release-dev/ocp-release@sha256:{uuid.uuid4().hex * 2}"
                        verification.sign(image)
                        kube.patch(
                            CLUSTERVERSIONS,
                            "version",
                            {"spec": {"desiredUpdate": {"image": image}}},
                            content_type=MERGE_PATCH,
                        )
                        pod = wait_pod(kube, ns)
                        watch.wait_for("Retrieving and verifying payload", image)
                        if name == "pod deleted":
                            kubelet.set_container_state(pod, ns, "cleanup", running(), init=True)
                        if pacing == "isolated":
                            time.sleep(args.idle)  # let everything settle: one event meets an idle operator
                        started, started_wall = time.monotonic(), wall_of_day()
                        act(kubelet, pod, ns, image)
                        seen = watch.wait_for(text, image)
                        results[pacing][name].append(seen - started)
                        if args.hops and pacing == "isolated":
                            broken = hop_times(start.log(), started_wall, started_wall + (seen - started) + 0.001)
                            if broken is not None:
                                hops.append({**broken, "seen by a watch": (seen - started) * 1000})
                        if "transient" in name:
                            # End the retrieval so the next target starts at once.
                            kubelet.set_phase(pod, ns, "Failed", "DeadlineExceeded", DEADLINE_MSG)
                            watch.wait_for("DeadlineExceeded", image)
                        if name == "pod deleted":
                            kubelet.finish_deletion(pod, ns)
                print(f"run {run + 1}/{args.runs} done", file=sys.stderr)
        finally:
            watch.informer.stop()
            start.stop()
            if args.keep_log:
                Path(args.keep_log).write_text(start.log())
            verification.remove()
            local.delete_all_cluster_scoped_update_objects(kube)
            if stalled is not None:
                stalled.close()

    worst = 0.0
    for pacing in pacings:
        print(
            f"\n{pacing}: kubelet status write → ReleaseAccepted carries the reason ({args.runs} runs per "
            "mode, real kube-apiserver, `start` as a separate process)\n"
        )
        print(f"| {'mode':<32} | {'p50 ms':>7} | {'p99 ms':>7} | {'max ms':>7} | upstream bound")
        print(f"|{'-' * 34}|{'-' * 9}|{'-' * 9}|{'-' * 9}|{'-' * 27}")
        for name, _act, _text, bound in modes:
            values = results[pacing][name]
            p50, p99 = percentile(values, 0.5) * 1000, percentile(values, 0.99) * 1000
            worst = max(worst, p99)
            print(f"| {name:<32} | {p50:7.0f} | {p99:7.0f} | {max(values) * 1000:7.0f} | {bound}")
        every = [v for values in results[pacing].values() for v in values]
        print(f"| {'all modes':<32} | {percentile(every, 0.5) * 1000:7.0f} | {percentile(every, 0.99) * 1000:7.0f} |")
    if hops:
        print(f"\nisolated samples by hop ({len(hops)} samples; ms after the kubelet write began)\n")
        print(f"| {'hop':<20} | {'p50 ms':>7} | {'p99 ms':>7} |")
        for name in [h[0] for h in HOPS] + ["seen by a watch"]:
            values = [sample[name] for sample in hops]
            print(f"| {name:<20} | {percentile(values, 0.5):7.1f} | {percentile(values, 0.99):7.1f} |")
    print(wal_fsync_summary(fsyncs_before, handle.wal_fsyncs()))
    print(f"\nworst p99: {worst:.0f} ms (target < 1000 ms)")
    return 0 if worst < 1000 else 1


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
