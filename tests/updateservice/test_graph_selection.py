"""Selecting updates from a graph in linear time, checked against the quadratic selection it
replaced (kept here as the oracle) on random graphs; and the attempt's one deadline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testkit.fakes.update_service import always_risk, graph, image_of
from updateservice import graph as g
from updateservice import semver
from updateservice.client import Transport
from updateservice.poller import AvailableUpdatesPoller, PollerOptions, updates_status

JSON = dict[str, Any]


# -- the selection as it was: O(edges × nodes), kept as the oracle --------------------------------


def oracle_select(graph: g.Graph, current_version: str, *, want_multi: bool = False,
                  current_is_multi: bool = False) -> g.Updates:
    current = semver.parse(current_version)
    index = next((i for i, n in enumerate(graph.nodes) if n.version == current), None)
    if index is None:
        raise g.GraphError("VersionNotFound", "")
    try:
        current_release = g.release_of(graph.nodes[index])
    except ValueError as err:
        raise g.GraphError("ResponseInvalid", f"invalid current node: {err}") from None
    if want_multi and not current_is_multi:
        return g.Updates(current=current_release, available=(current_release,))
    available: list[JSON] = []
    for origin, destination in graph.edges:
        if not (0 <= origin < len(graph.nodes) and 0 <= destination < len(graph.nodes)):
            raise g.GraphError("ResponseInvalid", f"edge [{origin}, {destination}] names a node the graph does not "
                               f"have ({len(graph.nodes)} nodes)")
        if origin != index:
            continue
        try:
            available.append(g.release_of(graph.nodes[destination]))
        except ValueError as err:
            raise g.GraphError("ResponseInvalid", f"invalid recommended update node: {err}") from None
    conditional: list[JSON] = []
    current_text = str(current)
    for group in graph.conditional_edges:
        for origin_text, target_text in group.edges:
            if origin_text != current_text:
                continue
            target = next((n for n in graph.nodes if str(n.version) == target_text), None)
            if target is None:
                raise g.GraphError("ResponseInvalid", f"no node for conditional update {target_text}")
            try:
                release = g.release_of(target)
            except ValueError as err:
                raise g.GraphError("ResponseInvalid", f"invalid conditional update node: {err}") from None
            conditional.append({"release": release, "risks": [dict(r) for r in group.risks]})
    conditional_images = {c["release"]["image"] for c in conditional}
    seen: set[str] = set()
    unique: list[JSON] = []
    for release in available:
        if release["image"] not in conditional_images and release["image"] not in seen:
            seen.add(release["image"])
            unique.append(release)
    pruned: list[JSON] = []
    for update in conditional:
        risks = []
        for risk in update["risks"]:
            rules = g._valid_rules(risk["matchingRules"])
            if not rules:
                break
            risks.append({**risk, "matchingRules": rules})
        else:
            pruned.append({"release": update["release"], "risks": risks})
    image_count: dict[str, int] = {}
    for update in pruned:
        image_count[update["release"]["image"]] = image_count.get(update["release"]["image"], 0) + 1
    pruned = [u for u in pruned if image_count[u["release"]["image"]] == 1]
    return g.Updates(
        current=current_release,
        available=tuple(oracle_sort_releases(unique)),
        conditional=tuple(sorted(pruned, key=lambda u: semver.parse(u["release"]["version"]), reverse=True)),
    )


def oracle_sort_releases(releases: Any) -> list[JSON]:
    def key(release: Any) -> tuple[int, semver.Version | None]:
        try:
            return (1, semver.parse(str(release.get("version", ""))))
        except semver.SemverError:
            return (0, None)

    good = [dict(r) for r in releases if key(r)[0]]
    bad = [dict(r) for r in releases if not key(r)[0]]
    return sorted(good, key=lambda r: semver.parse(r["version"]), reverse=True) + bad


def outcome(select: Any, graph: g.Graph, current: str, **kwargs: Any) -> Any:
    try:
        updates = select(graph, current, **kwargs)
    except g.GraphError as err:
        return ("error", err.reason, str(err))
    return ("updates", json.loads(json.dumps([updates.current, updates.available, updates.conditional])))


# -- random graphs ---------------------------------------------------------------------------------

VERSIONS = ["4.16.3", "4.16.5", "4.16.6", "4.16.10", "4.17.0-rc.1", "4.17.0", "5.0.0+build"]
RULES = [{"type": "Always"}, {"type": "PromQL", "promql": {"promql": "q"}}, {"type": "PromQL"},
         {"type": "Always", "promql": {"promql": "q"}}, {"type": "Other"}]


@st.composite
def graphs(draw: st.DrawFn) -> JSON:
    versions = draw(st.lists(st.sampled_from(VERSIONS), min_size=1, max_size=12))
    nodes = []
    for version in versions:
        node: JSON = {"version": version, "payload": draw(st.sampled_from(["a", "b", "c", image_of(version)]))}
        metadata = draw(st.sampled_from([None, {"url": "https://e.example/x"}, {"url": "%zz"},
                                         {g.ARCH_METADATA: "multi"}, {g.ARCH_METADATA: "arm64"},
                                         {g.CHANNELS_METADATA: "b,a"}]))
        if metadata:
            node["metadata"] = metadata
        nodes.append(node)
    index = st.integers(min_value=-1, max_value=len(nodes))
    edges = draw(st.lists(st.tuples(index, index).map(list), max_size=20))
    text = st.sampled_from([*VERSIONS, "4.99.0"])
    groups = draw(st.lists(st.fixed_dictionaries({
        "edges": st.lists(st.fixed_dictionaries({"from": text, "to": text}), max_size=6),
        "risks": st.lists(st.fixed_dictionaries({
            "name": st.sampled_from(["A", "B"]), "url": st.just("https://r.example/"), "message": st.just("m"),
            "matchingRules": st.lists(st.sampled_from(RULES), max_size=3)}), max_size=3),
    }), max_size=5))
    return {"nodes": nodes, "edges": edges, "conditionalEdges": groups}


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=graphs(), current=st.sampled_from(VERSIONS), want_multi=st.booleans())
def test_the_linear_selection_gives_what_the_quadratic_one_gave(doc: JSON, current: str, want_multi: bool) -> None:
    parsed = g.parse_graph(json.dumps(doc).encode())
    ours = outcome(g.select_updates, parsed, current, want_multi=want_multi)
    assert ours == outcome(oracle_select, parsed, current, want_multi=want_multi)


# -- the cost grows with the graph, not with its square ---------------------------------------------


class CountingNodes(tuple):  # type: ignore[type-arg]
    """The graph's nodes, counting every visit (iteration step or index)."""

    visits = 0

    def __iter__(self) -> Iterator[Any]:
        for item in super().__iter__():
            CountingNodes.visits += 1
            yield item

    def __getitem__(self, index: Any) -> Any:
        CountingNodes.visits += 1
        return super().__getitem__(index)


