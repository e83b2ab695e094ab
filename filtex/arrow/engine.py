"""The batch engine: any filter over a message table, kernels where they exist.

``evaluate(filter, data)`` reads the data batch by batch (a Table, a batch or
an Arrow C stream: ``table/sources.py``), plans the filter once
(``plan/prepared.py``), and hands each batch to a kernel engine (``ENGINES``:
the fused kernel of the filter's signature, ``fused.py``, or the pass-per-atom
engine it is checked against, ``passes.py``), which takes each atom's
decisions per type tag from the plan (``plan/atoms.py``) and evaluates the
rows its kernel hands back (residual entries, tags whose values it cannot
read, tables whose tags and children disagree) with the per-message engine
over row views. A filter with no kernel form runs row by row. The result says
how many rows took the per-message path, and why when the whole filter did.

A table may come from a stranger: each batch is first cut down to the columns
and struct members the filter reads, and each of them validated by Arrow
(``guard.sound``: sizes and lengths, no values read). A batch where one of
them is broken (a child shorter than its struct, a buffer too small, a
section that is not a struct, a key twice) cannot be read at all: every row
is unknown. Values are checked where they are read (``columns.py``,
``rows.py``): a malformed row is unknown.
"""
from __future__ import annotations

from typing import Any, Iterator, Literal, Mapping, NamedTuple, TypedDict, Unpack

import numpy as np
import pyarrow as pa

from ..plan.prepared import prepared
from ..table import guard
from ..table.schema import METADATA_KEY, check_version
from ..table.sources import ArrowData, as_table, record_batches
from ..tree.compiled import CompiledFilter
from . import fused, passes, warmup
from .row_path import row_by_row
from .tiered import tiered



class BatchOptions(TypedDict, total=False):
    """The keyword options of ``evaluate_batch`` and ``filter_table``: how a flat
    table's columns map to fields (``filtex.arrow``), and threads per batch."""
    mapping: Mapping[str, str | tuple[str, str]] | None
    nulls: Literal["absent", "null"]
    threads: int


class BatchResult(NamedTuple):
    """A filter's verdicts over a table: ``verdicts`` is true, false or null
    (unknown) per row; ``fallback_rows`` counts the rows the per-message engine
    evaluated, of which ``compiling_rows`` while the kernels compiled in the
    background (``tiered.py``); ``reason`` says why the filter has no kernel
    form (None when it has one)."""
    verdicts: pa.BooleanArray
    fallback_rows: int
    reason: str | None = None
    compiling_rows: int = 0

    @property
    def kernel(self) -> bool:
        return self.reason is None


def _batches(data: ArrowData, mapping: Any, nulls: str) -> Iterator[pa.RecordBatch]:
    """The message table batches of ``data`` (read lazily from an Arrow stream);
    a flat table (no message table metadata, or a ``mapping`` given) is laid
    out as one first (``flat.py``)."""
    schema, batches = record_batches(data)
    meta = schema.metadata or {}
    if mapping is not None or METADATA_KEY not in meta:
        from ..table.flat import message_batch_of
        return (message_batch_of(b, mapping, nulls=nulls) for b in batches)
    check_version(schema)
    return batches


ENGINES = {"fused": fused.evaluate_batch, "passes": passes.evaluate_batch}
"""The kernel engines: one fused kernel per filter signature (the default), and
the pass-per-atom engine it is checked against."""


def evaluate(flt: CompiledFilter, data: ArrowData,
             receiving_connection: object = None,
             *, mapping: Mapping[str, str | tuple[str, str]] | None = None,
             nulls: Literal["absent", "null"] = "absent", threads: int = 1,
             engine: Literal["fused", "passes"] = "fused") -> BatchResult:
    """The filter's verdict for every row of a message table, or of a flat table
    whose columns are fields (``mapping``, ``nulls``: see ``flat.py``), given as
    a pyarrow Table or RecordBatch or any Arrow C stream (``table/sources.py``:
    pandas, Polars, DuckDB, a ``RecordBatchReader``; read batch by batch). ``threads``
    splits large batches among that many threads (the kernels release the GIL;
    1 by default, as in a Spark task or a broker already using its cores).
    ``engine`` chooses the kernel engine (``ENGINES``); both give the same
    verdicts, row by row."""
    run = ENGINES[engine]
    batches = _batches(data, mapping, nulls)
    ready = prepared(flt)
    parts, held, compiling = [], 0, 0
    rc = receiving_connection
    for batch in batches:
        batch, broken = _narrow(batch, ready.columns)
        if broken is not None:   # nothing of it can be read: every row is unknown
            parts.append(pa.nulls(batch.num_rows, pa.bool_()))
        elif ready.plan.shape is None:
            verdicts = row_by_row(flt, batch, np.arange(batch.num_rows), rc)
            parts.append(pa.array(verdicts, pa.bool_()))
            held += batch.num_rows
        else:
            def kernel(start: int, batch: pa.RecordBatch = batch) -> tuple[pa.BooleanArray, int]:
                part = batch if not start else batch.slice(start)
                return run(flt, ready, part, rc, threads)

            def by_message(lo: int, hi: int, batch: pa.RecordBatch = batch) -> list[bool | None]:
                return row_by_row(flt, batch, np.arange(lo, hi), rc)
            def warm(batch: pa.RecordBatch = batch) -> None:
                warmup.request_table(flt, batch, rc, threads)
            verdicts, count, waited = tiered(kernel, by_message, batch.num_rows, warm)
            parts.append(verdicts)
            held += count + waited
            compiling += waited
    if not parts:
        verdicts = pa.array([], pa.bool_())
    elif len(parts) == 1:
        verdicts = parts[0]
    else:
        verdicts = pa.concat_arrays(parts)
    return BatchResult(verdicts, held, ready.plan.reason, compiling)


