"""Small compiled passes over a batch's columns (numba, cached on disk with this file).

They serve the batch engine's per-batch decisions: which tags a column holds
(``histogram``) and the distinct values of the rows of one tag (``gather``),
so an atom the kernel cannot compute from constants is answered once per
distinct value present, by the per-message engine.
"""
from __future__ import annotations

import numpy as np

from ..table.decode.primitives import _utf8_ok
from ..codegen.jit import njit


@njit(cache=True, nogil=True)
def histogram(tags):   # pragma: no cover - compiled
    counts = np.zeros(256, np.int64)
    for r in range(tags.shape[0]):
        counts[tags[r]] += 1
    return counts


@njit(cache=True, nogil=True)
def gather(tags, tag, values, valid):   # pragma: no cover - compiled
    """The valid values of the rows whose tag is ``tag``."""
    count = 0
    for r in range(tags.shape[0]):
        if tags[r] == tag and (valid[r >> 3] >> (r & 7)) & 1:
            count += 1
    out = np.empty(count, values.dtype)
    j = 0
    for r in range(tags.shape[0]):
        if tags[r] == tag and (valid[r >> 3] >> (r & 7)) & 1:
            out[j] = values[r]
            j += 1
    return out


# --- what a stranger's table may hold: bytes that are not what their tag says --------

@njit(cache=True, nogil=True)
def unreadable_bytes(tags, widths, offsets, data, valid, out):   # pragma: no cover
    """Rows of a binary child (``x`` or ``e``) that cannot be what their tag
    says: ``widths[tag]`` is -3 for tags of other children, -1 for bytes of
    any length, -2 for an AMQP encoding of the tag's composite class (checked
    by ``_encoding_ok``), else the exact width. Null values and offsets that
    lie are unreadable. Returns how many; where ``out`` has rows, their tag
    there becomes 255 (the per-message engine's, which refuses them). The rows
    of those tags are gathered a block at a time first (no branch a row)."""
    write = out.shape[0] > 0
    size = data.shape[0]
    count = 0
    ends = np.empty(MAX_NESTING + 1, np.int64)   # _encoding_ok's stack, made once
    left = np.empty(MAX_NESTING + 1, np.int64)
    exact = np.empty(MAX_NESTING + 1, np.bool_)
    look = np.full(256, -3, np.int64)   # widths by any uint8 tag (-3 past 25)
    look[:26] = widths
    block = np.empty(1024, np.int64)
    n = tags.shape[0]
    for start in range(0, n, 1024):
        k = 0
        for r in range(start, min(start + 1024, n)):
            block[k] = r
            k += look[tags[r]] != -3
        for j in range(k):
            r = block[j]
            w = look[tags[r]]
            bad = False
            if ((valid[r >> 3] >> (r & 7)) & 1) == 0:
                bad = True
            else:
                lo = np.int64(offsets[r])
                hi = np.int64(offsets[r + 1])
                if lo < 0 or hi < lo or hi > size:
                    bad = True
                elif w >= 0:
                    bad = hi - lo != w
                elif w == -2:
                    flat = _flat_list_ok(data, lo, hi) if tags[r] == 22 else -1
                    if flat < 0:
                        bad = not _encoding_ok(data, lo, hi, tags[r], ends, left, exact)
                    else:
                        bad = flat == 0
            if bad:
                count += 1
                if write:
                    out[r] = 255
    return count


# format code -> kind: 0 unknown, 1 no payload, 2 fixed width, 3 var (1-byte size),
# 4 var (4-byte size), 5 compound (1-byte size and count), 6 compound (4-byte)
_KINDS = np.zeros(256, np.int8)
_FIXED = np.zeros(256, np.int8)
for _code in (0x40, 0x41, 0x42, 0x43, 0x44, 0x45):
    _KINDS[_code] = 1
for _code, _width in ((0x50, 1), (0x60, 2), (0x70, 4), (0x52, 1), (0x80, 8), (0x53, 1),
                      (0x51, 1), (0x61, 2), (0x71, 4), (0x54, 1), (0x81, 8), (0x55, 1),
                      (0x72, 4), (0x82, 8), (0x74, 4), (0x84, 8), (0x83, 8), (0x94, 16),
                      (0x98, 16), (0x56, 1), (0x73, 4)):
    _KINDS[_code], _FIXED[_code] = 2, _width
for _code in (0xa0, 0xa1, 0xa3):
    _KINDS[_code] = 3
for _code in (0xb0, 0xb1, 0xb3):
    _KINDS[_code] = 4
for _code in (0xc0, 0xc1, 0xe0):
    _KINDS[_code] = 5
for _code in (0xd0, 0xd1, 0xf0):
    _KINDS[_code] = 6
MAX_NESTING = 16
"""Deeper values are left to the per-message engine (filtex's decoder reads 64)."""


@njit(cache=True, nogil=True, inline="always")
def _be(d, p, width):   # pragma: no cover - compiled
    v = np.int64(0)
    for i in range(width):
        v = (v << 8) | np.int64(d[p + i])
    return v


@njit(cache=True, nogil=True)
def _scalar(d, code, p, end, kinds, fixed):   # pragma: no cover - compiled
    """The offset after the payload at ``p`` of a non-compound value of
    ``code`` that filtex's decoder reads, or -1."""
    k = kinds[code]
    if k == 1:
        return p
    if k == 2:
        width = np.int64(fixed[code])
        if width > end - p:
            return -1
        if code == 0x56 and d[p] > 1:
            return -1
        if code == 0x73:
            point = _be(d, p, 4)
            if point > 0x10FFFF or (0xD800 <= point and point <= 0xDFFF):
                return -1
        return p + width
    if k == 3 or k == 4:
        w = 1 if k == 3 else 4
        if w > end - p:
            return -1
        size = _be(d, p, w)
        start = p + w
        if size > end - start:
            return -1
        stop = start + size
        if code == 0xa1 or code == 0xb1:
            if not _utf8_ok(d.ctypes.data, start, stop - start):   # the decoder's strict check
                return -1
        elif code == 0xa3 or code == 0xb3:
            for i in range(start, stop):
                if d[i] >= 0x80:
                    return -1
        return stop
    return -1


