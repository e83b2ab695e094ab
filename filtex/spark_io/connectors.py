"""Kafka and Azure Event Hubs DataFrames as message tables (docs/spark-connectors.md).

Spark's Kafka source and the azure-event-hubs-spark connector hand over records
whose header values are bytes and property values strings. ``from_kafka`` and
``from_event_hubs`` lay them out as message tables in Spark's types with
``mapInArrow``, so ``filtex.spark.column`` and ``where`` run on them unchanged.
The schema depends on the arguments alone (a stream needs it before any data):
each VALUE struct has the children its decoder can give.

An undecodable value neither fails the job nor reads as absent: its tag is
``UNREADABLE`` (-1, outside 0..25), which every engine reads as an unreadable
row, so filters reading that key are unknown there. A typed properties field
has no tag: an undecodable one goes to ``properties_rest`` as an entry with no
value, unknown for filters reading any properties field.
"""
from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..amqp.codec import decode_value
from ..table.build import cell, encode_exact
from ..table.schema import (BINARY, BOOLEAN, BYTE, CHILD_ORDER, DOUBLE, INT, LONG, NULL,
                            REST_TYPE, SHORT, STRING, TIMESTAMP, header_type,
                            properties_type, value_type)
from .layout import (NOT_A_VALUE, SPARK_MAX_MS, SPARK_TIMESTAMP, UNREADABLE, arrow_for_spark,
                     kept_columns, map_in_arrow)

_LONG = (-(1 << 63), (1 << 63) - 1)
_ID_FIELDS = ("message-id", "correlation-id")

Decoded = tuple   # (tag, VALUE child or None, payload)


def value(children: Sequence[str]) -> pa.StructType:
    """The VALUE struct with the children a decoder can give (all for amqp): fixed by
    the decoder, never by the data, and no child that could hold no value, so the
    native expressions need no Arrow UDF for tags that cannot occur."""
    return arrow_for_spark(value_type(children))


HEADER = arrow_for_spark(header_type())
PROPERTIES = arrow_for_spark(properties_type({name: "s" for name in _ID_FIELDS}))


# --- decoders: bytes (Kafka) or text (Event Hubs) to (tag, child, payload) ------------------

def _reject_constant(token: str) -> None:
    raise ValueError(f"{token} is not JSON")


def json_scalar(text: str) -> Decoded:
    """A JSON scalar as typed JSON reads one (``filtex.typed_json``): null, boolean,
    an integer as a long (out of the long range: refused), any other number a
    finite double, a string. Arrays, objects, NaN and infinities are refused."""
    value = json.loads(text, parse_constant=_reject_constant)
    kind = type(value)
    if value is None:
        return (NULL, None, None)
    if kind is bool:
        return (BOOLEAN, "b", value)
    if kind is int:
        if not _LONG[0] <= value <= _LONG[1]:
            raise ValueError("a JSON integer outside the long range")
        return (LONG, "i", value)
    if kind is float:
        if not math.isfinite(value):
            raise ValueError("a JSON number past the double range")
        return (DOUBLE, "f", value)
    if kind is str:
        value.encode("utf-8")   # a lone surrogate escape ("\ud800") is no Unicode
        return (STRING, "s", value)
    raise ValueError(f"a JSON {kind.__name__}, not a scalar")


def _amqp(raw: bytes) -> Decoded:
    value, end = decode_value(raw)
    if end != len(raw):
        raise ValueError(f"{len(raw) - end} bytes after the value")
    c = cell(value)
    return (c.tag, c.child, c.payload)


_WIDTHS = {1: BYTE, 2: SHORT, 4: INT, 8: LONG}

Decoder = tuple   # (function of the raw value, the VALUE children it can give)

KAFKA_DECODERS: dict[str, Decoder] = {
    "utf8": (lambda raw: (STRING, "s", raw.decode("utf-8")), "s"),
    "json": (lambda raw: json_scalar(raw.decode("utf-8")), "bifs"),
    "amqp": (_amqp, CHILD_ORDER),
    "int": (lambda raw: (_WIDTHS[len(raw)], "i", int.from_bytes(raw, "big", signed=True)),
            "i"),
    "binary": (lambda raw: (BINARY, "x", bytes(raw)), "x"),
}
"""Kafka header value decoders: the AMQP type each gives is in docs/spark-connectors.md."""

EVENT_HUBS_DECODERS: dict[str, Decoder] = {
    "string": (lambda text: (STRING, "s", text), "s"),
    "json": (json_scalar, "bifs"),
}
"""Event Hubs property value decoders (the connector writes strings as they are,
other values as JSON)."""


