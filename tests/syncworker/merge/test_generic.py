"""The generic rule (every kind without a typed merge): compared as JSON with apiVersion, kind,
metadata and status taken from live; written with the manifest's top-level keys and its labels,
annotations and owner references replacing live's; and the fingerprint that stops a write every
pass when the server fills a field the rule compares."""

from __future__ import annotations

from typing import Any

from syncworker.merge import Action, fingerprint, merge, plan

JSON = dict[str, Any]


def rule(spec: JSON, **metadata: Any) -> JSON:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "r", "namespace": "ns", **metadata},
        "spec": spec,
    }


def live_rule(spec: JSON, **metadata: Any) -> JSON:
    out = rule(spec, uid="u", resourceVersion="5", **metadata)
    out["status"] = {"observed": True}
    return out


SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"}, "data": {"k": "dg=="}}


def test_live_holding_the_manifest_needs_no_write() -> None:
    assert merge(rule({"groups": []}), live_rule({"groups": []})).changed is False


def test_a_metadata_change_alone_is_not_written_as_upstream() -> None:
    result = merge(rule({"a": 1}, labels={"new": "1"}), live_rule({"a": 1}, labels={"old": "1"}))
    assert result.changed is False


def test_a_difference_writes_the_manifest_keys_and_its_metadata_wholesale() -> None:
    required = rule({"a": 2}, labels={"new": "1"}, annotations={"n": "1"})
    live = live_rule({"a": 1, "b": 1}, labels={"old": "1"}, ownerReferences=[{"uid": "o"}])
    live["extra"] = {"kept": True}
    result = merge(required, live)
    assert result.changes == ("extra", "spec"), "a key only live has is a difference too"
    assert result.merged["spec"] == {"a": 2}, "the manifest's top-level key replaces live's whole"
    assert result.merged["extra"] == {"kept": True}, "a top-level key only live has stays"
    assert result.merged["metadata"] == {
        "name": "r",
        "namespace": "ns",
        "uid": "u",
        "resourceVersion": "5",
        "labels": {"new": "1"},
        "annotations": {"n": "1"},
    }
    assert result.merged["status"] == {"observed": True}


def test_a_present_empty_value_differs_from_an_absent_key() -> None:
    assert merge(rule({"a": {}}), live_rule({})).changes == ("spec",)


def test_a_key_the_server_adds_is_a_difference_on_every_pass() -> None:
    required = SECRET
    live = {**required, "type": "Opaque"}
    first = merge(required, live)
    assert first.changes == ("type",)
    assert merge(required, first.merged).changed is True, "the server's key stays, so the rule never settles"


def test_the_fingerprint_of_the_last_write_stops_the_repetition() -> None:
    required = SECRET
    response = {**required, "type": "Opaque", "metadata": {**required["metadata"], "resourceVersion": "9"}}
    applied = fingerprint(required, response)
    later = {**response, "metadata": {**response["metadata"], "resourceVersion": "12", "managedFields": [{}]}}
    assert plan(required, later, applied).action is Action.NONE, "resourceVersion and managedFields do not count"
    edited = {**later, "data": {"k": "ZQ=="}}
    assert plan(required, edited, applied).action is Action.UPDATE
    changed_manifest = {**required, "data": {"k": "bg=="}}
    assert plan(changed_manifest, later, applied).action is Action.UPDATE


def test_status_does_not_count_in_the_fingerprint() -> None:
    required = rule({"a": 1})
    live = live_rule({"a": 1, "server": True})
    moved = {**live, "status": {"observed": False}}
    assert fingerprint(required, live) == fingerprint(required, moved)
