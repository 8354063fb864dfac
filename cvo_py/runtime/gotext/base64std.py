"""Go's base64.StdEncoding.DecodeString, with its error offsets."""

from __future__ import annotations

import binascii
import re

_BASE64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BASE64_VALUE = {c: i for i, c in enumerate(_BASE64_ALPHABET)}
_NEWLINES = (0x0A, 0x0D)
# Text with no line breaks, padded at its end only: what binascii reads exactly as Go does.
_PLAIN = re.compile(rb"[A-Za-z0-9+/]*={0,2}")


class Base64Error(ValueError):
    """Text Go's base64.StdEncoding refuses; str() is Go's `illegal base64 data at input byte N`."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        super().__init__(f"illegal base64 data at input byte {offset}")


def go_base64_decode(text: str | bytes) -> bytes:
    """Go's base64.StdEncoding.DecodeString (what encoding/json does with a string for a []byte
    field, such as a kubeconfig's certificate-authority-data): padding required, CR and LF skipped
    anywhere, the bits after the last byte not checked; the offset of an error counts UTF-8 bytes."""
    src = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if len(src) % 4 == 0 and _PLAIN.fullmatch(src):
        return binascii.a2b_base64(src)  # the usual case, in C (a CA bundle takes ms in Python)
    return _decode_quanta(src)


def _decode_quanta(src: bytes) -> bytes:
    """Go's decoding, quantum by quantum: what it skips, and where it stops."""
    out = bytearray()
    pos = 0
    end = len(src)
    while pos < end:
        quantum: list[int] = []
        while len(quantum) < 4:
            if pos == end:
                if not quantum:
                    return bytes(out)
                raise Base64Error(pos - len(quantum))  # a quantum cut short, without padding
            byte = src[pos]
            pos += 1
            value = _BASE64_VALUE.get(byte)
            if value is not None:
                quantum.append(value)
                continue
            if byte in _NEWLINES:
                continue
            if byte != 0x3D or len(quantum) < 2:  # not "=", or "=" too early in the quantum
                raise Base64Error(pos - 1)
            if len(quantum) == 2:  # "==" expected: the second "=" after any line breaks
                while pos < end and src[pos] in _NEWLINES:
                    pos += 1
                if pos == end:
                    raise Base64Error(end)
                if src[pos] != 0x3D:
                    raise Base64Error(pos - 1)
                pos += 1
            while pos < end and src[pos] in _NEWLINES:
                pos += 1
            if pos < end:
                raise Base64Error(pos)  # anything after the padding
            break
        bits = 0
        for value in quantum:
            bits = bits << 6 | value
        bits <<= 6 * (4 - len(quantum))
        out += bits.to_bytes(3, "big")[: len(quantum) - 1]
    return bytes(out)
