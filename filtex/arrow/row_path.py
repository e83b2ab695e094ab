"""The per-message engine over the rows a kernel handed back."""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ..table.rows import Malformed, read_rows


def row_by_row(flt: Any, batch: pa.RecordBatch, rows: np.ndarray, rc: Any) -> list[bool | None]:
    """The per-message engine on some rows of a (narrowed) batch; a row that
    cannot be read is unknown."""
    evaluate = flt.evaluate
    out: list[bool | None] = []
    for view in read_rows(batch, rows):
        if isinstance(view, Malformed):
            out.append(None)
            continue
        try:
            out.append(evaluate(view, rc))
        except Exception:   # the per-message function does not raise; if it did: unknown
            out.append(None)
    return out
