"""Message tables in Spark's types, and back.

Spark has no unsigned integers and no dictionary arrays, so a message table
crosses into Spark with uint8/16/32 widened to the next signed type, uint64
as decimal(20,0), dictionaries as plain strings and residual columns that hold
nothing left out (``to_spark``), and comes
back into the exact layout (``from_spark``) by a cast to the schema the
layout's own rules give for its keys and children: nothing is approximated
on the way, and the batch engine reads the result as any message table.

The DataFrames that become message tables by one ``mapInArrow`` (Kafka and
Event Hubs records, ``connectors.py``; AMQP-encoded messages, ``binary.py``)
share its output types (``arrow_for_spark``), its columns that hold nothing,
the checked ``keep`` columns and the marks of what could not be read.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from ..table.schema import METADATA, TIMESTAMP_MS, check_version, message_schema, plan_of
from . import kernels
from .workers import use_this_python

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


# --- message tables made by mapInArrow (connectors.py, binary.py) ------------------------------

UNREADABLE = -1
"""The tag of a value that could not be decoded: unknown for filters reading it."""
NOT_A_VALUE = b""
"""A residual value that is no AMQP value: reading the section fails (unknown)."""
SPARK_TIMESTAMP = pa.timestamp("us", tz="UTC")
"""Spark's TimestampType in Arrow."""
SPARK_MAX_MS = ((1 << 63) - 1) // 1000
"""Spark holds microseconds in a long: a timestamp past +-SPARK_MAX_MS ms (year 294247) has
no TimestampType value."""
LAYOUT_NAMES = frozenset({"header", "delivery_annotations", "message_annotations",
                          "properties", "application_properties", "footer", "amqp_value",
                          "amqp_sequence", "connection"})


def arrow_for_spark(typ: pa.DataType) -> pa.DataType:
    """The layout type as Spark holds it, timestamps in microseconds (mapInArrow)."""
    typ = spark_type(typ)
    if typ == TIMESTAMP_MS:
        return SPARK_TIMESTAMP
    if pa.types.is_struct(typ):
        return pa.struct([f.with_type(arrow_for_spark(f.type)) for f in typ])
    return typ


def empty_column(typ: pa.DataType, n: int) -> pa.Array:
    """A column with nothing in it: absent VALUEs (tag 0), nulls elsewhere."""
    if pa.types.is_struct(typ) and typ.num_fields and typ.field(0).name == "t":
        return pa.StructArray.from_arrays(
            [pa.array(np.zeros(n, np.int8))] + [pa.nulls(n, f.type) for f in list(typ)[1:]],
            fields=list(typ))
    if pa.types.is_struct(typ):
        return pa.StructArray.from_arrays([empty_column(f.type, n) for f in typ],
                                          fields=list(typ))
    return pa.nulls(n, typ)


def kept_columns(df: Any, keep: Sequence[str] | None) -> list[str]:
    """The input columns to pass through, checked: present, and not named like a
    message table column."""
    keep = list(dict.fromkeys(keep or []))
    for name in keep:
        if name not in df.columns:
            raise ValueError(f"keep: the DataFrame has no column {name!r}")
        if name in LAYOUT_NAMES or name.endswith("_rest"):
            raise ValueError(f"keep: {name!r} is a message table column name")
    return keep


def map_in_arrow(df: Any, inputs: list[str], layout: list[pa.Field], keep: list[str],
                 convert: Callable[[pa.RecordBatch], dict[str, pa.Array]]) -> Any:
    """``convert`` over every batch of ``df[inputs + keep]``: the layout's columns it
    does not give are empty; kept columns are passed through."""
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StructType
    spark_schema = StructType(list(from_arrow_schema(pa.schema(layout)).fields)
                              + [df.schema[name] for name in keep])

    carried = kernels.shipped()   # the driver's compiled kernels, for a fresh executor

    def batches(iterator: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        kernels.install(carried)
        for batch in iterator:
            given = convert(batch)
            arrays = [given[f.name] if f.name in given else empty_column(f.type, batch.num_rows)
                      for f in layout] + [batch.column(name) for name in keep]
            fields = layout + [batch.schema.field(name) for name in keep]
            yield pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
    names = dict.fromkeys(inputs + keep)
    selected = df.select(*["`" + name.replace("`", "``") + "`" for name in names])
    use_this_python(df.sparkSession)
    return selected.mapInArrow(batches, spark_schema)
