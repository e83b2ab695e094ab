"""filtex.amqp.codec: AMQP 1.0 decoding that is exact, lazy and total.

Exact: values proton encodes come back as proton decodes them, class for
class. Lazy: sections are found by their sizes and bodies never decoded.
Total: malformed bytes raise DecodeError (with a reason and an in-range
offset) and nothing else, quickly.
"""
from __future__ import annotations

import math
import random
import struct
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from randomness import examples
from proton import (Array, Data, Described, byte, char, decimal32, decimal64,
                    decimal128, float32, int32, short, symbol, timestamp, ubyte,
                    uint, ulong, ushort)
from proton import Message as ProtonMessage

from filtex import Message, message_from_json
from filtex.message import Body
from filtex.amqp import DecodeError, decode_message, decode_value, locate_sections
from filtex.amqp.codec import MAX_DEPTH, identical
from timing import growth


def same(got, want) -> bool:
    """Equal value AND equal class, all the way down (ubyte(1) == 1 in Python);
    message bodies too."""
    if isinstance(got, Body):
        return type(want) is Body and got.kind == want.kind and identical(
            list(got.sections), list(want.sections))
    return identical(got, want)


def proton_encode(value) -> bytes:
    data = Data()
    data.put_object(value)
    return data.encode()


def proton_decode(encoded: bytes):
    data = Data()
    data.decode(encoded)
    data.rewind()
    data.next()
    return copied(data.get_object())


def copied(value):
    """``value`` with proton's binaries (memoryviews into its own buffer, gone
    with the Data object) copied to bytes."""
    if type(value) is memoryview:
        return bytes(value)
    if isinstance(value, list):
        return [copied(v) for v in value]
    if isinstance(value, dict):
        return {copied(k): copied(v) for k, v in value.items()}
    if isinstance(value, Described):
        return Described(copied(value.descriptor), copied(value.value))
    if isinstance(value, Array):
        return Array(copied(value.descriptor), value.type, *map(copied, value.elements))
    return value


def decode_all(encoded: bytes):
    value, end = decode_value(encoded)
    assert end == len(encoded)
    return value


# --- round trips through proton's encoder ----------------------------------------

ROUND_TRIP = [
    None, True, False, ubyte(0), ubyte(255), ushort(65535), uint(0), uint(7), uint(300),
    uint(2**32 - 1), ulong(0), ulong(5), ulong(2**64 - 1), byte(-128), byte(127),
    short(-32768), int32(-5), int32(2**31 - 1), int32(-2**31), 0, -1, 300, 2**63 - 1, -2**63,
    float32(0.1), float32(-2.5), float32(math.inf), 1.5, -0.0, math.inf, math.nan, 1e300,
    decimal32(0x2280000A), decimal32(0xFFFFFFFF), decimal64(0x31C0000000000001),
    decimal128(bytes(range(16))), char("a"), char("é"), char("\U0001F600"),
    timestamp(1700000000000), timestamp(-1), timestamp(0), uuid.UUID(int=0x1234),
    b"", b"\x00\xff", b"x" * 300, "", "héllo ☃", "x" * 300, symbol("s"), symbol("s" * 300),
    [], [1, "a", None], list(range(300)), {}, {"a": 1, symbol("b"): [ubyte(2)]},
    {str(i): i for i in range(100)}, {1: 2, None: b"x", uuid.UUID(int=9): 1.5},
    Described(symbol("d"), "v"), Described(ulong(1), [1, Described(ulong(2), None)]),
    Array(None, Data.INT, 1, 2, 3), Array(None, Data.STRING, "a", "bc"),
    Array(symbol("x"), Data.INT, 1, 2), Array(ulong(7), Data.STRING, "a"),
    Array(None, Data.LIST, [1], [2, "x"]), Array(None, Data.BOOL, True, False),
    Array(None, Data.MAP, {1: 2}), Array(None, Data.UUID, uuid.UUID(int=3)),
    Array(None, Data.CHAR, char("a")), Array(None, Data.NULL, None, None),
    Array(None, Data.DOUBLE), Array(None, Data.SYMBOL, symbol("a") * 300),
    Array(None, Data.ARRAY, Array(None, Data.INT, 1)), Array(None, Data.FLOAT, float32(0.1)),
    Array(None, Data.TIMESTAMP, timestamp(5)), Array(None, Data.BINARY, b"ab"),
    Array(None, Data.DECIMAL64, decimal64(1)), Array(None, Data.ULONG, ulong(1), ulong(2**64 - 1)),
]


