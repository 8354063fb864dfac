"""Insights → oc's text: sections, estimates, node rows and omission, health tables, detail levels."""

from __future__ import annotations

from typing import Any

import pytest

from cvo_py.runtime.gotext.durations import MINUTE
from status.updatestatus.api import configmap
from status.updatestatus.client.render import RenderError, render
from status.updatestatus.client.render.nodes import node_row
from status.updatestatus.insights import compute
from testkit.objects.insight_objects import (
    T0,
    VERSIONS,
    at,
    clusterversion,
    cond,
    entry,
    node,
    ns,
    operator,
    pool,
)

POOLS = [pool("master"), pool("worker")]
MASTERS = [node(f"m{i}", role="master", current="rendered-master-new") for i in range(3)]


def text(
    cv: dict[str, Any] | None = None,
    ops: list[dict[str, Any]] | None = None,
    nodes: list[dict[str, Any]] | None = None,
    pools: list[dict[str, Any]] | None = None,
    now: int | None = None,
    details: str = "none",
    **kw: Any,
) -> str:
    now = now if now is not None else ns(30)
    insights = compute.all_insights(
        cv or clusterversion(),
        ops if ops is not None else [operator("a")],
        nodes if nodes is not None else MASTERS,
        pools or POOLS,
        VERSIONS,
        now,
        **kw,
    )
    return render(insights, now, details)


def section(out: str, title: str) -> str:
    start = out.index(title)
    end = out.find("\n= ", start + 1)
    return out[start : end if end >= 0 else None]


def test_not_updating() -> None:
    done = [entry("4.14.1", "Completed", at(-60), at(-10)), entry("4.14.0", "Completed", at(-600), at(-500))]
    workers = [node("w1", current="rendered-worker-new")]
    assert (
        text(clusterversion(done, progressing="False"), nodes=MASTERS + workers)
        == "The cluster is not updating.\n"
    )


def test_outdated_workers_keep_showing_a_completed_control_plane() -> None:
    done = [
        entry("4.14.1", "Completed", at(-60), at(-10, 30)),
        entry("4.14.0", "Completed", at(-600), at(-500)),
    ]
    out = text(clusterversion(done, progressing="False"), nodes=MASTERS + [node("w1")])
    assert out.startswith(
        "= Control Plane =\n"
        # 50m30s rounds up
        "Update to 4.14.1 successfully completed at 2024-01-01T09:50:30Z (duration: 51m)\n"
        "\nAll control plane nodes successfully updated to 4.14.1\n"
        "\n= Worker Upgrade =\n"
    )
    assert "worker        Pending      0% (0/1)     1 Available, 0 Progressing, 0 Draining\n" in out


def updating_ops(updated: int, updating: int, ltt: str = T0) -> list[dict[str, Any]]:
    ops = [operator(f"done-{i}", ltt=ltt) for i in range(updated)]
    ops += [operator(f"busy-{i}", version="4.14.0", progressing="True", ltt=ltt) for i in range(updating)]
    return ops


@pytest.mark.parametrize(
    "now_minutes,assessment,duration",
    [
        (30, "Progressing", "30m (Est. Time Remaining: 36m)"),  # baseline 1h, nothing updated
        (65, "Progressing - Slow", "1h5m (Est. Time Remaining: <10m)"),  # est -4m10s
        (90, "Stalled", "1h30m (Est. Time Remaining: N/A; estimate duration was 1h5m)"),  # est -25m
        (2, "Progressing", "2m (Est. Time Remaining: 1h10m)"),
    ],
)
def test_assessment_and_estimate_display(now_minutes: int, assessment: str, duration: str) -> None:
    out = text(ops=updating_ops(0, 2), now=ns(now_minutes))
    assert f"Assessment:      {assessment}\n" in out
    assert f"Duration:        {duration}\n" in out
    assert "Target Version:  4.14.1 (from 4.14.0)\n" in out
    assert "Updating:        busy-0, busy-1\n" in out
    assert "Completion:      0% (0 operators updated, 2 updating, 0 waiting)\n" in out


def test_multi_arch_migration_has_no_estimate() -> None:
    history = [
        entry("4.14.1", "Partial", T0, image="multi"),
        entry("4.14.1", "Completed", at(-60), at(-1), image="x"),
    ]
    out = text(clusterversion(history), ops=updating_ops(1, 1))
    assert "Target Version:  4.14.1 to Multi-Architecture\n" in out
    assert "(Est. Time Remaining: N/A for Multi-Architecture Migration)" in out


