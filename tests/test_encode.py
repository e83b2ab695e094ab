"""filtex.amqp.encode and typed JSON writing: messages round trip exactly.

``encode_message`` is checked three ways: decoding it gives the message back,
class for class (``codec.decode_message`` and ``decode_body``); filters read
the encoded bytes in place (``EncodedMessage``) and the ``Message`` alike, for
every conformance case (SQL and described); and the bytes are what the AMQP
spec lays down.
``message_to_json`` is checked by reading its JSON text back.
"""
from __future__ import annotations

import json
import math
import struct
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from randomness import examples
from proton import (Array, Data, Described, byte, char, decimal32, decimal64, decimal128,
                    float32, int32, short, symbol, timestamp, ubyte, uint, ulong, ushort)
from proton import Message as ProtonMessage

from filtex import FilterError, Message, message_from_json
from filtex.amqp import codec
from filtex.amqp.encode import decode_body, encode_message
from filtex.message import HEADER_FIELDS, PROPERTIES_FIELDS, SECTIONS, Body
from filtex.runtime.values import encode_decimal
from filtex.typed_json import message_to_json, value_to_json

from conformance_cases import load_cases
from test_amqp_codec import same

CASES = load_cases()
MESSAGES = [pytest.param(case["message"], id=name) for name, case in CASES if "message" in case]


# --- exact comparison -------------------------------------------------------------

def same_message(got: Message, want: Message) -> bool:
    return (all(same(dict(getattr(got, n)), dict(getattr(want, n))) for n in SECTIONS)
            and got.connection == want.connection
            and (got.body is want.body is None or same(got.body, want.body)))


_UINT = (uint, 0, 2**32 - 1)
_TIMESTAMP = (timestamp, -2**63, 2**63 - 1)
_FIELD_CLASSES = {"priority": (ubyte, 0, 255), "ttl": _UINT, "delivery-count": _UINT,
                  "group-sequence": _UINT, "creation-time": _TIMESTAMP,
                  "absolute-expiry-time": _TIMESTAMP}


def as_encoded(message: Message) -> Message:
    """What ``decode_message`` of the encoding gives: null fields absent (AMQP
    cannot tell them apart), plain ints in their field's type, no body (its
    decoder never reads one: ``decode_body`` does)."""
    def fields(section):
        out = {}
        for name, value in section.items():
            if value is None:
                continue
            typed = _FIELD_CLASSES.get(name)
            if typed and type(value) is int and typed[1] <= value <= typed[2]:
                value = typed[0](value)
            out[name] = value
        return out
    return Message(header=fields(message.header), properties=fields(message.properties),
                   **{n: getattr(message, n) for n in SECTIONS if n not in ("header", "properties")},
                   connection=message.connection)


def round_trip(message: Message) -> tuple[Message, Body | None]:
    encoded = encode_message(message)
    return codec.decode_message(encoded, connection=message.connection), decode_body(encoded)


# --- every conformance message ------------------------------------------------------

@pytest.mark.parametrize("obj", MESSAGES)
def test_conformance_message_encodes_and_decodes_to_itself(obj):
    message = message_from_json(obj)
    decoded, body = round_trip(message)
    assert same_message(decoded, as_encoded(message)), (decoded, message)
    assert (body is None) if message.body is None else same(body, message.body)


@pytest.mark.parametrize("obj", MESSAGES)
def test_conformance_message_typed_json_round_trip(obj):
    message = message_from_json(obj)
    text = json.dumps(message_to_json(message), allow_nan=False)
    assert same_message(message_from_json(json.loads(text)), message)


# --- the bytes ------------------------------------------------------------------------

def test_sections_are_described_by_smallulong_codes_in_order():
    message = Message(header={"durable": True}, delivery_annotations={symbol("d"): 1},
                      message_annotations={symbol("m"): 2}, properties={"subject": "s"},
                      application_properties={"a": 3}, footer={symbol("f"): 4},
                      body=Body.value("v"))
    encoded = encode_message(message)
    sections = codec.locate_sections(encoded)
    assert [code for code, _, _ in sections] == [0x70, 0x71, 0x72, 0x73, 0x74, 0x77, 0x78]
    for code, start, _ in sections:
        assert encoded[start:start + 3] == bytes([0x00, 0x53, code])


def test_header_and_properties_are_lists_in_field_order_without_trailing_nulls():
    encoded = encode_message(Message(header={"priority": 7}, properties={"to": "q"}))
    header = codec.decode_value(encoded, 0)
    assert header[0].value == [None, ubyte(7)] and type(header[0].value[1]) is ubyte
    properties = codec.decode_value(encoded, header[1])[0]
    assert properties.descriptor == 0x73 and properties.value == [None, None, "q"]
    full = {name: f"v{i}" for i, name in enumerate(PROPERTIES_FIELDS)}
    assert codec.decode_value(encode_message(Message(properties=full)))[0].value == [
        full[name] for name in PROPERTIES_FIELDS]


