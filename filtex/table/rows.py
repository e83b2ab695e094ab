"""Reading a message table back, row by row, and evaluating any filter over it.

A row view implements the reading protocol with plain dicts of exact filtex
values rebuilt from the tags, the children and the residuals, so every filter
of every dialect evaluates a table exactly as it evaluates the messages the
table was built from. It is the reference path: the kernels (``engine.py``)
must agree with it, and they hand it the rows they cannot answer.

A table may come from a stranger, so nothing here trusts it: every column is
validated by Arrow before it is read (``guard.py``), strings are read through
checked dictionaries, bytes through checked offsets, and a row whose value
cannot be what its tag says (a tag outside 0..25, a child missing or null
under its tag, invalid UTF-8, a code outside the dictionary, a decimal of the
wrong width, a composite or residual that does not decode to exactly one
value of its type, a key twice) is *malformed*: ``read_rows`` gives a
``Malformed`` with the reason in its place, ``batch_rows`` and ``messages``
refuse it with a ``ValueError`` naming the row, and the batch engine makes it
unknown.
"""
from __future__ import annotations

import uuid
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np
import pyarrow as pa
from proton import (Array, Described, byte, char, decimal32, decimal64, decimal128, float32,
                    int32, short, symbol, timestamp, ubyte, uint, ulong, ushort)

from ..amqp.codec import DecodeError, decode_value
from ..forms import RowMessage
from . import guard
from .schema import (ARRAY, BINARY, BOOLEAN, BYTE, CHAR, DECIMAL32, DECIMAL64, DECIMAL128,
                     DESCRIBED, DOUBLE, FLOAT, HEADER_TYPES, INT, KEY_CLASS, LIST, LONG,
                     MAP, NULL, PROPERTIES_TYPES, SECTION_COLUMNS, SHORT, STRING, SYMBOL,
                     TAG_NAMES, TIMESTAMP, UBYTE, UINT, ULONG, USHORT, UUID, check_version,
                     rest_column)


class Malformed(NamedTuple):
    """A row (or one value of it) that cannot be read, and why."""
    reason: str


def _exact(raw: bytes, what: str) -> Any:
    """The one AMQP value ``raw`` encodes, or ``Malformed``."""
    try:
        value, end = decode_value(raw)
    except DecodeError as exc:
        return Malformed(f"{what} does not decode: {exc}")
    if end != len(raw):
        return Malformed(f"{what} has {len(raw) - end} bytes after its value")
    return value


def _identity(value: Any) -> Any:
    return value


_REBUILD: dict[int, Callable[[Any], Any]] = {
    NULL: lambda _: None, BOOLEAN: _identity, UBYTE: ubyte, USHORT: ushort, UINT: uint,
    ULONG: ulong, BYTE: byte, SHORT: short, INT: int32, LONG: _identity, FLOAT: float32,
    DOUBLE: _identity, DECIMAL32: lambda x: decimal32(int.from_bytes(x, "big")),
    DECIMAL64: lambda x: decimal64(int.from_bytes(x, "big")), DECIMAL128: decimal128,
    CHAR: char, TIMESTAMP: timestamp, UUID: lambda x: uuid.UUID(bytes=x), BINARY: _identity,
    STRING: _identity, SYMBOL: symbol, LIST: _identity, MAP: _identity, ARRAY: _identity,
    DESCRIBED: _identity}
"""Tag -> the class that turns the child's Python value back into the value
(composites are decoded, and checked, before)."""

_CHILD_OF = {NULL: None, BOOLEAN: "b", ULONG: "u", FLOAT: "f", DOUBLE: "f", CHAR: "s",
             STRING: "s", SYMBOL: "s", DECIMAL32: "x", DECIMAL64: "x", DECIMAL128: "x",
             UUID: "x", BINARY: "x", LIST: "e", MAP: "e", ARRAY: "e", DESCRIBED: "e"}
