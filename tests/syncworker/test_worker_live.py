"""The sync worker on the local API server, applying the facts' synthetic payload (§8) as the CVO's
ServiceAccount, every assertion read from the API server's audit log: an install sends each
object a GET and then its create (never a PATCH), precreates the ClusterOperator and never GETs
it, requests nothing it excludes; a reconcile pass writes nothing, and puts back what an admin
edited; an update runs level after level, waits for the ClusterOperator's version, deletes what
the release removes once. A manifest the API server refuses fails its task and its level, named
in the pass's failure as upstream names it, and the worker goes on."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cvo_py.runtime.kube import CLUSTEROPERATORS, CONFIGMAPS, ApiError, KubeClient, Resource
from syncworker.applier import TYPED_RESOURCES
from syncworker.graph import task_graph
from syncworker.load import Payload, load_payload
from syncworker.manifest import Manifest
from syncworker.modes import Mode
from syncworker.passes import Report, Work
from syncworker.select import Selection
from testkit.harness.cluster import LocalCluster
from testkit.harness.clusterversion import put_co
from testkit.harness.syncworker import CVO_USER, Audit, Request, Running, exists
from testkit.harness.wait import wait_until
from testkit.objects.payloads import INCLUDE, NAMESPACE, RELEASE_IMAGE, write_payload

CONFIG = TYPED_RESOURCES[("v1", "ConfigMap")]
DEPLOYMENTS = TYPED_RESOURCES[("apps/v1", "Deployment")]
WIDGETS = Resource("example.com/v1", "Widget", "widgets", True)
POLICIES = Resource(
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", False
)
BINDINGS = Resource(
    "admissionregistration.k8s.io/v1",
    "ValidatingAdmissionPolicyBinding",
    "validatingadmissionpolicybindings",
    False,
)
UNMANAGED = Selection(
    overrides=({"kind": "ConfigMap", "group": "", "namespace": NAMESPACE, "name": "overridden", "unmanaged": True},)
)
# What the Default cluster without gates or capabilities never has applied: excluded at load
# (feature set, profile, both annotations, the template that does not render, the subdirectory),
# skipped at apply (capability, override).
NEVER_REQUESTED = {"tp", "no-profile", "both", "bad", "in-a-subdirectory", "capability", "overridden"}


KNOWN_PLURALS = {"ClusterOperator": "clusteroperators", "Widget": "widgets", "Gadget": "gadgets"}


def plural(manifest: Manifest) -> str:
    typed = TYPED_RESOURCES.get((str(manifest.obj.get("apiVersion")), manifest.kind))
    return typed.plural if typed is not None else KNOWN_PLURALS[manifest.kind]


def task_of(payload: Payload) -> Callable[[Request], int]:
    """The task number of the manifest a request is about (0: none of the payload's)."""
    by_object = {(plural(m), m.namespace, m.name): m.task for m in payload.manifests}
    return lambda r: by_object.get((r.resource, r.namespace, r.name), 0)


def about(requests: Sequence[Request], resource: str, name: str) -> list[tuple[str, str, int]]:
    """(verb, subresource, code) of the requests about one object, in order."""
    return [(r.verb, r.subresource, r.code) for r in requests if (r.resource, r.name) == (resource, name)]


def between(requests: Sequence[Request], start: datetime, end: datetime) -> list[Request]:
    return [r for r in requests if start < r.received <= end]


def install(running: Running, kube: KubeClient, payload: Payload, owner: str, selection: Selection) -> Report:
    """The install of `payload`, with the test playing f-op: it reports Available, not Degraded,
    at the payload's version as soon as the worker precreated it."""
    running.worker.update(Work(payload, selection, 1, owner), Mode.INITIALIZING)
    wait_until(lambda: exists(kube, CLUSTEROPERATORS, "f-op"), what="f-op precreated")
    put_co(kube, "f-op", payload.release.version)
    return running.reports.wait_end(lambda r: r.completed, "the install to complete")


pytestmark = pytest.mark.usefixtures("section8_cleared")


def test_an_install_sends_each_object_a_get_then_a_create_and_nothing_it_excludes(
    cluster: LocalCluster, kube: KubeClient, section8: Payload, owner: str, workers: Callable[..., Running]
) -> None:
    audit = Audit(cluster.state["auditLog"])
    running = workers(interval=30.0)
    done = install(running, kube, section8, owner, UNMANAGED)
    assert (done.mode, done.total, done.done) == (Mode.INITIALIZING, 19, 17), "the skipped ones are never done"
    requests = between(audit.requests(kube), datetime.min.replace(tzinfo=UTC), done.at)

    assert {(r.user, r.user_agent.split("/")[0]) for r in requests} == {(CVO_USER, "cluster-version-operator")}
    assert not [r for r in requests if r.verb == "patch"], "never a PATCH"
    assert not [r for r in requests if r.resource == "configmaps" and r.name in NEVER_REQUESTED]
    assert not about(requests, "configmaps", "deleted"), "an install sends nothing for the delete annotation"
    created = [
        ("configmaps", n) for n in ("render", "plain", "createonly", "gate-negated", "hosted-excluded", "json")
    ] + [
        ("deployments", "workload"),
        ("serviceaccounts", "workload"),
        ("clusterroles", "test-workload"),
        ("clusterrolebindings", "test-workload"),
        ("jobs", "migrate"),
        ("customresourcedefinitions", "widgets.example.com"),
        ("widgets", "widget"),
    ]
    for resource, name in created:
        seen = about(requests, resource, name)
        assert seen[0] == ("get", "", 404), (resource, name, seen)
        # (a create may find its namespace not there yet: installing, the levels run at once)
        assert [s for s in seen if s[0] != "get" and s[2] != 404] == [("create", "", 201)], (resource, name, seen)
    crd_created = next(
        r.completed for r in requests if r.resource == "customresourcedefinitions" and r.verb == "create"
    )
    assert all(r.received > crd_created for r in requests if r.resource == "widgets" and r.code == 201)
    f_op = about(requests, "clusteroperators", "f-op")
    assert f_op[:2] == [("create", "", 201), ("update", "status", 200)], f_op
    assert set(f_op[2:]) <= {("create", "", 409)}, "then only the precreation's conflicts"
    assert not [r for r in requests if r.resource == "clusteroperators" and r.verb == "get"]

    plain = kube.get(CONFIG, "plain", NAMESPACE)
    assert plain["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterVersion",
            "name": "version",
            "uid": owner,
            "controller": True,
        }
    ]
    assert "controller" not in kube.get(CONFIG, "createonly", NAMESPACE)["metadata"]["ownerReferences"][0]


