"""Slow-loris and header-stuffing against both serving endpoints, the real processes: `start` (HTTPS,
its Deployment's command line) and `update-status-controller` (HTTPS and plain HTTP). While 120
dripping connections, 120 connections of 99 headers of 65 KB and 60 silent ones stay open, a
probe on a new connection every quarter second gets `200 ok` from /healthz, each within
PROBE_BOUND (generous for a loaded 2-core machine; bench/hostile_inputs.py prints the figures
against the 1 s target), the process stays up and its memory bounded."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.corpus.clients import Probe, attacking, probe_for
from testkit.corpus.files import peak_rss
from testkit.harness import usc as h
from testkit.harness.cluster import LocalCluster

PROBE_BOUND = 5.0  # seconds; the target is 1 s (see the bench)
PEAK_RSS_BOUND = 400 << 20  # the process's own peak, attack included
ATTACK = (("slow-loris", 120), ("header-stuffing", 120), ("idle", 60))
PROBE_SECONDS = 10.0


def _insecure() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def under_attack(port: int, scheme: str) -> list[Probe]:
    """Probes of /healthz while the attacks (from a child process) hold their connections."""
    context = _insecure() if scheme == "https" else None
    with attacking(port, ATTACK, tls=context is not None):
        return probe_for(f"{scheme}://127.0.0.1:{port}/healthz", PROBE_SECONDS, context)




def check(probes: list[Probe], pid: int, alive: Callable[[], bool]) -> None:
    assert probes, "no probe ran"
    failed = [p for p in probes if p.status != 200]
    assert not failed, failed[:5]
    slowest = max(p.seconds for p in probes)
    assert slowest < PROBE_BOUND, f"slowest /healthz {slowest:.2f}s"
    assert alive(), "the process died under the attack"
    peak = peak_rss(pid)
    assert peak < PEAK_RSS_BOUND, f"peak RSS {peak >> 20} MiB"
    print(f"\n{len(probes)} probes, slowest {slowest * 1000:.0f} ms, peak RSS {peak >> 20} MiB")


def test_start_endpoint(start: Any) -> None:
    running = start("quay.io/openshift-release-dev/ocp-release@sha256:" + "a" * 64, "4.14.0")
    probes = under_attack(running.port, "https")
    check(probes, running.proc.pid, lambda: running.proc.poll() is None)


@pytest.fixture(params=["https", "http"])
def controller(
    request: pytest.FixtureRequest, cluster: LocalCluster, namespace: str, tls: tuple[str, str], tmp_path: Path
) -> Iterator[h.ControllerProcess]:
    serving = [f"--serving-cert-file={tls[0]}", f"--serving-key-file={tls[1]}"] if request.param == "https" else []
    usc = h.ControllerProcess(
        cluster.kubeconfig, namespace, tmp_path / "usc.log", "--no-leader-elect", *serving,
        tls=_insecure() if serving else None,
    )
    try:
        usc.wait_for_log(rf"Serving metrics and health on {request.param}://127\.0\.0\.1:{usc.port}")
        yield usc
    finally:
        usc.stop()


def test_update_status_controller_endpoint(controller: h.ControllerProcess) -> None:
    scheme = "https" if controller.tls is not None else "http"
    probes = under_attack(controller.port, scheme)
    check(probes, controller.proc.pid, lambda: controller.proc.poll() is None)
