"""An AMQP-encoded message read in place: the encoded-bytes form of a message.

``EncodedMessage`` implements filtex's reading protocol (``filtex.message``)
over the bytes themselves. Making one checks the chain of sections (a step a
section, by their encoded sizes); a map section (annotations, application
properties, footer) is checked whole on its first read, and only the values
a filter asks for are decoded. Header and properties (composite lists) are
read field by field; an amqp-value or amqp-sequence body only when a filter
reads the body; a data body never.

Most of the reading is C-level, in three shortcuts that each answer only
what they prove, exactly as the walks would:

- the section chain of a message laid out as messages met before (the same
  descriptors and value constructors) is checked by a function made for that
  layout (``_layout_function``);
- a map is checked by one regular expression: that of the keys of maps met
  before (``_Known``: a key's value is then where its group ends), or one
  that splits any map of str8 (sym8) keys and common values into its entries
  (``_entries``: a key is then found by its encoding, ``bytes.find``); list
  fields are stepped over by another (``_field_at``);
- a header met before is read once for all the messages that have it.

What those do not prove well-formed goes to the walks by sizes, and every
irregularity to the complete decoder of ``codec``, which names the problem
and its byte offset. A malformed message makes the filter's result unknown,
with that reason.

Checks made before any read of a section is answered: the message is a
sequence of described sections with known descriptors, in the order of the
specification, each of the encoding its section requires, sizes within the
input and the enclosing size. In a map that a filter reads: an even count,
keys of the section's key types, no duplicate key, entries that exactly fill
the map's size. Values and keys' UTF-8 are checked when they are decoded: the
values a filter reads, header and properties when read, the body when read.
"""
from __future__ import annotations

import re
import struct
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping

from proton import byte, float32, int32, short, symbol, timestamp, ubyte, uint, ulong, ushort

from ..errors import EvaluationFailure
from ..message import EMPTY, HEADER_FIELDS, PROPERTIES_FIELDS, FieldSection
from . import codec
from .codec import DecodeError, _Reader

_U32 = struct.Struct(">I").unpack_from
_U32_PAIR = struct.Struct(">II").unpack_from
_U32_U8 = struct.Struct(">IB").unpack_from

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
    0xa0: lambda b, p: b[p + 2:p + 2 + b[p + 1]]})


def _flat(fmt: str, cls: Any) -> Any:
    """A reader of one call: the value of ``codec``'s reader (class and all);
    proton's unsigned classes are made without their ``__init__``, which only
    checks the sign."""
    unpack = struct.Struct(fmt).unpack_from
    if cls in (ubyte, ushort, uint, ulong):
        return lambda b, p: int.__new__(cls, unpack(b, p + 1)[0])
    return lambda b, p: cls(unpack(b, p + 1)[0])


_FAST_READ.update({
    0x50: _flat(">B", ubyte), 0x60: _flat(">H", ushort), 0x70: _flat(">I", uint),
    0x52: _flat(">B", uint), 0x80: _flat(">Q", ulong), 0x53: _flat(">B", ulong),
    0x51: _flat(">b", byte), 0x61: _flat(">h", short), 0x71: _flat(">i", int32),
    0x54: _flat(">b", int32), 0x81: _flat(">q", int), 0x55: _flat(">b", int),
    0x72: _flat(">f", float32), 0x82: _flat(">d", float), 0x83: _flat(">q", timestamp),
    0x40: lambda b, p: None, 0x41: lambda b, p: True, 0x42: lambda b, p: False,
    0xa3: lambda b, p: str.__new__(symbol, b[p + 2:p + 2 + b[p + 1]], "ascii")})
"""The common ones in one call (the zero forms, numbers, symbols): each the
value ``codec`` decodes, class and all (tests/test_encoded.py reads every form)."""

_MISSING = object()

_MAP_KEYS = {   # a map section's key constructors: str8/str32, or sym8/sym32 and ulongs
    codec.APPLICATION_PROPERTIES: ((0xa1, 0xb1), "string"),
    codec.DELIVERY_ANNOTATIONS: ((0xa3, 0xb3), "symbol or ulong"),
    codec.MESSAGE_ANNOTATIONS: ((0xa3, 0xb3), "symbol or ulong"),
    codec.FOOTER: ((0xa3, 0xb3), "symbol or ulong")}
_ULONGS = (0x44, 0x53, 0x80)