def test_a_reconcile_pass_writes_nothing_and_puts_back_what_an_admin_edited(
    cluster: LocalCluster, kube: KubeClient, section8: Payload, owner: str, workers: Callable[..., Running]
) -> None:
    running = workers(interval=1.5)
    installed = install(running, kube, section8, owner, UNMANAGED)
    audit = Audit(cluster.state["auditLog"])
    quiet = running.reports.wait_end(
        lambda r: r.reconciling and r.completed and r.at > installed.at, "a reconcile pass"
    )
    requests = between(audit.requests(kube), installed.at, quiet.at)
    assert [r for r in requests if r.verb == "get"], "the pass looked at the objects"
    writes = [(r.verb, r.resource, r.name, r.code) for r in requests if r.is_write]
    assert set(writes) <= {("create", "clusteroperators", "f-op", 409)}, writes

    plain = kube.get(CONFIG, "plain", NAMESPACE)
    plain["data"].update(key="edited", extra="admin")
    kube.replace(CONFIG, plain)
    createonly = kube.get(CONFIG, "createonly", NAMESPACE)
    createonly["data"]["key"] = "mine"
    kube.replace(CONFIG, createonly)
    workload = kube.get(DEPLOYMENTS, "workload", NAMESPACE)
    workload["spec"]["replicas"] = 3
    kube.replace(DEPLOYMENTS, workload)
    widget = kube.get(WIDGETS, "widget", NAMESPACE)
    widget["metadata"].setdefault("labels", {})["admin"] = "added"
    kube.replace(WIDGETS, widget)
    edited = datetime.now(UTC)
    audit = Audit(cluster.state["auditLog"])

    wait_until(
        lambda: (
            kube.get(CONFIG, "plain", NAMESPACE)["data"]["key"] == "value"
            and kube.get(DEPLOYMENTS, "workload", NAMESPACE)["spec"]["replicas"] == 1
        ),
        what="the edits put back",
    )
    restored = datetime.now(UTC)
    after = running.reports.wait_end(lambda r: r.completed and r.at > restored, "a pass after that")
    assert kube.get(CONFIG, "plain", NAMESPACE)["data"] == {"key": "value", "extra": "admin"}, "a live-only key stays"
    assert kube.get(DEPLOYMENTS, "workload", NAMESPACE)["spec"]["replicas"] == 1
    assert kube.get(CONFIG, "createonly", NAMESPACE)["data"]["key"] == "mine", "a create-only object is never updated"
    assert kube.get(WIDGETS, "widget", NAMESPACE)["metadata"]["labels"] == {"admin": "added"}, (
        "the generic rule writes a label only with a change it compares"
    )
    requests = between(audit.requests(kube), edited, after.at)
    writes = {(r.verb, r.resource, r.name) for r in requests if r.is_write and r.succeeded}
    assert writes == {("update", "configmaps", "plain"), ("update", "deployments", "workload")}
    assert {r.verb for r in requests if r.name == "createonly"} == {"get"}


