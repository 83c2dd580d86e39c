"""A gzip body compressed once, with holes filled per request (the language form's CSRF token).

A cached page is the same for every anonymous visitor but for its CSRF token. Compressing 160 KB
per request costs milliseconds; compressing once and splicing the token in does not. Each part
around a hole is compressed alone into byte-aligned raw deflate blocks (``Z_FULL_FLUSH``: no
back-reference crosses a hole), a hole's text goes in as a stored block, and the gzip trailer's
CRC-32 is combined from the parts' CRCs (zlib's ``crc32_combine``, which Python's zlib lacks), so a
request touches only its token's bytes. Plain functions over bytes: no Django here.
"""

import dataclasses
import logging
import struct
import zlib

logger = logging.getLogger(__name__)

_POLY = 0xEDB88320  # CRC-32, reflected
_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # gzip, deflate, no name, no mtime
_LAST_BLOCK = b"\x01\x00\x00\xff\xff"  # an empty stored block marked final
_STORED_MAX = 0xFFFF


def _multmodp(a: int, b: int) -> int:
    """a × b modulo the CRC polynomial (zlib's multmodp)."""
    m, p = 1 << 31, 0
    while True:
        if a & m:
            p ^= b
            if not a & (m - 1):
                return p
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


def _powers() -> list[int]:
    table, p = [], 1 << 30  # x^1
    for _ in range(32):
        table.append(p)
        p = _multmodp(p, p)
    return table


_X2N = _powers()  # x^(2^k) modulo the polynomial


def shift_of(length: int) -> int:
    """x^(8 × length) modulo the polynomial: what appending ``length`` bytes does to a CRC."""
    p, k = 1 << 31, 3
    while length:
        if length & 1:
            p = _multmodp(_X2N[k & 31], p)
        length >>= 1
        k += 1
    return p


def crc_combine(crc1: int, crc2: int, shift2: int) -> int:
    """The CRC-32 of A + B from CRC(A), CRC(B) and ``shift_of(len(B))``."""
    return _multmodp(shift2, crc1) ^ crc2


@dataclasses.dataclass(frozen=True)
class Part:
    deflated: bytes  # raw deflate blocks, byte-aligned, none final
    crc: int
    length: int
    shift: int


@dataclasses.dataclass(frozen=True)
class Spliced:
    """A body's parts around its holes, each compressed once."""

    parts: tuple[Part, ...]


def prepare(parts: list[bytes], level: int = 6) -> Spliced:
    """Compress each part once; ``fill`` puts len(parts) - 1 fillers between them."""
    prepared = []
    for text in parts:
        compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
        deflated = compressor.compress(text) + compressor.flush(zlib.Z_FULL_FLUSH)
        prepared.append(Part(deflated, zlib.crc32(text), len(text), shift_of(len(text))))
    return Spliced(tuple(prepared))


def _stored(text: bytes) -> bytes:
    blocks = []
    for start in range(0, len(text), _STORED_MAX):
        chunk = text[start : start + _STORED_MAX]
        blocks.append(b"\x00" + struct.pack("<HH", len(chunk), len(chunk) ^ 0xFFFF) + chunk)
    return b"".join(blocks)


def fill(spliced: Spliced, fillers: list[bytes]) -> bytes:
    """The gzip file of the parts with ``fillers`` between them."""
    first, *rest = spliced.parts
    if len(fillers) != len(rest):
        raise ValueError(f"{len(rest)} holes, {len(fillers)} fillers")
    out = [_HEADER, first.deflated]
    crc, size = first.crc, first.length
    for filler, part in zip(fillers, rest, strict=True):
        out += [_stored(filler), part.deflated]
        crc = crc_combine(crc, zlib.crc32(filler), shift_of(len(filler)))
        crc = crc_combine(crc, part.crc, part.shift)
        size += len(filler) + part.length
    out += [_LAST_BLOCK, struct.pack("<II", crc, size & 0xFFFFFFFF)]
    return b"".join(out)