# --- the common encodings as regular expressions ------------------------------------
# Each is made from _SKIP, so it steps over a value exactly as the walks do. A
# length byte selects one alternative (sre tests an alternative's first byte
# cheaply) followed by that many bytes. Four-byte lengths are taken when below
# 256: a longer value is left to the walks. Described values too.

def _length8() -> bytes:
    return b"(?:" + b"|".join(re.escape(bytes([n])) + (b".{%d}+" % n if n else b"")
                              for n in range(256)) + b")"


def _value() -> bytes:
    by_size: dict[int, list[int]] = {}
    for code, size in enumerate(_SKIP):
        by_size.setdefault(size, []).append(code)
    fixed = sorted(set(by_size) - {0, -1, -2}, key=lambda size: (size != 9, size))

    def codes(size: int) -> bytes:
        return b"[" + b"".join(re.escape(bytes([c])) for c in by_size[size]) + b"]"
    forms = [codes(0) + _LENGTH8] + [codes(size) + (b".{%d}" % (size - 1) if size > 1 else b"")
                                     for size in fixed]
    forms.append(codes(-1) + b"\x00\x00\x00" + _LENGTH8)
    return b"(?:" + b"|".join(forms) + b")"


_LENGTH8 = _length8()
_VALUE = _value()

_ENTRIES: dict[int, re.Pattern[bytes]] = {}


def _entries(ctor: int) -> re.Pattern[bytes]:
    """Splits a map's entries into tokens: an entry of a str8 (sym8) key and a
    common value gives its key's encoding, anything else the empty string and
    the rest of the map. The entries are well-formed when every token is a
    key. (Compiled on first use: a few milliseconds.)"""
    pattern = _ENTRIES.get(ctor)
    if pattern is None:
        pattern = _ENTRIES[ctor] = re.compile(
            b"(" + re.escape(bytes([ctor])) + _LENGTH8 + b")" + _VALUE + rb"|[\s\S]++", re.S)
    return pattern


_KEY_CTOR = {codec.APPLICATION_PROPERTIES: 0xa1, codec.DELIVERY_ANNOTATIONS: 0xa3,
             codec.MESSAGE_ANNOTATIONS: 0xa3, codec.FOOTER: 0xa3}

_ENCODED_KEYS: dict[int, dict[Any, bytes]] = {0xa1: {}, 0xa3: {}}
"""A key as a map's entry would begin with it (constructor, length, UTF-8),
by the map's key constructor; b"" when no str8/sym8 key can be it."""


def _encoded_key(cache: dict[Any, bytes], ctor: int, key: str) -> bytes:
    try:
        raw = key.encode()
    except UnicodeEncodeError:
        raw = None
    encoded = b"" if raw is None or len(raw) > 255 else bytes([ctor, len(raw)]) + raw
    if len(cache) >= 4096:   # bounded: keys come from filters, and a few from callers
        cache.clear()
    cache[key] = encoded
    return encoded


class _Known:
    """Keys of maps seen before (their encodings: constructor, length, UTF-8),
    as one expression per count of entries: a map of that many entries, each a
    key of these and a common value, and no key twice. Each key is a literal
    alternative (a trie) ending in a group of its own, after a guard that
    fails when that group is set already: so a match is a well-formed map,
    and the end of a key's group is where its value is (-1: not in the map)."""

    __slots__ = ("keys", "names", "entry", "patterns")

    def __init__(self, ctor: int, keys: tuple[bytes, ...]) -> None:
        self.keys = frozenset(keys)
        self.names: dict[str, int] = {}   # a key as filters ask for it -> its group
        groups = 0

        def trie(keys: list[bytes], depth: int) -> bytes:
            nonlocal groups
            if len(keys[0]) == depth:   # a key ends (it is alone: lengths are encoded)
                groups += 1
                try:
                    self.names[str(keys[0][1:], "utf-8")] = groups
                except UnicodeDecodeError:   # no str is this key: it is only matched
                    pass
                return b"(?(%d)(?!))()" % groups
            by_byte: dict[int, list[bytes]] = {}
            for key in keys:
                by_byte.setdefault(key[depth], []).append(key)
            forms = []
            for same in by_byte.values():
                end = depth + 1
                while len(same[0]) > end and len({key[end] for key in same}) == 1:
                    end += 1
                forms.append(re.escape(same[0][depth:end]) + trie(same, end))
            return forms[0] if len(forms) == 1 else b"(?:" + b"|".join(forms) + b")"
        self.entry = re.escape(bytes([ctor])) + trie(sorted(key[1:] for key in keys), 0) + _VALUE
        self.patterns: dict[int, re.Pattern[bytes] | None] = {}

    def pattern(self, entries: int) -> re.Pattern[bytes] | None:
        """The expression of ``entries`` entries (None: more than the keys)."""
        pattern = self.patterns.get(entries, _MISSING)
        if pattern is _MISSING:
            pattern = self.patterns[entries] = None if entries > len(self.keys) else re.compile(
                b"(?:%s){%d}+" % (self.entry, entries), re.S)
        return pattern   # type: ignore[return-value]


