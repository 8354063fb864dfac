#!/usr/bin/env python3
"""Run a real Prometheus beside the local kube-apiserver, configured from install/.

    localprometheus.py up [--dir DIR]     build if needed, start on 127.0.0.1, load install/'s rules
    localprometheus.py down [--dir DIR]   stop it and remove its data
    localprometheus.py status [--dir DIR] print where it listens and its targets' health
    localprometheus.py build              (re)build prometheus and promtool if hack/prometheus/ changed
    localprometheus.py check              promtool check rules + promtool test rules (tests/rules/)

Prometheus and promtool are built from Go modules pinned in hack/prometheus/go.mod, with the
`remove_all_sd` tag (no cloud service discovery), into `.local-cluster/bin/`. The web UI is not
built in (the HTTP API and its JSON are all cvo-py uses): open http://127.0.0.1:PORT/api/v1/alerts.

The scrape jobs are what the cluster's Prometheus derives from install/'s ServiceMonitors: the job
is the selected Service's name, every series gets the Service's `namespace` and the endpoint's
port name as `endpoint`, and scrapes go over HTTPS to the ServiceMonitor's `serverName` with the
local cluster's scraper client certificate (CN system:serviceaccount:openshift-monitoring:prometheus-k8s,
signed by the client CA `start` trusts). Processes to scrape register their address with
`register(job, "127.0.0.1:PORT")` (a file_sd target file) and serve the certificate from
`serving_certificate(job)`. The rules are install/'s PrometheusRule groups, written out at start
(optionally with shorter `for:` for tests); install/ stays their only source.

DIR defaults to $CVO_PY_CLUSTER_DIR/prometheus (the local cluster's directory, `.local-cluster`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cvo_py.runtime.promapi import APIError, PrometheusAPI
from testkit.checkout import REPO
from testkit.harness import localcluster, manifests
from testkit.harness.localcluster import ClusterError, free_port

SRC = REPO / "hack" / "prometheus"
PROMETHEUS = localcluster.BIN_DIR / "prometheus"
PROMTOOL = localcluster.BIN_DIR / "promtool"
RULE_TESTS = REPO / "tests" / "rules"
BUILD_TAGS = "remove_all_sd"
# The labels a scrape adds to every series of a target (its Service endpoint's, see `register`).
TARGET_LABELS = ("endpoint", "instance", "job", "namespace", "service")


def default_dir() -> Path:
    return localcluster.default_dir() / "prometheus"


# -- build --------------------------------------------------------------------------------------


def module_version() -> str:
    """The pinned github.com/prometheus/prometheus version, e.g. v0.316.0 (Prometheus 3.16.0)."""
    for line in (SRC / "go.mod").read_text().splitlines():
        parts = line.split()
        if "github.com/prometheus/prometheus" in parts[:2]:
            version = parts[parts.index("github.com/prometheus/prometheus") + 1 :][:1]
            if version:
                return version[0]
    raise ClusterError("hack/prometheus/go.mod does not require github.com/prometheus/prometheus")


def release_version(module: str) -> str:
    """Prometheus 3.x is published as module v0.3MM.P: v0.316.0 is release 3.16.0."""
    minor, patch = module.lstrip("v").split(".")[1:3]
    return f"{int(minor) // 100}.{int(minor) % 100}.{patch}"


def build(force: bool = False, quiet: bool = False) -> tuple[Path, Path]:
    module = module_version()
    pkg = "github.com/prometheus/common/version"
    ldflags = f"-X {pkg}.Version={release_version(module)} -X {pkg}.Branch={module} -X {pkg}.Revision={module}"
    localcluster.go_build(
        f"Prometheus {module} and promtool",
        SRC,
        [
            ("github.com/prometheus/prometheus/cmd/prometheus", PROMETHEUS),
            ("github.com/prometheus/prometheus/cmd/promtool", PROMTOOL),
        ],
        localcluster.BIN_DIR / ".prometheus-source-hash",
        ldflags=ldflags,
        tags=BUILD_TAGS,
        force=force,
        quiet=quiet,
    )
    return PROMETHEUS, PROMTOOL


# -- what install/ says ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One scrape job as the Prometheus Operator generates it from a ServiceMonitor endpoint."""

    name: str  # the Service's name
    namespace: str
    endpoint: str  # the Service port's name
    interval: str
    scheme: str
    server_name: str


def install_docs() -> list[dict[str, Any]]:
    """install/'s documents as the CVO renders them (its PrometheusRules escape their templates)."""
    return manifests.load()


