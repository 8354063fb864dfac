"""Reading why a signature was rejected from its OpenPGP packets, on bytes built here: header
formats, compression, v3/v4/v6 signatures, armor, certificates, and garbage of every kind."""

from __future__ import annotations

import base64
import bz2
import random
import zlib
from datetime import UTC, datetime

import pytest

from payload.verify.packets import (
    MAX_DECOMPRESSED,
    PacketError,
    SignatureInfo,
    explain_rejection,
    iter_packets,
    key_identities,
    signatures,
)

CREATED = 1577836800  # 2020-01-01T00:00:00Z
DAY = 86400
FPR = "AB" * 20
KEY_ID = "CD" * 8
OTHER_FPR = "EF" * 20
FPR6 = "12" * 32
FALLBACK = "no valid signature by a trusted key (not signed by one, or expired)"
LATER = datetime(2025, 1, 1, tzinfo=UTC)


# -- builders -------------------------------------------------------------------------------------


def sub_length(n: int, form: str = "auto") -> bytes:
    if form == "4" or (form == "auto" and n >= 8384):
        return b"\xff" + n.to_bytes(4, "big")
    if form == "2" or (form == "auto" and n >= 192):
        n -= 192
        return bytes([(n >> 8) + 192, n & 0xFF])
    return bytes([n])


def sub(kind: int, value: bytes, critical: bool = False, form: str = "auto") -> bytes:
    return sub_length(len(value) + 1, form) + bytes([kind | (0x80 if critical else 0)]) + value


def created(t: int = CREATED) -> bytes:
    return sub(2, t.to_bytes(4, "big"))


def expires(seconds: int, critical: bool = True) -> bytes:
    return sub(3, seconds.to_bytes(4, "big"), critical)


def issuer_fpr(hexfpr: str = FPR) -> bytes:
    return sub(33, bytes([4 if len(hexfpr) == 40 else 6]) + bytes.fromhex(hexfpr))


def issuer_id(hexid: str = KEY_ID) -> bytes:
    return sub(16, bytes.fromhex(hexid))


def sig_v4(hashed: bytes, unhashed: bytes = b"") -> bytes:
    head = bytes([4, 0x00, 22, 10])  # binary document, EdDSA, SHA-512
    tail = b"\xbd\x8e" + b"\x00\x08\xff"  # left 16 bits of the hash, a token MPI
    return head + len(hashed).to_bytes(2, "big") + hashed + len(unhashed).to_bytes(2, "big") + unhashed + tail


def sig_v6(hashed: bytes, unhashed: bytes = b"") -> bytes:
    head = bytes([6, 0x00, 27, 10])  # Ed25519
    tail = b"\xbd\x8e" + b"\x10" + b"s" * 16 + b"\x00" * 64  # salt, signature
    return head + len(hashed).to_bytes(4, "big") + hashed + len(unhashed).to_bytes(4, "big") + unhashed + tail


def sig_v3(t: int = CREATED, key_id: str = KEY_ID) -> bytes:
    return bytes([3, 5, 0x00]) + t.to_bytes(4, "big") + bytes.fromhex(key_id) + bytes([1, 8]) + b"\xbd\x8e"


def new_packet(tag: int, body: bytes, form: str = "auto") -> bytes:
    ctb = bytes([0xC0 | tag])
    if form == "partial":  # 16-byte partial chunks, then the remainder as a normal length
        out = ctb
        while len(body) > 16:
            out += bytes([224 + 4]) + body[:16]
            body = body[16:]
        return out + sub_length(len(body), "1" if len(body) < 192 else "auto") + body
    if form == "5":
        return ctb + b"\xff" + len(body).to_bytes(4, "big") + body
    return ctb + sub_length(len(body)) + body