class _Learning:
    """The known keys of one key constructor and how they are learnt: from a
    map split well-formed (``_entries``) with a key not known, at most 64 keys
    (more: start over from that map's keys), and each new set of keys after
    twice as many such maps as the one before (its expressions are compiled
    anew: bounded work, however many keys a stream has)."""

    __slots__ = ("ctor", "known", "learnt", "since")

    def __init__(self, ctor: int) -> None:
        self.ctor = ctor
        self.known: _Known | None = None
        self.learnt = 0   # sets of keys made so far
        self.since = 0    # maps with a key not known since the last

    def learn(self, keys: set[bytes]) -> None:
        known = self.known
        if not keys or known is not None and keys <= known.keys:
            return
        self.since += 1
        if self.since < 1 << min(self.learnt, 16):
            return
        union = keys if known is None else keys | known.keys
        if len(union) > 64:
            union = keys
        if len(union) <= 64:
            self.known = _Known(self.ctor, tuple(union))
            self.learnt += 1
            self.since = 0


_LEARNING = {ctor: _Learning(ctor) for ctor in (0xa1, 0xa3)}
_LEARNING_BY_CODE = {code: _LEARNING[ctor] for code, ctor in _KEY_CTOR.items()}


_FIELD_AT: dict[int, re.Pattern[bytes]] = {}
_FIELDS: dict[int, re.Pattern[bytes]] = {}


def _field_at(i: int) -> re.Pattern[bytes]:
    """Steps over ``i`` fields to one that can be stepped over: ``end()`` is its offset."""
    pattern = _FIELD_AT.get(i)
    if pattern is None:
        pattern = _FIELD_AT[i] = re.compile(b"(?:%s){%d}+(?=%s)" % (_VALUE, i, _VALUE), re.S)
    return pattern


def _fields(count: int) -> re.Pattern[bytes]:
    """``count`` fields (``fullmatch``: exactly filling the list)."""
    pattern = _FIELDS.get(count)
    if pattern is None:
        pattern = _FIELDS[count] = re.compile(b"(?:%s){%d}+" % (_VALUE, count), re.S)
    return pattern


_LIST_PATTERNS = 16   # fields beyond (rare) are walked


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
    """{section code: (value offset, end)}; amqp-sequence: a list of them."""
    return _scan(b)[0]


def _scan(b: bytes) -> tuple[dict[int, Any], tuple[bytes, ...] | None]:
    """The sections (as ``_locate``) and their heads (descriptor and value
    constructor, 4 bytes each) when the tight path read them all, else None.
    The tight path knows ``0x00 0x53 code`` descriptors and the sizes of the
    encodings sections use; anything else is the complete decoder's job."""
    found: dict[int, Any] = {}
    heads = []
    pos, last, n = 0, -1, len(b)
    ranks, allowed, skip = _RANKS, _ALLOWED, _SKIP
    try:
        while pos < n:
            if b[pos + 1] != 0x53 or b[pos]:
                return _locate_slowly(b), None
            code = b[pos + 2]
            at = pos + 3
            c = b[at]
            rank = ranks[code]
            if (rank <= last and not (rank == last and code in found and (
                    code == 0x76 or code == 0x75))) or not allowed[code][c]:
                return _locate_slowly(b), None   # out of order, unknown, or the wrong encoding
            heads.append(b[pos:at + 1])
            size = skip[c]
            if size > 0:
                pos = at + size
            elif size == 0:
                pos = at + 2 + b[at + 1]
            elif size == -1:
                pos = at + 5 + _U32(b, at + 1)[0]
            else:
                return _locate_slowly(b), None
            if code == 0x76:
                found.setdefault(code, []).append((at, pos))
            else:
                found[code] = (at, pos)
            last = rank
    except (IndexError, struct.error):
        return _locate_slowly(b), None
    if pos != n:
        return _locate_slowly(b), None
    return found, tuple(heads)


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