def _narrow(batch: pa.RecordBatch, columns: dict[str, set | None] | None
            ) -> tuple[pa.RecordBatch, str | None]:
    """The batch with only the columns, and struct members, a filter reads (all
    when ``columns`` is None), each validated by Arrow; and why it cannot be
    read at all (None when it can). Row views of it read exactly what the
    filter would read of the whole row."""
    n = batch.num_rows
    arrays, fields = [], []
    for index, field in enumerate(batch.schema):
        if columns is not None and field.name not in columns:
            continue
        array = batch.column(index)
        wanted = None if columns is None else columns[field.name]
        if len(array) != n:
            return batch, f"column {field.name!r} is not as long as the batch"
        if wanted is not None:   # a section: a struct, of which some members
            if not pa.types.is_struct(field.type):
                return batch, f"column {field.name!r} is {field.type}, not a struct"
            array, why = _members(array, field.name, wanted)
            if why is not None:
                return batch, why
            if array is None:
                continue
            field = field.with_type(array.type)
        else:
            why = guard.sound(array)
            if why is not None:
                return batch, f"column {field.name!r}: {why}"
        arrays.append(array)
        fields.append(field)
    if not arrays:   # a filter that reads nothing: a column keeps the row count
        arrays, fields = [pa.nulls(n, pa.null())], [pa.field("none", pa.null())]
    return pa.RecordBatch.from_arrays(
        arrays, schema=pa.schema(fields, metadata=batch.schema.metadata)), None


def _members(array: pa.Array, name: str, wanted: set) -> tuple[pa.Array | None, str | None]:
    """The members ``wanted`` of a struct column, each validated by Arrow (None
    when it has none of them), or why they cannot be read."""
    typ = array.type
    names = [typ.field(i).name for i in range(typ.num_fields)]
    keep = [i for i, member in enumerate(names) if member in wanted]
    if not keep:
        return None, None
    twice = next((names[i] for i in keep if names.count(names[i]) > 1), None)
    if twice is not None:
        return None, f"column {name!r} has the key {twice!r} twice"
    bitmap = array.buffers()[0]
    if bitmap is not None and bitmap.size * 8 < array.offset + len(array):
        return None, f"column {name!r}: its validity bitmap is too small"
    children = []
    for i in keep:
        child = array.field(i)
        why = ("shorter than the column" if len(child) != len(array)
               else guard.sound(child))
        if why is not None:
            return None, f"column {name!r}, key {names[i]!r}: {why}"
        children.append(child)
    narrowed = pa.StructArray.from_arrays(
        children, fields=[typ.field(i) for i in keep],
        mask=array.is_null() if array.null_count else None)
    return narrowed, None


def evaluate_batch(flt: CompiledFilter, data: ArrowData,
                   receiving_connection: object = None,
                   **options: Unpack[BatchOptions]) -> pa.BooleanArray:
    """True, false or null (unknown) per row."""
    return evaluate(flt, data, receiving_connection, **options).verdicts


def filter_table(flt: CompiledFilter, table: ArrowData,
                 receiving_connection: object = None,
                 **options: Unpack[BatchOptions]) -> pa.Table:
    """The rows the filter matches (true; false and unknown are dropped), as they
    are in ``table`` (a flat table stays flat). A matching row that cannot be
    copied (a column the filter does not read whose offsets lie there) is a
    ``ValueError`` naming it, never a read out of bounds. An Arrow stream is
    read whole (the rows kept are a table)."""
    table = as_table(table)
    verdicts = evaluate(flt, table, receiving_connection, **options).verdicts
    rows = np.flatnonzero(verdicts.fill_null(False).to_numpy(zero_copy_only=False))
    why = guard.uncopyable(table, rows)
    if why is not None:
        raise ValueError(f"a matching row cannot be copied: {why}")
    try:
        return table.filter(verdicts)
    except pa.ArrowNotImplementedError as exc:   # a type pyarrow cannot take (views in structs)
        raise ValueError(f"the matching rows cannot be copied: {exc}") from None
