"""The typed merges, kind by kind, as the facts' table gives them: what the manifest enforces (with
its default), what keeps its live value, and that a live object holding the manifest plus the
server's defaults needs no write. Each row is (existing, required) → (changed, merged fields)."""

from __future__ import annotations

from typing import Any

import pytest

from syncworker.merge import Action, is_typed, merge, plan
from syncworker.merge.values import ApplyProblem
from testkit.objects.manifests import field_at

JSON = dict[str, Any]


def obj(api_version: str, kind: str, namespaced: bool = True, **fields: Any) -> JSON:
    metadata: JSON = {"name": "x", "namespace": "ns"} if namespaced else {"name": "x"}
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}


# -- rows: (id, existing, required, changed, {path: value in merged}) --------------------------------------

CM = ("v1", "ConfigMap")
SA = ("v1", "ServiceAccount")
NS = ("v1", "Namespace")
SVC = ("v1", "Service")
CRB = ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")
CR = ("rbac.authorization.k8s.io/v1", "ClusterRole")
IS = ("image.openshift.io/v1", "ImageStream")
OG = ("operators.coreos.com/v1", "OperatorGroup")
SCC = ("security.openshift.io/v1", "SecurityContextConstraints")
CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
VWC = ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")


def image(name: str) -> JSON:
    return {"kind": "DockerImage", "name": name}


LIVE_TAG = {
    "name": "latest",
    "from": image("old"),
    "importPolicy": {"importMode": "Legacy"},
    "referencePolicy": {"type": "Source"},
    "generation": 2,
}
ADMIN_TAG = {"name": "admin", "from": image("mine")}
NEW_TAG = {"name": "extra", "from": image("e")}
SERVER_PORT = {"name": "https", "protocol": "TCP", "port": 443, "targetPort": 443}

