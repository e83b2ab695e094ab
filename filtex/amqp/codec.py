"""Decoding AMQP 1.0 encoded values and messages into filtex's values.

OASIS AMQP 1.0 part 1.6 ("Encodings": format codes) and part 3.2 ("Message
Format": the sections of a message). A filter sees bytes from the wire, so
the decoder is:

* exact: every AMQP type comes back as the class filtex uses everywhere
  (``runtime/values.py``): ``ubyte``, ``symbol``, ``float32``... and a size or
  count that disagrees with the contents is an error, not a guess;
* bounded: decoding is linear in the input (a ``memoryview`` and offsets, no
  slicing of the rest of the buffer), nesting is at most ``MAX_DEPTH`` levels,
  and zero-width array elements (``null``, ``true``, ``list0``...) draw on a
  budget proportional to the input, so 9 bytes cannot ask for 4 billion values;
* total: any malformed input raises ``DecodeError`` with a reason and the
  byte offset of the problem, never another exception;
* lazy: ``locate_sections`` finds a message's sections by their encoded
  sizes without decoding them, and ``decode_message`` never decodes the body.
"""
from __future__ import annotations

import math
import struct
import uuid
from typing import Any, Callable

from proton import (Array, Data, Described, byte, char, decimal32, decimal64,
                    decimal128, float32, int32, short, symbol, timestamp, ubyte,
                    uint, ulong, ushort)

from ..message import HEADER_FIELDS, PROPERTIES_FIELDS, Message

MAX_DEPTH = 64
"""Deepest nesting of lists, maps, arrays and described values decoded."""


