"""The pod-template rules, on a Deployment: containers and their fields, volumes, the pod's fields,
what is only added to, what is not reconciled, and the server's defaults that need no write."""

from __future__ import annotations

from typing import Any

import pytest

from cvo_py.runtime.jsondata import copy_json
from syncworker.merge import merge
from testkit.objects.manifests import field_at

JSON = dict[str, Any]


def deployment(spec: JSON, labels: dict[str, str] | None = None) -> JSON:
    template: JSON = {"metadata": {"labels": labels or {"app": "a"}}, "spec": spec}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}}, "template": template},
    }


def container(**fields: Any) -> JSON:
    return {"name": "c", "image": "i", **fields}


def pod(*containers: JSON, **fields: Any) -> JSON:
    return {"containers": list(containers) or [container()], **fields}


SERVER_CONTAINER = {
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
    "imagePullPolicy": "IfNotPresent",
    "resources": {},
}
SERVER_POD = {
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "securityContext": {},
    "schedulerName": "default-scheduler",
}


def served(*containers: JSON, **fields: Any) -> JSON:
    """A pod spec as the server returns it: the server's defaults added."""
    return {**SERVER_POD, "containers": [{**SERVER_CONTAINER, **c} for c in containers or (container(),)], **fields}


def template_spec(obj: JSON) -> JSON:
    spec: JSON = obj["spec"]["template"]["spec"]
    return spec


