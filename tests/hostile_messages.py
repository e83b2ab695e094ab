"""Seeded, deterministic generators of hostile AMQP-encoded messages and a pool
of filters that read every part of them, shared by the differential tests of
the encoded view (test_hostile_encoded.py) and of the encoded-column decoder
(test_arrow_decode.py).

A message is built section by section from hand-written encodings, so that
each fault can be put exactly where a reader meets it: unknown constructors
and wrong sizes in header and properties fields, duplicate keys (in every
encoding of a key), keys of the wrong type, invalid UTF-8, non-ASCII symbols,
described values, maps whose count or size lies; then some messages are
mutated as bytes (flips, cuts, inserts).
"""
from __future__ import annotations

import random
import struct
from typing import Callable

import filtex

# --- encodings ---------------------------------------------------------------------


def vbin(small: int, large: int, raw: bytes, wide: bool = False) -> bytes:
    if len(raw) < 256 and not wide:
        return bytes([small, len(raw)]) + raw
    return bytes([large]) + struct.pack(">I", len(raw)) + raw


def string(text: str | bytes, wide: bool = False) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return vbin(0xa1, 0xb1, raw, wide)


def sym(text: str | bytes, wide: bool = False) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return vbin(0xa3, 0xb3, raw, wide)


def compound(small: int, large: int, items: list[bytes], wide: bool = False) -> bytes:
    body = b"".join(items)
    if len(body) < 255 and len(items) < 256 and not wide:
        return bytes([small, len(body) + 1, len(items)]) + body
    return bytes([large]) + struct.pack(">II", len(body) + 4, len(items)) + body


def amqp_list(items: list[bytes], wide: bool = False) -> bytes:
    return compound(0xc0, 0xd0, items, wide) if items else b"\x45"


def amqp_map(entries: list[tuple[bytes, bytes]], wide: bool = False) -> bytes:
    return compound(0xc1, 0xd1, [x for pair in entries for x in pair], wide)


def section(code: int, value: bytes) -> bytes:
    return bytes([0x00, 0x53, code]) + value


def described(value: bytes) -> bytes:
    return b"\x00\x53\x01" + value


BAD_CONSTRUCTORS = [b"\x2d", b"\xff", b"\x01", b"\x00"]   # \x00 alone: a descriptor with nothing


# --- random values -------------------------------------------------------------------

def scalar(rng: random.Random) -> bytes:
    """A random scalar in one of its encodings."""
    kind = rng.randrange(14)
    if kind == 0:
        return b"\x40"
    if kind == 1:
        return rng.choice([b"\x41", b"\x42", b"\x56\x00", b"\x56\x01"])
    if kind == 2:
        return b"\x54" + struct.pack(">b", rng.randrange(-128, 128))
    if kind == 3:
        return b"\x71" + struct.pack(">i", rng.randrange(-5, 500))
    if kind == 4:
        return b"\x81" + struct.pack(">q", rng.randrange(-5, 5000))
    if kind == 5:
        return b"\x82" + struct.pack(">d", rng.choice([0.5, 3.5, -1.0, 150.25]))
    if kind == 6:
        return string(rng.choice(["two", "a.b", "q", "id-1", "m", "", "é"]), rng.random() < 0.2)
    if kind == 7:
        return sym(rng.choice(["text/plain", "gzip", "m"]), rng.random() < 0.2)
    if kind == 8:
        return b"\x83" + struct.pack(">q", rng.choice([0, 5, 1_700_000_000_000]))
    if kind == 9:
        return rng.choice([b"\x52\x02", b"\x43", b"\x70\x00\x00\x00\x07", b"\x50\x05",
                           b"\x53\x09", b"\x44", b"\x60\x00\x03"])
    if kind == 10:
        return vbin(0xa0, 0xb0, rng.choice([b"u", b"", b"\x00\xff"]))
    if kind == 11:
        return b"\x98" + bytes(range(16))
    if kind == 12:
        return b"\x72" + struct.pack(">f", 2.5)
    return b"\x73" + struct.pack(">I", rng.choice([0x41, 0xe9, 0x1F600]))


