"""`cluster-version-operator upgrade-status`: snapshot mode, live mode over the ConfigMap API, bad input."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cvo_py.cli import main as cli
from cvo_py.runtime.gotext.durations import MINUTE, SECOND
from cvo_py.runtime.gotext.times import format_time, parse_time
from cvo_py.runtime.kube import CONFIGMAPS, LEASES, ApiError, KubeClient
from status.updatestatus.api import configmap, metadata
from status.updatestatus.api.metadata import META_KEY
from status.updatestatus.api.names import NAMESPACE
from status.updatestatus.client import live as published
from status.updatestatus.client import snapshot
from status.updatestatus.client.render import render
from status.updatestatus.insights import compute
from status.updatestatus.insights.plain import Insight
from testkit.checkout import EXAMPLES
from testkit.harness import cluster as local
from testkit.harness import manifests
from testkit.harness.terminal import as_typed
from testkit.harness.wait import wait_until
from testkit.objects.insight_objects import at, clusterversion, node, operator, pool, write_snapshot


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`upgrade-status ARGS`; live, from the controller's publication (what these tests are about)."""
    live = "--kubeconfig" in args and "--source" not in args
    code = cli.main(["upgrade-status", *args, *(["--source", "controller"] if live else [])])
    out, err = capsys.readouterr()
    return code, out, err


def updating_snapshot(tmp_path: Path) -> Path:
    ops = {
        "kind": "List",
        "items": [operator("a", ltt=at(10)), operator("b", version="4.14.0", progressing="True")],
    }
    nodes = {
        "kind": "List",
        "items": [node("m1", role="master"), node("w1", ready="False", ready_ltt=at(-30))],
    }
    mcs = {
        "kind": "List",
        "items": [
            {
                "kind": "MachineConfig",
                "metadata": {
                    "name": n,
                    "annotations": {"machineconfiguration.openshift.io/release-image-version": v},
                },
            }
            for n, v in (("rendered-master-old", "4.14.0"), ("rendered-worker-old", "4.14.0"))
        ],
    }
    return write_snapshot(tmp_path, **{"-co.yaml": ops, "-node.yaml": nodes, "-mc.yaml": mcs})


@pytest.mark.parametrize("details,suffix", [("none", ".output"), ("all", ".detailed-output")])
def test_snapshot_mode_prints_what_oc_prints(capsys: pytest.CaptureFixture[str], details: str, suffix: str) -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found (looked in {EXAMPLES.resolve()})")
    name = "4.14.1-degraded"
    code, out, err = run(capsys, "--mock-clusterversion", str(EXAMPLES / f"{name}-cv.yaml"), "--details", details)
    assert (code, err) == (0, "")
    assert out == (EXAMPLES / f"{name}{suffix}").read_text()


