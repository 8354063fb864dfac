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
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cvo_py.runtime.gotext.jsoncodec import decode_json, json_kind, json_limit_problem, json_syntax_problem
from updateservice import semver
from updateservice.retrieval import url_problem

JSON = dict[str, Any]
T = TypeVar("T")

# Bounds on what we accept from a remote service (upstream has none): a channel's graph is a few
# hundred kilobytes today; these leave two orders of magnitude of room.
MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_NODES = 50_000
MAX_EDGES = 500_000

ARCH_METADATA = "release.openshift.io/architecture"
MULTI = "Multi"  # a Release's architecture when its node is multi-architecture
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
    metadata: Mapping[str, Any]  # any JSON values (upstream accepts them since 2025); read keys must be strings


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


def _type_error(value: Any, struct: str, path: str, go_type: str) -> GraphError:
    kind = json_kind(value)
    return _invalid(f"json: cannot unmarshal {kind} into Go struct field {struct}.{path} of type {go_type}")


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
        raise _invalid(f"json: cannot unmarshal {json_kind(version)} into Go value of type string")
    try:
        parsed = semver.parse(version)
    except semver.SemverError as err:
        raise _invalid(str(err)) from None
    metadata = _object(f.get("metadata"), "node", "nodes.metadata", "map[string]interface {}")
    return Node(parsed, _string(f.get("payload"), "node", "nodes.payload"), dict(metadata))


def _edge(raw: Any) -> tuple[int, int]:
    if not isinstance(raw, list):
        raise _invalid(f"json: cannot unmarshal {json_kind(raw)} into Go value of type []int")
    for value in raw:
        if isinstance(value, bool) or not isinstance(value, int):
            shown = json.dumps(value) if isinstance(value, float) else json_kind(value)
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


def parse_graph(body: bytes, deadline: Deadline | None = None) -> Graph:
    """The update service's response body as a Graph, or GraphError (ResponseInvalid/ResponseFailed);
    `deadline` is checked as it goes."""
    if len(body) > MAX_BODY_BYTES:
        raise GraphError("ResponseFailed", f"response body larger than {MAX_BODY_BYTES} bytes")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _invalid(f"invalid UTF-8 in response body at offset {err.start}") from None
    try:
        doc = decode_json(text)
    except json.JSONDecodeError as err:
        raise _invalid(json_syntax_problem(err)) from None
    except (RecursionError, ValueError) as err:
        # Nesting past the recursion limit, or integers too long for Python to convert.
        raise _invalid(json_limit_problem(err)) from None
    if not isinstance(doc, dict):
        raise _invalid(f"json: cannot unmarshal {json_kind(doc)} into Go value of type cincinnati.graph")
    f = _fields(doc, ("nodes", "edges", "conditionalEdges"))
    raw_nodes = _list(f.get("nodes"), "graph", "nodes", "[]cincinnati.node")
    raw_edges = _list(f.get("edges"), "graph", "edges", "[]cincinnati.edge")
    if len(raw_nodes) > MAX_NODES or len(raw_edges) > MAX_EDGES:
        raise _invalid(f"graph too large: {len(raw_nodes)} nodes, {len(raw_edges)} edges "
                       f"(at most {MAX_NODES} and {MAX_EDGES})")
    check = deadline.check if deadline is not None else _no_deadline
    check("decoding the graph")
    raw_groups = _list(f.get("conditionalEdges"), "graph", "conditionalEdges", "[]cincinnati.conditionalEdges")
    return Graph(
        nodes=tuple(_checked(_node, raw_nodes, check, "decoding nodes")),
        edges=tuple(_checked(_edge, raw_edges, check, "decoding edges")),
        conditional_edges=tuple(_checked(_conditional, raw_groups, check, "decoding conditional edges")),
    )


def _checked(decode: Callable[[Any], T], raw: Sequence[Any], check: Callable[[str], None], stage: str) -> Iterator[T]:
    for position, item in enumerate(raw):
        if not position & _CHECK_EVERY:
            check(stage)
        yield decode(item)


# -- from graph to status ----------------------------------------------------------------------------


def release_of(node: Node) -> JSON:
    """A node as a status `Release`; metadata errors are raised as ValueError (the caller words them)."""
    version = str(node.version)
    release: JSON = {"version": version, "image": node.image}
    for key in ("url", ARCH_METADATA, CHANNELS_METADATA):
        if key in node.metadata and not isinstance(node.metadata[key], str):
            raise ValueError(f"{key} metadata of {version} is a {json_kind(node.metadata[key])}, not a string")
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
        release["channels"] = sorted(set(channels.split(",")))  # a set in the API: a repeat is rejected
    if ARCH_METADATA in node.metadata:
        release["architecture"] = MULTI  # in status only with the ImageStreamImportMode gate
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
    good: list[tuple[semver.Version, JSON]] = []
    bad: list[JSON] = []
    for release in releases:
        try:
            good.append((semver.parse(str(release.get("version", ""))), dict(release)))
        except semver.SemverError:
            bad.append(dict(release))
    good.sort(key=lambda pair: pair[0], reverse=True)
    return [release for _, release in good] + bad


