"""Splitting a batch among threads, and the argument hygiene numba needs."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyarrow as pa

from ..codegen import tiers

PARALLEL_ROWS = 1 << 18
"""A batch is split among threads only past this many rows a thread."""


def readonly(array: np.ndarray) -> np.ndarray:
    """One array type per argument (numba compiles per signature)."""
    if array.flags.writeable:
        array = array.view()
        array.flags.writeable = False
    return array


def in_parallel(rows: Callable[[int, int], int], n: int, threads: int) -> int:
    """``rows(lo, hi)`` over 0..n in ``threads`` ranges at once (the kernels
    release the GIL), each range but the last a multiple of 64 rows (bitmaps
    stay word-aligned), summing what they return."""
    threads = max(1, min(threads, n // PARALLEL_ROWS))
    if threads == 1:
        return rows(0, n)
    from concurrent.futures import ThreadPoolExecutor
    step = ((n + threads - 1) // threads + 63) & ~63
    bounds = [(lo, min(lo + step, n)) for lo in range(0, n, step)]
    each = tiers.in_context(rows)   # the compile mode goes with each thread
    with ThreadPoolExecutor(len(bounds)) as pool:
        return sum(pool.map(lambda b: each(*b), bounds))


def rows_of_words(words: np.ndarray) -> np.ndarray:
    """The rows whose bit is set in a bitmap of 64-bit words."""
    hit = np.flatnonzero(words)
    if not len(hit):
        return np.zeros(0, np.int64)
    bits = np.unpackbits(words[hit].view(np.uint8), bitorder="little").reshape(-1, 64)
    w, j = np.nonzero(bits)
    return (hit[w].astype(np.int64) << 6) + j


def set_bits(words: np.ndarray, rows: np.ndarray) -> None:
    """Set the bits of ``rows`` in a bitmap (any integer view)."""
    bits = words.view(np.uint8)
    np.bitwise_or.at(bits, rows >> 3, (1 << (rows & 7)).astype(np.uint8))


def set_verdicts(out_v: np.ndarray, out_k: np.ndarray, rows: np.ndarray,
                 verdicts: list[bool | None]) -> None:
    """Rows' verdicts (True, False or None: unknown) into a value and a known bitmap."""
    set_bits(out_k, rows[np.array([v is not None for v in verdicts], bool)])
    set_bits(out_v, rows[np.array([v is True for v in verdicts], bool)])


def verdict_array(n: int, out_v: np.ndarray, out_k: np.ndarray) -> pa.BooleanArray:
    """The BooleanArray of ``n`` verdicts whose value and validity bitmaps these are."""
    return pa.BooleanArray.from_buffers(pa.bool_(), n, [pa.py_buffer(out_k),
                                                        pa.py_buffer(out_v)])


def bit_of(words: Any, rows: np.ndarray) -> np.ndarray:
    """bool per row of ``rows``: its bit in a bitmap."""
    bits = np.asarray(words).view(np.uint8)
    found: np.ndarray = ((bits[rows >> 3] >> (rows & 7)) & 1).astype(bool)
    return found
