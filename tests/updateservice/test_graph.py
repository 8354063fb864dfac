"""The update service's graph → availableUpdates / conditionalUpdates, by the CVO's rules."""

from __future__ import annotations

import json
from typing import Any

import pytest

from testkit.corpus.values import PYTHON_WORDING
from updateservice import graph as g


def node(version: str, image: str | None = None, **metadata: str) -> dict[str, Any]:
    out: dict[str, Any] = {"version": version, "payload": image or f"reg.example/rel@sha256:{version}"}
    if metadata:
        out["metadata"] = metadata
    return out


def always(name: str = "R") -> dict[str, Any]:
    return {"name": name, "url": f"https://example.com/{name}", "message": f"{name} hurts.",
            "matchingRules": [{"type": "Always"}]}


def body(**doc: Any) -> bytes:
    return json.dumps(doc).encode()


def select(doc: dict[str, Any], current: str = "4.16.3") -> g.Updates:
    return g.select_updates(g.parse_graph(json.dumps(doc).encode()), current)


def test_unconditional_and_conditional_updates_newest_first() -> None:
    doc = {
        "nodes": [node("4.16.3", url="https://example.com/4.16.3",
                       **{g.CHANNELS_METADATA: "stable-4.16,fast-4.16"}),
                  node("4.16.5"), node("4.16.10"), node("4.16.6")],
        "edges": [[0, 1], [0, 2]],
        "conditionalEdges": [{"edges": [{"from": "4.16.3", "to": "4.16.6"}], "risks": [always("DriverX")]}],
    }
    updates = select(doc)
    assert [r["version"] for r in updates.available] == ["4.16.10", "4.16.5"]
    assert updates.current == {"version": "4.16.3", "image": "reg.example/rel@sha256:4.16.3",
                               "url": "https://example.com/4.16.3", "channels": ["fast-4.16", "stable-4.16"]}
    assert [u["release"]["version"] for u in updates.conditional] == ["4.16.6"]
    assert updates.conditional[0]["risks"][0]["name"] == "DriverX"


def test_keys_match_case_insensitively_and_unknown_keys_are_ignored() -> None:
    doc = {"Nodes": [{"VERSION": "4.16.3", "Payload": "a"}, {"version": "4.16.4", "payload": "b"}],
           "EDGES": [[0, 1]], "extra": {"anything": 1}}
    assert [r["image"] for r in select(doc).available] == ["b"]


def test_an_unconditional_update_with_a_conditional_updates_image_is_dropped() -> None:
    doc = {"nodes": [node("4.16.3"), node("4.16.5", "same")], "edges": [[0, 1]],
           "conditionalEdges": [{"edges": [{"from": "4.16.3", "to": "4.16.5"}], "risks": [always()]}]}
    updates = select(doc)
    assert updates.available == ()
    assert [u["release"]["image"] for u in updates.conditional] == ["same"]


def test_rules_are_pruned_and_a_risk_without_rules_drops_its_update() -> None:
    risky = {"name": "Bad", "url": "u", "message": "m", "matchingRules": [
        {"type": "Unknown"},
        {"type": "Always", "promql": {"promql": "1"}},
        {"type": "PromQL", "promql": {"promql": ""}}]}
    mixed = {"name": "Ok", "url": "u", "message": "m", "matchingRules": [
        {"type": "Unknown"}, {"type": "PromQL", "promql": {"promql": "vector(1)"}}]}
    doc = {"nodes": [node("4.16.3"), node("4.16.5"), node("4.16.6")],
           "conditionalEdges": [{"edges": [{"from": "4.16.3", "to": "4.16.5"}], "risks": [risky]},
                                {"edges": [{"from": "4.16.3", "to": "4.16.6"}], "risks": [mixed]}]}
    updates = select(doc)
    assert [u["release"]["version"] for u in updates.conditional] == ["4.16.6"]
    rules = updates.conditional[0]["risks"][0]["matchingRules"]
    assert rules == [{"type": "PromQL", "promql": {"promql": "vector(1)"}}]