# --- where the sections are: a tuple, made by a layout's function or from _scan ------
# (value offset, end) of header, delivery annotations, message annotations,
# properties, application properties, amqp-value, footer (-1: absent), then the
# amqp-sequence sections' list (or None).
_PLACE = {codec.HEADER: 0, codec.DELIVERY_ANNOTATIONS: 2, codec.MESSAGE_ANNOTATIONS: 4,
          codec.PROPERTIES: 6, codec.APPLICATION_PROPERTIES: 8, codec.AMQP_VALUE: 10,
          codec.FOOTER: 12}
_SEQUENCE = 14


def _where(found: dict[int, Any]) -> tuple[Any, ...]:
    where: list[Any] = [-1] * 14 + [found.get(codec.AMQP_SEQUENCE)]
    for code, place in found.items():
        i = _PLACE.get(code)
        if i is not None:
            where[i], where[i + 1] = place
    return tuple(where)


def _layout_function(heads: tuple[bytes, ...]) -> Callable[[bytes], Any]:
    """The check of a message whose sections have ``heads``: the tuple of
    ``_where``, or None when another layout (or no message) is there. It
    reads each head at the offset the sizes before it give and steps by the
    size its constructor has, as ``_scan`` does, and ``_scan`` found these
    heads in an order the specification allows: so it accepts exactly what
    ``_scan`` accepts with these heads, and finds the same places."""
    steps, sequence = [], []
    where = ["-1"] * 14 + ["None"]
    offset = "0"
    for k, head in enumerate(heads):
        code, size = head[2], _SKIP[head[3]]
        start, after = offset, f"s{k + 1}"
        if size > 0:
            steps += [f"h = I(b, {start})[0]", f"{after} = {start} + {3 + size}"]
        elif size == 0:
            steps += [f"h, z = IB(b, {start})", f"{after} = {start} + 5 + z"]
        else:
            steps += [f"h, z = II(b, {start})", f"{after} = {start} + 8 + z"]
        steps.insert(-1, f"if h != {int.from_bytes(head, 'big')}:\n            return None")
        value = "3" if start == "0" else f"{start} + 3"
        if code == codec.AMQP_SEQUENCE:
            sequence.append(f"({value}, {after})")
        elif code in _PLACE:
            where[_PLACE[code]], where[_PLACE[code] + 1] = value, after
        offset = after
    if sequence:
        where[_SEQUENCE] = "[" + ", ".join(sequence) + "]"
    source = ("def layout(b):\n    try:\n"
              + "".join(f"        {step}\n" for step in steps)
              + "    except struct.error:\n        return None\n"
              + f"    if {offset} == len(b):\n"
              + f"        return ({', '.join(where)})\n    return None\n")
    scope: dict[str, Any] = {"I": _U32, "IB": _U32_U8, "II": _U32_PAIR, "struct": struct}
    exec(compile(source, "<filtex layout>", "exec"), scope)
    return scope["layout"]   # type: ignore[no-any-return]


def _no_layout(b: bytes) -> None:
    return None


_layout: Callable[[bytes], Any] = _no_layout   # the layout function that read the last message
_RECENT: tuple[Callable[[bytes], Any], ...] = ()   # the layout functions that read lately
_LAYOUTS: dict[tuple[bytes, ...], Callable[[bytes], Any]] = {}
_SEEN: dict[tuple[bytes, ...], int] = {}
_budget = [16, 0]   # layout functions that may still be made; messages scanned since one more


