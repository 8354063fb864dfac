"""What verification promises the retrieval: the `Verifier` protocol and its one error type.

Kept apart from `payload.verify.verifier` so that retrieval depends on the contract, not on the
implementation that reads signature stores and keys.
"""

from __future__ import annotations

from typing import Protocol


class VerificationError(Exception):
    """The release cannot be verified; the text is what follows "The update cannot be verified: ".

    `outcome` is the verifications metric's label for it ("failed" or "not_configured"); the
    retriever records it once, or "forced" when a forced update continues past it."""

    def __init__(self, message: str, outcome: str = "failed") -> None:
        super().__init__(message)
        self.outcome = outcome


class Verifier(Protocol):
    def verify(self, image: str, timeout: float) -> None:
        """Return when `image`'s digest is signed by a trusted key; raise VerificationError otherwise."""