def test_conditional_updates_sharing_an_image_are_all_dropped() -> None:
    doc = {"nodes": [node("4.16.3"), node("4.16.5", "x"), node("4.16.6", "x")],
           "conditionalEdges": [{"edges": [{"from": "4.16.3", "to": "4.16.5"}, {"from": "4.16.3", "to": "4.16.6"}],
                                 "risks": [always()]}]}
    assert select(doc).conditional == ()


def test_multi_architecture_migration_offers_the_current_version_only() -> None:
    doc = {"nodes": [node("4.16.3", "multi-img"), node("4.16.5")], "edges": [[0, 1]]}
    updates = g.select_updates(g.parse_graph(json.dumps(doc).encode()), "4.16.3", want_multi=True)
    assert [r["image"] for r in updates.available] == ["multi-img"]


@pytest.mark.parametrize(
    ("doc", "reason", "message"),
    [
        ({"nodes": [node("4.16.4")]}, "VersionNotFound", ""),
        ({"nodes": [node("4.16.3"), node("4.16.5")], "edges": [[0, 1, 2]]}, "ResponseInvalid",
         "expected 2 fields, found 3"),
        ({"nodes": [node("4.16.3")], "edges": [[0, 7]]}, "ResponseInvalid", "names a node the graph does not have"),
        ({"nodes": [node("4.16.3"), {"version": "4.x.0", "payload": "p"}]}, "ResponseInvalid",
         'Invalid character(s) found in minor number "x"'),
        ({"nodes": [node("4.16.3"), {"version": 4, "payload": "p"}]}, "ResponseInvalid",
         "json: cannot unmarshal number into Go value of type string"),
        ({"nodes": [{"version": "4.16.3", "payload": 7}]}, "ResponseInvalid",
         "json: cannot unmarshal number into Go struct field node.nodes.payload of type string"),
        ({"nodes": "x"}, "ResponseInvalid", "json: cannot unmarshal string into Go struct field graph.nodes"),
        ({"nodes": [node("4.16.3")], "conditionalEdges": [{"edges": [{"from": "4.16.3", "to": "4.17.0"}],
                                                           "risks": [always()]}]},
         "ResponseInvalid", "no node for conditional update 4.17.0"),
        ({"nodes": [node("4.16.3", url="http://bad host/")]}, "ResponseInvalid", "invalid current node: invalid URL"),
        ({"nodes": [node("4.16.3"), node("4.16.5", **{g.ARCH_METADATA: "arm64"})], "edges": [[0, 1]]},
         "ResponseInvalid", 'invalid recommended update node: Unrecognized architecture value "arm64"'),
    ],
)
def test_unusable_graphs_name_the_reason(doc: dict[str, Any], reason: str, message: str) -> None:
    with pytest.raises(g.GraphError) as caught:
        select(doc)
    assert caught.value.reason == reason
    assert message in str(caught.value)


def test_node_metadata_need_not_be_strings() -> None:
    """Upstream reads node metadata as any JSON since 2025: other values are ignored, and only a key
    it reads (url, architecture, channels) must be a string, on a node that is used."""
    extra = {"io.openshift.upgrades.graph.release.manifestref": {"digest": "sha256:x"}, "rank": 3, "gated": True}
    doc = {"nodes": [node("4.16.3"), {**node("4.16.5"), "metadata": {**extra, "url": "https://e/4.16.5"}},
                     {**node("4.15.0"), "metadata": {"url": 7}}], "edges": [[0, 1]]}  # fmt: skip
    assert [(r["version"], r.get("url")) for r in select(doc).available] == [("4.16.5", "https://e/4.16.5")]
    doc["edges"] = [[0, 1], [0, 2]]
    with pytest.raises(g.GraphError) as caught:
        select(doc)
    assert (caught.value.reason, str(caught.value)) == (
        "ResponseInvalid",
        "invalid recommended update node: url metadata of 4.15.0 is a number, not a string",
    )


