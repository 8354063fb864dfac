"""The ConfigMap wire format: keys, values, round trips, errors, and sharding at 5,000 nodes."""

from __future__ import annotations

import json
import re
import types
import typing
from enum import StrEnum
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from status.updatestatus.api import configmap, wire
from status.updatestatus.client import snapshot
from status.updatestatus.insights import compute, models
from status.updatestatus.insights.kinds import HealthInsightShape, NodeInsightShape
from status.updatestatus.insights.models import (
    HealthInsight,
    ImpactLevel,
    ImpactType,
    InsightImpact,
    InsightRemediation,
    InsightScope,
    ResourceRef,
    ScopeType,
)
from testkit.checkout import EXAMPLES
from testkit.objects.insight_models import model_of
from testkit.objects.insight_objects import (
    VERSIONS,
    at,
    clusterversion,
    node,
    ns,
    pool,
    sample_insights,
)
from testkit.objects.synthetic import synthetic_cluster

KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
MODEL_OF_PREFIX: dict[str, type[BaseModel]] = {prefix: getattr(models, name) for prefix, name in wire.KINDS.items()}


def sample() -> list[Any]:
    return sample_insights()


def test_keys_identify_the_resource_and_are_valid() -> None:
    data = configmap.encode(sample())
    assert {
        "usc-cv-version",
        "usc-co-etcd",
        "usc-co-dns",
        "usc-mcp-master",
        "usc-mcp-worker",
        "usc-node-m1",
        "usc-node-w1",
        "usc-node-w2",
    } <= set(data)
    assert any(k.startswith("usc-health-co-etcd-degraded") for k in data)
    for key in data:
        assert KEY.match(key) and len(key) <= 253, key


def test_long_names_get_short_unique_keys() -> None:
    long_a, long_b = "a" * 250 + ".x", "a" * 250 + ".y"
    insights = [
        i
        for i in compute.node_insights(
            [node(long_a), node(long_b)],
            [pool("master"), pool("worker")],
            VERSIONS,
            ns(1),
            cv=clusterversion(),
        )
        if isinstance(i, NodeInsightShape)
    ]
    keys = [configmap.key_of(i) for i in insights]
    assert len(set(keys)) == 2 and all(len(k) <= 253 and KEY.match(k) for k in keys)
    assert {i.name for i in configmap.decode(configmap.encode(insights)) if isinstance(i, NodeInsightShape)} == {
        long_a,
        long_b,
    }


def test_values_use_the_api_json_names() -> None:
    data = configmap.encode(sample())
    cv = yaml.safe_load(data["usc-cv-version"])
    assert {"conditions", "resource", "assessment", "versions", "completion", "startedAt"} <= set(cv)
    n = yaml.safe_load(data["usc-node-w1"])  # one-line JSON, which is YAML too
    assert {"poolResource", "scopeType"} <= set(n) and "estToComplete" not in n  # unknown estimate: omitted
    assert yaml.safe_load(data["usc-node-m1"])["estToComplete"] == "0s"
    assert n["conditions"][1]["lastTransitionTime"] == at(-30)
    assert "\n" not in data["usc-node-w1"]
    health = [yaml.safe_load(v) for k, v in data.items() if k.startswith("usc-health-")]
    assert all({"uid", "startedAt", "scope", "impact", "remediation"} <= set(h) for h in health)


def test_round_trip_keeps_every_field_including_nanoseconds() -> None:
    insights = sample()
    back = configmap.decode(configmap.encode(insights))
    assert sorted(back, key=configmap.key_of) == sorted(insights, key=configmap.key_of)
    assert all(type(i).__module__ == models.__name__ for i in back)


def test_decode_ignores_keys_it_does_not_own() -> None:
    data = configmap.encode(sample())
    data["admin-notes"] = "hello"
    data["usc-future-kind-x"] = "whatever: 1"
    assert len(configmap.decode(data)) == len(sample())