_CHILD_OF.update({t: "i" for t in (UBYTE, USHORT, UINT, BYTE, SHORT, INT, LONG, TIMESTAMP)})

WIDTH = {DECIMAL32: 4, DECIMAL64: 8, DECIMAL128: 16, UUID: 16}
"""The byte width of the ``x`` child of the fixed-width tags (binary has any)."""
COMPOSITE_CLASS = {LIST: list, MAP: dict, ARRAY: Array, DESCRIBED: Described}

_ABSENT = object()
_NARROW_INTS = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
                pa.uint32())


# --- columns, read for some rows -------------------------------------------------------

def _fixed(array: pa.Array, rows: np.ndarray) -> list[Any]:
    """Python values of a fixed-width column (validated: safe to take)."""
    if len(rows) == len(array) and bool((rows == np.arange(len(rows))).all()):
        return list(array.to_pylist())
    return list(array.take(pa.array(rows, pa.int64())).to_pylist())


def _bytes(array: pa.Array, rows: np.ndarray) -> list[Any]:
    """bytes per row of a binary-like column, None where null, ``guard.MALFORMED``
    where its offsets lie."""
    valid = guard.valid_rows(array)[rows]
    bad = None
    if not guard.is_binary_like(array.type):
        array, bad = guard.as_binary(array)   # views: checked whole
    lo, hi, ok = guard.spans(array, rows)
    if bad is not None:
        ok &= ~bad[rows]
    raw = guard.data(array)
    return [bytes(raw[a:b]) if good else None if not v else guard.MALFORMED
            for a, b, good, v in zip(lo.tolist(), hi.tolist(), ok.tolist(), valid.tolist())]


def _binary_type(typ: pa.DataType) -> bool:
    return (guard.is_binary_like(typ) or getattr(pa.types, "is_binary_view", lambda t: False)(typ))


def _child_values(child: pa.Array, name: str, rows: np.ndarray) -> list[Any] | str:
    """A VALUE child's Python values for ``rows`` (None where null,
    ``guard.MALFORMED`` where unreadable), or why the child cannot hold values."""
    typ = child.type
    if name == "b":
        ok = pa.types.is_boolean(typ)
    elif name == "i":
        ok = typ in _NARROW_INTS
    elif name == "u":
        ok = pa.types.is_unsigned_integer(typ)
    elif name == "f":
        ok = pa.types.is_floating(typ)
    elif name == "s":
        ok = guard.is_strings(typ)
    else:
        ok = _binary_type(typ)
    if not ok:
        return f"of type {typ}"
    if name == "s":
        return guard.entries(guard.strings(child), rows)
    if name in ("x", "e"):
        return _bytes(child, rows)
    return _fixed(child, rows)


