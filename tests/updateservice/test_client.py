"""The update service's client (updateservice/client.py) against servers that answer badly: what it says
lands in RetrievedUpdates and the klog line, so it is one line, escaped, Go-shaped, and names the
hop that failed when a redirect was followed."""

from __future__ import annotations

import pytest

from testkit.corpus.servers import HostileServer
from testkit.corpus.values import PYTHON_WORDING, RAW_CONTROL
from testkit.harness.cluster import free_port
from updateservice.client import FetchError, fetch_graph


def _fetch(url: str) -> FetchError:
    with pytest.raises(FetchError) as caught:
        fetch_graph(url, user_agent="test", total_timeout=10)
    text = str(caught.value)
    assert "\n" not in text and not RAW_CONTROL.search(text) and not PYTHON_WORDING.search(text), text
    return caught.value


def test_escape_sequences_in_the_status_line_are_escaped() -> None:
    with HostileServer("escape-status") as server:
        error = _fetch(server.url)
    assert (error.reason, str(error)) == ("ResponseFailed", "unexpected HTTP status: 500 \\x1b]0;owned\\a\\x1b[2J")


def test_a_failed_redirect_names_the_hop() -> None:
    dead = f"http://127.0.0.1:{free_port()}/graph"  # nothing listens there
    with HostileServer(f"redirect-to:{dead}") as server:
        error = _fetch(server.url)
    assert error.reason == "RemoteFailed"
    assert str(error) == f'Get "{dead}": dial tcp {dead.split("/")[2]}: connect: connection refused'


@pytest.mark.parametrize(
    ("behaviour", "reason", "fragment"),
    [
        ("close", "RemoteFailed", '/path": EOF'),
        ("garbage", "RemoteFailed", "malformed HTTP response"),
        ("truncated", "ResponseFailed", "unexpected EOF"),
        ("redirect-loop", "RemoteFailed", "stopped after 10 redirects"),
        ("redirect-to:http://[::1", "RemoteFailed", "failed to parse Location header"),
    ],
)
def test_transport_failures_are_worded_as_the_cvo_words_them(behaviour: str, reason: str, fragment: str) -> None:
    with HostileServer(behaviour) as server:
        error = _fetch(server.url)
    assert error.reason == reason and fragment in str(error), str(error)
