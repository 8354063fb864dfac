"""`upgrade-status --watch` at scale: how soon a published node change is on the screen, what one
redraw costs, whether memory stays flat, and how many frames a burst of changes gives.

The ConfigMap API of a large cluster (an oc example with its nodes copied, as
bench/upgrade_status_client.py builds it; 5,000 nodes by default, node insights in shards) is
published on the local API server. `cluster-version-operator upgrade-status --watch --details all`
runs on a pseudo-terminal of 200 × 60 (so it draws in place, as in a person's terminal). Then, one
at a time, the node shown in the first row of the control-plane nodes table is changed as the
Update Status Controller publishes a change (a PATCH of that node's key in its shard, here its
version, each time to a new text), and the bench waits until the text is on the terminal:

- latency: from the PATCH's response (the change committed) to the text read from the terminal;
- CPU per redraw: the watch process's user + system time across one change (read from /proc);
- RSS: the watch process's resident memory after its first frame and after every change.

Each change comes `REDRAW_GAP` after the previous one was shown (as the controller publishes: at
most 4 writes a second once its burst is spent), so each is a single change, shown at once; the
watch holds back only changes that come closer together. Then a burst: 200 renewals of the
controller's Lease (expired, each naming another holder, so each changes what is shown), from 4
writers at once: the full frames drawn and the bytes written until the last one is on screen.

With `--source cluster` the watch follows the cluster's objects instead (`upgrade-status --watch
--source cluster`, what a cluster without the controller gets): the example's objects are loaded
into the API server (about a minute at 5,000 nodes), and each change is a PATCH of that node's
Machine Config Daemon reason (shown in its row), from the PATCH's response to the text on the
terminal; the burst is 200 such PATCHes of one node from 4 writers.

Targets at 5,000 nodes: on screen within 100 ms, a redraw under 50 ms of CPU, RSS flat over 1,000
changes; a burst drawn in at most one frame per `REDRAW_GAP` while it lasts and one after (and
the one a second an expired Lease's warning gets as its age moves on).

    CVO_PY_CLUSTER_DIR=.local-cluster-bench .venv/bin/python bench/upgrade_status_watch.py \\
        [--nodes 5000] [--changes 1000] [--source controller|cluster]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import statistics
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from cvo_py import __version__
from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.kube import CONFIGMAPS, LEASES, NODES, ApiError, KubeClient
from status.updatestatus.api import configmap, metadata
from status.updatestatus.api.names import LEASE
from status.updatestatus.client.render import render
from status.updatestatus.client.watch import REDRAW_GAP, TICK
from status.updatestatus.insights.kinds import InsightShape
from testkit.checkout import REPO
from testkit.harness import cluster as local
from testkit.harness.terminal import as_typed
from testkit.objects import livecluster, scale

_SCRIPT = Path(sys.executable).parent / "cluster-version-operator"
COMMAND = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "cvo_py"]
COLUMNS, ROWS = 200, 60
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
BURST = 200  # Lease renewals
FRAME_END = b"\x1b[J"  # what ends a full frame (an update of the age line alone does not)


class Terminal:
    """A pseudo-terminal whose output a thread keeps reading (so the program never blocks on it)."""

    def __init__(self, argv: list[str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        # started as a shell starts it, so that Ctrl-C ends it also when the bench runs in the background
        self.proc = subprocess.Popen(
            as_typed(argv), stdin=slave, stdout=slave, stderr=slave, cwd=REPO, start_new_session=True
        )
        os.close(slave)
        self.output = bytearray()
        self.read = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 1 << 16)
            except OSError:
                chunk = b""
            with self.read:
                if not chunk:
                    self.read.notify_all()
                    return
                self.output += chunk
                self.read.notify_all()

    def wait_for(self, text: bytes, after: int, timeout: float = 60.0) -> float:
        """When `text` was read (monotonic), at or after offset `after` of the output."""
        with self.read:
            ok = self.read.wait_for(lambda: self.output.find(text, after) >= 0 or self.proc.poll() is not None, timeout)
            if not ok or self.output.find(text, after) < 0:
                tail = bytes(self.output[-2000:]).decode(errors="replace")
                raise SystemExit(f"{text!r} not shown within {timeout:.0f} s; the terminal ends with:\n{tail}")
            return time.monotonic()

    def offset(self) -> int:
        with self.read:
            return len(self.output)

    def stop(self) -> int:
        self.proc.send_signal(2)  # Ctrl-C
        code = self.proc.wait(30)
        os.close(self.master)
        return code


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND  # utime, stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))]


def where_is(kube: KubeClient, key: str) -> str:
    for cm in kube.list(CONFIGMAPS, namespace=configmap.NAMESPACE).get("items") or []:
        if key in (cm.get("data") or {}):
            return str(cm["metadata"]["name"])
    raise SystemExit(f"{key} is in no ConfigMap of {configmap.NAMESPACE}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--source", choices=("controller", "cluster"), default="controller")
    args = parser.parse_args()
    if not scale.EXAMPLES.is_dir():
        print(f"oc examples not found in {scale.EXAMPLES.resolve()}", file=sys.stderr)
        return 1
    stamp = datetime.now().isoformat(timespec="seconds")
    print(f"{stamp}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    cluster = local.start(local.cluster_dir())
    kube = cluster.client
    snap = scale.example_at_scale(args.nodes)
    now = time.time_ns()
    insights, _ = snap.insights(now)
    text = render(insights, now, "all")
    lines = text.split("\n")
    first_row = lines[lines.index("Control Plane Nodes") + 2]
    node = first_row.split()[0]
    loaded = None
    if args.source == "cluster":
        loaded = livecluster.load(kube, snap)
        change = node_change(kube, node)
        print(
            f"{args.nodes} nodes loaded as objects; the watch shows {len(lines)} lines of status cut to a "
            f"{COLUMNS}x{ROWS} terminal; changing {node}'s Machine Config Daemon reason"
        )
    else:
        change = published_change(kube, insights, now, node, args.nodes, len(lines))
    argv = [*COMMAND, "upgrade-status", "--kubeconfig", cluster.kubeconfig, "--watch", "--details", "all"]
    terminal = Terminal([*argv, "--source", args.source])
    latencies: list[float] = []
    cpus: list[float] = []
    rss: list[float] = []
    try:
        terminal.wait_for(b"Control Plane Nodes", 0, timeout=120)
        pid = terminal.proc.pid
        time.sleep(1.0)  # the first frame drawn and settled
        rss.append(rss_mb(pid))
        for i in range(args.changes):
            marker = f"4.14.0-m{i:05d}"
            cpu_before, after = cpu_seconds(pid), terminal.offset()
            change(marker)
            committed = time.monotonic()
            shown = terminal.wait_for(marker.encode(), after)
            latencies.append((shown - committed) * 1000)
            time.sleep(0.02)  # the frame's write is done
            cpus.append((cpu_seconds(pid) - cpu_before) * 1000)
            rss.append(rss_mb(pid))
            if (i + 1) % 100 == 0:
                print(f"  {i + 1} changes: p50 {statistics.median(latencies):.0f} ms, RSS {rss[-1]:.1f} MB", flush=True)
            time.sleep(REDRAW_GAP)  # the next one is a single change too
        if args.source == "cluster":
            frames, written, burst_seconds = node_burst(change, terminal)
        else:
            frames, written, burst_seconds = burst(kube, terminal)
        code = terminal.stop()
    finally:
        if terminal.proc.poll() is None:
            terminal.proc.kill()
        if loaded is not None:
            loaded.remove()
    # what Ctrl-C leaves: the cursor moved below the last frame, attributes reset, the rest cleared
    ending = re.search(rb"\x1b\[[0-9]+;1H\x1b\[0m\x1b\[J$", bytes(terminal.output[-64:]))

    print(
        f"\nupgrade-status --watch --source {args.source}, {args.nodes} nodes, {len(latencies)} node changes, "
        "one at a time"
    )
    print(
        f"  published -> on the terminal: p50 {percentile(latencies, 50):.1f} ms, "
        f"p90 {percentile(latencies, 90):.1f} ms, p99 {percentile(latencies, 99):.1f} ms, "
        f"max {max(latencies):.1f} ms — target <= 100 ms: "
        f"{'met' if percentile(latencies, 50) <= 100 else 'NOT met'} (p50), "
        f"{'met' if percentile(latencies, 99) <= 100 else 'NOT met'} (p99)"
    )
    print(
        f"  CPU per change (decode + render + draw, at {1000 // TICKS_PER_SECOND} ms resolution): median "
        f"{statistics.median(cpus):.0f} ms, p90 {percentile(cpus, 90):.0f} ms, max {max(cpus):.0f} ms — "
        "target <= 50 ms: "
        f"{'met' if statistics.median(cpus) <= 50 else 'NOT met'} (median)"
    )
    growth = rss[-1] - rss[0]
    print(
        f"  RSS: {rss[0]:.1f} MB after the first frame, {rss[len(rss) // 2]:.1f} MB halfway, {rss[-1]:.1f} MB after "
        f"{len(latencies)} changes (peak {max(rss):.1f} MB; {growth:+.1f} MB) — flat: "
        f"{'yes' if abs(growth) < 5 else 'NO'}"
    )
    # composed at least REDRAW_GAP apart from the first renewal until the last is shown, and the
    # one a second that the warning's "expired ... ago" gets as it moves on
    bound = int(1 + burst_seconds / REDRAW_GAP + 1 + burst_seconds / TICK)
    what = "node changes" if args.source == "cluster" else "Lease renewals"
    print(
        f"  a burst of {BURST} {what}, the last on the terminal {burst_seconds:.2f} s after the first was "
        f"sent: {frames} full frames, {written / 1024:.0f} KiB written — target <= {bound} frames: "
        f"{'met' if frames <= bound else 'NOT met'}"
    )
    clean = "yes" if ending else "NO"
    print(f"  Ctrl-C: exit {code}; the cursor left below the last frame, attributes reset: {clean}")
    print(f"  load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


def published_change(
    kube: KubeClient, insights: Sequence[InsightShape], now: int, node: str, nodes: int, lines: int
) -> Callable[[str], None]:
    """Publish the insights; a change of `node`'s version in its shard, as the controller writes it."""
    shards = scale.publish(kube, insights, now)
    # Fresh for the whole run (a resync of an hour): no staleness warning comes in the middle.
    meta = metadata.build(now, "watch-bench", __version__, 3600 * SECOND, [])
    kube.patch(
        CONFIGMAPS,
        configmap.CONFIGMAP,
        {"data": {metadata.META_KEY: metadata.encode(meta)}},
        namespace=configmap.NAMESPACE,
    )
    key = configmap.node_key(node)
    holder = where_is(kube, key)
    print(
        f"{nodes} nodes published in {shards} ConfigMaps; the watch shows {lines} lines of status "
        f"cut to a {COLUMNS}x{ROWS} terminal; changing {node} (in {holder})"
    )
    value = json.loads(kube.get(CONFIGMAPS, holder, configmap.NAMESPACE)["data"][key])

    def change(marker: str) -> None:
        value["version"] = marker
        kube.patch(CONFIGMAPS, holder, {"data": {key: json.dumps(value)}}, namespace=configmap.NAMESPACE)

    return change


