"""Fixtures shared by the integration tests: payload retrieval and verification, and
`cluster-version-operator start` as a process (`start`, serving the certificate of `tls`)."""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cvo_py.kube import KubeClient
from cvo_py.testing.certs import self_signed
from cvo_py.testing.cluster import LocalCluster, free_port
from cvo_py.testing.manifests import start_argv, start_env
from cvo_py.testing.payload import ClusterVerification
from cvo_py.testing.wait import wait_until

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def verification(kube: KubeClient) -> Iterator[ClusterVerification]:
    """The cluster's release-verification configuration with a throwaway key, removed afterwards."""
    handle = ClusterVerification(kube)
    yield handle
    handle.remove()


@dataclass
class Running:
    proc: subprocess.Popen[str]
    port: int
    log: Path
    scraper: tuple[str, str] | None  # the client certificate Prometheus would present

    def get(self, path: str, as_scraper: bool = True) -> tuple[int, str]:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # a self-signed test certificate
        if as_scraper and self.scraper:
            context.load_cert_chain(*self.scraper)
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{self.port}{path}", context=context, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def metrics(self) -> dict[str, float]:
        status, text = self.get("/metrics")
        assert status == 200
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                series, _, value = line.rpartition(" ")
                out[series] = float(value)
        return out

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)
        return self.log.read_text()


@pytest.fixture
def tls(tmp_path: Path) -> tuple[str, str]:
    return self_signed(tmp_path)


@pytest.fixture
def start(cluster: LocalCluster, namespace: str, tls: tuple[str, str], tmp_path: Path) -> Iterator[Any]:
    started: list[Running] = []

    def launch(release_image: str, version: str, *extra: str) -> Running:
        payload = tmp_path / f"payload-{len(started)}"
        (payload / "release-manifests").mkdir(parents=True)
        (payload / "release-manifests" / "release-metadata").write_text(json.dumps({"version": version}))
        port = free_port()
        log = tmp_path / f"start-{len(started)}.log"
        # The Deployment's command line (install/), with this machine's address and certificate.
        argv = start_argv(
            {
                "--release-image": release_image,
                "--listen": f"127.0.0.1:{port}",
                "--serving-cert-file": tls[0],
                "--serving-key-file": tls[1],
            },
            cluster.kubeconfig,
        )
        proc = subprocess.Popen(
            [*argv, *extra],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=log.open("w"),
            text=True,
            env={**os.environ, **start_env("node-0"), "CVO_NAMESPACE": namespace, "PAYLOAD_OVERRIDE": str(payload)},
        )
        scraper = (cluster.state["scraperCertFile"], cluster.state["scraperKeyFile"])
        running = Running(proc, port, log, scraper)
        started.append(running)
        wait_until(lambda: proc.poll() is not None or _listening(port), what="metrics endpoint up")
        assert proc.poll() is None, log.read_text()
        return running

    yield launch
    for running in started:
        running.stop()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