class Faults(random.Random):
    """A seeded random source that also says how often a value is hostile."""

    def __init__(self, seed: int, rate: float) -> None:
        super().__init__(seed)
        self.rate = rate


def hostile_value(rng: random.Random, good: Callable[[], bytes]) -> bytes:
    """Mostly ``good()``, sometimes (``rng.rate``) a value a reader must refuse
    or handle whole."""
    if rng.random() >= getattr(rng, "rate", 0.2):
        return good()
    roll = 0.8 + 0.2 * rng.random()
    if roll < 0.84:
        return rng.choice(BAD_CONSTRUCTORS)
    if roll < 0.88:
        return string(b"\xff\xfe" if rng.random() < 0.5 else b"a\xed\xa0\x80")   # bad UTF-8
    if roll < 0.91:
        return sym("é".encode())                                  # a symbol not ASCII
    if roll < 0.95:
        return described(good())
    if roll < 0.97:
        return b"\x56\x07"                                       # a boolean byte not 0/1
    if roll < 0.99:
        return amqp_list([scalar(rng)])                          # a composite
    return b"\xa1\x09ab"                                         # a size past its end


# --- sections ------------------------------------------------------------------------

def fields(rng: random.Random, makers: list[Callable[[], bytes]]) -> bytes:
    """A composite list of fields: each absent (null) or made, trailing nulls
    sometimes dropped, now and then more fields than the section has."""
    items = [hostile_value(rng, maker) if rng.random() < 0.6 else b"\x40" for maker in makers]
    if rng.random() < 0.5:
        while items and items[-1] == b"\x40":
            items.pop()
    if rng.random() < 0.03:
        items.append(scalar(rng))
    return amqp_list(items, rng.random() < 0.2)


def header(rng: random.Random) -> bytes:
    boolean = lambda: rng.choice([b"\x41", b"\x42", b"\x56\x01"])  # noqa: E731
    uint = lambda: rng.choice([b"\x52\x02", b"\x70\x00\x00\x01\x00", b"\x43"])  # noqa: E731
    return fields(rng, [boolean, lambda: b"\x50" + bytes([rng.randrange(10)]), uint,
                        boolean, uint])


def properties(rng: random.Random) -> bytes:
    text = lambda: string(rng.choice(["id-1", "q", "a.b", "r", "g", "rg"]))  # noqa: E731
    symbolic = lambda: sym(rng.choice(["text/plain", "gzip"]))  # noqa: E731
    time = lambda: b"\x83" + struct.pack(">q", rng.choice([5, 1_700_000_000_000]))  # noqa: E731
    ident = lambda: rng.choice([text(), b"\x53\x09", b"\x98" + bytes(16), vbin(0xa0, 0xb0, b"i")])  # noqa: E731
    return fields(rng, [ident, lambda: vbin(0xa0, 0xb0, b"u"), text, text, text, ident,
                        symbolic, symbolic, time, time, text,
                        lambda: b"\x52\x03", text])


APP_KEYS = ["a", "b", "c", "t", "zz", "region", "a-much-longer-key-than-eight-bytes"]
ANNOTATION_KEYS = ["x-opt-d", "x-opt-m", "x-opt-n", "x-opt-f"]