def select_updates(graph: Graph, current_version: str, *, want_multi: bool = False,
                   current_is_multi: bool = False, deadline: Deadline | None = None) -> Updates:
    """The CVO's selection: unconditional edges from the current node, conditional edges from its
    version string, minus conflicts; GraphError for a missing or unusable node.

    Linear in the graph's size: nodes are looked up by version through one index, and a group's
    risks are pruned once for all its edges (each update of a group shares that group's risk list:
    read-only). `deadline` is checked as it goes (GraphError once it has passed)."""
    check = deadline.check if deadline is not None else _no_deadline
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

    available = _recommended_from(graph, index, check)
    # (release, target version, group): risks are pruned per group below, not per edge.
    conditional = _conditional_edges_from(graph, str(current), check)
    conditional_images = {release["image"] for release, _, _ in conditional}
    seen: set[str] = set()
    unique: list[JSON] = []
    for release in available:
        if release["image"] not in conditional_images and release["image"] not in seen:
            seen.add(release["image"])
            unique.append(release)

    usable: dict[int, list[JSON] | None] = {}
    for _, _, number in conditional:
        if number not in usable:
            check("pruning risks")
            usable[number] = _usable_risks(graph.conditional_edges[number].risks)
    kept = [(release, version, number) for release, version, number in conditional if usable[number] is not None]
    image_count: dict[str, int] = {}
    for release, _, _ in kept:
        image_count[release["image"]] = image_count.get(release["image"], 0) + 1
    kept = [entry for entry in kept if image_count[entry[0]["image"]] == 1]
    kept.sort(key=lambda entry: entry[1], reverse=True)
    check("sorting updates")
    return Updates(
        current=current_release,
        available=tuple(sort_releases(unique)),
        conditional=tuple({"release": release, "risks": usable[number]} for release, _, number in kept),
    )


def _recommended_from(graph: Graph, index: int, check: Callable[[str], None]) -> list[JSON]:
    """The releases the unconditional edges from the node at `index` lead to."""
    count = len(graph.nodes)
    available: list[JSON] = []
    for position, (origin, destination) in enumerate(graph.edges):
        if not position & _CHECK_EVERY:
            check("selecting updates")
        if not (0 <= origin < count and 0 <= destination < count):
            raise _invalid(f"edge [{origin}, {destination}] names a node the graph does not have ({count} nodes)")
        if origin != index:
            continue
        try:
            available.append(release_of(graph.nodes[destination]))
        except ValueError as err:
            raise _invalid(f"invalid recommended update node: {err}") from None
    return available


def _conditional_edges_from(
    graph: Graph, current_text: str, check: Callable[[str], None]
) -> list[tuple[JSON, semver.Version, int]]:
    """(release, its version, the number of its group) of each conditional edge from the version
    `current_text` names."""
    conditional: list[tuple[JSON, semver.Version, int]] = []
    by_text: dict[str, Node] | None = None  # the first node of each version string, built when needed
    for number, group in enumerate(graph.conditional_edges):
        for position, (origin_text, target_text) in enumerate(group.edges):
            if not position & _CHECK_EVERY:
                check("selecting conditional updates")
            if origin_text != current_text:
                continue
            if by_text is None:
                by_text = _nodes_by_text(graph.nodes, check)
            target = by_text.get(target_text)
            if target is None:
                raise _invalid(f"no node for conditional update {target_text}")
            try:
                release = release_of(target)
            except ValueError as err:
                raise _invalid(f"invalid conditional update node: {err}") from None
            conditional.append((release, target.version, number))
    return conditional


# How often (every 2**k items, minus one as a mask) the long loops look at the deadline.
_CHECK_EVERY = 1023


def _no_deadline(_stage: str) -> None:
    return None


def _nodes_by_text(nodes: Sequence[Node], check: Callable[[str], None]) -> dict[str, Node]:
    out: dict[str, Node] = {}
    for position, node in enumerate(nodes):
        if not position & _CHECK_EVERY:
            check("indexing nodes")
        out.setdefault(str(node.version), node)
    return out


def _usable_risks(risks: Sequence[Mapping[str, Any]]) -> list[JSON] | None:
    """A group's risks with only their usable rules; None when a risk has none left (a risk that
    cannot be judged drops every update of the group)."""
    out: list[JSON] = []
    for risk in risks:
        rules = _valid_rules(risk["matchingRules"])
        if not rules:
            return None
        out.append({**risk, "matchingRules": rules})
    return out


class Deadline:
    """When an attempt (fetch, decode, select) must be over; `check(stage)` raises a
    ResponseFailed GraphError once it has passed. The clock is injected (seconds, monotonic)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._end = clock() + seconds

    def remaining(self) -> float:
        return max(0.0, self._end - self._clock())

    def check(self, stage: str) -> None:
        if self._clock() >= self._end:
            raise GraphError(
                "ResponseFailed", f"the answer was not processed within the {self.seconds:g}s deadline ({stage})"
            )