def test_snapshot_mode_defaults_now_to_the_snapshot_rule(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cv = updating_snapshot(tmp_path)
    code, out, _ = run(capsys, "--mock-clusterversion", str(cv))
    assert code == 0
    assert "Duration:        10m" in out  # newest condition is 10 minutes after the update started
    code, later, _ = run(capsys, "--mock-clusterversion", str(cv), "--now", at(45))
    assert code == 0 and "Duration:        45m" in later
    assert "Node w1 is not ready" in later


@pytest.mark.parametrize(
    "args,message",
    [
        (["--details", "everything"], "invalid value for --details: everything"),
        (["--now", "yesterday"], "--now: invalid RFC 3339 timestamp"),
        (["--mock-clusterversion", "/nowhere/x.yaml"], "must name a NAME-cv.yaml file"),
        (["--watch", "--mock-clusterversion", "/x/a-cv.yaml"], "--watch follows a live cluster"),
        (["--watch", "--from", "/x/must-gather"], "--watch follows a live cluster"),
        (["--watch", "--now", "2024-01-01T00:00:00Z"], "it cannot be used with --now"),
        (["--namespace", "moved", "--from", "/x/must-gather"], "--namespace names where a live cluster publishes"),
        (["--namespace", "moved", "--mock-clusterversion", "/x/a-cv.yaml"], "it cannot be used with --from or"),
        (["--namespace", "Not_A_Label"], 'invalid --namespace "Not_A_Label": want a DNS label'),
        (["--watch", "--namespace", "caf\u00e9"], 'invalid --namespace "caf\u00e9": want a DNS label'),
    ],
)
def test_bad_flags_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_namespace_defaults_to_where_the_controller_publishes_by_default() -> None:
    from cvo_py.cli import update_status_controller, upgrade_status
    from cvo_py.cli.main import build_parser

    def options(*args: str) -> upgrade_status.Options:
        return upgrade_status.validate(build_parser().parse_args(["upgrade-status", *args]))

    assert options().namespace == NAMESPACE == update_status_controller.DEFAULT_NAMESPACE
    assert options("--namespace", "moved-0").namespace == "moved-0"
    assert options("--watch", "--namespace", "moved-0").namespace == "moved-0"


@pytest.mark.parametrize("value", ["", "Not_A_Label", "caf\u00e9", "\u0663", "a" * 64, "-a", "a-", "a.b", "a\nb"])
def test_both_commands_refuse_the_same_namespaces_with_the_same_line(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    lines = set()
    for command in ("upgrade-status", "update-status-controller"):
        code = cli.main([command, f"--namespace={value}"])
        out, err = capsys.readouterr()
        assert (code, out) == (2, ""), command
        assert err.count("\n") == 1 and "want a DNS label" in err, (command, err)
        lines.add(err.split(f"{command}: ", 1)[1])  # after the program and command name
    assert len(lines) == 1, lines


def test_missing_snapshot_file_exits_2_naming_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cv = updating_snapshot(tmp_path)
    (tmp_path / "x-mcp.yaml").unlink()
    code, out, err = run(capsys, "--mock-clusterversion", str(cv))
    assert (code, out) == (2, "")
    assert err == f"error: {tmp_path / 'x-mcp.yaml'}: file not found\n"


def test_malformed_object_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = clusterversion()
    bad["status"]["history"][0]["startedTime"] = "not a time"
    cv = write_snapshot(tmp_path, **{"-cv.yaml": bad})
    code, _, err = run(capsys, "--mock-clusterversion", str(cv))
    assert code == 2 and "x-cv.yaml" in err and 'invalid RFC 3339 timestamp "not a time"' in err
    assert err.count("\n") == 1


# --- live: the ConfigMap API on the real API server ---------------------------------------------


@pytest.fixture
def status_configmaps(kube: KubeClient) -> Iterator[list[str]]:
    """The fixed namespace of the API; the ConfigMaps created here are removed afterwards. No
    controller's Lease (one released by an earlier test would be warned about)."""
    local.ensure_namespace(kube, configmap.NAMESPACE)
    try:
        kube.delete(LEASES, metadata.LEASE, namespace=configmap.NAMESPACE)
    except ApiError as exc:
        if not exc.is_not_found():
            raise
    created: list[str] = []
    yield created
    for name in created:
        try:
            kube.delete(CONFIGMAPS, name, namespace=configmap.NAMESPACE)
        except ApiError:
            pass


def _put(kube: KubeClient, name: str, data: dict[str, str]) -> None:
    body = {"metadata": {"name": name, "namespace": configmap.NAMESPACE}, "data": data}
    try:
        kube.delete(CONFIGMAPS, name, namespace=configmap.NAMESPACE)
    except ApiError:
        pass
    kube.create(CONFIGMAPS, body, namespace=configmap.NAMESPACE)


def updating_insights(tmp_path: Path) -> tuple[Path, list[Insight], int]:
    """The updating example snapshot written out, and its insights at its own "now"."""
    cv_path = updating_snapshot(tmp_path)
    snap = snapshot.load(cv_path)
    now = snap.mock_now()
    insights = compute.all_insights(
        snap.clusterversion, snap.operators, snap.nodes, snap.pools, snap.machineconfig_versions(), now
    )
    return cv_path, insights, now


def test_live_mode_reads_the_configmap_and_its_shards(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    cluster: local.LocalCluster,
    kube: KubeClient,
    status_configmaps: list[str],
) -> None:
    cv_path, insights, now = updating_insights(tmp_path)
    # a budget just above the control-plane insights forces node insights into shards, as at 5,000 nodes
    data = configmap.encode(insights)
    budget = configmap.data_size({k: v for k, v in data.items() if not k.startswith("usc-node-")}) + 64
    plan = configmap.plan(data, budget=budget)
    assert plan.shards >= 1 and plan.ok, plan.problems
    for name, data in plan.configmaps.items():
        status_configmaps.append(name)
        if name == configmap.CONFIGMAP:  # fresh, complete data, as the controller publishes it
            data = {**data, META_KEY: metadata.encode(metadata.build(now, "usc-0", "0.1.0", 30 * SECOND, []))}
        _put(kube, name, data)

    now_text = "--now=" + format_time(now)
    for details in ("none", "all"):
        code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig, now_text, "--details", details)
        assert (code, err) == (0, "")
        _, from_snapshot, _ = run(capsys, "--mock-clusterversion", str(cv_path), "--details", details)
        assert out == from_snapshot == render(insights, now, details)


@dataclass(frozen=True)
class Sharded:
    insights: list[Insight]
    now: int
    shards: list[str]


@pytest.fixture
def sharded(tmp_path: Path, kube: KubeClient, status_configmaps: list[str]) -> Sharded:
    """The updating example's insights with the node insights spread over two shards (a key may
    live in any listed shard)."""
    _, insights, now = updating_insights(tmp_path)
    data = configmap.encode(insights)
    nodes = sorted(k for k in data if k.startswith(configmap.PREFIX_NODE))
    assert len(nodes) >= 2
    shards = [configmap.shard_name(0), configmap.shard_name(1)]
    main = {k: v for k, v in data.items() if k not in nodes}
    main[META_KEY] = metadata.encode(metadata.build(now, "usc-0", "0.1.0", 30 * SECOND, []))
    main[configmap.SHARDS_KEY] = json.dumps(shards)
    for name, values in (
        (configmap.CONFIGMAP, main),
        (shards[0], {k: data[k] for k in nodes[::2]}),
        (shards[1], {k: data[k] for k in nodes[1::2]}),
    ):
        status_configmaps.append(name)
        _put(kube, name, values)
    return Sharded(insights, now, shards)


@pytest.mark.parametrize("page", [1, 2, published.LIST_PAGE])
def test_live_mode_reads_by_name_what_one_page_of_the_list_lacks(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cluster: local.LocalCluster,
    sharded: Sharded,
    page: int,
) -> None:
    monkeypatch.setattr(published, "LIST_PAGE", page)  # a namespace holding more ConfigMaps than a page
    now = "--now=" + format_time(sharded.now)
    code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig, now, "--details=all")
    assert (code, err) == (0, "")
    assert out == render(sharded.insights, sharded.now, "all")