def jobs(docs: list[dict[str, Any]] | None = None) -> dict[str, Job]:
    docs = install_docs() if docs is None else docs
    services = [d for d in docs if d.get("kind") == "Service"]
    out: dict[str, Job] = {}
    for monitor in (d for d in docs if d.get("kind") == "ServiceMonitor"):
        spec = monitor["spec"]
        namespaces = (spec.get("namespaceSelector") or {}).get("matchNames") or [monitor["metadata"]["namespace"]]
        wanted = spec["selector"].get("matchLabels") or {}
        for service in services:
            meta = service["metadata"]
            labels = meta.get("labels") or {}
            if meta.get("namespace") not in namespaces or any(labels.get(k) != v for k, v in wanted.items()):
                continue
            for endpoint in spec.get("endpoints") or []:
                out[meta["name"]] = Job(
                    name=meta["name"],
                    namespace=meta["namespace"],
                    endpoint=endpoint["port"],
                    interval=endpoint.get("interval", "30s"),
                    scheme=endpoint.get("scheme", "http"),
                    server_name=(endpoint.get("tlsConfig") or {}).get("serverName", ""),
                )
    return out


def rule_files(
    docs: list[dict[str, Any]] | None = None, for_override: dict[str, str] | None = None, interval: str = ""
) -> dict[str, dict[str, Any]]:
    """File name → rule file content, one per PrometheusRule in install/. `for_override` maps an
    alert name (or "*" for every alert) to the `for:` to use instead; `interval` sets each
    group's evaluation interval."""
    docs = install_docs() if docs is None else docs
    overrides = for_override or {}
    files: dict[str, dict[str, Any]] = {}
    for rule in (d for d in docs if d.get("kind") == "PrometheusRule"):
        groups = json.loads(json.dumps(rule["spec"]["groups"]))  # a deep copy
        for group in groups:
            if interval:
                group["interval"] = interval
            for item in group.get("rules") or []:
                shorter = overrides.get(item.get("alert", ""), overrides.get("*"))
                if shorter is not None and "alert" in item and "for" in item:
                    item["for"] = shorter
        meta = rule["metadata"]
        files[f"{meta['namespace']}-{meta['name']}.rules.yaml"] = {"groups": groups}
    return files


