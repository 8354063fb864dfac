"""An update service's graph, and the cluster's updates in it (pure).

`parse_graph(body)` reads the update service's JSON (Cincinnati v1: `nodes`, `edges`,
`conditionalEdges`) the way the CVO decodes it — keys match case-insensitively, unknown keys are
ignored, one node with a bad version fails the whole body — and `select_updates(graph, current,
multi)` derives `availableUpdates` and `conditionalUpdates` by the CVO's rules. Failures are
`GraphError`s carrying the `RetrievedUpdates` reason and the message after "Unable to retrieve
available updates: ".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cvo_py import gotext
from updates import semver
from updates.retrieval import url_problem

JSON = dict[str, Any]

# Bounds on what we accept from a remote service (upstream has none): a channel's graph is a few
# hundred kilobytes today; these leave two orders of magnitude of room.
MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_NODES = 50_000
MAX_EDGES = 500_000

ARCH_METADATA = "release.openshift.io/architecture"
CHANNELS_METADATA = "io.openshift.upgrades.graph.release.channels"


class GraphError(Exception):
    """A graph that cannot be used: `reason` is the RetrievedUpdates reason, str() the message tail."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _invalid(message: str) -> GraphError:
    return GraphError("ResponseInvalid", message)


@dataclass(frozen=True)
class Node:
    version: semver.Version
    image: str
    metadata: Mapping[str, str]


@dataclass(frozen=True)
class ConditionalEdges:
    edges: tuple[tuple[str, str], ...]
    risks: tuple[JSON, ...]


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...] = ()
    edges: tuple[tuple[int, int], ...] = ()
    conditional_edges: tuple[ConditionalEdges, ...] = ()


# -- decoding, with the decoder's error texts ------------------------------------------------------


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_error(value: Any, struct: str, path: str, go_type: str) -> GraphError:
    return _invalid(f"json: cannot unmarshal {_kind(value)} into Go struct field {struct}.{path} of type {go_type}")