@pytest.mark.parametrize("page", [1, published.LIST_PAGE])
def test_live_mode_with_a_listed_shard_missing_prints_the_rest_and_warns(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cluster: local.LocalCluster,
    kube: KubeClient,
    sharded: Sharded,
    page: int,
) -> None:
    missing = sharded.shards[-1]
    lost, _ = configmap.decode_readable(kube.get(CONFIGMAPS, missing, namespace=configmap.NAMESPACE)["data"])
    assert lost
    kube.delete(CONFIGMAPS, missing, namespace=configmap.NAMESPACE)
    monkeypatch.setattr(published, "LIST_PAGE", page)
    code, out, err = run(
        capsys, "--kubeconfig", cluster.kubeconfig, "--now=" + format_time(sharded.now), "--details=all"
    )
    problem = (
        f"ConfigMap {configmap.NAMESPACE}/{missing} (a listed shard) does not exist: "
        "the insights it holds are not shown"
    )
    assert (code, err) == (0, f"warning: {problem}\n")  # partial data, not a failure
    kept = [i for i in sharded.insights if i not in lost]
    expected = render(kept, sharded.now, "all", caveat=metadata.health_caveat([problem]))
    assert out == f"warning: {problem}\n" + expected  # what the other ConfigMaps hold, and the warning


def test_live_mode_for_a_reader_who_may_only_get_configmaps_reads_them_by_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cluster: local.LocalCluster, kube: KubeClient, sharded: Sharded
) -> None:
    insights, now, shards = sharded.insights, sharded.now, sharded.shards
    reader = "insights-getter"
    rbac = [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": reader, "namespace": configmap.NAMESPACE},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["configmaps"],
                    "verbs": ["get"],
                    "resourceNames": [configmap.CONFIGMAP, *shards],
                },
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": reader, "namespace": configmap.NAMESPACE},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": reader},
            "subjects": [{"kind": "ServiceAccount", "name": reader, "namespace": configmap.NAMESPACE}],
        },
    ]
    manifests.apply(kube, rbac)
    try:
        kubeconfig = cluster.write_kubeconfig(
            tmp_path / "getter.kubeconfig", cluster.service_account_token(configmap.NAMESPACE, reader)
        )
        args = ("--kubeconfig", kubeconfig, "--now=" + format_time(now), "--details=all")

        def first_read() -> tuple[int, str, str] | None:  # RBAC reaches the authorizer shortly after it is written
            result = run(capsys, *args)
            return result if result[0] == 0 else None

        code, out, err = wait_until(first_read, what="the reader's first read")
    finally:
        manifests.delete(kube, rbac)
    assert err == ""
    assert out == render(insights, now, "all")


