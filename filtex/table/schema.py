"""The message table layout, version 1 (docs/message-table.md).

One row per message. Header and properties are structs of their AMQP fields in
their AMQP types, so kernels and other engines read them as plain columns.
Application properties, annotations and the footer are *shredded*: one
``VALUE`` struct per key, an int8 AMQP type tag plus only the typed children
the data needs. Whatever does not fit a typed place (a wrong-typed field, a
key of an unusual class, a key or child a given schema lacks) goes to the
section's residual map of AMQP-encoded keys and values, so nothing is coerced
or lost. The tag table and the column names are the versioned contract.
"""
from __future__ import annotations

import uuid
from typing import Any, Iterable

import pyarrow as pa
from proton import (Array, Described, byte, char, decimal32, decimal64, decimal128,
                    float32, int32, short, symbol, timestamp, ubyte, uint, ulong, ushort)

from ..message import PROPERTIES_FIELDS

SCHEMA_VERSION = 1
METADATA_KEY = b"filtex.message-table"
METADATA = {METADATA_KEY: str(SCHEMA_VERSION).encode()}

# --- the AMQP type tags (section 1.1 of the columnar research) ---------------------
(ABSENT, NULL, BOOLEAN, UBYTE, USHORT, UINT, ULONG, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE,
 DECIMAL32, DECIMAL64, DECIMAL128, CHAR, TIMESTAMP, UUID, BINARY, STRING, SYMBOL,
 LIST, MAP, ARRAY, DESCRIBED) = range(26)

TAG_NAMES = ("absent", "null", "boolean", "ubyte", "ushort", "uint", "ulong", "byte", "short",
             "int", "long", "float", "double", "decimal32", "decimal64", "decimal128", "char",
             "timestamp", "uuid", "binary", "string", "symbol", "list", "map", "array",
             "described")

SCALAR_TAGS: dict[type, int] = {
    bool: BOOLEAN, ubyte: UBYTE, ushort: USHORT, uint: UINT, ulong: ULONG, byte: BYTE,
    short: SHORT, int32: INT, int: LONG, float32: FLOAT, float: DOUBLE, decimal32: DECIMAL32,
    decimal64: DECIMAL64, decimal128: DECIMAL128, char: CHAR, timestamp: TIMESTAMP,
    uuid.UUID: UUID, bytes: BINARY, str: STRING, symbol: SYMBOL,
    list: LIST, dict: MAP, Array: ARRAY, Described: DESCRIBED}
"""Exact class -> tag; the class *is* the AMQP type (filtex's value model)."""

CHILD_OF_TAG: dict[int, str | None] = {ABSENT: None, NULL: None, BOOLEAN: "b", ULONG: "u"}
CHILD_OF_TAG.update({tag: "i" for tag in (UBYTE, USHORT, UINT, BYTE, SHORT, INT, LONG,
                                          TIMESTAMP)})
CHILD_OF_TAG.update({tag: "f" for tag in (FLOAT, DOUBLE)})
CHILD_OF_TAG.update({tag: "s" for tag in (CHAR, STRING, SYMBOL)})
CHILD_OF_TAG.update({tag: "x" for tag in (DECIMAL32, DECIMAL64, DECIMAL128, UUID, BINARY)})
CHILD_OF_TAG.update({tag: "e" for tag in (LIST, MAP, ARRAY, DESCRIBED)})

STRINGS = pa.dictionary(pa.int32(), pa.string())
CHILD_TYPES: dict[str, pa.DataType] = {
    "b": pa.bool_(), "i": pa.int64(), "u": pa.uint64(), "f": pa.float64(), "s": STRINGS,
    "x": pa.binary(), "e": pa.binary()}
CHILD_ORDER = tuple(CHILD_TYPES)


def value_type(children: Iterable[str]) -> pa.StructType:
    """The VALUE struct with the tag and the given children, in canonical order."""
    wanted = set(children)
    return pa.struct([pa.field("t", pa.int8())] + [
        pa.field(c, CHILD_TYPES[c]) for c in CHILD_ORDER if c in wanted])


def children_of(value: pa.DataType) -> frozenset[str]:
    """The children a VALUE struct type has (its tag aside)."""
    names = [value.field(i).name for i in range(value.num_fields)]
    if not names or names[0] != "t":
        raise ValueError(f"not a filtex VALUE struct: {value}")
    return frozenset(names[1:])


# --- header and properties: AMQP field names, AMQP types ---------------------------
TIMESTAMP_MS = pa.timestamp("ms", tz="UTC")
HEADER_TYPES: dict[str, tuple[type, pa.DataType]] = {
    "durable": (bool, pa.bool_()), "priority": (ubyte, pa.uint8()), "ttl": (uint, pa.uint32()),
    "first-acquirer": (bool, pa.bool_()), "delivery-count": (uint, pa.uint32())}
"""Field -> (the class a value must have to be stored here, its column type)."""