_UNREADABLE = (UNREADABLE, None, None)
_NULL = (NULL, None, None)


def _decode(decoder: Callable[[Any], Decoded], raw: Any) -> Decoded:
    """One value; a present null is AMQP null; any failure is UNREADABLE, never
    an error: one malformed header must not stop a streaming job."""
    if raw is None:
        return _NULL
    try:
        return decoder(raw)
    except Exception:   # noqa: BLE001 (bad UTF-8, JSON, width, AMQP: all unreadable)
        return _UNREADABLE


# --- columns ---------------------------------------------------------------------------------

def _value_array(cells: list, typ: pa.StructType) -> pa.StructArray:
    """A VALUE struct column of (tag, child, payload) cells, None = absent."""
    n = len(cells)
    tags = [0] * n
    children: dict[str, list] = {name: [None] * n for name in CHILD_ORDER}
    for row, c in enumerate(cells):
        if c is not None:
            tags[row] = c[0]
            if c[1] is not None:
                children[c[1]][row] = Decimal(c[2]) if c[1] == "u" else c[2]
    arrays = [pa.array(tags, pa.int8())] + [pa.array(children[f.name], f.type)
                                            for f in list(typ)[1:]]
    return pa.StructArray.from_arrays(arrays, fields=list(typ))


class _Entries:
    """The (key, value) entries of a Kafka headers list or an Event Hubs map
    column, and each row's last entry of a key (the offsets are read directly:
    sliced batches and null rows included)."""

    def __init__(self, column: pa.Array) -> None:
        n = len(column)
        offsets = column.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
        if pa.types.is_map(column.type):
            keys, values = column.keys, column.items
        else:
            entries = column.values
            keys, values = entries.field("key"), entries.field("value")
        start, stop = int(offsets[0]), int(offsets[-1])
        self.keys, self.values = keys.slice(start, stop - start), values.slice(start, stop - start)
        rows = np.repeat(np.arange(n), np.diff(offsets))
        valid = column.is_valid().to_numpy(zero_copy_only=False)
        self.rows = np.where(valid[rows], rows, -1) if len(rows) else rows
        self.n = n

    def last(self, key: str) -> tuple[np.ndarray, list]:
        """The rows holding ``key`` and the value of its last entry in each."""
        hits = pc.equal(self.keys, key).fill_null(False).to_numpy(zero_copy_only=False)
        hits = np.flatnonzero(hits & (self.rows >= 0))
        last = np.full(self.n, -1, np.int64)
        np.maximum.at(last, self.rows[hits], hits)
        rows = np.flatnonzero(last >= 0)
        return rows, self.values.take(pa.array(last[rows])).to_pylist()


def _decoded_column(entries: _Entries, n: int, key: str, decoder: Decoder) -> pa.Array:
    cells: list = [None] * n
    rows, raws = entries.last(key)
    for row, raw in zip(rows.tolist(), raws):
        cells[row] = _decode(decoder[0], raw)
    return _value_array(cells, value(decoder[1]))


def _struct(members: dict[str, pa.Array]) -> pa.StructArray:
    return pa.StructArray.from_arrays(list(members.values()), names=list(members))


def _members(chosen: dict[str, Decoder]) -> pa.StructType:
    return pa.struct([pa.field(k, value(d[1])) for k, d in chosen.items()])


# --- checking arguments -------------------------------------------------------------------------

def _decoders(keys: Sequence[str] | Mapping[str, str], decoders: Mapping[str, str] | None,
              default: str, known: Mapping[str, Decoder], what: str) -> dict[str, Decoder]:
    if isinstance(keys, str):
        raise TypeError(f"{what}: a list of keys, not the string {keys!r}")
    given = dict(keys) if isinstance(keys, Mapping) else {k: None for k in keys}
    if len(given) != len(list(keys)):
        raise ValueError(f"{what}: a key is given twice")
    chosen = dict(decoders or {})
    out = {}
    for key, name in given.items():
        if type(key) is not str:
            raise TypeError(f"{what}: keys are strings, not {key!r}")
        name = chosen.pop(key, None) or name or default
        if name not in known:
            raise ValueError(f"{what} {key!r}: decoder {name!r} is not one of "
                             f"{', '.join(known)}")
        out[key] = known[name]
    if chosen:
        raise ValueError(f"decoders name keys that are not requested: {sorted(chosen)}")
    return out