def test_live_mode_without_the_configmap_says_so(
    capsys: pytest.CaptureFixture[str],
    cluster: local.LocalCluster,
    kube: KubeClient,
    status_configmaps: list[str],
) -> None:
    try:
        kube.delete(CONFIGMAPS, configmap.CONFIGMAP, namespace=configmap.NAMESPACE)
    except ApiError:
        pass
    code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig)
    assert (code, out) == (1, "")
    assert "status-api-cm-prototype does not exist" in err and err.count("\n") == 1


def test_pools_listed_by_name_match_the_live_order() -> None:
    # a live cluster lists pools by name; decode restores that order whatever the write order
    insights = compute.all_insights(
        clusterversion(),
        [operator("a")],
        [node("w1", labels={"node-role.kubernetes.io/infra": ""})],
        [pool("worker"), pool("master"), pool("infra")],
        {},
        0,
    )
    decoded = configmap.decode(configmap.encode(insights))
    assert [getattr(i, "name", "") for i in decoded if type(i).__name__ == "MachineConfigPoolStatusInsight"] == [
        "infra",
        "master",
        "worker",
    ]


def _published_with_hostile_values(
    kube: KubeClient, status_configmaps: list[str], tmp_path: Path, hostile: Callable[[str], dict[str, str]]
) -> tuple[str, int, dict[str, str]]:
    """The updating example's insights published with `hostile(a node's key)` over them: that key,
    the example's now, and the data without the node's key (what stays readable)."""
    _, insights, now = updating_insights(tmp_path)
    data = configmap.encode(insights)
    node_key = next(k for k in data if k.startswith("usc-node-"))
    readable = {k: v for k, v in data.items() if k != node_key}
    data.update(hostile(node_key))
    status_configmaps.append(configmap.CONFIGMAP)
    _put(kube, configmap.CONFIGMAP, data)
    return node_key, now, readable


def test_live_mode_renders_readable_keys_and_warns_about_unreadable_ones(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    cluster: local.LocalCluster,
    kube: KubeClient,
    status_configmaps: list[str],
) -> None:
    from testkit.corpus import values

    def hostile(node_key: str) -> dict[str, str]:
        # the first would crash a recursive loader
        return {node_key: "a: " + values.deep_flow(40_000), "usc-co-forged": values.alias_bomb()}

    node_key, now, readable = _published_with_hostile_values(kube, status_configmaps, tmp_path, hostile)

    code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig, "--now=" + format_time(now))
    assert code == 0, err
    warnings = [
        "warning: unreadable, not shown: ConfigMap key usc-co-forged: "
        "aliases expand to more than 10000 nodes at line 1",
        f"warning: unreadable, not shown: ConfigMap key {node_key}: nested more than 128 levels deep at line 1",
    ]
    shown = [line for line in out.splitlines() if line.startswith("warning: unreadable")]
    assert shown == warnings
    assert [line for line in err.splitlines() if line.startswith("warning: unreadable")] == warnings
    # Everything readable is rendered (under the warnings, which also say the health is not known).
    assert "Update health is not known" in out
    body = render(configmap.decode(readable), now, "none")
    assert body.split("= Update Health =")[0] in out


def test_live_mode_says_in_one_line_each_which_tagged_keys_it_cannot_read(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    cluster: local.LocalCluster,
    kube: KubeClient,
    status_configmaps: list[str],
) -> None:
    """A standard tag on text it cannot hold, under each kind of key (it once raised KeyError or
    IndexError out of the loader: a traceback and exit 1)."""

    def hostile(node_key: str) -> dict[str, str]:
        return {
            node_key: "!!float ''",
            "usc-co-forged": "!!bool maybe",
            META_KEY: "!!int '-'",
            configmap.SHARDS_KEY: "!<tag:yaml.org,2002:int> ''",
        }

    node_key, now, _ = _published_with_hostile_values(kube, status_configmaps, tmp_path, hostile)

    code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig, "--now=" + format_time(now))
    assert code == 0, err
    assert "Traceback" not in err and "Error" not in err, err
    assert _warnings(out) == _warnings(err)
    warnings = "\n".join(_warnings(err))
    for line in (
        f'ConfigMap key {META_KEY}: !!int cannot hold "-" at line 1',
        f'ConfigMap key {configmap.SHARDS_KEY}: !!int cannot hold "" at line 1',
        'unreadable, not shown: ConfigMap key usc-co-forged: !!bool cannot hold "maybe" at line 1',
        f'unreadable, not shown: ConfigMap key {node_key}: !!float cannot hold "" at line 1',
    ):
        assert line in warnings, warnings
    assert "Update health is not known" in out


def _publish(kube: KubeClient, status_configmaps: list[str], data: dict[str, str]) -> None:
    status_configmaps.append(configmap.CONFIGMAP)
    _put(kube, configmap.CONFIGMAP, data)


