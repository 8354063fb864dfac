"""Kubernetes' protobuf read down to the fields used, as JSON would give them: bodies written here
with the reader's own message classes (what the API server writes is compared with its JSON in
tests/status/updatestatus/client/test_node_list_live.py), each refusal, an error's Status, and
the C implementation's own class maker against the public one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cvo_py.runtime import kubeproto, liststream
from cvo_py.runtime.jsonfields import STR, trim
from cvo_py.runtime.kubeproto import Unreadable, read_list, status_json
from status.updatestatus.insights.inputs import NODE, NODE_READ_ONCE

NODE_LIST = {"metadata": {"resourceVersion": STR, "continue": STR}, "items": [NODE]}
NODE_LIST_READ_ONCE = {"metadata": {"resourceVersion": STR, "continue": STR}, "items": [NODE_READ_ONCE]}
MCO = "machineconfiguration.openshift.io/"


@pytest.fixture(params=["upb", "public"], autouse=True)
def implementation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test with the classes made by the C implementation's own maker, and by the public
    message factory (where that implementation is not importable)."""
    monkeypatch.setattr(kubeproto, "_classes", {})
    if request.param == "public":
        import builtins

        real_import = builtins.__import__

        def no_upb(name: str, *args: Any, **kwargs: Any) -> Any:
            if name == "google._upb":
                raise ImportError(name)
            return real_import(name, *args, **kwargs)

        monkeypatch.setattr(builtins, "__import__", no_upb)
    yield request.param


def body(kind: str, message: Any, encoding: str = "") -> bytes:
    """What the API server sends: the magic, then a runtime.Unknown holding the object."""
    classes = kubeproto._message_classes()
    unknown = classes["Unknown"](raw=message.SerializeToString(), contentEncoding=encoding)
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = "v1", kind
    return kubeproto.MAGIC + unknown.SerializeToString()


def go_time(seconds: int | None) -> bytes:
    """A `metav1.Time` as Go writes it: nothing for the zero time (None), else both fields."""
    if seconds is None:
        return b""
    return kubeproto._varint_field(1, seconds % (1 << 64)) + kubeproto._varint_field(2, 0)


def json_time(seconds: int | None) -> str | None:
    """The same time as Go's JSON writes it (computed apart from the reader)."""
    if seconds is None:
        return None
    at = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)
    return f"{at.year:04d}" + at.strftime("-%m-%dT%H:%M:%SZ")


def node_list(nodes: list[dict[str, Any]], continue_token: str = "") -> Any:
    """A NodeList message from JSON-shaped nodes (times as Unix seconds, None for the zero time)."""
    classes = kubeproto._message_classes()
    listed = classes["NodeList"]()
    listed.metadata.resourceVersion = "42"
    listed.metadata.continue_ = continue_token
    for node in nodes:
        item = listed.items.add()
        meta = node.get("metadata", {})
        for key in ("name", "namespace", "uid", "resourceVersion"):
            setattr(item.metadata, key, meta.get(key, ""))
        item.metadata.creationTimestamp = go_time(meta.get("created"))
        for field in ("labels", "annotations"):
            for key, value in meta.get(field, {}).items():
                getattr(item.metadata, field).add(key=key, value=value)
        item.spec.unschedulable = node.get("unschedulable", False)
        for cond in node.get("conditions", []):
            added = item.status.conditions.add(type=cond["type"], status=cond["status"])
            added.reason, added.message = cond.get("reason", ""), cond.get("message", "")
            added.lastTransitionTime = go_time(cond.get("since"))
            added.lastHeartbeatTime = go_time(cond.get("heartbeat"))
    return listed