def _value_column(array: pa.Array, rows: np.ndarray) -> list[Any]:
    """The values of a VALUE struct column for ``rows``: the value, ``_ABSENT``
    where the tag is 0 (or the struct or its tag is null), or ``Malformed``."""
    typ = array.type
    names = [typ.field(i).name for i in range(typ.num_fields)] if pa.types.is_struct(typ) else []
    if "t" not in names or len(set(names)) != len(names) \
            or not pa.types.is_integer(typ.field(names.index("t")).type):
        return [Malformed(f"not a VALUE struct ({typ})")] * len(rows)
    columns = {name: array.field(i) for i, name in enumerate(names)}
    present = (guard.valid_rows(array) & guard.valid_rows(columns["t"]))[rows]
    tags = _fixed(columns["t"], rows)
    children: dict[str, Any] = {}
    out: list[Any] = []
    for j, tag in enumerate(tags):
        if not present[j] or tag == 0:
            out.append(_ABSENT)
            continue
        rebuild = _REBUILD.get(tag)
        if rebuild is None:
            out.append(Malformed(f"unknown AMQP type tag {tag}"))
            continue
        child = _CHILD_OF[tag]
        if child is None:
            out.append(None)
            continue
        values = children.get(child)
        if values is None:
            values = children[child] = (_child_values(columns[child], child, rows)
                                        if child in columns else "missing")
        name = TAG_NAMES[tag]
        if isinstance(values, str):
            out.append(Malformed(f"tag {name} without its child {child!r} ({values})"))
            continue
        value = values[j]
        if value is None:   # a value of a type has a value
            out.append(Malformed(f"tag {name} with a null {child!r}"))
        elif value is guard.MALFORMED:
            out.append(Malformed(f"tag {name} with an unreadable {child!r} (invalid UTF-8, "
                                 "a code outside the dictionary or offsets that lie)"))
        elif tag in WIDTH and len(value) != WIDTH[tag]:
            out.append(Malformed(f"tag {name} with {len(value)} bytes, not {WIDTH[tag]}"))
        elif tag in COMPOSITE_CLASS:
            decoded = _exact(value, f"tag {name}'s value")
            if not isinstance(decoded, Malformed) and type(decoded) is not COMPOSITE_CLASS[tag]:
                decoded = Malformed(f"tag {name} holding a {type(decoded).__name__}")
            out.append(decoded)
        else:
            out.append(rebuild(value))
    return out


def _values(array: pa.Array) -> list[Any]:
    """The values of a whole VALUE struct column, ``_ABSENT`` where the tag is
    0; a ``ValueError`` for a malformed one."""
    out = _value_column(array, np.arange(len(array)))
    for value in out:
        if isinstance(value, Malformed):
            raise ValueError(value.reason)
    return out


_INT_RANGE: dict[type, tuple[int, int]] = {ubyte: (0, 255), uint: (0, 2**32 - 1)}


def _typed(array: pa.Array, name: str, cls: type, rows: np.ndarray) -> list[Any]:
    """A typed header/properties field for ``rows``: its value, ``_ABSENT``
    where null, ``Malformed`` where the column cannot hold the field's type."""
    typ = array.type
    valid = guard.valid_rows(array)[rows]
    if cls is bool:
        ok = pa.types.is_boolean(typ)
    elif cls in _INT_RANGE:
        ok = pa.types.is_integer(typ)
    elif cls is timestamp:
        ok = pa.types.is_timestamp(typ) and typ.unit == "ms"
    elif cls in (str, symbol):
        ok = guard.is_strings(typ)
    else:
        ok = _binary_type(typ)
    if not ok:
        bad = Malformed(f"field {name!r} of type {typ}")
        return [bad if v else _ABSENT for v in valid.tolist()]
    if cls in (str, symbol):
        values = guard.entries(guard.strings(array), rows)
    elif cls is bytes:
        values = _bytes(array, rows)
    else:
        if cls is timestamp:
            array = array.cast(pa.int64())
        values = _fixed(array, rows)
    bounds = _INT_RANGE.get(cls)
    out: list[Any] = []
    for v, value in zip(valid.tolist(), values):
        if not v or value is None:
            out.append(_ABSENT)
        elif value is guard.MALFORMED:
            out.append(Malformed(f"field {name!r} unreadable (invalid UTF-8, a code outside "
                                 "the dictionary or offsets that lie)"))
        elif bounds is not None and not bounds[0] <= value <= bounds[1]:
            out.append(Malformed(f"field {name!r} out of its type's range: {value}"))
        else:
            out.append(value if cls is str or cls is bytes else cls(value))
    return out