def _learn(b: bytes) -> tuple[Any, ...]:
    """``_where`` of a message ``_layout`` did not read: by another recent
    layout's function (a stream of two or three layouts, such as orders with
    and without a header's fields), else by ``_scan``. A layout met eight
    times gets a function, while the budget lasts: 16, and one more every
    65,536 messages scanned, so that a stream of ever new layouts costs
    nearly nothing in functions made."""
    global _layout, _RECENT
    for function in _RECENT:
        if function is not _layout:
            where = function(b)
            if where is not None:
                _layout = function
                return where  # type: ignore[no-any-return]
    found, heads = _scan(b)
    budget = _budget
    budget[1] += 1
    if budget[1] >= 65536:
        budget[0], budget[1] = budget[0] + 1, 0
    if heads:
        function = _LAYOUTS.get(heads)
        if function is None:
            seen = _SEEN.get(heads, 0) + 1
            if len(_SEEN) >= 1024:
                _SEEN.clear()
            _SEEN[heads] = seen
            if seen >= 8 and budget[0] > 0 and len(_LAYOUTS) < 64:
                budget[0] -= 1
                function = _LAYOUTS[heads] = _layout_function(heads)
        if function is not None:
            _layout = function
            _RECENT = ((function,) + tuple(f for f in _RECENT if f is not function))[:4]
    return _where(found)


def _decode(b: bytes, at: int, end: int) -> Any:
    """The complete decoder's value at ``at``, which must end by ``end``."""
    def step(reader: _Reader) -> Any:
        reader.end = end
        return reader.value(at, 1)[0]
    return codec._run(step, b)


