"""The decoder's building blocks: raw loads and stores (bounds are checked by
their callers against the cell's end), AMQP value skipping and decoding, UTF-8
and ASCII checks, and the string interning hash table."""
from __future__ import annotations


import numpy as np
from llvmlite import ir as llvm_ir
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic

from ...amqp import codec
from ...message import HEADER_FIELDS, PROPERTIES_FIELDS
from ...codegen.jit import njit
from ..schema import (BINARY, BOOLEAN, CHILD_OF_TAG, KEYED, STRING, SYMBOL, TIMESTAMP, UBYTE,
                      UINT)


# --- tables the kernel reads (module constants: numba freezes them) ----------------

def _skip_table() -> np.ndarray:
    """By format code: the whole size of a fixed-size value (>0), 0 for a
    one-byte size, -1 for a four-byte size, -3 described, -2 unknown."""
    table = np.full(256, -2, np.int64)
    for code in codec._ZERO:
        table[code] = 1
    for code, (width, _) in codec._FIXED.items():
        table[code] = 1 + width
    for code, (width, _, _) in codec._VAR.items():
        table[code] = 0 if width == 1 else -1
    for code, (_, width) in codec._COMPOUND.items():
        table[code] = 0 if width == 1 else -1
    table[0x00] = -3
    return table


_SKIP = _skip_table()

_RANK = np.full(256, -1, np.int64)
for _code, _rank in codec._RANK.items():
    _RANK[_code] = _rank

_ALLOWED = np.zeros((9, 256), np.uint8)   # section code - 0x70 -> allowed constructors
for _code in range(0x70, 0x79):
    _spec = codec._ENCODINGS.get(_code)
    for _c in range(256):
        _ALLOWED[_code - 0x70, _c] = 1 if _spec is None or _c in _spec[0] else 0

_CHILD_NAMES = (None, "b", "i", "u", "f", "s", "x", "e")
_CHILD = np.array([_CHILD_NAMES.index(CHILD_OF_TAG[tag]) for tag in range(26)], np.int64)
"""Tag -> child number (0 none, 1 b, 2 i, 3 u, 4 f, 5 s, 6 x, 7 e)."""

_MAX_DESCRIBED = 32
"""Most described values (0x00 constructors) one value skipped by size may hold
outside its lists, maps and arrays; more is left undecoded (the reference
decoders refuse nesting past 64)."""

# The keyed sections by section code, in KEYED's order (the kernels number them
# 0-3 and find section ``sec`` at index ``_KEYED_CODES[sec] - 0x70``).
_KEYED_CODES = (0x71, 0x72, 0x74, 0x78)
if tuple(codec._NAMES[c] for c in _KEYED_CODES) != KEYED:   # pragma: no cover
    raise ImportError("filtex.table.decode: the keyed sections changed")

N_HEADER, N_PROPERTIES = len(HEADER_FIELDS), len(PROPERTIES_FIELDS)
_HEADER_WANT = {"durable": BOOLEAN, "priority": UBYTE, "ttl": UINT, "first-acquirer": BOOLEAN,
                "delivery-count": UINT}
_PROPERTIES_WANT = {"message-id": 0, "user-id": BINARY, "to": STRING, "subject": STRING,
                    "reply-to": STRING, "correlation-id": 0, "content-type": SYMBOL,
                    "content-encoding": SYMBOL, "absolute-expiry-time": TIMESTAMP,
                    "creation-time": TIMESTAMP, "group-id": STRING, "group-sequence": UINT,
                    "reply-to-group-id": STRING}
"""Per field: the one tag its typed place holds (0: a VALUE struct, any tag)."""

# Row statuses (internal): decoded; not decodable by the kernel; malformed.
OK, UNSUPPORTED, MALFORMED = 0, 1, 2


# --- raw memory -------------------------------------------------------------------
# The helpers below read and write memory through addresses (``arr.ctypes.data``)
# rather than arrays: numba counts references to every array a function binds,
# and atomic reference counting on each helper call would cost more than the
# decoding itself. The kernels hold the arrays (so the memory stays alive) and
# check every offset against the cell's end before reading it.

def _intp(context, builder, value, typ):
    return context.cast(builder, value, typ, types.intp)


