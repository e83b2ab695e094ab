"""Message tables in Spark's types, and back.

Spark has no unsigned integers and no dictionary arrays, so a message table
crosses into Spark with uint8/16/32 widened to the next signed type, uint64
as decimal(20,0), dictionaries as plain strings and residual columns that hold
nothing left out (``to_spark``), and comes
back into the exact layout (``from_spark``) by a cast to the schema the
layout's own rules give for its keys and children: nothing is approximated
on the way, and the batch engine reads the result as any message table.
"""
from __future__ import annotations

from typing import Any, Sequence

import pyarrow as pa

from ..arrow.schema import METADATA, check_version, message_schema, plan_of

_WIDER = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
          pa.uint64(): pa.decimal128(20, 0)}


def spark_type(typ: pa.DataType) -> pa.DataType:
    """The type Spark can hold for one of the layout's types."""
    if pa.types.is_dictionary(typ):
        return spark_type(typ.value_type)
    if typ in _WIDER:
        return _WIDER[typ]
    if pa.types.is_struct(typ):
        return pa.struct([f.with_type(spark_type(f.type)) for f in typ])
    if pa.types.is_map(typ):
        return pa.map_(spark_type(typ.key_type), spark_type(typ.item_type))
    return typ


def to_spark(table: pa.Table, *, keep_empty_residuals: bool = False) -> pa.Table:
    """A message table in types Spark reads (``createDataFrame``, Parquet for Spark).

    Residual columns that hold nothing (every row null, as in most tables) are
    left out, as a missing residual column reads as one with no entries:
    then no row can need the Arrow UDF for a residual entry, and filters run
    as native expressions alone. Keep them (``keep_empty_residuals``) when
    files written separately must share one schema."""
    check_version(table.schema)
    if not keep_empty_residuals:
        empty = [name for name in table.schema.names if name.endswith("_rest")
                 and table.column(name).null_count == len(table)]
        table = table.drop_columns(empty)
    schema = pa.schema([f.with_type(spark_type(f.type)) for f in table.schema])
    return table.cast(schema)


def from_spark(arrays: Sequence[Any], names: Sequence[str]) -> pa.RecordBatch:
    """Spark's Arrow columns of a message table (some of its columns) as a batch
    of the exact layout."""
    fields = [pa.field(name, array.type) for name, array in zip(names, arrays)]
    batch = pa.RecordBatch.from_arrays(list(arrays), schema=pa.schema(fields, metadata=METADATA))
    canonical = message_schema(*plan_of(_completed(batch.schema)))
    wanted = pa.schema([canonical.field(name) for name in names], metadata=METADATA)
    return batch.cast(wanted)


def _completed(schema: pa.Schema) -> pa.Schema:
    """The schema with the columns ``plan_of`` needs that Spark did not send."""
    fields = list(schema)
    if "properties" not in schema.names:
        fields.append(pa.field("properties", message_schema({}, {}, False)
                               .field("properties").type))
    return pa.schema(fields, metadata=METADATA)
