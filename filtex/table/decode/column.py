"""The Python side of the decoder: chunks, requested keys, the kernel's state
and outputs turned into a message table."""
from __future__ import annotations

import secrets
from typing import Any, Iterable, Mapping, NamedTuple

import numpy as np
import pyarrow as pa

from ...message import HEADER_FIELDS, PROPERTIES_FIELDS
from ..schema import (CHILD_OF_TAG, CHILD_ORDER, KEYED, REST_TYPE, STRINGS, TIMESTAMP_MS,
                      UBYTE, UINT, message_schema, rest_column, value_type)
from .kernel import (_bitmap, _bool_bitmap, _collect, _dictionaries,
                     _gather, _kernel, _seen_tags)
from .primitives import (N_HEADER, OK, _HEADER_WANT, _PROPERTIES_WANT, _grown, _grown_bytes,
                         _key_table, new_keys)



class Decoded(NamedTuple):
    table: pa.Table
    """The message table (schema version 1), one row per input cell."""
    undecoded: np.ndarray
    """bool[n]: rows the kernel could not decode exactly; their values in the
    table are all absent and must be read from the original bytes."""



# --- Python side ----------------------------------------------------------------

def _chunks(column: Any) -> list[pa.Array]:
    if isinstance(column, pa.ChunkedArray):
        chunks = list(column.chunks)
        typ = column.type
    elif isinstance(column, pa.Array):
        chunks = [column]
        typ = column.type
    else:
        raise TypeError("decode_column reads a pyarrow BinaryArray, LargeBinaryArray or a "
                        f"ChunkedArray of them, not {type(column).__name__}")
    if not (pa.types.is_binary(typ) or pa.types.is_large_binary(typ)):
        raise TypeError(f"decode_column reads binary cells (whole AMQP messages), not {typ}")
    return chunks


def _readonly(array: np.ndarray) -> np.ndarray:
    """One array type per argument: numba compiles a function per signature,
    and read-only (zero-copy Arrow buffers) is part of the type."""
    if array.flags.writeable:
        array = array.view()
        array.flags.writeable = False
    return array


_EMPTY_U8 = _readonly(np.zeros(0, np.uint8))