@intrinsic
def _ld(typingctx, addr, i):
    """The byte at ``addr + i``."""
    def codegen(context, builder, sig, args):
        base = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]),
                                llvm_ir.IntType(8).as_pointer())
        return builder.load(builder.gep(base, [_intp(context, builder, args[1], sig.args[1])]))
    return types.uint8(addr, i), codegen


@intrinsic
def _ld64(typingctx, addr, i):
    """Element ``i`` of the int64 array at ``addr``."""
    def codegen(context, builder, sig, args):
        base = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]),
                                llvm_ir.IntType(64).as_pointer())
        return builder.load(builder.gep(base, [_intp(context, builder, args[1], sig.args[1])]))
    return types.int64(addr, i), codegen


@intrinsic
def _st64(typingctx, addr, i, value):
    """Element ``i`` of the int64 array at ``addr`` := ``value``."""
    def codegen(context, builder, sig, args):
        base = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]),
                                llvm_ir.IntType(64).as_pointer())
        v = context.cast(builder, args[2], sig.args[2], types.int64)
        builder.store(v, builder.gep(base, [_intp(context, builder, args[1], sig.args[1])]))
        return context.get_dummy_value()
    return types.none(addr, i, value), codegen


@intrinsic
def _st8(typingctx, addr, i, value):
    """The byte at ``addr + i`` := ``value``."""
    def codegen(context, builder, sig, args):
        base = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]),
                                llvm_ir.IntType(8).as_pointer())
        v = builder.trunc(context.cast(builder, args[2], sig.args[2], types.int64),
                          llvm_ir.IntType(8))
        builder.store(v, builder.gep(base, [_intp(context, builder, args[1], sig.args[1])]))
        return context.get_dummy_value()
    return types.none(addr, i, value), codegen


@intrinsic
def _ldw(typingctx, addr, i):
    """The 8 bytes at ``addr + i`` (any alignment) as a little-endian uint64."""
    def codegen(context, builder, sig, args):
        base = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]),
                                llvm_ir.IntType(8).as_pointer())
        at = builder.gep(base, [_intp(context, builder, args[1], sig.args[1])])
        word = builder.bitcast(at, llvm_ir.IntType(64).as_pointer())
        return builder.load(word, align=1)
    return types.uint64(addr, i), codegen


@intrinsic
def _be32(typingctx, addr, i):
    """The big-endian uint32 at ``addr + i`` (any alignment), as an int64."""
    def codegen(context, builder, sig, args):
        base = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]),
                                llvm_ir.IntType(8).as_pointer())
        at = builder.gep(base, [_intp(context, builder, args[1], sig.args[1])])
        word = builder.load(builder.bitcast(at, llvm_ir.IntType(32).as_pointer()), align=1)
        return builder.zext(builder.bswap(word), llvm_ir.IntType(64))
    return types.int64(addr, i), codegen


@intrinsic
def _be64(typingctx, addr, i):
    """The big-endian 64 bits at ``addr + i`` (any alignment), as an int64."""
    def codegen(context, builder, sig, args):
        base = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]),
                                llvm_ir.IntType(8).as_pointer())
        at = builder.gep(base, [_intp(context, builder, args[1], sig.args[1])])
        word = builder.load(builder.bitcast(at, llvm_ir.IntType(64).as_pointer()), align=1)
        return builder.bswap(word)
    return types.int64(addr, i), codegen


@intrinsic
def _prefetch(typingctx, addr):
    """A hint to load the cache line at ``addr`` (never faults)."""
    def codegen(context, builder, sig, args):
        i8p = llvm_ir.IntType(8).as_pointer()
        i32 = llvm_ir.IntType(32)
        fnty = llvm_ir.FunctionType(llvm_ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        ptr = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]), i8p)
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return types.none(addr), codegen


# --- small readers: inlined, scalars only --------------------------------------------

_INLINE = "always"


@njit(cache=True, inline=_INLINE)
def _u32(d, p):
    return _be32(d, p)


@njit(cache=True, inline=_INLINE)
def _u64(d, p):
    return _be64(d, p)


