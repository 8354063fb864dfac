"""install/'s monitoring manifests apply cleanly to the real API server with tests/crds/'s
ServiceMonitor and PrometheusRule CRDs, which reject what the Prometheus Operator's would."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from cvo_py.runtime.kube import ApiError, KubeClient
from testkit.harness import cluster as local
from testkit.harness import manifests

MONITORING_KINDS = {"Service", "ServiceMonitor", "PrometheusRule", "Role", "RoleBinding", "ClusterRoleBinding"}


def test_every_monitoring_manifest_applies(kube: KubeClient) -> None:
    docs = [d for d in manifests.load("0000_*") if d["kind"] in MONITORING_KINDS]
    kinds = {d["kind"] for d in docs}
    assert {"ServiceMonitor", "PrometheusRule", "Service"} <= kinds
    for namespace in {d["metadata"]["namespace"] for d in docs if "namespace" in d["metadata"]}:
        local.ensure_namespace(kube, namespace)
    manifests.apply(kube, docs)
    manifests.apply(kube, docs)  # again: replaced in place
    for doc in docs:
        meta = doc["metadata"]
        got = kube.get(manifests.resource_of(doc), meta["name"], meta.get("namespace"))
        assert got.get("spec", got.get("rules", got.get("roleRef"))) is not None
    manifests.delete(kube, manifests.cluster_scoped(docs))


@pytest.mark.parametrize(
    "kind,mutate,message",
    [
        ("ServiceMonitor", lambda d: d["spec"]["endpoints"][0].update(scheme="ftp"), "Unsupported value"),
        ("ServiceMonitor", lambda d: d["spec"].update(serviceDiscoveryRole="Pods"), "Unsupported value"),
        ("ServiceMonitor", lambda d: d["spec"].pop("selector"), "spec.selector: Required value"),
        ("PrometheusRule", lambda d: d["spec"]["groups"][0]["rules"][0].pop("expr"), "expr: Required value"),
        ("PrometheusRule", lambda d: d["spec"]["groups"][0]["rules"][0].update({"for": "10 minutes"}), "should match"),
    ],
)
def test_the_crds_reject_invalid_objects(
    kube: KubeClient, namespace: str, kind: str, mutate: Callable[[Any], object], message: str
) -> None:
    doc = copy.deepcopy(next(d for d in manifests.load("0000_90_cluster-version-operator_*") if d["kind"] == kind))
    doc["metadata"]["namespace"] = namespace
    mutate(doc)
    with pytest.raises(ApiError) as exc:
        kube.create(manifests.resource_of(doc), doc, namespace)
    assert exc.value.status == 422
    assert message in str(exc.value)
