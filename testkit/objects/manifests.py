"""Release manifests of every kind the sync worker merges by type, plus generic ones, shaped as a
payload's are (annotations, RBAC, pod templates with probes, volumes and security contexts),
each as the plain dict the loader gives: for merge tables, property tests and the API server.

    typed_manifests(namespace, suffix) -> dict[str, JSON]   one per typed kind, keyed by kind
    custom_resource(namespace, name) -> JSON                 a PrometheusRule (generic rule)
    secret(namespace, name) -> JSON                          a Secret without `type` (generic rule;
                                                             the server defaults `type`)
    field_at(obj, "spec.ports.0.name") -> Any                a field by dotted path (list items by
                                                             index), None when any step is absent

`suffix` makes cluster-scoped names unique to a test.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]

RELEASE_ANNOTATIONS = {
    "include.release.openshift.io/self-managed-high-availability": "true",
    "include.release.openshift.io/single-node-developer": "true",
}
APP = {"app": "merge-test"}


def _meta(name: str, namespace: str | None = None, **labels: str) -> JSON:
    out: JSON = {"name": name, "annotations": dict(RELEASE_ANNOTATIONS)}
    if namespace is not None:
        out["namespace"] = namespace
    if labels:
        out["labels"] = dict(labels)
    return out


def pod_template(*, host_network: bool = False) -> JSON:
    """A template as operators ship them: probes, env from fields, volumes of several sources."""
    container: JSON = {
        "name": "operator",
        "image": "quay.io/openshift/example@sha256:" + "a" * 64,
        "command": ["operator"],
        "args": ["--v=2", "--config=/etc/config/config.yaml"],
        "env": [
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "CPU_LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
            {"name": "RELEASE_VERSION", "value": "4.99.0"},
        ],
        "ports": [{"name": "metrics", "containerPort": 8443}],
        "resources": {"requests": {"cpu": "0.01", "memory": "50Mi"}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8443, "scheme": "HTTPS"}},
        "readinessProbe": {"tcpSocket": {"port": 8443}, "initialDelaySeconds": 5},
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/config"},
            {"name": "serving-cert", "mountPath": "/etc/secrets", "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    spec: JSON = {
        "serviceAccountName": "operator",
        "priorityClassName": "system-cluster-critical",
        "nodeSelector": {"node-role.kubernetes.io/master": ""},
        "tolerations": [
            {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 120,
            },
        ],
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container],
        "volumes": [
            {"name": "config", "configMap": {"name": "operator-config"}},
            {"name": "serving-cert", "secret": {"secretName": "serving-cert", "optional": True}},
            {"name": "tmp"},
            {"name": "sizes", "emptyDir": {"sizeLimit": "1024Mi"}},
            {
                "name": "token",
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"path": "token"}},
                        {"downwardAPI": {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}},
                    ]
                },
            },
        ],
    }
    if host_network:
        spec["hostNetwork"] = True
        spec["volumes"].append({"name": "host", "hostPath": {"path": "/etc/kubernetes"}})
        container["volumeMounts"].append({"name": "host", "mountPath": "/etc/kubernetes", "readOnly": True})
    return {
        "metadata": {"labels": dict(APP), "annotations": {"target.workload.openshift.io/management": "x"}},
        "spec": spec,
    }


def typed_manifests(namespace: str, suffix: str) -> dict[str, JSON]:
    """One manifest of each typed kind: namespaced ones in `namespace`, cluster-scoped ones named
    with `suffix`."""
    job_template = pod_template()
    job_template["spec"]["restartPolicy"] = "Never"
    job_template["spec"]["containers"][0].pop("livenessProbe")
    job_template["spec"]["containers"][0].pop("readinessProbe")
    group = f"merge-{suffix}.example.com"
    return {
        "ConfigMap": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta("operator-config", namespace),
            "data": {"config.yaml": "apiVersion: v1\nkind: Config\n", "mode": "strict"},
        },
        "ServiceAccount": {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta("operator", namespace),
            "automountServiceAccountToken": False,
        },
        "Namespace": {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": _meta(f"merge-ns-{suffix}", None, **{"openshift.io/cluster-monitoring": "true"}),
        },
        "Service": {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta("metrics", namespace),
            "spec": {
                "selector": dict(APP),
                "ports": [{"name": "https", "port": 9099, "targetPort": "metrics"}, {"name": "plain", "port": 8080}],
            },
        },
        "Deployment": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": _meta("operator", namespace, **APP),
            "spec": {"selector": {"matchLabels": dict(APP)}, "template": pod_template()},
        },
        "DaemonSet": {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": _meta("node-agent", namespace, **APP),
            "spec": {"selector": {"matchLabels": dict(APP)}, "template": pod_template(host_network=True)},
        },
        "Job": {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": _meta("migrate", namespace),
            "spec": {"activeDeadlineSeconds": 600, "template": job_template},
        },
        "CronJob": {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": _meta("prune", namespace),
            "spec": {"schedule": "0 */6 * * *", "jobTemplate": {"spec": {"template": job_template}}},
        },
        "ClusterRole": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": _meta(f"merge-reader-{suffix}"),
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
        },
        "ClusterRoleBinding": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(f"merge-reader-{suffix}"),
            "roleRef": {"kind": "ClusterRole", "name": f"merge-reader-{suffix}"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "operator", "namespace": namespace},
                {"kind": "Group", "name": "system:authenticated"},
            ],
        },
        "Role": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _meta("leader", namespace),
            "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "update"]}],
        },
        "RoleBinding": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _meta("leader", namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "leader"},
            "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": namespace}],
        },
        "CustomResourceDefinition": {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": _meta(f"widgets.{group}"),
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "subresources": {"status": {}},
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {
                                        "type": "object",
                                        "properties": {
                                            "size": {"type": "integer", "minimum": 0, "default": 1},
                                            "flavor": {"type": "string", "enum": ["plain", "fancy"]},
                                        },
                                    },
                                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                },
                            }
                        },
                    }
                ],
            },
        },
        "ValidatingWebhookConfiguration": {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": _meta(f"merge-{suffix}"),
            "webhooks": [
                {
                    "name": f"widgets.{group}",
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                    "clientConfig": {"service": {"namespace": namespace, "name": "webhook", "path": "/validate"}},
                    "rules": [
                        {
                            "apiGroups": [group],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE", "UPDATE"],
                            "resources": ["widgets"],
                        }
                    ],
                }
            ],
        },
        "ImageStream": {
            "apiVersion": "image.openshift.io/v1",
            "kind": "ImageStream",
            "metadata": _meta("tools", namespace),
            "spec": {
                "tags": [
                    {
                        "name": "latest",
                        "from": {"kind": "DockerImage", "name": "quay.io/openshift/tools@sha256:" + "b" * 64},
                    }
                ]
            },
        },
        "OperatorGroup": {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": _meta("operators", namespace),
            "spec": {"targetNamespaces": [namespace]},
        },
        "SecurityContextConstraints": {
            "apiVersion": "security.openshift.io/v1",
            "kind": "SecurityContextConstraints",
            "metadata": _meta(f"merge-restricted-{suffix}"),
            "priority": None,
            "allowHostDirVolumePlugin": False,
            "allowHostIPC": False,
            "allowHostNetwork": False,
            "allowHostPID": False,
            "allowHostPorts": False,
            "allowPrivilegedContainer": False,
            "readOnlyRootFilesystem": False,
            "requiredDropCapabilities": ["KILL", "MKNOD", "SETUID", "SETGID"],
            "runAsUser": {"type": "MustRunAsRange"},
            "seLinuxContext": {"type": "MustRunAs"},
            "fsGroup": {"type": "MustRunAs"},
            "supplementalGroups": {"type": "RunAsAny"},
            "volumes": ["configMap", "downwardAPI", "emptyDir", "projected", "secret"],
            "users": [],
            "groups": ["system:authenticated"],
        },
    }


def custom_resource(namespace: str, name: str) -> JSON:
    """A PrometheusRule: a custom resource, merged by the generic rule."""
    rule = {"alert": "WidgetsDown", "expr": 'up{job="widgets"} == 0', "for": "10m", "labels": {"severity": "warning"}}
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": _meta(name, namespace),
        "spec": {"groups": [{"name": "widgets", "rules": [rule]}]},
    }


def secret(namespace: str, name: str) -> JSON:
    """A Secret without `type`: the server stores `type: Opaque`, which the generic rule sees as a
    difference on every pass."""
    return {"apiVersion": "v1", "kind": "Secret", "metadata": _meta(name, namespace), "stringData": {"key": "value"}}


def field_at(value: Any, path: str) -> Any:
    """The field at a dotted path ("spec.template.spec.containers.0.image"), None when absent."""
    for part in path.split("."):
        if isinstance(value, list):
            value = value[int(part)] if part.isdigit() and int(part) < len(value) else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
        if value is None:
            return None
    return value