ROWS: list[tuple[str, JSON, JSON, bool, dict[str, Any]]] = [
    (
        "ConfigMap: data set key by key, live-only keys kept",
        obj(*CM, data={"a": "old", "extra": "x"}, binaryData={"b": "AA=="}),
        obj(*CM, data={"a": "new"}, binaryData={"c": "AQ=="}),
        True,
        {"data": {"a": "new", "extra": "x"}, "binaryData": {"b": "AA==", "c": "AQ=="}},
    ),
    ("ConfigMap: live holding the manifest", obj(*CM, data={"a": "1", "z": "2"}), obj(*CM, data={"a": "1"}), False, {}),
    (
        "ServiceAccount: an absent automountServiceAccountToken clears it",
        obj(*SA, automountServiceAccountToken=False),
        obj(*SA),
        True,
        {"automountServiceAccountToken": None},
    ),
    (
        "ServiceAccount: secrets and imagePullSecrets kept",
        obj(*SA, automountServiceAccountToken=False, secrets=[{"name": "t"}], imagePullSecrets=[{"name": "p"}]),
        obj(*SA, automountServiceAccountToken=False),
        False,
        {},
    ),
    (
        "Namespace: metadata only, spec.finalizers kept",
        obj(*NS, False, spec={"finalizers": ["kubernetes"]}, status={"phase": "Active"}),
        obj(*NS, False, spec={"finalizers": []}),
        False,
        {"spec.finalizers": ["kubernetes"]},
    ),
    (
        "Service: ports by name (TCP, targetPort = port), live-only ports removed",
        obj(
            *SVC,
            spec={
                "type": "ClusterIP",
                "ports": [SERVER_PORT, {"name": "old", "protocol": "TCP", "port": 1, "targetPort": 1}],
            },
        ),
        obj(*SVC, spec={"ports": [{"name": "https", "port": 8443}, {"name": "new", "port": 9000, "protocol": "UDP"}]}),
        True,
        {
            "spec.ports": [
                {"name": "https", "port": 8443, "protocol": "TCP", "targetPort": 8443},
                {"name": "new", "port": 9000, "protocol": "UDP", "targetPort": 9000},
            ]
        },
    ),
    (
        "Service: server defaults and live-only fields need no write",
        obj(
            *SVC,
            spec={
                "ports": [SERVER_PORT],
                "selector": {"app": "a"},
                "clusterIP": "10.0.0.1",
                "clusterIPs": ["10.0.0.1"],
                "type": "ClusterIP",
                "sessionAffinity": "None",
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "internalTrafficPolicy": "Cluster",
            },
        ),
        obj(*SVC, spec={"ports": [{"name": "https", "port": 443}], "selector": {"app": "a"}}),
        False,
        {},
    ),
    (
        "Service: type ClusterIP when unset; selector replaced",
        obj(*SVC, spec={"type": "NodePort", "ports": [SERVER_PORT], "selector": {"app": "a", "tier": "b"}}),
        obj(*SVC, spec={"ports": [{"name": "https", "port": 443}], "selector": {"app": "a"}}),
        True,
        {"spec.type": "ClusterIP", "spec.selector": {"app": "a"}},
    ),
    (
        "ClusterRole: rules enforced",
        obj(*CR, False, rules=[{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]),
        obj(*CR, False, rules=[{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
        True,
        {"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]},
    ),
    (
        "ClusterRole: aggregated rules kept when the manifest aggregates",
        obj(
            *CR,
            False,
            aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]},
            rules=[{"verbs": ["get"]}],
        ),
        obj(*CR, False, aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}),
        False,
        {"rules": [{"verbs": ["get"]}]},
    ),
    (
        "ClusterRoleBinding: roleRef and User/Group subjects with the rbac group by default",
        obj(
            *CRB,
            False,
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
            subjects=[{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "g"}],
        ),
        obj(*CRB, False, roleRef={"kind": "ClusterRole", "name": "r"}, subjects=[{"kind": "Group", "name": "g"}]),
        False,
        {},
    ),
    (
        "ClusterRoleBinding: subjects enforced",
        obj(
            *CRB,
            False,
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
            subjects=[{"kind": "User", "name": "u"}],
        ),
        obj(
            *CRB,
            False,
            roleRef={"kind": "ClusterRole", "name": "r"},
            subjects=[{"kind": "ServiceAccount", "name": "s", "namespace": "n"}],
        ),
        True,
        {"subjects": [{"kind": "ServiceAccount", "name": "s", "namespace": "n"}]},
    ),
    (
        "ImageStream: tags by name: new appended, existing get from and importPolicy, the rest kept",
        obj(*IS, spec={"lookupPolicy": {"local": False}, "tags": [LIVE_TAG, ADMIN_TAG]}),
        obj(*IS, spec={"tags": [{"name": "latest", "from": image("new")}, NEW_TAG]}),
        True,
        {"spec.tags": [{**LIVE_TAG, "from": image("new")}, ADMIN_TAG, NEW_TAG]},
    ),
    (
        "ImageStream: lookupPolicy enforced",
        obj(*IS, spec={"lookupPolicy": {"local": True}}),
        obj(*IS, spec={}),
        True,
        {"spec.lookupPolicy": None},
    ),
    (
        "OperatorGroup: upgradeStrategy Default and targetNamespaces",
        obj(*OG, spec={"targetNamespaces": ["a"], "upgradeStrategy": {"name": "Default"}}),
        obj(*OG, spec={"targetNamespaces": ["a"]}),
        False,
        {},
    ),
    (
        "OperatorGroup: selector enforced, serviceAccountName only when set",
        obj(
            *OG,
            spec={
                "selector": {"matchLabels": {"a": "b"}},
                "serviceAccountName": "sa",
                "upgradeStrategy": {"name": "Default"},
            },
        ),
        obj(*OG, spec={"targetNamespaces": ["a"]}),
        True,
        {"spec.selector": None, "spec.serviceAccountName": "sa", "spec.targetNamespaces": ["a"]},
    ),
    (
        "SCC: allowPrivilegeEscalation true when unset, booleans false when unset",
        obj(*SCC, False, allowPrivilegeEscalation=True, allowHostNetwork=False, users=[]),
        obj(*SCC, False),
        False,
        {},
    ),
    (
        "SCC: privileges enforced, priority cleared",
        obj(*SCC, False, priority=10, allowHostNetwork=True, allowPrivilegeEscalation=True, groups=["g"]),
        obj(*SCC, False, allowPrivilegeEscalation=False, volumes=["secret"]),
        True,
        {
            "priority": None,
            "allowHostNetwork": None,
            "allowPrivilegeEscalation": False,
            "groups": None,
            "volumes": ["secret"],
        },
    ),
]

CRD_SPEC = {
    "group": "example.com",
    "scope": "Namespaced",
    "names": {"kind": "Widget", "plural": "widgets"},
    "versions": [{"name": "v1", "served": True, "storage": True}],
}
SERVER_CRD_SPEC = {
    "group": "example.com",
    "scope": "Namespaced",
    "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
    "versions": [{"name": "v1", "served": True, "storage": True}],
    "conversion": {"strategy": "None"},
}
WEBHOOK_SPEC = {
    "group": "example.com",
    "conversion": {
        "strategy": "Webhook",
        "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"service": {"namespace": "n", "name": "s"}}},
    },
}
SERVED_WEBHOOK_SPEC = {
    **WEBHOOK_SPEC,
    "conversion": {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"caBundle": "Q0E=", "service": {"namespace": "n", "name": "s", "port": 443}},
        },
    },
}
INJECT = {"service.beta.openshift.io/inject-cabundle": "true"}

