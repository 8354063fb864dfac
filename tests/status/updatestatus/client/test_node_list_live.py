"""The Node LIST as `upgrade-status --source cluster` reads it, on the real API server: each page in
protobuf reads as the same page in JSON reads once trimmed (random Nodes written through the API:
labels, Machine Config Daemon annotations with any text, conditions with and without their
optional fields), also when read as it arrives, an error answered in protobuf is the same error,
and the reads give every Node, also when a protobuf LIST cannot be read and is asked for again as
JSON."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from typing import Any

import pytest

from cvo_py.runtime import kubeproto, liststream
from cvo_py.runtime.gotext.times import format_time
from cvo_py.runtime.jsonfields import trim
from cvo_py.runtime.kube import NODES, ApiError, KubeClient
from status.updatestatus.client import cluster as reads
from testkit.harness.cluster import unique_name

pytestmark = pytest.mark.integration

MCO = "machineconfiguration.openshift.io/"
LABEL = "cvo-py-test"  # the test's Nodes: the LISTs compared see no other
PROTOBUF = kubeproto.PROTOBUF
TEXT = string.ascii_letters + string.digits + " \"'\\<>&\n\t\x01é€\u2028😀"


def random_text(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(TEXT) for _ in range(rng.randint(0, size)))


def random_node(rng: random.Random, name: str) -> dict[str, Any]:
    labels = {LABEL: "node-pages"}
    for key in rng.sample(["node-role.kubernetes.io/worker", "node-role.kubernetes.io/master", "a", "x.io/b"], 2):
        labels[key] = rng.choice(["", "v", "Value-1.2_3"])
    annotations = {
        key: random_text(rng, 40)
        for key in rng.sample(
            [f"{MCO}state", f"{MCO}reason", f"{MCO}currentConfig", "other.io/x", "y"], rng.randint(0, 5)
        )
    }
    conditions = []
    for kind in rng.sample(
        ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"], rng.randint(0, 5)
    ):
        cond: dict[str, Any] = {"type": kind, "status": rng.choice(["True", "False", "Unknown"])}
        for key in ("reason", "message"):
            if rng.random() < 0.6:
                cond[key] = random_text(rng, 30)
        for key in ("lastTransitionTime", "lastHeartbeatTime"):
            if rng.random() < 0.8:  # now and then the epoch, which Go writes as a Timestamp of 0 s
                cond[key] = format_time(rng.choice([0, rng.randint(1, 4_000_000_000)]) * 1_000_000_000)
        conditions.append(cond)
    spec: dict[str, Any] = {"unschedulable": rng.random() < 0.3}
    if rng.random() < 0.3:
        spec["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    return {
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": spec,
        "status": {"conditions": conditions, "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]},
    }


@pytest.fixture
def random_nodes(kube: KubeClient) -> Iterator[list[str]]:
    rng = random.Random(36)
    base = unique_name("pages")
    names = [f"{base}-{i:02d}" for i in range(40)]
    try:
        for name in names:
            kube.create(NODES, random_node(rng, name))
        yield names
    finally:
        for name in names:
            try:
                kube.delete(NODES, name)
            except ApiError:
                pass


def raw_page(kube: KubeClient, accept: str, token: str | None, limit: int = 7) -> bytes:
    body: bytes = kube.list(  # type: ignore[assignment]
        NODES, label_selector=LABEL, limit=limit, continue_token=token, accept=accept, decode=lambda b: b
    )
    return body


def test_each_protobuf_page_reads_as_the_same_page_in_json(kube: KubeClient, random_nodes: list[str]) -> None:
    token: str | None = None
    compared = 0
    while True:
        as_protobuf = raw_page(kube, f"{PROTOBUF}, application/json", token)
        as_json = raw_page(kube, "application/json", token)
        assert as_protobuf.startswith(kubeproto.MAGIC)
        got = kubeproto.read_list(as_protobuf, reads.NODE_LIST, "NodeList")
        # read as it arrives, in pieces: the API server's LIST is plainly one, read from its batches
        given: list[Any] = []
        streamed = liststream.StreamedList(reads.NODE_LIST, "NodeList", given.extend, batch=2)
        for start in range(0, len(as_protobuf), 333):
            streamed.feed(as_protobuf[start : start + 333])
        assert json.dumps(streamed.result()) == json.dumps(got)
        assert streamed.reused and given == got["items"]
        want = trim(json.loads(as_json), reads.NODE_LIST)
        assert json.dumps(got) == json.dumps(want)  # the same keys, values and order
        compared += len(got["items"])
        token = got["metadata"].get("continue")
        if not token:
            break
    assert compared == len(random_nodes)


def test_an_error_answered_in_protobuf_is_the_error_json_gives(kube: KubeClient) -> None:
    errors = []
    for accept in (f"{PROTOBUF}, application/json", "application/json"):
        with pytest.raises(ApiError) as caught:
            raw_page(kube, accept, "not-a-continue-token")
        errors.append((caught.value.status, caught.value.reason, caught.value.message))
    assert errors[0] == errors[1]
    assert errors[0][0] == 400 and errors[0][2]


def test_the_reads_give_every_node_as_one_json_list_gives_them(
    kube: KubeClient, random_nodes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first page in JSON, then the rest in one protobuf LIST read as it arrives, in batches."""
    batches = []
    real = liststream.read_list_part

    def counted(*args: Any, **kwargs: Any) -> Any:
        batches.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(reads, "FIRST_NODE_PAGE", 3)
    monkeypatch.setattr(liststream, "STREAMED_BATCH", 7)
    monkeypatch.setattr(liststream, "read_list_part", counted)
    want = [trim(node, reads.NODE_LIST["items"][0]) for node in kube.list(NODES, label_selector=LABEL)["items"]]
    assert len(want) == len(random_nodes)
    got = _nodes_read(kube, random_nodes)
    assert json.dumps(got) == json.dumps(want)
    assert len(batches) >= 5  # the items after the first page, 7 at a time, and the ListMeta


def test_a_protobuf_list_that_cannot_be_read_is_asked_for_again_as_json(
    kube: KubeClient, random_nodes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreadable(*args: Any, **kwargs: Any) -> Any:
        raise kubeproto.Unreadable("a NodeList with a string that is not UTF-8")

    monkeypatch.setattr(reads, "FIRST_NODE_PAGE", 3)
    monkeypatch.setattr(kubeproto, "read_list", unreadable)
    monkeypatch.setattr(liststream, "read_list_part", unreadable)
    want = [trim(node, reads.NODE_LIST["items"][0]) for node in kube.list(NODES, label_selector=LABEL)["items"]]
    assert json.dumps(_nodes_read(kube, random_nodes)) == json.dumps(want)


def _nodes_read(kube: KubeClient, names: list[str]) -> list[dict[str, Any]]:
    """The test's Nodes as the reads give them, page by page, trimmed (a first page small enough
    is decoded whole)."""
    listing = reads.ClusterReads(kube)
    try:
        nodes = [node for page in listing.node_batches() for node in page]
    finally:
        listing.close()
    return [trim(node, reads.NODE_LIST["items"][0]) for node in nodes if node["metadata"]["name"] in names]
