"""The warm-up jobs the background compiler runs (``warmup.py`` asks for them
by name): each entry of the batch engine on a sample, kernels waited for."""
from __future__ import annotations

from typing import Any

import pyarrow as pa


def table(flt: Any, batch: pa.RecordBatch, rc: Any, threads: int) -> None:
    from .engine import evaluate
    evaluate(flt, batch, rc, threads=threads)


def encoded(flt: Any, cells: pa.Array, rc: Any, walk: bool) -> None:
    from .binary import evaluate_encoded
    evaluate_encoded(flt, cells, rc, walk=walk)


def frames(filters: list[Any], cells: pa.Array, prefix: int) -> None:
    from .binary import decode_for
    from .engine import evaluate
    decoded = decode_for(filters, cells, prefix=prefix)
    for flt in filters:
        evaluate(flt, decoded.table)
