"""Plain-text predicates on encoded string bytes, for kernels that read messages in place.

A string in an AMQP message is its UTF-8 bytes (checked by ``decode.primitives._value``
before any predicate sees them). UTF-8 orders strings as their code points do and never
matches a character inside another, so the text forms (``plan/text.py``: comparison with a
string, IN, LIKE of literal segments and ``%``) are byte comparisons and byte searches.
Constants are the UTF-8 of the filter's strings, ``tb`` split by the offsets ``to``; every
function takes addresses (``arr.ctypes.data``), as the decoder's primitives do.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np
from llvmlite import ir as llvm_ir
from numba import types
from numba.core.extending import intrinsic

from ..codegen.jit import njit
from ..table.decode.primitives import _intp, _ld, _ld64, _same

_INLINE = "always"


@njit(cache=True, inline=_INLINE)
def text_compare(d, s, n, limit, tb, a, b, tlimit):
    """-1, 0 or 1: the ``n`` bytes at ``d + s`` against constant bytes ``a .. b`` of ``tb``."""
    m = b - a
    k = min(n, m)
    for i in range(k):
        x = _ld(d, s + i)
        y = _ld(tb, a + i)
        if x != y:
            return -1 if x < y else 1
    if n == m:
        return 0
    return -1 if n < m else 1


@njit(cache=True, inline=_INLINE)
def text_in(d, s, n, limit, tb, to, count, tlimit):
    """The bytes equal one of the ``count`` constants (offsets at address ``to``)."""
    for k in range(count):
        a = _ld64(to, k)
        if _ld64(to, k + 1) - a == n and _same(d, s, limit, tb, a, tlimit, n):
            return True
    return False


def _like(d, s, n, limit, tb, to, count, tlimit):
    """LIKE of ``count`` literal segments joined by ``%``: the first at the start, the
    last at the end, the others found leftmost in order between them (greedy
    leftmost matching is exact when every wildcard is ``%``)."""
    a = _ld64(to, 0)
    first = _ld64(to, 1) - a
    if count == 1:
        return first == n and _same(d, s, limit, tb, a, tlimit, n)
    z = _ld64(to, count - 1)
    last = _ld64(to, count) - z
    if first + last > n:
        return False
    if not _same(d, s, limit, tb, a, tlimit, first):
        return False
    if not _same(d, s + n - last, limit, tb, z, tlimit, last):
        return False
    p = s + first
    stop = s + n - last
    for k in range(1, count - 1):
        c = _ld64(to, k)
        m = _ld64(to, k + 1) - c
        if m == 0:
            continue
        found = -1
        q = p
        while q + m <= stop:
            if _ld(d, q) == _ld(tb, c) and _same(d, q, limit, tb, c, tlimit, m):
                found = q
                break
            q += 1
        if found < 0:
            return False
        p = found + m
    return True


@njit(cache=True, inline=_INLINE)
def as_double(v):
    """A double from its bits (``_value`` gives a float's and a double's as int64)."""
    return np.int64(v).view(np.float64)



@intrinsic
def call_text(typingctx, fn, d, s, n, limit, tb, to, count, tlimit):
    """``fn(d, s, n, limit, tb, to, count, tlimit)`` for the address ``fn`` of a C
    function of eight int64 arguments returning int64."""
    def codegen(context, builder, sig, args):
        i64 = llvm_ir.IntType(64)
        fnty = llvm_ir.FunctionType(i64, [i64] * 8)
        ptr = builder.inttoptr(_intp(context, builder, args[0], sig.args[0]), fnty.as_pointer())
        return builder.call(ptr, [context.cast(builder, a, t, types.int64)
                                  for a, t in zip(args[1:], sig.args[1:])])
    return types.int64(fn, d, s, n, limit, tb, to, count, tlimit), codegen


_compiled: list[Any] = []
_lock = threading.Lock()


def like_function() -> int:
    """The address of ``_like`` compiled as a C function (once, kept on disk by
    numba): a LIKE's search loops, called by the walking kernels rather than
    compiled into each of them."""
    if not _compiled:
        with _lock:
            if not _compiled:
                from numba import cfunc
                signature = types.int64(*([types.int64] * 8))
                _compiled.append(cfunc(signature, nopython=True, nogil=True,
                                       cache=True)(_like))
    return int(_compiled[0].address)
