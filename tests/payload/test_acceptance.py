"""ReleaseAccepted states and messages: upstream shapes, Go quoting, bounded length."""

from __future__ import annotations

import pytest

from cvo_py.runtime.gotext.messages import bounded
from payload import acceptance as a


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 100, "short"),
        ("line one\n  line two  \n\nthree", 100, "line one // line two // three"),
        ("a" * 50 + "b" * 50, 40, "a" * 23 + " […] " + "b" * 12),
    ],
)
def test_bounded(text: str, limit: int, expected: str) -> None:
    assert bounded(text, limit) == expected
    assert len(bounded(text, limit)) <= limit


IMG = "quay.io/r@sha256:01"


@pytest.mark.parametrize(
    ("acceptance", "status", "reason", "message"),
    [
        (a.retrieving("4.19.1", IMG), "Unknown", "RetrievePayload",
         f'Retrieving and verifying payload version="4.19.1" image="{IMG}"'),
        (a.waiting_after(a.retrieving("", IMG), "cannot pull"), "Unknown", "RetrievePayload",
         f'Retrieving and verifying payload version="" image="{IMG}"; still waiting: cannot pull'),
        (a.retrieval_failed("4.19.1", IMG, a.download_failed("boom")), "False", "RetrievePayload",
         f'Retrieving payload failed version="4.19.1" image="{IMG}" '
         "failure=Unable to download and prepare the update: boom"),
        (a.retrieval_failed("4.19.1", IMG, a.not_verified("nope")), "False", "RetrievePayload",
         f'Retrieving payload failed version="4.19.1" image="{IMG}" failure=The update cannot be verified: nope'),
        (a.verification_forced("4.19.1", IMG, "nope"), "Unknown", "RetrievePayload",
         f'Target release version="4.19.1" image="{IMG}" cannot be verified, but continuing anyway because '
         "the update was forced: nope"),
        (a.load_failed("4.19.1", IMG, "bad json"), "False", "LoadPayload",
         f'Loading payload failed version="4.19.1" image="{IMG}" failure=bad json'),
        (a.version_mismatch("4.19.1", IMG, "4.19.2"), "False", "VerifyPayloadVersion",
         f'Verifying payload failed version="4.19.1" image="{IMG}" failure=release image version 4.19.2 '
         "does not match the expected upstream version 4.19.1"),
        (a.payload_loaded("4.19.1", IMG, "amd64"), "True", "PayloadLoaded",
         f'Payload loaded version="4.19.1" image="{IMG}" architecture="amd64"'),
        (a.payload_loaded("4.19.1", IMG), "True", "PayloadLoaded",
         f'Payload loaded version="4.19.1" image="{IMG}"'),
    ],
)
def test_builders(acceptance: a.ReleaseAcceptance, status: str, reason: str, message: str) -> None:
    assert (acceptance.status, acceptance.reason, acceptance.message) == (status, reason, message)


def test_failure_message_is_bounded_and_single_line() -> None:
    failure = a.download_failed("x" * 10_000 + "\nlast line with the real error")
    msg = a.retrieval_failed("4.19.1", IMG, failure).message
    assert len(msg) <= a.MAX_MESSAGE
    assert "\n" not in msg
    assert msg.startswith('Retrieving payload failed version="4.19.1"')
    assert msg.endswith("last line with the real error")


@pytest.mark.parametrize(
    ("status", "reason", "error"), [("Maybe", "X", "True, False or Unknown"), ("True", "", "reason")]
)
def test_invalid_acceptance_is_rejected(status: str, reason: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        a.ReleaseAcceptance(status, reason, "m")  # type: ignore[arg-type]


def test_acceptance_is_frozen_and_comparable() -> None:
    assert a.retrieving("1", "i") == a.ReleaseAcceptance("Unknown", "RetrievePayload",
                                                         'Retrieving and verifying payload version="1" image="i"')
    with pytest.raises(AttributeError):
        a.retrieving("1", "i").status = "True"  # type: ignore[misc]