@pytest.mark.parametrize(
    "history,target",
    [
        ([entry("4.14.1", "Partial", T0)], "4.14.1 (a new install)"),
        (
            [entry("4.14.1", "Partial", T0), entry("4.14.0", "Partial", at(-60))],
            "4.14.1 (from incomplete 4.14.0)",
        ),
    ],
)
def test_target_version_formats(history: list[dict[str, Any]], target: str) -> None:
    assert f"Target Version:  {target}\n" in text(clusterversion(history), ops=updating_ops(1, 1))


def test_operator_health_summary() -> None:
    ops = updating_ops(1, 1) + [operator("sick", available="False"), operator("sad", degraded="True")]
    out = text(ops=ops)
    assert "Operator Health: 2 Healthy, 1 Unavailable, 1 Available but degraded\n" in out


def test_updating_operators_table() -> None:
    ops = [
        operator("a"),
        operator(
            "kube-apiserver",
            version="4.14.0",
            progressing="True",
            ltt=at(28),
            reason="NodeInstaller::PendingRevision",
            message="first line\nsecond line",
        ),
        operator("dns", version="4.14.0", progressing="True", ltt=at(29, 30), reason="", message="one"),
    ]
    out = text(ops=ops, now=ns(30) + 368_975, details="operators")
    assert section(out, "Updating Cluster Operators").startswith(
        "Updating Cluster Operators\n"
        "NAME             SINCE   REASON                 MESSAGE\n"
        "kube-apiserver   2m      NodeInstaller::Pe...   first line\n"
        "                                                second line\n"
        "dns              30s     -                      one\n"
    )
    assert "Updating Cluster Operators" not in text(ops=ops, details="nodes")


def test_operators_table_shows_oc_sub_second_quirk() -> None:
    # the updating operator's Progressing time is "now" minus 368975 ns: oc prints 6m8s
    ops = [operator("a"), operator("b", version="4.14.0", progressing="True", ltt=at(30))]
    out = text(ops=ops, now=ns(30) + 368_975, details="all")
    assert "\nb      6m8s    -        \n" in out


def test_node_rows_sorted_by_assessment_phase_name() -> None:
    workers = [
        node("w-pending"),
        node("w-done", current="rendered-worker-new"),
        node(
            "w-drain",
            desired="rendered-worker-new",
            state="Working",
            desired_drain="drain-rendered-worker-new",
        ),
        node(
            "w-degraded", desired="rendered-worker-new", state="Degraded", reason="disk on w-degraded failed"
        ),
        node("w-down", ready="False", ready_ltt=at(-60)),
    ]
    out = text(ops=updating_ops(1, 1), nodes=MASTERS + workers)
    assert section(out, "Worker Pool Nodes: worker") == (
        "Worker Pool Nodes: worker\n"
        "NAME         ASSESSMENT    PHASE      VERSION   EST    MESSAGE\n"
        "w-degraded   Degraded      Updating   4.14.0    ?      disk on <node> failed\n"
        "w-down       Unavailable   Pending    4.14.0    ?      Not ready\n"
        "w-drain      Progressing   Draining   4.14.0    +10m   \n"
        "w-pending    Outdated      Pending    4.14.0    ?      \n"
        "w-done       Completed     Updated    4.14.1    -      \n"
    )
    assert (
        "worker        Degraded     20% (1/5)    3 Available, 1 Progressing, 1 Draining, 1 Degraded\n" in out
    )


@pytest.mark.parametrize("name,shown", [("w1", "failed on w1"), ("worker-01", "failed on <node>")])
def test_node_name_shortened_in_messages_only_when_long(name: str, shown: str) -> None:
    insights = compute.node_insights(
        [node(name, desired="rendered-worker-new", state="Degraded", reason=f"failed on {name}")],
        POOLS,
        VERSIONS,
        ns(1),
        cv=clusterversion(),
    )
    (row,) = [node_row(i) for i in insights if type(i).__name__ == "NodeStatusInsight"]
    assert row.message == shown


