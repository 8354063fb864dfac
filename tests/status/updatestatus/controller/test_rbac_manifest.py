"""The controller's RBAC Role grants exactly the ConfigMaps the wire format's constants allow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from status.updatestatus.api import configmap

RBAC = (
    Path(__file__).resolve().parents[4]
    / "install"
    / "0000_00_update-status-controller_02_rbac-DevPreviewNoUpgrade.yaml"
)


def configmap_rules() -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(RBAC.read_text(encoding="utf-8")) if d]
    roles = [d for d in docs if d["kind"] == "Role" and d["metadata"]["namespace"] == configmap.NAMESPACE]
    assert len(roles) == 1, f"expected one Role in {configmap.NAMESPACE} in {RBAC.name}"
    return [r for r in roles[0]["rules"] if "configmaps" in r.get("resources", [])]


def test_the_role_names_exactly_the_main_configmap_and_every_possible_shard() -> None:
    named = [r for r in configmap_rules() if r.get("resourceNames")]
    assert len(named) == 1, "one rule names the ConfigMaps of the API"
    assert named[0]["resourceNames"] == configmap.shard_names_allowed()
    assert sorted(named[0]["verbs"]) == ["list", "patch", "watch"]


def test_the_allowed_names_follow_the_constants() -> None:
    names = configmap.shard_names_allowed()
    assert names[0] == configmap.CONFIGMAP
    assert len(names) == 1 + configmap.MAX_SHARDS
    assert names[-1] == f"{configmap.SHARD_PREFIX}{configmap.MAX_SHARDS - 1}"
    # the planner never asks for a shard the Role does not name, however much it must hold
    data = {f"usc-node-n{i}": "v" * 1000 for i in range(20_000)}
    plan = configmap.plan(data)
    assert set(plan.configmaps) <= set(names)
    assert plan.shards == configmap.MAX_SHARDS and not plan.ok


def test_create_is_granted_without_names_and_only_create() -> None:
    # RBAC cannot restrict create by name: the unnamed ConfigMap rule must grant nothing else
    unnamed = [r for r in configmap_rules() if not r.get("resourceNames")]
    assert [sorted(r["verbs"]) for r in unnamed] == [["create"]]
