"""Why a signature did not verify, read from its OpenPGP packets (RFC 4880 / RFC 9580). Pure.

The OpenPGP library says only "no valid signatures"; the signature packet itself says when it was
made, when it expires and which key made it, which is what an admin needs to act. Nothing here is
trusted: it only words a rejection that has already happened. Every malformed input ends in
`PacketError` (or, from `explain_rejection`, an "unreadable OpenPGP data" reason), never a crash.
"""

from __future__ import annotations

import base64
import binascii
import bz2
import hashlib
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from cvo_py.runtime.gotext.times import rfc3339_seconds

TAG_SIGNATURE = 2
TAG_SECRET_KEY = 5
TAG_PUBLIC_KEY = 6
TAG_SECRET_SUBKEY = 7
TAG_COMPRESSED = 8
TAG_PUBLIC_SUBKEY = 14

SUB_CREATION = 2
SUB_EXPIRATION = 3
SUB_ISSUER_KEY_ID = 16
SUB_ISSUER_FINGERPRINT = 33

# Signatures are a few KiB; these bound what garbage or a compression bomb can make us do.
MAX_DECOMPRESSED = 1024 * 1024
MAX_NESTING = 4
MAX_SIGNATURES = 16
MAX_LISTED = 3


class PacketError(ValueError):
    """The bytes are not OpenPGP data this module can read; the message says where and why."""


@dataclass(frozen=True)
class SignatureInfo:
    """What one signature packet claims. Times are Unix seconds; hex is upper case."""

    version: int
    created: int | None = None
    # Seconds after `created`; None (or 0 in the packet) means the signature does not expire.
    expires_after: int | None = None
    issuer_fingerprints: tuple[str, ...] = ()
    issuer_key_ids: tuple[str, ...] = ()

    @property
    def expires_at(self) -> int | None:
        if self.created is None or not self.expires_after:
            return None
        return self.created + self.expires_after

    @property
    def issuer(self) -> str:
        """The most specific name of the signing key: its fingerprint, else its key ID, else ""."""
        return (self.issuer_fingerprints or self.issuer_key_ids or ("",))[0]

    @property
    def identities(self) -> frozenset[str]:
        return frozenset(self.issuer_fingerprints + self.issuer_key_ids)


# -- packet framing -------------------------------------------------------------------------------