def _healthy_update() -> tuple[list[object], int]:
    """An update in progress with nothing wrong: oc would say "Update is proceeding well"."""
    now = parse_time(at(20))
    insights = compute.all_insights(clusterversion(), [operator("a")], [], [pool("master")], {}, now)
    assert "Update is proceeding well" in render(insights, now)
    return insights, now


def _warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("warning: ")]


def test_live_mode_warns_about_stale_insights_and_never_says_proceeding_well(
    capsys: pytest.CaptureFixture[str], cluster: local.LocalCluster, kube: KubeClient, status_configmaps: list[str]
) -> None:
    insights, now = _healthy_update()
    computed = now - 10 * MINUTE  # the controller stopped 10 minutes ago; it resyncs every 30 s
    meta = metadata.build(computed, "usc-0", "0.1.0", 30 * SECOND, [])
    _publish(kube, status_configmaps, {**configmap.encode(insights), META_KEY: metadata.encode(meta)})
    for details in ("none", "health"):
        now_text = "--now=" + format_time(now)
        code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig, now_text, "--details", details)
        assert code == 0, err
        [warning] = _warnings(out)
        assert out.startswith(warning + "\n"), "warnings come first"
        assert "the insights are stale: computed 10m ago" in warning and "resync period (30s)" in warning
        assert err == warning + "\n", "each warning once on stderr"
        assert "Update is proceeding well" not in out
        assert "Update health is not known" in out


def test_live_mode_without_metadata_warns(
    capsys: pytest.CaptureFixture[str], cluster: local.LocalCluster, kube: KubeClient, status_configmaps: list[str]
) -> None:
    insights, now = _healthy_update()
    _publish(kube, status_configmaps, configmap.encode(insights))
    code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig, "--now", format_time(now))
    assert code == 0
    assert _warnings(out) == _warnings(err) and "has no usc-meta key" in err
    assert "Update is proceeding well" not in out


def test_live_mode_says_what_was_omitted_and_that_counts_are_partial(
    capsys: pytest.CaptureFixture[str], cluster: local.LocalCluster, kube: KubeClient, status_configmaps: list[str]
) -> None:
    insights, now = _healthy_update()
    omitted = ["usc-co-etcd", "usc-health-co-etcd-degraded", "usc-node-w1", "usc-node-w2"]
    meta = metadata.build(now - SECOND, "usc-0", "0.1.0", 30 * SECOND, omitted)
    _publish(kube, status_configmaps, {**configmap.encode(insights), META_KEY: metadata.encode(meta)})
    code, out, err = run(capsys, "--kubeconfig", cluster.kubeconfig, "--now", format_time(now))
    assert code == 0
    [warning] = _warnings(out)
    assert "4 insights were omitted" in warning and "1 ClusterOperator, 1 Health, 2 Node" in warning
    assert "partial" in warning and "Update is proceeding well" not in out


class SilentServer:
    """A server that accepts connections and never answers: every read stays in flight."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.setblocking(False)
        self.held: list[socket.socket] = []

    def connections(self) -> int:
        """Connections accepted so far (kept open, never answered)."""
        try:
            while True:
                self.held.append(self.listener.accept()[0])
        except BlockingIOError:
            pass
        return len(self.held)

    def close(self) -> None:
        for conn in [*self.held, self.listener]:
            conn.close()


def test_ctrl_c_while_the_server_does_not_answer_ends_at_once(tmp_path: Path) -> None:
    silent = SilentServer()
    kubeconfig = tmp_path / "silent.kubeconfig"
    server = f"https://127.0.0.1:{silent.listener.getsockname()[1]}"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    command = as_typed([sys.executable, "-m", "cvo_py", "upgrade-status", "--kubeconfig", str(kubeconfig)])
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(silent.connections, what="the command's reads to reach the server")
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        out, err = process.communicate(timeout=20)
        ended_after = time.monotonic() - started
        # the reads in flight are abandoned, not waited for (the client would wait 10 s for a TLS
        # handshake, 30 s for an answer)
        assert ended_after < 10, (ended_after, err)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        silent.close()
    assert (process.returncode, out, err) == (130, "", ""), f"after {ended_after:.1f}s: {err}"


def test_live_reads_can_start_before_the_models_load() -> None:
    # what `upgrade-status` imports before its requests leave: the flag check, the client, the reader
    probe = (
        "import sys\n"
        "from cvo_py.cli import main, upgrade_status\n"
        "from status.updatestatus.client import details, live as published\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout == "[]\n", done.stdout