def old_packet(tag: int, body: bytes, size: int | None) -> bytes:
    if size is None:  # indeterminate length: the packet runs to the end
        return bytes([0x80 | (tag << 2) | 3]) + body
    length_type = {1: 0, 2: 1, 4: 2}[size]
    return bytes([0x80 | (tag << 2) | length_type]) + len(body).to_bytes(size, "big") + body


def compressed(algo: int, inner: bytes) -> bytes:
    if algo == 1:
        deflate = zlib.compressobj(wbits=-15)
        packed = deflate.compress(inner) + deflate.flush()
    elif algo == 2:
        packed = zlib.compress(inner)
    elif algo == 3:
        packed = bz2.compress(inner)
    else:
        packed = inner
    return bytes([algo]) + packed


def message(sig_body: bytes) -> bytes:
    """A one-pass signed message as gpg writes it: one-pass header, literal data, signature."""
    one_pass = bytes([3, 0x00, 10, 22]) + bytes.fromhex(KEY_ID) + b"\x01"
    literal = b"b\x00" + CREATED.to_bytes(4, "big") + b'{"critical": {}}'
    return new_packet(4, one_pass) + new_packet(11, literal) + new_packet(2, sig_body)


def armor(data: bytes, kind: str = "MESSAGE", headers: str = "Comment: made in a test\n") -> bytes:
    text = base64.b64encode(data).decode()
    lines = "\n".join(text[i : i + 64] for i in range(0, len(text), 64))
    return f"-----BEGIN PGP {kind}-----\n{headers}\n{lines}\n=abcd\n-----END PGP {kind}-----\n".encode()


HASHED = created() + expires(DAY) + issuer_fpr()
EXPIRING = SignatureInfo(4, CREATED, DAY, (FPR,), (KEY_ID,))


# -- parsing --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(new_packet(2, sig_v4(HASHED, issuer_id())), [EXPIRING], id="v4 new format"),
        pytest.param(
            old_packet(2, sig_v4(HASHED, issuer_id()), 1), [EXPIRING], id="old format 1-byte length"
        ),
        pytest.param(
            old_packet(2, sig_v4(HASHED, issuer_id()), 2), [EXPIRING], id="old format 2-byte length"
        ),
        pytest.param(
            old_packet(2, sig_v4(HASHED, issuer_id()), 4), [EXPIRING], id="old format 4-byte length"
        ),
        pytest.param(
            old_packet(2, sig_v4(HASHED, issuer_id()), None), [EXPIRING], id="old format indeterminate"
        ),
        pytest.param(
            new_packet(2, sig_v4(HASHED, issuer_id()), "5"), [EXPIRING], id="new format 5-byte length"
        ),
        pytest.param(
            new_packet(2, sig_v4(HASHED + sub(20, b"n" * 300), issuer_id())),
            [EXPIRING],
            id="2-byte packet and subpacket lengths",
        ),
        pytest.param(
            new_packet(
                2,
                sig_v4(
                    sub(2, CREATED.to_bytes(4, "big"), form="4") + expires(DAY) + issuer_fpr(), issuer_id()
                ),
            ),
            [EXPIRING],
            id="4-byte subpacket length on a small value",
        ),
        pytest.param(message(sig_v4(HASHED, issuer_id())), [EXPIRING], id="one-pass signed message"),
        pytest.param(
            new_packet(8, compressed(0, message(sig_v4(HASHED, issuer_id())))),
            [EXPIRING],
            id="uncompressed compressed-data packet",
        ),
        pytest.param(
            old_packet(8, compressed(1, message(sig_v4(HASHED, issuer_id()))), None),
            [EXPIRING],
            id="ZIP, indeterminate length (as gpg writes)",
        ),
        pytest.param(
            new_packet(8, compressed(2, message(sig_v4(HASHED, issuer_id())))), [EXPIRING], id="ZLIB"
        ),
        pytest.param(
            new_packet(8, compressed(3, message(sig_v4(HASHED, issuer_id())))), [EXPIRING], id="BZip2"
        ),
        pytest.param(
            new_packet(8, compressed(2, message(sig_v4(HASHED, issuer_id()))), "partial"),
            [EXPIRING],
            id="partial body lengths",
        ),
        pytest.param(armor(message(sig_v4(HASHED, issuer_id()))), [EXPIRING], id="armored"),
        pytest.param(
            armor(message(sig_v4(HASHED, issuer_id())), headers=""), [EXPIRING], id="armored, no headers"
        ),
        pytest.param(
            new_packet(2, sig_v4(created() + issuer_fpr(), expires(DAY) + issuer_id())),
            [SignatureInfo(4, CREATED, None, (FPR,), (KEY_ID,))],
            id="expiry outside the hashed area does not count",
        ),
        pytest.param(
            new_packet(2, sig_v4(created() + expires(0) + issuer_id())),
            [SignatureInfo(4, CREATED, None, (), (KEY_ID,))],
            id="expiry 0 means never",
        ),
        pytest.param(new_packet(2, sig_v4(b"")), [SignatureInfo(4)], id="no subpackets"),
        pytest.param(
            new_packet(2, sig_v6(created() + expires(DAY, critical=False) + issuer_fpr(FPR6))),
            [SignatureInfo(6, CREATED, DAY, (FPR6,), ())],
            id="v6",
        ),
        pytest.param(new_packet(2, sig_v3()), [SignatureInfo(3, CREATED, None, (), (KEY_ID,))], id="v3"),
        pytest.param(
            new_packet(2, sig_v4(HASHED, issuer_id()))
            + new_packet(2, sig_v4(created() + issuer_fpr(OTHER_FPR))),
            [EXPIRING, SignatureInfo(4, CREATED, None, (OTHER_FPR,), ())],
            id="two signatures",
        ),
        pytest.param(new_packet(11, b"b\x00\x00\x00\x00\x00data"), [], id="no signature"),
        pytest.param(b"", [], id="empty"),
    ],
)
def test_signature_packets_are_read(data: bytes, expected: list[SignatureInfo]) -> None:
    assert signatures(data) == expected