@njit(cache=True, nogil=True, inline="always")
def _flat_list_ok(d, p, end):   # pragma: no cover - compiled
    """The common case of ``_encoding_ok`` for a list, fast: 1 when ``d[p:end]``
    is exactly one list of scalars (strings ASCII) that filtex's decoder
    reads, 0 when it is certainly not, -1 when ``_encoding_ok`` must decide
    (a nested value, a boolean or char, a string that is not ASCII)."""
    kinds, fixed = _KINDS, _FIXED
    code = d[p]
    if code == 0x45:
        return 1 if p + 1 == end else 0
    if code == 0xc0:
        if 3 > end - p:
            return 0
        size = np.int64(d[p + 1])
        count = np.int64(d[p + 2])
        at = p + 3
        stop = p + 2 + size
        if size < 1:
            return 0
    elif code == 0xd0:
        if 9 > end - p:
            return 0
        size = _be(d, p + 1, 4)
        count = _be(d, p + 5, 4)
        at = p + 9
        stop = p + 5 + size
        if size < 4:
            return 0
    else:
        return 0
    if stop != end or count > stop - at:
        return 0
    for _ in range(count):
        if at >= stop:
            return 0
        c = d[at]
        k = kinds[c]
        at += 1
        if k == 1:
            continue
        if k == 2:
            if c == 0x56 or c == 0x73:
                return -1
            w = np.int64(fixed[c])
            if w > stop - at:
                return 0
            at += w
            continue
        if k == 3:
            if at >= stop:
                return 0
            n = np.int64(d[at])
            at += 1
        elif k == 4:
            if 4 > stop - at:
                return 0
            n = _be(d, at, 4)
            at += 4
        else:
            return -1
        if n > stop - at:
            return 0
        if c != 0xa0 and c != 0xb0:   # strings and symbols: ASCII here
            high = 0
            for i in range(at, at + n):
                high |= d[i]
            if high >= 0x80:
                return -1
        at += n
    return 1 if at == stop else 0


@njit(cache=True, nogil=True)
def _encoding_ok(d, p, end, tag, ends, left, exact):   # pragma: no cover - compiled
    """Do the bytes ``d[p:end]`` hold exactly one AMQP value of the class of
    ``tag`` (22 list, 23 map, 24 array, 25 described) that filtex's decoder
    reads? Conservative: maps of more than one entry (duplicate keys), arrays
    of compound or described elements and values nested past ``MAX_NESTING``
    are refused here and go to the per-message engine, which decides exactly.
    Zero-width array elements draw on the decoder's budget (8 a byte of the
    value, plus 65536)."""
    if p >= end:
        return False
    first = d[p]
    if tag == 22:
        if first != 0x45 and first != 0xc0 and first != 0xd0:
            return False
    elif tag == 23:
        if first != 0xc1 and first != 0xd1:
            return False
    elif tag == 24:
        if first != 0xe0 and first != 0xf0:
            return False
    elif first != 0x00:
        return False
    kinds, fixed = _KINDS, _FIXED
    sp = 0   # the stack: each frame's end, values left, and whether it must end there
    budget = 8 * (end - p) + 65536
    ends[0], left[0], exact[0] = end, 1, True
    pos = p
    while sp >= 0:
        if left[sp] == 0:
            if exact[sp] and pos != ends[sp]:
                return False
            sp -= 1
            continue
        left[sp] -= 1
        fend = ends[sp]
        if pos >= fend:
            return False
        code = d[pos]
        pos += 1
        if code == 0x00:   # described: a descriptor and a value, in the same extent
            if sp == MAX_NESTING:
                return False
            sp += 1
            ends[sp], left[sp], exact[sp] = fend, 2, False
            continue
        k = kinds[code]
        if k == 5 or k == 6:
            w = 1 if k == 5 else 4
            if 2 * w > fend - pos:
                return False
            size = _be(d, pos, w)
            body = pos + w
            if size > fend - body or size < w:
                return False
            stop = body + size
            count = _be(d, body, w)
            at = body + w
            if code == 0xe0 or code == 0xf0:   # an array of scalars, read here
                if at >= stop:
                    return False
                element = d[at]
                at += 1
                ek = kinds[element]
                if ek == 0 or ek >= 5:
                    return False
                if ek == 1:
                    budget -= count
                    if budget < 0:
                        return False
                else:
                    least = np.int64(fixed[element]) if ek == 2 else (1 if ek == 3 else 4)
                    if count > (stop - at) // least:
                        return False
                    for _ in range(count):
                        at = _scalar(d, element, at, stop, kinds, fixed)
                        if at < 0:
                            return False
                if at != stop:
                    return False
                pos = stop
                continue
            if count > stop - at:
                return False
            if code == 0xc1 or code == 0xd1:   # maps: none, or one entry of a scalar key
                if count != 0 and count != 2:
                    return False
                if count == 2:
                    key = d[at]
                    if key == 0x00 or key == 0x45 or kinds[key] >= 5:
                        return False
            if sp == MAX_NESTING:
                return False
            sp += 1
            ends[sp], left[sp], exact[sp] = stop, count, True
            pos = at
            continue
        pos = _scalar(d, code, pos, fend, kinds, fixed)
        if pos < 0:
            return False
    return True