def test_an_update_runs_level_after_level_waits_for_its_operator_and_deletes_once(
    cluster: LocalCluster,
    kube: KubeClient,
    section8: Payload,
    section8_target: Payload,
    owner: str,
    workers: Callable[..., Running],
) -> None:
    running = workers(interval=20.0)
    install(running, kube, section8, owner, UNMANAGED)
    kube.create(CONFIG, {"metadata": {"name": "deleted", "namespace": NAMESPACE}, "data": {"left": "by 4.98"}})
    audit = Audit(cluster.state["auditLog"])
    began = datetime.now(UTC)
    running.worker.update(Work(section8_target, UNMANAGED, 2, owner), Mode.UPDATING)

    waiting = running.reports.wait_end(
        lambda r: (
            r.release.version == "4.99.1" and r.failure is not None and r.failure.reason == "ClusterOperatorUpdating"
        ),
        "the update waiting on f-op",
    )
    assert waiting.mode is Mode.UPDATING
    assert waiting.failure is not None
    assert waiting.failure.message == "Cluster operator f-op is updating versions"
    assert (waiting.done, waiting.total) == (14, 20), "everything before f-op's level"
    reported = datetime.now(UTC)
    put_co(kube, "f-op", "4.99.1")
    done = running.reports.wait_end(lambda r: r.release.version == "4.99.1" and r.completed, "the update")
    requests = audit.requests(kube)

    # Each pass: no write of a node starts before every request of the nodes before it finished.
    ends = [began] + [r.at for r in running.reports.ends() if r.release.version == "4.99.1" and r.at <= done.at]
    task = task_of(section8_target)
    graph = task_graph(section8_target.manifests, Mode.UPDATING)
    ancestors = _ancestor_tasks(graph.nodes)
    passes = [between(requests, start, end) for start, end in zip(ends, ends[1:], strict=False)]
    assert len(passes) >= 2
    compared = 0
    for in_pass in passes:
        for index, node in enumerate(graph.nodes):
            writes = [r.received for r in in_pass if task(r) in node.tasks and r.is_write]
            before = [r.completed for r in in_pass if task(r) in ancestors[index]]
            if writes and before:
                assert min(writes) >= max(before), f"a write of node {index} began before its predecessors ended"
                compared += 1
    assert compared >= 3, "the writes of the update's levels were compared with the levels before them"
    gadgets = [r for r in passes[0] if r.name == "gadgets.example.com"]
    assert [r.verb for r in gadgets][:2] == ["get", "create"], "the new CRD"
    assert len([r for r in gadgets if r.verb == "get"]) >= 2, "then its Established check"

    after_operator = [r for r in requests if r.name in ("widget", "deleted", "json")]
    assert after_operator and all(r.received > reported for r in after_operator), "nothing after f-op until it reports"
    assert done.at > reported
    deleted = about(requests, "configmaps", "deleted")
    assert [s for s in deleted if s[0] == "delete"] == [("delete", "", 200)], deleted
    assert deleted[0] == ("get", "", 200)
    assert not exists(kube, CONFIG, "deleted", NAMESPACE)
    assert kube.get(CONFIG, "plain", NAMESPACE)["data"]["next"] == "4.99.1"
    assert not [r for r in requests if r.resource == "configmaps" and r.name in NEVER_REQUESTED]
    assert not [r for r in requests if r.resource == "clusteroperators" and r.verb == "get"]


def _ancestor_tasks(nodes: Sequence[Any]) -> list[set[int]]:
    """For each node, the tasks of every node it waits for, directly or through spacers."""
    out: list[set[int]] = []
    for node in nodes:
        tasks: set[int] = set()
        for before in node.after:
            tasks.update(nodes[before].tasks)
            tasks.update(out[before])
        out.append(tasks)
    return out


# -- manifests the API server refuses ------------------------------------------------------------------


def _meta(name: str, namespace: str) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "annotations": dict(INCLUDE)}


def refused_payload(root: Path, first: dict[str, Any], namespace: str) -> Payload:
    """Level 10: the manifest under test; level 20: a ConfigMap that must wait for it."""
    after = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("after", namespace), "data": {"k": "v"}}
    files = {
        "0000_10_a-first_00_first.yaml": _json(first),
        "0000_20_b-next_00_after.yaml": _json(after),
    }
    write_payload(root, "4.99.0", {}, files)
    return load_payload(str(root), release_image=RELEASE_IMAGE, selection=Selection())