class EncodedMap(Mapping):
    """A map section read in place. Its first read checks the whole map's
    structure: an even count, keys of the section's key types, no key twice,
    entries that exactly fill the map. A map that fails is malformed for
    every read (AMQP 1.0 part 1.6.23: a map with a duplicate key is not a
    map), so no read can see a value another reader (first or last of two
    equal keys) would not, and every filter on one view gets the answer it
    gets alone. Values are decoded when asked for.

    The check takes the first of three ways that proves the map well-formed
    (``_index`` says which):

    - a match of the expression of the known keys (``_Known``): a key's
      value is where its group ends;
    - a split (``_entries``): one expression splits the entries, giving the
      set of the keys' encodings; a key is found by its encoding
      (``bytes.find``), an entry when it occurs once in the entries;
    - ``_walk``: the map walked by sizes, a dict of each key's value offset;
      every irregular map is the complete decoder's (``_walk_slowly``).

    The first two only ever prove a map well-formed that ``_walk`` would
    accept (their expressions step over values by ``_walk``'s sizes), and
    find the offsets it would; anything else they leave to it."""

    __slots__ = ("_b", "_start", "_end", "_code", "_index", "_values", "_problem", "_first",
                 "_names", "_by_key")

    def __init__(self, b: bytes, at: int, end: int, code: int) -> None:
        self._b = b   # one store a line: a tuple assigned is slower, on every message
        self._start = at
        self._end = end
        self._code = code
        self._index: Any = None   # a match, a set of encodings or a dict (None: unchecked)
        self._names: dict[str, int] | None = None   # a match's groups by key
        self._values: dict[Any, Any] = {}   # the values decoded so far
        self._problem: DecodeError | None = None   # why the map is malformed

    def _indexed(self) -> Any:
        """The index, made on the first read; a malformed map raises (a new
        exception each time: one raised again would keep every earlier
        traceback) with the same reason for every read.

        A match of the known keys' expression, else the set of a split, else
        ``_walk``'s dict. The first two prove the map well-formed: all
        ``count / 2`` entries (an even count) tile the map exactly, each a key
        of the section's str8 (sym8) constructor and a value stepped over as
        ``_walk`` steps, and no key twice (each key's guard; the set's size):
        so ``_walk`` would accept the map, and find the same values."""
        if self._problem is None:
            b, at, end = self._b, self._start, self._end
            if b[at] == 0xc1:
                p = at + 3
                count = b[at + 2] if p <= end else 1
            else:
                p = at + 9
                count = _U32(b, at + 5)[0] if p <= end else 1
            if not count & 1:   # (odd, or no room for a count: for _walk)
                learning = _LEARNING_BY_CODE[self._code]
                known = learning.known
                if known is not None:
                    pattern: Any = known.patterns.get(count >> 1, _MISSING)
                    if pattern is _MISSING:
                        pattern = known.pattern(count >> 1)
                    if pattern is not None:
                        match = pattern.fullmatch(b, p, end)
                        if match is not None:
                            self._names = known.names
                            self._index = match
                            return match
                index = self._split(learning, p, count >> 1)
                if index is not None:
                    self._index = index
                    return index
            try:
                self._index = walked = self._walk()
                return walked
            except DecodeError as error:
                self._problem = error
        raise _malformed(self._problem) from None

    def _split(self, learning: _Learning, p: int, entries: int) -> set[bytes] | None:
        """The set of the keys' encodings of a well-formed map of ``entries``
        entries from ``p`` (None: not shown so)."""
        keys = _entries(learning.ctor).findall(self._b, p, self._end)
        if len(keys) != entries:
            return None
        index = set(keys)
        if len(index) != len(keys) or b"" in index:
            return None
        self._first = p
        learning.learn(index)
        return index

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

    def _walked(self) -> dict[Any, int]:
        """The index by keys, for the reads other than ``get``: a map checked
        well-formed another way is walked once (it then cannot fail)."""
        index = self._index
        if index is None:
            index = self._indexed()
        if type(index) is dict:
            return index
        walked: dict[Any, int] | None = getattr(self, "_by_key", None)
        if walked is None:
            walked = self._by_key = self._walk()
        return walked

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
            value = self._values.get(key, _MISSING)   # filled only once the map is checked
            if value is not _MISSING:
                return value
            names = self._names
            if names is None and self._index is None:
                self._indexed()
                names = self._names
            if names is not None:   # matched: every key is a known one
                group = names.get(key)
                if group is None:
                    return default
                at = self._index.end(group)
                if at < 0:
                    return default
            else:
                index = self._index
                if type(index) is set:   # split: every key is str8 (sym8)
                    ctor = _KEY_CTOR[self._code]
                    cache = _ENCODED_KEYS[ctor]
                    encoded = cache.get(key)
                    if encoded is None:
                        encoded = _encoded_key(cache, ctor, key)
                    if encoded not in index:
                        return default
                    b, first, end = self._b, self._first, self._end
                    at = b.find(encoded, first, end)
                    if at == b.rfind(encoded, first, end):
                        at += len(encoded)
                    else:   # its bytes are in a value too: walked (it cannot fail)
                        at = self._walked()[encoded[2:]]
                        if at < 0:
                            return self._values.get(key, default)
                else:
                    try:
                        at = index.get(key.encode(), _MISSING)
                    except UnicodeEncodeError:
                        return default
                    if at is _MISSING:
                        return default
                    if at < 0:   # decoded whole: kept under the decoded keys
                        return self._values.get(key, default)
        else:   # a ulong key (annotations): kept under the ulong
            index = self._index
            if index is None:
                index = self._indexed()
            key = raw = self._raw(key)
            if raw is None or type(index) is not dict:   # matched or split: no ulong key
                return default
            value = self._values.get(raw, _MISSING)
            if value is not _MISSING:
                return value
            at = index.get(raw, _MISSING)
            if at is _MISSING:
                return default
            if at < 0:
                return self._values.get(key, default)
        b = self._b
        try:
            if b[at] == 0xa1:   # the commonest value, read here
                value = str(b[at + 2:at + 2 + b[at + 1]], "utf-8")
            else:
                read = _FAST_READ.get(b[at])
                value = read(b, at) if read is not None else _decode(b, at, self._end)
        except UnicodeDecodeError as exc:
            raise _malformed(DecodeError(f"invalid UTF-8 in a string: {exc.reason}", at)) \
                from None
        except DecodeError as error:
            raise _malformed(error) from None
        self._values[key] = value
        return value

    def __contains__(self, key: Any) -> bool:
        index = self._walked()
        raw = self._raw(key)
        return raw is not None and raw in index

    def __getitem__(self, key: Any) -> Any:
        if key not in self:
            raise KeyError(key)
        return self.get(key)

    def __iter__(self) -> Iterator[Any]:
        symbols = self._code != codec.APPLICATION_PROPERTIES
        for raw in list(self._walked()):
            if type(raw) is ulong:
                yield raw
            else:
                text = str(raw, "utf-8", "replace")
                yield symbol(text) if symbols else text

    def __len__(self) -> int:
        return len(self._walked())

    def __repr__(self) -> str:
        return f"EncodedMap({dict(self)!r})"


