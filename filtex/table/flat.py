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

Columns from a stranger are read through ``guard.py``: a cell that cannot be
read (offsets that lie, invalid UTF-8, a code outside the dictionary; every
cell of a column Arrow's validation refuses) is malformed in the message
table: tag -1 in a VALUE struct, or for a typed header or properties field a
residual entry that does not decode. Every engine reads such a row as
unknown.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import guard
from .sources import ArrowData, record_batches
from .build import encode_exact
from .schema import (BINARY, BOOLEAN, BYTE, DECIMAL128, DOUBLE, FLOAT, HEADER_TYPES, INT, LONG,
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
unit is an AMQP timestamp in milliseconds (finer units must be whole ms), and
so is a date (its midnight, UTC); a decimal is an AMQP decimal128 with the
same digits and exponent (34 digits at most: a wider value is refused); a
dictionary of strings, a large string and a string view are strings."""

DECIMAL_DIGITS = 34
"""The significant digits of an AMQP decimal128 (IEEE 754 decimal128)."""
_DAY_MS = 86_400_000


def _is_decimal(typ: pa.DataType) -> bool:
    return bool(pa.types.is_decimal(typ))


def _tag_of(typ: pa.DataType, column: str) -> tuple[int, str, pa.DataType]:
    if guard.is_strings(typ):
        return STRING, "s", STRINGS
    if getattr(pa.types, "is_binary_view", lambda t: False)(typ):
        return BINARY, "x", pa.binary()
    if pa.types.is_timestamp(typ) or pa.types.is_date(typ):
        return TIMESTAMP, "i", pa.int64()
    if _is_decimal(typ):
        return DECIMAL128, "x", pa.binary()
    if pa.types.is_time(typ):
        raise ValueError(f"column {column!r} is {typ}, a time of day: no AMQP type stands "
                         "for it (an AMQP timestamp is an instant); cast it to a timestamp "
                         "or to a number of the unit you mean")
    found = TYPE_TAGS.get(typ)
    if found is None:
        raise ValueError(f"column {column!r} is {typ}: no AMQP type stands for it "
                         f"(supported: {', '.join(sorted({str(t) for t in TYPE_TAGS}))}, "
                         "timestamps, dates, decimals and dictionary strings)")
    return found


def _as_milliseconds(array: pa.Array) -> pa.Array:
    """A timestamp or date column as milliseconds since the epoch (timestamp[ms]),
    exactly: a finer timestamp must be whole milliseconds (else ArrowInvalid)."""
    typ = array.type
    if pa.types.is_date32(typ):
        days = array.cast(pa.int32()).cast(pa.int64())
        return pc.multiply(days, pa.scalar(_DAY_MS, pa.int64())).cast(TIMESTAMP_MS)
    if pa.types.is_date64(typ):
        return array.cast(pa.int64()).cast(TIMESTAMP_MS)
    return array.cast(pa.timestamp("ms", typ.tz), safe=True).cast(TIMESTAMP_MS)


_TEN_34 = 10 ** DECIMAL_DIGITS


def decimal128_bytes(array: pa.Array, column: str) -> pa.Array:
    """A decimal column as AMQP decimal128 values (16 bytes of IEEE 754 BID,
    big-endian: the same digits, the exponent minus the scale), vectorised;
    a value of more than 34 digits is refused, naming the column and the row."""
    typ = array.type
    if not pa.types.is_decimal128(typ):
        try:   # decimal32/64 widen exactly; decimal256 narrows or is refused below
            array = array.cast(pa.decimal128(min(typ.precision, 38), typ.scale), safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise ValueError(f"column {column!r} is {typ}: a value has more digits than "
                             f"AMQP's decimal128 holds ({DECIMAL_DIGITS}): {exc}") from None
    n, scale = len(array), array.type.scale
    if not -6111 <= -scale <= 6111 - DECIMAL_DIGITS:
        raise ValueError(f"column {column!r} is {typ}: its scale is outside AMQP "
                         "decimal128's exponents")
    words = np.frombuffer(array.buffers()[1], np.uint64)[2 * array.offset: 2 * (array.offset + n)]
    lo, hi = words[0::2].copy(), words[1::2].copy()
    negative = (hi >> np.uint64(63)) == 1
    # the magnitude: two's complement negated where negative (128-bit, in two words)
    neg_lo = ~lo + np.uint64(1)
    neg_hi = ~hi + (neg_lo == 0).astype(np.uint64)
    lo = np.where(negative, neg_lo, lo)
    hi = np.where(negative, neg_hi, hi)
    limit_hi, limit_lo = np.uint64(_TEN_34 >> 64), np.uint64(_TEN_34 & ((1 << 64) - 1))
    wide = (hi > limit_hi) | ((hi == limit_hi) & (lo >= limit_lo))
    wide &= guard.valid_rows(array)
    if wide.any():
        row = int(np.flatnonzero(wide)[0])
        raise ValueError(f"column {column!r} is {typ}: row {row} holds {array[row].as_py()}, "
                         f"more digits than AMQP's decimal128 holds ({DECIMAL_DIGITS})")
    biased = np.uint64(6176 - scale)
    top = (negative.astype(np.uint64) << np.uint64(63)) | (biased << np.uint64(49)) | hi
    out = np.empty((n, 2), np.uint64)
    out[:, 0] = top.byteswap()
    out[:, 1] = lo.byteswap()
    offsets = np.arange(0, 16 * n + 1, 16, dtype=np.int32)
    validity = array.buffers()[0] if array.null_count else None
    if validity is not None and array.offset:
        validity = pa.array(guard.valid_rows(array)).buffers()[1]
    return pa.Array.from_buffers(pa.binary(), n, [validity, pa.py_buffer(offsets),
                                                  pa.py_buffer(out.tobytes())])


def _readable(array: pa.Array) -> tuple[pa.Array, np.ndarray | None]:
    """The column as it may be read, and its cells that cannot be (None: none):
    strings as a checked dictionary, bytes through checked offsets."""
    n = len(array)
    if guard.sound(array) is not None:   # nothing of it can be trusted
        return pa.nulls(n, array.type), np.ones(n, bool)
    if guard.is_strings(array.type):
        found = guard.strings(array)
        good = (found.codes >= 0) & (found.codes < len(found.dictionary))
        good[good] = guard.valid_rows(found.dictionary)[found.codes[good]]
        unreadable = found.valid & ~good
        indices = pa.array(np.where(good, found.codes, 0), pa.int32(),
                           mask=~(found.valid & good))
        strings = pa.DictionaryArray.from_arrays(indices, found.dictionary)
        return strings, unreadable if unreadable.any() else None
    if guard.is_binary_like(array.type) or getattr(pa.types, "is_binary_view",
                                                   lambda t: False)(array.type):
        raw, bad = guard.as_binary(array)
        return raw.cast(pa.binary()), bad
    return array, None


def _child(array: pa.Array, typ: pa.DataType, child_type: pa.DataType, column: str) -> pa.Array:
    try:
        if pa.types.is_timestamp(typ) or pa.types.is_date(typ):
            return _as_milliseconds(array).cast(pa.int64())
        if _is_decimal(typ):
            return decimal128_bytes(array, column)
        if child_type == STRINGS:
            return array   # a checked dictionary already (``_readable``)
        return array.cast(child_type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"column {column!r} cannot be read as its AMQP type: {exc}") from None


def _value(array: pa.Array, column: str, nulls: str) -> pa.StructArray:
    tag, child, child_type = _tag_of(array.type, column)
    array, bad = _readable(array)
    missing = 1 if nulls == "null" else 0
    tags = pc.if_else(array.is_valid(), pa.scalar(tag, pa.int8()), pa.scalar(missing, pa.int8()))
    if bad is not None:   # malformed cells: tag -1, which every reader refuses
        tags = pc.if_else(pa.array(bad, pa.bool_()), pa.scalar(-1, pa.int8()), tags)
    values = _child(array, array.type, child_type, column)
    return pa.StructArray.from_arrays([tags, values], fields=list(value_type({child})))


def _typed(array: pa.Array, section: str, key: str, column: str
           ) -> tuple[pa.Array, np.ndarray | None]:
    """A header or properties field: cast, exactly, to the field's AMQP type;
    and its cells that cannot be read (None: none)."""
    typ = (HEADER_TYPES if section == "header" else PROPERTIES_TYPES)[key][1]
    array, bad = _readable(array)
    try:
        if typ == TIMESTAMP_MS and (pa.types.is_timestamp(array.type)
                                    or pa.types.is_date(array.type)):
            return _as_milliseconds(array), bad
        return array.cast(typ, safe=True), bad
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"column {column!r} cannot be {section} field {key!r} "
                         f"({typ}): {exc}") from None


_UNREADABLE = b"\xff"
"""A residual value that does not decode: the mark of a malformed typed field."""


def _rest(n: int, marks: dict[str, np.ndarray]) -> pa.Array:
    """A residual column holding, for each row with malformed typed fields, one
    entry per such field whose value does not decode (null elsewhere)."""
    if not marks:
        return pa.nulls(n, REST_TYPE)
    keys = list(marks)
    counts = np.zeros(n, np.int64)
    for bad in marks.values():
        counts += bad
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    entries = [encode_exact(key) for row in range(n) for key in keys if marks[key][row]]
    return pa.MapArray.from_arrays(
        pa.array(offsets, pa.int32(), mask=np.append(counts == 0, False)),
        pa.array(entries, pa.binary()), pa.array([_UNREADABLE] * len(entries), pa.binary()))


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
    marks: dict[str, dict[str, np.ndarray]] = {"header": {}, "properties": {}}
    for column, (section, key) in targets.items():
        array = batch.column(column)
        if key in by_section[section]:
            raise ValueError(f"two columns are {section} {key!r}")
        if section in ("header", "properties") and key not in VALUE_FIELDS:
            by_section[section][key], bad = _typed(array, section, key, column)
            if bad is not None:
                marks[section][key] = bad
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
        arrays.append(_rest(n, marks.get(section, {})))
        fields.append(pa.field(rest_column(section), REST_TYPE))
    for name in ("amqp_value", "amqp_sequence"):
        arrays.append(pa.nulls(n, pa.binary()))
        fields.append(pa.field(name, pa.binary()))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields, metadata=METADATA))


def _children(value: pa.StructArray) -> frozenset[str]:
    return frozenset(value.type.field(i).name for i in range(1, value.type.num_fields))


def message_table_of(data: ArrowData, mapping: Mapping | None = None, *,
                     nulls: str = "absent") -> pa.Table:
    """A flat table (or batch, or Arrow C stream: ``sources.py``) laid out as a
    message table, batch by batch."""
    schema, found = record_batches(data)
    batches = list(found)
    if not batches:
        batches = [pa.RecordBatch.from_pylist([], schema=schema)]
    return pa.Table.from_batches([message_batch_of(b, mapping, nulls=nulls) for b in batches])


__all__ = ["TYPE_TAGS", "message_batch_of", "message_table_of"]