def _layout(annotations: list[pa.Field], rest: bool, application: dict) -> list[pa.Field]:
    """The output columns (header and properties always; bodies never hold anything)."""
    layout = [pa.field("header", HEADER)]
    if annotations:
        layout.append(pa.field("message_annotations", pa.struct(annotations)))
    layout.append(pa.field("properties", PROPERTIES))
    if rest:
        layout.append(pa.field("properties_rest", REST_TYPE))
    if application:
        layout.append(pa.field("application_properties", _members(application)))
    return layout + [pa.field("amqp_value", pa.binary()), pa.field("amqp_sequence", pa.binary())]


# --- Kafka ------------------------------------------------------------------------------

def from_kafka(df: Any, *, keys: Sequence[str], decoders: Mapping[str, str] | None = None,
               default: str = "utf8", headers: str = "headers",
               keep: Sequence[str] | None = None) -> Any:
    """A Kafka source DataFrame (``includeHeaders`` on) as a message table whose
    application properties are the header ``keys``, each decoded by
    ``decoders[key]`` (else ``default``): utf8, json, amqp, int, binary. The last
    header of a key wins (Kafka's ``lastHeader``); a null value is AMQP null; an
    undecodable one is unknown to filters reading it. ``keep``: input columns
    passed through (offset, partition, timestamp...): no filter reads them."""
    chosen = _decoders(keys, decoders, default, KAFKA_DECODERS, "keys")
    if headers not in df.columns:
        raise ValueError(f"the DataFrame has no {headers!r} column: read Kafka with "
                         ".option('includeHeaders', 'true')")
    keep = kept_columns(df, keep)

    def convert(batch: pa.RecordBatch) -> dict[str, pa.Array]:
        if not chosen:
            return {}
        n, entries = batch.num_rows, _Entries(batch.column(headers))
        return {"application_properties": _struct(
            {k: _decoded_column(entries, n, k, d) for k, d in chosen.items()})}
    return map_in_arrow(df, [headers], _layout([], False, chosen), keep, convert)


# --- Azure Event Hubs ---------------------------------------------------------------------------

ANNOTATION_COLUMNS: dict[str, tuple[str, int, str]] = {
    "offset": ("x-opt-offset", STRING, "s"),
    "sequenceNumber": ("x-opt-sequence-number", LONG, "i"),
    "enqueuedTime": ("x-opt-enqueued-time", TIMESTAMP, "i"),
    "partitionKey": ("x-opt-partition-key", STRING, "s"),
    "publisher": ("x-opt-publisher", STRING, "s")}
"""The connector's columns that are Event Hubs' message annotations: name, AMQP type, child."""

_TEXT_FIELDS = ("to", "subject", "reply-to", "content-type", "content-encoding", "group-id",
                "reply-to-group-id")
_INTEGER = re.compile(r"-?[0-9]{1,19}\Z")


def _integer(text: str, low: int = _LONG[0], high: int = _LONG[1]) -> int:
    """A Java long written as JSON, within [low, high]."""
    if not _INTEGER.match(text) or not low <= int(text) <= high:
        raise ValueError(text)
    return int(text)


def _user_id(text: str) -> bytes:
    """A byte[] as json4s writes it: a JSON array of signed bytes."""
    items = json.loads(text)
    if type(items) is not list or any(type(b) is not int or not -128 <= b <= 127
                                      for b in items):
        raise ValueError(text)
    return bytes(b & 0xFF for b in items)


