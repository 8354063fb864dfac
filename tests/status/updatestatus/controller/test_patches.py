"""The ConfigMap writer's decisions: which keys to patch, what fits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from status.updatestatus.api import configmap, metadata
from status.updatestatus.api.sharding import by_importance, omission_rank
from status.updatestatus.controller.patches import apply_patch, data_size, fit_patch, plan_patch, resource_version_newer


@pytest.mark.parametrize(
    ("name", "current", "desired", "patch"),
    [
        ("nothing exists yet: write all", None, {"usc-cv-version": "a"}, {"usc-cv-version": "a"}),
        (
            "empty ConfigMap",
            {},
            {"usc-cv-version": "a", "usc-co-dns": "b"},
            {"usc-cv-version": "a", "usc-co-dns": "b"},
        ),
        ("unchanged: no write at all", {"usc-cv-version": "a"}, {"usc-cv-version": "a"}, {}),
        (
            "only the changed key",
            {"usc-cv-version": "a", "usc-co-dns": "b"},
            {"usc-cv-version": "a", "usc-co-dns": "c"},
            {"usc-co-dns": "c"},
        ),
        (
            "object gone: its key removed",
            {"usc-cv-version": "a", "usc-node-n1": "x"},
            {"usc-cv-version": "a"},
            {"usc-node-n1": None},
        ),
        (
            "foreign keys kept",
            {"note": "mine", "usc-cv-version": "a"},
            {"usc-cv-version": "b"},
            {"usc-cv-version": "b"},
        ),
        ("foreign keys never removed", {"note": "mine", "other-usc": "x"}, {}, {}),
    ],
)
def test_plan_patch(
    name: str, current: dict[str, str] | None, desired: dict[str, str], patch: dict[str, str | None]
) -> None:
    assert plan_patch(current, desired) == patch, name
    # Applying the plan yields exactly the desired owned keys plus the untouched foreign ones.
    after = apply_patch(current, patch)
    assert {k: v for k, v in after.items() if k.startswith("usc-")} == desired
    assert {k: v for k, v in after.items() if not k.startswith("usc-")} == {
        k: v for k, v in (current or {}).items() if not k.startswith("usc-")
    }
    assert plan_patch(after, desired) == {}, "a second sync must not write again"


def test_plan_patch_rejects_keys_it_does_not_own() -> None:
    with pytest.raises(ValueError, match="'note' does not start with 'usc-'"):
        plan_patch({}, {"note": "x"})


def test_data_size_counts_utf8_bytes_of_keys_and_values() -> None:
    assert data_size({"ab": "c", "d": "é"}) == 2 + 1 + 1 + 2


@pytest.mark.parametrize(
    ("name", "current", "desired", "limit", "patch", "omitted"),
    [
        ("fits", {}, {"usc-a": "1234", "usc-b": "1234"}, 100, {"usc-a": "1234", "usc-b": "1234"}, ()),
        ("exactly at the limit fits", {}, {"usc-a": "1234"}, 9, {"usc-a": "1234"}, ()),
        (
            "over: later keys left out",
            {},
            {"usc-a": "1234", "usc-b": "1234"},
            12,
            {"usc-a": "1234"},
            ("usc-b",),
        ),
        (
            "a smaller later key still fits",
            {},
            {"usc-a": "1234", "usc-b": "123456789", "usc-c": "1"},
            16,
            {"usc-a": "1234", "usc-c": "1"},
            ("usc-b",),
        ),
        (
            "foreign keys count first",
            {"note": "123456"},
            {"usc-a": "1234", "usc-b": "1"},
            17,
            {"usc-b": "1"},
            ("usc-a",),
        ),
        (
            "an omitted key already present is removed",
            {"usc-b": "old"},
            {"usc-a": "1234", "usc-b": "12345"},
            10,
            {"usc-a": "1234", "usc-b": None},
            ("usc-b",),
        ),
    ],
)
def test_fit_patch_never_exceeds_the_limit(
    name: str,
    current: dict[str, str],
    desired: dict[str, str],
    limit: int,
    patch: dict[str, str | None],
    omitted: tuple[str, ...],
) -> None:
    plan = fit_patch(current, desired, limit)
    assert (plan.patch, plan.omitted) == (patch, omitted), name
    assert plan.size == data_size(apply_patch(current, plan.patch)) <= limit


@pytest.mark.parametrize(
    ("candidate", "than", "newer"),
    [
        ("12", "9", True),
        ("9", "12", False),
        ("12", "12", False),
        (None, "1", False),
        ("1", None, True),
        ("abc", "abd", True),
        ("abc", "abc", False),
    ],
)
def test_resource_version_newer(candidate: str | None, than: str | None, newer: bool) -> None:
    assert resource_version_newer(candidate, than) is newer


def test_fit_patch_leaves_out_the_least_important_first() -> None:
    """A pool that does not fit is not traded for a smaller alert: once a key is left out, nothing
    less important is kept (equally important smaller ones still are)."""
    desired = {
        "usc-shards": "[]",
        "usc-cv-version": "c" * 10,
        "usc-mcp-worker": "p" * 40,
        "usc-mcp-master": "p" * 5,
        "usc-health-alert-a": "a",
        "usc-health-alert-b": "a",
    }
    plan = fit_patch({}, desired, data_size({k: desired[k] for k in ("usc-shards", "usc-cv-version")}) + 30)
    assert plan.omitted == ("usc-mcp-worker", "usc-health-alert-a", "usc-health-alert-b")
    assert set(plan.patch) == {"usc-shards", "usc-cv-version", "usc-mcp-master"}


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["usc-cv-", "usc-co-", "usc-mcp-", "usc-node-", "usc-health-node-", "usc-health-alert-",
                             "usc-health-co-", "usc-x-"]),
            st.integers(0, 40),
        ),
        max_size=30,
    ),
    st.integers(0, 600),
)
def test_fit_patch_never_keeps_a_key_less_important_than_one_it_leaves_out(
    keys: list[tuple[str, int]], limit: int
) -> None:
    desired = {f"{prefix}{i}": "v" * size for i, (prefix, size) in enumerate(keys)}
    plan = fit_patch({}, by_importance(desired), limit)
    kept = [key for key in plan.patch if plan.patch[key] is not None]
    assert plan.size <= limit and set(kept) | set(plan.omitted) == set(desired)
    if plan.omitted:
        assert max((omission_rank(k) for k in kept), default=0) <= min(omission_rank(k) for k in plan.omitted)


def test_twenty_thousand_alerts_leave_out_only_alerts_never_pools_or_nodes() -> None:
    """A noisy Prometheus: the main ConfigMap keeps the control plane, the pools and the shard list
    and leaves out alerts only; the nodes and their health stay in their shards; what the metadata
    lists of what is missing names alerts, because nothing else is."""
    data = {f"usc-health-alert-a{i:05d}": "h" * 300 for i in range(20_000)}  # 20,000 alerts' insights
    data.update({"usc-cv-version": "c" * 2_000, "usc-co-dns": "o" * 500, "usc-health-cv-version-failing": "f" * 500})
    data.update({f"usc-mcp-{name}": "p" * 700 for name in ("infra", "master", "worker")})
    nodes = {f"usc-node-n{i}": "n" * 900 for i in range(300)}
    node_health = {f"usc-health-node-n{i}-degraded": f"usc-node-n{i}" for i in range(0, 300, 7)}
    data.update(nodes)
    data.update({key: "d" * 400 for key in node_health})
    plan = configmap.plan(data, node_health=node_health)
    assert plan.shards >= 1
    main = plan.configmaps[configmap.CONFIGMAP]
    assert list(main)[:6] == [
        configmap.SHARDS_KEY, "usc-cv-version", "usc-co-dns", "usc-mcp-infra", "usc-mcp-master", "usc-mcp-worker"
    ]
    fit = fit_patch({}, main, configmap.DATA_LIMIT - metadata.RESERVED)
    assert fit.omitted and all(key.startswith("usc-health-alert-") for key in fit.omitted)
    kept = set(fit.patch)
    assert {configmap.SHARDS_KEY, "usc-cv-version", "usc-co-dns", "usc-health-cv-version-failing"} <= kept
    assert {"usc-mcp-infra", "usc-mcp-master", "usc-mcp-worker"} <= kept
    shards = [plan.configmaps[name] for name in configmap.shard_names(main)]
    assert set(nodes) | set(node_health) == {key for shard in shards for key in shard}
    for shard in shards:  # nodes first: an overflowing shard leaves out node health first
        ranks = [omission_rank(key) for key in shard]
        assert ranks == sorted(ranks)
    assert set(metadata.omitted_of(fit.omitted).kinds) == {"Health"}
