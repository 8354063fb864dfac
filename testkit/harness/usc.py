"""Helpers for the Update Status Controller's integration tests and benchmarks.

The install/ manifests are applied as the CVO would (optionally into a per-test namespace), and
the controller runs as a real subprocess authenticated with its ServiceAccount's token.
"""

from __future__ import annotations

import os
import re
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import yaml

from cvo_py.runtime.kube import (
    CLUSTEROPERATORS,
    CLUSTERVERSIONS,
    CONFIGMAPS,
    JSON,
    LEASES,
    MACHINECONFIGPOOLS,
    MACHINECONFIGS,
    NODES,
    ApiError,
    KubeClient,
    Resource,
)
from status.updatestatus.api import encoding, metadata, wire
from status.updatestatus.api.metadata import PublicationMetadata
from status.updatestatus.api.names import CONFIGMAP as CONFIGMAP  # re-exported for the tests
from status.updatestatus.api.names import LEASE as LEASE
from status.updatestatus.api.names import NAMESPACE as NAMESPACE
from status.updatestatus.api.names import SHARDS_KEY
from status.updatestatus.insights import compute
from status.updatestatus.insights.inputs import machineconfig_versions
from status.updatestatus.insights.plain import Insight
from testkit.checkout import REPO
from testkit.fakes.statuswrite import write_status
from testkit.harness.cluster import free_port
from testkit.harness.manifests import KINDS, apply, cluster_scoped, delete, outside
from testkit.harness.manifests import load as load_install
from testkit.harness.manifests import render as render_install
from testkit.harness.wait import wait_until

__all__ = ["KINDS", "apply", "cluster_scoped", "delete", "free_port", "outside"]

SERVICE_ACCOUNT = "update-status-controller"

T = TypeVar("T")


def load_manifests() -> list[JSON]:
    return load_install("0000_00_update-status-controller_*.yaml")


def render(manifests: list[JSON], namespace: str) -> list[JSON]:
    """The manifests moved into `namespace`; cluster-scoped names get a suffix so tests can coexist."""
    return render_install(manifests, NAMESPACE, namespace)


def wait_for(what: str, check: Callable[[], T | None], timeout: float = 20.0, interval: float = 0.05) -> T:
    """`wait_until` for the API: an object that is not there yet (or not yet whole) is waited for."""
    found = wait_until(check, timeout, what, interval=interval, tolerate=(ApiError, KeyError, ValueError))
    assert found is not None
    return found