@pytest.mark.parametrize(
    "value,message",
    [
        ("[not, a, mapping]", "expected a mapping"),
        ("{unclosed", "cannot parse at line"),
        ("conditions: []\nname: x\n", "resource"),
        ("name: x\nresource: {resource: clusteroperators, name: x}\nbogus: 1\n", "bogus"),
    ],
)
def test_decode_errors_name_the_key(value: str, message: str) -> None:
    with pytest.raises(configmap.DecodeError, match=f"ConfigMap key usc-co-x: .*{message}"):
        configmap.decode({"usc-co-x": value})


def test_decode_order_is_canonical() -> None:
    insights = sample()
    back = configmap.decode(configmap.encode(list(reversed(insights))))
    kinds = [type(i).__name__ for i in back]
    assert kinds == sorted(
        kinds,
        key=[
            "ClusterVersionStatusInsight",
            "ClusterOperatorStatusInsight",
            "MachineConfigPoolStatusInsight",
            "NodeStatusInsight",
            "HealthInsight",
        ].index,
    )
    health = [i for i in back if isinstance(i, HealthInsightShape)]
    assert [h.scope.resources[0].resource for h in health] == ["nodes", "nodes", "clusteroperators"]


def test_small_clusters_fit_in_one_configmap() -> None:
    plan = configmap.plan(configmap.encode(sample()))
    assert plan.ok and plan.shards == 0 and list(plan.configmaps) == [configmap.CONFIGMAP]


def big_data(n: int, value_size: int = 780) -> dict[str, str]:
    data = {"usc-cv-version": "x" * 2000}
    for i in range(n):
        data[f"usc-node-ip-10-0-{i // 250}-{i % 250}.us-east-2.compute.internal"] = "v" * value_size
    return data


