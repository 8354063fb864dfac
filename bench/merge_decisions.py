"""How long the sync worker's per-object decision takes: `syncworker.merge.plan` on live objects as
the real API server returns them, one of every typed kind plus a custom resource, cycled to a
payload's size.

Prints, per kind and for a whole pass, the median time of a decision that finds nothing to write
(the steady state of a Reconciling pass), of one on a live object whose include annotation was
edited (the typed merges write it back; the generic rule does not compare metadata), and of one
settled by the fingerprint of the last write. Target: a pass of 800 unchanged objects in ≤ 0.4 s of CPU, so
the decisions stay well below the GET each of them follows.

    .venv/bin/python bench/merge_decisions.py [--objects 800] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from cvo_py.runtime.jsondata import copy_json
from cvo_py.runtime.kube import NAMESPACES, ApiError, Resource
from syncworker import merge
from testkit.checkout import REPO
from testkit.harness import cluster as local
from testkit.harness import localcluster
from testkit.objects.manifests import custom_resource, typed_manifests

JSON = dict[str, Any]
PLURALS = {
    "ConfigMap": "configmaps",
    "ServiceAccount": "serviceaccounts",
    "Namespace": "namespaces",
    "Service": "services",
    "Deployment": "deployments",
    "DaemonSet": "daemonsets",
    "Job": "jobs",
    "CronJob": "cronjobs",
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "CustomResourceDefinition": "customresourcedefinitions",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
    "ImageStream": "imagestreams",
    "OperatorGroup": "operatorgroups",
    "SecurityContextConstraints": "securitycontextconstraints",
    "PrometheusRule": "prometheusrules",
}
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "ValidatingWebhookConfiguration",
    "SecurityContextConstraints",
}
CRDS = ("imagestream.yaml", "operatorgroup.yaml", "securitycontextconstraints.yaml")


def resource(obj: JSON) -> Resource:
    kind = obj["kind"]
    return Resource(obj["apiVersion"], kind, PLURALS[kind], kind not in CLUSTER_SCOPED)


def served_pairs(client: Any, namespace: str) -> tuple[list[tuple[JSON, JSON]], list[tuple[Resource, str]]]:
    """(manifest, live object) for every kind, created on the API server and read back."""
    suffix = uuid.uuid4().hex[:8]
    manifests = [*typed_manifests(namespace, suffix).values(), custom_resource(namespace, "bench")]
    pairs, cluster_scoped = [], []
    for manifest in manifests:
        required = merge.with_owner(manifest, str(uuid.uuid4()))
        res = resource(required)
        ns = namespace if res.namespaced else None
        client.create(res, required, ns)
        if not res.namespaced:
            cluster_scoped.append((res, required["metadata"]["name"]))
        pairs.append((required, client.get(res, required["metadata"]["name"], ns)))
    return pairs, cluster_scoped


def decisions(required: JSON, live: JSON, applied: str | None, rounds: int) -> Callable[[], object]:
    """`rounds` decisions for one object, as one timed call."""
    return lambda: [merge.plan(required, live, applied) for _ in range(rounds)]


def median_seconds(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=800, help="decisions in one pass (default 800)")
    parser.add_argument("--repeat", type=int, default=5, help="passes timed per figure (default 5)")
    args = parser.parse_args()

    handle = local.start(local.cluster_dir())
    client = handle.client
    for name in CRDS:
        localcluster.apply_crd(handle.handle, REPO / "tests" / "crds" / name)
    namespace = local.unique_name("bench-merge")
    local.ensure_namespace(client, namespace)
    try:
        pairs, cluster_scoped = served_pairs(client, namespace)
    finally:
        client.delete(NAMESPACES, namespace)
    for res, name in cluster_scoped:
        try:
            client.delete(res, name)
        except ApiError:
            pass

    print(f"load average {os.getloadavg()[0]:.2f}; CPU time, median of {args.repeat}")
    print(f"{'kind':32} {'unchanged µs':>13} {'edited µs':>10} {'fingerprint µs':>15}")
    rounds = 200
    for required, live in pairs:
        edited = copy_json(live)
        edited["metadata"]["annotations"]["include.release.openshift.io/self-managed-high-availability"] = "false"
        applied = merge.fingerprint(required, live)
        figures = [
            median_seconds(decisions(required, current, fingerprint, rounds), args.repeat) / rounds * 1e6
            for current, fingerprint in ((live, None), (edited, None), (live, applied))
        ]
        print(f"{required['kind']:32} {figures[0]:13.0f} {figures[1]:10.0f} {figures[2]:15.0f}")

    cycle = [pairs[i % len(pairs)] for i in range(args.objects)]
    whole = median_seconds(lambda: [merge.plan(r, lv) for r, lv in cycle], args.repeat)
    verdict = "met" if whole <= 0.4 else "NOT met"
    print(f"a pass of {args.objects} unchanged objects: {whole:.3f} s CPU (target ≤ 0.4 s: {verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