def test_nodes_beyond_ten_are_omitted_unless_they_need_attention() -> None:
    workers = [node(f"w{i:02d}") for i in range(12)]
    workers += [
        node("w90", desired="rendered-worker-new", state="Working", desired_drain="drain-rendered-worker-new")
    ]
    workers += [node("w99", ready="False", ready_ltt=at(-60))]  # unavailable: always shown
    out = text(ops=updating_ops(1, 1), nodes=MASTERS + workers)
    table = section(out, "Worker Pool Nodes: worker")
    assert "\nw99    Unavailable   Pending" in table and "\nw90    Progressing" in table
    assert table.count("   Outdated   ") == 8  # 10 shown in the first rows: w99, w90, then w00..w07
    assert table.endswith(
        "...\n"
        "Omitted additional 4 Total, 0 Completed, 4 Available, 0 Progressing, 4 Outdated, 0 Draining, "
        "0 Excluded, and 0 Degraded nodes.\n"
        "Pass along --details=nodes to see all information.\n"
    )
    detailed = section(
        text(ops=updating_ops(1, 1), nodes=MASTERS + workers, details="nodes"), "Worker Pool Nodes"
    )
    assert "Omitted" not in detailed and "w11 " in detailed


def test_empty_worker_pool_row() -> None:
    pools = POOLS + [pool("infra")]
    out = text(ops=updating_ops(1, 1), nodes=MASTERS + [node("w1")], pools=pools)
    assert "infra         Empty                     0 Total\n" in out


def test_update_health_table_and_fallback() -> None:
    out = text(ops=updating_ops(1, 1), now=ns(14, 4))
    assert out.endswith(
        "= Update Health =\n"
        "SINCE   LEVEL   IMPACT   MESSAGE\n"
        "14m4s   Info    None     Update is proceeding well\n"
    )
    out = text(
        ops=updating_ops(1, 1) + [operator("etcd", degraded="True", degraded_ltt=at(-50))], now=ns(14, 4)
    )
    assert section(out, "= Update Health =") == (
        "= Update Health =\n"
        "SINCE    LEVEL   IMPACT             MESSAGE\n"
        "1h4m4s   Error   API Availability   Cluster Operator etcd is degraded (DegReason)\n"
        "\nRun with --details=health for additional description and links to related online documentation\n"
    )


def test_health_sorted_by_level_then_newest() -> None:
    ops = updating_ops(1, 1) + [
        operator("old", degraded="True", degraded_ltt=at(-30)),
        operator("new", degraded="True", degraded_ltt=at(-10)),
        operator("worst", available="False", available_ltt=at(-60)),
    ]
    workers = [node("w1", desired="rendered-worker-new", state="Degraded", reason="r")]
    out = text(ops=ops, nodes=MASTERS + workers, now=ns(0))
    assert section(out, "= Update Health =").splitlines()[1:6] == [
        "SINCE   LEVEL     IMPACT             MESSAGE",
        "1h      Error     API Availability   Cluster Operator worst is unavailable (AvailReason)",
        "-       Error     Update Stalled     Node w1 is degraded",  # unknown start: last of its level
        "10m     Warning   API Availability   Cluster Operator new is degraded (DegReason)",
        "30m     Warning   API Availability   Cluster Operator old is degraded (DegReason)",
    ]


def test_detailed_health_format() -> None:
    workers = [node("w1", desired="rendered-worker-new", state="Degraded", reason="line one\nline two")]
    out = text(ops=updating_ops(1, 1), nodes=MASTERS + workers, details="health")
    assert section(out, "= Update Health =") == (
        "= Update Health =\n"
        "Message: Node w1 is degraded\n"
        "  Since:       -\n"
        "  Level:       Error\n"
        "  Impact:      Update Stalled\n"
        "  Reference:   https://docs.openshift.com/container-platform/latest/post_installation_configuration/"
        "machine-configuration-tasks.html#understanding-the-machine-config-operator\n"
        "  Resources:\n"
        "    nodes: w1\n"
        "  Description: line one\n"
        "               , line two\n"
    )


def test_alert_resources_show_namespace() -> None:
    alerts = {
        "data": {
            "alerts": [
                {
                    "labels": {"alertname": "X", "severity": "warning", "namespace": "ns1"},
                    "annotations": {"summary": "s"},
                    "state": "firing",
                    "activeAt": at(1),
                }
            ]
        }
    }
    out = text(ops=updating_ops(1, 1), details="all", alerts=alerts)
    assert "    alerts.config.openshift.io: ns1/X\n" in out


@pytest.mark.parametrize("details", ["none", "all", "nodes", "health", "operators"])
def test_every_details_value_renders(details: str) -> None:
    assert text(ops=updating_ops(1, 1), details=details).startswith("= Control Plane =\n")


def test_bad_details_value() -> None:
    with pytest.raises(RenderError, match="invalid value for --details: everything"):
        text(details="everything")