def test_5000_nodes_are_sharded_deterministically_under_the_budget() -> None:
    data = big_data(5000)
    plan = configmap.plan(data)
    assert plan.ok, plan.problems
    # the smallest power of two that could hold the node insights, or its double (uneven hashing)
    least = 1 << (configmap.data_size(data) // configmap.SHARD_BUDGET).bit_length()
    assert plan.shards in (least, 2 * least) and plan.shards <= configmap.MAX_SHARDS
    assert all(size <= configmap.SHARD_BUDGET for size in plan.sizes.values())
    main = plan.configmaps[configmap.CONFIGMAP]
    assert configmap.shard_names(main) == [configmap.shard_name(i) for i in range(plan.shards)]
    assert not any(k.startswith("usc-node-") for k in main)
    merged: dict[str, str] = {}
    for shard_data in plan.configmaps.values():
        merged.update(shard_data)
    merged.pop(configmap.SHARDS_KEY)
    assert merged == data
    assert configmap.plan(dict(reversed(list(data.items())))).configmaps == plan.configmaps


def test_one_node_change_touches_one_shard() -> None:
    data = big_data(5000)
    before = configmap.plan(data)
    key = next(k for k in data if k.startswith("usc-node-"))
    data[key] = "w" * 780
    after = configmap.plan(data)
    changed = [name for name in before.configmaps if before.configmaps[name] != after.configmaps[name]]
    assert changed == [configmap.shard_name(configmap.shard_of(key, before.shards))]


def test_node_health_travels_with_its_node_and_one_node_change_touches_one_shard() -> None:
    data = big_data(5000)
    node_keys = [k for k in data if k.startswith("usc-node-")]
    node_health = {f"usc-health-node-{i}-degraded": key for i, key in enumerate(node_keys[::5])}
    data.update({key: "h" * 650 for key in node_health})
    data["usc-health-mcp-worker-paused"] = "p" * 600
    before = configmap.plan(data, node_health=node_health)
    assert before.ok, before.problems
    where = {key: name for name, cm in before.configmaps.items() for key in cm}
    assert all(where[health] == where[key] != configmap.CONFIGMAP for health, key in node_health.items())
    assert where["usc-health-mcp-worker-paused"] == where["usc-cv-version"] == configmap.CONFIGMAP
    # a healthy node becomes degraded: its insight changes and its health insight appears, in one shard
    changing = next(k for k in node_keys if k not in node_health.values())
    data[changing] = "w" * 790
    data["usc-health-node-new-degraded"] = "h" * 650
    after = configmap.plan(data, node_health={**node_health, "usc-health-node-new-degraded": changing})
    changed = [name for name in before.configmaps if before.configmaps[name] != after.configmaps[name]]
    assert changed == [configmap.shard_name(configmap.shard_of(changing, before.shards))]


def unhealthy_cluster(n_nodes: int = 5000) -> list[Any]:
    """bench/insights_throughput.py's cluster: 20 pools, a rolling update, ~20% of nodes unhealthy."""
    cv, nodes, pools, versions = synthetic_cluster(n_nodes, 20)
    return compute.all_insights(cv, [], nodes, pools, versions, 1_704_106_800_000_000_000)


def test_5000_nodes_with_a_fifth_unhealthy_keep_the_main_configmap_under_budget() -> None:
    insights = unhealthy_cluster()
    data = configmap.encode(insights)
    node_health = configmap.node_health_keys(insights)
    assert len(node_health) >= 5000 // 5
    assert not configmap.plan(data).ok  # node health in the main ConfigMap would overfill it
    plan = configmap.plan(data, node_health=node_health)
    assert plan.ok, plan.problems
    main = plan.configmaps[configmap.CONFIGMAP]
    assert plan.sizes[configmap.CONFIGMAP] == configmap.data_size(main) <= configmap.SHARD_BUDGET
    assert all(size <= configmap.SHARD_BUDGET for size in plan.sizes.values())
    kept = {configmap.key_of(i) for i in insights if not isinstance(i, NodeInsightShape)} - set(node_health)
    assert set(main) - {configmap.SHARDS_KEY} == kept  # the ClusterVersion, pools, other health
    assert configmap.shard_names(main) == [configmap.shard_name(i) for i in range(plan.shards)]
    for health, node_key in node_health.items():
        shard = configmap.shard_name(configmap.shard_of(node_key, plan.shards))
        assert health in plan.configmaps[shard] and node_key in plan.configmaps[shard]
    merged: dict[str, str] = {}
    for shard_data in plan.configmaps.values():
        merged.update(shard_data)
    merged.pop(configmap.SHARDS_KEY)
    assert merged == data


def test_health_about_one_node_is_node_health_and_nothing_else_is() -> None:
    insights = sample()
    node_health = configmap.node_health_keys(insights)
    health = {configmap.key_of(i): i for i in insights if isinstance(i, HealthInsightShape)}
    about_nodes = {k for k, h in health.items() if h.scope.resources[0].resource == "nodes"}
    assert set(node_health) == about_nodes and len(about_nodes) == 2
    assert sorted(node_health.values()) == ["usc-node-w1", "usc-node-w2"]
    # sharded with a tiny budget: node health beside its node, the operator's health in the main
    plan = configmap.plan(configmap.encode(insights), budget=1_000, node_health=node_health)
    main = plan.configmaps[configmap.CONFIGMAP]
    assert plan.shards > 0 and not about_nodes & set(main)
    assert set(health) - about_nodes <= set(main)


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ([ResourceRef(resource="nodes", name="w1")], "w1"),
        ([ResourceRef(resource="nodes", name="w1"), ResourceRef(resource="nodes", name="w2")], None),
        ([ResourceRef(group="machineconfiguration.openshift.io", resource="machineconfigpools", name="worker")], None),
        ([ResourceRef(group="example.com", resource="nodes", name="w1")], None),
        ([], None),
    ],
)
def test_node_of(resources: list[ResourceRef], expected: str | None) -> None:
    insight = HealthInsight(
        uid="x",
        scope=InsightScope(type=ScopeType.WORKER_POOL, resources=resources),
        impact=InsightImpact(level=ImpactLevel.ERROR, type=ImpactType.UPDATE_STALLED, summary="s"),
        remediation=InsightRemediation(reference="https://example.com"),
    )
    assert configmap.node_of(insight) == expected