def _message_id(text: str) -> Decoded:
    """A string id is written as it is; binary, uuid and ulong ids as JSON arrays
    or objects, which a string id could also be: those are unreadable."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, (list, dict)):
        raise ValueError("a JSON array or object: not known to be a string id")
    return (STRING, "s", text)


_TYPED_FIELDS: dict[str, Callable[[str], Any]] = {
    **{name: str for name in _TEXT_FIELDS}, "user-id": _user_id,
    "absolute-expiry-time": lambda text: _integer(text, -SPARK_MAX_MS, SPARK_MAX_MS),
    "creation-time": lambda text: _integer(text, -SPARK_MAX_MS, SPARK_MAX_MS),
    # proton-j's getGroupSequence is the uint's intValue: wrapped back
    "group-sequence": lambda text: _integer(text, -(1 << 31), (1 << 32) - 1) & 0xFFFFFFFF}
_REST_KEYS = {name: encode_exact(name) for name in _TYPED_FIELDS}


def _properties(entries: _Entries, n: int) -> tuple[pa.StructArray, pa.Array]:
    """The properties struct from systemProperties, and the residual marking rows
    whose typed field could not be decoded."""
    rest: list = [None] * n
    arrays = []
    for field in PROPERTIES:
        values: list = [None] * n
        rows, raws = entries.last(field.name)
        pairs = [(row, raw) for row, raw in zip(rows.tolist(), raws) if raw is not None]
        if field.name in _ID_FIELDS:   # a null field is an absent one
            for row, raw in pairs:
                values[row] = _decode(_message_id, raw)
            arrays.append(_value_array(values, field.type))
            continue
        convert = _TYPED_FIELDS[field.name]
        for row, raw in pairs:
            try:
                values[row] = convert(raw)
            except Exception:   # noqa: BLE001 (as _decode: never the job's failure)
                rest[row] = (rest[row] or []) + [(_REST_KEYS[field.name], NOT_A_VALUE)]
        if field.type == SPARK_TIMESTAMP:
            values = [None if v is None else v * 1000 for v in values]
            arrays.append(pa.array(values, pa.int64()).cast(SPARK_TIMESTAMP))
        else:
            arrays.append(pa.array(values, field.type))
    struct = pa.StructArray.from_arrays(arrays, fields=list(PROPERTIES))
    return struct, pa.array(rest, REST_TYPE)


def _annotation(column: pa.Array, tag: int, child: str) -> pa.StructArray:
    """A connector column as the annotation it came from (timestamps in whole ms)."""
    if tag == TIMESTAMP:
        micros = column.cast(pa.int64()).to_pylist()
        cells = [None if v is None else (TIMESTAMP, "i", v // 1000) if v % 1000 == 0
                 else _UNREADABLE for v in micros]
    else:
        cells = [None if v is None else (tag, child, v) for v in column.to_pylist()]
    return _value_array(cells, value(child))


def from_event_hubs(df: Any, *, keys: Sequence[str], decoders: Mapping[str, str] | None = None,
                    system_keys: Sequence[str] | Mapping[str, str] | None = None,
                    keep: Sequence[str] | None = None) -> Any:
    """An azure-event-hubs-spark DataFrame as a message table: ``properties`` keys
    are application properties (``decoders[key]``: ``string``, the default, or
    ``json``); the offset, sequenceNumber, enqueuedTime, partitionKey and
    publisher columns are their x-opt-* message annotations; the AMQP properties
    fields come from ``systemProperties``, typed; ``system_keys`` (a list, or key
    -> decoder) names further systemProperties entries as message annotations."""
    chosen = _decoders(keys, decoders, "string", EVENT_HUBS_DECODERS, "keys")
    system = _decoders(system_keys or [], None, "string", EVENT_HUBS_DECODERS, "system_keys")
    fixed = {c: spec for c, spec in ANNOTATION_COLUMNS.items() if c in df.columns}
    taken = {spec[0] for spec in ANNOTATION_COLUMNS.values()} | set(PROPERTIES.names)
    if set(system) & taken:
        raise ValueError(f"system_keys: {sorted(set(system) & taken)} are mapped already")
    missing = [c for c, need in (("properties", chosen), ("systemProperties", True))
               if need and c not in df.columns]
    if missing:
        raise ValueError(f"the DataFrame has no {', '.join(missing)} column: is it the "
                         "Event Hubs connector's?")
    keep = kept_columns(df, keep)
    annotations = [pa.field(name, value(child)) for name, _, child in fixed.values()]
    annotations += list(_members(system))
    inputs = list(fixed) + ["systemProperties"] + (["properties"] if chosen else [])

    def convert(batch: pa.RecordBatch) -> dict[str, pa.Array]:
        n, system_entries = batch.num_rows, _Entries(batch.column("systemProperties"))
        out = dict(zip(("properties", "properties_rest"), _properties(system_entries, n)))
        if annotations:
            members = {name: _annotation(batch.column(c), tag, child)
                       for c, (name, tag, child) in fixed.items()}
            members.update({k: _decoded_column(system_entries, n, k, d)
                            for k, d in system.items()})
            out["message_annotations"] = _struct(members)
        if chosen:
            entries = _Entries(batch.column("properties"))
            out["application_properties"] = _struct(
                {k: _decoded_column(entries, n, k, d) for k, d in chosen.items()})
        return out
    return map_in_arrow(df, inputs, _layout(annotations, True, chosen), keep, convert)


__all__ = ["ANNOTATION_COLUMNS", "EVENT_HUBS_DECODERS", "KAFKA_DECODERS", "UNREADABLE",
           "from_event_hubs", "from_kafka", "json_scalar", "value"]