VALUE_FIELDS = ("message-id", "correlation-id")
"""Properties fields of several AMQP types (ulong, uuid, binary, string): VALUE structs."""
PROPERTIES_TYPES: dict[str, tuple[type, pa.DataType]] = {
    "user-id": (bytes, pa.binary()), "to": (str, STRINGS), "subject": (str, STRINGS),
    "reply-to": (str, STRINGS), "content-type": (symbol, STRINGS),
    "content-encoding": (symbol, STRINGS), "absolute-expiry-time": (timestamp, TIMESTAMP_MS),
    "creation-time": (timestamp, TIMESTAMP_MS), "group-id": (str, STRINGS),
    "group-sequence": (uint, pa.uint32()), "reply-to-group-id": (str, STRINGS)}

KEYED = ("delivery_annotations", "message_annotations", "application_properties", "footer")
"""Map sections shredded one field per key."""
KEY_CLASS: dict[str, type] = {"delivery_annotations": symbol, "message_annotations": symbol,
                              "application_properties": str, "footer": symbol}
"""The key class a struct field stands for; keys of any other class go to the residual."""

REST_TYPE = pa.map_(pa.binary(), pa.binary())
"""A residual: AMQP-encoded key -> AMQP-encoded value (null when empty)."""
SECTION_COLUMNS = ("header", "delivery_annotations", "message_annotations", "properties",
                   "application_properties", "footer")


def rest_column(section: str) -> str:
    return f"{section}_rest"


def header_type() -> pa.StructType:
    return pa.struct([pa.field(name, typ) for name, (_, typ) in HEADER_TYPES.items()])


def properties_type(id_children: dict[str, Iterable[str]]) -> pa.StructType:
    """The properties struct; ``id_children`` gives the children of message-id
    and correlation-id."""
    fields = []
    for name in PROPERTIES_FIELDS:
        if name in VALUE_FIELDS:
            fields.append(pa.field(name, value_type(id_children.get(name, ()))))
        else:
            fields.append(pa.field(name, PROPERTIES_TYPES[name][1]))
    return pa.struct(fields)


def message_schema(keys: dict[str, dict[str, frozenset[str]]],
                   id_children: dict[str, Iterable[str]], connection: bool) -> pa.Schema:
    """The table schema: ``keys[section]`` maps each shredded key to its children.

    A keyed section with no keys has no struct column (Parquet cannot store an
    empty struct); its residual column is always there.
    """
    fields: list[pa.Field] = []
    for section in SECTION_COLUMNS:
        if section == "header":
            fields.append(pa.field(section, header_type()))
        elif section == "properties":
            fields.append(pa.field(section, properties_type(id_children)))
        elif keys.get(section):
            fields.append(pa.field(section, pa.struct(
                [pa.field(k, value_type(c)) for k, c in keys[section].items()])))
        fields.append(pa.field(rest_column(section), REST_TYPE))
    fields += [pa.field("amqp_value", pa.binary()), pa.field("amqp_sequence", pa.binary())]
    if connection:
        fields.append(pa.field("connection", pa.string()))
    return pa.schema(fields, metadata=METADATA)


def check_version(schema: pa.Schema) -> None:
    """Refuse a table that is not a filtex message table of this version."""
    meta = schema.metadata or {}
    version = meta.get(METADATA_KEY)
    if version is None:
        raise ValueError("not a filtex message table: the schema has no "
                         f"{METADATA_KEY.decode()!r} metadata")
    if version != METADATA[METADATA_KEY]:
        raise ValueError(f"filtex message table version {version.decode(errors='replace')!r} "
                         f"is not supported (this filtex reads version {SCHEMA_VERSION})")


def plan_of(schema: pa.Schema) -> tuple[dict[str, dict[str, frozenset[str]]],
                                        dict[str, frozenset[str]], bool]:
    """The keys, the id children and the connection flag a schema lays out."""
    check_version(schema)
    keys: dict[str, dict[str, frozenset[str]]] = {}
    for section in KEYED:
        if section in schema.names:
            struct = schema.field(section).type
            keys[section] = {struct.field(i).name: children_of(struct.field(i).type)
                             for i in range(struct.num_fields)}
    props = schema.field("properties").type
    ids = {name: children_of(props.field(props.get_field_index(name)).type)
           for name in VALUE_FIELDS}
    return keys, ids, "connection" in schema.names


def columns_for(fields: Any) -> dict[str, set[str] | None]:
    """The table columns that hold ``fields`` ((section, key) pairs), each with
    the struct members read (None: all of them)."""
    columns: dict[str, set[str] | None] = {"connection": None}
    for section, key in fields:
        if section == "body":
            columns[key] = None   # amqp_value or amqp_sequence
        elif section in ("header", "properties") + KEYED:
            members = columns.setdefault(section, set())
            if members is not None:
                members.add(key)
            columns[rest_column(section)] = None
    return columns
