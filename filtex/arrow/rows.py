"""Reading a message table back, row by row, and evaluating any filter over it.

A row view implements the reading protocol with plain dicts of exact filtex
values rebuilt from the tags, the children and the residuals, so every filter
of every dialect evaluates a table exactly as it evaluates the messages the
table was built from. It is the reference path: the kernels (``engine.py``)
must agree with it, and they hand it the rows they cannot answer.
"""
from __future__ import annotations

import uuid
from typing import Any, Callable, Iterator

import pyarrow as pa
from proton import (byte, char, decimal32, decimal64, decimal128, float32, int32, short,
                    symbol, timestamp, ubyte, uint, ulong, ushort)

from ..amqp.codec import decode_value
from ..message import EMPTY
from .schema import (ARRAY, BINARY, BOOLEAN, BYTE, CHAR, DECIMAL32, DECIMAL64, DECIMAL128,
                     DESCRIBED, DOUBLE, FLOAT, HEADER_TYPES, INT, KEY_CLASS, LIST, LONG,
                     MAP, NULL, PROPERTIES_TYPES, SECTION_COLUMNS, SHORT, STRING, SYMBOL,
                     TAG_NAMES, TIMESTAMP, UBYTE, UINT, ULONG, USHORT, UUID, check_version,
                     rest_column)


def _decoded(raw: bytes) -> Any:
    return decode_value(raw)[0]


def _identity(value: Any) -> Any:
    return value


_REBUILD: dict[int, Callable[[Any], Any]] = {
    NULL: lambda _: None, BOOLEAN: _identity, UBYTE: ubyte, USHORT: ushort, UINT: uint,
    ULONG: ulong, BYTE: byte, SHORT: short, INT: int32, LONG: _identity, FLOAT: float32,
    DOUBLE: _identity, DECIMAL32: lambda x: decimal32(int.from_bytes(x, "big")),
    DECIMAL64: lambda x: decimal64(int.from_bytes(x, "big")), DECIMAL128: decimal128,
    CHAR: char, TIMESTAMP: timestamp, UUID: lambda x: uuid.UUID(bytes=x), BINARY: _identity,
    STRING: _identity, SYMBOL: symbol, LIST: _decoded, MAP: _decoded, ARRAY: _decoded,
    DESCRIBED: _decoded}
"""Tag -> the class (or decoder) that turns the child's Python value back into the value."""

_CHILD_OF = {NULL: None, BOOLEAN: "b", ULONG: "u", FLOAT: "f", DOUBLE: "f", CHAR: "s",
             STRING: "s", SYMBOL: "s", DECIMAL32: "x", DECIMAL64: "x", DECIMAL128: "x",
             UUID: "x", BINARY: "x", LIST: "e", MAP: "e", ARRAY: "e", DESCRIBED: "e"}
_CHILD_OF.update({t: "i" for t in (UBYTE, USHORT, UINT, BYTE, SHORT, INT, LONG, TIMESTAMP)})

_ABSENT = object()


