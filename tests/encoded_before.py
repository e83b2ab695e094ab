"""The encoded-bytes reader as it was before issue 27: ``filtex/amqp/encoded.py`` of
commit 4301f80, its docstring left out and its imports made absolute. It is the
reference tests/test_encoded_find.py holds the reader to, message by message."""
# ruff: noqa: B023   (closures called at once inside their loop, as in the original)
from __future__ import annotations

import struct
from typing import Any, Iterator, Mapping

from proton import symbol, ulong

from filtex.errors import EvaluationFailure
from filtex.message import EMPTY, HEADER_FIELDS, PROPERTIES_FIELDS, FieldSection
from filtex.amqp import codec
from filtex.amqp.codec import DecodeError, _Reader

_U32 = struct.Struct(">I").unpack_from
_U32_PAIR = struct.Struct(">II").unpack_from

# Fixed total sizes (constructor included) of values by format code; 0: one-byte
# length then bytes; -1: four-byte length; absent: the complete decoder skips it.
_SIZE: dict[int, int] = {code: 1 for code in codec._ZERO}
_SIZE.update({code: 1 + width for code, (width, _) in codec._FIXED.items()})
_SIZE.update({code: 0 if width == 1 else -1 for code, (width, _, _) in codec._VAR.items()})
_SIZE.update({0xc0: 0, 0xc1: 0, 0xe0: 0, 0xd0: -1, 0xd1: -1, 0xf0: -1})
_SKIP = [_SIZE.get(code, -2) for code in range(256)]
"""Indexed by a value's format code. The walks below (sections, map entries,
list fields) inline the four-way step on it rather than call a helper: a call
an entry would cost about a third of a walk."""



def _reader(width: int, read: Any) -> Any:
    return lambda b, p: read(b, p + 1)


# value readers by format code: every zero and fixed-width form, str8/sym8/vbin8
_FAST_READ: dict[int, Any] = {code: (lambda make: lambda b, p: make())(make)
                              for code, make in codec._ZERO.items()}
_FAST_READ.update({code: _reader(width, read) for code, (width, read) in codec._FIXED.items()})
_FAST_READ.update({
    0xa1: lambda b, p: str(b[p + 2:p + 2 + b[p + 1]], "utf-8"),
    0xa3: lambda b, p: symbol(str(b[p + 2:p + 2 + b[p + 1]], "ascii")),
    0xa0: lambda b, p: b[p + 2:p + 2 + b[p + 1]]})

_MISSING = object()

_MAP_KEYS = {   # a map section's key constructors: str8/str32, or sym8/sym32 and ulongs
    codec.APPLICATION_PROPERTIES: ((0xa1, 0xb1), "string"),
    codec.DELIVERY_ANNOTATIONS: ((0xa3, 0xb3), "symbol or ulong"),
    codec.MESSAGE_ANNOTATIONS: ((0xa3, 0xb3), "symbol or ulong"),
    codec.FOOTER: ((0xa3, 0xb3), "symbol or ulong")}
_ULONGS = (0x44, 0x53, 0x80)


def _malformed(error: DecodeError) -> EvaluationFailure:
    return EvaluationFailure(f"malformed message: {error.reason} (at byte offset {error.offset})")


# By section code: its rank in the order of the specification (-1: no section),
# and which constructors its value may have (a 256-byte table, or None: any).
_RANKS = [-1] * 256
_ALLOWED: list = [None] * 256
for _code, _rank in codec._RANK.items():
    _RANKS[_code] = _rank
for _code, (_codes, _) in codec._ENCODINGS.items():
    _ALLOWED[_code] = bytes(1 if i in _codes else 0 for i in range(256))
_ANY = bytes([1]) * 256
for _code in codec._RANK:
    _ALLOWED[_code] = _ALLOWED[_code] or _ANY


