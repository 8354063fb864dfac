"""Bounded one-line messages: what a condition, an event, a log line or an insight says of a long
or multi-line text (its head and its tail, where errors are), and a network error as the phrase an
admin recognises."""

from __future__ import annotations

_ELISION = " […] "


def _keep_ends(flat: str, limit: int) -> str:
    """`flat` if it fits in `limit` characters; else its head and its tail (where errors are)."""
    if len(flat) <= limit:
        return flat
    keep = max(limit - len(_ELISION), 2)
    head = keep * 2 // 3
    return flat[:head] + _ELISION + flat[len(flat) - (keep - head) :]


def shortened(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters; else its head and tail (lines are kept)."""
    return _keep_ends(text, limit)


def bounded(text: str, limit: int) -> str:
    """One line, at most `limit` characters; long text keeps its head and tail (where errors are)."""
    return _keep_ends(" // ".join(line.strip() for line in text.strip().splitlines() if line.strip()), limit)


def clipped(text: str, limit: int) -> str:
    """At most `limit` characters, line breaks kept; long text keeps its head and tail."""
    return _keep_ends(text, limit)


def one_line(text: str, limit: int) -> str:
    """Newlines become ` // ` (as upstream); over `limit`, the head and the tail are kept."""
    return _keep_ends(text.replace("\n", " // "), limit)


# The phrase an admin recognises in a urllib3/requests error chain, as it is shown.
_NETWORK_PHRASES = {
    "Connection refused": "connection refused",
    "Name or service not known": "name or service not known",
    "No route to host": "no route to host",
    "timed out": "timed out",
    "CERTIFICATE_VERIFY_FAILED": "certificate verify failed",
    "certificate verify failed": "certificate verify failed",
}


def network_phrase(text: str) -> str:
    """The recognisable phrase of a network error ("" when `text` has none)."""
    for marker, phrase in _NETWORK_PHRASES.items():
        if marker in text:
            return phrase
    return ""


def short_error(text: str, limit: int = 200) -> str:
    """A network error as its recognisable phrase; any other error as its first line, at most `limit`."""
    return network_phrase(text) or (text.splitlines()[0][:limit] if text else "")
