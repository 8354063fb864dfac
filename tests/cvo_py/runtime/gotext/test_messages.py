"""cvo_py.runtime.gotext.messages: network errors by their phrase."""

from __future__ import annotations

import pytest

from cvo_py.runtime.gotext.messages import short_error


@pytest.mark.parametrize(
    "text,phrase",
    [
        ("Max retries exceeded ([Errno 111] Connection refused)", "connection refused"),
        ("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed", "certificate verify failed"),
        ("Read timed out. (read timeout=5)", "timed out"),
        ("[Errno 113] No route to host", "no route to host"),
        ("first line\nsecond line", "first line"),
        ("x" * 300, "x" * 200),
        ("", ""),
    ],
)
def test_short_error_names_network_failures_by_their_phrase(text: str, phrase: str) -> None:
    assert short_error(text) == phrase
