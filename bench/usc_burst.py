"""The Update Status Controller after a burst of new nodes, on the real local API server: from the
last change to a complete publication, beside the time the write budget needs for it.

An oc snapshot is loaded (its ClusterVersion, ClusterOperators, MachineConfigs, pools and nodes),
the controller runs as a subprocess with its ServiceAccount's token, then `--nodes` copies of the
snapshot's nodes (every seventh degraded, as `testkit/objects/scale.py` makes them) are created
and their status written by `--writers` threads, as fast as the API server takes them: a scale-up,
or a fleet-wide change, arriving faster than the controller may write.

A watch on the namespace records every ConfigMap write. Figures:
- complete publication: the first moment after the last change at which the published view (the
  main ConfigMap and the shards it lists) is the final one, and `usc-meta` no longer says `paced`;
  the final view is checked against the insights computed from a fresh LIST of the cluster;
- drain time: how long the write budget (the token bucket of
  `status/updatestatus/controller/pacing.py`, replayed from the writes seen) needs, from the last
  change, to write each ConfigMap whose content then differs from its final content once;
- the seconds after the last change during which the view was not the final one while `usc-meta`
  did not say `paced` (what a reader would take for complete), and the longest stretch without
  any write while incomplete.

Target: complete publication at most 1 s after the drain time; no second that looks complete
while it is not.

    CVO_PY_CLUSTER_DIR=.local-cluster-burst .venv/bin/python bench/usc_burst.py [--nodes 5000] [--writers 16]

It deletes every Node, MachineConfigPool, MachineConfig, ClusterVersion and ClusterOperator of
that cluster: give it a data dir of its own.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cvo_py.runtime import kube as api
from cvo_py.runtime.informer import Informer
from cvo_py.runtime.kube import JSON, ApiError, KubeClient, Resource
from status.updatestatus.api import metadata
from status.updatestatus.api.sharding import shard_names_allowed
from status.updatestatus.client import snapshot
from status.updatestatus.controller.pacing import WritePacer
from testkit.checkout import REPO
from testkit.harness import cluster as local
from testkit.harness import usc as h
from testkit.objects import dumps, scale

SERVER_SET = ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "ownerReferences")


def body_of(obj: JSON) -> JSON:
    """What to create from a snapshot's object: without what the API server sets, or the status."""
    body = {k: copy.deepcopy(v) for k, v in obj.items() if k != "status"}
    for key in SERVER_SET:
        body["metadata"].pop(key, None)
    return body


def load(kube: KubeClient, res: Resource, obj: JSON) -> None:
    """Create the object, then write its status as its controller would."""
    created = kube.create(res, body_of(obj))
    if obj.get("status"):
        created["status"] = copy.deepcopy(obj["status"])
        kube.replace_status(res, created)


def reset(kube: KubeClient) -> None:
    for res in (api.NODES, api.MACHINECONFIGPOOLS, api.MACHINECONFIGS):
        kube.request("DELETE", res.path())
    local.delete_all_cluster_scoped_update_objects(kube)
    for name in shard_names_allowed():
        try:
            kube.delete(api.CONFIGMAPS, name, h.NAMESPACE)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
    h.delete_lease(kube, h.NAMESPACE)


@dataclass
class Event:
    at: float  # time.monotonic() when the watch delivered it
    name: str
    data: dict[str, str] | None  # None: deleted


def states(events: list[Event]) -> Iterator[tuple[Event, dict[str, dict[str, str]]]]:
    """Each write with the ConfigMaps as they were once it was made."""
    maps: dict[str, dict[str, str]] = {}
    for event in events:
        if event.data is None:
            maps.pop(event.name, None)
        else:
            maps[event.name] = event.data
        yield event, maps


