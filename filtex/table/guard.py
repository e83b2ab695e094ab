"""Arrow arrays from outside, checked before anything reads them.

A message table may come from a stranger: an Arrow IPC file (pyarrow reads one
without validating it: a child shorter than its struct, an offset past the data
and a negative dictionary code all arrive as they are), a Parquet file, another
program's table. ``to_pylist``, ``take`` and ``dictionary_encode`` trust what
they are given and read out of bounds or raise for a whole batch. So every
reader of a message table (the kernels' column views, the row views, flat
tables) goes through this module first:

- ``sound``: Arrow's structural validation (buffer sizes, lengths of children
  and offsets' ends; cheap, it reads no values) of an array before any read;
- ``strings``: any string column (plain, large, view, or a dictionary of them
  with indices of any integer width) as int32 codes, their validity and a
  dictionary of valid UTF-8 entries: an entry that is not valid UTF-8, or whose
  offsets lie, is null, and a code that is outside the dictionary stays as it is
  (every reader checks ``0 <= code < len(dictionary)``) or is -1;
- ``spans``: the (start, end) of some rows of a binary column, each checked to
  lie inside the data, so a row's bytes are read only when they are there.

What cannot be read this way is *malformed*: its rows are unknown to every
engine (``docs/message-table.md``), never read.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_is_view = getattr(pa.types, "is_string_view", lambda t: False)
_is_binary_view = getattr(pa.types, "is_binary_view", lambda t: False)


def sound(array: pa.Array) -> str | None:
    """None when Arrow's structural validation passes, else what it says."""
    try:
        array.validate()
    except (pa.ArrowException, ValueError) as exc:
        return str(exc).splitlines()[0]
    return None


def valid_rows(array: pa.Array) -> np.ndarray:
    """bool per row, as pyarrow reads it (a null count of 0 means no nulls,
    whatever the bitmap holds)."""
    if array.null_count == 0:
        return np.ones(len(array), bool)
    return np.asarray(array.is_valid().to_numpy(zero_copy_only=False), bool)


def valid_count(array: pa.Array) -> int:
    """How many rows are valid, as pyarrow reads them (from the bitmap, not from
    the null count a file claims, unless it claims none)."""
    n = len(array)
    bitmap = array.buffers()[0] if array.null_count else None
    if bitmap is None:
        return n - array.null_count if array.null_count == n else n
    first = array.offset
    raw = np.frombuffer(bitmap, np.uint8)[first >> 3: (first + n + 7) >> 3]
    bits = np.unpackbits(raw[:1], bitorder="little") if len(raw) else raw
    count = int(np.bitwise_count(raw).sum())
    count -= int(bits[: first & 7].sum()) if len(raw) else 0
    tail = (first + n) & 7
    if tail and len(raw):
        count -= int(np.unpackbits(raw[-1:], bitorder="little")[tail:].sum())
    return count


def is_string_like(typ: pa.DataType) -> bool:
    return pa.types.is_string(typ) or pa.types.is_large_string(typ) or _is_view(typ)


def is_binary_like(typ: pa.DataType) -> bool:
    """Types whose values are bytes read through offsets (``spans``)."""
    return bool(pa.types.is_binary(typ) or pa.types.is_large_binary(typ))


def is_strings(typ: pa.DataType) -> bool:
    """A column ``strings`` reads: string-like, or a dictionary of string-like."""
    if pa.types.is_dictionary(typ):
        return is_string_like(typ.value_type) and pa.types.is_integer(typ.index_type)
    return is_string_like(typ)


class Strings(NamedTuple):
    """A string column as codes into a dictionary of valid entries."""
    codes: np.ndarray        # int32 per row; may be outside the dictionary (malformed)
    valid: np.ndarray        # bool per row
    dictionary: pa.Array     # pa.string(); null where an entry is not valid UTF-8


def _offsets(array: pa.Array) -> tuple[np.ndarray, int]:
    """The offsets (one more than the rows) and the data size of a binary or
    string array, as they are (``spans`` checks them)."""
    large = pa.types.is_large_binary(array.type) or pa.types.is_large_string(array.type)
    buffers = array.buffers()
    width = 8 if large else 4
    n = len(array)
    if buffers[1] is None or n == 0:
        return np.zeros(n + 1, np.int64), 0
    offsets = np.frombuffer(buffers[1], np.int64 if large else np.int32,
                            count=n + 1, offset=array.offset * width)
    return offsets, 0 if buffers[2] is None else buffers[2].size