def _buffers(chunk: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The chunk's data bytes, its n+1 offsets and its validity bitmap (empty:
    none), zero-copy (the offsets of a binary array widened to 64 bits, so
    both binary types share one compiled kernel), and the bit offset of its
    first row."""
    n = len(chunk)
    validity, offsets, data = chunk.buffers()[:3]
    if n:
        width = np.int64 if pa.types.is_large_binary(chunk.type) else np.int32
        offs = np.frombuffer(offsets, width)[chunk.offset:chunk.offset + n + 1]
    else:
        offs = np.zeros(1, np.int64)
    offs = _readonly(offs.astype(np.int64, copy=False))
    raw = _EMPTY_U8 if data is None else np.frombuffer(data, np.uint8)
    bits = _EMPTY_U8 if validity is None or chunk.null_count == 0 else \
        np.frombuffer(validity, np.uint8)
    return _readonly(raw), offs, _readonly(bits), chunk.offset


def _requested(keys: Any) -> dict[str, list[str]]:
    """The keys asked for, by section, each once, in the order given."""
    if not isinstance(keys, Mapping):
        raise TypeError("keys maps section names to the keys to decode")
    out: dict[str, list[str]] = {}
    for section, names in keys.items():
        if section not in KEYED:
            raise ValueError(f"keys names the keyed sections ({', '.join(KEYED)}), "
                             f"not {section!r}")
        if isinstance(names, (str, bytes)):
            raise TypeError(f"keys[{section!r}] is an iterable of keys, not one string")
        unique: dict[str, None] = {}
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"a key to decode is a str, not {type(name).__name__}")
            try:
                str(name).encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"key {name!r} is not valid Unicode") from None
            unique.setdefault(str(name), None)
        if unique:
            out[section] = list(unique)
    return out


_STATE_ENTRIES = 1024


def _new_state(nslots: int) -> tuple:
    """The string dictionaries' tables, empty, and (``meta[3]``) a secret salt
    for their hashes, new each time: strings a sender crafted to collide in
    one run's table do not in another's (hash flooding: quadratic time)."""
    ht = np.full(4 * 2 * _STATE_ENTRIES, -1, np.int64)
    arena = np.empty(1 << 16, np.uint8)
    log = np.empty(_STATE_ENTRIES, np.int64)
    meta = np.zeros(4, np.int64)
    meta[3] = secrets.randbits(62)
    counts = np.zeros(nslots, np.int64)
    return ht, arena, log, meta, counts


def _collect_keys(parts: list[tuple], prefix: int) -> dict[str, list[str]]:
    ht, arena, log, meta, counts = _new_state(4)
    for raw, offs, bits, bit0, n in parts:
        row = 0
        while row < n:
            row, strings, size = _collect(raw, offs, prefix, bits, bit0, row, n, ht, arena, log,
                                          meta, counts)
            if row < n:
                ht, arena, log = _grown(ht, arena, log, meta, strings, size)
    offsets, data, base = _dictionaries(log, int(meta[0]), arena, counts)
    found: dict[str, list[str]] = {}
    for sec, section in enumerate(KEYED):
        for i in range(int(base[sec]), int(base[sec + 1])):
            found.setdefault(section, []).append(
                bytes(data[offsets[i]:offsets[i + 1]]).decode())
    return found


def decode_column(column: Any, keys: dict[str, Iterable[str]] | None = None, *,
                  body: bool = False, fields: Iterable[tuple[str, str]] | None = None,
                  prefix: int = 0, checked: bool = True) -> Decoded:
    """The message table of a column of AMQP-encoded messages (one message a
    cell), and the rows the kernel could not decode exactly.

    ``column``: a ``pa.BinaryArray`` or ``pa.LargeBinaryArray`` (sliced or
    not), or a ``pa.ChunkedArray`` of them; a null cell is undecoded.
    ``keys`` maps keyed section names (``delivery_annotations``,
    ``message_annotations``, ``application_properties``, ``footer``) to the
    keys (str) to decode, each a VALUE struct with the children the data needs;
    a section not named is not read at all. None decodes every key found (a
    first pass collects them, in the order first seen). Header and properties
    are walked (every field checked) unless ``checked`` is false: then only a
    list one of the ``fields`` is in (the per-message engine decodes and
    checks a list only when a filter reads it, so a filter's projection needs
    no more: ``arrow.binary``); ``fields`` (``(section, field)`` pairs) limits the ones
    stored (the others read as absent; a filter's own fields: a unique string
    message-id it does not read costs nothing), None stores them all. ``body`` fills ``amqp_value`` and ``amqp_sequence`` as
    ``message_table`` does (decoded in Python, for the rows that have such a
    body); otherwise they are null.

    ``Decoded.undecoded[r]`` means row ``r`` holds nothing (all tags 0, typed
    fields null): evaluate it from the original bytes with the per-message
    engine. Every other row equals ``message_table`` of its bytes, projected
    to the requested keys.

    ``prefix``: bytes at the start of every cell that are not the message (a
    frame's 4-byte size: a framed file's frames are then a zero-copy column).
    """
    chunks = _chunks(column)
    n = sum(len(c) for c in chunks)
    parts = [(*_buffers(c), len(c)) for c in chunks]
    all_keys = keys is None
    plan = _collect_keys(parts, prefix) if all_keys else _requested(keys)

    # slots: header fields, properties fields, then the requested keys by section
    stored = None if fields is None else set(fields)
    want = [_HEADER_WANT[f] if stored is None or ("header", f) in stored else -1
            for f in HEADER_FIELDS] + [
        _PROPERTIES_WANT[f] if stored is None or ("properties", f) in stored else -1
        for f in PROPERTIES_FIELDS]
    key_bytes, key_offsets, key_sec, key_slot, key_flag = [], [0], [], [], []
    walk = np.zeros(6, np.int64)
    walk[4] = checked or any(w >= 0 for w in want[:len(HEADER_FIELDS)])
    walk[5] = checked or any(w >= 0 for w in want[len(HEADER_FIELDS):])
    klen_ok = np.zeros((4, 256), np.uint8)
    layout: list[tuple[str, list[tuple[str, int]]]] = []
    for sec, section in enumerate(KEYED):
        names = plan.get(section)
        if all_keys:
            walk[sec] = 1   # every map is read (to refuse the keys that cannot be stored)
            klen_ok[sec, :] = 1
        if not names:
            continue
        walk[sec] = 1
        slots = []
        for name in names:
            raw = name.encode("utf-8")
            slot = len(want)
            want.append(0)
            key_bytes.append(raw)
            key_offsets.append(key_offsets[-1] + len(raw))
            key_sec.append(sec)
            key_slot.append(slot)
            key_flag.append(1 if section != "application_properties" and not raw.isascii()
                            else 0)
            klen_ok[sec, min(len(raw), 255)] = 1
            slots.append((name, slot))
        layout.append((section, slots))
    nslots = len(want)
    kb = np.frombuffer(b"".join(key_bytes) or b"\0", np.uint8)
    ko = np.array(key_offsets, np.int64)
    ksec = np.array(key_sec, np.int64)
    ht, arena, log, meta, counts = _new_state(nslots)
    kt = _key_table(kb, ko, ksec, meta[3])

    wide = np.array([0 if t in (UBYTE, UINT) else 1 for t in want], np.int64)
    tags = np.zeros((nslots, n), np.uint8)   # calloc: pages of unused slots stay unmapped
    v64 = np.empty((nslots, n), np.int64)
    v32 = np.empty((nslots, n), np.int32)
    xlens = np.empty((nslots, n), np.int32)
    status = np.zeros(n, np.uint8)
    bodies = np.zeros(n, np.uint8)
    seen_tags = np.zeros(nslots, np.int64)
    xarena = np.empty(1 << 12, np.uint8)
    row0 = 0
    want_ = np.array(want, np.int64)
    kslot = np.array(key_slot, np.int64)
    kflag = np.array(key_flag, np.int64)
    key_state = new_keys()
    recount = False
    for raw, offs, bits, bit0, count in parts:
        row = 0
        while row < count:
            row, strings, size, binary, entries, dirty = _kernel(
                raw, offs, prefix, bits, bit0, row0, row, count, want_, wide, walk, all_keys, kb, ko,
                ksec, kslot, kflag, kt, klen_ok, tags, v64, v32, xlens, status, bodies,
                seen_tags, ht, arena, log, xarena, meta, counts, *key_state)
            if entries:   # a map bigger than the key dictionary: a bigger one, empty
                key_state = new_keys(entries, size)
                continue
            if strings or binary:   # room for what the rest of the column may hold
                done = max(row0 + row, 1)
                if strings:
                    entries, used = int(meta[0]), int(meta[1])
                    strings = max(strings, min(entries * n // done - entries, 16 * entries))
                    size = max(size, min(used * n // done - used, 16 * used))
                    ht, arena, log = _grown(ht, arena, log, meta, strings, size)
                if binary:
                    used = int(meta[2])
                    binary = max(binary, min(used * n // done - used, 16 * used))
                    xarena = _grown_bytes(xarena, used, binary)
            if dirty:   # the children a failed row asked for: recounted from the tags
                recount = True
        row0 += count
    if recount:
        seen_tags = _seen_tags(tags)

    undecoded = status != OK
    value_column = sequence_column = None
    if body:
        value_column, sequence_column = _bodies(chunks, np.flatnonzero((bodies != 0) & ~undecoded),
                                                undecoded, n, prefix)
        if value_column is None:   # a body undecodable after its row was committed
            tags[:, undecoded] = 0
            seen_tags = _seen_tags(tags)
            value_column, sequence_column = _bodies(
                chunks, np.flatnonzero((bodies != 0) & ~undecoded), undecoded, n, prefix)

    offsets, strings, base = _dictionaries(log, int(meta[0]), arena, counts)
    columns = _Columns(n, tags, v64, v32, xlens, xarena, seen_tags, offsets, strings, base)

    header = pa.StructArray.from_arrays(
        [columns.typed(i, HEADER_TYPE_OF[f]) for i, f in enumerate(HEADER_FIELDS)],
        fields=list(_header_fields()))
    props, id_children = [], {}
    for i, f in enumerate(PROPERTIES_FIELDS):
        slot = N_HEADER + i
        if _PROPERTIES_WANT[f] == 0:
            id_children[f] = columns.children(slot)
            props.append(columns.value(slot))
        else:
            props.append(columns.typed(slot, PROPERTIES_TYPE_OF[f]))
    key_children = {section: {name: columns.children(slot) for name, slot in slots}
                    for section, slots in layout}
    schema = message_schema(key_children, id_children, False)
    out: dict[str, pa.Array] = {
        "header": header,
        "properties": pa.StructArray.from_arrays(props, fields=list(
            schema.field("properties").type))}
    for section, slots in layout:
        arrays = [columns.value(slot) for _, slot in slots]
        out[section] = pa.StructArray.from_arrays(arrays, fields=list(
            schema.field(section).type))
    for section in ("header", *KEYED, "properties"):
        out[rest_column(section)] = pa.nulls(n, REST_TYPE)
    out["amqp_value"] = value_column if value_column is not None else pa.nulls(n, pa.binary())
    out["amqp_sequence"] = (sequence_column if sequence_column is not None
                            else pa.nulls(n, pa.binary()))
    table = pa.Table.from_arrays([out[name] for name in schema.names], schema=schema)
    return Decoded(table, undecoded)


def _bodies(chunks: list[pa.Array], rows: np.ndarray, undecoded: np.ndarray,
            n: int, prefix: int = 0) -> tuple[pa.Array | None, pa.Array | None]:
    """The amqp-value and amqp-sequence columns as ``message_table`` makes them,
    decoded in Python for the rows that have such a body. A row whose body
    cannot be stored exactly is marked undecoded: then (None, None), to be
    asked again without it."""
    from ...amqp.encoded import EncodedMessage
    from ..build import encode_exact
    values: list[Any] = [None] * n
    sequences: list[Any] = [None] * n
    if len(rows):
        starts = np.cumsum([0] + [len(c) for c in chunks])
        failed = False
        for r in rows.tolist():
            which = int(np.searchsorted(starts, r, side="right")) - 1
            cell = chunks[which][r - int(starts[which])].as_py()[prefix:]
            try:
                message = EncodedMessage(cell)
                value = message._filtex_amqp_value
                sequence = message._filtex_amqp_sequence
                values[r] = None if value is None else encode_exact(value)
                sequences[r] = None if sequence is None else encode_exact(list(sequence))
            except Exception:   # malformed, or no exact encoding: the builder refuses it
                undecoded[r] = True
                failed = True
        if failed:
            return None, None
    return pa.array(values, pa.binary()), pa.array(sequences, pa.binary())


HEADER_TYPE_OF = {"durable": pa.bool_(), "priority": pa.uint8(), "ttl": pa.uint32(),
                  "first-acquirer": pa.bool_(), "delivery-count": pa.uint32()}
PROPERTIES_TYPE_OF = {"user-id": pa.binary(), "to": STRINGS, "subject": STRINGS,
                      "reply-to": STRINGS, "content-type": STRINGS,
                      "content-encoding": STRINGS, "absolute-expiry-time": TIMESTAMP_MS,
                      "creation-time": TIMESTAMP_MS, "group-id": STRINGS,
                      "group-sequence": pa.uint32(), "reply-to-group-id": STRINGS}


def _header_fields() -> list[pa.Field]:
    return [pa.field(name, HEADER_TYPE_OF[name]) for name in HEADER_FIELDS]


_LUTS = {name: np.array([CHILD_OF_TAG[t] == name for t in range(26)] + [False] * 230)
         for name in CHILD_ORDER}
"""Child name -> bool[256]: the tags whose value that child holds."""
_PRESENT = np.array([False] + [True] * 255)


class _Columns:
    """Arrow arrays of the kernel's outputs, zero-copy where the layout allows."""

    def __init__(self, n, tags, v64, v32, xlens, xarena, seen, offsets, strings, base):
        self.n, self.tags, self.v64, self.v32 = n, tags, v64, v32
        self.xlens, self.xarena = xlens, xarena
        self.seen, self.offsets, self.strings, self.base = seen, offsets, strings, base

    def children(self, slot: int) -> frozenset[str]:
        seen = int(self.seen[slot])
        return frozenset(CHILD_OF_TAG[t] for t in range(26)
                         if seen >> t & 1 and CHILD_OF_TAG[t] is not None)

    def _child(self, slot: int, lut: np.ndarray, typ: pa.DataType) -> pa.Array:
        n, tags = self.n, self.tags[slot]
        bitmap, valid = _bitmap(tags, lut)
        validity, nulls = (None, 0) if valid == n else (pa.py_buffer(bitmap), n - valid)
        if typ == pa.bool_():
            data = pa.py_buffer(_bool_bitmap(tags, lut, self.v32[slot]))
            return pa.Array.from_buffers(typ, n, [validity, data], nulls)
        if typ == STRINGS:
            first, last = int(self.base[slot]), int(self.base[slot + 1])
            offsets = self.offsets[first:last + 1]
            start, stop = int(offsets[0]), int(offsets[-1])
            if stop - start >= 1 << 31:
                raise ValueError("more than 2 GiB of distinct strings in one column: "
                                 "decode fewer messages at a time")
            dictionary = pa.StringArray.from_buffers(
                last - first, pa.py_buffer((offsets - start).astype(np.int32)),
                pa.py_buffer(self.strings[start:stop]))
            indices = pa.Array.from_buffers(pa.int32(), n, [validity, pa.py_buffer(
                self.v32[slot])], nulls)
            return pa.DictionaryArray.from_arrays(indices, dictionary, safe=False)
        if typ == pa.binary():
            offsets, data = _gather(tags, lut, self.v64[slot], self.xlens[slot], self.xarena)
            if int(offsets[-1]) >= 1 << 31:
                raise ValueError("more than 2 GiB of binary values in one column: "
                                 "decode fewer messages at a time")
            return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(
                offsets.astype(np.int32)), pa.py_buffer(data)], nulls)
        if typ == pa.uint8():
            return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(
                self.v32[slot].astype(np.uint8))], nulls)
        if typ == pa.uint32():
            return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(
                self.v32[slot])], nulls)
        # int64, uint64, float64, timestamp: the 64 bits as they are
        return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(self.v64[slot])], nulls)

    def typed(self, slot: int, typ: pa.DataType) -> pa.Array:
        """A typed header or properties field: present where the tag is set."""
        return self._child(slot, _PRESENT, typ)

    def value(self, slot: int) -> pa.StructArray:
        children = self.children(slot)
        typ = value_type(children)
        arrays = [pa.Array.from_buffers(pa.int8(), self.n, [None, pa.py_buffer(
            self.tags[slot])])]
        for field in list(typ)[1:]:
            arrays.append(self._child(slot, _LUTS[field.name], field.type))
        return pa.StructArray.from_arrays(arrays, fields=list(typ))