def test_fields_take_their_amqp_types_when_plain_ints_fit():
    decoded, _ = round_trip(Message(
        header={"priority": 9, "ttl": 1000, "delivery-count": 2},
        properties={"creation-time": 5, "absolute-expiry-time": -1, "group-sequence": 3}))
    assert [type(decoded.header[n]) for n in ("priority", "ttl", "delivery-count")] == [
        ubyte, uint, uint]
    assert [type(decoded.properties[n]) for n in (
        "creation-time", "absolute-expiry-time", "group-sequence")] == [timestamp, timestamp, uint]


def test_mistyped_fields_round_trip_as_they_are():
    message = Message(header={"priority": 300, "durable": "yes", "ttl": -1},
                      properties={"creation-time": "today", "group-sequence": int32(5),
                                  "message-id": ulong(7)})
    decoded, _ = round_trip(message)
    assert same_message(decoded, message)


def test_empty_sections_are_omitted():
    assert encode_message(Message()) == b""
    assert encode_message(Message(header={}, properties={}, application_properties={})) == b""
    assert codec.locate_sections(encode_message(Message(header={"durable": None}))) == [
        (0x70, 0, 4)]   # a header of all nulls is an empty list: still a header


@pytest.mark.parametrize("body", [Body.value({"a": [1, "x"]}), Body.value(None),
                                  Body.sequence([1, 2], [], ["x"]), Body.data(b"ab", b"", b"c"),
                                  Body.data(bytearray(b"xy"))])
def test_bodies_round_trip(body):
    message = Message(application_properties={"a": 1}, footer={symbol("f"): 1}, body=body)
    encoded = encode_message(message)
    codes = [code for code, _, _ in codec.locate_sections(encoded)]
    assert codes == [0x74] + [{"amqp-value": 0x77, "amqp-sequence": 0x76, "data": 0x75}[
        body.kind]] * len(body.sections) + [0x78]
    got = decode_body(encoded)
    assert got.kind == body.kind
    assert same(list(got.sections), [bytes(s) if isinstance(s, bytearray) else s
                                     for s in body.sections])


def test_proton_reads_the_encoding():
    message = Message(header={"durable": True, "priority": 8},
                      properties={"message-id": "m1", "subject": "order.created",
                                  "content-type": symbol("application/json"),
                                  "creation-time": 1750772279000, "group-id": "g"},
                      message_annotations={symbol("x-opt-partition"): int32(3)},
                      application_properties={"region": "EU", "total": 12.5},
                      body=Body.value({"lines": [1, 2]}))
    pm = ProtonMessage()
    pm.decode(encode_message(message))
    assert (pm.durable, pm.priority, pm.id, pm.subject, pm.content_type, pm.group_id) == (
        True, 8, "m1", "order.created", "application/json", "g")
    assert pm.creation_time == 1750772279.0
    assert pm.annotations == {symbol("x-opt-partition"): 3}
    assert pm.properties == {"region": "EU", "total": 12.5}
    assert pm.body == {"lines": [1, 2]}


@pytest.mark.parametrize("message", [
    Message(application_properties={"a": object()}),
    Message(application_properties={"a": 2**64}),
    Message(footer={symbol("a"): "\ud800"}),
    Message(properties={"subject": [1, {2: set()}]})])
def test_values_with_no_encoding_are_value_errors_naming_the_section(message):
    with pytest.raises(ValueError, match="cannot encode the"):
        encode_message(message)


def test_typed_json_writes_tagged_types_and_special_keys():
    assert value_to_json(1) == 1 and value_to_json(1.5) == 1.5 and value_to_json("s") == "s"
    assert value_to_json(math.nan) == {"@type": "double", "value": "NaN"}
    assert value_to_json(float32(-math.inf)) == {"@type": "float", "value": "-Infinity"}
    assert value_to_json(ubyte(5)) == {"@type": "ubyte", "value": 5}
    assert value_to_json({"@type": 1}) == {"@type": "map", "value": [["@type", 1]]}
    assert value_to_json({1: "a"}) == {"@type": "map", "value": [[1, "a"]]}
    assert value_to_json(Array(None, Data.MAP, {"a": 1})) == {
        "@type": "array", "of": "map", "value": [[["a", 1]]]}
    annotations = message_to_json(Message(message_annotations={symbol("x"): 1, ulong(2): 3}))
    assert annotations == {"message-annotations": {"@type": "map", "value": [
        [{"@type": "symbol", "value": "x"}, 1], [{"@type": "ulong", "value": 2}, 3]]}}
    assert message_to_json(Message(footer={symbol("x"): 1})) == {"footer": {"x": 1}}
    with pytest.raises(TypeError):
        value_to_json(object())
    with pytest.raises(TypeError):
        value_to_json(Array(symbol("d"), Data.INT, 1))