@njit(cache=True, inline=_INLINE)
def _tail(d, p, n, limit):
    """The ``n`` < 8 bytes at ``p`` as a little-endian word, zero-extended;
    one load when 8 bytes from ``p`` are within ``limit`` (the buffer's size)."""
    if n <= 0:
        return np.uint64(0)
    if p + 8 <= limit:
        return _ldw(d, p) & ((np.uint64(1) << np.uint64(8 * n)) - np.uint64(1))
    w = np.uint64(0)
    for i in range(n):
        w |= np.uint64(_ld(d, p + i)) << np.uint64(8 * i)
    return w


@njit(cache=True, inline=_INLINE)
def _skip(d, p, end):
    """The offset after the value at ``p`` (which must end by ``end``), by
    encoded sizes alone; -1 when it does not fit or is unknown. A described
    value is a descriptor and a value: the values still to skip are counted;
    past ``_MAX_DESCRIBED`` described values in all it is refused."""
    pending = 1
    described = 0
    while pending > 0:
        if p >= end:
            return -1
        k = _SKIP[_ld(d, p)]
        if k > 0:
            p += k
        elif k == 0:
            if p + 2 > end:
                return -1
            p += 2 + np.int64(_ld(d, p + 1))
        elif k == -1:
            if p + 5 > end:
                return -1
            p += 5 + _u32(d, p + 1)
        elif k == -3:
            described += 1
            if described > _MAX_DESCRIBED:
                return -1
            pending += 2   # a descriptor and its value instead of one value
            p += 1
        else:
            return -1
        pending -= 1
        if p > end:
            return -1
    return p


@njit(cache=True, inline=_INLINE)
def _utf8_ok(d, p, n):
    """Strict UTF-8 (what Python's codec and Arrow accept): no overlong forms,
    no surrogates, nothing past U+10FFFF."""
    i = p
    end = p + n
    while i + 8 <= end and (_ldw(d, i) & np.uint64(0x8080808080808080)) == 0:
        i += 8   # ASCII, a word at a time
    while i < end:
        c = _ld(d, i)
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            if i + 1 >= end or (_ld(d, i + 1) & 0xC0) != 0x80:
                return False
            i += 2
        elif 0xE0 <= c <= 0xEF:
            if i + 2 >= end:
                return False
            c1 = _ld(d, i + 1)
            lo = 0xA0 if c == 0xE0 else 0x80
            hi = 0x9F if c == 0xED else 0xBF
            if c1 < lo or c1 > hi or (_ld(d, i + 2) & 0xC0) != 0x80:
                return False
            i += 3
        elif 0xF0 <= c <= 0xF4:
            if i + 3 >= end:
                return False
            c1 = _ld(d, i + 1)
            lo = 0x90 if c == 0xF0 else 0x80
            hi = 0x8F if c == 0xF4 else 0xBF
            if (c1 < lo or c1 > hi or (_ld(d, i + 2) & 0xC0) != 0x80
                    or (_ld(d, i + 3) & 0xC0) != 0x80):
                return False
            i += 4
        else:
            return False
    return True


@njit(cache=True, inline=_INLINE)
def _ascii_ok(d, p, n):
    i = p
    end = p + n
    bits = np.uint64(0)
    while i + 8 <= end:
        bits |= _ldw(d, i)
        i += 8
    while i < end:
        bits |= np.uint64(_ld(d, i))
        i += 1
    return (bits & np.uint64(0x8080808080808080)) == 0


_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline=_INLINE)
def _hash(d, p, n, salt, limit):
    """A 64-bit hash of the ``n`` bytes at ``p`` (read 8 at a time) and ``salt``."""
    h = (np.uint64(salt) + np.uint64(1)) * _M1 ^ np.uint64(n)
    i = p
    end = p + n
    while i + 8 <= end:
        h = (h ^ _ldw(d, i)) * _M2
        h ^= h >> np.uint64(31)
        i += 8
    if i < end:
        h = (h ^ _tail(d, i, end - i, limit)) * _M2
        h ^= h >> np.uint64(31)
    h = (h ^ (h >> np.uint64(29))) * _M3
    h ^= h >> np.uint64(32)
    return h


@njit(cache=True, inline=_INLINE)
def _same(a, p, alimit, b, q, blimit, n):
    """The ``n`` bytes at ``a + p`` and ``b + q`` are equal."""
    i = 0
    while i + 8 <= n:
        if _ldw(a, p + i) != _ldw(b, q + i):
            return False
        i += 8
    return i == n or _tail(a, p + i, n - i, alimit) == _tail(b, q + i, n - i, blimit)


