"""Flat tables users already have: plain columns as message fields.

A Parquet export of events has one column per property (``region: string``,
``total: int64``), not the message table's tagged structs. ``message_table_of``
lays such a batch out as a message table without copying values: each column
becomes a VALUE struct whose tag is the one AMQP type the column's Arrow type
stands for (``TYPE_TAGS``), so filters read it exactly as they read messages
whose properties have those types. A null cell is an absent field by default
(``nulls="null"``: present with a null value; only ``EXISTS`` and property
filters tell the two apart).

``mapping`` says which field each column is: ``{column: key}`` for an
application property named ``key``, ``{column: (section, key)}`` for any
section (``("header", "priority")``, ``("properties", "subject")``,
``("message_annotations", "x-opt-k")``). Without it every column is the
application property of its own name.
"""
from __future__ import annotations

from typing import Any, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from .schema import (BINARY, BOOLEAN, BYTE, DOUBLE, FLOAT, HEADER_TYPES, INT, LONG,
                     METADATA, PROPERTIES_TYPES, SECTION_COLUMNS, SHORT, STRING, STRINGS,
                     TIMESTAMP, TIMESTAMP_MS, UBYTE, UINT, ULONG, USHORT, VALUE_FIELDS,
                     header_type, properties_type, rest_column, value_type, REST_TYPE)

TYPE_TAGS: dict[Any, tuple[int, str, pa.DataType]] = {
    pa.bool_(): (BOOLEAN, "b", pa.bool_()),
    pa.int8(): (BYTE, "i", pa.int64()), pa.int16(): (SHORT, "i", pa.int64()),
    pa.int32(): (INT, "i", pa.int64()), pa.int64(): (LONG, "i", pa.int64()),
    pa.uint8(): (UBYTE, "i", pa.int64()), pa.uint16(): (USHORT, "i", pa.int64()),
    pa.uint32(): (UINT, "i", pa.int64()), pa.uint64(): (ULONG, "u", pa.uint64()),
    pa.float32(): (FLOAT, "f", pa.float64()), pa.float64(): (DOUBLE, "f", pa.float64()),
    pa.string(): (STRING, "s", STRINGS), pa.large_string(): (STRING, "s", STRINGS),
    pa.binary(): (BINARY, "x", pa.binary()), pa.large_binary(): (BINARY, "x", pa.binary()),
}
"""Arrow type -> (AMQP type tag, VALUE child, child type). A timestamp of any
unit is an AMQP timestamp in milliseconds (finer units must be whole ms); a
dictionary of strings is a string."""


def _tag_of(typ: pa.DataType, column: str) -> tuple[int, str, pa.DataType]:
    if pa.types.is_dictionary(typ) and (pa.types.is_string(typ.value_type)
                                        or pa.types.is_large_string(typ.value_type)):
        return STRING, "s", STRINGS
    if pa.types.is_timestamp(typ):
        return TIMESTAMP, "i", pa.int64()
    found = TYPE_TAGS.get(typ)
    if found is None:
        raise ValueError(f"column {column!r} is {typ}: no AMQP type stands for it "
                         f"(supported: {', '.join(sorted({str(t) for t in TYPE_TAGS}))}, "
                         "timestamps and dictionary strings)")
    return found


def _child(array: pa.Array, typ: pa.DataType, child_type: pa.DataType, column: str) -> pa.Array:
    try:
        if pa.types.is_timestamp(typ):
            return array.cast(pa.timestamp("ms", typ.tz), safe=True).cast(pa.int64())
        if child_type == STRINGS:
            if pa.types.is_dictionary(typ):
                return array.cast(STRINGS)
            return pc.dictionary_encode(array.cast(pa.string()))
        return array.cast(child_type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"column {column!r} cannot be read as its AMQP type: {exc}") from None


def _value(array: pa.Array, column: str, nulls: str) -> pa.StructArray:
    tag, child, child_type = _tag_of(array.type, column)
    missing = 1 if nulls == "null" else 0
    tags = pc.if_else(array.is_valid(), pa.scalar(tag, pa.int8()), pa.scalar(missing, pa.int8()))
    values = _child(array, array.type, child_type, column)
    return pa.StructArray.from_arrays([tags, values], fields=list(value_type({child})))


