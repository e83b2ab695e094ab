"""Building a message table (schema.py's layout) from messages in any form.

Every message is read through the reading protocol, the one thing filters
read, so a table holds exactly what a filter would see: bytes, proton
messages, ``filtex.Message`` and typed JSON all give the same rows. Each
value lands in the one place its exact class says (its AMQP type); what has
no typed place goes to the residual, AMQP-encoded, and every encoded value is
checked to decode to itself, so a table never holds an approximation.
"""
from __future__ import annotations

from typing import Any, Iterable, NamedTuple

import pyarrow as pa
from proton import Data, DataException

from .. import forms
from ..amqp.codec import DecodeError, decode_value, identical
from ..amqp.encode import _put
from ..errors import EvaluationFailure
from ..typed_json import message_from_json
from ..runtime.values import double_value
from .schema import (CHILD_OF_TAG, DECIMAL32, DECIMAL64, DECIMAL128, HEADER_TYPES, KEY_CLASS,
                     KEYED, NULL, PROPERTIES_TYPES, SCALAR_TAGS, STRINGS, TIMESTAMP_MS, UUID,
                     VALUE_FIELDS, message_schema, plan_of, rest_column, value_type)

_INT64 = (-(1 << 63), (1 << 63) - 1)
_FIXED_WIDTH = {DECIMAL32: 4, DECIMAL64: 8}


class Cell(NamedTuple):
    """One value: its tag, the child it needs and the child's payload."""
    value: Any
    tag: int
    child: str | None
    payload: Any


class Record(NamedTuple):
    """One message as read through the protocol: sections as (key, cell) pairs."""
    sections: dict[str, list[tuple[Any, Cell]]]
    amqp_value: bytes | None
    amqp_sequence: bytes | None
    connection: Any


# --- exact single values -------------------------------------------------------------

def encode_exact(value: Any) -> bytes:
    """The AMQP encoding of one value, refused unless it decodes to the same
    classes and values (a ``Decimal``, a tuple or a dict subclass would not)."""
    data = Data()
    try:
        _put(data, value)
        raw = bytes(data.encode())
    except (TypeError, ValueError, OverflowError, DataException) as exc:
        raise ValueError(f"no AMQP encoding for {_short(value)}: {exc}") from None
    try:
        back, end = decode_value(raw)
    except DecodeError as exc:   # not expected: proton encoded it
        raise ValueError(f"{_short(value)} does not decode: {exc}") from None
    if end != len(raw) or not identical(back, value):
        raise ValueError(f"{_short(value)} does not survive AMQP encoding exactly (it decodes "
                         f"as {_short(back)}); use AMQP types (proton's classes, list, dict)")
    return raw


def _short(value: Any) -> str:
    text = repr(value)
    return f"{text[:60]}... (a {type(value).__name__})" if len(text) > 60 else \
        f"{text} (a {type(value).__name__})"


def cell(value: Any) -> Cell:
    """The tag, child and payload of one value; a class with no AMQP type is a TypeError."""
    if value is None:
        return Cell(None, NULL, None, None)
    tag = SCALAR_TAGS.get(type(value))
    if tag is None:
        raise TypeError(f"{_short(value)} has no AMQP type: use proton's classes "
                        "(ubyte, symbol, decimal128...), int, float, str, bytes, bool, "
                        "list, dict or uuid.UUID")
    child = CHILD_OF_TAG[tag]
    if child == "i":
        payload = int(value)
        if not _INT64[0] <= payload <= _INT64[1]:
            raise ValueError(f"{_short(value)} is out of the AMQP range")
    elif child == "u":
        payload = int(value)
        if not 0 <= payload < 1 << 64:
            raise ValueError(f"{_short(value)} is out of the ulong range")
    elif child == "f":   # a float32 as it travels on the wire: its single-precision value
        payload = double_value(value)
    elif child == "s":
        payload = str(value)
        try:
            payload.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{_short(value)} is not valid Unicode (a lone surrogate): "
                             "Arrow strings are UTF-8") from None
    elif child == "x":
        if tag in _FIXED_WIDTH:
            try:
                payload = int(value).to_bytes(_FIXED_WIDTH[tag], "big")
            except OverflowError:
                raise ValueError(f"{_short(value)} is not a {_FIXED_WIDTH[tag] * 8}-bit "
                                 "pattern") from None
        elif tag == UUID:
            payload = value.bytes
        else:
            payload = bytes(value)
            if tag == DECIMAL128 and len(payload) != 16:
                raise ValueError(f"{_short(value)} is not 16 bytes")
    elif child == "e":
        payload = encode_exact(value)
    else:
        payload = value
    return Cell(value, tag, child, payload)


