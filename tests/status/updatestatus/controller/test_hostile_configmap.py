"""Hostile values in the ConfigMap the controller publishes to: it keeps running and repairs its keys."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cvo_py.runtime.kube import KubeClient
from status.updatestatus.api import configmap as wire
from status.updatestatus.api.metadata import META_KEY
from testkit.corpus import values
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster

HOSTILE = {
    "usc-co-dns": "a: " + values.deep_flow(40_000),  # 80 KB nested 40,000 deep, in a key it owns
    "usc-cv-version": values.alias_bomb(),  # an alias bomb in another key it owns
    "usc-co-gone": "{{{{ not: yaml",  # garbage, for an operator that does not exist
    "usc-health-forged": values.huge_integer(),  # a 4,301-digit integer
    "admin-note": values.deep_flow(40_000),  # not the controller's: left alone
}


def test_controller_survives_and_repairs_hostile_configmap_values(
    cluster: LocalCluster, kube: KubeClient, namespace: str, clusterversion_cleanup: None, tmp_path: Path,
    controller_kubeconfig: str,
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, "4.15.8", now - timedelta(days=1))
    for name in ("dns", "etcd"):
        h.create_operator(kube, name, "4.15.8", now)
    h.create_configmap(kube, namespace, dict(HOSTILE))
    usc = h.ControllerProcess(controller_kubeconfig, namespace, tmp_path / "usc.log")
    try:

        def repaired() -> dict[str, str] | None:
            data = h.configmap_data(kube, namespace) or {}
            # the insights it owns (its published metadata, usc-meta, is written beside them)
            owned = {k: v for k, v in data.items() if k.startswith("usc-") and k != META_KEY}
            if set(owned) != {"usc-cv-version", "usc-co-dns", "usc-co-etcd"}:
                return None
            insights, errors = wire.decode_readable(owned)
            return data if not errors and len(insights) == 3 else None

        data = h.wait_for("the hostile keys repaired", repaired, timeout=60)
        assert data["admin-note"] == HOSTILE["admin-note"], "a key it does not own is left alone"
        log = usc.log()
        assert "Ignoring what ConfigMap" in log and "nested more than 128 levels deep" in log, log[-3000:]

        # and it keeps publishing: a change after the repair reaches the ConfigMap
        h.create_operator(kube, "ingress", "4.15.8", now)
        h.wait_for("the next change published", lambda: "usc-co-ingress" in (h.configmap_data(kube, namespace) or {}))
        assert usc.proc.poll() is None, "the controller is still running"
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]


# A standard tag on text it cannot hold, in each kind of key the controller owns: the main
# ConfigMap's metadata and shard list (read on every sync) and insights (read when seeding).
TAGGED = {
    META_KEY: "!!int ''",
    "usc-shards": "!!bool maybe",
    "usc-co-dns": "!!float ''",
    "usc-cv-version": "{a: !<tag:yaml.org,2002:int> '-'}",
    "usc-health-forged": "!!null maybe",
}


def test_controller_overwrites_tagged_values_it_cannot_read_and_says_so(
    cluster: LocalCluster, kube: KubeClient, namespace: str, clusterversion_cleanup: None, tmp_path: Path,
    controller_kubeconfig: str,
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, "4.15.8", now - timedelta(days=1))
    h.create_operator(kube, "dns", "4.15.8", now)
    h.create_configmap(kube, namespace, dict(TAGGED))
    usc = h.ControllerProcess(controller_kubeconfig, namespace, tmp_path / "usc.log")
    try:

        def repaired() -> dict[str, str] | None:
            data = h.configmap_data(kube, namespace) or {}
            if data.get(META_KEY, TAGGED[META_KEY]) == TAGGED[META_KEY] or "usc-shards" in data:
                return None
            owned = {k: v for k, v in data.items() if k.startswith("usc-") and k != META_KEY}
            insights, errors = wire.decode_readable(owned)
            return data if set(owned) == {"usc-cv-version", "usc-co-dns"} and not errors else None

        data = h.wait_for("the tagged keys overwritten", repaired, timeout=60)
        assert wire.shard_names(data) == []
        log = usc.log()
        for key, problem in ((META_KEY, '!!int cannot hold ""'), ("usc-shards", '!!bool cannot hold "maybe"')):
            assert f"Overwriting ConfigMap {namespace}/status-api-cm-prototype key {key}, which cannot be read" in log
            assert problem in log, log[-3000:]
        assert "Traceback" not in log and "KeyError" not in log and "IndexError" not in log, log[-3000:]
        assert usc.proc.poll() is None, "the controller is still running"
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]


def test_controller_rewrites_a_shard_list_naming_configmaps_it_may_not_touch(
    cluster: LocalCluster, kube: KubeClient, namespace: str, clusterversion_cleanup: None, tmp_path: Path,
    controller_kubeconfig: str,
) -> None:
    """`usc-shards` is readable but names ConfigMaps outside the API's 33 (which the controller's
    RBAC does not grant, and which it would start to watch): it is rewritten, not followed."""
    now = datetime.now(UTC).replace(microsecond=0)
    h.create_clusterversion(kube, "4.15.8", now - timedelta(days=1))
    h.create_operator(kube, "dns", "4.15.8", now)
    forged = [f"status-api-cm-prototype-nodes-{i}" for i in ("x", "99", "-1", "0" * 40, "1")]
    h.create_configmap(kube, namespace, {"usc-shards": json.dumps(forged)})
    usc = h.ControllerProcess(controller_kubeconfig, namespace, tmp_path / "usc.log")
    try:
        h.wait_for(
            "the shard list removed and the insights published",
            lambda: (d := h.configmap_data(kube, namespace) or {}) and "usc-shards" not in d and "usc-co-dns" in d,
            timeout=60,
        )
        log = usc.log()
        assert "Overwriting ConfigMap" in log and "key usc-shards" in log, log[-3000:]
        assert "Traceback" not in log, log[-3000:]
    finally:
        assert usc.stop() == 0, usc.log()[-3000:]