def test_a_node_list_reads_as_its_json_would_read() -> None:
    nodes = [
        {
            "metadata": {
                "name": "worker-0",
                "uid": "u-0",
                "resourceVersion": "7",
                "created": 1_700_000_000,
                "labels": {"a": "", "node-role.kubernetes.io/worker": ""},
                "annotations": {f"{MCO}state": "Done", "other/x": "dropped", f"{MCO}reason": 'é "q"\n'},
            },
            "unschedulable": True,
            "conditions": [
                {"type": "Ready", "status": "True", "since": 1_700_000_100},
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "ok"},
            ],
        },
        {"metadata": {"name": "bare"}},
    ]
    got = read_list(body("NodeList", node_list(nodes, "next")), NODE_LIST, "NodeList")
    assert json.dumps(got) == json.dumps(
        {
            "metadata": {"resourceVersion": "42", "continue": "next"},
            "items": [
                {
                    "metadata": {
                        "name": "worker-0",
                        "uid": "u-0",
                        "resourceVersion": "7",
                        "creationTimestamp": "2023-11-14T22:13:20Z",
                        "labels": {"a": "", "node-role.kubernetes.io/worker": ""},
                        "annotations": {f"{MCO}state": "Done", f"{MCO}reason": 'é "q"\n'},
                    },
                    "spec": {"unschedulable": True},
                    "status": {
                        "conditions": [
                            {"type": "Ready", "status": "True", "lastTransitionTime": "2023-11-14T22:15:00Z"},
                            {  # in the shape's order, as `trim` gives them
                                "type": "MemoryPressure",
                                "status": "False",
                                "reason": "KubeletHasSufficientMemory",
                                "message": "ok",
                                "lastTransitionTime": None,
                            },
                        ]
                    },
                },
                # JSON leaves out the empty fields that are `omitempty` (a zero creationTimestamp:
                # `omitzero`)
                {"metadata": {"name": "bare"}, "spec": {}, "status": {}},
            ],
        }
    )


def test_a_time_json_does_not_write_in_an_item_refuses_the_list() -> None:
    bad = body("NodeList", node_list([{"metadata": {"name": "n", "created": 253402300800}}], "token"))
    with pytest.raises(Unreadable):
        read_list(bad, NODE_LIST, "NodeList")
    streamed = liststream.StreamedList(NODE_LIST, "NodeList", lambda items: None)
    streamed.feed(bad)
    assert streamed.result() is None  # read whole, which says what it is


def _list_body(list_meta: bytes, kind: str = "NodeList", envelope_filler: bytes = b"") -> bytes:
    """A LIST body whose ListMeta is written byte by byte (fields the reader's classes lack)."""
    raw = kubeproto._bytes_field(1, list_meta) + kubeproto._bytes_field(2, b"")  # the metadata, one empty item
    type_meta = kubeproto._bytes_field(2, kind.encode())
    return kubeproto.MAGIC + envelope_filler + kubeproto._bytes_field(1, type_meta) + kubeproto._bytes_field(2, raw)


def test_the_list_meta_is_read_as_it_arrives_as_the_parser_reads_it() -> None:
    """The API server's ListMeta (remainingItemCount, a number, after the continue), and a
    repeated field, whose last value the parser keeps."""
    field = kubeproto._bytes_field
    paged = field(2, b"42") + field(3, b"token") + kubeproto._varint_field(4, 5)
    twice = field(3, b"first") + field(3, b"second")
    for meta, want in ((paged, {"resourceVersion": "42", "continue": "token"}), (twice, {"continue": "second"})):
        got, given, reused = _fed(_list_body(meta), [3, 9], NODE_LIST)
        assert got == read_list(_list_body(meta), NODE_LIST, "NodeList")
        assert got["metadata"] == want and reused and given == got["items"]