def bomb() -> bytes:
    return new_packet(8, compressed(2, b"\x00" * (MAX_DECOMPRESSED + 1)))


def nested(depth: int) -> bytes:
    data = new_packet(2, sig_v4(HASHED))
    for _ in range(depth):
        data = new_packet(8, compressed(0, data))
    return data


GOOD = new_packet(2, sig_v4(HASHED, issuer_id()))


@pytest.mark.parametrize(
    ("data", "error"),
    [
        pytest.param(b"garbage", "byte 0 (0x67) is not an OpenPGP packet header", id="text"),
        pytest.param(
            GOOD + b"\x00", f"byte {len(GOOD)} (0x00) is not an OpenPGP packet header", id="trailing zero"
        ),
        pytest.param(b"\xc2", "packet length at byte 1 is truncated", id="header only"),
        pytest.param(b"\xc2\xd0", "packet length at byte 1 is truncated", id="2-byte length cut"),
        pytest.param(b"\x88", "packet length at byte 0 is truncated", id="old header only"),
        pytest.param(GOOD[:-1], "packet at byte 0 (tag 2) is truncated", id="body cut"),
        pytest.param(b"\xc2\xe4abc", "packet at byte 0 (tag 2) is truncated", id="partial chunk cut"),
        pytest.param(new_packet(2, b""), "signature packet is truncated", id="empty signature"),
        pytest.param(
            new_packet(2, sig_v4(HASHED)[:10]), "signature packet is truncated", id="hashed area cut"
        ),
        pytest.param(
            new_packet(2, bytes([4, 0, 22, 10, 0, 3, 5, 2, 0, 0, 0])),
            "signature subpacket at byte 0 is truncated",
            id="subpacket longer than its area",
        ),
        pytest.param(
            new_packet(2, sig_v4(b"\x00")),
            "signature subpacket at byte 0 is truncated",
            id="zero-length subpacket",
        ),
        pytest.param(
            new_packet(2, sig_v4(b"\xe0")),
            "signature subpacket at byte 0 has an invalid length",
            id="partial length in a subpacket area",
        ),
        pytest.param(
            new_packet(2, sig_v4(sub(2, b"\x01\x02"))),
            "signature creation time subpacket is truncated",
            id="short creation time",
        ),
        pytest.param(
            new_packet(2, sig_v4(sub(16, b"\x01"))),
            "issuer key ID subpacket is not 8 bytes",
            id="short key ID",
        ),
        pytest.param(
            new_packet(2, sig_v4(sub(33, b"\x04\x01"))),
            "issuer fingerprint subpacket has an invalid length",
            id="short fingerprint",
        ),
        pytest.param(
            new_packet(2, b"\x05" + sig_v4(HASHED)[1:]),
            "signature packet version 5 is not supported",
            id="v5",
        ),
        pytest.param(
            new_packet(2, b"\x03\x04" + b"\x00" * 17),
            "v3 signature packet has an invalid hashed length",
            id="bad v3",
        ),
        pytest.param(new_packet(2, sig_v3()[:10]), "v3 signature packet is truncated", id="v3 cut"),
        pytest.param(
            new_packet(8, b""), "compressed data packet is truncated", id="compressed, no algorithm"
        ),
        pytest.param(
            new_packet(8, b"\x09abc"), "compression algorithm 9 is unknown", id="unknown compression"
        ),
        pytest.param(new_packet(8, b"\x02not zlib"), "compressed data is corrupt", id="corrupt ZLIB"),
        pytest.param(new_packet(8, b"\x03not bzip2"), "compressed data is corrupt", id="corrupt BZip2"),
        pytest.param(new_packet(8, compressed(2, GOOD)[:-6]), "compressed data is truncated", id="ZLIB cut"),
        pytest.param(
            bomb(), f"compressed data expands beyond {MAX_DECOMPRESSED} bytes", id="compression bomb"
        ),
        pytest.param(nested(5), "compressed data is nested more than 4 deep", id="nesting"),
        pytest.param(b"".join([GOOD] * 17), "more than 16 signatures", id="too many signatures"),
        pytest.param(
            b"-----BEGIN PGP MESSAGE-----\n\n!!!!\n-----END PGP MESSAGE-----\n",
            "armor is not valid base64",
            id="armor not base64",
        ),
        pytest.param(armor(GOOD)[:-30], "armor is truncated (no END line)", id="armor cut"),
        pytest.param(
            b"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\ntext\n",
            "armor has no OpenPGP block",
            id="armor, cleartext only",
        ),
    ],
)
def test_unreadable_data_is_a_clear_error(data: bytes, error: str) -> None:
    with pytest.raises(PacketError) as err:
        signatures(data)
    assert error in str(err.value)


