"""Columns of raw AMQP-encoded messages: filtered, or turned into message tables.

An archive of raw messages (a Parquet or Kafka export with a binary payload
column) is filtered by decoding, with the numba decoder (``decode/``), only
the sections and keys the filter reads, running the filter's kernels over
that projection, and evaluating the rows the decoder could not decode exactly
(malformed messages among them) from their bytes with the per-message engine,
which also says what is wrong with them.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ..plan.prepared import prepared
from .engine import BatchResult, evaluate
from ..plan.skeleton import fields_read
from ..table.schema import KEYED
from .parallel import rows_of_words, set_verdicts, verdict_array
from . import warmup
from .tiered import tiered


def keys_read(flt: Any) -> tuple[dict[str, list[str]], list[tuple], bool]:
    """The map keys a filter reads, per keyed section, the header and properties
    fields it reads, and whether it reads a body."""
    keys: dict[str, list[str]] = {}
    fields: list[tuple] = []
    body = False
    for section, key in sorted(fields_read(flt.tree), key=repr) if flt.tree is not None else ():
        if section in KEYED and isinstance(key, str):
            keys.setdefault(section, []).append(key)
        elif section in ("header", "properties"):
            fields.append((section, key))
        body |= section == "body"
    return keys, fields, body


def _cells(column: Any) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not (pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)):
        raise TypeError(f"a column of encoded messages is binary, not {column.type}")
    return column


def evaluate_encoded(flt: Any, column: Any, receiving_connection: Any = None, *,
                     walk: bool = True) -> BatchResult:
    """The filter's verdict for every AMQP-encoded message of a binary column:
    evaluated while walking the bytes (``walk.py``) when every atom has a
    byte-level form and ``walk`` is true, else decoded into columns first."""
    cells = _cells(column)
    rc = receiving_connection
    reason = prepared(flt).plan.reason if flt.tree is not None else "no tree"

    def kernel(start: int) -> tuple[pa.BooleanArray, int]:
        result = _by_kernels(flt, cells if not start else cells.slice(start), rc, walk)
        return result.verdicts, result.fallback_rows

    def by_message(lo: int, hi: int) -> list[bool | None]:
        return [None if cell is None else flt.evaluate(cell, rc)
                for cell in cells.slice(lo, hi - lo).to_pylist()]
    def warm() -> None:
        warmup.request_encoded(flt, cells, rc, walk)
    verdicts, held, compiling = tiered(kernel, by_message, len(cells), warm)
    return BatchResult(verdicts, held + compiling, reason, compiling)


def _by_kernels(flt: Any, cells: pa.Array, rc: Any, walk: bool) -> BatchResult:
    if walk and flt.tree is not None:
        from .walk import walked
        ready = prepared(flt)
        lowered = walked(ready, rc)
        if lowered is not None:
            return _walked(flt, ready, lowered, cells, rc)
    return _decoded(flt, cells, rc)


def can_walk(flt: Any, receiving_connection: Any = None) -> bool:
    """Whether ``evaluate_encoded`` evaluates ``flt`` while walking the bytes
    (every atom has a byte-level form: ``walk.py``; a body or an annotation
    has none)."""
    from .walk import walked
    return flt.tree is not None and walked(prepared(flt), receiving_connection) is not None


def _walked(flt: Any, ready: Any, lowered: Any, cells: pa.Array, rc: Any) -> BatchResult:
    """The walking kernel's verdicts; the rows it marks decoded (``_decoded``)."""
    from .walk import run
    out_v, out_k, out_b = run(ready, lowered, cells)
    n = len(cells)
    rows = rows_of_words(out_b)
    rows = rows[rows < n]
    held = 0
    if len(rows):
        rest = _decoded(flt, cells.take(pa.array(rows)), rc)
        set_verdicts(out_v, out_k, rows, rest.verdicts.to_pylist())
        held = rest.fallback_rows
    return BatchResult(verdict_array(n, out_v, out_k), held, None)


def _decoded(flt: Any, cells: pa.Array, receiving_connection: Any) -> BatchResult:
    """The verdicts of the messages decoded into columns, the rows the decoder
    leaves evaluated from their bytes by the per-message engine."""
    from ..table.decode import decode_column
    if flt.tree is None or prepared(flt).plan.shape is None:   # no kernel: every row by bytes
        verdicts = [None if cell is None else flt.evaluate(cell, receiving_connection)
                    for cell in cells.to_pylist()]
        return BatchResult(pa.array(verdicts, pa.bool_()), len(cells),
                           prepared(flt).plan.reason if flt.tree is not None else "no tree")
    keys, fields, body = keys_read(flt)
    decoded = decode_column(cells, keys, body=body, fields=fields, checked=False)
    result = evaluate(flt, decoded.table, receiving_connection)
    rows = np.flatnonzero(decoded.undecoded)
    if not len(rows):
        return result
    values = result.verdicts.fill_null(False).to_numpy(zero_copy_only=False).copy()
    known = result.verdicts.is_valid().to_numpy(zero_copy_only=False).copy()
    for r in rows.tolist():
        cell = cells[r].as_py()
        verdict = None if cell is None else flt.evaluate(cell, receiving_connection)
        values[r], known[r] = verdict is True, verdict is not None
    verdicts = pa.array(values, pa.bool_(), mask=~known)
    return BatchResult(verdicts, result.fallback_rows + len(rows), result.reason)


def decode_for(filters: list[Any], column: Any, *, prefix: int = 0) -> Any:
    """One decoder walk over a column of encoded messages for several filters:
    the union of the keys, fields and bodies they read (``decode_column``),
    each filter then evaluated over the one table (the subscription case)."""
    from ..table.decode import decode_column
    keys: dict[str, list[str]] = {}
    fields: list[tuple] = []
    body = False
    for flt in filters:
        if flt.tree is None:
            continue
        own_keys, own_fields, own_body = keys_read(flt)
        for section, names in own_keys.items():
            keys.setdefault(section, [])
            keys[section] += [k for k in names if k not in keys[section]]
        fields += [f for f in own_fields if f not in fields]
        body |= own_body
    return decode_column(_cells(column), keys, body=body, fields=fields, prefix=prefix,
                         checked=False)


def from_amqp(column: Any, keys: dict[str, list[str]] | None = None) -> pa.Table:
    """A message table of the messages of a binary column (all their keys, or the
    ``keys`` given per keyed section), bodies included. Rows the numba decoder
    leaves to Python are built by ``message_table``; a message that cannot be
    read at all is a ValueError naming its row."""
    from ..table.build import message_table
    from ..table.decode import decode_column
    cells = _cells(column)
    decoded = decode_column(cells, keys, body=True)
    rows = np.flatnonzero(decoded.undecoded)
    if not len(rows):
        return decoded.table
    good = decoded.table.filter(pa.array(~decoded.undecoded))
    try:
        rest = message_table([cells[r].as_py() for r in rows.tolist()],
                             schema=decoded.table.schema)
    except (TypeError, ValueError) as problem:
        raise ValueError(f"rows {rows[:5].tolist()}...: {problem}") from None
    order = np.argsort(np.concatenate([np.flatnonzero(~decoded.undecoded), rows]), kind="stable")
    return pa.concat_tables([good, rest]).take(pa.array(order))