def test_items_before_the_list_meta_or_filler_before_the_envelope_are_read_whole() -> None:
    """Not how the API server writes a LIST: read whole, which says what it is; a server's 10 MB
    of empty fields before the envelope is not walked as it arrives."""
    listed = node_list([{"metadata": {"name": "n"}}], "token")
    items_only = node_list([{"metadata": {"name": "n"}}])
    items_only.ClearField("metadata")
    items_first = kubeproto._message_classes()["Unknown"](
        raw=items_only.SerializeToString() + kubeproto._bytes_field(1, listed.metadata.SerializeToString())
    )
    items_first.typeMeta.kind = "NodeList"
    data = kubeproto.MAGIC + items_first.SerializeToString()
    got, given, reused = _fed(data, [], NODE_LIST)
    assert got is None and given == []
    assert read_list(data, NODE_LIST, "NodeList")["items"] == [{"metadata": {"name": "n"}, "spec": {}, "status": {}}]
    filler = kubeproto._bytes_field(9, b"") * 5_000_000
    padded = _list_body(kubeproto._bytes_field(3, b"token"), envelope_filler=filler)
    streamed = liststream.StreamedList(NODE_LIST, "NodeList", lambda items: None)
    for start in range(0, len(padded), 1 << 16):
        streamed.feed(padded[start : start + (1 << 16)])
    assert streamed.result() is None


@pytest.mark.parametrize("shape", [NODE_LIST, NODE_LIST_READ_ONCE], ids=["cached", "read once"])
def test_a_map_entry_with_another_field_is_kept_as_gos_reader_keeps_it(shape: dict[str, Any]) -> None:
    """An annotation or label entry carrying a field besides key and value (a varint, a string):
    Go's reader skips the field and keeps the entry, so JSON has it."""
    state = f"{MCO}state".encode()
    entries = [
        _field(1, state) + _field(2, b"Done") + kubeproto._varint_field(3, 7),
        _field(1, b"node-role.kubernetes.io/worker") + _field(2, b"") + _field(4, b"extra"),
    ]
    meta = _field(1, b"n") + _field(12, entries[0]) + _field(11, entries[1])
    listed = kubeproto.MAGIC + _field(1, _field(2, b"NodeList")) + _field(2, _field(2, _field(1, meta)))
    got = read_list(listed, shape, "NodeList")["items"][0]["metadata"]
    assert got["annotations"] == {f"{MCO}state": "Done"}
    assert got["labels"] == {"node-role.kubernetes.io/worker": ""}


def test_the_epoch_is_a_time_and_the_zero_time_is_null() -> None:
    """Go writes a Timestamp of 0 s for 1970-01-01 and nothing for its zero time."""
    listed = node_list(
        [
            {
                "metadata": {"name": "n", "created": 0},
                "conditions": [
                    {"type": "Ready", "status": "True", "since": 0},
                    {"type": "DiskPressure", "status": "False"},
                ],
            }
        ]
    )
    got = read_list(body("NodeList", listed), NODE_LIST, "NodeList")["items"][0]
    assert got["metadata"]["creationTimestamp"] == "1970-01-01T00:00:00Z"
    assert [c["lastTransitionTime"] for c in got["status"]["conditions"]] == ["1970-01-01T00:00:00Z", None]


def _field(number: int, data: bytes) -> bytes:
    return kubeproto._bytes_field(number, data)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b'{"kind":"NodeList"}', "not a Kubernetes protobuf body"),
        (kubeproto.MAGIC + b"\x0a\x05", "does not parse"),
        # a name that is not UTF-8: JSON would have replaced its bytes
        (
            kubeproto.MAGIC
            + _field(1, _field(2, b"NodeList"))
            + _field(2, _field(2, _field(1, _field(1, b"\xff\xfe")))),
            "does not parse",
        ),
    ],
)
def test_what_cannot_be_read_as_json_gives_it_is_refused(data: bytes, why: str) -> None:
    with pytest.raises(Unreadable, match=why):
        read_list(data, NODE_LIST, "NodeList")


def test_another_kind_or_an_encoded_object_is_refused() -> None:
    with pytest.raises(Unreadable, match="a PodList where a NodeList was asked for"):
        read_list(body("PodList", node_list([])), NODE_LIST, "NodeList")
    with pytest.raises(Unreadable, match="where a NodeList was asked for"):
        read_list(body("NodeList", node_list([]), encoding="gzip"), NODE_LIST, "NodeList")


def test_a_time_json_cannot_write_is_refused() -> None:
    listed = node_list([{"metadata": {"name": "n", "created": 253402300800}}])  # year 10000
    with pytest.raises(Unreadable, match="JSON does not write"):
        read_list(body("NodeList", listed), NODE_LIST, "NodeList")