@pytest.mark.parametrize("value", ROUND_TRIP, ids=lambda v: f"{type(v).__name__}:{v!r:.30}")
def test_round_trip_through_proton(value):
    encoded = proton_encode(value)
    got = decode_all(encoded)
    assert same(got, proton_decode(encoded)), (got, proton_decode(encoded))
    if not isinstance(value, (Array, float32)) and not (
            isinstance(value, float) and math.isnan(value)):
        assert same(got, value)


def test_float32_reads_as_its_single_precision_value():
    got = decode_all(proton_encode(float32(0.1)))
    assert type(got) is float32 and float(got) == struct.unpack(">f", struct.pack(">f", 0.1))[0]
    assert float(got) != 0.1


def test_typed_put_methods_round_trip():
    data = Data()
    data.put_list()
    data.enter()
    for put, value in [(data.put_ubyte, 1), (data.put_ushort, 2), (data.put_uint, 3),
                       (data.put_ulong, 4), (data.put_byte, -1), (data.put_short, -2),
                       (data.put_int, -3), (data.put_long, -4), (data.put_float, 0.5),
                       (data.put_double, 0.25), (data.put_timestamp, 6),
                       (data.put_char, "z"), (data.put_symbol, "sym"),
                       (data.put_string, "str"), (data.put_binary, b"bin"),
                       (data.put_bool, True), (data.put_uuid, uuid.UUID(int=1))]:
        put(value)
    data.put_null()
    data.exit()
    encoded = data.encode()
    assert same(decode_all(encoded), proton_decode(encoded))


TEXT = st.characters(blacklist_categories=("Cs",))   # proton cannot encode surrogates


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), st.floats(),
              st.text(TEXT, max_size=20), st.binary(max_size=20),
              st.integers(0, 255).map(ubyte), st.integers(0, 2**32 - 1).map(uint),
              st.integers(0, 2**64 - 1).map(ulong), st.integers(-2**31, 2**31 - 1).map(int32),
              st.text(st.characters(max_codepoint=127), max_size=10).map(symbol),
              st.integers(-2**63, 2**63 - 1).map(timestamp), st.uuids()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(st.text(TEXT, max_size=5), st.integers(-2**63, 2**63 - 1)),
                        inner, max_size=5),
        st.tuples(st.text(st.characters(max_codepoint=127), max_size=5).map(symbol), inner)
        .map(lambda pair: Described(*pair))),
    max_leaves=20))
def test_generated_values_round_trip(value):
    # compared with the value itself: proton's own decoder loses nested
    # described values ([Described(s, Described(s, None)), None] drops the None)
    assert same(decode_all(proton_encode(value)), value)


# --- the small forms proton never emits -------------------------------------------

def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


