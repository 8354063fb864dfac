"""One schema for writer and reader: whatever the controller's pure computation and encoding can
publish from valid cluster objects, the client's decoder reads back, equal to what was computed;
and the computation's plain objects hold, field by field, what the models read from their values."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from cvo_py.runtime.gotext.durations import MINUTE
from cvo_py.runtime.gotext.times import format_time
from status.updatestatus.api import configmap
from status.updatestatus.client.render import render
from status.updatestatus.controller.incremental import IncrementalInsights
from status.updatestatus.insights import compute
from status.updatestatus.insights import plain as plain_insights
from status.updatestatus.insights.kinds import ClusterVersionInsightShape
from status.updatestatus.insights.models import Insight
from status.updatestatus.insights.plain import Insight as PlainInsight
from testkit.objects.insight_objects import T0_NS, clusterversion, entry, firing_alert, node, ns, operator, pool

LONG_VERSION = "4.16.0-0.nightly-multi-2024-05-01-123456-with-a-very-long-build-suffix-x"  # 72 characters


def roundtrip(insights: list[PlainInsight]) -> list[Insight]:
    return configmap.decode(configmap.encode(insights))


def test_a_version_longer_than_64_characters_is_published_and_read_back() -> None:
    assert len(LONG_VERSION) > 64
    cv = clusterversion(
        history=[
            entry(LONG_VERSION, "Partial", "2024-01-01T10:00:00Z"),
            entry("4.15.0", "Completed", "2023-12-01T10:00:00Z", "2023-12-01T11:00:00Z"),
        ],
        desired=LONG_VERSION,
    )
    versions = {"rendered-worker-new": LONG_VERSION, "rendered-worker-old": "4.15.0"}
    insights = compute.all_insights(
        cv,
        [operator("a", version=LONG_VERSION)],
        [node("w1", current="rendered-worker-new")],
        [pool("worker")],
        versions,
        ns(5),
    )
    back = roundtrip(insights)
    [cvi] = [i for i in back if isinstance(i, ClusterVersionInsightShape)]
    assert cvi.versions.target.version == LONG_VERSION
    assert LONG_VERSION in render(back, ns(5), "all")


# --- random valid objects ----------------------------------------------------------------------

# printable text as the API server accepts it in free-form fields (no length limit there)
text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)
short_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?", fullmatch=True)
dns_name = st.builds(
    lambda parts: ".".join(parts)[:253].strip(".-") or "x",
    st.lists(st.from_regex(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", fullmatch=True), min_size=1, max_size=5),
)
version = st.one_of(st.from_regex(r"4\.1[0-9]\.[0-9]{1,2}", fullmatch=True), st.text(min_size=1, max_size=120))
status = st.sampled_from(["True", "False", "Unknown"])
minutes = st.integers(min_value=-600, max_value=600)


def at_minutes(m: int) -> str:
    return format_time(T0_NS + m * MINUTE)


@st.composite
def clusterversions(draw: st.DrawFn) -> dict[str, Any]:
    target, previous = draw(version), draw(version)
    start = draw(minutes)
    completed = draw(st.booleans())
    history = [
        entry(
            target,
            "Completed" if completed else "Partial",
            at_minutes(start),
            at_minutes(start + 30) if completed else None,
        )
    ]
    if draw(st.booleans()):
        history.append(
            entry(
                previous,
                draw(st.sampled_from(["Completed", "Partial"])),
                at_minutes(start - 900),
                at_minutes(start - 800),
            )
        )
    cv = clusterversion(
        history=history,
        progressing=draw(st.sampled_from(["True", "False", None])),
        failing=draw(st.sampled_from(["True", "False", "Unknown", None])),
        desired=target,
        progressing_ltt=at_minutes(draw(minutes)),
        failing_reason=draw(short_text),
        failing_message=draw(text),
    )
    return cv


@st.composite
def operators(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(dns_name, max_size=4, unique=True))
    return [
        operator(
            name,
            version=draw(version),
            progressing=draw(st.sampled_from(["True", "False", "Unknown", None])),
            available=draw(st.sampled_from(["True", "False", "Unknown", None])),
            degraded=draw(st.sampled_from(["True", "False", "Unknown", None])),
            counted=draw(st.booleans()),
            ltt=at_minutes(draw(minutes)),
            reason=draw(short_text),
            message=draw(text),
        )
        for name in names
    ]


@st.composite
def machines(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    custom = draw(st.lists(label.filter(lambda n: n not in ("master", "worker")), max_size=2, unique=True))
    pools = [
        pool("master"),
        *(pool(n, paused=draw(st.booleans())) for n in custom),
        pool("worker", paused=draw(st.booleans())),
    ]
    roles = ["master", "worker", *custom]
    versions = {f"rendered-{r}-{age}": draw(version) for r in roles for age in ("old", "new")}
    nodes = []
    for name in draw(st.lists(dns_name, max_size=6, unique=True)):
        role = draw(st.sampled_from(roles))
        n = node(
            name,
            role=role,
            current=f"rendered-{role}-{draw(st.sampled_from(['old', 'new']))}",
            desired=f"rendered-{role}-{draw(st.sampled_from(['old', 'new']))}",
            state=draw(st.sampled_from(["Done", "Working", "Degraded", "Unreconcilable", "Rebooting"])),
            reason=draw(text),
            ready=draw(status),
            ready_ltt=at_minutes(draw(minutes)),
            unschedulable=draw(st.booleans()),
        )
        nodes.append(n)
    return pools, nodes, versions


@settings(max_examples=100)
@given(clusterversions(), operators(), machines(), minutes)
def test_everything_the_controller_can_publish_is_read_back(
    cv: dict[str, Any], ops: list[dict[str, Any]], machine: Any, now_minutes: int
) -> None:
    pools, nodes, versions = machine
    now = ns(now_minutes)
    data = IncrementalInsights().update(cv, ops, nodes, pools, versions, now)
    decoded = configmap.decode(data)  # raises on anything the reader refuses
    assert configmap.encode(decoded) == data  # and reads exactly what was written


@st.composite
def alerts(draw: st.DrawFn) -> dict[str, Any]:
    """A Thanos alerts response: firing alerts oc reports (allowlisted or started during the update)."""
    names = draw(st.lists(st.sampled_from(["PodDisruptionBudgetLimit", "KubeNodeNotReady", "Custom"]), max_size=3))
    listed = [
        firing_alert(
            name,
            at_minutes(draw(minutes)),
            draw(st.sampled_from(["warning", "critical", "info"])),
            summary=draw(short_text),
            description=draw(text),
            runbook_url=draw(st.sampled_from(["", "https://example.com/runbook"])),
        )
        for name in names
    ]
    return {"status": "success", "data": {"alerts": listed}}


def assert_same_fields(plain: Any, model: Any, where: str) -> None:
    """`plain` (what the computation built) holds what `model` (what the models read) holds, field
    by field down to the leaves, each leaf of the same type (an enum member where the model has one)."""
    if isinstance(model, BaseModel):
        assert type(plain).__module__ == plain_insights.__name__, where
        assert type(plain).__name__ == type(model).__name__, where
        assert plain.__slots__ == tuple(type(model).model_fields), where
        for name in plain.__slots__:
            assert_same_fields(getattr(plain, name), getattr(model, name), f"{where}.{name}")
    elif isinstance(model, list):
        assert type(plain) is list and len(plain) == len(model), where
        for index, (p, m) in enumerate(zip(plain, model, strict=True)):
            assert_same_fields(p, m, f"{where}[{index}]")
    else:
        assert type(plain) is type(model) and plain == model, (where, plain, model)


@settings(max_examples=100)
@given(clusterversions(), operators(), machines(), alerts(), minutes, st.integers(0, 120))
def test_the_plain_computation_holds_field_by_field_what_the_models_read_from_its_values(
    cv: dict[str, Any], ops: list[dict[str, Any]], machine: Any, firing: dict[str, Any], now_minutes: int, later: int
) -> None:
    """The computation builds plain objects, no longer models: each one, encoded as the controller
    publishes it and read back by the models alone (bounded loader, pydantic validation, every
    constraint), gives a model equal to it in every field, also after transition times are
    stamped from a previous computation."""
    pools, nodes, versions = machine
    first = compute.all_insights(cv, ops, nodes, pools, versions, ns(now_minutes), alerts=firing)
    second = compute.all_insights(
        cv, ops, nodes, pools, versions, ns(now_minutes + later), alerts=firing, previous=first
    )
    for insights in (first, second):
        data = configmap.encode(insights)
        read = {configmap.key_of(m): m for m in configmap.decode(data)}  # plain=False: the models alone
        assert len(read) == len(insights) == len(data)
        for insight in insights:
            key = configmap.key_of(insight)
            assert_same_fields(insight, read[key], key)