@given(st.integers(-62135596800, 253402300799))
def test_times_are_written_as_go_writes_a_metav1_time(seconds: int) -> None:
    assert kubeproto.time_text(go_time(seconds)) == json_time(seconds)


@given(st.one_of(st.integers(max_value=-62135596801), st.integers(min_value=253402300800)))
def test_times_outside_the_years_json_writes_are_refused_as_datetime_refuses_them(seconds: int) -> None:
    with pytest.raises(OverflowError):
        json_time(seconds)
    with pytest.raises(Unreadable, match="JSON does not write"):
        kubeproto.rfc3339(seconds)


def test_a_timestamp_this_reader_does_not_know_is_refused() -> None:
    for raw in (b"\x08", b"\x1a\x00", b"\x08" + b"\xff" * 11):
        with pytest.raises(Unreadable):
            kubeproto.time_text(raw)


def test_a_shape_naming_a_field_the_reader_does_not_know_is_refused_when_built() -> None:
    with pytest.raises(TypeError, match=r"NodeSpec\.taints is not read from protobuf"):
        read_list(body("NodeList", node_list([])), {"items": [{"spec": {"taints": STR}}]}, "NodeList")


def test_an_error_status_reads_as_its_json() -> None:
    classes = kubeproto._message_classes()
    status = classes["Status"](status="Failure", message='nodes is forbidden: User "u"', reason="Forbidden", code=403)
    status.details.kind = "nodes"
    status.details.causes.add(reason="FieldValueInvalid", message="bad", field="spec")
    status.details.retryAfterSeconds = 3
    assert json.loads(status_json(body("Status", status))) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'nodes is forbidden: User "u"',
        "reason": "Forbidden",
        "details": {
            "kind": "nodes",
            "causes": [{"reason": "FieldValueInvalid", "message": "bad", "field": "spec"}],
            "retryAfterSeconds": 3,
        },
        "code": 403,
    }
    plain = classes["Status"](status="Failure", reason="NotFound", code=404)
    assert "details" not in json.loads(status_json(body("Status", plain)))  # a pointer JSON leaves out
    assert status_json(b"not protobuf") is None
    not_utf8 = kubeproto.MAGIC + _field(1, _field(2, b"Status")) + _field(2, _field(3, b"bad \xff"))
    assert status_json(not_utf8) is None  # asked for again as JSON, which says how Go replaces it


labels = st.dictionaries(
    st.sampled_from(["a", "b/c", f"{MCO}x", f"{MCO}state", f"{MCO}currentConfig", "node-role.kubernetes.io/master"]),
    st.text(max_size=5),
)
conditions = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["Ready", "DiskPressure", "MemoryPressure", "NetworkUnavailable"]),
            "status": st.sampled_from(["True", "False", ""]),
        },
        optional={
            "reason": st.text(max_size=4),
            "message": st.text(max_size=4),
            "since": st.integers(-62135596800, 253402300799),  # years 1 to 9999
            "heartbeat": st.integers(0, 2**31),
        },
    ),
    max_size=3,
)
nodes = st.lists(
    st.fixed_dictionaries(
        {
            "metadata": st.fixed_dictionaries(
                {"name": st.text(max_size=6)},
                optional={
                    "uid": st.text(max_size=3),
                    "created": st.integers(0, 2**31),
                    "labels": labels,
                    "annotations": labels,
                },
            )
        },
        optional={"unschedulable": st.booleans(), "conditions": conditions},
    ),
    max_size=4,
)