def _json(obj: dict[str, Any]) -> str:
    return json.dumps(obj)


@pytest.fixture
def refusing_policy(kube: KubeClient, namespace: str) -> Iterator[None]:
    """A ValidatingAdmissionPolicy refusing, in `namespace` only, any ConfigMap named `refused`."""
    name = f"cvo-py-tests-{uuid.uuid4().hex[:8]}"
    kube.create(
        POLICIES,
        {
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE", "UPDATE"],
                            "resources": ["configmaps"],
                        }
                    ]
                },
                "validations": [
                    {
                        "expression": "object.metadata.name != 'refused'",
                        "message": "refused by the test's policy",
                        "reason": "Forbidden",
                    }
                ],
            },
        },
    )
    kube.create(
        BINDINGS,
        {
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
                "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}},
            },
        },
    )

    def enforced() -> bool:
        body = {"metadata": {"name": "refused", "namespace": namespace}}
        try:
            kube.request("POST", CONFIGMAPS.path(namespace), query={"dryRun": "All"}, body=body)
        except ApiError as exc:
            return exc.status == 403
        return False

    try:
        wait_until(enforced, what="the policy to be enforced")
        yield
    finally:
        for resource in (BINDINGS, POLICIES):
            kube.delete(resource, name)


def _replica_failure(kube: KubeClient, namespace: str) -> dict[str, Any]:
    """A Deployment an earlier release left, whose controller reports a replica failure."""
    body = {
        "metadata": {"name": "rollout", "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"app": "rollout"}},
            "template": {
                "metadata": {"labels": {"app": "rollout"}},
                "spec": {"containers": [{"name": "main", "image": "registry.local/rollout:1"}]},
            },
        },
    }
    created = kube.create(DEPLOYMENTS, body, namespace)
    created["status"] = {
        "conditions": [
            {
                "type": "ReplicaFailure",
                "status": "True",
                "reason": "FailedCreate",
                "message": 'pods "rollout-1" is forbidden: exceeded quota',
            }
        ]
    }
    kube.replace_status(DEPLOYMENTS, created)
    return {**body, "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("rollout", namespace)}


REFUSALS: dict[str, tuple[Callable[[KubeClient, str], dict[str, Any]], str, str]] = {
    "an invalid object (422)": (
        lambda kube, ns: {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta("bad", ns),
            "data": {"not a key!": "x"},
        },
        "UpdatePayloadResourceInvalid",
        'Could not update configmap "{ns}/bad" (1 of 2): the object is invalid, possibly due to local cluster '
        "configuration",
    ),
    "a kind the server does not serve": (
        lambda kube, ns: {"apiVersion": "nothing.example.com/v1", "kind": "Nothing", "metadata": _meta("bad", ns)},
        "UpdatePayloadResourceTypeMissing",
        'Could not update nothing "{ns}/bad" (1 of 2): the server does not recognize this resource, check extension '
        "API servers",
    ),
    "a refusal by admission": (
        lambda kube, ns: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("refused", ns), "data": {}},
        "UpdatePayloadResourceForbidden",
        'Could not update configmap "{ns}/refused" (1 of 2): the server has forbidden updates to this resource',
    ),
    "a Deployment with a replica failure": (
        _replica_failure,
        "WorkloadNotProgressing",
        'deployment {ns}/rollout has a replica failure FailedCreate: pods "rollout-1" is forbidden: exceeded quota',
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_refused_manifest_fails_its_task_and_its_level_and_the_worker_goes_on(
    case: str,
    request: pytest.FixtureRequest,
    cluster: LocalCluster,
    kube: KubeClient,
    namespace: str,
    owner: str,
    workers: Callable[..., Running],
    tmp_path: Path,
) -> None:
    if case == "a refusal by admission":
        request.getfixturevalue("refusing_policy")
    make, reason, message = REFUSALS[case]
    payload = refused_payload(tmp_path / "payload", make(kube, namespace), namespace)
    audit = Audit(cluster.state["auditLog"])
    running = workers(interval=4.0)  # a pass may last 8 s: more than a failing task's tries
    running.worker.update(Work(payload, Selection(), 1, owner), Mode.UPDATING)
    first = running.reports.wait_end(lambda r: r.attempt == 0, "the first pass")
    second = running.reports.wait_end(lambda r: r.attempt == 1, "the pass after it: the worker goes on")
    for failed in (first, second):
        assert failed.failure is not None and not failed.completed
        assert (failed.failure.reason, failed.failure.message) == (reason, message.format(ns=namespace))
        assert failed.done == 0
    assert not [r for r in audit.requests(kube) if r.name == "after"], "the next level is never requested"