class DecodeError(Exception):
    """Malformed AMQP bytes: ``reason`` says what is wrong, ``offset`` where
    (an index into the buffer, at most its length)."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(f"{reason} (at byte offset {offset})")
        self.reason = reason
        self.offset = offset


# --- the format codes ------------------------------------------------------------
# Each code's kind: ZERO (no payload), FIXED (a fixed-width payload), VAR (a
# 1- or 4-byte length then bytes), LIST/MAP/ARRAY (size and count, 1 or 4 bytes).
ZERO, FIXED, VAR, LIST, MAP, ARRAY = range(6)

_ZERO: dict[int, Callable[[], Any]] = {
    0x40: lambda: None, 0x41: lambda: True, 0x42: lambda: False,
    0x43: lambda: uint(0), 0x44: lambda: ulong(0), 0x45: list}


def _number(fmt: str, cls: Callable[[Any], Any]) -> tuple[int, Callable]:
    unpack = struct.Struct(fmt).unpack_from
    return struct.calcsize(fmt), lambda mv, p: cls(unpack(mv, p)[0])


def _boolean(mv: memoryview, p: int) -> bool:
    if mv[p] > 1:
        raise DecodeError(f"boolean byte 0x{mv[p]:02x} is neither 0x00 nor 0x01", p)
    return mv[p] == 1


_U32 = struct.Struct(">I")


def _char(mv: memoryview, p: int) -> char:
    point = _U32.unpack_from(mv, p)[0]
    if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF:
        raise DecodeError(f"char U+{point:X} is not a Unicode scalar value", p)
    return char(chr(point))


_FIXED: dict[int, tuple[int, Callable]] = {
    0x50: _number(">B", ubyte), 0x60: _number(">H", ushort),
    0x70: _number(">I", uint), 0x52: _number(">B", uint),
    0x80: _number(">Q", ulong), 0x53: _number(">B", ulong),
    0x51: _number(">b", byte), 0x61: _number(">h", short),
    0x71: _number(">i", int32), 0x54: _number(">b", int32),
    0x81: _number(">q", int), 0x55: _number(">b", int),
    0x72: _number(">f", float32),   # the double of the single: the wire value
    0x82: _number(">d", float),
    0x74: _number(">I", decimal32), 0x84: _number(">Q", decimal64),
    0x83: _number(">q", timestamp),
    0x94: (16, lambda mv, p: decimal128(bytes(mv[p:p + 16]))),
    0x98: (16, lambda mv, p: uuid.UUID(bytes=bytes(mv[p:p + 16]))),
    0x56: (1, _boolean), 0x73: (4, _char)}


def _text(cls: Callable[[str], Any], encoding: str) -> Callable[[memoryview], Any]:
    return lambda raw: cls(str(raw, encoding))


# VAR: code -> (length width, converter, name)
_VAR: dict[int, tuple[int, Callable[[memoryview], Any], str]] = {
    0xa0: (1, bytes, "binary"), 0xb0: (4, bytes, "binary"),
    0xa1: (1, _text(str, "utf-8"), "string"), 0xb1: (4, _text(str, "utf-8"), "string"),
    0xa3: (1, _text(symbol, "ascii"), "symbol"), 0xb3: (4, _text(symbol, "ascii"), "symbol")}

# LIST/MAP/ARRAY: code -> (kind, size and count width)
_COMPOUND = {0xc0: (LIST, 1), 0xd0: (LIST, 4), 0xc1: (MAP, 1), 0xd1: (MAP, 4),
             0xe0: (ARRAY, 1), 0xf0: (ARRAY, 4)}

_KIND = {**dict.fromkeys(_ZERO, ZERO), **dict.fromkeys(_FIXED, FIXED),
         **dict.fromkeys(_VAR, VAR), **{c: k for c, (k, _) in _COMPOUND.items()}}

# The proton Data type an array of each element constructor has.
_ARRAY_TYPE = {
    0x40: Data.NULL, 0x41: Data.BOOL, 0x42: Data.BOOL, 0x56: Data.BOOL,
    0x50: Data.UBYTE, 0x60: Data.USHORT, 0x70: Data.UINT, 0x52: Data.UINT, 0x43: Data.UINT,
    0x80: Data.ULONG, 0x53: Data.ULONG, 0x44: Data.ULONG, 0x51: Data.BYTE,
    0x61: Data.SHORT, 0x71: Data.INT, 0x54: Data.INT, 0x81: Data.LONG, 0x55: Data.LONG,
    0x72: Data.FLOAT, 0x82: Data.DOUBLE, 0x74: Data.DECIMAL32, 0x84: Data.DECIMAL64,
    0x94: Data.DECIMAL128, 0x73: Data.CHAR, 0x83: Data.TIMESTAMP, 0x98: Data.UUID,
    0xa0: Data.BINARY, 0xb0: Data.BINARY, 0xa1: Data.STRING, 0xb1: Data.STRING,
    0xa3: Data.SYMBOL, 0xb3: Data.SYMBOL, 0x45: Data.LIST, 0xc0: Data.LIST,
    0xd0: Data.LIST, 0xc1: Data.MAP, 0xd1: Data.MAP, 0xe0: Data.ARRAY, 0xf0: Data.ARRAY}

_WIDTH = {1: struct.Struct(">B"), 4: struct.Struct(">I")}
_PAIR = {1: struct.Struct(">BB"), 4: struct.Struct(">II")}
_UNHASHABLE = (list, dict, Described, Array)


def _view(buf: Any) -> memoryview:
    """A flat byte view of ``buf`` (bytes, bytearray, memoryview): no copy."""
    view = memoryview(buf)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


class _Reader:
    """One decoding pass over a buffer. ``end`` is the end of the innermost
    enclosing size, so a value cannot spill out of its list, map or array."""

    __slots__ = ("mv", "end", "budget")

    def __init__(self, buf: Any) -> None:
        self.mv = _view(buf)
        self.end = len(self.mv)
        self.budget = 8 * self.end + 65536   # zero-width array elements allowed

    def need(self, pos: int, count: int, what: str) -> None:
        if count > self.end - pos:
            where = "input" if self.end == len(self.mv) else "enclosing size"
            raise DecodeError(f"truncated {what}: needs {count} bytes, "
                              f"{max(self.end - pos, 0)} left in the {where}",
                              min(pos, len(self.mv)))

    def code(self, pos: int) -> int:
        self.need(pos, 1, "value (no constructor)")
        return self.mv[pos]

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        """The value whose constructor is at ``pos``, and the offset after it."""
        if depth > MAX_DEPTH:
            raise DecodeError(f"values nested more than {MAX_DEPTH} levels deep", pos)
        code = self.code(pos)
        if code == 0x00:
            descriptor, after = self.value(pos + 1, depth + 1)
            described, after = self.value(after, depth + 1)
            return Described(descriptor, described), after
        return self.payload(code, pos + 1, depth, pos)

    def payload(self, code: int, pos: int, depth: int, at: int) -> tuple[Any, int]:
        """The payload at ``pos`` of a value with constructor ``code`` (at ``at``)."""
        kind = _KIND.get(code)
        if kind is None:
            raise DecodeError(f"unknown constructor 0x{code:02x}", at)
        if kind == ZERO:
            return _ZERO[code](), pos
        if kind == FIXED:
            width, read = _FIXED[code]
            self.need(pos, width, f"fixed-width value 0x{code:02x}")
            return read(self.mv, pos), pos + width
        if kind == VAR:
            width, convert, name = _VAR[code]
            self.need(pos, width, f"{name} length")
            size = _WIDTH[width].unpack_from(self.mv, pos)[0]
            start = pos + width
            self.need(start, size, f"{name} of {size} bytes")
            try:
                return convert(self.mv[start:start + size]), start + size
            except UnicodeDecodeError as exc:
                raise DecodeError(f"invalid {exc.encoding.upper()} in {name}: {exc.reason}",
                                  start + exc.start) from None
        if depth >= MAX_DEPTH:
            raise DecodeError(f"values nested more than {MAX_DEPTH} levels deep", at)
        width = _COMPOUND[code][1]
        self.need(pos, 2 * width, "size and count")
        size, count = _PAIR[width].unpack_from(self.mv, pos)
        body = pos + width
        self.need(body, size, f"compound value of {size} bytes")
        if size < width:
            raise DecodeError(f"size {size} leaves no room for the count", pos)
        outer, self.end = self.end, body + size
        if kind == ARRAY:
            result, after = self.array(body + width, count, depth, pos)
        else:
            result, after = self.items(kind, body + width, count, depth, pos)
        if after != self.end:
            raise DecodeError(f"contents end at offset {after}, the size says {self.end}", pos)
        self.end = outer
        return result, after

    def items(self, kind: int, pos: int, count: int, depth: int,
              at: int) -> tuple[Any, int]:
        if count > self.end - pos:   # every item takes at least its constructor byte
            raise DecodeError(f"count {count} does not fit in {self.end - pos} bytes", at)
        if kind == LIST:
            items = []
            for _ in range(count):
                item, pos = self.value(pos, depth + 1)
                items.append(item)
            return items, pos
        if count % 2:
            raise DecodeError(f"map with an odd count of {count} keys and values", at)
        result: dict[Any, Any] = {}
        for _ in range(count // 2):
            key_at = pos
            key, pos = self.value(pos, depth + 1)
            if isinstance(key, _UNHASHABLE):
                raise DecodeError(f"map key of type {type(key).__name__} filtex cannot hold",
                                  key_at)
            if key in result:
                raise DecodeError(f"duplicate map key {key!r:.60}", key_at)
            result[key], pos = self.value(pos, depth + 1)
        return result, pos

    def array(self, pos: int, count: int, depth: int, at: int) -> tuple[Array, int]:
        """An array: one constructor (possibly described) for every element."""
        descriptors = []
        while self.code(pos) == 0x00:
            if depth + len(descriptors) >= MAX_DEPTH:
                raise DecodeError(f"values nested more than {MAX_DEPTH} levels deep", pos)
            descriptor, pos = self.value(pos + 1, depth + len(descriptors) + 1)
            descriptors.append(descriptor)
        code = self.mv[pos]
        kind = _KIND.get(code)
        if kind is None:
            raise DecodeError(f"unknown array element constructor 0x{code:02x}", pos)
        pos += 1
        least = (0 if kind == ZERO else _FIXED[code][0] if kind == FIXED
                 else _VAR[code][0] if kind == VAR else 2 * _COMPOUND[code][1])
        if least == 0:
            self.budget -= count
            if self.budget < 0:
                raise DecodeError(f"array of {count} zero-width elements is out of "
                                  "proportion to the input", at)
        elif count > (self.end - pos) // least:
            raise DecodeError(f"count {count} does not fit in {self.end - pos} bytes", at)
        elements = []
        for _ in range(count):
            element, pos = self.payload(code, pos, depth + len(descriptors) + 1, pos)
            elements.append(element)
        kind_code = _ARRAY_TYPE[code]
        for descriptor in reversed(descriptors[1:]):   # rare: described descriptors
            elements = [Described(descriptor, e) for e in elements]
            kind_code = Data.DESCRIBED
        return Array(descriptors[0] if descriptors else None, kind_code, *elements), pos

    def skip(self, pos: int, depth: int) -> int:
        """The offset after the value at ``pos``, by its encoded size alone."""
        if depth > MAX_DEPTH:
            raise DecodeError(f"values nested more than {MAX_DEPTH} levels deep", pos)
        code = self.code(pos)
        if code == 0x00:
            return self.skip(self.skip(pos + 1, depth + 1), depth + 1)
        kind = _KIND.get(code)
        if kind is None:
            raise DecodeError(f"unknown constructor 0x{code:02x}", pos)
        if kind == ZERO:
            return pos + 1
        if kind == FIXED:
            self.need(pos + 1, _FIXED[code][0], f"fixed-width value 0x{code:02x}")
            return pos + 1 + _FIXED[code][0]
        width = _VAR[code][0] if kind == VAR else _COMPOUND[code][1]
        self.need(pos + 1, width, "length")
        size = _WIDTH[width].unpack_from(self.mv, pos + 1)[0]
        self.need(pos + 1 + width, size, f"value of {size} bytes")
        return pos + 1 + width + size


def _run(step: Callable[[_Reader], Any], buf: Any) -> Any:
    """``step`` on a reader of ``buf``, leaving no view of ``buf`` behind: a
    caller may grow its bytearray in the ``except DecodeError`` of a short read."""
    reader = _Reader(buf)
    try:
        return step(reader)
    except DecodeError as exc:
        error = DecodeError(exc.reason, exc.offset)
    except RecursionError:   # not within MAX_DEPTH, unless the caller is deep already
        error = DecodeError("values nested too deeply for the Python stack", 0)
    finally:
        reader.mv.release()
    raise error   # outside the handler: no traceback frame holds a slice of buf


def identical(got: Any, want: Any) -> bool:
    """Equal value and equal class, all the way down (``ubyte(1) == 1`` in
    Python, NaN equals NaN, and -0.0 is not 0.0): what "decodes to itself" means."""
    if type(got) is not type(want):
        return False
    if isinstance(got, float):
        if math.isnan(got) or math.isnan(want):
            return math.isnan(got) and math.isnan(want)
        return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)
    if type(got) is list:
        return len(got) == len(want) and all(map(identical, got, want))
    if type(got) is dict:
        if len(got) != len(want):
            return False
        pairs = {(type(k), k): v for k, v in want.items()}
        for key, value in got.items():
            other = pairs.get((type(key), key), _NOTHING)
            if other is _NOTHING:   # a NaN key is no dictionary key of itself
                other = next((v for k, v in want.items() if identical(key, k)), _NOTHING)
            if other is _NOTHING or not identical(value, other):
                return False
        return True
    if type(got) is Described:
        return identical(got.descriptor, want.descriptor) and identical(got.value, want.value)
    if type(got) is Array:
        return (got.type == want.type and identical(got.descriptor, want.descriptor)
                and identical(list(got.elements), list(want.elements)))
    return bool(got == want)


_NOTHING = object()


def decode_value(buf: Any, offset: int = 0) -> tuple[Any, int]:
    """Decode the AMQP value at ``offset`` of ``buf``: ``(value, next_offset)``."""
    def step(reader: _Reader) -> tuple[Any, int]:
        if not 0 <= offset <= reader.end:
            raise DecodeError(f"offset {offset} is outside the {reader.end}-byte input",
                              max(0, min(offset, reader.end)))
        return reader.value(offset, 0)
    return _run(step, buf)


def decode_map_entries(buf: Any) -> list[tuple[Any, Any]]:
    """The entries of the map ``buf`` holds (a described map too: its value),
    each value decoded on its own: ``(key, value)``, or ``(key, DecodeError)``
    for a value that cannot be decoded (a string that is not UTF-8, nesting
    past ``MAX_DEPTH``), so one bad entry spoils only itself. The map's own
    structure (its size and count, each value's extent, its keys) must hold,
    else a ``DecodeError``."""
    def step(reader: _Reader) -> list[tuple[Any, Any]]:
        pos = 0
        while reader.code(pos) == 0x00:   # a described map: past its descriptor
            pos = reader.skip(pos + 1, 1)
        code = reader.code(pos)
        if _KIND.get(code) != MAP:
            raise DecodeError("not a map", pos)
        width = _COMPOUND[code][1]
        reader.need(pos + 1, 2 * width, "size and count")
        size, count = _PAIR[width].unpack_from(reader.mv, pos + 1)
        end, at = pos + 1 + width + size, pos + 1 + 2 * width
        reader.need(pos + 1 + width, size, f"compound value of {size} bytes")
        if count % 2 or count > end - at:
            raise DecodeError(f"map of {count} keys and values", pos)
        reader.end = end
        entries = []
        for _ in range(count // 2):
            key, at = reader.value(at, 1)
            after = reader.skip(at, 1)
            try:
                value, _ = reader.value(at, 1)
            except DecodeError as error:
                value = error
            entries.append((key, value))
            at = after
        if at != end:
            raise DecodeError(f"contents end at offset {at}, the size says {end}", pos)
        return entries
    return _run(step, buf)


# --- messages (part 3.2) ---------------------------------------------------------

HEADER, DELIVERY_ANNOTATIONS, MESSAGE_ANNOTATIONS, PROPERTIES = 0x70, 0x71, 0x72, 0x73
APPLICATION_PROPERTIES, DATA, AMQP_SEQUENCE, AMQP_VALUE, FOOTER = 0x74, 0x75, 0x76, 0x77, 0x78

_SECTION_SYMBOLS = {
    b"amqp:header:list": HEADER, b"amqp:delivery-annotations:map": DELIVERY_ANNOTATIONS,
    b"amqp:message-annotations:map": MESSAGE_ANNOTATIONS,
    b"amqp:properties:list": PROPERTIES,
    b"amqp:application-properties:map": APPLICATION_PROPERTIES,
    b"amqp:data:binary": DATA, b"amqp:amqp-sequence:list": AMQP_SEQUENCE,
    b"amqp:amqp-value:*": AMQP_VALUE, b"amqp:footer:map": FOOTER}

# A section's place in the order of the spec; the three body kinds share one.
_RANK = {HEADER: 0, DELIVERY_ANNOTATIONS: 1, MESSAGE_ANNOTATIONS: 2, PROPERTIES: 3,
         APPLICATION_PROPERTIES: 4, DATA: 5, AMQP_SEQUENCE: 5, AMQP_VALUE: 5, FOOTER: 6}
_LISTS, _MAPS = frozenset({0x45, 0xc0, 0xd0}), frozenset({0xc1, 0xd1})
_ENCODINGS = {HEADER: (_LISTS, "a list"), PROPERTIES: (_LISTS, "a list"),
              AMQP_SEQUENCE: (_LISTS, "a list"), DATA: (frozenset({0xa0, 0xb0}), "binary"),
              DELIVERY_ANNOTATIONS: (_MAPS, "a map"), MESSAGE_ANNOTATIONS: (_MAPS, "a map"),
              APPLICATION_PROPERTIES: (_MAPS, "a map"), FOOTER: (_MAPS, "a map")}


def _descriptor(reader: _Reader, pos: int) -> tuple[int, int]:
    """A section descriptor at ``pos`` (a ulong code or its symbol): (code, next)."""
    code, mv = reader.code(pos), reader.mv
    if code in (0x44, 0x53, 0x80):
        number, after = reader.payload(code, pos + 1, 0, pos)
    elif code in (0xa3, 0xb3):
        width = _VAR[code][0]
        reader.need(pos + 1, width, "symbol length")
        size = _WIDTH[width].unpack_from(mv, pos + 1)[0]
        reader.need(pos + 1 + width, size, "section descriptor symbol")
        after = pos + 1 + width + size
        number = _SECTION_SYMBOLS.get(bytes(mv[pos + 1 + width:after]), -1)
    else:
        raise DecodeError(f"section descriptor constructor 0x{code:02x} is neither a "
                          "ulong nor a symbol", pos)
    if number not in _RANK:
        raise DecodeError("unknown message section descriptor", pos)
    return int(number), after


def _sections(reader: _Reader) -> list[tuple[int, int, int, int]]:
    """(code, section start, value start, end) of each section, in order."""
    found: list[tuple[int, int, int, int]] = []
    pos, last = 0, None
    while pos < reader.end:
        if reader.mv[pos] != 0x00:
            raise DecodeError(f"expected a described section, found constructor "
                              f"0x{reader.mv[pos]:02x}", pos)
        code, value_at = _descriptor(reader, pos + 1)
        repeatable = code == last and code in (DATA, AMQP_SEQUENCE)
        if last is not None and (_RANK[code] < _RANK[last] or (
                _RANK[code] == _RANK[last] and not repeatable)):
            raise DecodeError(f"section 0x{code:02x} out of order after section 0x{last:02x}", pos)
        allowed = _ENCODINGS.get(code)
        if allowed and reader.code(value_at) not in allowed[0]:
            raise DecodeError(f"section 0x{code:02x} must hold {allowed[1]}, not constructor "
                              f"0x{reader.mv[value_at]:02x}", value_at)
        end = reader.skip(value_at, 1)
        found.append((code, pos, value_at, end))
        pos, last = end, code
    return found


def locate_sections(buf: Any) -> list[tuple[int, int, int]]:
    """``(descriptor_code, start, end)`` of each section of an encoded message,
    found by encoded sizes alone (no contents decoded); ``buf[start:end]`` is
    the whole described section. Out-of-order sections are a DecodeError."""
    return _run(lambda reader: [(code, start, end)
                                for code, start, _, end in _sections(reader)], buf)


def _fields(names: tuple[str, ...], value: Any, code: int, at: int) -> dict[str, Any]:
    """A composite list as a field-name mapping; null and missing fields are absent."""
    if type(value) is not list:
        raise DecodeError(f"section 0x{code:02x} is not a list", at)
    return {name: item for name, item in zip(names, value) if item is not None}


def _keyed(value: Any, key_types: tuple[type, ...], what: str, at: int) -> dict[Any, Any]:
    if type(value) is not dict:
        raise DecodeError(f"{what} is not a map", at)
    for key in value:
        if type(key) not in key_types:
            raise DecodeError(f"{what} key {key!r:.60} is not a "
                              + " or ".join(t.__name__ for t in key_types), at)
    return value


_NAMES = {HEADER: "header", DELIVERY_ANNOTATIONS: "delivery_annotations",
          MESSAGE_ANNOTATIONS: "message_annotations", PROPERTIES: "properties",
          APPLICATION_PROPERTIES: "application_properties", FOOTER: "footer"}


def decode_message(buf: Any, connection: Any = None) -> Message:
    """A ``filtex.Message`` of an encoded AMQP message: header and properties
    as field-name mappings, annotations (symbol or ulong keys), application
    properties (string keys) and footer. The body is located, never decoded."""
    return Message(connection=connection, **_run(_decode_sections, buf))


def _decode_sections(reader: _Reader) -> dict[str, Any]:
    sections: dict[str, Any] = {}
    for code, start, value_at, end in _sections(reader):
        if code not in _NAMES:
            continue
        reader.end = end
        value, _ = reader.value(value_at, 1)
        reader.end = len(reader.mv)
        if code == HEADER:
            value = _fields(HEADER_FIELDS, value, code, start)
        elif code == PROPERTIES:
            value = _fields(PROPERTIES_FIELDS, value, code, start)
        elif code == APPLICATION_PROPERTIES:
            value = _keyed(value, (str,), "application-properties", start)
        else:
            value = _keyed(value, (symbol, ulong), _NAMES[code].replace("_", "-"), start)
        sections[_NAMES[code]] = value
    return sections