ROWS += [
    (
        "CRD: singular, listKind and conversion defaults need no write; status kept",
        obj(*CRD, False, spec=SERVER_CRD_SPEC, status={"conditions": [{"type": "Established", "status": "True"}]}),
        obj(*CRD, False, spec=CRD_SPEC),
        False,
        {},
    ),
    (
        "CRD: the whole spec is the manifest's",
        obj(*CRD, False, spec={**SERVER_CRD_SPEC, "names": {**SERVER_CRD_SPEC["names"], "shortNames": ["w"]}}),
        obj(*CRD, False, spec=CRD_SPEC),
        True,
        {"spec.names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"}},
    ),
    (
        "CRD: the conversion caBundle kept from live when it is injected",
        obj(
            *CRD,
            False,
            metadata={"name": "x", "annotations": INJECT},
            spec=SERVED_WEBHOOK_SPEC,
        ),
        obj(*CRD, False, metadata={"name": "x", "annotations": INJECT}, spec=WEBHOOK_SPEC),
        False,
        {},
    ),
    (
        "CRD: without the annotation the caBundle is the manifest's (none)",
        obj(
            *CRD,
            False,
            spec=SERVED_WEBHOOK_SPEC,
        ),
        obj(*CRD, False, spec=WEBHOOK_SPEC),
        True,
        {"spec.conversion.webhook.clientConfig.caBundle": None},
    ),
]

WEBHOOK = {
    "name": "w.example.com",
    "sideEffects": "None",
    "admissionReviewVersions": ["v1"],
    "clientConfig": {"service": {"namespace": "n", "name": "s"}},
    "rules": [
        {"apiGroups": ["example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["widgets"]}
    ],
}
SERVER_WEBHOOK = {
    **WEBHOOK,
    "clientConfig": {"service": {"namespace": "n", "name": "s", "port": 443}, "caBundle": "Q0E="},
    "rules": [{**WEBHOOK["rules"][0], "scope": "*"}],  # type: ignore[index]
    "failurePolicy": "Fail",
    "matchPolicy": "Equivalent",
    "namespaceSelector": {},
    "objectSelector": {},
    "timeoutSeconds": 10,
}

ROWS += [
    (
        "ValidatingWebhookConfiguration: defaults and the injected caBundle need no write",
        obj(*VWC, False, metadata={"name": "x", "annotations": INJECT}, webhooks=[SERVER_WEBHOOK]),
        obj(
            *VWC,
            False,
            metadata={"name": "x", "annotations": INJECT},
            webhooks=[WEBHOOK, {**WEBHOOK, "name": "v.example.com"}],
        ),
        True,
        {"webhooks.1.clientConfig.caBundle": "Q0E=", "webhooks.1.timeoutSeconds": 10},
    ),
    (
        "ValidatingWebhookConfiguration: the whole list is the manifest's",
        obj(*VWC, False, webhooks=[{**SERVER_WEBHOOK, "timeoutSeconds": 30}]),
        obj(*VWC, False, webhooks=[WEBHOOK]),
        True,
        {"webhooks.0.timeoutSeconds": 10, "webhooks.0.clientConfig.caBundle": None},
    ),
]


# -- workloads ------------------------------------------------------------------------------------------

TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
SERVER_TEMPLATE = {
    "metadata": {"labels": {"app": "a"}, "creationTimestamp": None},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "i",
                "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "Always",
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "schedulerName": "default-scheduler",
    },
}
SELECTOR = {"matchLabels": {"app": "a"}}


def deployment(**spec: Any) -> JSON:
    return obj("apps/v1", "Deployment", spec={"selector": SELECTOR, "template": TEMPLATE, **spec})


def server_deployment(**spec: Any) -> JSON:
    return obj(
        "apps/v1",
        "Deployment",
        spec={
            "replicas": 1,
            "selector": SELECTOR,
            "template": SERVER_TEMPLATE,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            **spec,
        },
        status={"replicas": 1, "conditions": [{"type": "Available", "status": "True"}]},
    )


WORKLOAD_ROWS: list[tuple[str, JSON, JSON, bool, dict[str, Any]]] = [
    ("Deployment: server defaults need no write", server_deployment(), deployment(), False, {}),
    (
        "Deployment: replicas 1 when unset, so scaling is reverted",
        server_deployment(replicas=3),
        deployment(),
        True,
        {"spec.replicas": 1},
    ),
    (
        "Deployment: replicas as the manifest says",
        server_deployment(),
        deployment(replicas=2),
        True,
        {"spec.replicas": 2},
    ),
    (
        "Deployment: revisionHistoryLimit and progressDeadlineSeconds only when set",
        server_deployment(revisionHistoryLimit=3, progressDeadlineSeconds=100),
        deployment(progressDeadlineSeconds=200),
        True,
        {"spec.revisionHistoryLimit": 3, "spec.progressDeadlineSeconds": 200},
    ),
    (
        "Deployment: paused and minReadySeconds cleared when unset",
        server_deployment(paused=True, minReadySeconds=5),
        deployment(),
        True,
        {"spec.paused": None, "spec.minReadySeconds": None},
    ),
    (
        "Deployment: strategy Recreate replaces RollingUpdate",
        server_deployment(),
        deployment(strategy={"type": "Recreate"}),
        True,
        {"spec.strategy": {"type": "Recreate"}},
    ),
    (
        "Deployment: a partial rolling update gets the other default",
        server_deployment(
            strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}}
        ),
        deployment(strategy={"rollingUpdate": {"maxUnavailable": 1}}),
        False,
        {},
    ),
    (
        "Deployment: selector enforced",
        server_deployment(selector={"matchLabels": {"app": "b"}}),
        deployment(),
        True,
        {"spec.selector": SELECTOR},
    ),
    (
        "DaemonSet: updateStrategy and minReadySeconds kept",
        obj(
            "apps/v1",
            "DaemonSet",
            spec={
                "selector": SELECTOR,
                "template": SERVER_TEMPLATE,
                "updateStrategy": {"type": "OnDelete"},
                "minReadySeconds": 9,
                "revisionHistoryLimit": 10,
            },
        ),
        obj(
            "apps/v1",
            "DaemonSet",
            spec={"selector": SELECTOR, "template": TEMPLATE, "updateStrategy": {"type": "RollingUpdate"}},
        ),
        False,
        {},
    ),
]