def test_limits_that_would_be_crossed_are_reported_not_written() -> None:
    plan = configmap.plan(big_data(5000), budget=100_000, max_shards=8)
    assert not plan.ok
    assert all("over the budget of 100000 bytes" in p for p in plan.problems)
    assert any("maximum of 8 node shards" in p for p in plan.problems)


def test_a_client_reading_the_main_configmap_and_its_shards_gets_every_insight() -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"../shared/oc-examples not found at {EXAMPLES}")
    cases = [("sample", sample())]  # the examples have no node health insights; the sample has two
    cases += [(p.name, snapshot.load(p).insights()[0]) for p in sorted(EXAMPLES.glob("*-cv.yaml"))]
    for name, insights in cases:
        data = configmap.encode(insights)
        node_health = configmap.node_health_keys(insights)
        plan = configmap.plan(data, budget=2_000, node_health=node_health)
        main = plan.configmaps[configmap.CONFIGMAP]
        assert plan.shards > 0, name
        union = dict(main)
        for shard in configmap.shard_names(main):  # what a client does
            union.update(plan.configmaps[shard])
        assert configmap.decode(union) == configmap.decode(data), name
        assert not set(node_health) & set(main), name
    assert configmap.node_health_keys(cases[0][1])


@pytest.mark.parametrize(
    "names",
    [
        ["kube-root-ca.crt"],
        [configmap.SHARD_PREFIX + "x"],
        [configmap.SHARD_PREFIX + "32"],  # past the 32 shards the controller may write
        [configmap.SHARD_PREFIX + "01"],
        [configmap.SHARD_PREFIX + "-1"],
        [configmap.SHARD_PREFIX + "\u0661"],  # a digit, but not an ASCII one
        [configmap.SHARD_PREFIX + str(i) for i in range(10_000)],
    ],
)
def test_shard_names_rejects_names_that_are_not_the_apis_shards(names: list[str]) -> None:
    """A forged list would have a reader read, and the controller watch, whatever it names."""
    with pytest.raises(configmap.DecodeError, match="usc-shards: expected a list of .* i from 0 to 31"):
        configmap.shard_names({configmap.SHARDS_KEY: json.dumps(names)})


def test_shard_names_reads_each_listed_shard_once() -> None:
    listed = [configmap.shard_name(1), configmap.shard_name(0), configmap.shard_name(1)]
    assert configmap.shard_names({configmap.SHARDS_KEY: json.dumps(listed)}) == listed[:2]


# --- the fast encoders give the generic ones' bytes ---------------------------------------------


def many_insights() -> list[Any]:
    """Every kind of node insight and every other insight: the shared oc examples, this module's
    sample, the throughput benchmark's synthetic cluster, and names and messages to quote."""
    out: list[Any] = list(sample())
    if EXAMPLES.is_dir():
        for path in sorted(EXAMPLES.glob("*-cv.yaml")):
            out.extend(snapshot.load(path).insights()[0])
    cv, nodes, pools, versions = synthetic_cluster(300, 4)
    out.extend(compute.all_insights(cv, [], nodes, pools, versions, ns(90)))
    odd = [
        node("w-quote", desired="rendered-worker-new", state="Degraded", reason='"hi" \\ \té ✓ \u2028 \x01 \x85 \x7f'),
        node("w-long", desired="rendered-worker-new", state="Degraded", reason="x" * 300 + "ü"),
        node("w-pending", current="rendered-worker-old", desired="rendered-worker-new", state="Working"),
    ]
    out.extend(compute.all_insights(None, [], odd, [pool("master"), pool("worker")], VERSIONS, ns(1)))
    return out


YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def test_values_are_the_generic_json_byte_for_byte() -> None:
    insights = many_insights()
    assert len({type(i) for i in insights}) == 5  # ClusterVersion, ClusterOperator, pool, node, health
    nodes = [i for i in insights if isinstance(i, NodeInsightShape)]
    phases = {i.conditions[0].reason for i in nodes}
    assert {"Updating", "Draining", "Rebooting", "Completed", "Pending"} <= phases, phases
    assert any(i.est_to_complete is None for i in nodes) and any(i.message for i in nodes)
    for insight in insights:
        generic = json.dumps(model_of(insight).to_api(), ensure_ascii=False, separators=(",", ":"))
        # but the characters YAML reads differently (NEL, LS, PS, C1 controls) as \uXXXX escapes
        generic = YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", generic)
        value = configmap.encode_value(insight)
        assert value == generic, configmap.key_of(insight)
        assert yaml.safe_load(value) == json.loads(value) == model_of(insight).to_api(), configmap.key_of(insight)