def node_change(kube: KubeClient, node: str) -> Callable[[str], None]:
    """A change of `node`'s Machine Config Daemon reason (its row's message), as the daemon writes it."""

    def change(marker: str) -> None:
        kube.patch(NODES, node, {"metadata": {"annotations": {scale.MCO + "reason": marker}}})

    return change


def node_burst(change: Callable[[str], None], terminal: Terminal) -> tuple[int, int, float]:
    """BURST changes of the node's reason from 4 writers at once: the full frames drawn and the
    bytes written until the last is on the terminal, and how long after the first was sent."""
    time.sleep(1.0)
    after = terminal.offset()
    started = time.monotonic()
    markers = [f"burst-{i:04d}" for i in range(BURST)]
    with ThreadPoolExecutor(4) as writers:
        list(writers.map(change, markers[:-1]))
    change(markers[-1])  # the last, after all others
    seconds = terminal.wait_for(markers[-1].encode(), after) - started
    with terminal.read:
        output = bytes(terminal.output[after:])
    return output.count(FRAME_END), len(output), seconds


def burst(kube: KubeClient, terminal: Terminal) -> tuple[int, int, float]:
    """BURST renewals of an expired Lease, each naming another holder, from 4 writers at once: the
    full frames drawn and the bytes written until the last holder is on the terminal, and how long
    after the first renewal was sent that was."""
    ns = configmap.NAMESPACE
    spec = {"holderIdentity": "usc-0", "leaseDurationSeconds": 15, "renewTime": "2024-01-01T10:00:00.000000Z"}
    try:
        kube.delete(LEASES, LEASE, ns)  # one an earlier run left on a reused cluster
    except ApiError as exc:
        if not exc.is_not_found():
            raise
    kube.create(LEASES, {"metadata": {"name": LEASE, "namespace": ns}, "spec": spec}, ns)
    terminal.wait_for(b"holder usc-0,", 0)
    time.sleep(1.0)  # settled: nothing of the Lease's arrival is counted
    after = terminal.offset()
    started = time.monotonic()
    with ThreadPoolExecutor(4) as writers:
        renewals = [{"spec": {"holderIdentity": f"usc-{i}"}} for i in range(1, BURST + 1)]
        list(writers.map(lambda renewal: kube.patch(LEASES, LEASE, renewal, ns), renewals))
    holder = kube.get(LEASES, LEASE, ns)["spec"]["holderIdentity"]
    seconds = terminal.wait_for(f"holder {holder},".encode(), after) - started
    with terminal.read:
        output = bytes(terminal.output[after:])
    return output.count(FRAME_END), len(output), seconds


if __name__ == "__main__":
    raise SystemExit(main())