def dearmor(data: bytes) -> bytes:
    """Binary OpenPGP data from ASCII armor; binary input is returned as is."""
    if not data.lstrip().startswith(b"-----BEGIN PGP "):
        return data
    lines = data.decode("ascii", "replace").splitlines()
    begins = [i for i, line in enumerate(lines) if line.startswith("-----BEGIN PGP ")]
    start = next((i for i in begins if "SIGNED MESSAGE" not in lines[i]), None)
    if start is None:
        raise PacketError("armor has no OpenPGP block")
    body: list[str] = []
    in_headers = True
    for line in lines[start + 1 :]:
        text = line.strip()
        if text.startswith("-----END PGP "):
            break
        if in_headers:
            if ": " in text:
                continue  # an armor header such as "Comment: …"
            in_headers = False
            if not text:
                continue
        if text.startswith("=") and len(text) == 5:
            break  # the CRC-24 line; the checksum is the library's business
        body.append(text)
    else:
        raise PacketError("armor is truncated (no END line)")
    try:
        return base64.b64decode("".join(body), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise PacketError(f"armor is not valid base64 ({exc})") from None


def _uint(data: bytes, offset: int, size: int, what: str) -> int:
    if offset + size > len(data):
        raise PacketError(f"{what} is truncated")
    return int.from_bytes(data[offset : offset + size], "big")


def _new_length(data: bytes, pos: int) -> tuple[int, int, bool]:
    """(length, header bytes used, partial) of a new-format length at `pos`."""
    first = _uint(data, pos, 1, f"packet length at byte {pos}")
    if first < 192:
        return first, 1, False
    if first < 224:
        return ((first - 192) << 8) + _uint(data, pos + 1, 1, f"packet length at byte {pos}") + 192, 2, False
    if first == 255:
        return _uint(data, pos + 1, 4, f"packet length at byte {pos}"), 5, False
    return 1 << (first & 0x1F), 1, True


def iter_packets(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(tag, body) for each packet, old or new header format, partial lengths joined."""
    pos = 0
    while pos < len(data):
        ctb = data[pos]
        if not ctb & 0x80:
            raise PacketError(f"byte {pos} (0x{ctb:02x}) is not an OpenPGP packet header")
        start = pos
        if ctb & 0x40:  # new format
            tag = ctb & 0x3F
            pos += 1
            chunks: list[bytes] = []
            while True:
                length, used, partial = _new_length(data, pos)
                pos += used
                if pos + length > len(data):
                    raise PacketError(f"packet at byte {start} (tag {tag}) is truncated")
                chunks.append(data[pos : pos + length])
                pos += length
                if not partial:
                    break
            body = b"".join(chunks)
        else:  # old format
            tag = (ctb >> 2) & 0x0F
            length_type = ctb & 0x03
            if length_type == 3:  # indeterminate: to the end of the data
                body, pos = data[pos + 1 :], len(data)
            else:
                size = 1 << length_type
                length = _uint(data, pos + 1, size, f"packet length at byte {pos}")
                pos += 1 + size
                if pos + length > len(data):
                    raise PacketError(f"packet at byte {start} (tag {tag}) is truncated")
                body = data[pos : pos + length]
                pos += length
        yield tag, body


def _decompress(body: bytes) -> bytes:
    algo = _uint(body, 0, 1, "compressed data packet")
    payload = body[1:]
    if algo == 0:
        return payload
    try:
        if algo in (1, 2):  # ZIP is raw deflate, ZLIB has its header
            inflater = zlib.decompressobj(-15 if algo == 1 else 15)
            out = inflater.decompress(payload, MAX_DECOMPRESSED)
            done, more = inflater.eof, bool(inflater.unconsumed_tail)
        elif algo == 3:
            unbz = bz2.BZ2Decompressor()
            out = unbz.decompress(payload, MAX_DECOMPRESSED)
            done, more = unbz.eof, not unbz.needs_input and not unbz.eof
        else:
            raise PacketError(f"compression algorithm {algo} is unknown")
    except (zlib.error, OSError, EOFError) as exc:
        raise PacketError(f"compressed data is corrupt ({exc})") from None
    if more:
        raise PacketError(f"compressed data expands beyond {MAX_DECOMPRESSED} bytes")
    if not done:
        raise PacketError("compressed data is truncated")
    return out


def _walk(data: bytes, depth: int = 0) -> Iterator[tuple[int, bytes]]:
    """Packets, with compressed data packets opened (as a signed message is usually compressed)."""
    for tag, body in iter_packets(data):
        if tag == TAG_COMPRESSED:
            if depth >= MAX_NESTING:
                raise PacketError(f"compressed data is nested more than {MAX_NESTING} deep")
            yield from _walk(_decompress(body), depth + 1)
        else:
            yield tag, body


# -- signatures -----------------------------------------------------------------------------------


def _subpackets(area: bytes) -> Iterator[tuple[int, bytes]]:
    pos = 0
    while pos < len(area):
        length, used, partial = _new_length(area, pos)
        if partial:  # 224..254 are not lengths in a subpacket area
            raise PacketError(f"signature subpacket at byte {pos} has an invalid length")
        pos += used
        if length == 0 or pos + length > len(area):
            raise PacketError(f"signature subpacket at byte {pos - used} is truncated")
        yield area[pos] & 0x7F, area[pos + 1 : pos + length]  # bit 7 is the "critical" flag
        pos += length


def parse_signature(body: bytes) -> SignatureInfo:
    """The creation time, expiry and issuer of one signature packet body (v3, v4 or v6)."""
    version = _uint(body, 0, 1, "signature packet")
    if version == 3:
        if _uint(body, 1, 1, "v3 signature packet") != 5:
            raise PacketError("v3 signature packet has an invalid hashed length")
        key_id = body[7:15]
        if len(key_id) != 8:
            raise PacketError("v3 signature packet is truncated")
        made = _uint(body, 3, 4, "v3 signature packet")
        return SignatureInfo(3, created=made, issuer_key_ids=(key_id.hex().upper(),))
    if version not in (4, 6):
        raise PacketError(f"signature packet version {version} is not supported")
    count = 2 if version == 4 else 4  # size of each subpacket area's length
    pos = 4
    hashed_len = _uint(body, pos, count, "signature packet")
    hashed = body[pos + count : pos + count + hashed_len]
    pos += count + hashed_len
    unhashed_len = _uint(body, pos, count, "signature packet")
    unhashed = body[pos + count : pos + count + unhashed_len]
    if len(hashed) != hashed_len or len(unhashed) != unhashed_len:
        raise PacketError("signature packet is truncated")
    created: int | None = None
    expires: int | None = None
    fingerprints: list[str] = []
    key_ids: list[str] = []
    for area_hashed, area in ((True, hashed), (False, unhashed)):
        for kind, value in _subpackets(area):
            # Times count only where the signature covers them; issuers are hints wherever they are.
            if kind == SUB_CREATION and area_hashed:
                created = _uint(value, 0, 4, "signature creation time subpacket")
            elif kind == SUB_EXPIRATION and area_hashed:
                expires = _uint(value, 0, 4, "signature expiration time subpacket")
            elif kind == SUB_ISSUER_KEY_ID:
                if len(value) != 8:
                    raise PacketError("issuer key ID subpacket is not 8 bytes")
                key_ids.append(value.hex().upper())
            elif kind == SUB_ISSUER_FINGERPRINT:
                if len(value) not in (21, 33):
                    raise PacketError("issuer fingerprint subpacket has an invalid length")
                fingerprints.append(value[1:].hex().upper())
    return SignatureInfo(
        version,
        created=created,
        expires_after=expires or None,
        issuer_fingerprints=tuple(dict.fromkeys(fingerprints)),
        issuer_key_ids=tuple(dict.fromkeys(key_ids)),
    )


def signatures(data: bytes) -> list[SignatureInfo]:
    """Every signature packet in an (armored or binary, possibly compressed) OpenPGP message."""
    found: list[SignatureInfo] = []
    for tag, body in _walk(dearmor(data)):
        if tag == TAG_SIGNATURE:
            found.append(parse_signature(body))
            if len(found) > MAX_SIGNATURES:
                raise PacketError(f"more than {MAX_SIGNATURES} signatures")
    return found


# -- keys -----------------------------------------------------------------------------------------


def key_identities(cert: bytes) -> frozenset[str]:
    """Fingerprints and key IDs of the primary keys and subkeys of binary or armored certificates.

    A signature names the key (often a subkey) that made it, so all of them count as trusted.
    """
    found: set[str] = set()
    for tag, body in iter_packets(dearmor(cert)):
        if tag in (TAG_SECRET_KEY, TAG_SECRET_SUBKEY):
            raise PacketError("secret key packets are not read; give the public certificate")
        if tag not in (TAG_PUBLIC_KEY, TAG_PUBLIC_SUBKEY):
            continue
        version = _uint(body, 0, 1, "public key packet")
        if version == 4:
            framed = b"\x99" + len(body).to_bytes(2, "big") + body
            digest = hashlib.sha1(framed, usedforsecurity=False).digest()
            key_id = digest[-8:]
        elif version in (5, 6):
            prefix = b"\x9a" if version == 5 else b"\x9b"
            digest = hashlib.sha256(prefix + len(body).to_bytes(4, "big") + body).digest()
            key_id = digest[:8]
        else:
            raise PacketError(f"public key packet version {version} is not supported")
        found.update((digest.hex().upper(), key_id.hex().upper()))
    if not found:
        raise PacketError("no public key packet")
    return frozenset(found)


# -- the reason -----------------------------------------------------------------------------------


def _listed(items: Iterable[str]) -> str:
    unique = list(dict.fromkeys(items))
    more = len(unique) - MAX_LISTED
    return ", ".join(unique[:MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


def explain_rejection(data: bytes, trusted: frozenset[str] | None, now: datetime, fallback: str) -> str:
    """Why `data`, already rejected by the OpenPGP library, is not a valid signature. Never raises.

    `trusted` holds the keyrings' fingerprints and key IDs (upper-case hex), or is None when they
    could not all be read, in which case no signer is called untrusted. A signer outside the
    keyrings is named first (its expiry would not matter); then an expired signature by a trusted
    key; anything else gets `fallback`.
    """
    try:
        sigs = signatures(data)
    except PacketError as exc:
        return f"unreadable OpenPGP data ({exc})"
    except Exception as exc:  # a parser bug must not hide the rejection itself
        return f"unreadable OpenPGP data ({type(exc).__name__})"
    if not sigs:
        return "not signed (the OpenPGP data holds no signature)"
    if trusted is not None:
        outsiders = [s for s in sigs if s.identities and not s.identities & trusted]
        if len(outsiders) == len(sigs):
            if len({s.issuer for s in outsiders}) == 1:
                return f"signed by key {outsiders[0].issuer}, which is not in the keyrings"
            return f"signed by keys {_listed(s.issuer for s in outsiders)}, which are not in the keyrings"
        sigs = [s for s in sigs if s not in outsiders]
    stamp = now.timestamp()
    expired = sorted(at for s in sigs if (at := s.expires_at) is not None and at <= stamp)
    if expired and len(expired) == len(sigs):
        return f"signature expired at {_listed(rfc3339_seconds(at) for at in expired)}"
    return fallback