def test_values_written_in_yaml_block_style_still_decode() -> None:
    # What earlier versions wrote for every insight but nodes' (and what a client may write).
    for insight in [i for i in many_insights() if not isinstance(i, NodeInsightShape)]:
        value = yaml.safe_dump(
            model_of(insight).to_api(), default_flow_style=False, sort_keys=False, allow_unicode=True
        )
        assert "\n" in value and not value.startswith("{")
        assert configmap.decode({configmap.key_of(insight): value}) == [insight], configmap.key_of(insight)


# --- reading the values of one kind together -----------------------------------------------------

PIECES = [
    '"',
    "\\",
    "\\ud800",
    "\\ud83d\\ude00",
    "\\uDC00",
    "\ud800",
    "1" * 101,
    "1." + "0" * 100,
    "-" + "9" * 100,
    "NaN",
    "Infinity",
    "1e999",
    "1.0",
    "-0",
    " ",
    "\ufeff",
    "\t",
    "\n",
    "\x00",
    "é",
    "}",
    "{",
    "[",
    "]",
    ",",
    ":",
    ',"name":"dup"',
    ',"extra":1',
    ',"count":' + "1" * 120,
    "null",
    "true",
    '""',
    "# comment",
]

NUMBERS = [
    "1" * 101,
    "1." + "0" * 99,
    " " + "1" * 100,
    "\n\t" + "2" * 101,
    "1e2",
    "2.0",
    "-1",
    "1e999",
    "NaN",
    "1" * 100,
]


def one_by_one(data: dict[str, str]) -> tuple[list[Any], list[str]]:
    """What the models read, every value alone: the oracle of the plain readers."""
    insights, errors = wire.decode_readable(data, plain=False)
    return insights, [str(e) for e in errors]


@settings(max_examples=300)
@given(st.data())
def test_the_plain_readers_give_what_the_models_give(data: st.DataObject) -> None:
    """A client reads values without pydantic where it can (`wire.decode_readable`); on values
    the controller writes and on mutations of them (numbers, YAML, duplicate and unknown keys,
    pieces cut in) it must give exactly what the models give: the same insights, the same errors."""
    values = configmap.encode(sample())
    keys = sorted(values)
    for _ in range(data.draw(st.integers(0, 3), label="mutations")):
        key = data.draw(st.sampled_from(keys), label="key")
        value = values[key]
        how = data.draw(st.sampled_from(["insert", "replace", "number", "yaml"]), label="how")
        if how == "yaml":  # block style, as earlier writers wrote most values
            try:
                value = yaml.safe_dump(yaml.safe_load(value), sort_keys=False)
            except yaml.YAMLError:
                value = "{" + value
        elif how == "number" and (numbers := list(re.finditer(r'(?<=":)-?[0-9]+', value))):
            number = data.draw(st.sampled_from(numbers), label="number")
            digits = data.draw(st.sampled_from(NUMBERS), label="digits")
            value = value[: number.start()] + digits + value[number.end() :]
        else:
            at = data.draw(st.integers(0, len(value)), label="at")
            piece = data.draw(st.sampled_from(PIECES) | st.text(max_size=3), label="piece")
            cut = data.draw(st.integers(0, 3), label="cut") if how == "replace" else 0
            value = value[:at] + piece + value[at + cut :]
        values[key] = value
    insights, errors = wire.decode_readable(values)
    expected_insights, expected_errors = one_by_one(values)
    assert [str(e) for e in errors] == expected_errors
    assert insights == expected_insights  # a plain object equals the model read from the same value
    assert [type(i).__name__ for i in insights] == [type(i).__name__ for i in expected_insights]
    by_models, model_errors = configmap.decode_readable(values)  # the models alone, as the controller reads
    assert by_models == expected_insights and [str(e) for e in model_errors] == expected_errors