class EncodedFields(FieldSection):
    """A header or properties list read in place: fields by name, the list
    stepped over (by sizes) only up to the field asked for; null and missing
    fields are absent. A read gives what it gives on a fresh view of the
    bytes: a field is read when every field before it can be stepped over,
    whatever other reads failed before. The fields are stepped over by a
    regular expression (``_field_at``, made from the walk's sizes); where it
    does not match, walked (``_offset``), which says what is wrong."""

    __slots__ = ("_b", "_at", "_end", "_names", "_numbers", "_offsets", "_pos", "_count",
                 "_decoded", "_values", "_first")

    def __init__(self, b: bytes, at: int, end: int, names: tuple[str, ...]) -> None:
        self._b = b   # one store a line: a tuple assigned is slower
        self._at = at
        self._end = end
        self._names = names
        self._numbers = _FIELD_NUMBERS[names]
        self._offsets: list[int] = []
        self._decoded: dict[str, Any] | None = None
        self._values: dict[str, Any] = {}   # the fields read so far (None: absent)
        c = b[at]
        if c == 0xc0 and at + 2 < end:
            self._count = b[at + 2]
            self._pos = self._first = at + 3
        elif c == 0x45:
            self._count = 0
            self._pos = self._first = at + 1
        elif c == 0xd0 and at + 9 <= end:
            self._count = _U32_PAIR(b, at + 1)[1]
            self._pos = self._first = at + 9
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
        """Field ``name``'s value (None: absent). Where ``_field_at`` steps over
        the fields before it (and can step over it), that is where ``_offset``
        finds it; and where the count's fields exactly fill the list, a field
        past the count is absent for ``_offset`` too."""
        at: Any = None
        try:
            if self._decoded is not None:
                return self._decoded.get(name)
            i = self._numbers.get(name)
            if i is None:
                return None
            count = self._count
            if i < count:
                if i < _LIST_PATTERNS:
                    pattern = _FIELD_AT.get(i) or _field_at(i)
                    found = pattern.match(self._b, self._first, self._end)
                    at = self._offset(i) if found is None else found.end()
                else:
                    at = self._offset(i)
            elif count < _LIST_PATTERNS and (_FIELDS.get(count) or _fields(count)).fullmatch(
                    self._b, self._first, self._end) is not None:
                return None
            else:
                at = self._offset(i)
                if at is None:
                    return None
            b = self._b
            read = _FAST_READ.get(b[at])
            return read(b, at) if read is not None else _decode(b, at, self._end)
        except DecodeError as error:
            raise _malformed(error) from None
        except UnicodeDecodeError as exc:
            raise _malformed(DecodeError(f"invalid UTF-8 in a string: {exc.reason}", at)) \
                from None


_FIELD_NUMBERS = {names: {name: i for i, name in enumerate(names)}
                  for names in (HEADER_FIELDS, PROPERTIES_FIELDS)}


# --- the sections of EncodedMessage: each made on its first read -----------------------

class _Section:
    """A section of ``EncodedMessage``, made on its first read and then kept in
    the message's ``__dict__`` (a non-data descriptor: later reads do not
    reach it). A message that is not one fails every read with its reason."""

    __slots__ = ("name", "code", "place")

    def __init__(self, name: str, code: int) -> None:
        self.name, self.code = name, code
        self.place = _SEQUENCE if code == codec.AMQP_SEQUENCE else _PLACE[code]

    def __get__(self, message: Any, owner: Any = None) -> Any:
        if message is None:
            return self
        error = message._error
        if error is not None:   # a new exception each time: one raised again keeps tracebacks
            raise EvaluationFailure(error.reason) from None
        try:
            value = self.make(message.buffer, message._where)
        except DecodeError as problem:
            raise _malformed(problem) from None
        message.__dict__[self.name] = value
        return value

    def make(self, b: bytes, where: tuple[Any, ...]) -> Any:
        at = where[self.place]
        if at < 0:
            return EMPTY
        return EncodedMap(b, at, where[self.place + 1], self.code)


class _Properties(_Section):
    __slots__ = ()

    def __get__(self, message: Any, owner: Any = None) -> Any:
        if message is None:
            return self
        error = message._error
        if error is not None:
            raise EvaluationFailure(error.reason) from None
        where = message._where
        at = where[6]
        try:
            value = EMPTY if at < 0 else EncodedFields(message.buffer, at, where[7],
                                                       PROPERTIES_FIELDS)
        except DecodeError as problem:
            raise _malformed(problem) from None
        message.__dict__["_filtex_properties"] = value
        return value


