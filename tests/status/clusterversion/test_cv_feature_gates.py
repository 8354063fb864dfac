"""The feature gates `start` reads from the cluster's FeatureGate, on the real API server: the entry
of the running version only, and none when there is no FeatureGate or no such API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cvo_py.kube import CRDS, FEATUREGATES, ApiError, KubeClient
from cvo_py.testing import localcluster
from cvo_py.testing.cluster import LocalCluster
from cvo_py.testing.wait import wait_until
from status.clusterversion.controller import read_feature_gates

CRD = Path(__file__).resolve().parents[2] / "crds" / "featuregate.yaml"


@pytest.fixture
def featuregate_api(cluster: LocalCluster, kube: KubeClient) -> Iterator[None]:
    localcluster.apply_crd(cluster.handle, CRD)
    yield
    kube.delete(CRDS, "featuregates.config.openshift.io")
    wait_until(lambda: _gone(kube), what="the FeatureGate API removed")


def _gone(kube: KubeClient) -> bool:
    try:
        kube.get(CRDS, "featuregates.config.openshift.io")
    except ApiError as exc:
        return exc.is_not_found()
    return False


def test_the_gates_of_the_running_version(kube: KubeClient, featuregate_api: None) -> None:
    assert read_feature_gates(kube, "4.14.1") == frozenset()  # the API, but no FeatureGate
    created = kube.create(
        FEATUREGATES, {"metadata": {"name": "cluster"}, "spec": {"featureSet": "TechPreviewNoUpgrade"}}
    )
    created["status"] = {
        "featureGates": [
            {"version": "4.14.0", "enabled": [{"name": "Old"}], "disabled": []},
            {
                "version": "4.14.1",
                "enabled": [{"name": "ClusterUpdateAcceptRisks"}, {"name": "ImageStreamImportMode"}],
                "disabled": [{"name": "Other"}],
            },
        ]
    }
    kube.replace_status(FEATUREGATES, created)
    assert read_feature_gates(kube, "4.14.1") == {"ClusterUpdateAcceptRisks", "ImageStreamImportMode"}
    assert read_feature_gates(kube, "4.15.0") == frozenset()


def test_no_featuregate_api_means_no_gates(kube: KubeClient) -> None:
    assert _gone(kube)
    assert read_feature_gates(kube, "4.14.1") == frozenset()
