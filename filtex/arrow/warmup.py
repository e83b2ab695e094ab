"""Warm-up jobs: a sample of an input, run by the background compiler.

When the batch engine meets ``NotReady`` it hands the background compiler a
sample of what it was given (``SAMPLE_ROWS`` rows of the batch, cells of the
column, frames of the file, spread over it) with the filters, and the compiler runs the
same entry on it with waiting kernels (``tiers.warm``): every kernel of the
chain (the decoder's passes, the walker, the string scans, each filter's
fused kernel) compiles with the signatures the real input needs, in one job.
A kernel the sample did not reach is asked for on its own when the input
needs it (``tiers.request``). The jobs themselves are ``jobs.py``'s.
"""
from __future__ import annotations

import hashlib
import pickle
from typing import Any

import numpy as np
import pyarrow as pa

from ..codegen import tiers
from ..codegen.jit import cache_directory

SAMPLE_ROWS = 8192
"""Rows of a sample, spread evenly over the input: enough that the layouts a
few rows have (a section most messages lack) are in it, so the job compiles
what they need too; a few hundred kilobytes to pickle."""


def _sample(data: Any, n: int) -> Any:
    """Up to ``SAMPLE_ROWS`` rows of a batch or array, spread evenly."""
    if n <= SAMPLE_ROWS:
        return data
    return data.take(pa.array(np.linspace(0, n - 1, SAMPLE_ROWS).astype(np.int64)))


def _key(kind: str, *parts: Any) -> tuple[str, str]:
    """A job's key: what it runs on (the filters' recipes, the layout)."""
    try:
        data = pickle.dumps(parts)
    except Exception:
        data = repr(parts).encode("utf-8", "surrogatepass")
    return kind, hashlib.sha256(data).hexdigest()


def _picklable(value: Any) -> Any:
    """``value`` if it can travel to the compiler, else None (a receiving
    connection that cannot: the sample is run without it)."""
    try:
        pickle.dumps(value)
        return value
    except Exception:
        return None


def _warm(kind: str, key: tuple[Any, ...], *args: Any) -> None:
    tiers.warm(str(cache_directory()), _key(kind, *key), f"filtex.arrow.jobs:{kind}", *args)


def request_table(flt: Any, batch: pa.RecordBatch, rc: Any, threads: int) -> None:
    """Warm the kernels ``engine.evaluate`` runs for ``flt`` on ``batch``."""
    rc = _picklable(rc)
    _warm("table", (flt, rc, batch.schema.to_string()),
          flt, _sample(batch, batch.num_rows), rc, threads)


def request_encoded(flt: Any, cells: pa.Array, rc: Any, walk: bool) -> None:
    """Warm the kernels ``binary.evaluate_encoded`` runs for ``flt``."""
    rc = _picklable(rc)
    _warm("encoded", (flt, rc, walk, str(cells.type)),
          flt, _sample(cells, len(cells)), rc, walk)


def request_frames(filters: list[Any], cells: pa.Array, prefix: int) -> None:
    """Warm the decoder and kernels ``filtex match`` runs over framed files."""
    _warm("frames", (filters, prefix, str(cells.type)),
          filters, _sample(cells, len(cells)), prefix)