def test_a_kind_with_one_unreadable_value_is_read_value_by_value() -> None:
    values = configmap.encode(sample())
    node_keys = sorted(k for k in values if k.startswith(configmap.PREFIX_NODE))
    values[node_keys[0]] = values[node_keys[0]].replace('"name":', '"name":' + "1" * 101 + ',"x":', 1)
    insights, errors = configmap.decode_readable(values)
    assert len(errors) == 1 and str(errors[0]).startswith(f"ConfigMap key {node_keys[0]}: ")
    assert "more than" in str(errors[0]) or "101 characters" in str(errors[0])
    assert len(insights) == len(sample()) - 1


def test_the_models_hold_no_value_the_two_readers_could_read_differently() -> None:
    # what the plain readers rely on (see `wire._READ_ALONE`): unknown keys refused everywhere, and
    # no float, list of numbers or untyped field, so a number is always a mapping's value
    seen: set[type[BaseModel]] = set()
    pending: list[type[BaseModel]] = list(MODEL_OF_PREFIX.values())
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.add(model)
        assert model.model_config.get("extra") == "forbid", model
        for name, info in model.model_fields.items():
            for kind in _leaf_types(info.annotation):
                if isinstance(kind, type) and issubclass(kind, BaseModel):
                    pending.append(kind)
                    continue
                assert kind in (str, int, type(None)) or (isinstance(kind, type) and issubclass(kind, StrEnum)), (
                    f"{model.__name__}.{name}: {kind}"
                )
            assert not _is_list_of_numbers(info.annotation), f"{model.__name__}.{name}"
    assert len(seen) > len(MODEL_OF_PREFIX)