SMALL_FORMS = [
    ("43", uint(0)), ("52 07", uint(7)), ("52 ff", uint(255)), ("44", ulong(0)),
    ("53 ff", ulong(255)), ("54 ff", int32(-1)), ("54 7f", int32(127)), ("55 fe", -2),
    ("56 00", False), ("56 01", True), ("41", True), ("42", False), ("40", None),
    ("45", []), ("c0 03 02 41 42", [True, False]),
    ("d0 00000006 00000002 41 42", [True, False]), ("c0 01 00", []),
    ("c1 06 02 a1 01 61 55 01", {"a": 1}), ("d1 00000009 00000002 a1 01 61 55 01", {"a": 1}),
    ("a3 03 61 62 63", symbol("abc")), ("b3 00000003 61 62 63", symbol("abc")),
    ("a1 02 c3 a9", "é"), ("b1 00000002 c3 a9", "é"), ("a0 01 00", b"\x00"),
    ("b0 00000000", b""), ("73 0001f600", char("\U0001F600")),
    ("e0 04 02 52 01 02", Array(None, Data.UINT, uint(1), uint(2))),
    ("f0 00000007 00000002 52 01 02", Array(None, Data.UINT, uint(1), uint(2))),
    ("e0 02 03 43", Array(None, Data.UINT, uint(0), uint(0), uint(0))),
    ("e0 02 02 45", Array(None, Data.LIST, [], [])),
    ("e0 02 02 41", Array(None, Data.BOOL, True, True)),
    ("e0 06 02 a3 01 78 01 79", Array(None, Data.SYMBOL, symbol("x"), symbol("y"))),
    ("e0 08 02 c0 02 01 41 02 01 42", Array(None, Data.LIST, [True], [False])),
    ("e0 01 00", None),  # an array with no constructor: see test_array_needs_a_constructor
    ("00 53 01 a1 01 61", Described(ulong(1), "a")),
    ("00 a3 01 64 45", Described(symbol("d"), [])),
    ("00 00 53 01 53 02 40", Described(Described(ulong(1), ulong(2)), None)),
    ("e0 08 02 00 a3 01 78 54 01 02", Array(symbol("x"), Data.INT, int32(1), int32(2))),
    ("e0 05 02 00 53 09 43", Array(ulong(9), Data.UINT, uint(0), uint(0))),
    ("e0 09 01 00 53 01 00 53 02 54 05",
     Array(ulong(1), Data.DESCRIBED, Described(ulong(2), int32(5)))),
    ("c0 04 03 43 44 45", [uint(0), ulong(0), []]),
]


@pytest.mark.parametrize("encoded,expected", [f for f in SMALL_FORMS if f[1] is not None],
                         ids=lambda v: str(v)[:30])
def test_small_forms(encoded, expected):
    got = decode_all(h(encoded))
    assert same(got, expected), got


def test_array_needs_a_constructor():
    with pytest.raises(DecodeError):
        decode_value(h("e0 01 00"))


def test_decode_value_at_an_offset_returns_the_next_offset():
    encoded = h("52 07 a1 01 61 40")
    assert decode_value(encoded, 2) == ("a", 5)
    assert decode_value(memoryview(bytearray(encoded)), 5) == (None, 6)


# --- messages -----------------------------------------------------------------------

def full_message(body=None, inferred=False) -> ProtonMessage:
    msg = ProtonMessage(body=body, durable=True, priority=7, ttl=60, first_acquirer=True,
                        delivery_count=3, id=ulong(42), user_id=b"guest", address="queue",
                        subject="hello", reply_to="back", correlation_id="c-1",
                        content_type="text/plain", content_encoding="gzip",
                        expiry_time=1700000001, creation_time=1700000000.5,
                        group_id="g", group_sequence=9, reply_to_group_id="rg",
                        properties={"color": "blue", "n": 7},
                        annotations={symbol("x-opt-a"): "ma"})
    msg.instructions = {symbol("x-opt-d"): int32(5)}
    msg.inferred = inferred
    return msg


FOOTER = proton_encode(Described(ulong(0x78), {symbol("sig"): b"\x01\x02"}))


def test_locate_sections_of_a_full_message():
    encoded = full_message(body="text").encode() + FOOTER
    sections = locate_sections(encoded)
    assert [code for code, _, _ in sections] == [0x70, 0x71, 0x72, 0x73, 0x74, 0x77, 0x78]
    assert sections[0][1] == 0 and sections[-1][2] == len(encoded)
    for (_, _, end), (_, start, _) in zip(sections, sections[1:]):
        assert end == start
    for code, start, end in sections:
        value = decode_all(encoded[start:end])
        assert type(value) is Described and value.descriptor == code