@pytest.mark.parametrize("shape", [NODE_LIST, NODE_LIST_READ_ONCE], ids=["cached", "read once"])
@given(items=nodes)
def test_random_nodes_read_as_their_json_trimmed_reads(shape: dict[str, Any], items: list[dict[str, Any]]) -> None:
    """The reader against the JSON the same nodes encode to (Go's rules written out here:
    omitempty, null times, maps in key order), trimmed to the shape: the whole maps and lists of a
    cache's, and the annotations and conditions a one-shot read keeps (`Only`, `Typed`)."""
    got = read_list(body("NodeList", node_list(items)), shape, "NodeList")

    def as_json(node: dict[str, Any]) -> dict[str, Any]:
        meta = node["metadata"]
        out: dict[str, Any] = {key: meta[key] for key in ("name", "uid") if meta.get(key)}
        if meta.get("created") is not None:
            out["creationTimestamp"] = json_time(meta["created"])
        for field in ("labels", "annotations"):
            if meta.get(field):
                out[field] = meta[field]
        status: dict[str, Any] = {}
        if node.get("conditions"):
            status["conditions"] = [
                {
                    "type": c["type"],
                    "status": c["status"],
                    "lastHeartbeatTime": json_time(c.get("heartbeat")),
                    "lastTransitionTime": json_time(c.get("since")),
                    **{k: c[k] for k in ("reason", "message") if c.get(k)},
                }
                for c in node["conditions"]
            ]
        return {"metadata": out, "spec": {"unschedulable": True} if node.get("unschedulable") else {}, "status": status}

    want = trim({"metadata": {"resourceVersion": "42"}, "items": [as_json(n) for n in items]}, shape)
    assert json.dumps(got) == json.dumps(want)  # the keys in the same order too


def _parsed_whole(body: bytes, kind: str) -> Any:
    """The object as the parser alone reads the envelope (what `kubeproto._object` gave before it
    found `raw` itself): the reference the envelope's own reader is held to."""
    from google.protobuf.message import DecodeError

    classes = kubeproto._message_classes()
    try:
        unknown = classes["Unknown"].FromString(body[len(kubeproto.MAGIC) :])
        if unknown.typeMeta.kind != kind or unknown.contentEncoding:
            raise Unreadable(f"a {unknown.typeMeta.kind or 'object'} where a {kind} was asked for")
        return classes[kind].FromString(unknown.raw)
    except DecodeError as exc:
        raise Unreadable(f"a {kind} that does not parse: {exc}") from None


_texts = st.sampled_from([b"", b"NodeList", b"PodList", b"v1", b"\xff\xfe", b"gzip", b"Node\xed\xa0\x80List"])
_type_metas = st.lists(st.tuples(st.sampled_from([1, 2, 3]), _texts).map(lambda f: _field(f[0], f[1])), max_size=3).map(
    b"".join
)
_raws = st.sampled_from([b"", b"\x0a\x05", b"junk"]) | st.lists(st.text(max_size=4), max_size=2).map(
    lambda names: node_list([{"metadata": {"name": n}} for n in names], "t").SerializeToString()
)
_envelope_fields = st.one_of(
    _type_metas.map(lambda meta: _field(1, meta)),
    _raws.map(lambda raw: _field(2, raw)),
    _texts.map(lambda text: _field(3, text)),
    _texts.map(lambda text: _field(4, text)),  # contentType: not declared here
    st.integers(0, 300).map(lambda n: kubeproto._varint_field(st_field_number(n), n)),
    st.just(b"\x15\x00\x00\x00\x00"),  # a fixed32 field 2
    # what the parser refuses, or reads only so far: field number 0, one past 29 bits, tags of 6
    # bytes, varints of 10 bytes, a length of 10 bytes, groups
    st.sampled_from(
        [
            b"\x00\x00",
            b"\x02\x00",
            b"\xf8\xff\xff\xff\x7f\x00",
            b"\x80\x80\x80\x80\x80\x10\x00",
            b"\xa0\x80\x80\x80\x80\x00\x00",
            b"\x08" + b"\xff" * 9 + b"\x7f",
            b"\x08" + b"\xff" * 9 + b"\x01",
            b"\x22\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00",
            b"\x0c",
            b"\x0b\x08\x01\x0c",
        ]
    ),
)


def st_field_number(n: int) -> int:
    return 1 + n % 5


