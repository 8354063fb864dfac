"""What a signature vouches for: its signed JSON (simple signing), decoded as Go decodes it."""

from __future__ import annotations

import json

import pytest

from payload.verify.signature import SIGNATURE_TYPE, check_simple_signing

DIGEST = "sha256:" + "ab" * 32


def signed(digest: str = DIGEST, **optional: object) -> str:
    doc = {"critical": {"type": SIGNATURE_TYPE, "image": {"docker-manifest-digest": digest}}, "optional": optional}
    return json.dumps(doc)


def test_content_for_the_digest_vouches_for_it() -> None:
    assert check_simple_signing(signed().encode(), DIGEST) is None
    assert check_simple_signing(signed("sha256:" + "cd" * 32).encode(), DIGEST) == (
        f'signature digest does not match (signed "sha256:{"cd" * 32}")'
    )


@pytest.mark.parametrize(
    "content",
    [
        signed(timestamp=1).replace("1}", "NaN}").encode(),  # Python's decoder reads NaN, Go's does not
        signed(timestamp=1).replace("1}", "-Infinity}").encode(),
        signed().encode("utf-16"),  # Python's decoder guesses UTF-16 from bytes, Go's reads UTF-8
        b"\xff" + signed().encode(),
        b"[" * 100_000,
    ],
)
def test_what_go_cannot_decode_vouches_for_nothing(content: bytes) -> None:
    assert check_simple_signing(content, DIGEST) == "signed content is not JSON"