def _locate(b: bytes) -> dict[int, Any]:
    """{section code: (value offset, end)}; amqp-sequence: a list of them.
    The tight path knows ``0x00 0x53 code`` descriptors and the sizes of the
    encodings sections use; anything else is the complete decoder's job."""
    found: dict[int, Any] = {}
    pos, last, n = 0, -1, len(b)
    ranks, allowed, skip = _RANKS, _ALLOWED, _SKIP
    try:
        while pos < n:
            if b[pos + 1] != 0x53 or b[pos]:
                return _locate_slowly(b)
            code = b[pos + 2]
            at = pos + 3
            c = b[at]
            rank = ranks[code]
            if (rank <= last and not (rank == last and code in found and (
                    code == 0x76 or code == 0x75))) or not allowed[code][c]:
                return _locate_slowly(b)   # out of order, unknown, or the wrong encoding
            size = skip[c]
            if size > 0:
                pos = at + size
            elif size == 0:
                pos = at + 2 + b[at + 1]
            elif size == -1:
                pos = at + 5 + _U32(b, at + 1)[0]
            else:
                return _locate_slowly(b)
            if code == 0x76:
                found.setdefault(code, []).append((at, pos))
            else:
                found[code] = (at, pos)
            last = rank
    except (IndexError, struct.error):
        return _locate_slowly(b)
    if pos != n:
        return _locate_slowly(b)
    return found


def _locate_slowly(b: bytes) -> dict[int, Any]:
    """The complete decoder's reading of the sections: a result, or the
    DecodeError naming what is wrong."""
    found: dict[int, Any] = {}
    for code, _, at, end in codec._run(codec._sections, b):
        if code == codec.AMQP_SEQUENCE:
            found.setdefault(code, []).append((at, end))
        else:
            found[code] = (at, end)
    return found


def _decode(b: bytes, at: int, end: int) -> Any:
    """The complete decoder's value at ``at``, which must end by ``end``."""
    def step(reader: _Reader) -> Any:
        reader.end = end
        return reader.value(at, 1)[0]
    return codec._run(step, b)