def _fill(rows: list[Any], array: pa.Array, section: str, at: np.ndarray) -> None:
    """Add a section column's values for rows ``at`` to their dicts (or mark a
    row ``Malformed``)."""
    typ = array.type
    if not pa.types.is_struct(typ):
        _spoil(rows, f"column {section!r} is {typ}, not a struct")
        return
    names = [typ.field(i).name for i in range(typ.num_fields)]
    if len(set(names)) != len(names):
        _spoil(rows, f"column {section!r} has a key twice")
        return
    typed = HEADER_TYPES if section == "header" else PROPERTIES_TYPES \
        if section == "properties" else {}
    key_class = KEY_CLASS.get(section, str)
    present = guard.valid_rows(array)[at].tolist()
    for index, name in enumerate(names):
        column = array.field(index)
        if name in typed:
            values = _typed(column, name, typed[name][0], at)
        else:
            values = _value_column(column, at)
        key = key_class(name)
        for j, value in enumerate(values):
            if value is _ABSENT or not present[j] or isinstance(rows[j], Malformed):
                continue
            if isinstance(value, Malformed):
                rows[j] = Malformed(f"{section} {name!r}: {value.reason}")
            else:
                rows[j][key] = value


def _spoil(rows: list[Any], reason: str) -> None:
    for j, row in enumerate(rows):
        if not isinstance(row, Malformed):
            rows[j] = Malformed(reason)


def _fill_rest(rows: list[Any], array: pa.Array, section: str, at: np.ndarray) -> None:
    """Add the residual entries of rows ``at``: each key and value must decode
    to exactly one value, and no key may be in the row already."""
    typ = array.type
    valid = guard.valid_rows(array)[at]
    if not valid.any():
        return
    where = rest_column(section)
    if not (pa.types.is_map(typ) and _binary_type(typ.key_type)
            and _binary_type(typ.item_type)):
        for j in np.flatnonzero(valid).tolist():
            rows[j] = Malformed(f"column {where!r} is {typ}, not a map of binary")
        return
    offsets = np.asarray(array.offsets.to_numpy(zero_copy_only=False), np.int64)
    keys, items = array.keys, array.items
    for j in np.flatnonzero(valid).tolist():
        if isinstance(rows[j], Malformed):
            continue
        lo, hi = int(offsets[at[j]]), int(offsets[at[j] + 1])
        if not 0 <= lo <= hi <= min(len(keys), len(items)):
            rows[j] = Malformed(f"{where}: entries past the column")
            continue
        entries = np.arange(lo, hi)
        for raw_key, raw_value in zip(_bytes(keys, entries), _bytes(items, entries)):
            if not isinstance(raw_key, bytes) or not isinstance(raw_value, bytes):
                rows[j] = Malformed(f"{where}: a null or unreadable entry")
                break
            key, value = _exact(raw_key, f"a {where} key"), _exact(raw_value, f"a {where} value")
            bad = key if isinstance(key, Malformed) else value \
                if isinstance(value, Malformed) else None
            if bad is None:
                try:
                    twice = key in rows[j]
                except TypeError:
                    bad = Malformed(f"{where}: a key of type {type(key).__name__}")
                else:
                    if twice:
                        bad = Malformed(f"{where}: key {key!r:.60} twice in the row")
            if bad is not None:
                rows[j] = bad
                break
            rows[j][key] = value


def _bodies(array: pa.Array, name: str, at: np.ndarray) -> list[Any]:
    """A body column's decoded values (None where null), or ``Malformed``."""
    if not _binary_type(array.type):
        bad = Malformed(f"column {name!r} is {array.type}, not binary")
        return [bad if v else None for v in guard.valid_rows(array)[at].tolist()]
    out: list[Any] = []
    for raw in _bytes(array, at):
        if raw is None:
            out.append(None)
        elif raw is guard.MALFORMED:
            out.append(Malformed(f"{name}: offsets that lie"))
        else:
            value = _exact(raw, name)
            if name == "amqp_sequence" and not isinstance(value, (list, Malformed)):
                value = Malformed(f"amqp_sequence holding a {type(value).__name__}")
            out.append(value)
    return out