class _Header(_Section):
    """The header: a list that decodes whole is read once for every message
    whose header has the same bytes (the fields then all read as the walk
    reads them, without fail): most messages of a stream share a handful."""

    __slots__ = ()

    def make(self, b: bytes, where: tuple[Any, ...]) -> Any:
        at = where[0]
        if at < 0:
            return EMPTY
        end = where[1]
        key = b[at:end]
        fields = _HEADERS.get(key)
        if fields is not None:
            return fields
        seen = _HEADERS_SEEN.get(key, 0) + 1
        if seen < 2:   # met once: only a header met again is decoded whole
            if len(_HEADERS_SEEN) >= 1024:
                _HEADERS_SEEN.clear()
            _HEADERS_SEEN[key] = seen
            return EncodedFields(b, at, end, HEADER_FIELDS)
        try:
            fields = MappingProxyType(codec._fields(HEADER_FIELDS, _decode(b, at, end), 0, at))
        except DecodeError:   # read field by field: each read says what it meets
            _HEADERS_SEEN[key] = -1 << 30
            return EncodedFields(b, at, end, HEADER_FIELDS)
        if len(_HEADERS) >= 256:
            _HEADERS.clear()
        _HEADERS[key] = fields
        return fields


_HEADERS: dict[bytes, Mapping[str, Any]] = {}
_HEADERS_SEEN: dict[bytes, int] = {}


class _AmqpValue(_Section):
    __slots__ = ()

    def make(self, b: bytes, where: tuple[Any, ...]) -> Any:
        at = where[10]
        return None if at < 0 else _decode(b, at, where[11])


class _AmqpSequence(_Section):
    __slots__ = ()

    def make(self, b: bytes, where: tuple[Any, ...]) -> Any:
        sequence = where[_SEQUENCE]
        if sequence is None:
            return None
        return [item for at, end in sequence for item in _decode(b, at, end)]


class EncodedMessage:
    """An encoded AMQP message (``bytes``, ``bytearray`` or ``memoryview``)
    that filters read in place. ``connection`` is the opaque id of the
    connection it arrived on (the no-local filter). A ``bytearray`` or
    ``memoryview`` is copied once, so a later change to it cannot change a
    verdict half-way.

    Making one checks the chain of sections (by its layout's function, or a
    step a section) and sets up the application properties, which nearly
    every filter reads; every other section is set up on its first read.
    Bytes that are not a message are not an error here: every read of the
    message then fails with the reason, so the filter's result is unknown
    with it.
    """

    __slots__ = ("buffer", "_filtex_connection", "_where", "_error", "__dict__")

    _filtex_header = _Header("_filtex_header", codec.HEADER)
    _filtex_delivery_annotations = _Section("_filtex_delivery_annotations",
                                            codec.DELIVERY_ANNOTATIONS)
    _filtex_message_annotations = _Section("_filtex_message_annotations",
                                           codec.MESSAGE_ANNOTATIONS)
    _filtex_properties = _Properties("_filtex_properties", codec.PROPERTIES)
    _filtex_application_properties = _Section(   # (made by __init__: this only refuses)
        "_filtex_application_properties", codec.APPLICATION_PROPERTIES)
    _filtex_amqp_value = _AmqpValue("_filtex_amqp_value", codec.AMQP_VALUE)
    _filtex_amqp_sequence = _AmqpSequence("_filtex_amqp_sequence", codec.AMQP_SEQUENCE)
    _filtex_footer = _Section("_filtex_footer", codec.FOOTER)

    def __init__(self, buffer: Any, connection: Any = None) -> None:
        self.buffer = b = buffer if type(buffer) is bytes else bytes(buffer)
        self._filtex_connection = connection
        where = _layout(b)
        if where is None:
            try:
                where = _learn(b)
            except DecodeError as error:
                self._error: EvaluationFailure | None = _malformed(error)
                return
        self._error = None
        self._where = where
        at = where[8]   # the map nearly every filter reads: made now, no descriptor to reach
        self.__dict__["_filtex_application_properties"] = EMPTY if at < 0 else EncodedMap(
            b, at, where[9], codec.APPLICATION_PROPERTIES)

    @property
    def connection(self) -> Any:
        return self._filtex_connection

    @property
    def problem(self) -> str | None:
        """Why these bytes are not a message (their sections cannot be found),
        or None. Every read of such a message fails with this reason."""
        return None if self._error is None else self._error.reason

    def __repr__(self) -> str:
        return f"EncodedMessage({len(self.buffer)} bytes)"
