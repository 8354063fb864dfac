"""Release signatures, the pure part: digests, the "simple signing" JSON, failure texts.

A release signature is an OpenPGP signed message (not a detached signature) whose literal data
is containers/image "simple signing" JSON naming the signed manifest digest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cvo_py.runtime.gotext.jsoncodec import decode_json
from cvo_py.runtime.gotext.messages import bounded
from cvo_py.runtime.gotext.quoting import go_quote

SIGNATURE_TYPE = "atomic container signature"
_DIGEST = re.compile(r"^(?P<algo>[a-z0-9]+(?:[.+_-][a-z0-9]+)*):(?P<hex>[a-zA-Z0-9=_-]+)$")
_HEX_LENGTH = {"sha256": 64, "sha384": 96, "sha512": 128}

# The whole "why" in one condition message: what one failed signature or store may take.
MAX_REASON = 300
MAX_FAILURE = 1400


class DigestError(ValueError):
    """The image cannot be verified as given (upstream's wording)."""


def image_digest(image: str) -> str:
    """The digest after the last `@` of a pull spec, or "" (as upstream)."""
    return image.rsplit("@", 1)[1] if "@" in image else ""


def parse_digest(digest: str) -> tuple[str, str]:
    """("sha256", "<hex>") or DigestError with upstream's messages."""
    if not digest:
        raise DigestError("release images that are not accessed via digest cannot be verified")
    match = _DIGEST.match(digest)
    algo, hexpart = (match.group("algo"), match.group("hex")) if match else ("", "")
    want = _HEX_LENGTH.get(algo)
    if not match or want is None or len(hexpart) != want or not re.fullmatch(r"[0-9a-f]+", hexpart):
        raise DigestError(f"the provided release image digest has an invalid format: {go_quote(digest)}")
    return algo, hexpart


def check_simple_signing(literal: bytes, digest: str) -> str | None:
    """None when the signed JSON vouches for `digest`; otherwise why not."""
    try:
        doc = decode_json(literal.decode("utf-8"))  # as Go reads it: no NaN, no UTF-16
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return "signed content is not JSON"
    critical = doc.get("critical") if isinstance(doc, dict) else None
    if not isinstance(critical, dict):
        return "signed JSON has no critical section"
    if critical.get("type") != SIGNATURE_TYPE:
        return f"signature type {go_quote(str(critical.get('type')))} is not {go_quote(SIGNATURE_TYPE)}"
    image = critical.get("image")
    signed = image.get("docker-manifest-digest") if isinstance(image, dict) else None
    if signed != digest:
        return f"signature digest does not match (signed {go_quote(str(signed))})"
    return None


@dataclass(frozen=True)
class Attempt:
    """One place a signature was looked for, and why it did not verify."""

    source: str  # "<store url>/signature-1", "configmap openshift-config-managed/sha256-…"
    reason: str


def failure_text(digest: str, keyrings: list[str], attempts: list[Attempt]) -> str:
    """Upstream's top-level sentence, then each place tried and why, bounded."""
    head = f"unable to verify {digest} against keyrings: {', '.join(sorted(keyrings)) or '(none)'}"
    if not attempts:
        return head + "; no signature stores or signature ConfigMaps are configured"
    parts = [f"{a.source}: {bounded(a.reason, MAX_REASON)}" for a in attempts]
    return bounded(head + "; " + "; ".join(parts), MAX_FAILURE)
