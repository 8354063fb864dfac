"""The feature gates `start` reads from the cluster's FeatureGate, on the real API server: the entry
of the running version only, none when there is no FeatureGate or no such API (which is then not
watched), and the watch that tells once when the feature set or those gates change."""

from __future__ import annotations

from cvo_py.runtime.kube import FEATUREGATES, KubeClient
from status.clusterversion.featuregates import Features
from status.clusterversion.features import FeatureGateWatch, read_features
from testkit.harness.clusterversion import enable_feature_gates, featuregate_api_exists
from testkit.harness.wait import wait_until


def test_the_gates_of_the_running_version(kube: KubeClient, featuregate_api: None) -> None:
    # the API, but no FeatureGate: Default, no gates, and watched (one may be created)
    assert read_features(kube, "4.14.1").features == Features()
    assert read_features(kube, "4.14.1").served
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
    read = read_features(kube, "4.14.1")
    assert read.features == Features(
        "TechPreviewNoUpgrade", frozenset({"ClusterUpdateAcceptRisks", "ImageStreamImportMode"})
    )
    assert read_features(kube, "4.15.0").features == Features("TechPreviewNoUpgrade", frozenset())


def test_no_featuregate_api_means_no_gates_and_nothing_to_watch(kube: KubeClient) -> None:
    assert not featuregate_api_exists(kube)
    read = read_features(kube, "4.14.1")
    assert read.features == Features() and not read.served


def test_the_watch_tells_once_when_the_gates_of_its_version_change(kube: KubeClient, featuregate_api: None) -> None:
    enable_feature_gates(kube, "4.14.1")
    started_with = read_features(kube, "4.14.1").features
    told: list[str] = []
    watch = FeatureGateWatch(kube, "4.14.1", started_with, told.append).start()
    try:
        assert watch.informer.wait_for_sync(10)
        featuregate = kube.get(FEATUREGATES, "cluster")
        # another version's gates change: nothing the process uses
        featuregate["status"]["featureGates"].append({"version": "4.15.0", "enabled": [{"name": "X"}]})
        featuregate = kube.replace_status(FEATUREGATES, featuregate)
        featuregate["status"]["featureGates"][0]["enabled"] = [{"name": "ClusterUpdateAcceptRisks"}]
        featuregate = kube.replace_status(FEATUREGATES, featuregate)
        wait_until(lambda: bool(told), what="the change told")
        assert told == ["enabled ClusterUpdateAcceptRisks"]  # the other version's change was not told
        featuregate["status"]["featureGates"][0]["enabled"] = []
        seen = kube.replace_status(FEATUREGATES, featuregate)["metadata"]["resourceVersion"]
        wait_until(
            lambda: ((watch.informer.get("cluster") or {}).get("metadata") or {}).get("resourceVersion") == seen,
            what="the watch at the last change",
        )
        assert told == ["enabled ClusterUpdateAcceptRisks"]  # told once: the process is ending
    finally:
        watch.stop()