@njit(cache=True, inline=_INLINE)
def _float_bits(v):
    """The bits of the double a float's bits ``v`` widen to, as a CPU (and
    Python's struct) widens it: exactly, a signalling NaN made quiet."""
    sign = (v >> 31) << 63
    e = (v >> 23) & 0xFF
    m = v & 0x7FFFFF
    if e == 0xFF:
        if m != 0:
            m |= 0x400000
        return sign | (np.int64(0x7FF) << 52) | (m << 29)
    if e == 0:
        if m == 0:
            return sign
        e = 1
        while (m & 0x800000) == 0:
            m <<= 1
            e -= 1
        m &= 0x7FFFFF
    return sign | ((e - 127 + 1023) << 52) | (m << 29)


# --- the string dictionaries: one hash table for every column ------------------------
# ht: int64[capacity * 4], four words an entry: the string's hash, its slot << 32
# | its index in the slot's dictionary (-1: an empty entry), its offset in the
# arena and its length; arena: the bytes of every distinct string, in the order
# first seen; log: per distinct string in that order, slot << 40 | length (the
# dictionaries are built from it and the arena, both read in order); meta:
# [entries, arena bytes used, binary bytes used, the run's secret salt of every
# hash]; counts: the dictionary size of each slot. One cache line holds two
# entries, and a lookup that finds its string reads one entry and the arena.
# The kernels never allocate (numba reference-counts an array rebound in a
# loop, a cost on every row, not only the rare ones that grow): when a row
# needs more room than the tables have they return, Python grows the tables
# (``_grown``) and calls again from that row.

@njit(cache=True)
def _grown(ht, arena, log, meta, strings, size):
    """Tables with room for ``strings`` more entries of ``size`` more bytes."""
    count = meta[0]
    used = meta[1]
    if count + strings > log.shape[0]:
        longer = np.empty(max(2 * log.shape[0], count + strings), np.int64)
        longer[:count] = log[:count]
        log = longer
    if used + size > arena.shape[0]:
        more = np.empty(max(2 * arena.shape[0], used + size), np.uint8)
        more[:used] = arena[:used]
        arena = more
    cap = ht.shape[0] >> 2
    if 2 * (count + strings) > cap:
        while 2 * (count + strings) > cap:
            cap *= 2
        bigger = np.full(4 * cap, -1, np.int64)
        mask = cap - 1
        for i in range(ht.shape[0] >> 2):
            if ht[4 * i + 1] >= 0:
                j = np.int64(np.uint64(ht[4 * i]) & np.uint64(mask))
                while bigger[4 * j + 1] >= 0:
                    j = (j + 1) & mask
                bigger[4 * j:4 * j + 4] = ht[4 * i:4 * i + 4]
        ht = bigger
    return ht, arena, log


@njit(cache=True)
def _grown_bytes(arena, used, size):
    more = np.empty(max(2 * arena.shape[0], used + size), np.uint8)
    more[:used] = arena[:used]
    return more


@njit(cache=True, inline=_INLINE)
def _intern(h, src, p, n, limit, slot, ht, mask, arena, alimit, log, meta, counts):
    """The index of the ``n`` bytes at ``src + p`` (of hash ``h``) in
    ``slot``'s dictionary, added if new (the caller made room). Arrays by
    address; ``limit`` and ``alimit`` the sizes of the source and the arena."""
    hb = np.int64(h)
    i = np.int64(h & np.uint64(mask))
    e = 4 * i
    while True:
        e = 4 * i
        who = _ld64(ht, e + 1)
        if who < 0:
            break
        if (_ld64(ht, e) == hb and (who >> 32) == slot and _ld64(ht, e + 3) == n
                and _same(arena, _ld64(ht, e + 2), alimit, src, p, limit, n)):
            return who & 0xFFFFFFFF
        i = (i + 1) & mask
    used = _ld64(meta, 1)
    for j in range(n):
        _st8(arena, used + j, _ld(src, p + j))
    local = _ld64(counts, slot)
    _st64(counts, slot, local + 1)
    _st64(ht, e, hb)
    _st64(ht, e + 1, (slot << 32) | local)
    _st64(ht, e + 2, used)
    _st64(ht, e + 3, n)
    count = _ld64(meta, 0)
    _st64(log, count, (slot << 40) | n)
    _st64(meta, 0, count + 1)
    _st64(meta, 1, used + n)
    return local


