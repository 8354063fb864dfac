"""ClusterOperator manifests against their live objects, check by check in upstream's order, with
its messages and effects per mode; the status write after precreation; and metadata while
reconciling."""

from __future__ import annotations

from typing import Any

import pytest

from syncworker.errors import Effect, TaskRef
from syncworker.modes import Mode
from syncworker.operators import activity, check, precreated_status, reconcile_metadata

JSON = dict[str, Any]
TASK = TaskRef("ClusterOperator", "", "dns", 12, 19)
VERSIONS = [{"name": "operator", "version": "4.99.1"}, {"name": "coredns", "version": "1.11"}]


def manifest(versions: list[JSON] | None = None) -> JSON:
    out: JSON = {"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator", "metadata": {"name": "dns"}}
    if versions is not None:
        out["status"] = {
            "versions": versions,
            "relatedObjects": [{"group": "", "resource": "namespaces", "name": "openshift-dns"}],
        }
    return out


def live(available: str | None = "True", degraded: str | None = "False", versions: list[JSON] | None = None) -> JSON:
    conditions = [{"type": "Progressing", "status": "True", "reason": "Rolling"}]
    if available is not None:
        conditions.append({"type": "Available", "status": available, "reason": "AsExpected", "message": "up"})
    if degraded is not None:
        conditions.append({"type": "Degraded", "status": degraded, "reason": "DNSDegraded", "message": "pods crash"})
    return {**manifest(), "status": {"conditions": conditions, "versions": VERSIONS if versions is None else versions}}


OLD = [{"name": "operator", "version": "4.99.0"}, {"name": "coredns", "version": "1.11"}]
ROWS = [
    # (live, mode, reason or None, message, effect, retried)
    (live(), Mode.UPDATING, None, "", None, False),
    (
        live(available="False"),
        Mode.UPDATING,
        "ClusterOperatorNotAvailable",
        "Cluster operator dns is not available",
        Effect.FAIL,
        False,
    ),
    (
        live(available=None),
        Mode.INITIALIZING,
        "ClusterOperatorNotAvailable",
        "Cluster operator dns is not available",
        Effect.FAIL,
        False,
    ),
    (
        live(available="Unknown"),
        Mode.RECONCILING,
        "ClusterOperatorNotAvailable",
        "Cluster operator dns is not available",
        Effect.FAIL,
        False,
    ),
    (
        live(degraded="True"),
        Mode.UPDATING,
        "ClusterOperatorDegraded",
        "Cluster operator dns is degraded",
        Effect.FAIL_AFTER_INTERVAL,
        False,
    ),
    (
        live(degraded="True"),
        Mode.RECONCILING,
        "ClusterOperatorDegraded",
        "Cluster operator dns is degraded",
        Effect.FAIL_AFTER_INTERVAL,
        False,
    ),
    (
        live(degraded=None),
        Mode.INITIALIZING,
        "ClusterOperatorDegraded",
        "Cluster operator dns is degraded",
        Effect.REPORT,
        False,
    ),
    # not available wins over degraded, degraded over versions
    (
        live(available="False", degraded="True", versions=OLD),
        Mode.UPDATING,
        "ClusterOperatorNotAvailable",
        "Cluster operator dns is not available",
        Effect.FAIL,
        False,
    ),
    (
        live(degraded="True", versions=OLD),
        Mode.UPDATING,
        "ClusterOperatorDegraded",
        "Cluster operator dns is degraded",
        Effect.FAIL_AFTER_INTERVAL,
        False,
    ),
    (
        live(versions=OLD),
        Mode.UPDATING,
        "ClusterOperatorUpdating",
        "Cluster operator dns is updating versions",
        Effect.NONE,
        False,
    ),
    (
        live(versions=OLD),
        Mode.RECONCILING,
        "ClusterOperatorUpdating",
        "Cluster operator dns is updating versions",
        Effect.NONE,
        False,
    ),
    (live(versions=OLD), Mode.INITIALIZING, None, "", None, False),  # versions are not checked while installing
    (
        live(versions=VERSIONS[:1]),
        Mode.UPDATING,
        "ClusterOperatorUpdating",
        "Cluster operator dns is updating versions",
        Effect.NONE,
        False,
    ),
    (
        live(versions=[*VERSIONS, {"name": "extra", "version": "9"}]),
        Mode.UPDATING,
        None,
        "",
        None,
        False,
    ),  # live-only versions ignored
    (
        None,
        Mode.UPDATING,
        "UpdatePayloadResourceNotFound",
        'Could not update clusteroperator "dns" (12 of 19): resource may have been deleted',
        Effect.FAIL,
        True,
    ),
]