def keyed_map(rng: random.Random, symbolic: bool) -> bytes:
    """A map section of random keys, values and encodings; sometimes a key twice
    (in the same or another encoding), a key of the wrong type, a count or size
    that lies."""
    names = ANNOTATION_KEYS if symbolic else APP_KEYS
    chosen = rng.sample(names, rng.randrange(len(names) + 1))
    entries = []
    for name in chosen:
        key = (sym if symbolic else string)(name, rng.random() < 0.15)
        entries.append((key, hostile_value(rng, lambda: scalar(rng))))
    if symbolic and rng.random() < 0.2:
        entries.append((rng.choice([b"\x53\x03", b"\x44", b"\x80" + bytes(7) + b"\x03"]),
                        scalar(rng)))
    if entries and rng.random() < 0.15:   # a duplicate key, anywhere, any encoding
        key = entries[rng.randrange(len(entries))][0]
        if rng.random() < 0.3 and key[0] in (0xa1, 0xa3):   # the same key, wider encoding
            key = (sym if symbolic else string)(key[2:], True)
        elif rng.random() < 0.3 and key in (b"\x53\x03", b"\x44"):
            key = b"\x80" + bytes(7) + key[1:2] if key != b"\x44" else b"\x53\x00"
        entries.insert(rng.randrange(len(entries) + 1), (key, scalar(rng)))
    if rng.random() < 0.05:   # a key of the wrong type
        entries.insert(rng.randrange(len(entries) + 1),
                       ((string if symbolic else sym)("a"), scalar(rng)))
    encoded = amqp_map(entries, rng.random() < 0.2)
    roll = rng.random()
    if roll < 0.03 and len(encoded) > 3:   # an odd count, or a count that lies
        encoded = encoded[:2] + bytes([encoded[2] ^ 1]) + encoded[3:] \
            if encoded[0] == 0xc1 else encoded
    elif roll < 0.06 and encoded[0] == 0xc1 and len(encoded) > 3:   # a size that lies
        encoded = encoded[:1] + bytes([(encoded[1] + rng.choice([-1, 1])) % 256]) + encoded[2:]
    return encoded


def body(rng: random.Random) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:
        return b""
    if kind == 1:
        return section(0x75, vbin(0xa0, 0xb0, bytes(rng.randrange(40))))
    if kind == 2:
        total = b"\x54" + bytes([rng.randrange(200)])
        return section(0x77, amqp_map([(string("order"), amqp_map([(string("total"), total)]))]))
    if kind == 3:
        return section(0x76, amqp_list([scalar(rng), scalar(rng)]))
    return section(0x77, hostile_value(rng, lambda: scalar(rng)))


SECTION_SYMBOLS = {
    0x70: "amqp:header:list", 0x71: "amqp:delivery-annotations:map",
    0x72: "amqp:message-annotations:map", 0x73: "amqp:properties:list",
    0x74: "amqp:application-properties:map", 0x75: "amqp:data:binary",
    0x76: "amqp:amqp-sequence:list", 0x77: "amqp:amqp-value:*", 0x78: "amqp:footer:map"}


def message(rng: random.Random) -> bytes:
    """Sections in order, now and then with the 8-byte or the symbol form of
    their descriptor, and now and then one repeated or two out of order."""
    made = []
    if rng.random() < 0.7:
        made.append((0x70, header(rng)))
    if rng.random() < 0.3:
        made.append((0x71, keyed_map(rng, True)))
    if rng.random() < 0.6:
        made.append((0x72, keyed_map(rng, True)))
    if rng.random() < 0.8:
        made.append((0x73, properties(rng)))
    if rng.random() < 0.9:
        made.append((0x74, keyed_map(rng, False)))
    parts = []
    for code, value in made:
        roll = rng.random()
        if roll < 0.04:
            parts.append(b"\x00\x80" + struct.pack(">Q", code) + value)
        elif roll < 0.07:
            parts.append(b"\x00" + sym(SECTION_SYMBOLS[code]) + value)
        else:
            parts.append(section(code, value))
    parts.append(body(rng))
    if rng.random() < 0.2:
        parts.append(section(0x78, keyed_map(rng, True)))
    if len(parts) > 1 and rng.random() < 0.06:
        i = rng.randrange(len(parts) - 1)
        if rng.random() < 0.5:
            parts.insert(i, parts[i])                     # a section twice
        else:
            parts[i], parts[i + 1] = parts[i + 1], parts[i]   # two out of order
    return b"".join(parts)


