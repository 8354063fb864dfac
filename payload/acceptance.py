"""What retrieval tells the admin: the `ReleaseAccepted` condition's status, reason and message (pure).

Reasons are upstream's load-payload steps; messages keep upstream's shapes (Go `%q` quoting
included) so existing tooling and alerts read them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cvo_py.runtime.gotext.messages import bounded, clipped
from cvo_py.runtime.gotext.quoting import go_quote

Status = Literal["True", "False", "Unknown"]

RETRIEVE_PAYLOAD = "RetrievePayload"
LOAD_PAYLOAD = "LoadPayload"
VERIFY_PAYLOAD_VERSION = "VerifyPayloadVersion"
PRECONDITION_CHECKS = "PreconditionChecks"
PAYLOAD_LOADED = "PayloadLoaded"

# Upstream's prefix for download failures; alerts and must-gather greps key on it.
DOWNLOAD_FAILED = "Unable to download and prepare the update: "
NOT_VERIFIED = "The update cannot be verified: "

# Conditions are read in `oc` and consoles: keep any one message readable.
MAX_MESSAGE = 2048


@dataclass(frozen=True)
class ReleaseAcceptance:
    """One state of the `ReleaseAccepted` condition."""

    status: Status
    reason: str
    message: str

    def __post_init__(self) -> None:
        if self.status not in ("True", "False", "Unknown"):
            raise ValueError(f"ReleaseAcceptance status must be True, False or Unknown, not {self.status!r}")
        if not self.reason:
            raise ValueError("ReleaseAcceptance needs a reason")




def _ids(version: str, image: str) -> str:
    return f"version={go_quote(version)} image={go_quote(image)}"


def is_about(message: str, version: str, image: str) -> bool:
    """Whether a ReleaseAccepted message is about this release (names it as these messages do)."""
    ids = _ids(version, image)
    return f"{ids} " in message or f"{ids};" in message or message.endswith(ids)


def retrieving(version: str, image: str) -> ReleaseAcceptance:
    return ReleaseAcceptance("Unknown", RETRIEVE_PAYLOAD, f"Retrieving and verifying payload {_ids(version, image)}")


def waiting_after(progress: ReleaseAcceptance, problem: str) -> ReleaseAcceptance:
    """`progress` (retrieving, or the forced-verification notice, which must stay in view) and a
    problem retrieval waits on."""
    text = f"{progress.message}; still waiting: {problem}"
    return ReleaseAcceptance("Unknown", RETRIEVE_PAYLOAD, bounded(text, MAX_MESSAGE))


def retrieval_failed(version: str, image: str, failure: str) -> ReleaseAcceptance:
    """`failure` is the whole failure text, e.g. `download_failed(...)` or `not_verified(...)`."""
    text = f"Retrieving payload failed {_ids(version, image)} failure={failure}"
    return ReleaseAcceptance("False", RETRIEVE_PAYLOAD, bounded(text, MAX_MESSAGE))


def download_failed(problem: str) -> str:
    return DOWNLOAD_FAILED + problem


def not_verified(problem: str) -> str:
    return NOT_VERIFIED + problem


def verification_forced(version: str, image: str, problem: str) -> ReleaseAcceptance:
    """Verification failed but the admin forced the update: retrieval goes on, and says why."""
    text = (
        f"Target release {_ids(version, image)} cannot be verified, but continuing anyway because the "
        f"update was forced: {problem}"
    )
    return ReleaseAcceptance("Unknown", RETRIEVE_PAYLOAD, bounded(text, MAX_MESSAGE))


def load_failed(version: str, image: str, failure: str) -> ReleaseAcceptance:
    text = f"Loading payload failed {_ids(version, image)} failure={failure}"
    return ReleaseAcceptance("False", LOAD_PAYLOAD, bounded(text, MAX_MESSAGE))


def version_mismatch(version: str, image: str, payload_version: str) -> ReleaseAcceptance:
    text = (
        f"Verifying payload failed {_ids(version, image)} failure=release image version {payload_version} "
        f"does not match the expected upstream version {version}"
    )
    return ReleaseAcceptance("False", VERIFY_PAYLOAD_VERSION, bounded(text, MAX_MESSAGE))


@dataclass(frozen=True)
class PreconditionOutcome:
    """What the precondition checks found: `blocked`, or not with `message` as the warning ("" when
    every check passed)."""

    blocked: bool
    message: str


def precondition_blocked(version: str, image: str, summary: str) -> ReleaseAcceptance:
    text = f"Preconditions failed for payload loaded {_ids(version, image)}: {summary}"
    # Several failures are a bulleted list, one per line, as upstream (oc indents each line).
    return ReleaseAcceptance("False", PRECONDITION_CHECKS, clipped(text, MAX_MESSAGE))


def precondition_warning(version: str, image: str, summary: str) -> str:
    """The PreconditionWarn Event's text."""
    return f"precondition warning for payload loaded {_ids(version, image)}: {summary}"


def preconditions_passed(version: str, image: str) -> str:
    """The PreconditionsPassed Event's text."""
    return f"preconditions passed for payload loaded {_ids(version, image)}"


def payload_loaded(version: str, image: str, architecture: str | None = None) -> ReleaseAcceptance:
    text = f"Payload loaded {_ids(version, image)}"
    if architecture is not None:
        text += f" architecture={go_quote(architecture)}"
    return ReleaseAcceptance("True", PAYLOAD_LOADED, text)