def test_every_truncation_and_random_garbage_is_handled() -> None:
    valid = [
        old_packet(8, compressed(1, message(sig_v4(HASHED, issuer_id()))), None),
        new_packet(2, sig_v6(created() + issuer_fpr(FPR6))),
        armor(message(sig_v4(HASHED))),
    ]
    samples = [data[:cut] for data in valid for cut in range(len(data))]
    rng = random.Random(4880)  # fixed: the same inputs every run
    samples += [rng.randbytes(rng.randrange(1, 200)) for _ in range(2000)]
    samples += [bytes([0xC2]) + rng.randbytes(rng.randrange(1, 60)) for _ in range(500)]
    reasons = set()
    for data in samples:
        try:
            signatures(data)
        except PacketError:
            pass
        reasons.add(explain_rejection(data, frozenset({FPR}), LATER, FALLBACK))
    # Every input got a readable sentence, and the unreadable ones say so.
    assert all(r and len(r) < 300 for r in reasons)
    assert any(r.startswith("unreadable OpenPGP data (") for r in reasons)


# -- the reason -----------------------------------------------------------------------------------

TRUSTED = frozenset({FPR, KEY_ID})
EXPIRED_AT = "signature expired at 2020-01-02T00:00:00Z"


def signed(hashed: bytes, unhashed: bytes = b"") -> bytes:
    return old_packet(8, compressed(1, message(sig_v4(hashed, unhashed))), None)


