"""A field of a record batch as the kernel reads it: zero-copy numpy views.

Every field becomes the same seven things, whatever its column: a ``uint8``
tag per row, and the typed children ``i`` (int64), ``u`` (uint64), ``f``
(float64), ``c`` (int32 dictionary codes) and ``b`` (bit-packed booleans),
each with a validity bitmap whose bit ``r`` is row ``r``. A VALUE struct has
them already (its ``t`` child and children); a typed header or properties
column has one tag where it is valid and absent elsewhere; a field with no
column is absent in every row (its rows with residual entries go to the
per-message engine, as every row with a residual entry in a section the
filter reads does).

A table may come from a stranger (``guard.py``): strings are read through a
checked dictionary (an entry that is not valid UTF-8 is null), and the atom
pass sends back every row whose tag is outside 0..25, whose child is missing
or null under its tag, or whose code is outside the dictionary or on a null
entry (``atomcode.py``), to the row views, which refuse it: unknown. The
kernels never read the ``x`` and ``e`` children; for the atoms that answer
their tags from the tag alone (``EXISTS``, ``IS NULL``), ``deep`` gives tag
255 (back) to the rows whose bytes are not what their tag says (null, a
decimal of the wrong width, offsets that lie, a composite that does not
decode: ``scan.unreadable_bytes``). A column of a type the kernel does not
read sends every row to the per-message engine.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..table import guard
from ..table.schema import (ABSENT, BINARY, BOOLEAN, HEADER_TYPES, KEYED, PROPERTIES_TYPES,
                     SCALAR_TAGS, STRING, TIMESTAMP, rest_column)

_CHILD_TAGS = {"b": {2}, "i": {3, 4, 5, 7, 8, 9, 10, 17}, "u": {6}, "f": {11, 12},
               "s": {16, 20, 21}, "x": {13, 14, 15, 18, 19}, "e": {22, 23, 24, 25}}


class FieldArrays(NamedTuple):
    tags: np.ndarray
    i: np.ndarray
    iv: np.ndarray
    u: np.ndarray
    uv: np.ndarray
    f: np.ndarray
    fv: np.ndarray
    c: np.ndarray
    cv: np.ndarray
    b: np.ndarray
    bv: np.ndarray
    dictionary: pa.Array | None   # of the string codes ``c``


_EMPTY = {np.int64: np.zeros(0, np.int64), np.uint64: np.zeros(0, np.uint64),
          np.float64: np.zeros(0, np.float64), np.int32: np.zeros(0, np.int32),
          np.uint8: np.zeros(0, np.uint8)}


def _bits(buf: Any, offset: int, n: int) -> np.ndarray:
    """A bitmap whose bit ``r`` is row ``r`` (all ones when ``buf`` is None)."""
    nbytes = (n + 7) >> 3
    if buf is None:
        return np.full(nbytes, 255, np.uint8)
    raw = np.frombuffer(buf, np.uint8)
    if offset % 8 == 0:
        return raw[offset >> 3: (offset >> 3) + nbytes]
    bits = np.unpackbits(raw, bitorder="little")[offset: offset + n]
    return np.packbits(bits, bitorder="little")


def _values(array: pa.Array, dtype: Any) -> np.ndarray:
    return np.frombuffer(array.buffers()[1], dtype)[array.offset: array.offset + len(array)]


def _validity(array: pa.Array) -> np.ndarray:
    """As pyarrow reads it: a null count of 0 means no nulls, whatever the bitmap."""
    return _bits(None if array.null_count == 0 else array.buffers()[0], array.offset,
                 len(array))


def _strings(array: pa.Array) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """(codes, validity, dictionary) of a string column of any kind; codes may
    be outside the dictionary and entries null (``guard.strings``)."""
    if not guard.is_strings(array.type):
        raise _Unreadable
    if pa.types.is_dictionary(array.type) and array.type.index_type == pa.int32():
        return (_values(array.indices, np.int32), _validity(array.indices),
                guard.clean_dictionary(array.dictionary))
    found = guard.strings(array)
    return found.codes, np.packbits(found.valid, bitorder="little"), found.dictionary


class _Unreadable(Exception):
    """A column of a type the kernel does not read: its rows go row by row."""


def _tags_where_valid(array: pa.Array, tag: int) -> np.ndarray:
    valid = guard.valid_rows(array)
    return np.where(valid, np.uint8(tag), np.uint8(ABSENT)).astype(np.uint8)


def _empty(n: int, tags: np.ndarray | None = None) -> FieldArrays:
    nb = (n + 7) >> 3
    zeros = np.zeros(nb, np.uint8)
    return FieldArrays(np.zeros(n, np.uint8) if tags is None else tags,
                       _EMPTY[np.int64], zeros, _EMPTY[np.uint64], zeros, _EMPTY[np.float64],
                       zeros, _EMPTY[np.int32], zeros, _EMPTY[np.uint8], zeros, None)


def _column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    index = batch.schema.get_field_index(name)
    return None if index < 0 else batch.column(index)


def _member(struct: pa.Array, key: str) -> pa.Array | None:
    typ = struct.type
    index = typ.get_field_index(key) if pa.types.is_struct(typ) else -1
    if index < 0:
        return None
    child = struct.field(index)
    if struct.null_count:   # a null struct: its members are absent
        child = pc.if_else(struct.is_valid(), child, pa.nulls(len(child), child.type))
    return child


_X_WIDTHS = np.full(26, -3, np.int64)
_X_WIDTHS[[13, 14, 15, 18, 19]] = [4, 8, 16, 16, -1]
_E_WIDTHS = np.full(26, -3, np.int64)
_E_WIDTHS[[22, 23, 24, 25]] = -2
_NONE = np.zeros(0, np.uint8)


def _checked(out: FieldArrays, deep: dict[str, pa.Array]) -> FieldArrays:
    """``out`` with tag 255 for every row whose ``x`` or ``e`` bytes are not
    what its tag says; ``deep`` maps ``x``/``e`` to the child to check."""
    from . import scan
    tags, private = out.tags, False
    n = len(tags)
    for name, child in deep.items():
        widths = _X_WIDTHS if name == "x" else _E_WIDTHS
        if guard.is_binary_like(child.type):
            offsets, _ = guard._offsets(child)
            buffer = child.buffers()[2]
            data = _NONE if buffer is None else np.frombuffer(buffer, np.uint8)
            valid = _validity(child)
        else:   # a type the kernel does not read: every row of its tags goes back
            offsets, data, valid = np.zeros(n + 1, np.int64), _NONE, \
                np.zeros((n + 7) >> 3, np.uint8)
        if scan.unreadable_bytes(tags, widths, offsets, data, valid, _NONE):
            if not private:
                tags, private = tags.copy(), True
            scan.unreadable_bytes(tags, widths, offsets, data, valid, tags)
    return out._replace(tags=tags)


_BYTES_TAGS = {"x": [13, 14, 15, 18, 19], "e": [22, 23, 24, 25]}
"""Tags of the ``x`` and ``e`` children, which the kernels never read."""


def checked_children(modes: np.ndarray, fallback: int) -> set[str]:
    """The ``x``/``e`` children whose bytes ``field_arrays`` must check for an
    atom (its ``deep``): those of the tags it answers without the per-message
    engine (``modes``: the tag plan's; ``fallback``: its FALLBACK mode), which
    it answers from the tag alone."""
    return {child for child, tags in _BYTES_TAGS.items() if (modes[tags] != fallback).any()}


def possible_tags(schema: pa.Schema, field: tuple) -> set[int]:
    """The tags a field's column can hold, from the schema alone."""
    section, key = field
    if section == "connection":
        return {ABSENT, STRING} if "connection" in schema.names else {ABSENT}
    if section in ("none", "body"):
        return {ABSENT}
    if section not in schema.names or not isinstance(key, str):
        return {ABSENT}
    typ = schema.field(section).type
    index = typ.get_field_index(key) if pa.types.is_struct(typ) else -1
    if index < 0:
        return {ABSENT}
    member = typ.field(index).type
    if section in ("header", "properties") and key in {**HEADER_TYPES, **PROPERTIES_TYPES}:
        cls = {**HEADER_TYPES, **PROPERTIES_TYPES}[key][0]
        return {ABSENT, SCALAR_TAGS[cls]}
    if not pa.types.is_struct(member):
        return {ABSENT}
    names = {member.field(i).name for i in range(member.num_fields)}
    tags = {0, 1}
    for child, child_tags in _CHILD_TAGS.items():
        if child in names:
            tags |= child_tags
    return tags


def field_arrays(batch: pa.RecordBatch, field: tuple,
                 deep: set[str] | None = None) -> FieldArrays:
    """The kernel's view of one field in ``batch`` (whose columns are sound:
    ``guard.sound``); ``deep``: the children among ``x`` and ``e`` whose bytes
    to check (for atoms that answer their tags without reading them)."""
    n = batch.num_rows
    section, key = field
    try:
        if section == "connection":
            column = _column(batch, "connection")
            if column is None:
                return _empty(n)
            c, cv, dictionary = _strings(column)
            return _empty(n, _tags_where_valid(column, STRING))._replace(
                c=c, cv=cv, dictionary=dictionary)
        if section == "body":   # AMQP-encoded: present bodies go row by row
            column = _column(batch, key)
            if column is None or guard.valid_count(column) == 0:
                return _empty(n)
            return _empty(n, _tags_where_valid(column, 255))
        if section == "none" or not isinstance(key, str):
            return _empty(n)
        struct = _column(batch, section)
        member = None if struct is None else _member(struct, key)
        if member is None:
            return _empty(n)
        typed = {**HEADER_TYPES, **PROPERTIES_TYPES}
        if section in ("header", "properties") and key in typed:
            return _typed(member, SCALAR_TAGS[typed[key][0]], typed[key][1], deep)
        return _value_struct(member, deep)
    except _Unreadable:
        return _empty(n, np.full(n, 255, np.uint8))   # every row row by row


def _typed(array: pa.Array, tag: int, layout: pa.DataType,
           deep: set[str] | None) -> FieldArrays:
    """A typed header or properties field: its layout's type (a string field of
    any string type), else every row goes to the per-message engine."""
    n = len(array)
    tags = _tags_where_valid(array, tag)
    out = _empty(n, tags)
    valid = _validity(array)
    typ = array.type
    if tag in (16, 20, 21):
        c, cv, dictionary = _strings(array)
        return out._replace(c=c, cv=cv, dictionary=dictionary)
    if tag == BINARY:
        return _checked(out, {"x": array}) if deep and "x" in deep else out
    if tag == BOOLEAN:
        if not pa.types.is_boolean(typ):
            raise _Unreadable
        return out._replace(b=_bits(array.buffers()[1], array.offset, n), bv=valid)
    if tag == TIMESTAMP:
        if not pa.types.is_timestamp(typ) or typ.unit != "ms":
            raise _Unreadable
        return out._replace(i=_values(array, np.int64), iv=valid)
    if typ != layout:
        raise _Unreadable
    return out._replace(i=array.cast(pa.int64()).fill_null(0).to_numpy(), iv=valid)


_CHILD_TYPES = {"i": pa.int64(), "u": pa.uint64(), "f": pa.float64(), "b": pa.bool_()}


def _value_struct(member: pa.Array, deep: set[str] | None) -> FieldArrays:
    n = len(member)
    typ = member.type
    if not pa.types.is_struct(typ) or typ.get_field_index("t") != 0 \
            or typ.field(0).type != pa.int8():
        raise _Unreadable
    t = member.field(0)
    if t.null_count or member.null_count:   # a null tag or VALUE reads as absent
        t = pc.if_else(pc.and_kleene(member.is_valid(), t.is_valid()), t, pa.scalar(0, pa.int8()))
        t = t.fill_null(0)
    tags = _values(t, np.uint8)
    out = _empty(n, tags)
    for name in ("i", "u", "f", "b", "s"):
        index = typ.get_field_index(name)
        if index < 0:
            continue
        child = member.field(index)
        if name == "s":
            c, cv, dictionary = _strings(child)
            out = out._replace(c=c, cv=cv, dictionary=dictionary)
            continue
        if child.type != _CHILD_TYPES[name]:
            raise _Unreadable
        valid = _validity(child)
        if name == "b":
            out = out._replace(b=_bits(child.buffers()[1], child.offset, n), bv=valid)
        elif name == "i":
            out = out._replace(i=_values(child, np.int64), iv=valid)
        elif name == "u":
            out = out._replace(u=_values(child, np.uint64), uv=valid)
        else:
            out = out._replace(f=_values(child, np.float64), fv=valid)
    if deep:   # (a tag whose child the struct lacks is not possible: back already)
        present = {name: member.field(name) for name in sorted(deep)
                   if typ.get_field_index(name) >= 0}
        return _checked(out, present) if present else out
    return out


def residuals(batch: pa.RecordBatch, fields: tuple) -> list[pa.Array]:
    """The residual columns with entries of the sections the filter reads."""
    sections = {f[0] for f in fields if f[0] in ("header", "properties") + KEYED}
    found = []
    for section in sorted(sections):
        rest = _column(batch, rest_column(section))
        if rest is not None and guard.valid_count(rest):
            found.append(rest)
    return found


def back_rows(batch: pa.RecordBatch, fields: tuple) -> np.ndarray:
    """uint8 per row: 1 where a section the filter reads has residual entries."""
    back = np.zeros(batch.num_rows, np.uint8)
    for rest in residuals(batch, fields):
        back |= guard.valid_rows(rest).view(np.uint8)
    return back