# --- one scalar -------------------------------------------------------------------

@njit(cache=True, inline=_INLINE)
def _value(d, p, end):
    """The scalar at ``p``, which must end by ``end``: (status, tag, value,
    start, length, next). Checks the extent and the contents (boolean bytes,
    char code points, UTF-8 of strings, ASCII of symbols) as the reference
    decoder does; a composite (list, map, array, described) is status 1 (left
    to the per-message engine), a malformed or unknown value status 2. The
    value is the integer, the bits of a double (a float widened), 0/1 for a
    boolean or the code point of a char; start and length locate the bytes of
    a string or a binary child."""
    if p >= end:
        return 2, 0, 0, 0, 0, 0
    c = _ld(d, p)
    if c == 0x40:
        return 0, 1, 0, 0, 0, p + 1
    if c == 0xa1 or c == 0xa3 or c == 0xa0:
        if p + 2 > end:
            return 2, 0, 0, 0, 0, 0
        s = p + 2
        n = np.int64(_ld(d, p + 1))
        q = s + n
        if q > end:
            return 2, 0, 0, 0, 0, 0
        if c == 0xa1:
            if not _utf8_ok(d, s, n):
                return 2, 0, 0, 0, 0, 0
            return 0, 20, 0, s, n, q
        if c == 0xa3:
            if not _ascii_ok(d, s, n):
                return 2, 0, 0, 0, 0, 0
            return 0, 21, 0, s, n, q
        return 0, 19, 0, s, n, q
    if c == 0xb1 or c == 0xb3 or c == 0xb0:
        if p + 5 > end:
            return 2, 0, 0, 0, 0, 0
        s = p + 5
        n = _u32(d, p + 1)
        q = s + n
        if q > end:
            return 2, 0, 0, 0, 0, 0
        if c == 0xb1:
            if not _utf8_ok(d, s, n):
                return 2, 0, 0, 0, 0, 0
            return 0, 20, 0, s, n, q
        if c == 0xb3:
            if not _ascii_ok(d, s, n):
                return 2, 0, 0, 0, 0, 0
            return 0, 21, 0, s, n, q
        return 0, 19, 0, s, n, q
    k = _SKIP[c]
    if k <= 0:   # composites, described values, unknown codes
        return (1 if k >= -1 or k == -3 else 2), 0, 0, 0, 0, 0
    q = p + k
    if q > end:
        return 2, 0, 0, 0, 0, 0
    if k == 9:
        v = _u64(d, p + 1)
        if c == 0x83:
            return 0, 17, v, 0, 0, q
        if c == 0x81:
            return 0, 10, v, 0, 0, q
        if c == 0x82:
            return 0, 12, v, 0, 0, q
        if c == 0x80:
            return 0, 6, v, 0, 0, q
        return 0, 14, 0, p + 1, 8, q   # 0x84 decimal64
    if k == 1:
        if c == 0x41:
            return 0, 2, 1, 0, 0, q
        if c == 0x42:
            return 0, 2, 0, 0, 0, q
        if c == 0x43:
            return 0, 5, 0, 0, 0, q
        if c == 0x44:
            return 0, 6, 0, 0, 0, q
        return 1, 0, 0, 0, 0, 0   # 0x45: list0, a composite
    if k == 2:
        v = np.int64(_ld(d, p + 1))
        if c == 0x50:
            return 0, 3, v, 0, 0, q
        if c == 0x52:
            return 0, 5, v, 0, 0, q
        if c == 0x53:
            return 0, 6, v, 0, 0, q
        if c == 0x56:
            if v > 1:
                return 2, 0, 0, 0, 0, 0
            return 0, 2, v, 0, 0, q
        sv = v - 256 if v >= 128 else v
        if c == 0x51:
            return 0, 7, sv, 0, 0, q
        if c == 0x54:
            return 0, 9, sv, 0, 0, q
        return 0, 10, sv, 0, 0, q   # 0x55
    if k == 5:
        v = _u32(d, p + 1)
        if c == 0x70:
            return 0, 5, v, 0, 0, q
        if c == 0x71:
            return 0, 9, v - 4294967296 if v >= 2147483648 else v, 0, 0, q
        if c == 0x72:
            return 0, 11, _float_bits(v), 0, 0, q
        if c == 0x73:
            if v > 0x10FFFF or 0xD800 <= v <= 0xDFFF:
                return 2, 0, 0, 0, 0, 0
            return 0, 16, v, 0, 0, q
        return 0, 13, 0, p + 1, 4, q   # 0x74 decimal32
    if k == 3:
        v = (np.int64(_ld(d, p + 1)) << 8) | np.int64(_ld(d, p + 2))
        if c == 0x60:
            return 0, 4, v, 0, 0, q
        return 0, 8, v - 65536 if v >= 32768 else v, 0, 0, q   # 0x61
    # k == 17: 0x98 uuid, 0x94 decimal128
    return 0, (18 if c == 0x98 else 15), 0, p + 1, 16, q