def test_a_multi_architecture_cluster_is_offered_the_multi_graph() -> None:
    """Running a multi payload, the cluster asks for the multi graph and gets its updates (not only
    its own version, which is what a single-architecture cluster switching to multi is offered)."""
    doc = {"nodes": [node("4.16.3", "multi-3"), node("4.16.5", "multi-5")], "edges": [[0, 1]]}
    parsed = g.parse_graph(json.dumps(doc).encode())
    updates = g.select_updates(parsed, "4.16.3", want_multi=True, current_is_multi=True)
    assert [r["image"] for r in updates.available] == ["multi-5"]


def test_metadata_errors_count_only_on_nodes_that_are_used() -> None:
    doc = {"nodes": [node("4.16.3"), node("4.16.5"), node("4.15.0", **{g.ARCH_METADATA: "bogus"})], "edges": [[0, 1]]}
    assert [r["version"] for r in select(doc).available] == ["4.16.5"]


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"", "unexpected end of JSON input"),
        (b'{"nodes": [', "unexpected end of JSON input"),
        (b"garbage", "invalid character 'g'"),
        (b"'nodes'", "invalid character '\\''"),  # Go's quoteChar, not Python's repr
        # Python's decoder takes these as numbers; Go's refuses them.
        (b'{"nodes": [{"version": "4.16.3", "payload": "x", "metadata": {"n": NaN}}]}',
         "invalid character 'N' at offset 68: looking for beginning of value"),
        (b'{"nodes": [], "edges": [[Infinity, 0]]}',
         "invalid character 'I' at offset 26: looking for beginning of value"),
        (b'{"nodes": [], "edges": [[-Infinity, 0]]}', "invalid character 'I' at offset 27: in numeric literal"),
        (b"[1]", "cannot unmarshal array into Go value of type cincinnati.graph"),
        (b"\xff\xfe", "invalid UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "exceeded max depth"),  # Go's words, not Python's recursion limit
        (b'{"nodes": [{"version": "4.16.3", "payload": ' + b"9" * 5000 + b"}]}", "cannot unmarshal number"),
    ],
)
def test_bad_bodies_are_one_line_response_errors(raw: bytes, fragment: str) -> None:
    with pytest.raises(g.GraphError) as caught:
        g.parse_graph(raw)
    assert caught.value.reason == "ResponseInvalid"
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not PYTHON_WORDING.search(str(caught.value)), str(caught.value)


def test_huge_bodies_are_refused_before_parsing() -> None:
    with pytest.raises(g.GraphError) as caught:
        g.parse_graph(b" " * (g.MAX_BODY_BYTES + 1))
    assert caught.value.reason == "ResponseFailed"


def test_cycles_and_duplicate_versions_do_not_loop_or_duplicate() -> None:
    doc = {"nodes": [node("4.16.3"), node("4.16.5"), node("4.16.5")], "edges": [[0, 1], [1, 0], [0, 1], [0, 2]]}
    assert [r["version"] for r in select(doc).available] == ["4.16.5"]


def test_a_multi_architecture_node_is_a_release_whose_architecture_is_multi() -> None:
    multi = {g.ARCH_METADATA: "multi"}
    doc = {
        "nodes": [node("4.16.3", "multi-3", **multi), node("4.16.5", "multi-5", **multi), node("4.16.6", "single-6"),
                  node("4.16.7", "multi-7", **multi)],
        "edges": [[0, 1], [0, 2]],
        "conditionalEdges": [{"edges": [{"from": "4.16.3", "to": "4.16.7"}], "risks": [always("DriverX")]}],
    }
    updates = g.select_updates(g.parse_graph(json.dumps(doc).encode()), "4.16.3", want_multi=True,
                               current_is_multi=True)
    assert updates.current["architecture"] == "Multi"
    assert [(r["version"], r.get("architecture")) for r in updates.available] == [("4.16.6", None), ("4.16.5", "Multi")]
    assert [u["release"].get("architecture") for u in updates.conditional] == ["Multi"]
