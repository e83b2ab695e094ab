"""Kernels when they are ready, the per-message engine until then.

Every entry of the batch engine (a message table, a column of encoded
messages) runs its kernels under ``tiers.background()``: a kernel not yet
compiled raises ``NotReady`` before any row is answered, the compile goes on in
the background compiler, and the rows are answered by the per-message engine
a chunk at a time; between chunks, once the compiler has finished something,
the kernels are tried again on the rest. Verdicts are the same either way
(the engines are checked against each other); ``BatchResult.compiling_rows``
counts the rows answered while kernels compiled.
"""
from __future__ import annotations

from typing import Callable

import pyarrow as pa

from ..codegen import tiers

CHUNK_ROWS = 4096
"""Rows answered by the per-message engine between two looks at the compiler:
a few milliseconds of work, so a kernel is used soon after it is ready."""

Kernel = Callable[[int], tuple[pa.BooleanArray, int]]
"""The kernels' (verdicts, rows they handed to the per-message engine) for the
rows from a start to the end; raises ``NotReady``."""
ByMessage = Callable[[int, int], list[bool | None]]
"""The per-message engine's verdicts for rows lo..hi."""


def tiered(kernel: Kernel, by_message: ByMessage, n: int,
           warm: Callable[[], None]) -> tuple[pa.BooleanArray, int, int]:
    """(verdicts, rows the kernels handed back, rows answered while compiling)
    for rows 0..n: by ``kernel`` when its kernels are ready, else by
    ``by_message`` until they are; ``warm`` hands the background compiler a
    sample to compile every kernel of the chain from (``warmup.py``)."""
    with tiers.background():
        try:
            verdicts, held = kernel(0)
            return verdicts, held, 0
        except tiers.NotReady:
            warm()
    parts: list[pa.Array] = []
    start = held = 0
    seen = tiers.progress()
    while start < n:
        if tiers.progress() != seen:   # something compiled: the kernels may be ready
            seen = tiers.progress()
            with tiers.background():
                try:
                    verdicts, held = kernel(start)
                    parts.append(verdicts)
                    break
                except tiers.NotReady:
                    pass
        stop = min(n, start + CHUNK_ROWS)
        parts.append(pa.array(by_message(start, stop), pa.bool_()))
        start = stop
    compiling = start
    if not parts:
        return pa.array([], pa.bool_()), held, compiling
    return (parts[0] if len(parts) == 1 else pa.concat_arrays(parts)), held, compiling