# --- sections, lists, maps -----------------------------------------------------------

@njit(cache=True, inline=_INLINE)
def _locate(d, p, end, at, ends):
    """Each section's value offset and end into the int64 arrays at ``at`` and
    ``ends`` (-1: absent; the first of repeated data or amqp-sequence sections),
    checking what the reference readers check: described sections with known
    ulong descriptors, in the specification's order, of the encodings the
    sections require, exactly filling the cell. Returns the row's status."""
    for i in range(9):
        _st64(at, i, -1)
    last = -1
    while p < end:
        if _ld(d, p) != 0 or p + 1 >= end:
            return 2
        t = _ld(d, p + 1)
        if t == 0x53:
            if p + 3 > end:
                return 2
            code = np.int64(_ld(d, p + 2))
            q = p + 3
        elif t == 0x80:
            if p + 10 > end:
                return 2
            high = 0
            for i in range(p + 2, p + 9):
                high |= _ld(d, i)
            if high != 0:
                return 2
            code = np.int64(_ld(d, p + 9))
            q = p + 10
        elif t == 0xa3 or t == 0xb3:
            return 1   # a symbol descriptor: valid, but left to the per-message engine
        else:
            return 2
        if code < 0x70 or code > 0x78:
            return 2
        rank = _RANK[code]
        if last >= 0:
            before = _RANK[last]
            if rank < before or (rank == before and not (
                    code == last and (code == 0x75 or code == 0x76))):
                return 2
        if q >= end or _ALLOWED[code - 0x70, _ld(d, q)] == 0:
            return 2
        e = _skip(d, q, end)
        if e < 0:
            return 2
        if _ld64(at, code - 0x70) < 0:
            _st64(at, code - 0x70, q)
            _st64(ends, code - 0x70, e)
        p = e
        last = code
    return 0


@njit(cache=True, inline=_INLINE)
def _list_start(d, q):
    """A header or properties list at ``q`` (its extent checked): (status,
    count, offset of the first field)."""
    c = _ld(d, q)
    if c == 0x45:
        return 0, 0, q + 1
    if c == 0xc0:
        if _ld(d, q + 1) < 1:
            return 2, 0, 0
        return 0, np.int64(_ld(d, q + 2)), q + 3
    if _u32(d, q + 1) < 4:   # 0xd0
        return 2, 0, 0
    return 0, _u32(d, q + 5), q + 9


@njit(cache=True, inline=_INLINE)
def _map_start(d, q):
    """A map section at ``q`` (its extent checked): (status, entries, offset
    of the first key)."""
    if _ld(d, q) == 0xc1:
        if _ld(d, q + 1) < 1:
            return 2, 0, 0
        count = np.int64(_ld(d, q + 2))
        p = q + 3
    else:   # 0xd1
        if _u32(d, q + 1) < 4:
            return 2, 0, 0
        count = _u32(d, q + 5)
        p = q + 9
    if count & 1:
        return 2, 0, 0
    return 0, count >> 1, p