def _fields(obj: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The decoder's field matching: an exact key wins, else a case-insensitive one; others ignored."""
    out: dict[str, Any] = {}
    for name in names:
        if name in obj:
            out[name] = obj[name]
            continue
        for key, value in obj.items():
            if key.lower() == name.lower():
                out[name] = value
                break
    return out


def _list(value: Any, struct: str, path: str, go_type: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _type_error(value, struct, path, go_type)
    return value


def _string(value: Any, struct: str, path: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _type_error(value, struct, path, "string")
    return value


def _object(value: Any, struct: str, path: str, go_type: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _type_error(value, struct, path, go_type)
    return value


def _node(raw: Any) -> Node:
    obj = _object(raw, "graph", "nodes", "cincinnati.node")
    f = _fields(obj, ("version", "payload", "metadata"))
    version = f.get("version")
    if not isinstance(version, str):
        raise _invalid(f"json: cannot unmarshal {_kind(version)} into Go value of type string")
    try:
        parsed = semver.parse(version)
    except semver.SemverError as err:
        raise _invalid(str(err)) from None
    metadata = _object(f.get("metadata"), "node", "nodes.metadata", "map[string]string")
    for value in metadata.values():
        if not isinstance(value, str):
            raise _type_error(value, "node", "nodes.metadata", "string")
    return Node(parsed, _string(f.get("payload"), "node", "nodes.payload"), dict(metadata))


def _edge(raw: Any) -> tuple[int, int]:
    if not isinstance(raw, list):
        raise _invalid(f"json: cannot unmarshal {_kind(raw)} into Go value of type []int")
    for value in raw:
        if isinstance(value, bool) or not isinstance(value, int):
            shown = json.dumps(value) if isinstance(value, float) else _kind(value)
            prefix = "number " if isinstance(value, float) else ""
            raise _invalid(f"json: cannot unmarshal {prefix}{shown} into Go value of type int")
    if len(raw) != 2:
        raise _invalid(f"expected 2 fields, found {len(raw)}")
    return raw[0], raw[1]


def _risk(raw: Any) -> JSON:
    obj = _object(raw, "conditionalEdges", "conditionalEdges.risks", "v1.ConditionalUpdateRisk")
    f = _fields(obj, ("url", "name", "message", "matchingRules"))
    rules = []
    for rule_raw in _list(f.get("matchingRules"), "ConditionalUpdateRisk", "conditionalEdges.risks.matchingRules",
                          "[]v1.ClusterCondition"):
        rule_obj = _object(rule_raw, "ConditionalUpdateRisk", "conditionalEdges.risks.matchingRules",
                           "v1.ClusterCondition")
        rf = _fields(rule_obj, ("type", "promql"))
        rule: JSON = {"type": _string(rf.get("type"), "ClusterCondition", "conditionalEdges.risks.matchingRules.type")}
        if rf.get("promql") is not None:
            p_obj = _object(rf["promql"], "ClusterCondition", "conditionalEdges.risks.matchingRules.promql",
                            "v1.PromQLClusterCondition")
            pf = _fields(p_obj, ("promql",))
            rule["promql"] = {"promql": _string(pf.get("promql"), "PromQLClusterCondition",
                                                "conditionalEdges.risks.matchingRules.promql.promql")}
        rules.append(rule)
    return {
        "url": _string(f.get("url"), "ConditionalUpdateRisk", "conditionalEdges.risks.url"),
        "name": _string(f.get("name"), "ConditionalUpdateRisk", "conditionalEdges.risks.name"),
        "message": _string(f.get("message"), "ConditionalUpdateRisk", "conditionalEdges.risks.message"),
        "matchingRules": rules,
    }


def _conditional(raw: Any) -> ConditionalEdges:
    obj = _object(raw, "graph", "conditionalEdges", "cincinnati.conditionalEdges")
    f = _fields(obj, ("edges", "risks"))
    edges = []
    for edge_raw in _list(f.get("edges"), "conditionalEdges", "conditionalEdges.edges", "[]cincinnati.conditionalEdge"):
        edge_obj = _object(edge_raw, "conditionalEdges", "conditionalEdges.edges", "cincinnati.conditionalEdge")
        ef = _fields(edge_obj, ("from", "to"))
        edges.append((_string(ef.get("from"), "conditionalEdge", "conditionalEdges.edges.from"),
                      _string(ef.get("to"), "conditionalEdge", "conditionalEdges.edges.to")))
    risks = [_risk(r) for r in _list(f.get("risks"), "conditionalEdges", "conditionalEdges.risks",
                                     "[]v1.ConditionalUpdateRisk")]
    return ConditionalEdges(tuple(edges), tuple(risks))


def _syntax_error(body: str, err: json.JSONDecodeError) -> GraphError:
    if err.pos >= len(body.rstrip()):
        return _invalid("unexpected end of JSON input")
    return _invalid(f"invalid character {body[err.pos]!r} at offset {err.pos + 1}: {err.msg.lower()}")


def parse_graph(body: bytes) -> Graph:
    """The update service's response body as a Graph, or GraphError (ResponseInvalid/ResponseFailed)."""
    if len(body) > MAX_BODY_BYTES:
        raise GraphError("ResponseFailed", f"response body larger than {MAX_BODY_BYTES} bytes")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _invalid(f"invalid UTF-8 in response body at offset {err.start}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise _syntax_error(text, err) from None
    except (RecursionError, ValueError) as err:
        # Nesting past the recursion limit, or integers too long for Python to convert.
        raise _invalid(gotext.json_limit_problem(err)) from None
    if not isinstance(doc, dict):
        raise _invalid(f"json: cannot unmarshal {_kind(doc)} into Go value of type cincinnati.graph")
    f = _fields(doc, ("nodes", "edges", "conditionalEdges"))
    raw_nodes = _list(f.get("nodes"), "graph", "nodes", "[]cincinnati.node")
    raw_edges = _list(f.get("edges"), "graph", "edges", "[]cincinnati.edge")
    if len(raw_nodes) > MAX_NODES or len(raw_edges) > MAX_EDGES:
        raise _invalid(f"graph too large: {len(raw_nodes)} nodes, {len(raw_edges)} edges "
                       f"(at most {MAX_NODES} and {MAX_EDGES})")
    return Graph(
        nodes=tuple(_node(n) for n in raw_nodes),
        edges=tuple(_edge(e) for e in raw_edges),
        conditional_edges=tuple(_conditional(c) for c in _list(f.get("conditionalEdges"), "graph",
                                                                "conditionalEdges",
                                                                "[]cincinnati.conditionalEdges")),
    )


# -- from graph to status ----------------------------------------------------------------------------


def release_of(node: Node) -> JSON:
    """A node as a status `Release`; metadata errors are raised as ValueError (the caller words them)."""
    version = str(node.version)
    release: JSON = {"version": version, "image": node.image}
    if "url" in node.metadata:
        url = node.metadata["url"]
        problem = url_problem(url)
        if problem:
            raise ValueError(f"invalid URL for {version}: {problem}")
        release["url"] = url
    if ARCH_METADATA in node.metadata and node.metadata[ARCH_METADATA] != "multi":
        raise ValueError(f"Unrecognized architecture value {json.dumps(node.metadata[ARCH_METADATA])}")
    channels = node.metadata.get(CHANNELS_METADATA)
    if channels:
        release["channels"] = sorted(channels.split(","))
    return release


@dataclass(frozen=True)
class Updates:
    """What the graph offers the cluster: `available` releases and `conditional` updates with risks."""

    current: JSON
    available: tuple[JSON, ...] = ()
    conditional: tuple[JSON, ...] = field(default=())


def _valid_rules(rules: Sequence[Mapping[str, Any]]) -> list[JSON]:
    kept: list[JSON] = []
    for rule in rules:
        kind = rule.get("type")
        query = (rule.get("promql") or {}).get("promql", "")
        if kind == "Always" and "promql" not in rule:
            kept.append({"type": "Always"})
        elif kind == "PromQL" and query:
            kept.append({"type": "PromQL", "promql": {"promql": query}})
        # Unknown types are dropped; Always with a query and PromQL without one are invalid.
    return kept


def sort_releases(releases: Sequence[Mapping[str, Any]]) -> list[JSON]:
    """Newest first by semver; a version that is not semver goes last."""
    def key(release: Mapping[str, Any]) -> tuple[int, semver.Version | None]:
        try:
            return (1, semver.parse(str(release.get("version", ""))))
        except semver.SemverError:
            return (0, None)

    good = [dict(r) for r in releases if key(r)[0]]
    bad = [dict(r) for r in releases if not key(r)[0]]
    return sorted(good, key=lambda r: semver.parse(r["version"]), reverse=True) + bad


def select_updates(graph: Graph, current_version: str, *, want_multi: bool = False,
                   current_is_multi: bool = False) -> Updates:
    """The CVO's selection: unconditional edges from the current node, conditional edges from its
    version string, minus conflicts; GraphError for a missing or unusable node."""
    current = semver.parse(current_version)
    index = next((i for i, n in enumerate(graph.nodes) if n.version == current), None)
    if index is None:
        raise GraphError("VersionNotFound", "")  # the caller adds the channel to the message
    try:
        current_release = release_of(graph.nodes[index])
    except ValueError as err:
        raise _invalid(f"invalid current node: {err}") from None
    if want_multi and not current_is_multi:
        # Migrating to a multi-architecture payload: the only update is the current version's.
        return Updates(current=current_release, available=(current_release,))

    available: list[JSON] = []
    for origin, destination in graph.edges:
        if not (0 <= origin < len(graph.nodes) and 0 <= destination < len(graph.nodes)):
            raise _invalid(f"edge [{origin}, {destination}] names a node the graph does not have "
                           f"({len(graph.nodes)} nodes)")
        if origin != index:
            continue
        try:
            available.append(release_of(graph.nodes[destination]))
        except ValueError as err:
            raise _invalid(f"invalid recommended update node: {err}") from None

    conditional: list[JSON] = []
    current_text = str(current)
    for group in graph.conditional_edges:
        for origin_text, target_text in group.edges:
            if origin_text != current_text:
                continue
            target = next((n for n in graph.nodes if str(n.version) == target_text), None)
            if target is None:
                raise _invalid(f"no node for conditional update {target_text}")
            try:
                release = release_of(target)
            except ValueError as err:
                raise _invalid(f"invalid conditional update node: {err}") from None
            conditional.append({"release": release, "risks": [dict(r) for r in group.risks]})

    conditional_images = {c["release"]["image"] for c in conditional}
    seen: set[str] = set()
    unique: list[JSON] = []
    for release in available:
        if release["image"] not in conditional_images and release["image"] not in seen:
            seen.add(release["image"])
            unique.append(release)
    available = unique

    pruned: list[JSON] = []
    for update in conditional:
        risks = []
        for risk in update["risks"]:
            rules = _valid_rules(risk["matchingRules"])
            if not rules:
                break  # a risk with no usable rule cannot be judged: the update is dropped
            risks.append({**risk, "matchingRules": rules})
        else:
            pruned.append({"release": update["release"], "risks": risks})
    image_count: dict[str, int] = {}
    for update in pruned:
        image_count[update["release"]["image"]] = image_count.get(update["release"]["image"], 0) + 1
    pruned = [u for u in pruned if image_count[u["release"]["image"]] == 1]

    return Updates(
        current=current_release,
        available=tuple(sort_releases(available)),
        conditional=tuple(sorted(pruned, key=lambda u: semver.parse(u["release"]["version"]), reverse=True)),
    )
