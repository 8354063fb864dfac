"""Feature-gated capabilities on the real API server: on a TechPreview or DevPreview cluster (the
ClusterVersion CRD's enum lists ClusterAPI and CompatibilityRequirements behind their gates, and the
FeatureGate enables them), `start`'s status loop writes both as known and, by default (vCurrent),
enabled, as upstream's CVO does."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from cvo_py.compose.start import ClusterVersionSide, build_caches, build_clusterversion
from cvo_py.runtime.kube import CLUSTERVERSIONS, KubeClient, connect
from payload.release import Release
from status.clusterversion.capabilities import GATED
from status.clusterversion.controller import ClusterVersionOptions
from testkit.harness import localcluster
from testkit.harness.cluster import CLUSTERVERSION_CRDS, LocalCluster
from testkit.harness.clusterversion import condition, create_cv, nothing_to_apply, status_414, status_rejected
from testkit.harness.wait import wait_until

pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")

IMG_4230 = "quay.io/openshift-release-dev/ocp-release@sha256:" + "7" * 64
# What TechPreviewNoUpgrade and DevPreviewNoUpgrade enable on 4.23+ releases.
PREVIEW_GATES = frozenset({"ClusterAPIMachineManagement", "CRDCompatibilityRequirementOperator", "Other"})


def install_preview_crd(cluster: LocalCluster, crds: Any, tmp_path: Path) -> None:
    """The ClusterVersion CRD as the preview feature sets render it: the capability enums add the
    gated names (openshift/api's FeatureGateAwareEnum)."""
    body = yaml.safe_load(CLUSTERVERSION_CRDS["current"].read_text())
    for version in body["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]["properties"]
        lists = [schema["spec"]["properties"]["capabilities"]["properties"]["additionalEnabledCapabilities"],
                 *schema["status"]["properties"]["capabilities"]["properties"].values()]
        for listed in lists:
            listed["items"]["enum"] += list(GATED)
    path = tmp_path / "clusterversion-preview.yaml"
    path.write_text(yaml.safe_dump(body))
    localcluster.apply_crd(cluster.handle, path)
    crds.swapped = True  # the fixture puts the test CRD back


def test_a_preview_cluster_knows_and_enables_the_gated_capabilities(
    cluster: LocalCluster, kube: KubeClient, crds: Any, tmp_path: Path, operators: list[ClusterVersionSide]
) -> None:
    install_preview_crd(cluster, crds, tmp_path)
    create_cv(kube, {"clusterID": str(uuid.uuid4())}, status_414())
    wait_until(lambda: not status_rejected(kube, ["ClusterAPI", "CompatibilityRequirements"]),
               what="the preview enum in effect")
    client = connect(cluster.kubeconfig, user_agent="cvo-py/gated-capabilities")
    settings = ClusterVersionOptions(release=Release(version="4.23.0", image=IMG_4230), feature_gates=PREVIEW_GATES)
    caches = build_caches(client, "version")
    worker = nothing_to_apply(client, settings.release, caches)
    operators.append(build_clusterversion(client, caches, settings, syncworker=worker).start())

    def capabilities() -> dict[str, Any]:
        return dict((kube.get(CLUSTERVERSIONS, "version").get("status") or {}).get("capabilities") or {})

    wait_until(lambda: "ClusterAPI" in (capabilities().get("knownCapabilities") or []),
               what="the gated capabilities written")
    written = capabilities()
    assert {"ClusterAPI", "CompatibilityRequirements"} <= set(written["knownCapabilities"])
    assert {"ClusterAPI", "CompatibilityRequirements"} <= set(written["enabledCapabilities"])
    assert written["enabledCapabilities"] == sorted(written["enabledCapabilities"])  # byte-wise, as upstream
    cv = kube.get(CLUSTERVERSIONS, "version")
    assert condition(cv, "CapabilitiesPruned") is None  # the CRD took every name
    implicit = condition(cv, "ImplicitlyEnabledCapabilities") or {}
    assert (implicit.get("status"), implicit.get("reason")) == ("False", "AsExpected")