@njit(cache=True, inline=_INLINE)
def _map_key(d, p, mend, symbolic):
    """The key at ``p`` of a map section: (status, kind, start, length, end);
    kind 0 a string or symbol (the section's key class), 1 a ulong."""
    if p >= mend:
        return 2, 0, 0, 0, 0
    c = _ld(d, p)
    if c == (0xa3 if symbolic else 0xa1):
        if p + 2 > mend:
            return 2, 0, 0, 0, 0
        s = p + 2
        n = np.int64(_ld(d, p + 1))
    elif c == (0xb3 if symbolic else 0xb1):
        if p + 5 > mend:
            return 2, 0, 0, 0, 0
        s = p + 5
        n = _u32(d, p + 1)
    elif symbolic and (c == 0x44 or c == 0x53 or c == 0x80):
        e = p + _SKIP[c]
        if e > mend:
            return 2, 0, 0, 0, 0
        return 0, 1, p, 0, e
    else:
        return 2, 0, 0, 0, 0
    if s + n > mend:
        return 2, 0, 0, 0, 0
    return 0, 0, s, n, s + n


@njit(cache=True, inline=_INLINE)
def _find_key(d, s, n, limit, sec, h, kb, kblimit, ko, ksec, kt, kmask, klen):
    """The number of the requested key ``n`` bytes at ``d + s`` (of hash
    ``h``) of keyed section ``sec``, or -1. Arrays by address."""
    if _ld(klen, sec * 256 + min(n, 255)) == 0:
        return -1
    i = np.int64(h & np.uint64(kmask))
    while True:
        k = _ld64(kt, i)
        if k < 0:
            return -1
        start = _ld64(ko, k)
        if (_ld64(ksec, k) == sec and _ld64(ko, k + 1) - start == n
                and _same(d, s, limit, kb, start, kblimit, n)):
            return k
        i = (i + 1) & kmask


# --- the keys of the map sections: every distinct key walked, by id -----------------
# A map walk gives each key its id in this dictionary, and the map has a key
# twice when an id comes up twice in one walk (AMQP 1.0 part 1.6.23: a map
# with a duplicate key is malformed), among all the keys of the map, not only
# the requested ones, in time linear in the map. The id of a key is first
# predicted (the id that followed the previous key, in the last walk that met
# it), so a column of maps of the same keys costs one comparison a key, and
# is looked up by hash otherwise. kd: int64[ids * _KD], per id its hash, its
# length (-2: a ulong key), its offset in the arena ``kda`` (a ulong key: its
# value), its section, the requested key it is (-1: none), the walk that last
# met it, the id that followed it then (-1: none yet); kdt: the hash table of
# ids (-1: empty); kdm: [ids, arena bytes used, walks]; kpos: the predictions,
# per section and entry number (< 64) the key's length (-3: none), its arena
# offset (a ulong: its value) and its id in the last walk, at 0, 256 and 512,
# and per section the id a walk began with, at 768. The kernel starts the
# dictionary over when a map would not fit (``_forget_keys``), and returns to
# have it made bigger when a map alone would fill half of it (``new_keys``).

_KD = 8
_PROBES = 32
"""Longest probe sequence a key lookup walks: past it (keys crafted so that
their hashes collide) the row is left to the per-message engine, so a flood
of colliding keys costs linear time, never quadratic."""


def new_keys(entries: int = 0, size: int = 0) -> tuple[np.ndarray, ...]:
    """An empty key dictionary with room for a map of ``entries`` entries in
    ``size`` bytes: (kd, kdt, kda, kdm, kpos)."""
    ids = 256
    while ids < entries:
        ids *= 2
    kpos = np.zeros(772, np.int64)
    kpos[:256] = -3
    kpos[768:] = -1
    return (np.empty(_KD * ids, np.int64), np.full(4 * ids, -1, np.int64),
            np.empty(max(1 << 14, size), np.uint8), np.zeros(3, np.int64), kpos)


@njit(cache=True, inline=_INLINE)
def _forget_keys(kdt, kdm, kpos):
    """The key dictionary emptied (its walk count kept)."""
    kdt[:] = -1
    kdm[0] = 0
    kdm[1] = 0
    kpos[:256] = -3
    kpos[768:] = -1


@njit(cache=True, inline=_INLINE)
def _ulong_hash(v, sec):
    h = (np.uint64(v) ^ (np.uint64(sec + 5) * _M1)) * _M2
    h ^= h >> np.uint64(31)
    h *= _M3
    return h ^ (h >> np.uint64(32))


