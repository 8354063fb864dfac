"""`cluster-version-operator start` as a process: flag validation, status written, metrics over
HTTPS checked by name and value, a rollback through it, and a graceful shutdown."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from datetime import datetime
from typing import Any

import pytest

from cvo_py.runtime.kube import CLUSTERVERSIONS, KubeClient
from testkit.checkout import REPO
from testkit.harness.clusterversion import (
    IMG_4141,
    IMG_41310,
    condition,
    create_cv,
    history_entry,
    put_co,
    status_414,
)
from testkit.harness.wait import wait_until


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cvo_py", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {"NODE_NAME": ""}, "node-name is required"),
        (["--node-name", "n"], {}, "missing --release-image flag, it is required"),
        (
            ["--node-name", "n", "--release-image", "x"],
            {},
            "--listen was not set empty, so --serving-cert-file must be set",
        ),
        (
            ["--node-name", "n", "--release-image", "x", "--serving-cert-file", "c"],
            {},
            "--listen was not set empty, so --serving-key-file must be set",
        ),
        (
            [
                "--release-image",
                "x",
                "--listen",
                "",
                "--always-enable-capabilities",
                "Ingress,bogus",
                "--always-enable-capabilities",
                "Zed",
            ],
            {"NODE_NAME": "from-env"},
            "--always-enable-capabilities: unknown capabilities: [Zed bogus]",
        ),
        (
            ["--node-name", "n", "--release-image", "x", "--listen", "", "--enable-auto-update"],
            {},
            "--enable-auto-update=true is not supported: cvo-py never starts an update itself",
        ),
        (
            ["--node-name", "n", "--release-image", "x", "--listen", ""],
            {"EXCLUDE_MANIFESTS": "hosted\x1b[2J"},
            'invalid EXCLUDE_MANIFESTS "hosted\\x1b[2J": want an identifier (letters, digits, \'-\', \'_\' and \'.\', '
            "at most 63, as in exclude.release.openshift.io/<identifier>)",
        ),
        (
            ["--node-name", "n", "--release-image", "x", "--listen", ""],
            {"CVO_PY_RECONCILE_INTERVAL": "nan"},
            'invalid CVO_PY_RECONCILE_INTERVAL "nan": want seconds from 0.1 to 3600',
        ),
        (
            ["--node-name", "n", "--release-image", "x", "--listen", "", "--enable-auto-update=maybe"],
            {},
            'invalid argument "maybe" for "--enable-auto-update" flag: want true or false',
        ),
        (  # upstream's order: capabilities are checked before the TLS settings
            [
                "--node-name",
                "n",
                "--release-image",
                "x",
                "--serving-cert-file",
                "c",
                "--serving-key-file",
                "k",
                "--tls-min-version",
                "VersionTLS99",
                "--always-enable-capabilities",
                "Zed",
            ],
            {},
            "--always-enable-capabilities: unknown capabilities: [Zed]",
        ),
        (
            [
                "--node-name",
                "n",
                "--release-image",
                "x",
                "--listen",
                "nonsense",
                "--serving-cert-file",
                "c",
                "--serving-key-file",
                "k",
            ],
            {},
            "invalid --listen address 'nonsense'",
        ),
    ],
)
def test_start_validation(args: list[str], env: dict[str, str], message: str) -> None:
    result = run_cli("start", *args, env=env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().endswith(message) or message in result.stderr, result.stderr


pytestmark = pytest.mark.usefixtures("clusterversion_cleanup")


def test_start_writes_status_and_serves_metrics(kube: KubeClient, start: Any) -> None:
    create_cv(kube, {"clusterID": str(uuid.uuid4()), "channel": "stable-4.14"}, None)
    put_co(kube, "etcd", "4.14.1")
    put_co(kube, "dns", "4.14.0", degraded="True")
    # The payload root holds only release-metadata: not a release image's root, nothing to apply
    # (M = 0), so the install's first pass completes at once; the operators' states are only metrics.
    running = start(IMG_4141, "4.14.1")  # the Deployment keeps Ingress enabled

    cv = wait_until(
        lambda: ((c := kube.get(CLUSTERVERSIONS, "version")).get("status") or {}).get("history", [{}])[0].get("state")
        == "Completed"
        and c,
        what="Completed",
    )
    assert "Ingress" in cv["status"]["capabilities"]["enabledCapabilities"]

    assert running.get("/healthz") == (200, "ok")
    assert running.get("/readyz") == (200, "ok")
    metrics = wait_until(
        lambda: (
            (m := running.metrics()).get('cluster_operator_conditions{condition="Available",name="version",reason=""}')
            == 1.0
            and m
        ),
        what="Available in metrics",
    )
    # /metrics is for the cluster's Prometheus only: its certificate is signed by the client CA the
    # API server publishes in kube-system/extension-apiserver-authentication.
    assert running.get("/metrics", as_scraper=False) == (401, "client certificate required\n")
    completion = cv["status"]["history"][0]["completionTime"]
    assert (
        metrics[f'cluster_version{{from_version="",image="{IMG_4141}",type="completed",version="4.14.1"}}']
        == datetime.fromisoformat(completion.replace("Z", "+00:00")).timestamp()
    )
    assert metrics[f'cluster_version{{from_version="4.14.1",image="{IMG_4141}",type="current",version="4.14.1"}}'] == 0
    assert metrics['cluster_operator_up{name="etcd",reason="AsExpected",version="4.14.1"}'] == 1.0
    assert metrics['cluster_operator_up{name="version",reason="",version="4.14.1"}'] == 1.0
    assert metrics['cluster_operator_conditions{condition="Failing",name="version",reason=""}'] == 0.0
    assert (
        metrics['cluster_operator_conditions{condition="ReleaseAccepted",name="version",reason="PayloadLoaded"}'] == 1
    )
    assert metrics['cluster_version_capability{name="Ingress"}'] == 1.0
    assert metrics['cluster_version_capability{name="Build"}'] == 1.0
    assert metrics['cluster_version_payload{type="applied",version="4.14.1"}'] == 0.0
    assert metrics['cluster_version_payload{type="pending",version="4.14.1"}'] == 0.0
    assert condition(cv, "Progressing")["message"] == "Cluster version is 4.14.1"  # type: ignore[index]
    assert metrics["cluster_version_status_writes_total"] >= 2
    assert metrics["cluster_version_status_write_failures_total"] == 0
    log = running.stop()
    assert running.proc.returncode == 0, log
    assert "Graceful shutdown complete for 4.14.1." in log
    assert re.search(r"^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ start\.py:\d+\] ClusterVersionOperator", log, re.M), log


def test_start_through_a_rollback(kube: KubeClient, crds: Any, start: Any) -> None:
    crds.install_clusterversion("current")
    enabled = sorted(["baremetal", "marketplace", "openshift-samples", "MachineAPI", "Build"])
    status = status_414(enabled)
    status["desired"] = {"version": "4.13.10", "image": IMG_41310}
    status["history"].insert(0, history_entry("4.13.10", IMG_41310, "Partial", "2024-02-01T00:00:00Z", None))
    create_cv(
        kube,
        {
            "clusterID": str(uuid.uuid4()),
            "capabilities": {"baselineCapabilitySet": "v4.11", "additionalEnabledCapabilities": ["Console"]},
        },
        status,
    )
    put_co(kube, "etcd", "4.13.10")
    crds.install_clusterversion("4.13")
    running = start(IMG_41310, "4.13.10")

    cv = wait_until(
        lambda: (c := kube.get(CLUSTERVERSIONS, "version"))["status"]["history"][0]["state"] == "Completed" and c,
        what="rollback completed",
    )
    assert cv["status"]["capabilities"]["enabledCapabilities"] == [
        "Console",
        "baremetal",
        "marketplace",
        "openshift-samples",
    ]
    # Ingress too: the Deployment keeps it enabled (--always-enable-capabilities=Ingress), and the
    # 4.13 CRD does not know it either.
    assert "enabledCapabilities Build, Ingress, MachineAPI" in condition(cv, "CapabilitiesPruned")["message"]  # type: ignore[index]
    metrics = running.metrics()
    assert metrics['cluster_version_status_pruned_capabilities{field="enabledCapabilities",name="Build"}'] == 1.0
    assert metrics['cluster_version_status_pruned_capabilities{field="enabledCapabilities",name="MachineAPI"}'] == 1.0
    assert metrics['cluster_version_status_pruned_capabilities{field="enabledCapabilities",name="Ingress"}'] == 1.0
    assert (
        metrics['cluster_version_status_write_rejections_total{field="status.capabilities.enabledCapabilities"}'] == 3
    )
    assert metrics['cluster_version_capability{name="MachineAPI"}'] == 1.0  # still enabled
    log = running.stop()
    assert log.count('rejected status.capabilities.enabledCapabilities value "MachineAPI"') == 1, log
    assert log.count('rejected status.capabilities.enabledCapabilities value "Ingress"') == 1, log