def test_typed_json_bodies():
    for body, obj in [(Body.value(ubyte(1)), {"amqp-value": {"@type": "ubyte", "value": 1}}),
                      (Body.sequence([1], ["a"]), {"amqp-sequence": [[1], ["a"]]}),
                      (Body.data(b"\x00\xff", b""), {"data": ["00ff", ""]})]:
        assert message_to_json(Message(body=body)) == obj
        assert same(message_from_json(obj).body, body)
    for bad in [{"amqp-value": 1, "data": ["00"]}, {"data": ["zz"]}, {"data": []},
                {"data": "00"}, {"amqp-sequence": [1]}, {"amqp-sequence": []},
                {"amqp-value": {"@type": "ubyte", "value": -1}}]:
        with pytest.raises(FilterError) as raised:
            message_from_json(bad)
        assert raised.value.condition == "amqp:decode-error"


# --- generated messages -----------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
ASCII = st.text(st.characters(max_codepoint=127), max_size=10)
LONGS = st.integers(-2**63, 2**63 - 1)


def _float32(x: float) -> float32:
    return float32(struct.unpack(">f", struct.pack(">f", x))[0])


def _decimal(width: int):
    digits = {32: 7, 64: 16, 128: 34}[width]
    return st.decimals(allow_nan=False, allow_infinity=False).filter(
        lambda d: len(d.as_tuple().digits) <= digits and abs(d.as_tuple().exponent) < 90
    ).map(lambda d: encode_decimal(d, width))


SCALARS = st.one_of(
    st.none(), st.booleans(), LONGS, st.floats(), TEXT, st.binary(max_size=12),
    st.integers(0, 255).map(ubyte), st.integers(0, 65535).map(ushort),
    st.integers(0, 2**32 - 1).map(uint), st.integers(0, 2**64 - 1).map(ulong),
    st.integers(-128, 127).map(byte), st.integers(-2**15, 2**15 - 1).map(short),
    st.integers(-2**31, 2**31 - 1).map(int32), st.floats(width=32).map(_float32),
    _decimal(32), _decimal(64), _decimal(128), st.characters(
        blacklist_categories=("Cs",)).map(char),
    LONGS.map(timestamp), st.uuids(), ASCII.map(symbol))

ARRAYS = st.one_of(
    st.lists(st.integers(-2**31, 2**31 - 1).map(int32), max_size=4).map(
        lambda xs: Array(None, Data.INT, *xs)),
    st.lists(TEXT, max_size=4).map(lambda xs: Array(None, Data.STRING, *xs)),
    st.lists(ASCII.map(symbol), max_size=4).map(lambda xs: Array(None, Data.SYMBOL, *xs)),
    st.lists(st.floats(), max_size=4).map(lambda xs: Array(None, Data.DOUBLE, *xs)))

VALUES = st.recursive(
    st.one_of(SCALARS, ARRAYS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(TEXT, LONGS, ASCII.map(symbol)), inner, max_size=4),
        st.tuples(st.one_of(ASCII.map(symbol), st.integers(0, 2**64 - 1).map(ulong)), inner)
        .map(lambda pair: Described(*pair))),
    max_leaves=12)

FIELD_VALUES = {"durable": st.booleans(), "first-acquirer": st.booleans(),
                "priority": st.integers(0, 255), "ttl": st.integers(0, 2**32 - 1).map(uint),
                "delivery-count": st.integers(0, 2**32 - 1),
                "creation-time": LONGS, "absolute-expiry-time": LONGS.map(timestamp),
                "group-sequence": st.integers(0, 2**32 - 1)}


def _fields(names):
    return st.fixed_dictionaries({}, optional={
        name: FIELD_VALUES.get(name, st.one_of(TEXT, st.uuids(), st.integers(0, 2**64 - 1).map(
            ulong), st.binary(max_size=8), ASCII.map(symbol), st.none())) for name in names})


ANNOTATIONS = st.dictionaries(st.one_of(ASCII.map(symbol), st.integers(0, 2**64 - 1).map(ulong)),
                              VALUES, max_size=4)
BODIES = st.one_of(
    st.none(), VALUES.map(Body.value),
    st.lists(st.lists(VALUES, max_size=3), min_size=1, max_size=3).map(lambda s: Body.sequence(*s)),
    st.lists(st.binary(max_size=40), min_size=1, max_size=3).map(lambda s: Body.data(*s)))