@pytest.mark.parametrize(
    ("data", "trusted", "now", "reason"),
    [
        pytest.param(signed(HASHED), TRUSTED, LATER, EXPIRED_AT, id="expired"),
        pytest.param(
            signed(HASHED), TRUSTED, datetime(2020, 1, 2, tzinfo=UTC), EXPIRED_AT, id="expires this second"
        ),
        pytest.param(
            signed(HASHED),
            TRUSTED,
            datetime(2020, 1, 1, 23, 59, 59, tzinfo=UTC),
            FALLBACK,
            id="one second before expiry",
        ),
        pytest.param(signed(created() + issuer_fpr()), TRUSTED, LATER, FALLBACK, id="trusted, never expires"),
        pytest.param(
            signed(created() + expires(DAY), issuer_id()), TRUSTED, LATER, EXPIRED_AT, id="trusted by key ID"
        ),
        pytest.param(signed(created() + expires(DAY)), TRUSTED, LATER, EXPIRED_AT, id="no issuer named"),
        pytest.param(
            signed(created() + issuer_fpr(OTHER_FPR)),
            TRUSTED,
            LATER,
            f"signed by key {OTHER_FPR}, which is not in the keyrings",
            id="untrusted fingerprint",
        ),
        pytest.param(
            signed(created(), issuer_id("0123456789ABCDEF")),
            TRUSTED,
            LATER,
            "signed by key 0123456789ABCDEF, which is not in the keyrings",
            id="untrusted key ID",
        ),
        pytest.param(
            signed(created() + expires(DAY) + issuer_fpr(OTHER_FPR)),
            TRUSTED,
            LATER,
            f"signed by key {OTHER_FPR}, which is not in the keyrings",
            id="untrusted wins over expired",
        ),
        pytest.param(
            signed(created() + expires(DAY) + issuer_fpr(OTHER_FPR)),
            None,
            LATER,
            EXPIRED_AT,
            id="keyrings unknown: expired",
        ),
        pytest.param(
            signed(created() + issuer_fpr(OTHER_FPR)), None, LATER, FALLBACK, id="keyrings unknown: no claim"
        ),
        pytest.param(
            new_packet(2, sig_v4(created() + issuer_fpr(OTHER_FPR)))
            + new_packet(2, sig_v4(created() + issuer_fpr())),
            frozenset({"11" * 20}),
            LATER,
            f"signed by keys {OTHER_FPR}, {FPR}, which are not in the keyrings",
            id="two untrusted signers",
        ),
        pytest.param(
            b"".join(new_packet(2, sig_v4(created() + issuer_fpr(f"{n:02d}" * 20))) for n in range(5)),
            TRUSTED,
            LATER,
            f"signed by keys {'00' * 20}, {'01' * 20}, {'02' * 20} and 2 more, which are not in the keyrings",
            id="many untrusted signers are bounded",
        ),
        pytest.param(
            new_packet(2, sig_v4(created() + issuer_fpr(OTHER_FPR))) + new_packet(2, sig_v4(HASHED)),
            TRUSTED,
            LATER,
            EXPIRED_AT,
            id="the trusted signer's expiry is the reason",
        ),
        pytest.param(
            new_packet(2, sig_v4(HASHED)) + new_packet(2, sig_v4(created() + issuer_fpr())),
            TRUSTED,
            LATER,
            FALLBACK,
            id="one of two trusted signatures is not expired",
        ),
        pytest.param(
            new_packet(2, sig_v6(created() + expires(DAY) + issuer_fpr(FPR6))),
            frozenset({FPR6}),
            LATER,
            EXPIRED_AT,
            id="v6 expired",
        ),
        pytest.param(new_packet(2, sig_v3()), TRUSTED, LATER, FALLBACK, id="v3 cannot expire"),
        pytest.param(
            new_packet(11, b"b\x00\x00\x00\x00\x00data"),
            TRUSTED,
            LATER,
            "not signed (the OpenPGP data holds no signature)",
            id="not signed",
        ),
        pytest.param(
            b"garbage",
            TRUSTED,
            LATER,
            "unreadable OpenPGP data (byte 0 (0x67) is not an OpenPGP packet header)",
            id="garbage",
        ),
        pytest.param(
            GOOD[:-1],
            TRUSTED,
            LATER,
            "unreadable OpenPGP data (packet at byte 0 (tag 2) is truncated)",
            id="truncated",
        ),
    ],
)
def test_rejection_reason(data: bytes, trusted: frozenset[str] | None, now: datetime, reason: str) -> None:
    assert explain_rejection(data, trusted, now, FALLBACK) == reason