JOB_TEMPLATE = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}
UID_LABELS = {
    "batch.kubernetes.io/controller-uid": "u",
    "controller-uid": "u",
    "job-name": "j",
    "batch.kubernetes.io/job-name": "j",
}
SERVER_JOB_TEMPLATE = {
    "metadata": {"labels": UID_LABELS},
    "spec": {**SERVER_TEMPLATE["spec"], "restartPolicy": "Never"},  # type: ignore[dict-item]
}


def server_job(**spec: Any) -> JSON:
    return obj(
        "batch/v1",
        "Job",
        spec={
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 6,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
            "manualSelector": False,
            "template": SERVER_JOB_TEMPLATE,
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
            **spec,
        },
    )


def job(**spec: Any) -> JSON:
    return obj("batch/v1", "Job", spec={"template": JOB_TEMPLATE, **spec})


WORKLOAD_ROWS += [
    ("Job: the server's selector, labels and defaults need no write", server_job(), job(), False, {}),
    ("Job: backoffLimit 6 when unset", server_job(backoffLimit=2), job(), True, {"spec.backoffLimit": 6}),
    (
        "Job: suspend false and completionMode NonIndexed when unset",
        server_job(suspend=True, completionMode="Indexed"),
        job(),
        True,
        {"spec.suspend": None, "spec.completionMode": "NonIndexed"},
    ),
    (
        "Job: activeDeadlineSeconds and ttlSecondsAfterFinished enforced",
        server_job(activeDeadlineSeconds=5),
        job(ttlSecondsAfterFinished=60),
        True,
        {"spec.activeDeadlineSeconds": None, "spec.ttlSecondsAfterFinished": 60},
    ),
    (
        "Job: parallelism set, completions unset",
        server_job(parallelism=3, completions=None),
        job(parallelism=3),
        False,
        {},
    ),
    (
        "CronJob: schedule, defaults and the job template",
        obj(
            "batch/v1",
            "CronJob",
            spec={
                "schedule": "* * * * *",
                "concurrencyPolicy": "Allow",
                "suspend": False,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "jobTemplate": {"metadata": {}, "spec": {"template": SERVER_JOB_TEMPLATE}},
            },
        ),
        obj("batch/v1", "CronJob", spec={"schedule": "* * * * *", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}}),
        False,
        {},
    ),
    (
        "CronJob: history limits and concurrency as the manifest says",
        obj(
            "batch/v1",
            "CronJob",
            spec={
                "schedule": "* * * * *",
                "concurrencyPolicy": "Forbid",
                "successfulJobsHistoryLimit": 9,
                "jobTemplate": {"spec": {"template": SERVER_JOB_TEMPLATE}},
            },
        ),
        obj(
            "batch/v1",
            "CronJob",
            spec={"schedule": "0 * * * *", "jobTemplate": {"spec": {"backoffLimit": 1, "template": JOB_TEMPLATE}}},
        ),
        True,
        {
            "spec.schedule": "0 * * * *",
            "spec.concurrencyPolicy": "Allow",
            "spec.successfulJobsHistoryLimit": 3,
            "spec.failedJobsHistoryLimit": None,  # absent on both sides: the default, left as it is
            "spec.jobTemplate.spec.backoffLimit": 1,
        },
    ),
]