def _typed(array: pa.Array, section: str, key: str, column: str) -> pa.Array:
    """A header or properties field: cast, exactly, to the field's AMQP type."""
    typ = (HEADER_TYPES if section == "header" else PROPERTIES_TYPES)[key][1]
    try:
        if typ == TIMESTAMP_MS and pa.types.is_timestamp(array.type):
            return array.cast(pa.timestamp("ms", array.type.tz), safe=True).cast(typ)
        return array.cast(typ, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"column {column!r} cannot be {section} field {key!r} "
                         f"({typ}): {exc}") from None


def _targets(schema: pa.Schema, mapping: Mapping | None) -> dict[str, tuple[str, str]]:
    if mapping is None:
        return {name: ("application_properties", name) for name in schema.names}
    targets = {}
    for column, target in mapping.items():
        if column not in schema.names:
            raise ValueError(f"mapping names column {column!r}, which the table does not "
                             f"have (it has {', '.join(map(repr, schema.names[:10]))})")
        section, key = (("application_properties", target) if isinstance(target, str)
                        else tuple(target))
        if section not in SECTION_COLUMNS:
            raise ValueError(f"mapping of {column!r}: {section!r} is not a section "
                             f"({', '.join(SECTION_COLUMNS)})")
        if section in ("header", "properties") and key not in {**HEADER_TYPES,
                                                               **PROPERTIES_TYPES}:
            raise ValueError(f"mapping of {column!r}: {section} has no typed field {key!r}")
        targets[column] = (section, key)
    return targets


def message_batch_of(batch: pa.RecordBatch, mapping: Mapping | None = None, *,
                     nulls: str = "absent") -> pa.RecordBatch:
    """One flat record batch laid out as a message table batch (no values copied
    but strings, which become dictionaries)."""
    if nulls not in ("absent", "null"):
        raise ValueError(f"nulls is 'absent' or 'null', not {nulls!r}")
    n = batch.num_rows
    targets = _targets(batch.schema, mapping)
    by_section: dict[str, dict[str, pa.Array]] = {s: {} for s in SECTION_COLUMNS}
    for column, (section, key) in targets.items():
        array = batch.column(column)
        if key in by_section[section]:
            raise ValueError(f"two columns are {section} {key!r}")
        if section in ("header", "properties") and key not in VALUE_FIELDS:
            by_section[section][key] = _typed(array, section, key, column)
        else:
            by_section[section][key] = _value(array, column, nulls)
    arrays, fields = [], []
    for section in SECTION_COLUMNS:
        given = by_section[section]
        if section in ("header", "properties"):
            typ = header_type() if section == "header" else properties_type(
                {k: _children(given[k]) for k in VALUE_FIELDS if k in given})
            members = [given.get(f.name) if f.name in given else pa.nulls(n, f.type)
                       for f in typ]
            arrays.append(pa.StructArray.from_arrays(members, fields=list(typ)))
            fields.append(pa.field(section, typ))
        elif given:
            struct = pa.StructArray.from_arrays(list(given.values()), names=list(given))
            arrays.append(struct)
            fields.append(pa.field(section, struct.type))
        arrays.append(pa.nulls(n, REST_TYPE))
        fields.append(pa.field(rest_column(section), REST_TYPE))
    for name in ("amqp_value", "amqp_sequence"):
        arrays.append(pa.nulls(n, pa.binary()))
        fields.append(pa.field(name, pa.binary()))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields, metadata=METADATA))


def _children(value: pa.StructArray) -> frozenset[str]:
    return frozenset(value.type.field(i).name for i in range(1, value.type.num_fields))


def message_table_of(data: pa.Table | pa.RecordBatch, mapping: Mapping | None = None, *,
                     nulls: str = "absent") -> pa.Table:
    """A flat table (or batch) laid out as a message table, batch by batch."""
    batches = data.to_batches() if isinstance(data, pa.Table) else [data]
    if not batches:
        batches = [pa.RecordBatch.from_pylist([], schema=data.schema)]
    return pa.Table.from_batches([message_batch_of(b, mapping, nulls=nulls) for b in batches])


__all__ = ["TYPE_TAGS", "message_batch_of", "message_table_of"]
