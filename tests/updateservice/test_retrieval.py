"""RetrievedUpdates pre-checks, in the CVO's order and words, and the graph request."""

from __future__ import annotations

import pytest

from updateservice import retrieval as r

ID = "0b0ea3b8-4d5e-4c0f-8c0a-4b7d3c5a9e11"
GOOD = {"upstream": "http://127.0.0.1:8080/graph", "channel": "stable-4.16", "cluster_id": ID, "arch": "amd64",
        "version": "4.16.3"}


def test_the_request_adds_arch_channel_id_and_version_to_the_urls_query_sorted() -> None:
    req = r.request_for(**{**GOOD, "upstream": "https://u.example/graph?z=1&a=b c", "arch": "Multi"})
    assert req.precheck is None
    assert req.url == (f"https://u.example/graph?a=b+c&arch=multi&channel=stable-4.16&id={ID}&version=4.16.3&z=1")


@pytest.mark.parametrize(
    ("change", "reason", "message"),
    [
        ({"upstream": ""}, "NoUpstream", "No updateService server has been set to retrieve updates."),
        ({"upstream": "http://x/%zz"}, "InvalidURI", 'failed to parse update service URL: parse "http://x/%zz": '
                                                     'invalid URL escape "%zz"'),
        ({"upstream": "http://x:port/"}, "InvalidURI", 'invalid port ":port" after host'),
        ({"upstream": "http://a b/"}, "InvalidURI", 'invalid character " " in host name'),
        ({"upstream": "http://x/\x7f"}, "InvalidURI", "invalid control character in URL"),
        ({"cluster_id": "nope"}, "InvalidID", "invalid cluster ID: invalid UUID length: 4"),
        ({"cluster_id": "0b0ea3b8-4d5e-4c0f-8c0a-4b7d3c5a9eZZ"}, "InvalidID",
         "invalid cluster ID: invalid UUID format"),
        ({"arch": ""}, "NoArchitecture", "Architecture has not been configured."),
        ({"version": ""}, "NoCurrentVersion", "The cluster version does not have a semantic version assigned"),
        ({"channel": ""}, "NoChannel", "The update channel has not been configured."),
        ({"version": "4.16"}, "InvalidCurrentVersion", "The current cluster version is not a valid semantic version"),
        # Pre-checks run in order: no upstream wins over everything else.
        ({"upstream": "", "channel": "", "cluster_id": "x"}, "NoUpstream", "No updateService"),
        ({"channel": "", "cluster_id": "x"}, "InvalidID", "invalid cluster ID"),
    ],
)
def test_prechecks(change: dict[str, str], reason: str, message: str) -> None:
    req = r.request_for(**{**GOOD, **change})
    assert req.precheck is not None and req.url == ""
    assert req.precheck.status == "False"
    assert req.precheck.reason == reason
    assert message in req.precheck.message


def test_a_schemeless_upstream_parses_and_fails_later() -> None:
    assert r.request_for(**{**GOOD, "upstream": "foo"}).precheck is None


@pytest.mark.parametrize("cluster_id", [ID, ID.upper(), "{" + ID + "}", "urn:uuid:" + ID, ID.replace("-", "")])
def test_uuid_forms_the_cvo_accepts(cluster_id: str) -> None:
    assert r.uuid_problem(cluster_id) == ""


def test_conditions() -> None:
    assert r.succeeded().as_status() == {"type": "RetrievedUpdates", "status": "True"}
    assert r.version_not_found("4.16.3", "fast-4.16").as_status() == {
        "type": "RetrievedUpdates", "status": "False", "reason": "VersionNotFound",
        "message": 'Unable to retrieve available updates: currently reconciling cluster version 4.16.3 not found in '
                   'the "fast-4.16" channel'}
    assert r.failure("ResponseFailed", r.http_status_text(404, "Not Found")).message == (
        "Unable to retrieve available updates: unexpected HTTP status: 404 Not Found")