@pytest.mark.parametrize(
    ("what", "existing", "required", "changed", "fields"),
    ROWS + WORKLOAD_ROWS,
    ids=[r[0] for r in ROWS + WORKLOAD_ROWS],
)
def test_each_typed_kind_merges_as_upstream(
    what: str, existing: JSON, required: JSON, changed: bool, fields: dict[str, Any]
) -> None:
    result = merge(required, existing)
    assert result.changed is changed, result.changes
    for path, value in fields.items():
        assert field_at(result.merged, path) == value, path
    if not changed:
        assert result.merged is existing, "nothing to write: the live object itself"


def test_a_job_manifest_with_a_selector_fails_its_task_with_one_line() -> None:
    with pytest.raises(ApplyProblem, match=r"^spec\.selector: a Job manifest may not set a selector"):
        merge(job(selector=SELECTOR), server_job())


def test_a_manifest_field_of_the_wrong_type_fails_its_task_with_one_line() -> None:
    broken = deployment(template={"spec": {"containers": {"name": "c"}}})
    with pytest.raises(ApplyProblem, match=r"^spec\.template\.spec\.containers: expected an array, found object$"):
        merge(broken, server_deployment())


def test_the_changes_name_the_fields_that_differed() -> None:
    result = merge(deployment(replicas=2), server_deployment(replicas=3, selector={"matchLabels": {"x": "y"}}))
    assert result.changes == ("spec.replicas", "spec.selector")


# -- dispatch and the plan ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api_version", "kind", "typed"),
    [
        ("apps/v1", "Deployment", True),
        ("apps/v1beta1", "Deployment", False),  # another version is generic
        ("v1", "Secret", False),
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", False),
        ("security.openshift.io/v1", "SecurityContextConstraints", True),
        ("batch/v1", "CronJob", True),
    ],
)
def test_kinds_are_typed_by_exact_group_version_and_kind(api_version: str, kind: str, typed: bool) -> None:
    assert is_typed(api_version, kind) is typed


def test_an_absent_object_is_created_as_the_manifest() -> None:
    required = deployment()
    step = plan(required, None)
    assert step.action is Action.CREATE and step.body is required


def test_a_create_only_object_that_exists_is_left_alone_and_not_checked() -> None:
    required = obj(
        *CM,
        metadata={"name": "x", "namespace": "ns", "annotations": {"release.openshift.io/create-only": "true"}},
        data={"a": "1"},
    )
    live = obj(*CM, data={"a": "admin"})
    step = plan(required, live)
    assert (step.action, step.check_health, step.why) == (Action.NONE, False, "create-only")


def test_an_unchanged_object_is_not_written_but_checked() -> None:
    step = plan(deployment(), server_deployment())
    assert (step.action, step.check_health, step.why) == (Action.NONE, True, "unchanged")


def test_a_changed_object_is_written_whole() -> None:
    step = plan(deployment(), server_deployment(replicas=4))
    assert step.action is Action.UPDATE and step.body["spec"]["replicas"] == 1
    assert step.body["status"] == server_deployment()["status"]
    assert step.changes == ("spec.replicas",)


def test_a_generic_manifest_without_a_name_is_refused_as_upstream() -> None:
    with pytest.raises(ApplyProblem, match="^invalid object: name cannot be empty$"):
        plan({"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": "ns"}}, None)