def test_missing_clusterversion_progressing_or_operators_is_an_error() -> None:
    with pytest.raises(RenderError, match="no cluster version information"):
        render([], ns(0))
    insights = compute.all_insights(
        clusterversion(progressing=None), [operator("a")], [], POOLS, VERSIONS, ns(0)
    )
    with pytest.raises(RenderError, match="no current Progressing info"):
        render(insights, ns(0))
    no_operators = compute.all_insights(clusterversion(), [], [], POOLS, VERSIONS, ns(0))
    with pytest.raises(RenderError, match="no cluster operator information available"):
        render(no_operators, ns(0))


def test_renders_the_same_from_the_configmap() -> None:
    workers = [
        node("w1", ready="False", ready_ltt=at(-30)),
        node("w2", unschedulable=True, extra_conditions=[cond("DiskPressure", "True")]),
    ]
    ops = updating_ops(2, 1) + [operator("etcd", degraded="True", degraded_ltt=at(-40))]
    insights = compute.all_insights(clusterversion(), ops, MASTERS + workers, POOLS, VERSIONS, ns(30))
    decoded = configmap.decode(configmap.encode(insights))
    for details in ("none", "all"):
        assert render(decoded, ns(30), details) == render(
            configmap.canonical_order(insights), ns(30), details
        )


def test_estimate_in_node_rows_uses_short_durations() -> None:
    n = compute.node_insights(
        [node("w1", desired="rendered-worker-new", state="Rebooting")],
        POOLS,
        VERSIONS,
        ns(0),
        cv=clusterversion(),
    )
    (insight,) = [i for i in n if type(i).__name__ == "NodeStatusInsight"]
    row = node_row(insight)  # type: ignore[arg-type]
    assert insight.est_to_complete == 5 * MINUTE  # type: ignore[union-attr]
    assert (row.phase, row.assessment, row.est) == ("Rebooting", "Progressing", "+5m")


def test_a_multi_line_node_message_ends_the_column_block_as_in_oc() -> None:
    """oc hands the MCD's reason to Go's tab writer as it is: its continuation lines have no tabs,
    so they end the column block and the rows after them are aligned on their own widths."""
    pull_failure = (
        "failed to pull image: podman pull failed: exit status 125\n"
        'Error: initializing source docker://quay.io/x: pinging container registry: "\x1b[31mi/o timeout"'
    )
    workers = [
        node("w-degraded-node", desired="rendered-worker-new", state="Degraded", reason=pull_failure),
        node("w-pending"),
        node("w-done", current="rendered-worker-new"),
    ]
    out = text(ops=updating_ops(1, 1), nodes=MASTERS + workers)
    assert section(out, "Worker Pool Nodes: worker") == (
        "Worker Pool Nodes: worker\n"
        "NAME              ASSESSMENT   PHASE      VERSION   EST   MESSAGE\n"
        "w-degraded-node   Degraded     Updating   4.14.0    ?     failed to pull image: podman pull failed: "
        "exit status 125\n"
        'Error: initializing source docker://quay.io/x: pinging container registry: "\\x1b[31mi/o timeout"\n'
        "w-pending   Outdated    Pending   4.14.0   ?   \n"
        "w-done      Completed   Updated   4.14.1   -   \n"
    )


def test_rendering_again_with_a_memo_of_rows_gives_what_rendering_afresh_gives() -> None:
    """`upgrade-status --watch` renders the same insight objects again and again, a changed node's
    insight being a new object: the rows it remembers are those of the very objects it is given."""
    import json

    from status.updatestatus.api import wire
    from status.updatestatus.client.render import RowMemo
    from testkit.objects.synthetic import synthetic_cluster

    cv, nodes, pools, versions = synthetic_cluster(60, 3)
    ops = [operator("etcd", degraded="True"), operator("dns", version="4.14.0", progressing="True")]
    data = configmap.encode(compute.all_insights(cv, ops, nodes, pools, versions, ns(1)))
    cache: wire.Reads = {}
    memo = RowMemo()
    workers = sorted(
        k
        for k, v in data.items()
        if k.startswith(configmap.PREFIX_NODE) and json.loads(v)["poolResource"]["name"] != "master"
    )
    for step, key in enumerate(workers[:12]):  # shown in a table (the control plane pool is done)
        value = json.loads(data[key])
        value["version"] = f"4.14.0-step{step}"
        data = {**data, key: json.dumps(value)}
        insights, errors = wire.decode_readable(data, cache=cache)
        assert errors == []
        for details in ("all", "none"):
            assert render(insights, ns(2), details, memo=memo) == render(insights, ns(2), details)
        assert f"4.14.0-step{step}" in render(insights, ns(2), "all", memo=memo)