class EncodedMap(Mapping):
    """A map section read in place. Its first read indexes every entry in one
    pass (keys as their encoded bytes, values skipped by their sizes) and
    checks the whole map's structure: an even count, keys of the section's
    key types, no key twice, entries that exactly fill the map. A map that
    fails is malformed for every read (AMQP 1.0 part 1.6.23: a map with a
    duplicate key is not a map), so no read can see a value another reader
    (first or last of two equal keys) would not, and every filter on one view
    gets the answer it gets alone. Values are decoded when asked for."""

    __slots__ = ("_b", "_start", "_end", "_code", "_index", "_values", "_problem")

    def __init__(self, b: bytes, at: int, end: int, code: int) -> None:
        self._b, self._start, self._end, self._code = b, at, end, code
        self._index: dict[Any, int] | None = None   # raw key -> value offset (-1: decoded)
        self._values: dict[Any, Any] = {}   # the values decoded so far
        self._problem: DecodeError | None = None   # why the map is malformed

    def _indexed(self) -> dict[Any, int]:
        """The index of every entry, made on the first read; a malformed map
        raises (a new exception each time: one raised again would keep every
        earlier traceback) with the same reason for every read."""
        if self._problem is None:
            try:
                self._index = self._walk()
                return self._index
            except DecodeError as error:
                self._problem = error
        raise _malformed(self._problem) from None

    def _walk(self) -> dict[Any, int]:
        b, p, end, skip = self._b, self._start, self._end, _SKIP
        index: dict[Any, int] = {}
        try:
            if b[p] == 0xc1:
                count, p = b[p + 2], p + 3
            else:
                count, p = _U32_PAIR(b, p + 1)[1], p + 9
            if count & 1 or count > end - p:   # an entry takes at least two bytes
                return self._walk_slowly()
            key8, key32 = _MAP_KEYS[self._code][0]
            for _ in range(count >> 1):
                c = b[p]
                if c == key8:
                    q = p + 2 + b[p + 1]
                    key: Any = b[p + 2:q]
                elif c == key32:
                    q = p + 5 + _U32(b, p + 1)[0]
                    key = b[p + 5:q]
                elif key8 == 0xa3 and (c == 0x53 or c == 0x80 or c == 0x44):
                    key, q = ulong(codec.decode_value(b[p:p + 9])[0]), p + _SIZE[c]
                else:
                    return self._walk_slowly()
                if key in index:
                    return self._walk_slowly()   # a duplicate key
                index[key] = q
                size = skip[b[q]]
                if size > 0:
                    p = q + size
                elif size == 0:
                    p = q + 2 + b[q + 1]
                elif size == -1:
                    p = q + 5 + _U32(b, q + 1)[0]
                else:
                    p = codec._run(lambda reader: reader.skip(q, 1), b)
        except (IndexError, struct.error, DecodeError):
            return self._walk_slowly()
        if p != end:
            return self._walk_slowly()   # entries that do not fill the map's size
        return index

    def _walk_slowly(self) -> dict[Any, int]:
        """Every irregular map: the complete decoder says what is wrong, or
        (for an encoding the tight path does not know) reads it whole."""
        start = self._start
        decoded = _decode(self._b, start, self._end)
        keys = (str,) if self._code == codec.APPLICATION_PROPERTIES else (symbol, ulong)
        section = codec._NAMES[self._code].replace("_", "-")
        codec._keyed(decoded, keys, section, start)   # raises on a bad key
        index: dict[Any, int] = {}
        for key, value in decoded.items():
            index[key if type(key) is ulong else key.encode("utf-8")] = -1
            self._values[key] = value
        return index

    @staticmethod
    def _raw(key: Any) -> Any:
        """A key as the index holds it: UTF-8 bytes of a string or symbol, a ulong."""
        cls = type(key)
        if cls is str or cls is symbol:
            try:
                return key.encode("utf-8")
            except UnicodeEncodeError:
                return None
        if cls is ulong or cls is int:
            return ulong(key) if 0 <= key < 1 << 64 else None
        return None

    def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``: decoded on its first read, then kept under the
        key as asked, so every later filter on the same message (another
        subscription) reads it for one dictionary lookup."""
        cls = type(key)
        if cls is str or cls is symbol:
            value = self._values.get(key, _MISSING)   # filled only once the map is indexed
            if value is not _MISSING:
                return value
            index = self._index
            if index is None:
                index = self._indexed()
            try:
                raw: Any = key.encode()
            except UnicodeEncodeError:
                return default
        else:   # a ulong key (annotations): kept under the ulong
            index = self._index
            if index is None:
                index = self._indexed()
            key = raw = self._raw(key)
            if raw is None:
                return default
            value = self._values.get(raw, _MISSING)
            if value is not _MISSING:
                return value
        at = index.get(raw)
        if at is None:
            return default
        if at < 0:   # decoded whole: kept under the decoded keys
            return self._values.get(key, default)
        b = self._b
        read = _FAST_READ.get(b[at])
        try:
            value = read(b, at) if read is not None else _decode(b, at, self._end)
        except UnicodeDecodeError as exc:
            raise _malformed(DecodeError(f"invalid UTF-8 in a string: {exc.reason}", at)) \
                from None
        except DecodeError as error:
            raise _malformed(error) from None
        self._values[key] = value
        return value

    def __contains__(self, key: Any) -> bool:
        index = self._index
        if index is None:
            index = self._indexed()
        raw = self._raw(key)
        return raw is not None and raw in index

    def __getitem__(self, key: Any) -> Any:
        if key not in self:
            raise KeyError(key)
        return self.get(key)

    def __iter__(self) -> Iterator[Any]:
        symbols = self._code != codec.APPLICATION_PROPERTIES
        index = self._index
        for raw in list(self._indexed() if index is None else index):
            if type(raw) is ulong:
                yield raw
            else:
                text = str(raw, "utf-8", "replace")
                yield symbol(text) if symbols else text

    def __len__(self) -> int:
        index = self._index
        return len(self._indexed() if index is None else index)

    def __repr__(self) -> str:
        return f"EncodedMap({dict(self)!r})"


class EncodedFields(FieldSection):
    """A header or properties list read in place: fields by name, the list
    walked (by sizes) only up to the field asked for; null and missing fields
    are absent. A read gives what it gives on a fresh view of the bytes:
    a field is read when every field before it can be stepped over, whatever
    other reads failed before (``_offset``)."""

    __slots__ = ("_b", "_at", "_end", "_names", "_numbers", "_offsets", "_pos", "_count",
                 "_decoded", "_values")

    def __init__(self, b: bytes, at: int, end: int, names: tuple[str, ...]) -> None:
        self._b, self._at, self._end, self._names = b, at, end, names
        self._numbers = _FIELD_NUMBERS[names]
        self._offsets: list[int] = []
        self._decoded: dict[str, Any] | None = None
        self._values: dict[str, Any] = {}   # the fields read so far (None: absent)
        c = b[at]
        if c == 0x45:
            self._count, self._pos = 0, at + 1
        elif c == 0xc0 and at + 2 < end:
            self._count, self._pos = b[at + 2], at + 3
        elif c == 0xd0 and at + 9 <= end:
            self._count, self._pos = _U32_PAIR(b, at + 1)[1], at + 9
        else:
            self._complete()

    def _complete(self) -> dict[str, Any]:
        """The complete decoder's reading: every irregular list (or its error)."""
        value = _decode(self._b, self._at, self._end)
        self._decoded = codec._fields(self._names, value, 0, self._at)
        return self._decoded

    def _offset(self, i: int) -> int | None:
        """The offset of field ``i`` (None: past the list's count), walking
        the fields by their sizes from the last one located. A field that
        cannot be stepped over fails this read and every read of a later
        field alike, whatever was read before: ``_offsets`` and ``_pos`` only
        ever hold fields located whole, so the next read starts over from the
        first field not located, as a fresh view would reach it."""
        offsets = self._offsets
        n = len(offsets)
        if n > i:
            return offsets[i]
        b, end, p, count, skip = self._b, self._end, self._pos, self._count, _SKIP
        try:
            while n <= i:
                if n >= count:
                    if p != end:
                        self._refuse(p, "the fields do not fill the list's size")
                    return None
                size = skip[b[p]]
                if size > 0:
                    after = p + size
                elif size == 0:
                    after = p + 2 + b[p + 1]
                elif size == -1:
                    after = p + 5 + _U32(b, p + 1)[0]
                else:
                    at = p
                    after = codec._run(lambda reader: reader.skip(at, 1), b)
                if after > end:
                    self._refuse(p, "a field runs past the list's size")
                offsets.append(p)
                self._pos = p = after
                n += 1
        except (IndexError, struct.error):
            self._refuse(p, "the list is cut short")
        return offsets[i]

    def _refuse(self, at: int, reason: str) -> None:
        """Raise the complete decoder's reason why the list is malformed (its
        own words when it has them, ``reason`` at ``at`` otherwise): nothing
        of the list is kept from a walk that failed."""
        _decode(self._b, self._at, self._end)
        raise DecodeError(reason, at)

    def get(self, name: Any, default: Any = None) -> Any:
        value = self._values.get(name, _MISSING)
        if value is _MISSING:
            value = self._values[name] = self._read(name)
        return default if value is None else value

    def _read(self, name: Any) -> Any:
        default = None
        try:
            if self._decoded is not None:
                return self._decoded.get(name, default)
            i = self._numbers.get(name)
            if i is None:
                return default
            at = self._offset(i)
            if at is None:
                return default
            b = self._b
            read = _FAST_READ.get(b[at])
            value = read(b, at) if read is not None else _decode(b, at, self._end)
        except DecodeError as error:
            raise _malformed(error) from None
        except UnicodeDecodeError as exc:
            raise _malformed(DecodeError(f"invalid UTF-8 in a string: {exc.reason}", at)) \
                from None
        return default if value is None else value