class Writes:
    """Every write of the API's ConfigMaps, as the watch delivers them (resourceVersion order)."""

    def __init__(self, kube: KubeClient) -> None:
        self.lock = threading.Lock()
        self.events: list[Event] = []
        self.informer = Informer(kube, api.CONFIGMAPS, namespace=h.NAMESPACE)
        self.informer.add_handler(self._on)
        self.informer.start()

    def _on(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        name = obj["metadata"]["name"]
        if name.startswith(h.CONFIGMAP):
            data = None if event_type == "DELETED" else dict(obj.get("data") or {})
            with self.lock:
                self.events.append(Event(time.monotonic(), name, data))

    def snapshot(self) -> list[Event]:
        with self.lock:
            return list(self.events)

    def view(self) -> tuple[dict[str, str], metadata.PublicationMetadata | None]:
        """What a reader gets from the ConfigMaps as the watch last showed them."""
        last: dict[str, dict[str, str]] = {}
        for _, maps in states(self.snapshot()):
            last = maps
        return h.published_view(last)


def paced(meta: metadata.PublicationMetadata | None) -> bool:
    return meta is not None and meta.paced


def drain_time(write_times: list[float], at: float, writes: int) -> tuple[float, float]:
    """(Seconds from `at` until the next write may go, until `writes` more may have gone) by the
    controller's own write budget, replayed from the writes seen until `at`."""
    bucket = WritePacer()
    for when in sorted(t for t in write_times if t <= at):
        bucket.wrote(when, 1)
    first = now = at + bucket.wait_for(at, 1)
    for _ in range(writes):
        now += bucket.wait_for(now, 1)
        bucket.wrote(now, 1)
    return first - at, (now - at) if writes else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000, help="nodes created in the burst (default 5000)")
    parser.add_argument("--writers", type=int, default=16, help="threads creating them (default 16)")
    parser.add_argument("--example", default=scale.EXAMPLE, help=f"the oc snapshot (default {scale.EXAMPLE})")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the publication")
    args = parser.parse_args()
    if not scale.EXAMPLES.is_dir():
        print(f"oc examples not found in {scale.EXAMPLES}", file=sys.stderr)
        return 1
    pacer = WritePacer()  # the controller's defaults
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    cluster = local.start(local.cluster_dir())
    kube = cluster.client
    h.apply(kube, h.load_manifests())
    reset(kube)
    base = dumps.by_name(snapshot.load(scale.EXAMPLES / f"{args.example}-cv.yaml"))
    burst = scale.example_at_scale(args.nodes, args.example).nodes
    load(kube, api.CLUSTERVERSIONS, base.clusterversion)
    for res, objects in (
        (api.CLUSTEROPERATORS, base.operators),
        (api.MACHINECONFIGS, base.machineconfigs),
        (api.MACHINECONFIGPOOLS, base.pools),
        (api.NODES, base.nodes),
    ):
        for obj in objects:
            load(kube, res, obj)
    h.create_configmap(kube, h.NAMESPACE)
    writes = Writes(kube)
    tmp = Path(tempfile.mkdtemp(prefix="usc-burst-"))
    token = cluster.service_account_token(h.NAMESPACE, h.SERVICE_ACCOUNT)
    usc = h.ControllerProcess(cluster.write_kubeconfig(tmp / "sa.kubeconfig", token), h.NAMESPACE, tmp / "usc.log")
    try:
        h.wait_for(
            "the snapshot's insights published",
            lambda: sum(k.startswith("usc-node-") for k in writes.view()[0]) >= len(base.nodes),
            timeout=60,
        )
        time.sleep(2.0)  # the bucket full again
        acked: list[float] = []
        lock = threading.Lock()

        def new_node(node: JSON) -> None:
            load(kube, api.NODES, node)
            with lock:
                acked.append(time.monotonic())

        started = time.monotonic()
        with ThreadPoolExecutor(args.writers) as pool:
            list(pool.map(new_node, burst))
        last_change = max(acked)
        sent = last_change - started

        # The final view: what the insights of a fresh LIST give, at the instant it is stamped, and
        # no longer `paced` (a view that merely stops changing may still miss nodes).
        def settled() -> bool:
            events = writes.snapshot()
            data, meta = writes.view()
            if not events or time.monotonic() - events[-1].at < 0.5 or meta is None or meta.paced:
                return False
            return data == h.insights_of_a_fresh_list(kube, meta.computed_at, data)

        h.wait_for("the whole burst published", settled, timeout=args.timeout, interval=1.0)
        final, _ = writes.view()
        events = writes.snapshot()
    finally:
        usc.stop()
        writes.informer.stop()
        reset(kube)

    # Replay the publication from the last change on: the view after each write.
    at_last: dict[str, dict[str, str]] = {}
    timeline: list[tuple[float, bool, bool]] = []  # (when, the final view, paced)
    final_maps: dict[str, dict[str, str]] = {}
    for event, maps in states(events):
        if event.at <= last_change:
            at_last = dict(maps)
            continue
        data, meta_then = h.published_view(maps)
        timeline.append((event.at, data == final, paced(meta_then)))
        final_maps = maps
    data_then, meta_at_last = h.published_view(at_last)
    complete = next((when for when, whole, says_paced in timeline if whole and not says_paced), None)

    def insight_keys(data: dict[str, str] | None) -> dict[str, str]:
        return {k: v for k, v in (data or {}).items() if k != metadata.META_KEY}

    to_write = sorted(
        name
        for name in final_maps
        if insight_keys(at_last.get(name)) != insight_keys(final_maps[name])
        or (name == h.CONFIGMAP and paced(meta_at_last))
    )
    next_write, drain = drain_time([e.at for e in events], last_change, len(to_write))
    looked_complete = longest_still = 0.0
    since, whole, says_paced = last_change, data_then == final, paced(meta_at_last)
    for when, now_whole, now_paced in [*timeline, (complete or time.monotonic(), True, False)]:
        if not whole and not says_paced:
            looked_complete += when - since
        if not whole:
            longest_still = max(longest_still, when - since)
        since, whole, says_paced = when, now_whole, now_paced
    after = [e for e in events if e.at > last_change]
    nodes_then = sum(1 for k in data_then if k.startswith("usc-node-"))
    nodes_final = sum(1 for k in final if k.startswith("usc-node-"))

    print(
        f"\nUpdate Status Controller after a burst: {args.example}, {len(burst)} nodes created and their status "
        f"written by {args.writers} writers (controller as its ServiceAccount, real kube-apiserver)"
    )
    print(f"  burst sent in {sent:.1f} s; at its last change the view held {nodes_then} of {nodes_final} node insights")
    print(
        f"  at the last change: {len(to_write)} of {len(final_maps)} ConfigMaps still to write; the budget "
        f"({pacer.burst} at once, {pacer.rate:g} a second) allowed the next write {next_write:.2f} s later"
    )
    print(f"  drain time of the write budget: {drain:.2f} s")
    if complete is None:
        print("  complete publication: NEVER within the run")
        return 1
    took = complete - last_change
    verdict = "met" if took <= drain + 1.0 else "NOT met"
    print(
        f"  complete publication: {took:.2f} s after the last change ({took - drain:+.2f} s beyond the drain time; "
        f"target <= 1 s beyond: {verdict}); {len(after)} ConfigMap writes after it"
    )
    if len(after) > 1:
        spread = after[-1].at - after[0].at
        print(
            f"  first write {after[0].at - last_change:.2f} s after the last change (the budget allowed one after "
            f"{next_write:.2f} s), then {len(after) - 1} more in {spread:.2f} s "
            f"({(len(after) - 1) / spread:.1f} a second)"
        )
    print(
        f"  looked complete while it was not: {looked_complete:.2f} s (target 0); longest stretch without a write "
        f"while incomplete: {longest_still:.2f} s"
    )
    print(f"  final view: the insights of a fresh LIST ({len(final)} keys)")
    print(f"  load average at the end: {os.getloadavg()[0]:.1f}")
    return 0 if verdict == "met" and looked_complete == 0.0 else 1


if __name__ == "__main__":
    os.environ.setdefault("CVO_PY_CLUSTER_DIR", str(REPO / ".local-cluster"))
    raise SystemExit(main())