def mutated(rng: random.Random, data: bytes) -> bytes:
    """``data`` with a few bytes flipped, cut short, or bytes inserted."""
    out = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        roll = rng.random()
        if not out:
            break
        at = rng.randrange(len(out))
        if roll < 0.5:
            out[at] = rng.randrange(256)
        elif roll < 0.7:
            del out[at:]
        elif roll < 0.9:
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3)))
        else:
            del out[at:at + rng.randrange(1, 4)]
    return bytes(out)


# The reproducers: one failed read must not make another field read as a third.
BAD_PROPERTIES = section(0x73, amqp_list([string("id-1"), vbin(0xa0, 0xb0, b"u"), b"\x2d",
                                          string("a.b")]))
BAD_HEADER = section(0x70, amqp_list([b"\x41", b"\x50\x05", b"\x2d", b"\x41"]))
DUPLICATE_KEY = b"\x00\x53\x74\xc1\x0e\x06\xa1\x01a\x41\xa1\x01a\x42\xa1\x01x\x54\x05"
REPRODUCERS = [BAD_PROPERTIES, BAD_HEADER, DUPLICATE_KEY,
               BAD_HEADER + BAD_PROPERTIES + section(0x74, amqp_map([(string("a"), b"\x54\x01")]))]


def messages(count: int, seed: int, rate: float = 0.2, mutate: float = 0.35) -> list[bytes]:
    """The reproducers, then ``count`` random messages, each value hostile at
    ``rate``, a share ``mutate`` of them mutated as bytes."""
    rng = Faults(seed, rate)
    out = list(REPRODUCERS)
    while len(out) < count + len(REPRODUCERS):
        data = message(rng)
        out.append(mutated(rng, data) if rng.random() < mutate else data)
    return out


# --- filters -------------------------------------------------------------------------

SQL = [
    "h.durable = TRUE", "h.priority > 3", "h.ttl IS NULL", "h.ttl > 1",
    "h.[first-acquirer] = TRUE", "h.[delivery-count] = 2", "EXISTS(h.[delivery-count])",
    "p.[message-id] = 'id-1'", "p.[user-id] IS NULL", "p.to = 'q'", "p.to = 'id-1'",
    "p.subject = 'a.b'", "p.[reply-to] LIKE 'r%'", "p.[correlation-id] IS NOT NULL",
    "p.[content-type] = 'text/plain'", "p.[content-encoding] IS NULL",
    "p.[absolute-expiry-time] > 0", "p.[creation-time] > 0", "p.[group-id] = 'g'",
    "p.[group-sequence] > 1", "p.[reply-to-group-id] IS NULL",
    "d.[x-opt-d] IS NULL", "m.[x-opt-m] = 'm'", "EXISTS(m.[x-opt-n])", "f.[x-opt-f] IS NULL",
    "a = 1", "a IS NULL", "b = 'two'", "c > 3", "EXISTS(t)", "zz IS NULL", "x = 5",
    "region = 'q' OR [a-much-longer-key-than-eight-bytes] = 'm'",
    "a = 1 AND b = 'two'", "h.priority > 3 AND p.subject = 'a.b'",
    "c > 0 OR p.to = 'q' OR h.durable",
    "amqp_value.order.total > 100", "amqp_value IS NULL", "amqp_sequence[0] IS NOT NULL",
    "TRUE",
]
OTHER = [("JMSPriority > 3", "jms"), ("JMSCorrelationID = 'id-1'", "jms"),
         ("JMSType = 'a.b'", "jms"), ("a = 1 OR b = 'two'", "rabbitmq")]
DESCRIBED = [("amqp:application-properties-filter", {"a": 1}),
             ("amqp:properties-filter", {"subject": "a.b"}),
             ("amqp:header-filter", {"priority": 5}),
             ("amqp:message-annotations-filter", {"x-opt-m": "m"})]


def filters() -> list[filtex.Filter]:
    return ([filtex.compile_sql(text) for text in SQL]
            + [filtex.compile_sql(text, dialect) for text, dialect in OTHER]
            + [filtex.compile_filter(spec) for spec in DESCRIBED])