def _connections(array: pa.Array, at: np.ndarray) -> list[Any]:
    valid = guard.valid_rows(array)[at].tolist()
    if not guard.is_strings(array.type):
        bad = Malformed(f"column 'connection' is {array.type}, not a string")
        return [bad if v else None for v in valid]
    values = guard.entries(guard.strings(array), at)
    return [Malformed("connection: unreadable (invalid UTF-8 or a code outside the "
                      "dictionary)") if v is guard.MALFORMED else v for v in values]


def read_rows(batch: pa.RecordBatch, rows: np.ndarray | None = None
              ) -> list[RowMessage | Malformed]:
    """The row views of ``rows`` (all when None) of a batch of this layout
    version, a ``Malformed`` in place of each row that cannot be read (a column
    the batch lacks reads as an empty section, no body or no connection)."""
    check_version(batch.schema)
    n, names = batch.num_rows, batch.schema.names
    at = np.arange(n) if rows is None else np.asarray(rows, np.int64)
    count = len(at)
    broken = next((f"column {name!r} is malformed: {why}" for name, why in (
        (name, guard.sound(batch.column(i)) if len(batch.column(i)) == n
         else "of another length than the batch") for i, name in enumerate(names))
        if why is not None), None)
    if broken is not None:
        return [Malformed(broken)] * count
    sections: dict[str, list[Any]] = {}
    spoilt: list[Any] = [None] * count
    for section in SECTION_COLUMNS:
        found: list[Any] = [{} for _ in range(count)]
        if section in names:
            _fill(found, batch.column(section), section, at)
        if rest_column(section) in names:
            _fill_rest(found, batch.column(rest_column(section)), section, at)
        for j, row in enumerate(found):
            if isinstance(row, Malformed) and spoilt[j] is None:
                spoilt[j] = row
        sections[section] = found
    bodies = [_bodies(batch.column(name), name, at) if name in names else [None] * count
              for name in ("amqp_value", "amqp_sequence")]
    connections = (_connections(batch.column("connection"), at) if "connection" in names
                   else [None] * count)
    out: list[RowMessage | Malformed] = []
    for j in range(count):
        bad = spoilt[j] or next((v for v in (bodies[0][j], bodies[1][j], connections[j])
                                 if isinstance(v, Malformed)), None)
        if bad is not None:
            out.append(bad)
            continue
        out.append(RowMessage({s: sections[s][j] for s in SECTION_COLUMNS}, bodies[0][j],
                              bodies[1][j], connections[j]))
    return out


def batch_rows(batch: pa.RecordBatch) -> list[RowMessage]:
    """The row views of one record batch (of a table of this layout version; a
    column it lacks reads as an empty section, no body or no connection); a
    malformed row is a ``ValueError`` naming it."""
    views = read_rows(batch)
    for number, view in enumerate(views):
        if isinstance(view, Malformed):
            raise ValueError(f"row {number} of the batch is malformed: {view.reason}")
    return views   # type: ignore[return-value]


def _batches(data: pa.Table | pa.RecordBatch) -> list[pa.RecordBatch]:
    check_version(data.schema)
    return data.to_batches() if isinstance(data, pa.Table) else [data]


def messages(data: pa.Table | pa.RecordBatch) -> Iterator[RowMessage]:
    """The row views of a message table (or one batch of one), in order."""
    for batch in _batches(data):
        yield from batch_rows(batch)


def evaluate_rows(flt: Any, data: pa.Table | pa.RecordBatch,
                  receiving_connection: Any = None) -> pa.BooleanArray:
    """``flt.evaluate`` of every row view: true, false, or null (unknown; a
    malformed row is unknown). The reference the kernels are tested against
    (``engine.evaluate`` is the fast path)."""
    evaluate = flt.evaluate
    results = [None if isinstance(row, Malformed) else evaluate(row, receiving_connection)
               for batch in _batches(data) for row in read_rows(batch)]
    return pa.array(results, pa.bool_())


__all__ = ["Malformed", "RowMessage", "batch_rows", "evaluate_rows", "messages", "read_rows"]