class ControllerProcess:
    """`python -m cvo_py update-status-controller` as a real process, with its log in a file."""

    def __init__(
        self, kubeconfig: str, namespace: str, log_path: Path, *extra: str, tls: ssl.SSLContext | None = None
    ) -> None:
        """`tls`: the client context for the endpoints when `extra` has the serving-certificate flags."""
        self.port = free_port()
        self.log_path = log_path
        self.tls = tls
        self.args = [
            sys.executable,
            "-m",
            "cvo_py",
            "update-status-controller",
            "--kubeconfig",
            kubeconfig,
            "--namespace",
            namespace,
            f"--listen=127.0.0.1:{self.port}",
            "--alerts-url=",  # no alerts API unless a test gives one in `extra`
            "-v",
            "2",
            *extra,
        ]
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(self.args, cwd=REPO, stdout=self._log, stderr=subprocess.STDOUT, env=env)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_log(self, pattern: str, timeout: float = 20.0) -> re.Match[str]:
        def check() -> re.Match[str] | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"controller exited with {self.proc.returncode}:\n{self.log()[-3000:]}")
            return re.search(pattern, self.log())

        return wait_for(f"log line /{pattern}/ from the controller", check, timeout)

    def get(self, path: str) -> str:
        scheme = "https" if self.tls is not None else "http"
        with urllib.request.urlopen(
            f"{scheme}://127.0.0.1:{self.port}{path}", timeout=5, context=self.tls
        ) as resp:
            return str(resp.read().decode())

    def metrics(self) -> str:
        return self.get("/metrics")

    def metric(self, name: str) -> float:
        total = 0.0
        for line in self.metrics().splitlines():
            if line.startswith(name) and (line[len(name)] in " {"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        return self.proc.returncode


# -- the objects an update changes ---------------------------------------------------------------


def ts(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def image(version: str) -> str:
    return f"quay.io/openshift-release-dev/ocp-release@sha256:{version.replace('.', '').ljust(64, '0')[:64]}"


def create_clusterversion(kube: KubeClient, version: str, installed: datetime) -> JSON:
    kube.create(
        CLUSTERVERSIONS,
        {
            "metadata": {"name": "version"},
            "spec": {"clusterID": "0d6b2a9e-6b4c-4a3e-9f52-6a5d2d3c0b11", "channel": "stable-4.16"},
        },
    )
    finished = installed + timedelta(minutes=35)

    def status(s: JSON) -> None:
        s.update(
            {
                "desired": {"version": version, "image": image(version)},
                "history": [
                    {
                        "state": "Completed",
                        "version": version,
                        "image": image(version),
                        "verified": False,
                        "startedTime": ts(installed),
                        "completionTime": ts(finished),
                    }
                ],
                "observedGeneration": 1,
                "versionHash": "abc",
                "availableUpdates": None,
                "conditions": conditions(
                    finished, progressing=False, message=f"Cluster version is {version}"
                ),
            }
        )

    return update_status(kube, CLUSTERVERSIONS, "version", status)


def conditions(when: datetime, progressing: bool, message: str) -> list[JSON]:
    def cond(type_: str, status: str, reason: str = "", msg: str = "") -> JSON:
        c: JSON = {"type": type_, "status": status, "lastTransitionTime": ts(when)}
        if reason:
            c["reason"] = reason
        if msg:
            c["message"] = msg
        return c

    return [
        cond("Available", "True", "", f"Done applying {message.split()[-1]}"),
        cond("Failing", "False"),
        cond("Progressing", "True" if progressing else "False", "", message),
        cond("RetrievedUpdates", "False", "NoChannel", "The update channel has not been configured."),
    ]


def start_update(kube: KubeClient, target: str, started: datetime) -> JSON:
    def status(s: JSON) -> None:
        previous = s["history"][0]["version"]
        s["desired"] = {"version": target, "image": image(target)}
        s["history"].insert(
            0,
            {
                "state": "Partial",
                "version": target,
                "image": image(target),
                "verified": True,
                "startedTime": ts(started),
                "completionTime": None,
            },
        )
        s["conditions"] = conditions(
            started, progressing=True, message=f"Working towards {target}: 106 of 863 done (12% complete)"
        )
        s["conditions"][0]["message"] = f"Done applying {previous}"

    return update_status(kube, CLUSTERVERSIONS, "version", status)


def finish_update(kube: KubeClient, finished: datetime) -> JSON:
    def status(s: JSON) -> None:
        s["history"][0]["state"] = "Completed"
        s["history"][0]["completionTime"] = ts(finished)
        s["conditions"] = conditions(
            finished, progressing=False, message=f"Cluster version is {s['history'][0]['version']}"
        )

    return update_status(kube, CLUSTERVERSIONS, "version", status)


def create_operator(
    kube: KubeClient, name: str, version: str, when: datetime, progressing: bool = False
) -> JSON:
    kube.create(
        CLUSTEROPERATORS,
        {
            "metadata": {
                "name": name,
                "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"},
            },
            "spec": {},
        },
    )
    return set_operator(kube, name, version, when, progressing)


def set_operator(
    kube: KubeClient, name: str, version: str, when: datetime, progressing: bool = False
) -> JSON:
    def status(s: JSON) -> None:
        s["versions"] = [{"name": "operator", "version": version}]
        s["conditions"] = [
            {"type": "Available", "status": "True", "lastTransitionTime": ts(when), "reason": "AsExpected"},
            {"type": "Degraded", "status": "False", "lastTransitionTime": ts(when), "reason": "AsExpected"},
            {
                "type": "Progressing",
                "status": "True" if progressing else "False",
                "lastTransitionTime": ts(when),
                "reason": "Upgrading" if progressing else "AsExpected",
                "message": "Working towards the new release" if progressing else "",
            },
        ]

    return update_status(kube, CLUSTEROPERATORS, name, status)


def update_status(kube: KubeClient, res: Resource, name: str, mutate: Callable[[JSON], None]) -> JSON:
    """Let `mutate` edit the object's status in place and write it (retrying conflicts)."""
    return write_status(kube, res, name, lambda obj: mutate(obj.setdefault("status", {})))


def published_view(configmaps: Mapping[str, Mapping[str, str]]) -> tuple[dict[str, str], PublicationMetadata | None]:
    """What a reader gets from the API's ConfigMaps (name → data): the insight keys of the main
    ConfigMap and of the shards it lists, and the publication metadata (None: none yet)."""
    main = configmaps.get(CONFIGMAP) or {}
    data = {k: v for k, v in main.items() if k not in (metadata.META_KEY, SHARDS_KEY)}
    for name in wire.shard_names(main):
        data.update(configmaps.get(name) or {})
    return data, metadata.decode(main[metadata.META_KEY]) if metadata.META_KEY in main else None


def published_at_once(
    kube: KubeClient, namespace: str = NAMESPACE
) -> tuple[dict[str, str], PublicationMetadata | None]:
    """`published_view` of the ConfigMaps one LIST returns: every one as it was at one resourceVersion."""
    found = {cm["metadata"]["name"]: cm.get("data") or {} for cm in kube.list(CONFIGMAPS, namespace)["items"]}
    return published_view(found)


def insights_of_a_fresh_list(kube: KubeClient, now: int, published: Mapping[str, str]) -> dict[str, str]:
    """The ConfigMap data the insights give for the cluster as a LIST shows it now, at the instant
    `now`, carrying the transition times of the insights `published`: what the controller should
    have published at `now`, whatever it received or missed."""
    readable, errors = wire.decode_readable(published)
    carried = [i for i in readable if isinstance(i, Insight)]  # what the controller writes reads plain
    assert errors == [] and len(carried) == len(readable), errors[:3]
    cv = kube.get(CLUSTERVERSIONS, "version")
    items = {res: kube.list(res)["items"] for res in (CLUSTEROPERATORS, NODES, MACHINECONFIGPOOLS, MACHINECONFIGS)}
    insights = compute.all_insights(
        cv,
        items[CLUSTEROPERATORS],
        items[NODES],
        items[MACHINECONFIGPOOLS],
        machineconfig_versions(items[MACHINECONFIGS]),
        now,
        previous=carried,
    )
    return encoding.encode(insights)


def configmap_data(kube: KubeClient, namespace: str, name: str = CONFIGMAP) -> dict[str, str] | None:
    try:
        return dict(kube.get(CONFIGMAPS, name, namespace).get("data") or {})
    except ApiError as exc:
        if exc.is_not_found():
            return None
        raise


def create_configmap(kube: KubeClient, namespace: str, data: dict[str, str] | None = None) -> JSON:
    body: JSON = {"metadata": {"name": CONFIGMAP, "namespace": namespace}}
    if data:
        body["data"] = data
    return kube.create(CONFIGMAPS, body)


def publish_insights(kube: KubeClient, namespace: str, nodes: int = 0, omitted: Iterable[str] = ()) -> None:
    """Insights published in `namespace` as the controller publishes them, fresh for an hour (the
    resync period: no staleness warning comes meanwhile), with `nodes` more node insights and the
    keys `omitted` said left out, and the controller's Lease held for an hour. Published again,
    only the ConfigMap changes."""
    from cvo_py import __version__
    from cvo_py.runtime.gotext.durations import SECOND
    from status.updatestatus.api import configmap, metadata
    from status.updatestatus.insights import compute
    from testkit.objects.insight_objects import ns, sample_insights
    from testkit.objects.synthetic import synthetic_cluster

    data = configmap.encode(sample_insights())
    if nodes:
        cv, node_objects, pools, versions = synthetic_cluster(nodes, 4)
        data.update(configmap.encode(compute.all_insights(cv, [], node_objects, pools, versions, ns(1))))
        data.update(configmap.encode(sample_insights()))  # their ClusterVersion and operators
    stamp = datetime.now(UTC)
    meta = metadata.build(int(stamp.timestamp()) * SECOND, "usc-0", __version__, 3600 * SECOND, list(omitted))
    data[metadata.META_KEY] = metadata.encode(meta)
    try:
        kube.patch(CONFIGMAPS, CONFIGMAP, {"data": data}, namespace=namespace)
        return
    except ApiError as exc:
        if not exc.is_not_found():
            raise
    create_configmap(kube, namespace, data)
    renewed = stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    spec = {"holderIdentity": "usc-0", "leaseDurationSeconds": 3600, "renewTime": renewed}
    kube.create(LEASES, {"metadata": {"name": LEASE, "namespace": namespace}, "spec": spec}, namespace)


def delete_configmap(kube: KubeClient, namespace: str) -> None:
    try:
        kube.delete(CONFIGMAPS, CONFIGMAP, namespace)
    except ApiError as exc:
        if not exc.is_not_found():
            raise


def delete_objects(kube: KubeClient, objects: list[tuple[Resource, str]]) -> None:
    """Delete cluster-scoped objects; those already gone are fine."""
    for res, name in objects:
        try:
            kube.delete(res, name)
        except ApiError as exc:
            if not exc.is_not_found():
                raise


def delete_lease(kube: KubeClient, namespace: str) -> None:
    """A Lease left by a killed replica would make the next one wait out its duration."""
    try:
        kube.delete(LEASES, LEASE, namespace)
    except ApiError as exc:
        if not exc.is_not_found():
            raise


def insight(data: dict[str, str] | None, key: str) -> Any:
    """The decoded value of one key (JSON of the insight, camelCase names)."""
    if not data or key not in data:
        return None
    return yaml.safe_load(data[key])


def iter_audit(path: str, offset: int = 0) -> Iterator[JSON]:
    import json

    with open(path, "rb") as f:
        f.seek(offset)
        for line in f:
            if line.strip():
                yield json.loads(line)


def unwrap(value: Any) -> Any:
    """The insight itself, whether the value is the bare insight or an API wrapper around it."""
    if isinstance(value, dict):
        if isinstance(value.get("insight"), dict):
            return unwrap(value["insight"])
        for member in ("clusterVersion", "clusterOperator", "machineConfigPool", "node", "health"):
            if isinstance(value.get(member), dict):
                return value[member]
    return value


def condition(insight_value: Any, type_: str) -> JSON:
    for cond in unwrap(insight_value).get("conditions") or []:
        if cond.get("type") == type_:
            return dict(cond)
    raise KeyError(f"no {type_} condition in {insight_value}")


def upgrade_status_command(kubeconfig: str, *args: str) -> list[str]:
    """The command line of `cluster-version-operator upgrade-status` with these flags."""
    return [sys.executable, "-m", "cvo_py", "upgrade-status", "--kubeconfig", kubeconfig, *args]


def upgrade_status(kubeconfig: str, *args: str) -> str:
    """What `cluster-version-operator upgrade-status` prints (its exit code and stderr appended
    when it fails)."""
    proc = subprocess.run(upgrade_status_command(kubeconfig, *args),
                          cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    return proc.stdout + (f"\n(exit {proc.returncode}) {proc.stderr.strip()}" if proc.returncode else "")


def insight_condition(data: dict[str, str], key: str, type_: str) -> str:
    """`<status> <reason>` of an insight's condition, or "" when there is none (yet)."""
    try:
        found = condition(insight(data, key) or {}, type_)
    except (KeyError, AttributeError, yaml.YAMLError):
        return ""
    return f"{found.get('status')} {found.get('reason')}"


def node_condition(data: dict[str, str], node: str, type_: str) -> str:
    return insight_condition(data, f"usc-node-{node}", type_)


def nodes_in_phase(data: dict[str, str], phases: dict[str, str]) -> bool:
    """Whether each node's insight shows the Updating reason given (Draining, Rebooting, Completed, ...)."""
    return all(node_condition(data, n, "Updating").endswith(f" {reason}") for n, reason in phases.items())


def printable(data: dict[str, str] | None) -> str:
    if data is None:
        return "(ConfigMap does not exist)"
    return "\n".join(
        f"{k}: |\n" + "".join(f"    {line}\n" for line in v.splitlines()) if "\n" in v else f"{k}: {v}"
        for k, v in sorted(data.items())
    )


def most_in_any_window(times: Iterable[float], window: float) -> int:
    """The most of `times` (say, of writes) in any `window` seconds [t, t + window), t sliding."""
    ordered = sorted(times)
    most, first = 0, 0
    for last, when in enumerate(ordered):
        while ordered[first] <= when - window:
            first += 1
        most = max(most, last - first + 1)
    return most


def histogram_summary(text: str, name: str) -> str:
    buckets: list[tuple[str, float]] = []
    count = total = 0.0
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((le, float(line.rsplit(" ", 1)[1])))
        elif line.startswith(f"{name}_count"):
            count = float(line.rsplit(" ", 1)[1])
        elif line.startswith(f"{name}_sum"):
            total = float(line.rsplit(" ", 1)[1])
    if not count:
        return "no observations"
    cumulative = ", ".join(f"<= {le}s: {n:.0f}" for le, n in buckets if le != "+Inf")
    return f"n={count:.0f} mean={total / count * 1000:.1f} ms; {cumulative}"
