"""Arrow data in the forms users hold it: tables, batches, and C stream exporters.

A pyarrow ``Table`` or ``RecordBatch`` is read as it is. Anything else that
exports the Arrow C data interface is read through it, without a copy and
without importing its library: ``__arrow_c_stream__`` (a pandas or Polars
DataFrame, a DuckDB relation, a ``RecordBatchReader``, a nanoarrow stream) is
read batch by batch, so a stream larger than memory is evaluated in bounded
memory; ``__arrow_c_array__`` (a struct array exporter) is one batch.
"""
from __future__ import annotations

from typing import Iterator, Protocol, Union

import pyarrow as pa


class ArrowStreamExporter(Protocol):
    """An object exporting an Arrow C stream (the PyCapsule interface)."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...


class ArrowArrayExporter(Protocol):
    """An object exporting one Arrow C array (and its schema)."""

    def __arrow_c_array__(self, requested_schema: object | None = None
                          ) -> tuple[object, object]: ...


ArrowData = Union[pa.Table, pa.RecordBatch, ArrowStreamExporter, ArrowArrayExporter]
"""What a batch entry point takes: a pyarrow Table or RecordBatch, or an Arrow
C stream or array exporter."""


def _describe(data: object) -> str:
    return f"{type(data).__module__}.{type(data).__qualname__}"


def record_batches(data: ArrowData) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The schema of ``data`` and its record batches, read lazily from a stream.
    A ``TypeError`` names what else ``data`` is."""
    if isinstance(data, pa.Table):
        return data.schema, iter(data.to_batches())
    if isinstance(data, pa.RecordBatch):
        return data.schema, iter([data])
    if hasattr(data, "__arrow_c_stream__"):
        try:
            reader = pa.RecordBatchReader.from_stream(data)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise TypeError(f"{_describe(data)} exports an Arrow stream that cannot be "
                            f"read as record batches: {exc}") from None
        return reader.schema, iter(reader)
    if hasattr(data, "__arrow_c_array__"):
        try:
            batch = pa.record_batch(data)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise TypeError(f"{_describe(data)} exports an Arrow array that is not a "
                            f"record batch (a struct array): {exc}") from None
        return batch.schema, iter([batch])
    raise TypeError(f"a table is a pyarrow Table or RecordBatch, or an object exporting "
                    f"the Arrow C stream interface (__arrow_c_stream__: pandas, Polars, "
                    f"DuckDB, a RecordBatchReader), not {_describe(data)}")


def as_table(data: ArrowData) -> pa.Table | pa.RecordBatch:
    """``data`` whole, as a pyarrow Table (or the RecordBatch it is)."""
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return data
    schema, batches = record_batches(data)
    return pa.Table.from_batches(list(batches), schema=schema)


__all__ = ["ArrowArrayExporter", "ArrowData", "ArrowStreamExporter", "as_table",
           "record_batches"]