def wide_graph(nodes: int, risks: int) -> g.Graph:
    """The current node with a conditional edge to every other node, all in one group of `risks` risks."""
    versions = [f"4.16.{i}" for i in range(nodes)]
    doc = graph(versions, conditional=[([(versions[0], v) for v in versions[1:]],
                                        [always_risk(f"R{i}") for i in range(risks)])])
    for node in doc["nodes"]:
        node["payload"] = f"registry.example.com/release:{node['version']}"  # one image per version
    return g.parse_graph(json.dumps(doc).encode())


def test_node_lookups_are_linear_in_nodes_plus_edges(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = wide_graph(2_000, 1)
    counted = g.Graph(CountingNodes(parsed.nodes), parsed.edges, parsed.conditional_edges)
    CountingNodes.visits = 0
    updates = g.select_updates(counted, "4.16.0")
    assert len(updates.conditional) == 1_999
    edges = sum(len(group.edges) for group in parsed.conditional_edges)
    # The quadratic selection visited about nodes × edges / 2 (two million) here.
    assert CountingNodes.visits <= 4 * (len(parsed.nodes) + edges)


def test_risks_are_pruned_once_per_group_not_once_per_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = wide_graph(400, 300)
    calls = 0
    real = g._valid_rules

    def counting(rules: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(rules)

    monkeypatch.setattr(g, "_valid_rules", counting)
    updates = g.select_updates(parsed, "4.16.0")
    assert len(updates.conditional) == 399 and all(len(u["risks"]) == 300 for u in updates.conditional)
    assert calls <= sum(len(group.risks) for group in parsed.conditional_edges)  # was 399 × 300


# -- one deadline for fetch, decode and select --------------------------------------------------------


class Monotonic:
    """A monotonic clock that moves only when told to, or by `step` on every read once `running`."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.step = 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_the_deadline_bounds_decoding_and_selection_not_only_the_transfer() -> None:
    big = json.dumps(graph([f"4.16.{i}" for i in range(20_000)], edges=[("4.16.0", "4.16.1")])).encode()
    small = json.dumps(graph(["4.16.0", "4.16.1"], edges=[("4.16.0", "4.16.1")])).encode()
    clock = Monotonic()
    served = [small]
    given_timeouts: list[float] = []

    def fetch(_url: str, _transport: Transport, total: float) -> bytes:
        given_timeouts.append(total)
        clock.now += 20.0  # the transfer took 20 of the 30 seconds
        clock.step = 1.0  # and from here on, every look at the clock is one more second
        return served[-1]

    cv: JSON = {"metadata": {"name": "version"},
          "spec": {"clusterID": "0b0ea3b8-4d5e-4c0f-8c0a-4b7d3c5a9e11", "channel": "stable-4.16",
                   "upstream": "http://127.0.0.1:9/graph"},
          "status": {"desired": {"version": "4.16.0", "image": image_of("4.16.0")}}}
    poller = AvailableUpdatesPoller(lambda: cv, fetch=fetch, transport=Transport, query=None, on_change=lambda: None,
                                    options=PollerOptions(arch="amd64", total_timeout=30.0), monotonic=clock)
    poller.tick()  # a small graph is decoded and selected within the remaining 10 s
    first = updates_status(poller.state(), cv["spec"])
    assert first is not None and first["condition"] == {"type": "RetrievedUpdates", "status": "True"}
    assert given_timeouts == [30.0]  # the transfer gets the whole budget, no more

    served.append(big)
    clock.step = 0.0
    poller.poke()
    poller._last = None  # ask again now
    poller.tick()
    second = updates_status(poller.state(), cv["spec"])
    assert second is not None
    assert second["condition"]["reason"] == "ResponseFailed"
    assert "was not processed within the 30s deadline (decoding nodes)" in second["condition"]["message"]
    # The last good lists stay, as for any answer that could not be used.
    assert [r["version"] for r in second["availableUpdates"]] == ["4.16.1"]


@settings(max_examples=300, deadline=None)
@given(versions=st.lists(st.sampled_from([*VERSIONS, "4.16.03", "x", "", "4.16"]), max_size=12))
def test_sorting_releases_gives_what_it_gave(versions: list[str]) -> None:
    releases = [{"version": v, "image": f"img-{i}"} for i, v in enumerate(versions)]
    assert g.sort_releases(releases) == oracle_sort_releases(releases)
