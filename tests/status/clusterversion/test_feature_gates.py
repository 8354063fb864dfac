"""The feature gates `start` reads from the cluster's FeatureGate, on the real API server: the entry
of the running version only, and none when there is no FeatureGate or no such API."""

from __future__ import annotations

from cvo_py.runtime.kube import FEATUREGATES, KubeClient
from cvo_py.testing.clusterversion import featuregate_api_exists
from status.clusterversion.controller import read_feature_gates


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
    assert not featuregate_api_exists(kube)
    assert read_feature_gates(kube, "4.14.1") == frozenset()
