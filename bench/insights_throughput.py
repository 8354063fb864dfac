"""Node insight throughput, and the ConfigMap bytes per node insight (target ≥ 50,000 nodes/s).

Builds a synthetic cluster (N nodes over a master pool and P worker pools, a rolling update in
progress: some nodes updated, some draining, updating, rebooting, pending, a few unavailable or
degraded), then times `compute.node_insights` alone and followed by encoding each node insight's
ConfigMap value (`configmap.encode_value`, what the controller publishes per node), and reports
node insights per second, plus `configmap.encode` of everything (node, pool and health insights),
bytes per node insight and the shard plan for the whole cluster (node insights and the health
insights about single nodes in the shards, the rest in the main ConfigMap).

    .venv/bin/python bench/insights_throughput.py [--nodes 5000] [--pools 20] [--repeat 15] [--per-run]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from status.updatestatus.api import configmap
from status.updatestatus.insights import compute, models
from status.updatestatus.insights.kinds import NodeInsightShape
from testkit.objects.synthetic import synthetic_cluster


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pools", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--per-run", action="store_true", help="also print every run's figures, in order")
    args = parser.parse_args()
    cv, nodes, pools, versions = synthetic_cluster(args.nodes, args.pools)
    now = 1_704_106_800_000_000_000 + 368_975  # 2024-01-01T11:00:00Z + 368975ns

    compute.node_insights(nodes, pools, versions, now, cv=cv)  # warm-up
    rates, cpu_rates, full_rates, full_cpu_rates = [], [], [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        insights = compute.node_insights(nodes, pools, versions, now, cv=cv)
        t1, c1 = time.perf_counter(), time.process_time()
        for insight in insights:
            if isinstance(insight, NodeInsightShape):
                configmap.encode_value(insight)
        t2, c2 = time.perf_counter(), time.process_time()
        rates.append(args.nodes / (t1 - t0))
        cpu_rates.append(args.nodes / max(c1 - c0, 1e-9))
        full_rates.append(args.nodes / (t2 - t0))
        full_cpu_rates.append(args.nodes / max(c2 - c0, 1e-9))
    node_insights = [i for i in insights if isinstance(i, NodeInsightShape)]

    # the generated node value writer against the model's serializer (same bytes), same machine state
    node_models = [models.NodeStatusInsight.model_validate_json(configmap.encode_value(n)) for n in node_insights]
    generic, written_out = [], []
    for _ in range(3):
        c0 = time.process_time()
        for m in node_models:
            json.dumps(m.to_api(), ensure_ascii=False, separators=(",", ":"))
        c1 = time.process_time()
        for n in node_insights:
            configmap.encode_value(n)
        c2 = time.process_time()
        generic.append(c1 - c0)
        written_out.append(c2 - c1)

    t0 = time.perf_counter()
    data = configmap.encode(insights)
    encode_s = time.perf_counter() - t0
    node_bytes = [len(configmap.key_of(n)) + len(data[configmap.key_of(n)]) for n in node_insights]
    shard_plan = configmap.plan(data, node_health=configmap.node_health_keys(insights))

    print(f"nodes: {args.nodes} in {args.pools} pools, {len(insights)} insights (nodes, pools, health)")
    # best run: what the code does on an otherwise idle core; median: under whatever else runs here
    for what, wall, cpu in (("computed", rates, cpu_rates), ("computed + encoded", full_rates, full_cpu_rates)):
        if args.per_run:
            print(f"node insights/s {what} (wall), run by run: " + " ".join(f"{r:,.0f}" for r in wall))
        print(
            f"node insights/s {what} (wall): best {max(wall):,.0f}, median {statistics.median(wall):,.0f}, "
            f"worst {min(wall):,.0f} over {args.repeat} runs; CPU time: best {max(cpu):,.0f}, "
            f"median {statistics.median(cpu):,.0f}"
        )
    print(
        f"node value encoding, CPU per node: the model's pydantic + json {min(generic) / args.nodes * 1e6:.1f} µs, "
        f"configmap.encode_value {min(written_out) / args.nodes * 1e6:.1f} µs"
    )
    print(f"encode of all insights: {encode_s * 1000:.0f} ms for {len(data)} keys")
    print(
        f"bytes per node insight (key + value): mean {statistics.mean(node_bytes):.0f}, max {max(node_bytes)}"
    )
    print(
        f"all insights: {configmap.data_size(data):,} bytes; shard plan: {shard_plan.shards} node shards, "
        f"main ConfigMap {shard_plan.sizes[configmap.CONFIGMAP]:,} bytes, "
        f"largest shard {max(v for k, v in shard_plan.sizes.items() if k != configmap.CONFIGMAP):,} bytes, "
        f"ok={shard_plan.ok}"
    )
    for problem in shard_plan.problems:
        print(f"  problem: {problem}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
