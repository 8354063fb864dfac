"""syncworker.applier without a server: upstream's typed kinds are reached at their REST paths, the
task of a manifest is named as upstream names it, and an API refusal becomes upstream's reason."""

from __future__ import annotations

import json
import logging
from typing import cast

import pytest

from cvo_py.runtime import klog
from cvo_py.runtime.kube import ApiError, KubeClient
from syncworker import merge
from syncworker.applier import TYPED_RESOURCES, Applier, Discovery, api_error, task_ref, user_agent
from syncworker.errors import TaskRef
from syncworker.load import Payload

TASK = TaskRef("ConfigMap", "ns", "c", 3, 19)


def test_every_typed_merge_has_its_rest_path_and_nothing_else_does() -> None:
    assert set(TYPED_RESOURCES) == set(merge.TYPED)
    for (api_version, kind), resource in TYPED_RESOURCES.items():
        assert (resource.api_version, resource.kind) == (api_version, kind)
        assert resource.plural == resource.plural.lower() and resource.plural.endswith("s")


def test_the_task_of_a_manifest(section8: Payload) -> None:
    deployment = next(m for m in section8.manifests if m.kind == "Deployment")
    assert str(task_ref(deployment)) == 'deployment "test-b/workload" (10 of 19)'


def test_an_api_refusal_keeps_its_status_reason_and_a_body_that_is_not_a_status_is_the_server_down() -> None:
    status = {"kind": "Status", "reason": "Invalid", "message": 'ConfigMap "c" is invalid', "code": 422}
    refused = api_error(TASK, ApiError(422, json.dumps(status), "PUT", "/api/v1/namespaces/ns/configmaps/c"))
    assert (refused.reason, refused.message, refused.detail) == (
        "UpdatePayloadResourceInvalid",
        'Could not update configmap "ns/c" (3 of 19): the object is invalid, possibly due to local cluster '
        "configuration",
        'ConfigMap "c" is invalid',
    )
    proxied = api_error(TASK, ApiError(500, "<html>bad gateway</html>", "GET", "/api/v1/namespaces/ns/configmaps/c"))
    assert proxied.reason == "UpdatePayloadClusterDown"
    assert proxied.retry


def test_the_user_agent_is_upstreams() -> None:
    assert user_agent("4.99.0") == "cluster-version-operator/4.99.0"


class _NotAnObject:
    """What a proxy or an aggregated API in the way can answer a create with: a 201 whose body is
    text, which the client hands on as a string (the local API server never does)."""

    def create(self, resource: object, body: object) -> str:
        return "created"

    def replace_status(self, resource: object, body: object) -> None:
        raise AssertionError("no status is written for an answer that is not an object")


def test_a_precreation_answered_with_text_is_only_logged(
    section8: Payload, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream only logs a precreation that fails: so does cvo-py, whatever the failure, in one line."""
    operator = next(m for m in section8.manifests if m.kind == "ClusterOperator")
    applier = Applier(cast(KubeClient, _NotAnObject()), discovery=cast(Discovery, object()))
    monkeypatch.setattr(klog, "_verbosity", klog.NORMAL)  # -v=2, as start runs
    with caplog.at_level(logging.INFO, logger="klog"):
        applier.precreate(operator, "uid")  # raises nothing
    (line,) = [r.getMessage() for r in caplog.records if "precreate" in r.getMessage()]
    assert line.startswith(f"Unable to precreate resource {task_ref(operator)}: "), line
    assert "\n" not in line