# -- certificates ---------------------------------------------------------------------------------

# RFC 9580 appendix A.1 (v4 Ed25519Legacy) and A.3 (v6 Ed25519) public key packets, whose
# fingerprints the RFC states.
RFC_V4_KEY = bytes.fromhex(
    "98330453f35f0b16092b06010401da470f010107403f098994bdd916ed4053"
    "197934e4a87c80733a1280d62f8010992e43ee3b2406"
)
RFC_V6_KEY = bytes.fromhex(
    "c62a0663877fe31b00000020f94da7bb48d60a61e567706a6587d0331999bb9d891a08242ead84543df895a3"
)
RFC_V4_FPR = "C959BDBAFA32A2F89A153B678CFDE12197965A9A"
RFC_V6_FPR = "CB186C4F0609A697E4D52DFA6C722B0C1F1E27C18A56708F6525EC27BAD9ACC9"


def as_subkey(key_packet: bytes) -> bytes:
    [(_tag, body)] = iter_packets(key_packet)
    return new_packet(14, body)


@pytest.mark.parametrize(
    ("cert", "expected"),
    [
        pytest.param(RFC_V4_KEY, {RFC_V4_FPR, RFC_V4_FPR[-16:]}, id="v4"),
        pytest.param(RFC_V6_KEY, {RFC_V6_FPR, RFC_V6_FPR[:16]}, id="v6"),
        pytest.param(
            RFC_V6_KEY + new_packet(13, b"someone") + as_subkey(RFC_V4_KEY),
            {RFC_V6_FPR, RFC_V6_FPR[:16], RFC_V4_FPR, RFC_V4_FPR[-16:]},
            id="subkeys count",
        ),
        pytest.param(armor(RFC_V4_KEY, "PUBLIC KEY BLOCK"), {RFC_V4_FPR, RFC_V4_FPR[-16:]}, id="armored"),
    ],
)
def test_key_identities(cert: bytes, expected: set[str]) -> None:
    assert key_identities(cert) == expected


@pytest.mark.parametrize(
    ("cert", "error"),
    [
        pytest.param(new_packet(13, b"only a user ID"), "no public key packet", id="no key"),
        pytest.param(
            new_packet(6, b"\x03" + b"\x00" * 10), "public key packet version 3 is not supported", id="v3"
        ),
        pytest.param(new_packet(5, RFC_V4_KEY[2:]), "secret key packets are not read", id="secret key"),
        pytest.param(RFC_V4_KEY[:-1], "is truncated", id="truncated"),
    ],
)
def test_unreadable_certificates_are_a_clear_error(cert: bytes, error: str) -> None:
    with pytest.raises(PacketError, match=error):
        key_identities(cert)