MESSAGES_ST = st.builds(
    Message, header=_fields(HEADER_FIELDS), delivery_annotations=ANNOTATIONS,
    message_annotations=ANNOTATIONS, properties=_fields(PROPERTIES_FIELDS),
    application_properties=st.dictionaries(TEXT, VALUES, max_size=6), footer=ANNOTATIONS,
    body=BODIES, connection=st.one_of(st.none(), ASCII))


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MESSAGES_ST)
def test_generated_messages_encode_and_decode_to_themselves(message):
    decoded, body = round_trip(message)
    assert same_message(decoded, as_encoded(message))
    assert (body is None) if message.body is None else same(body, message.body)


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MESSAGES_ST)
def test_generated_messages_typed_json_round_trip(message):
    text = json.dumps(message_to_json(message), allow_nan=False)
    assert same_message(message_from_json(json.loads(text)), message)


def test_uuid_and_decimal_forms():
    value = {"u": uuid.UUID(int=5), "d32": encode_decimal("1.50", 32),
             "d64": decimal64(0x31C0000000000001), "d128": decimal128(bytes(16)),
             "dn": decimal32(0x7C000000)}
    message = Message(application_properties=value)
    text = json.dumps(message_to_json(message))
    assert same_message(message_from_json(json.loads(text)), message)


# --- what message_from_json accepts can be written back; what AMQP forbids is refused ---

def test_an_array_of_maps_holding_an_empty_map_round_trips():
    obj = {"application-properties": {"a": {"@type": "array", "of": "map",
                                            "value": [[], [["k", 1]]]}}}
    message = message_from_json(obj)
    text = json.dumps(message_to_json(message))
    assert json.loads(text) == obj
    assert same_message(message_from_json(json.loads(text)), message)


def _refused(obj: dict, *words: str) -> None:
    with pytest.raises(FilterError) as raised:
        message_from_json(obj)
    assert raised.value.condition == "amqp:decode-error"
    for word in words:
        assert word in str(raised.value), (word, str(raised.value))


def _in_map(*pairs) -> dict:
    return {"application-properties": {"m": {"@type": "map", "value": [list(p) for p in pairs]}}}


def test_typed_json_maps_with_duplicate_keys_are_refused():
    _refused(_in_map([1, "x"], [1, "y"]), "duplicate map key 1")
    _refused(_in_map(["k", "x"], [2, "z"], ["k", "y"]), "duplicate map key 'k'")
    ub = {"@type": "ubyte", "value": 1}
    _refused(_in_map([ub, "x"], [ub, "y"]), "duplicate map key ubyte(1)")
    # distinct AMQP keys that a Python dict merges: refused, not silently merged
    for other in (True, ub, 1.0):
        _refused(_in_map([other, "x"], [1, "y"]), "equal in Python", "cannot hold both")
    in_array = {"@type": "array", "of": "map", "value": [[[True, 1], [1, 2]]]}
    _refused({"application-properties": {"a": in_array}}, "equal in Python")
    assert message_from_json(_in_map([1, "x"], [2, "y"])).application_properties["m"] == {
        1: "x", 2: "y"}


@pytest.mark.parametrize("section", ["delivery-annotations", "message-annotations", "footer"])
def test_annotation_keys_are_symbols_or_ulongs(section):
    _refused({section: {"@type": "map", "value": [["k", 1]]}}, section, "symbols or ulongs", "'k'")
    _refused({section: {"@type": "map", "value": [[1, 1]]}}, section, "symbols or ulongs")
    ok = message_from_json({section: {"@type": "map", "value": [
        [{"@type": "symbol", "value": "k"}, 1], [{"@type": "ulong", "value": 2}, 3]]}})
    assert list(map(type, getattr(ok, section.replace("-", "_")))) == [symbol, ulong]
    assert type(next(iter(getattr(message_from_json({section: {"k": 1}}),
                                  section.replace("-", "_"))))) is symbol


def test_application_property_keys_are_strings():
    for key in ({"@type": "symbol", "value": "k"}, 1, {"@type": "ulong", "value": 1}, None):
        _refused({"application-properties": {"@type": "map", "value": [[key, 1]]}},
                 "application-properties keys are strings")
    ok = message_from_json({"application-properties": {"@type": "map", "value": [["k", 1]]}})
    assert ok.application_properties == {"k": 1}


def test_plain_integers_are_longs():
    for big in (2**63, -2**63 - 1, 10**30):
        _refused({"application-properties": {"a": big}}, "is not a long")
        _refused({"amqp-value": [big]}, "is not a long")
    for edge in (2**63 - 1, -2**63):
        assert message_from_json({"application-properties": {"a": edge}}).application_properties[
            "a"] == edge
    assert message_from_json({"amqp-value": {"@type": "ulong", "value": 2**63}}).body.sections[
        0] == 2**63
