"""Small compiled passes over a batch's columns (numba, cached on disk with this file).

They serve the batch engine's per-batch decisions: which tags a column holds
(``histogram``) and the distinct values of the rows of one tag (``gather``),
so an atom the kernel cannot compute from constants is answered once per
distinct value present, by the per-message engine.
"""
from __future__ import annotations

import numpy as np
from .jit import njit


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