@pytest.mark.parametrize("body,inferred,codes", [
    (b"raw", True, [0x75]), ([1, 2], True, [0x76]), ({"k": 1}, False, [0x77]),
    (None, False, [])])
def test_body_kinds(body, inferred, codes):
    encoded = full_message(body, inferred).encode()
    assert [c for c, _, _ in locate_sections(encoded)][5:] == codes


def test_decode_message_matches_typed_json():
    encoded = full_message(body="ignored").encode() + FOOTER
    got = decode_message(encoded, connection="c1")
    want = message_from_json({
        "header": {"durable": True, "priority": {"@type": "ubyte", "value": 7},
                   "ttl": {"@type": "uint", "value": 60000}, "first-acquirer": True,
                   "delivery-count": {"@type": "uint", "value": 3}},
        "delivery-annotations": {"x-opt-d": {"@type": "int", "value": 5}},
        "message-annotations": {"x-opt-a": "ma"},
        "properties": {"message-id": {"@type": "ulong", "value": 42},
                       "user-id": {"@type": "binary", "value": "6775657374"},
                       "to": "queue", "subject": "hello", "reply-to": "back",
                       "correlation-id": "c-1",
                       "content-type": {"@type": "symbol", "value": "text/plain"},
                       "content-encoding": {"@type": "symbol", "value": "gzip"},
                       "absolute-expiry-time": {"@type": "timestamp", "value": 1700000001000},
                       "creation-time": {"@type": "timestamp", "value": 1700000000500},
                       "group-id": "g", "group-sequence": {"@type": "uint", "value": 9},
                       "reply-to-group-id": "rg"},
        "application-properties": {"color": "blue", "n": 7},
        "footer": {"sig": {"@type": "binary", "value": "0102"}},
        "connection": "c1"})
    assert got == want
    for name in ("header", "delivery_annotations", "message_annotations", "properties",
                 "application_properties", "footer"):
        assert same(dict(getattr(got, name)), dict(getattr(want, name))), name


def test_absent_fields_are_absent():
    msg = ProtonMessage(subject="only", priority=4)
    got = decode_message(msg.encode())
    assert dict(got.properties) == {"subject": "only"}
    assert "durable" not in got.header and "ttl" not in got.header
    assert not got.application_properties and not got.footer
    assert decode_message(ProtonMessage().encode()) == Message()
    # null fields inside the list are absent too: properties [null, null, "to"]
    assert dict(decode_message(h("00 53 73 c0 06 03 40 40 a1 01 74")).properties) == {"to": "t"}


SYMBOL_DESCRIBED = (h("00 a3 10") + b"amqp:header:list" + h("c0 02 01 41")
                    + h("00 a3 1f") + b"amqp:application-properties:map"
                    + h("c1 06 02 a1 01 6b 55 01")
                    + h("00 a3 10") + b"amqp:data:binary" + h("a0 01 ff")
                    + h("00 80 0000000000000075 b0 00000002 fe fe")
                    + h("00 a3 0f") + b"amqp:footer:map" + h("c1 01 00"))


def test_symbol_and_ulong_descriptors():
    codes = [c for c, _, _ in locate_sections(SYMBOL_DESCRIBED)]
    assert codes == [0x70, 0x74, 0x75, 0x75, 0x78]
    got = decode_message(SYMBOL_DESCRIBED)
    assert dict(got.header) == {"durable": True} and dict(got.application_properties) == {"k": 1}


def test_bodies_are_never_decoded():
    bad_string = h("a1 02 ff ff")   # invalid UTF-8: a DecodeError if ever decoded
    encoded = h("00 53 77") + bad_string
    assert locate_sections(encoded) == [(0x77, 0, len(encoded))]
    assert decode_message(encoded) == Message()
    with pytest.raises(DecodeError, match="UTF-8"):
        decode_value(encoded)


