"""The install/ RBAC is minimal and sufficient, proven by the API server's audit log.

Sufficient: every request the controller makes as its ServiceAccount is allowed. Minimal: every
verb the manifests grant is used, and removing a rule breaks a named behaviour.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cvo_py.runtime.kube import JSON, KubeClient
from testkit.fakes.mco import MCO
from testkit.harness import usc as h
from testkit.harness.certs import self_signed
from testkit.harness.cluster import LocalCluster

TEST_LABEL = "test.cvo-py/usc-rbac"
# ~650 bytes per node insight: 600 of them exceed the 256 KiB the controller fills a ConfigMap to.
SHARDING_NODES = 600
# A renew deadline that a 10 s stall (a loaded machine) does not reach: the controller leads until
# it is stopped, or, without the right to update its Lease, gives up once the deadline passes.
FAST_LEASE = (
    "--leader-elect-lease-duration=20",
    "--leader-elect-renew-deadline=15",
    "--leader-elect-retry-period=1",
)


def granted(docs: list[JSON]) -> set[tuple[str, str, str]]:
    """(apiGroup, resource, verb) for every rule of the manifests."""
    out: set[tuple[str, str, str]] = set()
    for doc in docs:
        for rule in doc.get("rules") or []:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        out.add((group, resource, verb))
    return out


def start_controller(cluster: LocalCluster, namespace: str, tmp_path: Path, *extra: str) -> h.ControllerProcess:
    token = cluster.service_account_token(namespace, h.SERVICE_ACCOUNT)
    kubeconfig = cluster.write_kubeconfig(tmp_path / "sa.kubeconfig", token)
    return h.ControllerProcess(kubeconfig, namespace, tmp_path / "usc.log", *FAST_LEASE, *extra)


def test_every_request_is_allowed_and_every_grant_is_used(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    mco: MCO,
    clusterversion_cleanup: None,
    tmp_path: Path,
) -> None:
    docs = h.render(h.load_manifests(), namespace)
    h.apply(kube, docs)
    audit = cluster.state["auditLog"]
    offset = os.path.getsize(audit)
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, "4.15.8", now - timedelta(days=1))
    h.create_operator(kube, "dns", "4.15.8", now)
    mco.create_machineconfig(f"rendered-worker-{namespace}", "4.15.8")
    mco.create_pool(f"pool-{namespace}", {f"pool-{namespace}": ""}, f"rendered-worker-{namespace}")
    # Enough nodes that their insights spread over shard ConfigMaps, which the controller creates.
    labels = {f"pool-{namespace}": "", TEST_LABEL: namespace}
    with ThreadPoolExecutor(16) as pool:
        list(
            pool.map(
                lambda i: mco.create_node(f"n-{namespace}-{i:04d}", ["worker"], f"rendered-worker-{namespace}", labels),
                range(SHARDING_NODES),
            )
        )

    # Serving HTTPS, as in its Deployment: /metrics then reads the client CA from kube-system.
    cert, key = self_signed(tmp_path, common_name="update-status-controller", ip="127.0.0.1")
    usc = start_controller(cluster, namespace, tmp_path, f"--serving-cert-file={cert}", f"--serving-key-file={key}")
    try:
        usc.wait_for_log("does not exist: nothing to publish")
        h.create_configmap(kube, namespace)
        h.wait_for("sharded insights", lambda: (h.configmap_data(kube, namespace) or {}).get("usc-shards"))
        h.start_update(kube, "4.16.0", now)
        h.wait_for(
            "Updating=True",
            lambda: (
                h.condition(h.insight(h.configmap_data(kube, namespace), "usc-cv-version"), "Updating")["status"]
                == "True"
            ),
        )
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]  # SIGTERM: hands the Lease back (get + update)
        _delete_cluster_objects(kube, namespace)

    user = f"system:serviceaccount:{namespace}:{h.SERVICE_ACCOUNT}"
    events = [e for e in h.iter_audit(audit, offset) if e["user"]["username"] == user]
    assert events, "the audit log recorded no request from the controller"
    denied = [
        (e["verb"], e["requestURI"], e["responseStatus"].get("code"))
        for e in events
        if e["responseStatus"].get("code", 200) in (401, 403)
    ]
    assert denied == [], f"requests RBAC denied: {denied}"
    used = {
        (e["objectRef"].get("apiGroup", ""), e["objectRef"]["resource"], e["verb"])
        for e in events
        if e.get("objectRef")
    }
    print("\nrequests made as", user)
    for group, resource, verb in sorted(used):
        print(f"  {verb:7} {resource}.{group or 'core'}")
    unused, ungranted = sorted(granted(docs) - used), sorted(used - granted(docs))
    assert (unused, ungranted) == ([], []), f"granted but never used: {unused}; used but not granted: {ungranted}"
    # The ConfigMap API: only its own names, and the main ConfigMap is never created; in
    # kube-system, only the client CA's ConfigMap (list and watch: the grant there is used).
    client_ca_reads = {
        e["verb"]
        for e in events
        if (e.get("objectRef") or {}).get("namespace") == "kube-system"
        and "extension-apiserver-authentication" in e["requestURI"]
    }
    assert client_ca_reads == {"list", "watch"}, client_ca_reads
    for e in events:
        ref = e.get("objectRef") or {}
        if ref.get("resource") == "configmaps" and ref.get("namespace") == "kube-system":
            name = ref.get("name") or e["requestURI"].split("metadata.name%3D", 1)[-1].split("&", 1)[0]
            assert name == "extension-apiserver-authentication", e["requestURI"]
        elif ref.get("resource") == "configmaps":
            assert ref.get("namespace") == namespace
            name = ref.get("name") or e["requestURI"].split("metadata.name%3D", 1)[-1].split("&", 1)[0]
            assert name == h.CONFIGMAP or name.startswith(f"{h.CONFIGMAP}-nodes-"), e["requestURI"]
            if e["verb"] == "create":
                assert name != h.CONFIGMAP, "only an administrator creates the main ConfigMap"


def _without(docs: list[JSON], resource: str, verb: str) -> list[JSON]:
    out = []
    for doc in docs:
        doc = dict(doc)
        if "rules" in doc:
            rules = []
            for rule in doc["rules"]:
                if resource in rule["resources"] and verb in rule["verbs"]:
                    rule = {**rule, "verbs": [v for v in rule["verbs"] if v != verb]}
                    if not rule["verbs"]:
                        continue
                rules.append(rule)
            doc["rules"] = rules
        out.append(doc)
    return out


def _published(kube: KubeClient, namespace: str) -> bool:
    return bool((h.configmap_data(kube, namespace) or {}).get("usc-cv-version"))


BROKEN: list[tuple[str, str, str, str]] = [
    # (resource, verb removed, log line that names the failure, behaviour that breaks)
    ("configmaps", "patch", r'cannot patch resource "configmaps"', "publishing the insights"),
    ("configmaps", "watch", r'cannot watch resource "configmaps"', "noticing the opt-in"),
    ("clusterversions", "list", r'cannot list resource "clusterversions"', "computing the insights"),
    (
        "leases",
        "update",
        r'error retrieving or updating lease|cannot update resource "leases"',
        "renewing leadership",
    ),
]


@pytest.mark.parametrize(("resource", "verb", "log_line", "behaviour"), BROKEN, ids=[f"{r}-{v}" for r, v, *_ in BROKEN])
def test_removing_a_rule_breaks_a_named_behaviour(
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    clusterversion_cleanup: None,
    tmp_path: Path,
    resource: str,
    verb: str,
    log_line: str,
    behaviour: str,
) -> None:
    docs = _without(h.render(h.load_manifests(), namespace), resource, verb)
    h.apply(kube, docs)
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, "4.15.8", now - timedelta(days=1))
    h.create_operator(kube, "dns", "4.15.8", now, progressing=True)  # so the update is Progressing
    usc = start_controller(cluster, namespace, tmp_path)
    try:
        if verb != "patch":
            usc.wait_for_log(log_line)
        # The administrator opts in after the controller started, then an update begins.
        h.create_configmap(kube, namespace)
        h.start_update(kube, "4.16.0", now)
        if verb == "patch":
            usc.wait_for_log(log_line)
        if resource == "leases":
            # The Lease is created, but the leader can never renew it: it steps down and exits.
            h.wait_for("the leader to give up", lambda: usc.proc.poll() is not None, timeout=90)
            assert usc.proc.returncode == 1
            assert "leader lost" in usc.log()
        else:
            if verb == "watch":
                # It did see the update (so it synced after the opt-in) but never saw the ConfigMap.
                h.wait_for(
                    "a sync of the started update",
                    lambda: usc.metric(
                        'update_status_controller_insights{assessment="Progressing",type="ClusterVersion"}'
                    ),
                )
            assert usc.proc.poll() is None, "it keeps running and retrying"
            assert not _published(kube, namespace), f"{behaviour} should have failed"
        print(f"\nwithout {verb} on {resource}: {behaviour} fails, as the log says:")
        print("  " + next(line for line in usc.log().splitlines() if _search(log_line, line))[:300])
    finally:
        usc.stop()
        _delete_cluster_objects(kube, namespace)


def _search(pattern: str, line: str) -> bool:
    import re

    return re.search(pattern, line) is not None


def _delete_cluster_objects(kube: KubeClient, namespace: str) -> None:
    from cvo_py.runtime.kube import MACHINECONFIGPOOLS, MACHINECONFIGS, NODES, ApiError

    kube.request("DELETE", NODES.path(), query={"labelSelector": f"{TEST_LABEL}={namespace}"})
    for res, name in (
        (MACHINECONFIGPOOLS, f"pool-{namespace}"),
        (MACHINECONFIGS, f"rendered-worker-{namespace}"),
    ):
        try:
            kube.delete(res, name)
        except ApiError as exc:
            if not exc.is_not_found():
                raise
    h.delete(kube, h.outside(h.render(h.load_manifests(), namespace), namespace))