# (id, live pod spec, manifest pod spec, changed, the merged pod spec's expected fields)
ROWS: list[tuple[str, JSON, JSON, bool, dict[str, Any]]] = [
    ("server defaults need no write", served(), pod(), False, {}),
    (
        "image enforced when set",
        served(container(image="old")),
        pod(container(image="new")),
        True,
        {"containers.0.image": "new"},
    ),
    (
        "command and args replaced, even by empty",
        served(container(command=["a"], args=["b"])),
        pod(container(args=[])),
        True,
        {"containers.0.command": None, "containers.0.args": None},
    ),
    (
        "env replaced wholesale, fieldRef apiVersion v1 and divisor 0 as the server fills them",
        served(
            container(
                env=[
                    {"name": "P", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                    {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}}},
                ]
            )
        ),
        pod(
            container(
                env=[
                    {"name": "P", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                ]
            )
        ),
        False,
        {},
    ),
    (
        "an env var added live is removed",
        served(container(env=[{"name": "A", "value": "1"}, {"name": "DEBUG", "value": "1"}])),
        pod(container(env=[{"name": "A", "value": "1"}])),
        True,
        {"containers.0.env": [{"name": "A", "value": "1"}]},
    ),
    (
        "workingDir only when set",
        served(container(workingDir="/w")),
        pod(container()),
        False,
        {"containers.0.workingDir": "/w"},
    ),
    (
        "resources compared by value",
        served(container(resources={"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}})),
        pod(container(resources={"requests": {"cpu": "0.1", "memory": "1024Mi"}, "limits": {"memory": "2048Mi"}})),
        False,
        {},
    ),
    (
        "resources enforced",
        served(container(resources={"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}})),
        pod(container(resources={"requests": {"cpu": "200m"}})),
        True,
        {"containers.0.resources": {"requests": {"cpu": "200m"}}},
    ),
    (
        "ports by name with protocol TCP; a live extra removed",
        served(
            container(
                ports=[
                    {"name": "m", "containerPort": 80, "protocol": "TCP"},
                    {"name": "x", "containerPort": 1, "protocol": "TCP"},
                ]
            )
        ),
        pod(container(ports=[{"name": "m", "containerPort": 80}])),
        True,
        {"containers.0.ports": [{"name": "m", "containerPort": 80, "protocol": "TCP"}]},
    ),
    (
        "hostPort is the containerPort under hostNetwork (a Pod's default, so absent live needs no write)",
        served(container(ports=[{"name": "m", "containerPort": 80, "protocol": "TCP"}]), hostNetwork=True),
        pod(container(ports=[{"name": "m", "containerPort": 80}]), hostNetwork=True),
        False,
        {},
    ),
    (
        "another hostPort under hostNetwork is enforced",
        served(
            container(ports=[{"name": "m", "containerPort": 80, "protocol": "TCP", "hostPort": 81}]), hostNetwork=True
        ),
        pod(container(ports=[{"name": "m", "containerPort": 80}]), hostNetwork=True),
        True,
        {"containers.0.ports": [{"name": "m", "containerPort": 80, "protocol": "TCP", "hostPort": 80}]},
    ),
    (
        "volume mounts by mount path; a live extra removed",
        served(container(volumeMounts=[{"name": "v", "mountPath": "/v"}, {"name": "w", "mountPath": "/w"}])),
        pod(container(volumeMounts=[{"name": "v", "mountPath": "/v", "readOnly": False}])),
        True,
        {"containers.0.volumeMounts": [{"name": "v", "mountPath": "/v"}]},
    ),
    (
        "probes with the server's defaults need no write",
        served(
            container(
                livenessProbe={
                    "httpGet": {"path": "/", "port": 80, "scheme": "HTTP"},
                    "timeoutSeconds": 1,
                    "periodSeconds": 10,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                readinessProbe={
                    "grpc": {"port": 9, "service": ""},
                    "timeoutSeconds": 1,
                    "periodSeconds": 10,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
            )
        ),
        pod(container(livenessProbe={"httpGet": {"port": 80}}, readinessProbe={"grpc": {"port": 9}})),
        False,
        {},
    ),
    (
        "a probe absent from the manifest is removed; startupProbe is not reconciled",
        served(container(livenessProbe={"tcpSocket": {"port": 1}}, startupProbe={"tcpSocket": {"port": 1}})),
        pod(container()),
        True,
        {"containers.0.livenessProbe": None, "containers.0.startupProbe": {"tcpSocket": {"port": 1}}},
    ),
    (
        "a container securityContext is cleared when the manifest has none",
        served(container(securityContext={"privileged": True})),
        pod(container()),
        True,
        {"containers.0.securityContext": None},
    ),
    (
        "capabilities only added; privileged and allowPrivilegeEscalation enforced; runAsGroup kept",
        served(
            container(
                securityContext={
                    "capabilities": {"add": ["NET_ADMIN"], "drop": ["KILL"]},
                    "privileged": True,
                    "runAsGroup": 5,
                }
            )
        ),
        pod(container(securityContext={"capabilities": {"drop": ["ALL"]}, "allowPrivilegeEscalation": False})),
        True,
        {
            "containers.0.securityContext": {
                "capabilities": {"add": ["NET_ADMIN"], "drop": ["KILL", "ALL"]},
                "runAsGroup": 5,
                "allowPrivilegeEscalation": False,
            }
        },
    ),
    (
        "SELinux options enforced only where the manifest sets them",
        served(container(securityContext={"seLinuxOptions": {"type": "spc_t", "level": "s0"}})),
        pod(container(securityContext={"seLinuxOptions": {"type": "container_t"}})),
        True,
        {"containers.0.securityContext.seLinuxOptions": {"type": "container_t", "level": "s0"}},
    ),
    (
        "a live-only container is removed, a missing one appended",
        served(container(), container(name="sidecar")),
        pod(container(), container(name="new", image="n")),
        True,
        {"containers": [{**SERVER_CONTAINER, **container()}, {"name": "new", "image": "n"}]},
    ),
    (
        "init containers by the same rules",
        served(initContainers=[{**SERVER_CONTAINER, **container(name="init", image="old")}]),
        pod(initContainers=[container(name="init", image="new")]),
        True,
        {"initContainers.0.image": "new"},
    ),
    (
        "volumes with the server's defaults need no write",
        served(
            volumes=[
                {"name": "e", "emptyDir": {}},
                {"name": "s", "secret": {"secretName": "s", "defaultMode": 420}},
                {"name": "h", "hostPath": {"path": "/h", "type": ""}},
                {"name": "q", "emptyDir": {"sizeLimit": "1Gi"}},
                {
                    "name": "p",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}},
                            {
                                "downwardAPI": {
                                    "items": [
                                        {"path": "n", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}
                                    ]
                                }
                            },
                        ],
                    },
                },
            ]
        ),
        pod(
            volumes=[
                {"name": "e"},
                {"name": "s", "secret": {"secretName": "s"}},
                {"name": "h", "hostPath": {"path": "/h"}},
                {"name": "q", "emptyDir": {"sizeLimit": "1024Mi"}},
                {
                    "name": "p",
                    "projected": {
                        "sources": [
                            {"serviceAccountToken": {"path": "t"}},
                            {"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
                        ]
                    },
                },
            ]
        ),
        False,
        {},
    ),
    (
        "volumes by name: a changed one replaced, a live extra removed",
        served(
            volumes=[{"name": "c", "configMap": {"name": "old", "defaultMode": 420}}, {"name": "x", "emptyDir": {}}]
        ),
        pod(volumes=[{"name": "c", "configMap": {"name": "new"}}]),
        True,
        {"volumes": [{"name": "c", "configMap": {"name": "new", "defaultMode": 420}}]},
    ),
    (
        "restartPolicy, serviceAccountName and priorityClassName only when set",
        served(serviceAccountName="admin", priorityClassName="p"),
        pod(),
        False,
        {"serviceAccountName": "admin", "priorityClassName": "p"},
    ),
    (
        "automountServiceAccountToken, hostNetwork, priority and shareProcessNamespace enforced",
        served(automountServiceAccountToken=False, hostNetwork=True, priority=5, shareProcessNamespace=True),
        pod(),
        True,
        {"automountServiceAccountToken": None, "hostNetwork": None, "priority": None, "shareProcessNamespace": None},
    ),
    (
        "nodeSelector only added to",
        served(nodeSelector={"admin": "x", "role": "old"}),
        pod(nodeSelector={"role": "master"}),
        True,
        {"nodeSelector": {"admin": "x", "role": "master"}},
    ),
    (
        "pod securityContext: supplementalGroups and sysctls only added, runAsUser enforced",
        served(securityContext={"supplementalGroups": [1], "sysctls": [{"name": "a", "value": "1"}], "runAsUser": 0}),
        pod(securityContext={"supplementalGroups": [2], "runAsNonRoot": True}),
        True,
        {
            "securityContext": {
                "supplementalGroups": [1, 2],
                "sysctls": [{"name": "a", "value": "1"}],
                "runAsNonRoot": True,
            }
        },
    ),
    (
        "affinity only when the manifest has one",
        served(affinity={"nodeAffinity": {"x": 1}}),
        pod(),
        False,
        {"affinity": {"nodeAffinity": {"x": 1}}},
    ),
    (
        "affinity replaced when the manifest has one",
        served(affinity={"podAffinity": {}}),
        pod(affinity={"nodeAffinity": {"y": 2}}),
        True,
        {"affinity": {"nodeAffinity": {"y": 2}}},
    ),
    (
        "tolerations appended once; live extras kept",
        served(tolerations=[{"key": "admin", "operator": "Exists"}]),
        pod(
            tolerations=[
                {"key": "m", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "m", "operator": "Exists", "effect": "NoSchedule"},
            ]
        ),
        True,
        {
            "tolerations": [
                {"key": "admin", "operator": "Exists"},
                {"key": "m", "operator": "Exists", "effect": "NoSchedule"},
            ]
        },
    ),
    (
        "dnsPolicy ClusterFirst and terminationGracePeriodSeconds 30 when unset",
        served(dnsPolicy="Default", terminationGracePeriodSeconds=5),
        pod(),
        True,
        {"dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30},
    ),
    (
        "what upstream does not reconcile keeps its live value",
        served(
            container(
                imagePullPolicy="Never",
                lifecycle={"preStop": {"exec": {"command": ["x"]}}},
                terminationMessagePolicy="FallbackToLogsOnError",
            ),
            imagePullSecrets=[{"name": "p"}],
            schedulerName="other",
            hostPID=True,
            hostIPC=True,
            topologySpreadConstraints=[{"maxSkew": 1}],
            runtimeClassName="kata",
            dnsConfig={"options": [{"name": "ndots", "value": "2"}]},
        ),
        pod(container(imagePullPolicy="Always")),
        False,
        {"schedulerName": "other", "containers.0.imagePullPolicy": "Never", "hostPID": True},
    ),
]


@pytest.mark.parametrize(("what", "live", "required", "changed", "fields"), ROWS, ids=[r[0] for r in ROWS])
def test_pod_template_rules(what: str, live: JSON, required: JSON, changed: bool, fields: dict[str, Any]) -> None:
    result = merge(deployment(required), deployment(live))
    assert result.changed is changed, result.changes
    for path, value in fields.items():
        assert field_at(template_spec(result.merged), path) == value, path


def test_template_labels_are_added_and_never_removed() -> None:
    live = deployment(served(), labels={"app": "a", "pod-template-hash": "abc"})
    result = merge(deployment(pod(), labels={"app": "a", "tier": "t"}), live)
    assert result.merged["spec"]["template"]["metadata"]["labels"] == {
        "app": "a",
        "pod-template-hash": "abc",
        "tier": "t",
    }


def test_merging_leaves_the_live_object_unchanged() -> None:
    live = deployment(served(container(image="old")))
    before = copy_json(live)
    merge(deployment(pod(container(image="new"))), live)
    assert live == before