_good_envelope = st.tuples(_texts, _raws).map(
    lambda version_and_raw: [
        _field(1, _field(1, version_and_raw[0]) + _field(2, b"NodeList")),
        _field(2, version_and_raw[1]),
    ]
)


@given(
    st.tuples(_good_envelope, st.lists(_envelope_fields, max_size=4))
    .flatmap(lambda parts: st.permutations(parts[0] + parts[1]))
    .map(b"".join),
    st.booleans(),
)
# given twice: a TypeMeta whose apiVersion is not UTF-8, then one that names the kind; a
# contentEncoding that is not UTF-8, then an empty one (the parser refuses both)
@example(b"\n\x0e\n\x02\xff\xfe\x12\x08NodeList\x12\x00\n\n\x12\x08NodeList", False)
@example(b"\n\x0c\n\x00\x12\x08NodeList\x12\x00\x1a\x02\xff\xfe\x1a\x00", False)
def test_the_envelope_is_read_as_the_parser_reads_it(envelope: bytes, cut: bool) -> None:
    """Where `raw` lies is found without the parser copying it out; whatever the envelope holds
    (fields given twice, another kind, an encoding, a string that is not UTF-8, bytes cut short),
    the object or the refusal is the parser's."""
    data = kubeproto.MAGIC + envelope
    if cut and len(data) > len(kubeproto.MAGIC) + 1:
        data = data[:-1]

    def outcome(read: Any) -> Any:
        try:
            return read(data, "NodeList")
        except Unreadable as exc:
            return f"Unreadable: {exc}"

    assert outcome(kubeproto._object) == outcome(_parsed_whole)


# -- a LIST read as it arrives ---------------------------------------------------------------------


# an envelope holding a LIST of two Nodes, as the API server writes one
_LISTED = _field(1, _field(1, b"v1") + _field(2, b"NodeList")) + _field(
    2, node_list([{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}], "t").SerializeToString()
)


def _fed(data: bytes, cuts: list[int], shape: dict[str, Any], batch: int = 2) -> tuple[Any, list[Any], bool]:
    """(what `StreamedList.result` gives of `data` fed in pieces cut at `cuts`, None when it is not
    read so, the items given to `on_items` in order, whether the result is made of them)."""
    given: list[Any] = []
    streamed = liststream.StreamedList(shape, "NodeList", given.extend, batch)
    bounds = sorted({0, *cuts, len(data)})
    for start, end in zip(bounds, bounds[1:], strict=False):
        streamed.feed(data[start:end])
    read = streamed.result()
    assert (read is not None) == streamed.reused
    return read, given, streamed.reused


def _read_whole(data: bytes, shape: dict[str, Any]) -> Any:
    try:
        return read_list(data, shape, "NodeList")
    except Unreadable as exc:
        return f"Unreadable: {exc}"