# --- reading messages ----------------------------------------------------------------

_SECTIONS = ("header", "delivery_annotations", "message_annotations", "properties",
             "application_properties", "footer")


def record(message: Any) -> Record:
    """One accepted message form (or a typed-JSON object) read through the protocol."""
    if type(message) is dict:
        message = message_from_json(message)
    view = forms.view(message)
    try:
        sections = {name: getattr(view, f"_filtex_{name}") for name in _SECTIONS}
        value = view._filtex_amqp_value
        sequence = view._filtex_amqp_sequence
        connection = view._filtex_connection
    except EvaluationFailure as exc:
        raise ValueError(f"not a readable message: {exc}") from None
    cells = {}
    for name, section in sections.items():
        pairs = cells[name] = []
        for key, item in section.items():
            try:
                pairs.append((key, cell(item)))
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"{name} {_short(key)}: {exc}") from None
    return Record(cells, None if value is None else encode_exact(value),
                  None if sequence is None else encode_exact(list(sequence)), connection)


# --- the plan: which keys and children ------------------------------------------------

def _infer(records: list[Record]) -> tuple[dict, dict, bool]:
    keys: dict[str, dict[str, set[str]]] = {s: {} for s in KEYED}
    ids: dict[str, set[str]] = {name: set() for name in VALUE_FIELDS}
    for rec in records:
        for section in KEYED:
            key_class, seen = KEY_CLASS[section], keys[section]
            for key, c in rec.sections[section]:
                if type(key) is key_class:
                    child = c.child
                    seen.setdefault(str(key), set()).update(() if child is None else (child,))
        for key, c in rec.sections["properties"]:
            if key in ids:
                child = c.child
                ids[key].update(() if child is None else (child,))
    connection = any(rec.connection is not None for rec in records)
    return ({s: {k: frozenset(c) for k, c in keys[s].items()} for s in KEYED},
            {k: frozenset(c) for k, c in ids.items()}, connection)


# --- columns ------------------------------------------------------------------------------

class _Values:
    """The columns of one VALUE struct being filled, row by row."""

    def __init__(self, n: int, children: frozenset[str]) -> None:
        self.type = value_type(children)
        self.tags = [0] * n
        self.children = {c: [None] * n for c in children}

    def put(self, row: int, c: Cell) -> bool:
        """Store ``c`` at ``row``; False when this struct has no child for it."""
        if c.child is not None:
            if c.child not in self.children:
                return False
            self.children[c.child][row] = c.payload
        self.tags[row] = c.tag
        return True

    def array(self) -> pa.StructArray:
        arrays = [pa.array(self.tags, pa.int8())]
        for field in list(self.type)[1:]:
            arrays.append(_typed(self.children[field.name], field.type))
        return pa.StructArray.from_arrays(arrays, fields=list(self.type))


def _typed(values: list, typ: pa.DataType) -> pa.Array:
    if typ == STRINGS:
        return pa.array(values, pa.string()).dictionary_encode()
    return pa.array(values, typ)


def _rest_entry(row: int, section: str, key: Any, c: Cell) -> tuple[bytes, bytes]:
    try:
        return encode_exact(key), (c.payload if c.child == "e" else encode_exact(c.value))
    except ValueError as exc:
        raise ValueError(f"message {row}, {section} key {_short(key)}: {exc}") from None


def _keyed(records: list[Record], section: str, plan: dict[str, frozenset[str]],
           rest: list[list]) -> pa.StructArray | None:
    key_class = KEY_CLASS[section]
    columns = {key: _Values(len(records), children) for key, children in plan.items()}
    for row, rec in enumerate(records):
        for key, c in rec.sections[section]:
            column = columns.get(str(key)) if type(key) is key_class else None
            if column is None or not column.put(row, c):
                rest[row].append(_rest_entry(row, section, key, c))
    if not columns:
        return None
    arrays = [c.array() for c in columns.values()]
    return pa.StructArray.from_arrays(arrays, fields=[
        pa.field(key, c.type) for key, c in columns.items()])