@pytest.mark.parametrize("encoded,reason", [
    (h("00 53 73 45 00 53 70 45"), "out of order"),
    (h("00 53 70 45 00 53 70 45"), "out of order"),
    (h("00 53 75 a0 00 00 53 76 45"), "out of order"),
    (h("00 53 77 40 00 53 77 40"), "out of order"),
    (h("00 53 78 c1 01 00 00 53 74 c1 01 00"), "out of order"),
    (h("00 53 70 45 ff"), "expected a described section"),
    (h("00 53 79 45"), "unknown message section"),
    (h("00 a3 03 61 62 63 45"), "unknown message section"),
    (h("00 a1 01 61 45"), "neither a ulong nor a symbol"),
    (h("00 53 70 c1 01 00"), "must hold a list"),
    (h("00 53 75 a1 00"), "must hold binary"),
    (h("00 53 74 c1 04 02 54 01 40"), "is not a str"),
    (h("00 53 72 c1 05 02 a1 01 61 40"), "is not a symbol or ulong"),
])
def test_malformed_messages(encoded, reason):
    with pytest.raises(DecodeError, match=reason):
        decode_message(encoded)


# --- malformed input: DecodeError, and only DecodeError ----------------------------

def only_decode_errors(encoded: bytes) -> None:
    """Every entry point either succeeds or raises a well-formed DecodeError."""
    for call in (decode_value, locate_sections, decode_message):
        try:
            call(encoded)
        except DecodeError as exc:
            assert exc.reason and 0 <= exc.offset <= len(encoded), (exc.reason, exc.offset)


REAL = full_message(body={"k": [1, 2.5, "x"]}).encode() + FOOTER
REAL_VALUE = proton_encode([{"a": [1, Described(symbol("d"), Array(None, Data.INT, 1, 2))]},
                            "text", b"bin", uuid.UUID(int=5), float32(1.5), decimal128(b"1" * 16)])


def test_truncated_at_every_offset():
    boundaries = {end for _, _, end in locate_sections(REAL)} | {0}
    for cut in range(len(REAL)):
        prefix = REAL[:cut]
        only_decode_errors(prefix)
        if cut not in boundaries:
            with pytest.raises(DecodeError):
                decode_message(prefix)
    for cut in range(len(REAL_VALUE)):
        with pytest.raises(DecodeError) as info:
            decode_value(REAL_VALUE[:cut])
        assert 0 <= info.value.offset <= cut and info.value.reason