def spans(array: pa.Array, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                     np.ndarray]:
    """(starts, ends, ok) of ``rows`` (all rows when None) of a binary or string
    array: ``ok`` is False where the offsets lie (decreasing, negative, past the
    data). Null rows are not ok either (they have no bytes)."""
    offsets, size = _offsets(array)
    if rows is None:
        lo, hi = offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64)
        valid = valid_rows(array)
    else:
        lo, hi = offsets[rows].astype(np.int64), offsets[rows + 1].astype(np.int64)
        valid = valid_rows(array)[rows]
    ok = valid & (lo >= 0) & (lo <= hi) & (hi <= size)
    return lo, hi, ok


def data(array: pa.Array) -> memoryview:
    """The data bytes of a binary or string array (read only through ``spans``)."""
    buffer = array.buffers()[2]
    return memoryview(b"") if buffer is None else memoryview(buffer)


def _rebuilt(array: pa.Array, ok: np.ndarray) -> pa.Array:
    """A binary array of ``array``'s rows where ``ok``, null elsewhere, copied
    through checked spans (for columns whose offsets lie)."""
    lo, hi, _ = spans(array)
    raw = np.frombuffer(data(array), np.uint8)
    lengths = np.where(ok, hi - lo, 0)
    offsets = np.zeros(len(array) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    index = np.repeat(lo - offsets[:-1], lengths) + np.arange(offsets[-1])
    values = raw[index] if len(index) else np.zeros(0, np.uint8)
    return pa.Array.from_buffers(
        pa.large_binary(), len(array), [pa.array(ok, pa.bool_()).buffers()[1],
                                        pa.py_buffer(offsets.tobytes()),
                                        pa.py_buffer(values.tobytes())],
        null_count=int((~ok).sum()))


def as_binary(array: pa.Array) -> tuple[pa.Array, np.ndarray | None]:
    """A string, binary or view array as a binary array safe to read whole, and
    the rows whose bytes could not be read (None when all could)."""
    typ = array.type
    if _is_view(typ) or _is_binary_view(typ):
        try:
            array.validate(full=True)
        except (pa.ArrowException, ValueError):
            bad = valid_rows(array)
            return pa.nulls(len(array), pa.binary()), bad
        return array.cast(pa.large_binary() if _is_binary_view(typ) else pa.large_string()
                          ).view(pa.large_binary()), None
    if pa.types.is_string(typ):
        array = array.view(pa.binary())
    elif pa.types.is_large_string(typ):
        array = array.view(pa.large_binary())
    try:
        array.validate(full=True)   # offsets only, for binary: no UTF-8 check
        return array, None
    except (pa.ArrowException, ValueError):
        pass
    _, _, ok = spans(array)
    valid = valid_rows(array)
    return _rebuilt(array, ok & valid), valid & ~ok


def clean_dictionary(dictionary: pa.Array) -> pa.Array:
    """A string dictionary as ``pa.string()`` whose entries are all valid UTF-8
    or null (an entry that is not valid UTF-8, or whose offsets lie, is null)."""
    typ = dictionary.type
    try:
        dictionary.validate(full=True)   # offsets and UTF-8: cheap, a dictionary is small
        if pa.types.is_string(typ):
            return dictionary
        return dictionary.cast(pa.string())
    except (pa.ArrowException, ValueError):
        pass
    raw, _ = as_binary(dictionary)
    entries = []
    for value in raw.to_pylist():
        try:
            entries.append(None if value is None else value.decode("utf-8"))
        except UnicodeDecodeError:
            entries.append(None)
    return pa.array(entries, pa.string())


def codes(indices: pa.Array, size: int) -> np.ndarray:
    """Dictionary indices of any integer type as int32 codes: int32 indices as
    they are (zero-copy), others with every code outside 0..size-1 as -1."""
    n = len(indices)
    if n == 0:
        return np.zeros(0, np.int32)
    width = indices.type.bit_width // 8
    values = np.frombuffer(indices.buffers()[1], indices.type.to_pandas_dtype(), count=n,
                           offset=indices.offset * width)
    if indices.type == pa.int32():
        return values
    wide = values.astype(np.int64) if values.dtype != np.uint64 else \
        np.where(values > np.uint64(size), np.uint64(size), values).astype(np.int64)
    return np.where((wide >= 0) & (wide < size), wide, -1).astype(np.int32)


def strings(array: pa.Array) -> Strings:
    """Any string column as int32 codes, validity and a clean dictionary
    (``is_strings`` says which columns are)."""
    if pa.types.is_dictionary(array.type):
        dictionary = clean_dictionary(array.dictionary)
        indices = array.indices
        return Strings(codes(indices, len(dictionary)), valid_rows(indices), dictionary)
    raw, bad = as_binary(array)
    encoded = pc.dictionary_encode(raw)
    dictionary = clean_dictionary(encoded.dictionary.cast(pa.large_binary())
                                  .view(pa.large_string()))
    found = codes(encoded.indices, len(dictionary))
    valid = valid_rows(array)
    if bad is not None:   # rows whose bytes could not be read: a code outside the dictionary
        found = np.where(bad, np.int32(-1), found).astype(np.int32)
    return Strings(found, valid, dictionary)


def entries(found: Strings, rows: np.ndarray) -> list[Any]:
    """The string of each of ``rows``: a ``str``, None where the row is null, or
    ``MALFORMED`` where its code is outside the dictionary or its entry null."""
    size = len(found.dictionary)
    table = np.empty(size + 2, object)
    table[:size] = [MALFORMED if s is None else s for s in found.dictionary.to_pylist()]
    table[size], table[size + 1] = MALFORMED, None
    code = found.codes[rows].astype(np.int64)
    index = np.where((code >= 0) & (code < size), code, size)
    return list(table[np.where(found.valid[rows], index, size + 1)])


def _uncopyable(array: pa.Array, rows: np.ndarray) -> np.ndarray:
    """bool per one of ``rows``: copying that row of ``array`` (Arrow's take or
    filter) would read out of bounds (offsets that lie, here or in a child)."""
    typ = array.type
    bad = np.zeros(len(rows), bool)
    if len(rows) == 0 or pa.types.is_dictionary(typ):   # a copy takes the indices only
        return bad
    if is_binary_like(typ) or pa.types.is_string(typ) or pa.types.is_large_string(typ):
        offsets, size = _offsets(array)
        lo, hi = offsets[rows].astype(np.int64), offsets[rows + 1].astype(np.int64)
        return np.asarray(~((lo >= 0) & (lo <= hi) & (hi <= size)), bool)
    if pa.types.is_struct(typ):
        for i in range(typ.num_fields):
            bad |= _uncopyable(array.field(i), rows)
        return bad
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_map(typ):
        offsets = np.asarray(array.offsets.to_numpy(zero_copy_only=False), np.int64)
        values = array.values
        lo, hi = offsets[rows], offsets[rows + 1]
        bad = np.asarray(~((lo >= 0) & (lo <= hi) & (hi <= len(values))), bool)
        good = np.flatnonzero(~bad)
        lengths = (hi - lo)[good]
        if lengths.sum():
            inner = np.repeat(lo[good] - np.cumsum(lengths) + lengths, lengths) \
                + np.arange(lengths.sum())
            owner = np.repeat(good, lengths)
            broken = _uncopyable(values, inner)
            bad[owner[broken]] = True
        return bad
    if typ.num_fields == 0 and not _is_view(typ) and not _is_binary_view(typ) \
            and pa.types.is_primitive(typ):
        return bad
    try:   # views, unions and the rest: Arrow's full validation, all or nothing
        array.validate(full=True)
    except (pa.ArrowException, ValueError):
        bad[:] = True
    return bad


def uncopyable(data: pa.Table | pa.RecordBatch, rows: np.ndarray) -> str | None:
    """Why some of ``rows`` of ``data`` cannot be copied (by ``filter`` or
    ``take``) without reading out of bounds, or None when all can."""
    rows = np.asarray(rows, np.int64)
    for index, name in enumerate(data.schema.names):
        column = data.column(index)
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        start = 0
        for chunk in chunks:
            why = sound(chunk)
            mine = rows[(rows >= start) & (rows < start + len(chunk))] - start
            if why is None and len(mine):
                bad = _uncopyable(chunk, mine)
                if bad.any():
                    why = f"row {int(mine[bad][0]) + start}: offsets that lie"
            if why is not None and len(mine):
                return f"column {name!r}: {why}"
            start += len(chunk)
    return None


class _Malformed:
    """A value that cannot be read (its reason is said by the reader)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MALFORMED"


MALFORMED = _Malformed()


__all__ = ["MALFORMED", "Strings", "as_binary", "clean_dictionary", "codes", "data",
           "entries", "is_binary_like", "is_string_like", "is_strings", "sound", "spans",
           "strings", "uncopyable", "valid_count", "valid_rows"]