def _fields(records: list[Record], section: str, types: dict[str, tuple[type, pa.DataType]],
            ids: dict[str, frozenset[str]], struct: pa.StructType,
            rest: list[list]) -> pa.StructArray:
    """Header or properties: a value of its field's class in the field, else the residual."""
    n = len(records)
    typed = {name: [None] * n for name in types}
    values = {name: _Values(n, ids[name]) for name in ids}
    for row, rec in enumerate(records):
        for key, c in rec.sections[section]:
            want = types.get(key)
            if want is not None and type(c.value) is want[0]:
                typed[key][row] = c.value
            elif key in values and values[key].put(row, c):
                pass
            else:
                rest[row].append(_rest_entry(row, section, key, c))
    arrays = []
    for field in struct:
        if field.name in values:
            arrays.append(values[field.name].array())
        elif field.type == TIMESTAMP_MS:
            arrays.append(pa.array([None if v is None else int(v) for v in typed[field.name]],
                                   pa.int64()).cast(TIMESTAMP_MS))
        elif field.type == STRINGS:
            arrays.append(_typed([None if v is None else str(v) for v in typed[field.name]],
                                 STRINGS))
        elif pa.types.is_integer(field.type):
            arrays.append(pa.array([None if v is None else int(v) for v in typed[field.name]],
                                   field.type))
        else:
            arrays.append(pa.array(typed[field.name], field.type))
    return pa.StructArray.from_arrays(arrays, fields=list(struct))


def message_table(messages: Iterable[Any], *, schema: pa.Schema | None = None) -> pa.Table:
    """A message table of ``messages`` (any form ``filtex.view`` accepts, or
    typed-JSON objects). The layout is inferred from the data, or taken from
    ``schema`` (a message table's schema): keys and children it lacks go to
    the residuals. A value that cannot be stored exactly is a ValueError (or
    TypeError) naming the message."""
    records = []
    for number, message in enumerate(messages):
        try:
            records.append(record(message))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"message {number}: {exc}") from None
        except Exception as exc:   # FilterError of typed JSON, NotAMessage
            raise ValueError(f"message {number}: {exc}") from exc
    try:
        return _table(records, schema)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"cannot build the message table: {exc}") from None


def _table(records: list[Record], schema: pa.Schema | None) -> pa.Table:
    keys, ids, connection = _infer(records) if schema is None else plan_of(schema)
    if schema is not None and not connection and any(
            r.connection is not None for r in records):
        raise ValueError("the messages carry connection ids but the schema has no "
                         "connection column")
    out = message_schema(keys, ids, connection)
    n = len(records)
    columns: dict[str, pa.Array] = {}
    for section in ("header", "delivery_annotations", "message_annotations", "properties",
                    "application_properties", "footer"):
        rest: list[list] = [[] for _ in range(n)]
        if section == "header":
            columns[section] = _fields(records, section, HEADER_TYPES, {},
                                       out.field(section).type, rest)
        elif section == "properties":
            columns[section] = _fields(records, section, PROPERTIES_TYPES, ids,
                                       out.field(section).type, rest)
        else:
            array = _keyed(records, section, keys.get(section, {}), rest)
            if array is not None:
                columns[section] = array
        columns[rest_column(section)] = pa.array([r or None for r in rest],
                                                 out.field(rest_column(section)).type)
    columns["amqp_value"] = pa.array([r.amqp_value for r in records], pa.binary())
    columns["amqp_sequence"] = pa.array([r.amqp_sequence for r in records], pa.binary())
    if connection:
        ids_ = [r.connection for r in records]
        wrong = next((c for c in ids_ if c is not None and type(c) is not str), None)
        if wrong is not None:
            raise TypeError(f"connection ids must be strings to be stored, not {_short(wrong)}")
        columns["connection"] = pa.array(ids_, pa.string())
    return pa.Table.from_arrays([columns[name] for name in out.names], schema=out)