def test_byte_flips_of_a_real_message():
    rng = random.Random(1234)
    for data in (REAL, REAL_VALUE):
        for pos in range(len(data)):
            for new in {data[pos] ^ 0xFF, data[pos] ^ 0x01, 0x00, 0xFF, rng.randrange(256)}:
                only_decode_errors(data[:pos] + bytes([new]) + data[pos + 1:])
    for _ in range(300):
        mutated = bytearray(REAL)
        for _ in range(rng.randrange(1, 6)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        only_decode_errors(bytes(mutated))


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes(data):
    only_decode_errors(data)
    only_decode_errors(h("00 53 70") + data)
    only_decode_errors(h("d0 00 00 01 00 00 00 00 10") + data)


@pytest.mark.parametrize("encoded,reason,offset", [
    (h("c1 02 01 41"), "odd count", 1),
    (h("d1 00000007 00000003 41 42 43"), "odd count", 1),
    (h("a1 05 61"), "truncated", 2),
    (h("b0 ffffffff 00"), "truncated", 5),
    (h("d0 ffffffff 00000001 40"), "truncated", 5),
    (h("c0 05 01 41"), "truncated", 2),
    (h("c0 03 05 41 41"), "count 5 does not fit", 1),
    (h("c0 03 01 41 41"), "size says", 1),
    (h("c0 03 01 a1 05 61 61 61 61 61"), "enclosing size", 5),
    (h("e0 03 05 52 01"), "count 5 does not fit", 1),
    (h("f0 00000005 ffffffff 40"), "out of proportion", 1),
    (h("c1 03 02 45 40"), "cannot hold", 3),
    (h("c1 07 04 54 01 40 55 01 40"), "duplicate map key", 6),
    (h("a1 02 c3 28"), "UTF-8", 2),
    (h("a3 01 ff"), "ASCII", 2),
    (h("56 02"), "neither", 1),
    (h("73 00110000"), "Unicode scalar", 1),
    (h("73 0000d800"), "Unicode scalar", 1),
    (h("ff"), "unknown constructor 0xff", 0),
    (h("e0 02 01 ee"), "unknown array element constructor", 3),
    (b"", "truncated", 0),
    (h("00 53"), "truncated", 2),
])
def test_malformed_values(encoded, reason, offset):
    with pytest.raises(DecodeError, match=reason) as info:
        decode_value(encoded)
    assert info.value.offset == offset, info.value.reason


def test_a_short_read_leaves_the_buffer_growable():
    """A stream reader catches DecodeError and appends the rest of the bytes."""
    whole = full_message(body="x").encode()
    buf = bytearray(whole[:10])
    for call in (decode_value, locate_sections, decode_message):
        try:
            call(buf)
        except DecodeError:
            buf.append(0)   # BufferError if a view of buf were still alive
            del buf[-1]
    bad = bytearray(h("a1 02 ff ff"))
    try:
        decode_value(bad)
    except DecodeError:
        bad.append(0)
    buf.extend(whole[10:])
    assert decode_message(buf) == decode_message(whole)


def test_offset_outside_the_buffer():
    with pytest.raises(DecodeError):
        decode_value(b"\x40", 2)
    with pytest.raises(DecodeError):
        decode_value(b"\x40", -1)


def nested_list32(depth: int) -> bytes:
    """``depth`` list32 headers, sizes all consistent, around a list0."""
    return b"".join(struct.pack(">BII", 0xd0, 4 + 9 * (depth - 1 - k) + 1, 1)
                    for k in range(depth)) + b"\x45"


DEEP = {   # name: the bytes of n repetitions
    "list8-ff": lambda n: b"\xc0\xff\xff" * n, "list8-1": lambda n: b"\xc0\x01\x01" * n,
    "list32-nested": lambda n: nested_list32(n), "described-zero": lambda n: b"\x00" * n,
    "described-chain": lambda n: b"\x00\x53\x01" * n + b"\x40",
    "array8": lambda n: b"\xe0\xff\x01" * n, "map8": lambda n: b"\xc1\xff\x02\x40" * n,
    "array8-described": lambda n: b"\xe0\x05\x01\x00" * n,
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting(name):
    """Refused, and in time that does not grow faster than the input."""
    make = DEEP[name]
    only_decode_errors(make(10_000))
    with pytest.raises(DecodeError):
        decode_value(make(10_000))

    def operation(n):
        encoded = make(n)

        def run():
            try:
                decode_value(encoded)
            except DecodeError:
                pass
        return run
    assert growth(operation, 2_000) < 30, name


def test_nesting_bound():
    decode_all(nested_list32(MAX_DEPTH - 1))
    with pytest.raises(DecodeError, match="nested"):
        decode_value(nested_list32(MAX_DEPTH + 1))
    with pytest.raises(DecodeError, match="nested"):
        decode_value(nested_list32(10_000))


@pytest.mark.slow
def test_large_inputs_decode_in_linear_time():
    def many(n):
        items = b"\xa1\x0axxxxxxxxxx" * n
        encoded = struct.pack(">BII", 0xd0, 4 + len(items), n) + items
        return lambda: decode_all(encoded)

    def big(n):
        encoded = proton_encode(b"\x00" * n)
        return lambda: decode_all(encoded)

    def located(n):
        encoded = h("00 53 75") + proton_encode(b"\x00" * n)
        return lambda: locate_sections(encoded)
    assert len(many(100_000)()) == 100_000
    assert len(big(1_000_000)()) == 1_000_000
    assert locate_sections(h("00 53 75") + proton_encode(b"\x00" * 10))[0][2] == 15
    assert growth(many, 20_000) < 30
    assert growth(big, 1_000_000) < 30
    assert growth(located, 1_000_000) < 30