def _leaf_types(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _leaf_types(typing.get_args(annotation)[0])
    if origin in (list, types.UnionType, typing.Union):
        return [leaf for arg in typing.get_args(annotation) for leaf in _leaf_types(arg)]
    return [annotation]


def _is_list_of_numbers(annotation: Any) -> bool:
    if typing.get_origin(annotation) is list:
        return any(t in (int, float) for t in _leaf_types(typing.get_args(annotation)[0]))
    return False


def test_every_key_prefix_is_usc_kind_dash_with_no_dash_in_the_kind() -> None:
    for prefix in MODEL_OF_PREFIX:
        assert prefix.startswith(configmap.OWNED_PREFIX) and prefix.endswith("-") and prefix.count("-") == 2, prefix


def _layouts(nodes: int) -> dict[str, dict[str, dict[str, str]]]:
    """The same insights laid out unsharded, in few shards and in more shards."""
    cv, node_objects, pools, versions = synthetic_cluster(nodes, 2)
    data = configmap.encode(compute.all_insights(cv, [], node_objects, pools, versions, ns(1)))
    budgets = {"none": 10**9, "few": 120_000, "more": 40_000}
    plans = {name: configmap.plan(data, budget=budget) for name, budget in budgets.items()}
    assert plans["none"].shards == 0 and 0 < plans["few"].shards < plans["more"].shards, {
        n: p.shards for n, p in plans.items()
    }
    return {name: plan.configmaps for name, plan in plans.items()}


def _read_between_writes(
    old: dict[str, dict[str, str]], new: dict[str, dict[str, str]], order: list[str]
) -> list[set[str]]:
    """What a client reads (the main ConfigMap, then the shards it lists) before and after each write."""
    state = {name: dict(values) for name, values in old.items()}
    seen = []
    for step in range(len(order) + 1):
        main = state[configmap.CONFIGMAP]
        keys = set(main)
        for shard in configmap.shard_names(main):
            keys |= set(state[shard])
        seen.append(keys)
        if step < len(order):
            state[order[step]] = dict(new.get(order[step], {}))
    return seen


@pytest.mark.parametrize(
    "before,after", [("none", "few"), ("few", "more"), ("more", "few"), ("few", "none"), ("none", "more")]
)
def test_a_client_reading_while_the_shard_layout_changes_finds_every_insight(before: str, after: str) -> None:
    layouts = _layouts(400)
    old, new = layouts[before], layouts[after]
    listed = configmap.shard_names(old[configmap.CONFIGMAP])
    in_use = configmap.shard_names(new[configmap.CONFIGMAP])
    stale = sorted(set(listed) - set(in_use))
    order = configmap.layout_write_order(in_use, listed, stale)
    assert sorted(order) == sorted({configmap.CONFIGMAP, *in_use, *stale})
    both = {k for k in old[configmap.CONFIGMAP] if k.startswith("usc-")} | {k for n in listed for k in old[n]}
    both -= {configmap.SHARDS_KEY}
    for step, keys in enumerate(_read_between_writes(old, new, order)):
        assert not both - keys, f"after {order[:step]}: {sorted(both - keys)[:3]} nowhere"


def test_an_overflow_that_is_not_about_nodes_lists_no_shard() -> None:
    data = {f"usc-health-alert-{i}": "h" * 300 for i in range(20_000)}  # 20,000 alerts' insights
    data["usc-cv-version"] = "c" * 2_000
    plan = configmap.plan(data)
    assert plan.shards == 0 and list(plan.configmaps) == [configmap.CONFIGMAP]
    assert configmap.SHARDS_KEY not in plan.configmaps[configmap.CONFIGMAP]
    assert not plan.ok  # said, and the writer publishes what fits


@settings(max_examples=200, deadline=None)
@given(
    nodes=st.integers(0, 40),
    health=st.integers(0, 40),
    size=st.sampled_from([10, 900, 9_000]),
    budget=st.sampled_from([2_000, 20_000, configmap.SHARD_BUDGET]),
)
def test_every_listed_shard_holds_insights(nodes: int, health: int, size: int, budget: int) -> None:
    data = {f"usc-node-n{i}": "n" * size for i in range(nodes)}
    data.update({f"usc-health-h{i}": "h" * size for i in range(health)})
    plan = configmap.plan(data, budget=budget)
    listed = configmap.shard_names(plan.configmaps[configmap.CONFIGMAP])
    assert sorted(listed) == sorted(n for n in plan.configmaps if n != configmap.CONFIGMAP)
    assert all(plan.configmaps[name] for name in listed)  # only shards the writer creates
    merged = {k: v for cm in plan.configmaps.values() for k, v in cm.items() if k != configmap.SHARDS_KEY}
    assert merged == data


_NODE_NAMES = st.text(alphabet="abcdefghij-.0123456789", min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    rounds=st.lists(
        st.dictionaries(_NODE_NAMES, st.integers(min_value=1, max_value=400), min_size=1, max_size=60),
        min_size=1,
        max_size=4,
    ),
    budget=st.integers(min_value=600, max_value=6000),
)
def test_the_planner_places_every_key_by_shard_of(rounds: list[dict[str, int]], budget: int) -> None:
    """The controller's long-lived ShardPlanner (reused across syncs, with its caches) puts each node
    key and the health insights of its node where `shard_of` says, the rule readers and tests use."""
    planner = configmap.ShardPlanner(budget=budget, max_shards=8)
    for sizes in rounds:
        data = {configmap.node_key(name): "n" * size for name, size in sizes.items()}
        node_health = {f"usc-health-{i}": configmap.node_key(name) for i, name in enumerate(sorted(sizes)[::3])}
        data.update({key: "h" * 50 for key in node_health})
        data["usc-cv-version"] = "c" * 100
        plan = planner.plan(data, node_health)
        assert plan == configmap.plan(data, budget, 8, node_health=node_health)
        for key in data:
            home = key if key.startswith(configmap.PREFIX_NODE) else node_health.get(key)
            where = [name for name, cm in plan.configmaps.items() if key in cm]
            if home is None or plan.shards == 0:
                assert where == [configmap.CONFIGMAP]
            else:
                assert where == [configmap.shard_name(configmap.shard_of(home, plan.shards))]
