"""cvo_py.runtime.gotext.base64std against Go's base64.StdEncoding, as encoding/json decodes a []byte
field (a kubeconfig's certificate-authority-data)."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cvo_py.runtime.gotext.base64std import Base64Error, _decode_quanta, go_base64_decode
from testkit.oracles import goprogram

# With "kubeconfig": into client-go's kubeconfig types.
GO_JSON = Path(__file__).parent / "gojson" / "main.go"


def test_certificate_data_is_base64_exactly_as_go_reads_it(tmp_path: Path) -> None:
    """go_base64_decode against Go's encoding/json on a []byte field: padding, line breaks
    anywhere, trailing garbage, the offsets of errors (UTF-8 bytes), the decoded bytes."""
    binary = goprogram.build(GO_JSON, tmp_path)
    rng = random.Random(3)
    pieces = ["QUJD", "QQ", "QUI", "=", "==", "\n", "\r", "\r\n", " ", "é", "-", "_", "A", "/+", "x"]
    texts = ["", "YWJjZA==", "YWJj\nZA==", "YWJjZA", "abcdefghi", "====", "YQ==\n\n", "YR=="]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(3000)]
    docs = [{"clusters": [{"cluster": {"certificate-authority-data": text}}]} for text in texts]
    want = goprogram.run_lines(binary, [json.dumps(doc).encode().hex() for doc in docs], "kubeconfig")
    decoded = 0
    for text, go in zip(texts, want, strict=True):
        try:
            go_base64_decode(text)
        except Base64Error as exc:
            assert go == f"error {exc}", repr(text)
        else:
            decoded += 1
            assert go == "ok", repr(text)
    assert 100 < decoded < len(texts) - 100
    assert go_base64_decode("YWJj\nZA==") == b"abcd" == go_base64_decode(b"YWJjZA==")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.sampled_from(["", "\n", "\r\n"]), st.integers(0, 64))
def test_the_usual_text_decodes_as_the_quantum_by_quantum_reading_does(data: bytes, sep: str, at: int) -> None:
    """The shortcut for text without line breaks gives what Go's reading quantum by quantum
    gives, and text with line breaks (which skips the shortcut) still decodes to the same bytes."""
    text = base64.b64encode(data)
    assert go_base64_decode(text) == _decode_quanta(text) == data
    broken = text[:at] + sep.encode() + text[at:]
    assert go_base64_decode(broken) == _decode_quanta(broken) == data


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="AQB+/=\n", max_size=12))
def test_any_text_decodes_or_fails_as_the_quantum_by_quantum_reading_does(text: str) -> None:
    try:
        want: bytes | str = _decode_quanta(text.encode())
    except Base64Error as exc:
        want = str(exc)
    try:
        got: bytes | str = go_base64_decode(text)
    except Base64Error as exc:
        got = str(exc)
    assert got == want
