"""The Grafana dashboard (and its console ConfigMap) queries only metrics cvo-py exports, and the
checked-in files are what hack/gen_dashboard.py generates."""

from __future__ import annotations

import json
import re

import yaml
from prometheus_client import CollectorRegistry

from cvo_py.runtime.clientconfig import ClientConfig
from cvo_py.runtime.kube import KubeClient
from payload.metrics import PayloadMetrics
from payload.release import Release
from status.clusterversion.metrics import StatusCollector, WriteCounts
from status.clusterversion.workermetrics import SyncWorkerCollector
from status.updatestatus.controller.sync import UpdateStatusController
from syncworker.channel import PayloadCounts
from testkit.checkout import REPO
from testkit.demo import dashboard as gen_dashboard

METRIC_TOKEN = re.compile(r"\b(?:cluster_|update_status_controller_)[a-z0-9_]*")
NOW = "2026-11-21T10:00:00Z"


def exported_sample_names() -> set[str]:
    """Every series name the processes expose, from their real collectors with data in them."""
    registry = CollectorRegistry()
    PayloadMetrics(registry)
    cv = {
        "metadata": {"name": "version", "creationTimestamp": NOW},
        "spec": {
            "clusterID": "x",
            "upstream": "https://updates.example",
            "channel": "stable-4.14",
            "desiredUpdate": {"version": "4.14.2", "image": "img@sha256:2"},
        },
        "status": {
            "desired": {"version": "4.14.1", "image": "img@sha256:1"},
            "history": [
                {"state": "Partial", "version": "4.14.2", "image": "img@sha256:2", "startedTime": NOW},
                {
                    "state": "Completed",
                    "version": "4.14.1",
                    "image": "img@sha256:1",
                    "startedTime": NOW,
                    "completionTime": NOW,
                },
            ],
            "conditions": [
                {"type": "Failing", "status": "True", "lastTransitionTime": NOW},
                {"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": NOW},
            ],
            "availableUpdates": [{"version": "4.14.3", "image": "img@sha256:3"}],
            "capabilities": {"enabledCapabilities": ["Console"], "knownCapabilities": ["Console", "Insights"]},
        },
    }
    co = {
        "metadata": {
            "name": "etcd",
            "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"},
        },
        "status": {
            "versions": [{"name": "operator", "version": "4.14.1"}],
            "conditions": [{"type": "Available", "status": "True", "lastTransitionTime": NOW}],
        },
    }
    counts = WriteCounts(
        writes=1,
        rejections={"status.capabilities.enabledCapabilities": 1},
        pruned={"enabledCapabilities": ["MachineAPI"]},
    )
    registry.register(StatusCollector(lambda: (cv, [co], counts), lambda: Release("4.14.1", "img@sha256:1")))
    registry.register(SyncWorkerCollector(lambda: {"4.14.1": PayloadCounts(3, 1)}, lambda: {"4.14.1": 1}))
    UpdateStatusController(KubeClient(ClientConfig(host="https://127.0.0.1:1")), registry=registry)
    names: set[str] = set()
    for family in registry.collect():
        suffixes = {
            "counter": ("_total", "_created"),
            "histogram": ("_bucket", "_sum", "_count", "_created"),
            "summary": ("_sum", "_count", "_created"),
        }.get(family.type, ("",))
        names.update(family.name + suffix for suffix in suffixes)
        names.update(sample.name for sample in family.samples)
    return names


def dashboard_queries() -> list[str]:
    board = json.loads((REPO / "dashboards" / "cvo-py.json").read_text())
    return [target["expr"] for panel in board["panels"] for target in panel.get("targets", [])]


def test_every_query_names_only_exported_metrics() -> None:
    exported = exported_sample_names()
    queries = dashboard_queries()
    assert len(queries) >= 15
    for expr in queries:
        named = set(METRIC_TOKEN.findall(expr))
        assert named, f"query names no cvo-py metric: {expr}"
        unknown = named - exported
        assert not unknown, f"{expr!r} uses metrics cvo-py does not export: {sorted(unknown)}"


def test_the_dashboard_covers_every_required_area() -> None:
    text = " ".join(dashboard_queries())
    for needed in (
        "cluster_version_payload",
        "cluster_version_payload_retrieval_failures_total",
        "cluster_version_status_write_rejections_total",
        "cluster_version_status_pruned_capabilities",
        "update_status_controller_insights",
        "update_status_controller_reaction_seconds_bucket",
    ):
        assert needed in text


def test_checked_in_files_match_the_generator() -> None:
    text, configmap = gen_dashboard.render()
    assert (REPO / "dashboards" / "cvo-py.json").read_text() == text
    assert (REPO / "dashboards" / "cvo-py-console-configmap.yaml").read_text() == configmap
    console = yaml.safe_load(configmap)
    assert console["metadata"]["labels"] == {"console.openshift.io/dashboard": "true"}
    assert json.loads(console["data"]["cvo-py.json"]) == json.loads(text)