def write_rule_files(directory: Path, files: dict[str, dict[str, Any]]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in files.items():
        path = directory / name
        path.write_text(yaml.safe_dump(content, sort_keys=False, width=1 << 16))
        written.append(path)
    return written


# -- certificates ---------------------------------------------------------------------------------


def _openssl(*args: str) -> None:
    if shutil.which("openssl") is None:
        raise ClusterError("openssl is not on PATH: cannot make the scrape targets' serving certificates")
    proc = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise ClusterError(f"openssl {args[0]} failed: {proc.stderr.strip().splitlines()[-1:]}")


def serving_ca(directory: Path) -> tuple[Path, Path]:
    """The stand-in for the service CA: signs the targets' serving certificates (made once)."""
    pki = directory / "pki"
    cert, key = pki / "service-ca.crt", pki / "service-ca.key"
    if not cert.exists() or not key.exists():
        pki.mkdir(parents=True, exist_ok=True)
        _openssl(
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=cvo-py-local-service-ca",
            "-keyout", str(key), "-out", str(cert),
        )  # fmt: skip
    return cert, key


def serving_certificate(directory: Path, job: Job) -> tuple[str, str]:
    """(certificate, key) for `job`'s Service DNS name and 127.0.0.1, as the service CA issues it."""
    ca_cert, ca_key = serving_ca(directory)
    pki = directory / "pki"
    cert, key, csr, ext = (pki / f"{job.name}.{suffix}" for suffix in ("crt", "key", "csr", "ext"))
    if not cert.exists() or not key.exists():
        ext.write_text(f"subjectAltName=DNS:{job.server_name or job.name},IP:127.0.0.1\n")
        _openssl(
            "req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={job.server_name or job.name}",
            "-keyout", str(key), "-out", str(csr),
        )  # fmt: skip
        _openssl(
            "x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key), "-CAcreateserial",
            "-days", "30", "-extfile", str(ext), "-out", str(cert),
        )  # fmt: skip
    return str(cert), str(key)


# -- configuration ----------------------------------------------------------------------------------


def config(
    directory: Path,
    cluster_state: dict[str, Any],
    scrape_interval: str = "",
    evaluation_interval: str = "15s",
    extra_rule_files: list[str] | None = None,
) -> dict[str, Any]:
    """prometheus.yml: one job per install/ ServiceMonitor endpoint (targets from file_sd)."""
    ca_cert, _ = serving_ca(directory)
    scrape_configs = []
    for job in jobs().values():
        tls = {
            "ca_file": str(ca_cert),
            "cert_file": cluster_state["scraperCertFile"],
            "key_file": cluster_state["scraperKeyFile"],
        }
        if job.server_name:
            tls["server_name"] = job.server_name
        scrape_configs.append(
            {
                "job_name": job.name,
                "scrape_interval": scrape_interval or job.interval,
                "scrape_timeout": "5s" if not scrape_interval else min_duration(scrape_interval, "5s"),
                "scheme": job.scheme,
                "tls_config": tls,
                "file_sd_configs": [{"files": [str(target_file(directory, job.name))], "refresh_interval": "5s"}],
            }
        )
    return {
        "global": {"scrape_interval": scrape_interval or "30s", "evaluation_interval": evaluation_interval},
        "rule_files": [str(directory / "rules" / "*.yaml"), *(extra_rule_files or [])],
        "scrape_configs": scrape_configs,
    }


def min_duration(a: str, b: str) -> str:
    return a if _seconds(a) <= _seconds(b) else b


def _seconds(text: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for suffix in ("ms", "s", "m", "h"):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * units[suffix]
    return float(text)


def target_file(directory: Path, job: str) -> Path:
    return directory / "targets" / f"{job}.json"


# -- lifecycle ----------------------------------------------------------------------------------


@dataclass
class LocalPrometheus:
    dir: Path
    state: dict[str, Any]
    api: PrometheusAPI = field(init=False)

    def __post_init__(self) -> None:
        self.api = PrometheusAPI(self.url, timeout=10.0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.state['port']}"

    @property
    def pid(self) -> int:
        return int(self.state["pid"])

    def job(self, name: str) -> Job:
        return jobs()[name]

    def serving_certificate(self, job: str) -> tuple[str, str]:
        return serving_certificate(self.dir, self.job(job))

    def register(self, job: str, address: str) -> None:
        """Scrape `address` (host:port) as `job`'s one target, labelled as its Service's endpoint."""
        spec = self.job(job)
        labels = {"namespace": spec.namespace, "endpoint": spec.endpoint, "service": spec.name}
        _write_atomic(target_file(self.dir, job), json.dumps([{"targets": [address], "labels": labels}]))

    def scrape_flags(self, job: str) -> list[str]:
        """The `--listen` and serving-certificate flags of a process to scrape as `job` (a free
        port on 127.0.0.1, registered as the job's target)."""
        cert, key = self.serving_certificate(job)
        port = free_port()
        self.register(job, f"127.0.0.1:{port}")
        return [f"--listen=127.0.0.1:{port}", f"--serving-cert-file={cert}", f"--serving-key-file={key}"]

    def unregister(self, job: str) -> None:
        """No target for `job` any more (as when its Service has no ready endpoint)."""
        _write_atomic(target_file(self.dir, job), "[]")

    def query(self, expr: str) -> list[dict[str, Any]]:
        return self.api.query(expr)

    def alerts(self) -> list[dict[str, Any]]:
        return self.api.alerts()

    def firing(self, name: str) -> dict[str, Any] | None:
        """The firing alert named `name` (the first one), or None."""
        return next((a for a in self.alerts() if a["labels"].get("alertname") == name and a.get("state") == "firing"),
                    None)  # fmt: skip

    def samples(self, expr: str, hide: tuple[str, ...] = TARGET_LABELS) -> list[str]:
        """An instant query's samples as exposition lines `name{labels} value`, sorted, without
        the `hide` labels (by default those the scrape target adds)."""
        lines = []
        for sample in self.query(expr):
            metric = dict(sample["metric"])
            name = metric.pop("__name__", "")
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(metric.items()) if k not in hide)
            lines.append(f"{name}{{{labels}}} {sample['value'][1]}" if labels else f"{name} {sample['value'][1]}")
        return sorted(lines)

    def targets(self) -> list[dict[str, Any]]:
        data = self.api.get("/api/v1/targets", {"state": "active"})
        active: list[dict[str, Any]] = data.get("activeTargets") or []
        return active

    def ready(self) -> bool:
        try:
            self.api.get("/api/v1/status/runtimeinfo")
            return True
        except APIError:
            return False


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as handle:
        handle.write(text)
    os.replace(handle.name, path)


def running(directory: Path | None = None) -> LocalPrometheus | None:
    directory = directory or default_dir()
    try:
        state: dict[str, Any] = json.loads((directory / "state.json").read_text())
    except (OSError, ValueError):
        return None
    if not localcluster.pid_alive(int(state.get("pid", 0))):
        return None
    prom = LocalPrometheus(directory, state)
    return prom if prom.ready() else None


def up(
    cluster: localcluster.Cluster,
    directory: Path | None = None,
    *,
    scrape_interval: str = "",
    evaluation_interval: str = "15s",
    for_override: dict[str, str] | None = None,
    rule_interval: str = "",
    extra_rule_files: list[str] | None = None,
    timeout: float = 60.0,
    quiet: bool = False,
) -> LocalPrometheus:
    """Start Prometheus (or return the one running in `directory`); the rules are install/'s."""
    directory = (directory or default_dir()).resolve()
    existing = running(directory)
    if existing:
        if not quiet:
            print(f"local Prometheus already running at {existing.url}")
        return existing
    prometheus, _ = build(quiet=quiet)
    directory.mkdir(parents=True, exist_ok=True)
    for stale in ("rules", "data"):
        shutil.rmtree(directory / stale, ignore_errors=True)
    write_rule_files(directory / "rules", rule_files(for_override=for_override, interval=rule_interval))
    for job in jobs():
        if not target_file(directory, job).exists():
            _write_atomic(target_file(directory, job), "[]")
    (directory / "prometheus.yml").write_text(
        yaml.safe_dump(
            config(directory, cluster.state, scrape_interval, evaluation_interval, extra_rule_files), sort_keys=False
        )
    )
    port = free_port()
    (directory / "state.json").unlink(missing_ok=True)
    args = [
        str(prometheus),
        f"--config.file={directory / 'prometheus.yml'}",
        f"--storage.tsdb.path={directory / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--storage.tsdb.retention.time=1d",
        "--log.level=info",
    ]
    with open(directory / "prometheus.log", "ab") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    prom = LocalPrometheus(directory, {"pid": proc.pid, "port": port})
    deadline = time.monotonic() + timeout
    while not prom.ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            tail = "\n".join((directory / "prometheus.log").read_text(errors="replace").splitlines()[-10:])
            raise ClusterError(f"the local Prometheus did not become ready (exit {proc.returncode}):\n{tail}")
        time.sleep(0.2)
    (directory / "state.json").write_text(json.dumps(prom.state))
    if not quiet:
        print(f"local Prometheus ready at {prom.url} (rules from install/, targets in {directory / 'targets'})")
    return prom


def stop(directory: Path | None = None) -> None:
    directory = directory or default_dir()
    try:
        state = json.loads((directory / "state.json").read_text())
    except (OSError, ValueError):
        return
    localcluster.stop_pid(int(state.get("pid", 0)))


def down(directory: Path | None = None) -> None:
    directory = directory or default_dir()
    stop(directory)
    shutil.rmtree(directory, ignore_errors=True)


# -- promtool -------------------------------------------------------------------------------------


def check(quiet: bool = False) -> None:
    """`promtool check rules` on install/'s rules and `promtool test rules` on tests/rules/*.yaml."""
    _, promtool = build(quiet=quiet)
    with tempfile.TemporaryDirectory(prefix="cvo-py-rules-") as tmp:
        work = Path(tmp)
        written = write_rule_files(work, rule_files())
        _promtool(promtool, ["check", "rules", *map(str, written)])
        tests = sorted(RULE_TESTS.glob("*.yaml"))
        if not tests:
            raise ClusterError(f"no rule unit tests in {RULE_TESTS.relative_to(REPO)}")
        for test in tests:
            # The tests name the rule files as written here (derived from install/, never copied).
            shutil.copy(test, work / test.name)
        _promtool(promtool, ["test", "rules", *(test.name for test in tests)], cwd=work)


def _promtool(promtool: Path, args: list[str], cwd: Path | None = None) -> None:
    proc = subprocess.run([str(promtool), *args], capture_output=True, text=True, cwd=cwd)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        raise ClusterError(f"promtool {' '.join(args[:2])} failed:\n{(proc.stderr or proc.stdout).strip()}")


# -- command line -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="localprometheus.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=["up", "down", "status", "build", "check"])
    parser.add_argument(
        "--dir", type=Path, default=None, help="data directory (default $CVO_PY_CLUSTER_DIR/prometheus)"
    )
    parser.add_argument("--scrape-interval", default="", help="instead of the ServiceMonitors' intervals (e.g. 5s)")
    parser.add_argument("--evaluation-interval", default="15s", help="rule evaluation interval (default 15s)")
    args = parser.parse_args(argv)
    directory = args.dir.resolve() if args.dir else default_dir()
    try:
        if args.command == "build":
            build()
        elif args.command == "check":
            check()
        elif args.command == "up":
            cluster = localcluster.up(quiet=True)
            up(
                cluster,
                directory,
                scrape_interval=args.scrape_interval,
                evaluation_interval=args.evaluation_interval,
            )
        elif args.command == "down":
            down(directory)
            print(f"local Prometheus in {directory} stopped and its data removed")
        else:
            prom = running(directory)
            if prom is None:
                print(f"no local Prometheus running in {directory}")
                return 1
            print(f"local Prometheus at {prom.url}")
            targets = prom.targets()
            if not targets:
                print(f"  no targets registered (see {directory / 'targets'})")
            for target in targets:
                labels = target.get("labels") or {}
                error = target.get("lastError") or ""
                print(f"  {labels.get('job')} {target.get('scrapeUrl')}: {target.get('health')} {error}".rstrip())
    except (ClusterError, APIError) as exc:
        print(f"localprometheus: {exc}", file=sys.stderr)
        return 1
    return 0