_FIELD_NUMBERS = {names: {name: i for i, name in enumerate(names)}
                  for names in (HEADER_FIELDS, PROPERTIES_FIELDS)}


_MAP_ATTRIBUTES = (("_filtex_delivery_annotations", codec.DELIVERY_ANNOTATIONS),
                   ("_filtex_message_annotations", codec.MESSAGE_ANNOTATIONS),
                   ("_filtex_application_properties", codec.APPLICATION_PROPERTIES),
                   ("_filtex_footer", codec.FOOTER))
_LAZY = {"_filtex_header": codec.HEADER, "_filtex_properties": codec.PROPERTIES,
         "_filtex_amqp_value": codec.AMQP_VALUE, "_filtex_amqp_sequence": codec.AMQP_SEQUENCE}


class EncodedMessage:
    """An encoded AMQP message (``bytes``, ``bytearray`` or ``memoryview``)
    that filters read in place. ``connection`` is the opaque id of the
    connection it arrived on (the no-local filter). A ``bytearray`` or
    ``memoryview`` is copied once, so a later change to it cannot change a
    verdict half-way.

    Making one locates the sections (a step a section); a map section is then
    an ``EncodedMap``, and header, properties and the body are decoded on
    first read. Bytes that are not a message are not an error here: every
    read of the message then fails with the reason, so the filter's result
    is unknown with it.
    """

    __slots__ = ("buffer", "_filtex_connection", "_sections", "_error") + tuple(
        name for name, _ in _MAP_ATTRIBUTES) + tuple(_LAZY)

    def __init__(self, buffer: Any, connection: Any = None) -> None:
        self.buffer = b = buffer if type(buffer) is bytes else bytes(buffer)
        self._filtex_connection = connection
        try:
            self._sections = sections = _locate(b)
        except DecodeError as error:
            self._error = _malformed(error)
            return
        self._error = None
        where = sections.get(0x74)
        self._filtex_application_properties = (
            EMPTY if where is None else EncodedMap(b, where[0], where[1], 0x74))
        where = sections.get(0x72)
        self._filtex_message_annotations = (
            EMPTY if where is None else EncodedMap(b, where[0], where[1], 0x72))
        where = sections.get(0x71)
        self._filtex_delivery_annotations = (
            EMPTY if where is None else EncodedMap(b, where[0], where[1], 0x71))
        where = sections.get(0x78)
        self._filtex_footer = EMPTY if where is None else EncodedMap(b, where[0], where[1], 0x78)

    @property
    def connection(self) -> Any:
        return self._filtex_connection

    @property
    def problem(self) -> str | None:
        """Why these bytes are not a message (their sections cannot be found),
        or None. Every read of such a message fails with this reason."""
        return None if self._error is None else self._error.reason

    def __getattr__(self, name: str) -> Any:
        """A protocol attribute read for the first time: decode, then keep."""
        if self._error is not None and name.startswith("_filtex_"):
            # a new exception each time: one raised again keeps every earlier traceback
            raise EvaluationFailure(self._error.reason) from None
        code = _LAZY.get(name)
        if code is None:
            raise AttributeError(name)
        try:
            value = self._read(code, self._sections.get(code))
        except DecodeError as error:
            raise _malformed(error) from None
        setattr(self, name, value)
        return value

    def _read(self, code: int, where: Any) -> Any:
        b = self.buffer
        if code == codec.AMQP_SEQUENCE:
            if where is None:
                return None
            return [item for at, end in where for item in _decode(b, at, end)]
        if where is None:
            return None if code == codec.AMQP_VALUE else EMPTY
        at, end = where
        if code == codec.HEADER:
            return EncodedFields(b, at, end, HEADER_FIELDS)
        if code == codec.PROPERTIES:
            return EncodedFields(b, at, end, PROPERTIES_FIELDS)
        return _decode(b, at, end)   # the amqp-value

    def __repr__(self) -> str:
        return f"EncodedMessage({len(self.buffer)} bytes)"
