"""RabbitMQ's stream Bloom filter, as its stream store (osiris) builds it per chunk.

A stream is written in *chunks*, one per batch of its writer. Each chunk
carries a Bloom filter of the ``x-stream-filter-value`` annotations of its
messages (``osiris_bloom.erl``): a bitmap of ``size`` bytes (16 unless the
stream says otherwise, 16 to 255), each value setting bits ``phash2(V, B - 1)
+ 1`` and ``phash2([V], B - 1) + 1`` of its ``B = 8 * size`` bits, bit 0 set
when the chunk also holds messages without a value; a chunk with no value at
all has an empty filter. A reader asking for values (``rabbitmq:stream-filter``)
reads a chunk whole when any value it asks for has both its bits set, or when
it asks for ``rabbitmq:stream-match-unfiltered`` and the chunk holds messages
without one (an empty filter: only then); it skips the others whole. So
messages of other values that share a chunk arrive too, and values whose bits
collide with an asked one's let their chunks through: RabbitMQ's consumers
filter again themselves (``receiver.VerifiedConsumer(always_filter=True)``).

``phash2`` is Erlang's portable hash (``erlang:phash2/2``: OTP's
``make_hash2``, ``erts/emulator/beam/utils.c`` to OTP 25, ``erl_term_hashing.c``
after), for the two terms the filter hashes: a binary and a one-element list
of one; ``tests/test_bloom.py`` checks it against values recorded from Erlang.
"""
from __future__ import annotations

import struct
from collections.abc import Iterable

DEFAULT_SIZE = 16          # bytes (osiris.hrl DEFAULT_FILTER_SIZE)
SIZES = range(16, 256)     # osiris_bloom:init/1 takes 16 to 255 bytes

_M = 0xFFFF_FFFF
_HCONST = 0x9E37_79B9      # the golden ratio: Jenkins' lookup2 constant
_HCONST_2 = 0x3C6E_F372
_HCONST_13 = 0x08D1_2E65   # make_hash2's constant for binaries
_NIL = 2                   # NIL_DEF: the tail [] of a list
_NIL_WHEN_ZERO = 3_468_870_702
_WORDS = struct.Struct("<3I").unpack_from


def _mix(a: int, b: int, c: int) -> tuple[int, int, int]:
    """Bob Jenkins' lookup2 ``MIX`` on three 32-bit words."""
    a = (a - b - c) & _M
    a ^= c >> 13
    b = (b - c - a) & _M
    b ^= (a << 8) & _M
    c = (c - a - b) & _M
    c ^= b >> 13
    a = (a - b - c) & _M
    a ^= c >> 12
    b = (b - c - a) & _M
    b ^= (a << 16) & _M
    c = (c - a - b) & _M
    c ^= b >> 5
    a = (a - b - c) & _M
    a ^= c >> 3
    b = (b - c - a) & _M
    b ^= (a << 10) & _M
    c = (c - a - b) & _M
    c ^= b >> 15
    return a, b, c


def binary_hash(data: bytes) -> int:
    """``make_hash2`` of a binary (``block_hash`` seeded with HCONST_13): the
    bytes in 12-byte blocks of three little-endian words, the length and the
    zero-padded tail mixed in last."""
    size = len(data)
    if size == 0:
        return _HCONST_13
    a = b = _HCONST
    c = _HCONST_13
    full = size - size % 12
    for offset in range(0, full, 12):
        x, y, z = _WORDS(data, offset)
        a, b, c = _mix((a + x) & _M, (b + y) & _M, (c + z) & _M)
    x, y, z = _WORDS(data[full:].ljust(12, b"\0"))
    c = (c + (size & _M)) & _M
    return _mix((a + x) & _M, (b + y) & _M, (c + ((z << 8) & _M)) & _M)[2]


def list_hash(element: int) -> int:
    """``make_hash2`` of ``[X]`` given ``X``'s hash: its tail ``[]`` mixed in."""
    if element == 0:
        return _NIL_WHEN_ZERO
    return _mix((_HCONST_2 + _NIL) & _M, _HCONST_2, element)[2]


def phash2(term: bytes | list[bytes], range_: int = 1 << 32) -> int:
    """``erlang:phash2(Term, Range)`` for a binary or ``[Binary]``."""
    if not 1 <= range_ <= 1 << 32:
        raise ValueError("phash2's range is 1 to 2**32")
    if isinstance(term, list):
        [element] = term
        value = list_hash(binary_hash(element))
    else:
        value = binary_hash(term)
    return value if range_ == 1 << 32 else value % range_


def value_bits(value: bytes, size: int = DEFAULT_SIZE) -> int:
    """The two bits a value sets (``osiris_bloom:make_hash/2``), as a mask."""
    top = 8 * size - 1
    first = binary_hash(value)
    return (1 << (first % top + 1)) | (1 << (list_hash(first) % top + 1))


def chunk_filter(values: Iterable[bytes | None], size: int = DEFAULT_SIZE) -> int | None:
    """A chunk's filter from its messages' values (None: a message without one);
    None when no message has one (osiris writes an empty filter)."""
    bits, any_value = 0, False
    for value in values:
        if value is None:
            bits |= 1
        else:
            any_value = True
            bits |= value_bits(value, size)
    return bits if any_value else None


class Matcher:
    """A reader's test of a chunk's filter (``osiris_bloom:init_matcher/2``,
    ``is_match/2``)."""

    def __init__(self, values: Iterable[str], match_unfiltered: bool,
                 size: int = DEFAULT_SIZE) -> None:
        self.masks = tuple(value_bits(v.encode("utf-8"), size) for v in values)
        self.match_unfiltered = match_unfiltered

    def passes(self, chunk: int | None) -> bool:
        if chunk is None:
            return self.match_unfiltered
        if self.match_unfiltered and chunk & 1:
            return True
        return any(chunk & mask == mask for mask in self.masks)


def writer_batches(count: int, fixed: int | None = None) -> list[int]:
    """Where the chunks of ``count`` messages written at once start: every
    ``fixed`` messages, or as RabbitMQ's stream writer batches a burst
    (``gen_batch_server``: 32 messages, doubling to 8,192)."""
    starts, offset, size = [], 0, fixed or 32
    while offset < count:
        starts.append(offset)
        offset += size
        if fixed is None:
            size = min(size * 2, 8192)
    return starts


__all__ = ["DEFAULT_SIZE", "Matcher", "SIZES", "chunk_filter", "phash2", "value_bits",
           "writer_batches"]