@njit(cache=True, inline=_INLINE)
def _is_key(kd, kid, n, v, kda, kdalimit, d, s, limit):
    """Key ``kid`` of the dictionary is the key at ``d + s`` (``n`` bytes; -2:
    the ulong ``v``). Arrays by address."""
    if _ld64(kd, kid * _KD + 1) != n:
        return False
    if n < 0:
        return _ld64(kd, kid * _KD + 2) == v
    return _same(kda, _ld64(kd, kid * _KD + 2), kdalimit, d, s, limit, n)


@njit(cache=True, inline=_INLINE)
def _key_id(d, s, n, v, limit, sec, seed, kd, kdt, tmask, kda, kdalimit, kdm,
            kb, kblimit, ko, ksec, kt, kmask, klen):
    """The id of a key of section ``sec``: the ``n`` bytes at ``d + s``, or
    (``n`` == -2) the ulong ``v``; added if new (the caller made room), with
    the requested key it is. -1 when its probe sequence passes ``_PROBES``.
    ``seed``: the run's secret salt (as ``_key_table``'s). Arrays by address."""
    if n >= 0:
        h = _hash(d, s, n, sec ^ seed, limit)
    else:
        h = _ulong_hash(v, sec ^ seed)
    hb = np.int64(h)
    i = np.int64(h & np.uint64(tmask))
    for _ in range(_PROBES):
        e = _ld64(kdt, i)
        if e < 0:
            new = _ld64(kdm, 0)
            base = new * _KD
            _st64(kd, base, hb)
            _st64(kd, base + 1, n)
            _st64(kd, base + 3, sec)
            _st64(kd, base + 5, 0)
            _st64(kd, base + 6, -1)
            if n >= 0:
                used = _ld64(kdm, 1)
                for j in range(n):
                    _st8(kda, used + j, _ld(d, s + j))
                _st64(kdm, 1, used + n)
                _st64(kd, base + 2, used)
                _st64(kd, base + 4, _find_key(d, s, n, limit, sec, h, kb, kblimit, ko, ksec,
                                              kt, kmask, klen))
            else:
                _st64(kd, base + 2, v)
                _st64(kd, base + 4, -1)
            _st64(kdt, i, new)
            _st64(kdm, 0, new + 1)
            return new
        base = e * _KD
        if _ld64(kd, base) == hb and _ld64(kd, base + 1) == n and _ld64(kd, base + 3) == sec:
            if n < 0:
                if _ld64(kd, base + 2) == v:
                    return e
            elif _same(kda, _ld64(kd, base + 2), kdalimit, d, s, limit, n):
                return e
        i = (i + 1) & tmask
    return -1


@njit(cache=True)
def _key_table(kb, ko, ksec, seed):
    """Open addressing over the requested keys (by section and bytes), hashed
    with the run's secret salt ``seed``."""
    count = ksec.shape[0]
    cap = 16
    while cap < 2 * count + 2:
        cap *= 2
    kt = np.full(cap, -1, np.int64)
    mask = cap - 1
    b = kb.ctypes.data
    for k in range(count):
        i = np.int64(_hash(b, ko[k], ko[k + 1] - ko[k], ksec[k] ^ seed, kb.shape[0])
                     & np.uint64(mask))
        while kt[i] >= 0:
            i = (i + 1) & mask
        kt[i] = k
    return kt


@njit(cache=True, inline=_INLINE)
def _utf8_of(v, out):
    """The UTF-8 encoding of code point ``v`` at address ``out``: its length."""
    if v < 0x80:
        _st8(out, 0, v)
        return 1
    if v < 0x800:
        _st8(out, 0, 0xC0 | (v >> 6))
        _st8(out, 1, 0x80 | (v & 0x3F))
        return 2
    if v < 0x10000:
        _st8(out, 0, 0xE0 | (v >> 12))
        _st8(out, 1, 0x80 | ((v >> 6) & 0x3F))
        _st8(out, 2, 0x80 | (v & 0x3F))
        return 3
    _st8(out, 0, 0xF0 | (v >> 18))
    _st8(out, 1, 0x80 | ((v >> 12) & 0x3F))
    _st8(out, 2, 0x80 | ((v >> 6) & 0x3F))
    _st8(out, 3, 0x80 | (v & 0x3F))
    return 4