class RowMessage:
    """One row of a message table, read as filters read a message."""

    __slots__ = ("_filtex_header", "_filtex_delivery_annotations",
                 "_filtex_message_annotations", "_filtex_properties",
                 "_filtex_application_properties", "_filtex_footer", "_filtex_connection",
                 "_filtex_amqp_value", "_filtex_amqp_sequence", "_value", "_sequence")

    def __init__(self, sections: dict[str, dict], value: bytes | None,
                 sequence: bytes | None, connection: str | None) -> None:
        self._filtex_header = sections["header"] or EMPTY
        self._filtex_delivery_annotations = sections["delivery_annotations"] or EMPTY
        self._filtex_message_annotations = sections["message_annotations"] or EMPTY
        self._filtex_properties = sections["properties"] or EMPTY
        self._filtex_application_properties = sections["application_properties"] or EMPTY
        self._filtex_footer = sections["footer"] or EMPTY
        self._filtex_connection = connection
        self._value, self._sequence = value, sequence

    @property
    def connection(self) -> str | None:
        return self._filtex_connection

    def __getattr__(self, name: str) -> Any:
        """The body, decoded on first read (filters rarely read it)."""
        if name == "_filtex_amqp_value":
            value = None if self._value is None else _decoded(self._value)
        elif name == "_filtex_amqp_sequence":
            value = None if self._sequence is None else _decoded(self._sequence)
        else:
            raise AttributeError(name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"RowMessage(application_properties={self._filtex_application_properties!r})"


def _values(array: pa.StructArray) -> list[Any]:
    """The values of a VALUE struct column, ``_ABSENT`` where the tag is 0."""
    names = [array.type.field(i).name for i in range(array.type.num_fields)]
    flat = dict(zip(names, array.flatten()))
    children = {name: column.to_pylist() for name, column in flat.items() if name != "t"}
    out: list[Any] = []
    for row, tag in enumerate(flat["t"].to_pylist()):
        if not tag:
            out.append(_ABSENT)
            continue
        rebuild = _REBUILD.get(tag)
        if rebuild is None:
            raise ValueError(f"unknown AMQP type tag {tag} in a message table")
        child = _CHILD_OF[tag]
        if child is None:
            out.append(None)
        elif child not in children:
            raise ValueError(f"tag {TAG_NAMES[tag]} without its child {child!r}")
        elif children[child][row] is None:   # a value of a type has a value
            raise ValueError(f"tag {TAG_NAMES[tag]} with a null {child!r}")
        else:
            out.append(rebuild(children[child][row]))
    return out


def _typed(array: pa.Array, cls: type) -> list[Any]:
    """A typed header/properties field, null where absent."""
    if pa.types.is_timestamp(array.type):
        array = array.cast(pa.int64())
    return [_ABSENT if v is None else cls(v) for v in array.to_pylist()]


def _fill(rows: list[dict], array: pa.StructArray, section: str) -> None:
    typed = HEADER_TYPES if section == "header" else PROPERTIES_TYPES
    key_class = KEY_CLASS.get(section, str)
    for field, column in zip(array.type, array.flatten()):
        if field.name in typed:
            values = _typed(column, typed[field.name][0])
        else:
            values = _values(column)
        key = key_class(field.name)
        for row, value in zip(rows, values):
            if value is not _ABSENT:
                row[key] = value


def _fill_rest(rows: list[dict], array: pa.Array) -> None:
    for row, entries in zip(rows, array.to_pylist()):
        for key, value in entries or ():
            row[_decoded(key)] = _decoded(value)


def batch_rows(batch: pa.RecordBatch) -> list[RowMessage]:
    """The row views of one record batch (of a table of this layout version; a
    column it lacks reads as an empty section, no body or no connection)."""
    check_version(batch.schema)
    n, names = batch.num_rows, batch.schema.names
    sections: dict[str, list[dict]] = {}
    for section in SECTION_COLUMNS:
        rows: list[dict] = [{} for _ in range(n)]
        if section in names:
            _fill(rows, batch.column(section), section)
        if rest_column(section) in names:
            _fill_rest(rows, batch.column(rest_column(section)))
        sections[section] = rows
    values, sequences, connections = (
        batch.column(name).to_pylist() if name in names else [None] * n
        for name in ("amqp_value", "amqp_sequence", "connection"))
    return [RowMessage({s: sections[s][i] for s in SECTION_COLUMNS}, values[i], sequences[i],
                       connections[i]) for i in range(n)]


def _batches(data: pa.Table | pa.RecordBatch) -> list[pa.RecordBatch]:
    check_version(data.schema)
    return data.to_batches() if isinstance(data, pa.Table) else [data]


def messages(data: pa.Table | pa.RecordBatch) -> Iterator[RowMessage]:
    """The row views of a message table (or one batch of one), in order."""
    for batch in _batches(data):
        yield from batch_rows(batch)


def evaluate_rows(flt: Any, data: pa.Table | pa.RecordBatch,
                  receiving_connection: Any = None) -> pa.BooleanArray:
    """``flt.evaluate`` of every row view: true, false, or null (unknown). The
    reference the kernels are tested against (``engine.evaluate`` is the fast path)."""
    evaluate = flt.evaluate
    results = [evaluate(row, receiving_connection)
               for batch in _batches(data) for row in batch_rows(batch)]
    return pa.array(results, pa.bool_())


__all__ = ["RowMessage", "batch_rows", "evaluate_rows", "messages"]