@pytest.mark.parametrize(("obj", "mode", "reason", "message", "effect", "retried"), ROWS)
def test_cluster_operator_checks_in_upstreams_order(
    obj: JSON | None, mode: Mode, reason: str | None, message: str, effect: Effect | None, retried: bool
) -> None:
    error = check(manifest(VERSIONS), obj, mode, TASK)
    if reason is None:
        assert error is None
        return
    assert error is not None
    assert (error.reason, error.message, error.effect, error.retry) == (reason, message, effect, retried)
    if not retried:
        assert error.names == ("dns",) and error.name == "dns"


def test_a_manifest_without_versions_fails_before_the_operator_is_looked_at() -> None:
    for obj in (None, live()):
        error = check(manifest([]), obj, Mode.UPDATING, TASK)
        assert error is not None
        assert (error.reason, error.message, error.effect) == (
            "ClusterOperatorNoVersions",
            "Cluster operator dns does not declare expected versions",
            Effect.FAIL,
        )


def test_the_detail_names_the_condition_for_the_log() -> None:
    error = check(manifest(VERSIONS), live(degraded="True"), Mode.UPDATING, TASK)
    assert error is not None and error.detail == "cluster operator dns is Degraded=True: DNSDegraded: pods crash"
    missing = check(manifest(VERSIONS), live(available=None), Mode.UPDATING, TASK)
    assert missing is not None and missing.detail == "cluster operator dns: available condition is missing"


def test_the_status_written_after_precreation_holds_only_the_related_objects() -> None:
    created = {**manifest(), "metadata": {"name": "dns", "resourceVersion": "4", "uid": "u"}}
    body = precreated_status(manifest(VERSIONS), created)
    assert body["status"] == {"relatedObjects": [{"group": "", "resource": "namespaces", "name": "openshift-dns"}]}
    assert body["metadata"]["resourceVersion"] == "4"
    assert precreated_status(manifest(), created)["status"] == {}


def test_reconciling_merges_only_metadata() -> None:
    required = {
        **manifest(VERSIONS),
        "metadata": {"name": "dns", "annotations": {"include.release.openshift.io/x": "true"}},
    }
    current = live()
    result = reconcile_metadata(required, current)
    assert result.changed and result.changes == ("metadata.annotations[include.release.openshift.io/x]",)
    assert result.merged["status"] == current["status"], "status is the operator's"
    assert reconcile_metadata(required, result.merged).changed is False


def test_the_changes_that_wake_the_sync_worker_are_the_operator_version_available_and_degraded() -> None:
    before = live(versions=[{"name": "operator", "version": "4.99.0"}, {"name": "coredns", "version": "1.10"}])
    assert activity(before, before) == ""
    assert activity(before, live(versions=[{"name": "operator", "version": "4.99.0"}])) == "", (
        "another version entry wakes nothing"
    )
    assert activity(before, live(versions=VERSIONS)) == (
        'Cluster operator dns changed versions[name="operator"] from "4.99.0" to "4.99.1"'
    )
    unversioned = live(versions=[])
    assert activity(unversioned, live(available="False", versions=[])) == (
        'Cluster operator dns changed Available from "True" to "False"'
    )
    assert activity(unversioned, live(degraded=None, versions=[])) == (
        'Cluster operator dns changed Degraded from "False" to ""'
    )
    progressing = live(versions=[])
    progressing["status"]["conditions"].append({"type": "Progressing", "status": "True"})
    assert activity(unversioned, progressing) == "", "Progressing wakes nothing"
