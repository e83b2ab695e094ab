"""Finding a filter's fields in encoded messages, 64 messages at a time, compiled once.

The walking kernels (``arrow/walk_source.py``) evaluate a filter while they
walk a column of encoded messages. The walk itself is the same for every
filter: locate the sections, read the header and properties fields asked for,
find the application properties asked for by key and skip every other value
by its encoded size. It is compiled once, as a C function (``cfunc``) that the
generated kernels call through its address (``call_walker``), so a filter's
kernel holds only its atoms and skeleton and compiles as fast as a fused one.

One call walks the 64 messages of a word and leaves, per requested field
(*slot*) and message, the tag (0: absent), the value (integer, a double's bits,
0/1) and a string's start and length in the column's bytes, and returns the
messages the column decoder would not decode (the same checks: ``kernel.py``),
which the caller evaluates otherwise. Header and properties are checked only
when a field of theirs is asked for: the per-message engine decodes a list
only when a filter reads it.

Keys are found by prediction: a column's messages mostly hold the same keys in
the same order, so each entry is compared with the entry at the same place in
the previous message; when all match, the previous message's check that no
key is there twice holds for this one. Otherwise the key is compared with each
wanted key, and the map's keys are checked pair by pair (a map of more than
``MAX_PAIRWISE`` entries is left to the decoder, which has a key dictionary).
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np
from llvmlite import ir as llvm_ir
from numba import types
from numba.core.extending import intrinsic

from ...codegen.jit import njit

from .primitives import (N_HEADER, N_PROPERTIES, _intp, _ld, _ld64, _list_start, _locate, _map_key,
                         _map_start, _prefetch, _same, _skip, _st64, _value)

MAX_PAIRWISE = 32
"""Most entries of a map whose keys are checked pair by pair."""

# the frame: one int64 array holding the walk's arguments and state
(D, SIZE, OFFS, SKIP, BITS, HAS_BITS, BIT0, BASE, COUNT, WANT, SLOT_OF, LISTS, KB, KLIM, KO,
 NK, KSLOT, STATE, OUT_TAG, OUT_V, OUT_S, OUT_N, ROWS, NSLOTS) = range(24)
FRAME = 24
# the state array: previous map's entry count, then its keys' starts, lengths and numbers,
# then the sections' offsets and ends
PREV, PK_S, PK_N, PK_K = 0, 1, 1 + MAX_PAIRWISE, 1 + 2 * MAX_PAIRWISE
AT, ENDS = 1 + 3 * MAX_PAIRWISE, 10 + 3 * MAX_PAIRWISE
STATE_SIZE = 19 + 3 * MAX_PAIRWISE
HEADER_LIST, PROPERTIES_LIST, APPLICATION_MAP = 1, 2, 4


@intrinsic
def call_walker(typingctx: Any, fn: Any, frame: Any) -> Any:
    """``fn(frame)`` for the address ``fn`` of a C function ``int64(int64)``."""
    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        i64 = llvm_ir.IntType(64)
        fnty = llvm_ir.FunctionType(i64, [i64])
        ptr = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]), fnty.as_pointer())
        return builder.call(ptr, [context.cast(builder, args[1], sig.args[1], types.int64)])
    return types.int64(fn, frame), codegen


@njit(inline="always")
def _keep(out, at, tag, v, s, n):
    """A field found: its tag, value and string bytes' place, at ``at`` of the
    output arrays whose addresses ``out`` holds."""
    _st64(out[0], at, tag)
    _st64(out[1], at, v)
    _st64(out[2], at, s)
    _st64(out[3], at, n)


def _walk_word(f):
    d = _ld64(f, D)
    size = _ld64(f, SIZE)
    offs = _ld64(f, OFFS)
    skip = _ld64(f, SKIP)
    bits = _ld64(f, BITS)
    has_bits = _ld64(f, HAS_BITS)
    bit0 = _ld64(f, BIT0)
    base = _ld64(f, BASE)
    m = _ld64(f, COUNT)
    rows = _ld64(f, ROWS)
    want = _ld64(f, WANT)
    slot_of = _ld64(f, SLOT_OF)
    lists = _ld64(f, LISTS)
    kb = _ld64(f, KB)
    klim = _ld64(f, KLIM)
    ko = _ld64(f, KO)
    nk = _ld64(f, NK)
    kslot = _ld64(f, KSLOT)
    state = _ld64(f, STATE)
    out = (_ld64(f, OUT_TAG), _ld64(f, OUT_V), _ld64(f, OUT_S), _ld64(f, OUT_N))
    out_tag = out[0]
    at = state + 8 * AT
    ends = state + 8 * ENDS
    nslots = _ld64(f, NSLOTS)
    back = np.int64(0)
    for j in range(m):
        r = base + j
        if r + 8 < rows:
            ahead = _ld64(offs, r + 8) + skip
            if 0 <= ahead < size:
                for line in range(6):
                    _prefetch(d + ahead + 64 * line)
        for slot in range(nslots):   # absent until found
            _st64(out_tag, slot * 64 + j, 0)
        st = 0
        if has_bits != 0:
            i = bit0 + r
            if (_ld(bits, i >> 3) >> (i & 7)) & 1 == 0:
                st = 2
        p = _ld64(offs, r) + skip
        end = _ld64(offs, r + 1)
        if p < 0 or end < p or end > size:
            st = 2
        if st == 0:
            st = _locate(d, p, end, at, ends)
        for which in range(2):
            if st != 0:
                break
            if (lists >> which) & 1 == 0:
                continue
            q = _ld64(at, 0 if which == 0 else 3)
            if q < 0:
                continue
            lend = _ld64(ends, 0 if which == 0 else 3)
            first = 0 if which == 0 else N_HEADER
            st, nitems, fp = _list_start(d, q)
            if st != 0:
                break
            if nitems > (N_HEADER if which == 0 else N_PROPERTIES):
                st = 1
                break
            for i in range(nitems):
                if fp < lend and _ld(d, fp) == 0x40:
                    fp += 1
                    continue
                st, tag, v, s, nn, e = _value(d, fp, lend)
                if st != 0:
                    break
                fp = e
                wt = _ld64(want, first + i)
                if wt < 0:
                    continue
                if wt != 0 and tag != wt:
                    st = 1
                    break
                _keep(out, _ld64(slot_of, first + i) * 64 + j, tag, v, s, nn)
            if st == 0 and fp != lend:
                st = 2
        if st == 0 and (lists & APPLICATION_MAP) != 0 and _ld64(at, 4) >= 0:
            mend = _ld64(ends, 4)
            st, entries, mp = _map_start(d, _ld64(at, 4))
            if st == 0 and entries > (mend - mp) >> 1:
                st = 2
            same = entries == _ld64(state, PREV)
            _st64(state, PREV, -1)
            for e_ in range(entries):
                if st != 0:
                    break
                st, kind, ks, kn, ke = _map_key(d, mp, mend, False)
                if st != 0:
                    break
                k = -1
                if same and _ld64(state, PK_N + e_) == kn and _same(
                        d, _ld64(state, PK_S + e_), size, d, ks, size, kn):
                    k = _ld64(state, PK_K + e_)
                else:
                    same = False
                    for kk in range(nk):
                        start = _ld64(ko, kk)
                        if _ld64(ko, kk + 1) - start == kn and _same(kb, start, klim, d, ks,
                                                                    size, kn):
                            k = kk
                            break
                if e_ < MAX_PAIRWISE:
                    _st64(state, PK_S + e_, ks)
                    _st64(state, PK_N + e_, kn)
                    _st64(state, PK_K + e_, k)
                if k < 0:
                    mp = _skip(d, ke, mend)
                    if mp < 0:
                        st = 2
                    continue
                st, tag, v, vs, vn, e = _value(d, ke, mend)
                if st != 0:
                    break
                mp = e
                _keep(out, _ld64(kslot, k) * 64 + j, tag, v, vs, vn)
            if st == 0 and mp != mend:
                st = 2
            if st == 0 and not same:   # no key twice: pair by pair
                if entries > MAX_PAIRWISE:
                    st = 1
                for a in range(entries if st == 0 else 0):
                    na = _ld64(state, PK_N + a)
                    sa = _ld64(state, PK_S + a)
                    for b in range(a):
                        if _ld64(state, PK_N + b) == na and _same(d, sa, size, d,
                                                                 _ld64(state, PK_S + b), size, na):
                            st = 2
                            break
                    if st != 0:
                        break
            if st == 0:
                _st64(state, PREV, entries)
        if st != 0:
            back |= np.int64(1) << j
    return back


_compiled: list[Any] = []
_lock = threading.Lock()


def walker() -> int:
    """The address of the compiled walk (``int64 walk(int64 frame)``), compiled
    on first use and kept on disk by numba."""
    if not _compiled:
        with _lock:
            if not _compiled:
                from numba import cfunc
                _compiled.append(cfunc(types.int64(types.int64), nopython=True, nogil=True,
                                       cache=True)(_walk_word))
    return int(_compiled[0].address)