@pytest.mark.parametrize("shape", [NODE_LIST, NODE_LIST_READ_ONCE], ids=["cached", "read once"])
@given(items=st.lists(nodes, max_size=4).map(lambda lists: [n for ns in lists for n in ns]), data=st.data())
def test_a_list_read_as_it_arrives_is_read_as_the_whole_of_it(
    shape: dict[str, Any], items: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Whatever pieces the body arrives in and however many items a batch holds, the items given
    as they arrive are the LIST's, in its order, and the result is the whole body's."""
    whole = body("NodeList", node_list(items, data.draw(st.sampled_from(["", "token"]))))
    cuts = data.draw(st.lists(st.integers(0, len(whole)), max_size=8))
    got, given, reused = _fed(whole, cuts, shape, data.draw(st.integers(1, 5)))
    assert reused and json.dumps(got) == json.dumps(_read_whole(whole, shape))
    assert given == got["items"]


@given(
    st.tuples(_good_envelope, st.lists(_envelope_fields, max_size=4))
    .flatmap(lambda parts: st.permutations(parts[0] + parts[1]))
    .map(b"".join),
    st.lists(st.integers(0, 200), max_size=6),
)
@example(b"\n\x0c\n\x00\x12\x08NodeList\x12\x00\x1a\x02\xff\xfe\x1a\x00", [])
# after a LIST read as it arrived: an encoding, the TypeMeta again, `raw` again (the parser merges them)
@example(_LISTED + _field(3, b"gzip"), [7])
@example(_LISTED + _field(1, _field(2, b"PodList")), [])
@example(_LISTED + _field(2, _field(2, b"")), [30])
@example(_LISTED, [5, 40])
@example(_field(1, _field(2, b"\xff\xfe")) + _field(2, b""), [])  # a kind that is not UTF-8
# a ListMeta whose continue is not UTF-8, one of a wire type the parser refuses, one cut short;
# an item whose name is not UTF-8
@example(_field(1, _field(2, b"NodeList")) + _field(2, _field(1, _field(3, b"\xff\xfe")) + _field(2, b"")), [])
@example(_field(1, _field(2, b"NodeList")) + _field(2, _field(1, b"\x0f") + _field(2, b"")), [20])
@example(_field(1, _field(2, b"NodeList")) + _field(2, _field(1, b"\x12\x05ab")), [])
@example(_field(1, _field(2, b"NodeList")) + _field(2, _field(1, b"") + _field(2, _field(1, _field(1, b"\xff")))), [])
def test_any_envelope_read_as_it_arrives_is_read_as_the_whole_of_it(envelope: bytes, cuts: list[int]) -> None:
    """Fields given twice or out of order, another kind, an encoding, strings that are not UTF-8,
    bytes the parser refuses, a body cut short: the result, object or refusal, is the whole
    body's; the batches make it only when the body is plainly a LIST."""
    data = kubeproto.MAGIC + envelope
    got, given, reused = _fed(data, cuts, NODE_LIST)
    if reused:  # never a LIST the whole read refuses or reads otherwise
        assert got == _read_whole(data, NODE_LIST) and given == got["items"]
    plainly = data.startswith(_LISTED) and len(data) == len(_LISTED)
    assert reused or not plainly


def test_a_list_cut_short_is_not_read_as_it_arrived() -> None:
    data = body("NodeList", node_list([{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]))
    for cut in range(len(data)):
        streamed = liststream.StreamedList(NODE_LIST, "NodeList", lambda items: None, batch=1)
        streamed.feed(data[:cut])
        assert streamed.result() is None, cut


def test_a_list_stops_being_read_as_it_arrives_at_the_first_field_out_of_place() -> None:
    """A second ListMeta after the items (the parser merges it into the first): the batch before
    it is given, nothing after, and the list is read whole, with the merged metadata."""
    listed = node_list([{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}], "first")
    raw = listed.SerializeToString() + _field(1, _field(3, b"second")) + _field(2, b"")
    classes = kubeproto._message_classes()
    unknown = classes["Unknown"](raw=raw)
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = "v1", "NodeList"
    data = kubeproto.MAGIC + unknown.SerializeToString()
    got, given, reused = _fed(data, [], NODE_LIST, batch=2)
    assert got is None and not reused
    assert [item["metadata"]["name"] for item in given] == ["a", "b"]
    assert read_list(data, NODE_LIST, "NodeList")["metadata"] == {"resourceVersion": "42", "continue": "second"}


def test_an_item_the_parser_refuses_stops_the_reading_as_it_arrives() -> None:
    """A Node whose name is not UTF-8, in the second batch: the first is given, then nothing; the
    whole read refuses the list (it is then asked for as JSON)."""
    good = node_list([{"metadata": {"name": "a"}}]).SerializeToString()
    bad_item = _field(2, _field(1, _field(1, b"\xff")))
    data = _field(1, _field(1, b"v1") + _field(2, b"NodeList")) + _field(2, good + bad_item)
    data = kubeproto.MAGIC + data
    got, given, _ = _fed(data, [], NODE_LIST, batch=1)
    assert got is None and [item["metadata"]["name"] for item in given] == ["a"]
    with pytest.raises(Unreadable):
        read_list(data, NODE_LIST, "NodeList")
