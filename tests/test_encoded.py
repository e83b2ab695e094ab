"""Filters on AMQP-encoded bytes and on proton.Message objects.

The encoded view reads values with its own tight paths (map walks, fixed
readers), so every AMQP type and every encoding of it is read here through
a filter and compared, class for class, with the complete decoder, which is
itself checked against proton in test_amqp_codec.py.
"""
from __future__ import annotations

import struct

import proton
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from randomness import examples
from proton import symbol, timestamp, ubyte, uint, ulong

import filtex
from filtex import Message
from filtex.amqp import decode_value
from filtex.amqp.encoded import EncodedMessage
from filtex.proton_message import ProtonMessage

from test_amqp_codec import ROUND_TRIP, SMALL_FORMS, h, proton_encode, same


def section(code: int, value: bytes) -> bytes:
    return bytes([0x00, 0x53, code]) + value


def map8(entries: list[tuple[bytes, bytes]]) -> bytes:
    body = b"".join(k + v for k, v in entries)
    return bytes([0xc1, len(body) + 1, 2 * len(entries)]) + body


def map32(entries: list[tuple[bytes, bytes]]) -> bytes:
    body = b"".join(k + v for k, v in entries)
    return b"\xd1" + struct.pack(">II", len(body) + 4, 2 * len(entries)) + body


def str8(text: str) -> bytes:
    raw = text.encode()
    return bytes([0xa1, len(raw)]) + raw


def str32(text: str) -> bytes:
    raw = text.encode()
    return b"\xb1" + struct.pack(">I", len(raw)) + raw


def sym8(text: str) -> bytes:
    return bytes([0xa3, len(text)]) + text.encode("ascii")


ENCODED_VALUES = [proton_encode(v) for v in ROUND_TRIP] + [
    h(encoded) for encoded, expected in SMALL_FORMS if expected is not None]


@pytest.mark.parametrize("encoded", ENCODED_VALUES, ids=lambda b: b[:12].hex())
@pytest.mark.parametrize("layout", ["map8", "map32", "str32-keys", "middle"])
def test_every_value_form_reads_as_the_decoder_reads_it(encoded, layout):
    expected, _ = decode_value(encoded)
    key = (str32 if layout == "str32-keys" else str8)
    entries = [(key("k"), encoded)]
    if layout == "middle":
        entries = [(str8("a"), h("55 01")), (str8("k"), encoded), (str8("z"), str8("zz"))]
    maker = map32 if layout == "map32" else map8
    if len(b"".join(k + v for k, v in entries)) > 250:
        maker = map32
    message = section(0x74, maker(entries))
    props = EncodedMessage(message)._filtex_application_properties
    got = props.get("k")
    assert same(got, expected), (got, expected)
    # read again (kept once decoded), by a symbol key too, and as a mapping
    assert same(props.get("k"), expected) and same(props.get(symbol("k")), expected)
    assert "k" in props and same(props["k"], expected) and props.get("absent", 7) == 7
    present = filtex.compile_sql("EXISTS(k)").evaluate(message)
    assert present is True
    assert filtex.compile_sql("k IS NULL").evaluate(message) is (expected is None)


@pytest.mark.parametrize("key_bytes,key", [
    (sym8("x-opt-k"), symbol("x-opt-k")),
    (b"\xb3" + struct.pack(">I", 7) + b"x-opt-k", symbol("x-opt-k")),
    (h("53 05"), ulong(5)), (h("44"), ulong(0)), (h("80 0000000000000005"), ulong(5))])
def test_annotation_keys_in_every_form(key_bytes, key):
    message = section(0x72, map8([(key_bytes, h("55 07"))]))
    annotations = EncodedMessage(message)._filtex_message_annotations
    assert annotations.get(key) == 7 and key in annotations
    assert list(annotations) == [key] and type(list(annotations)[0]) is type(key)
    name = "[x-opt-k]" if isinstance(key, str) else None
    if name:
        assert filtex.compile_sql(f"m.{name} = 7").evaluate(message) is True
    described = filtex.compile_filter(("amqp:message-annotations-filter", {key: 7}))
    assert described.evaluate(message) is True


def test_the_first_lookup_indexes_the_whole_map_once():
    entries = [(str8(f"k{i}"), h("55") + bytes([i])) for i in range(12)]
    message = EncodedMessage(section(0x74, map8(entries)))
    props = message._filtex_application_properties
    assert props._index is None                                 # nothing read yet
    assert props.get("k3") == 3 and props._index is not None   # the whole map, checked once
    index = props._index
    assert props.get("k1") == 1 and props.get("absent") is None and props._index is index
    assert props._values == {"k3": 3, "k1": 1}                 # only the values read
    assert dict(props) == {f"k{i}": i for i in range(12)}


def full_message() -> bytes:
    m = proton.Message(durable=True, priority=7, ttl=1.5, first_acquirer=True,
                       delivery_count=2, id="id-1", user_id=b"u", address="q",
                       subject="s", reply_to="r", correlation_id=ulong(9),
                       content_type="text/plain", content_encoding="gzip",
                       expiry_time=1700000001.5, creation_time=1700000000.25,
                       group_id="g", group_sequence=3, reply_to_group_id="rg",
                       instructions={symbol("x-opt-d"): 1},
                       annotations={symbol("x-opt-m"): "m", ulong(3): True},
                       properties={"a": 1, "b": "two", "c": 3.5, "t": timestamp(5)},
                       body={"order": {"total": 150}})
    return bytes(m.encode())


FIELDS = ["h.durable", "h.priority", "h.ttl", "h.[first-acquirer]", "h.[delivery-count]",
          "p.[message-id]", "p.[user-id]", "p.to", "p.subject", "p.[reply-to]",
          "p.[correlation-id]", "p.[content-type]", "p.[content-encoding]",
          "p.[absolute-expiry-time]", "p.[creation-time]", "p.[group-id]",
          "p.[group-sequence]", "p.[reply-to-group-id]", "d.[x-opt-d]", "m.[x-opt-m]",
          "a", "b", "c", "t", "amqp_value.order.total"]


@pytest.mark.parametrize("field", FIELDS)
def test_bytes_proton_and_decoded_message_read_the_same_values(field):
    encoded = full_message()
    decoded = filtex.amqp.decode_message(encoded)
    explained = {}
    for name, form in (("bytes", encoded), ("proton", _proton(encoded))):
        f = filtex.compile_sql(f"{field} IS NOT NULL AND {field} = {field}")
        assert f.evaluate(form) is True, (name, field)
        explained[name] = [n.value for n in f.explain(form).walk() if n.text == field][0]
    on_message = filtex.compile_sql(f"{field} = {field}").explain(
        Message(header=decoded.header, properties=decoded.properties,
                delivery_annotations=decoded.delivery_annotations,
                message_annotations=decoded.message_annotations,
                application_properties=decoded.application_properties,
                body={"order": {"total": 150}}))
    want = [n.value for n in on_message.walk() if n.text == field][0]
    assert same(explained["bytes"], want)
    assert explained["proton"] == want


def _proton(encoded: bytes) -> proton.Message:
    message = proton.Message()
    message.decode(encoded)
    return message


@pytest.mark.parametrize("field", ["h.priority", "h.durable", "h.ttl", "h.[delivery-count]",
                                   "p.[creation-time]", "p.[content-type]", "p.[user-id]",
                                   "p.[group-sequence]", "p.[absolute-expiry-time]"])
def test_proton_defaults_read_as_absent_and_bytes_stay_exact(field):
    """proton cannot tell these absent fields from their defaults: the view
    reads the default as absent (documented); the encoded form is exact."""
    empty = proton.Message()
    assert filtex.compile_sql(f"EXISTS({field})").evaluate(empty) is False
    assert filtex.compile_sql(f"EXISTS({field})").evaluate(bytes(empty.encode())) is False
    explicit = b"\x00\x53\x70\xc0\x04\x02\x42\x50\x04"   # header: durable=false, priority=4
    assert filtex.compile_sql("EXISTS(h.priority) AND EXISTS(h.durable)").evaluate(
        explicit) is True
    assert filtex.compile_sql("EXISTS(h.priority)").evaluate(
        _proton(explicit)) is False


@pytest.mark.parametrize("section,encoded,sql", [
    ("message annotations", b"\x00\x53\x72\xd1\x00\x00\x00\x0b\x00\x00\x00\x04"
                            b"\xa3\x01kU\x02@@", "m.k = 2"),
    ("delivery annotations", b"\x00\x53\x71\xd1\x00\x00\x00\x08\x00\x00\x00\x02"
                             b"\x55\x01\x55\x02", "EXISTS(d.k)")])
def test_keys_of_the_wrong_type_are_malformed_in_the_proton_form_too(section, encoded, sql):
    """proton decodes an annotation key of any type (null, a ubyte); the
    encoded view finds such a section malformed, and the proton form fails the
    same reads. (An application property's name that is no string, proton
    refuses to decode.)"""
    f = filtex.compile_sql(sql)
    received = _proton(encoded)
    for form in (encoded, received, bytes(received.encode())):
        outcome = f.outcome(form)
        assert outcome.result is None and "malformed message" in (outcome.reason or ""), \
            (section, form, outcome)


def test_proton_times_are_exact_milliseconds():
    m = proton.Message(creation_time=1700000000.123, ttl=0.5)
    view = ProtonMessage(m)
    assert view._filtex_properties["creation-time"] == timestamp(1700000000123)
    assert view._filtex_header["ttl"] == uint(500)
    assert type(view._filtex_header.get("priority", ubyte(4))) is ubyte


def test_proton_bodies():
    value = proton.Message(body={"a": 1})
    sequence = proton.Message(body=[1, 2], inferred=True)
    data = proton.Message(body=b"xy", inferred=True)
    f = filtex.compile_sql("amqp_value.a = 1")
    g = filtex.compile_sql("amqp_sequence[1] = 2")
    assert (f.evaluate(value), g.evaluate(value)) == (True, None)
    assert (f.evaluate(sequence), g.evaluate(sequence)) == (None, True)
    assert (f.evaluate(data), g.evaluate(data)) == (None, None)
    for m in (value, sequence, data):
        encoded = bytes(m.encode())
        assert (f.evaluate(encoded), g.evaluate(encoded)) == (f.evaluate(m), g.evaluate(m))


def test_no_local_reads_the_connection_of_a_view():
    f = filtex.compile_filter(("apache.org:no-local-filter:list", []))
    encoded = bytes(proton.Message(subject="s").encode())
    assert f.evaluate(filtex.view(encoded, connection="c1"), receiving_connection="c1") is False
    assert f.evaluate(filtex.view(encoded, connection="c1"), receiving_connection="c2") is True


MALFORMED = [
    (b"\x00\x53\x74\xc1\x09\x02\xa1\x05color\xa1", "truncated"),
    (section(0x74, h("c1 03 01 a1 00")), "odd count"),
    (section(0x74, map8([(sym8("a"), h("55 01"))])), "is not a str"),
    (section(0x72, map8([(str8("a"), h("55 01"))])) + section(0x74, map8([])),
     "is not a symbol or ulong"),
    (section(0x74, map8([(str8("a"), h("55 01")), (str8("a"), h("55 02"))])), "duplicate"),
    (section(0x74, h("c1 05 02 a1 01 61 ff")), "unknown constructor 0xff"),
    (section(0x74, map8([])) + section(0x70, h("45")), "out of order"),
    (section(0x74, h("a1 01 61")), "must hold a map"),
    (b"\x00\x53\x99\x45", "unknown message section"),
    (section(0x74, h("c1 04 02 a1 01 61")), "truncated"),
]


@pytest.mark.parametrize("encoded,words", MALFORMED, ids=lambda v: str(v)[:20])
def test_malformed_messages_are_unknown_with_a_reason(encoded, words):
    # b is never there: each map the filter reads is walked to its end
    f = filtex.compile_sql("b = 1 OR m.b = 1")
    outcome = f.outcome(encoded)
    assert outcome.result is None
    assert outcome.reason.startswith("malformed message") and words in outcome.reason, \
        outcome.reason
    assert "byte offset" in outcome.reason
    assert f.evaluate(encoded) is None and f.matches(encoded) is False


def test_a_filter_that_reads_no_section_skips_what_it_never_reads():
    """Documented: a map nobody reads is not walked, so its defects are not seen;
    a map that is read is checked whole, so a duplicate key makes every read of
    it unknown, the key found before the duplicate included."""
    duplicate = section(0x74, map8([(str8("a"), h("55 01")), (str8("a"), h("55 02"))]))
    assert filtex.compile_sql("a = 1").outcome(duplicate).reason.startswith("malformed")
    assert filtex.compile_sql("b = 1").outcome(duplicate).reason.startswith("malformed")
    assert filtex.compile_sql("p.subject IS NULL").evaluate(duplicate) is True
    bad_map = section(0x74, map8([(sym8("a"), h("55 01"))]))
    assert filtex.compile_sql("TRUE").evaluate(bad_map) is True
    assert filtex.compile_sql("p.subject IS NULL").evaluate(bad_map) is True
    assert filtex.compile_sql("a IS NULL").evaluate(bad_map) is None


def test_bytearray_is_copied_so_later_changes_cannot_change_a_verdict():
    buffer = bytearray(proton.Message(properties={"a": 1}).encode())
    view = filtex.view(buffer)
    buffer[-1] = 2
    assert filtex.compile_sql("a = 1").evaluate(view) is True


SAMPLE = full_message()
FILTERS = [filtex.compile_sql(t) for t in (
    "a = 1 AND b LIKE 't%'", "p.subject = 's' OR h.priority > 5", "EXISTS(m.[x-opt-m])",
    "amqp_value.order.total > 100", "p.[creation-time] > 0 AND c < 4.0")]


@given(st.binary(max_size=300))
@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
def test_random_bytes_only_ever_give_an_outcome(data):
    for f in FILTERS:
        outcome = f.outcome(data)
        assert outcome.result in (True, False, None)
        assert outcome.result is None or outcome.reason is None


@given(st.lists(st.tuples(st.integers(0, len(SAMPLE) - 1), st.integers(0, 255)),
                min_size=1, max_size=4), st.integers(0, len(SAMPLE)))
@settings(max_examples=examples(400), deadline=None, suppress_health_check=list(HealthCheck))
def test_mutated_messages_only_ever_give_an_outcome(flips, cut):
    data = bytearray(SAMPLE)
    for at, byte in flips:
        data[at] = byte
    data = bytes(data[:cut])
    for f in FILTERS:
        outcome = f.outcome(data)
        assert outcome.result in (True, False, None)
        if outcome.result is None and outcome.reason.startswith("malformed"):
            assert "byte offset" in outcome.reason


def encoded_with(entries: int, value_size: int = 4, nesting: int = 0) -> bytes:
    text = str8 if value_size < 256 else str32
    body = map32([(str8(f"k{i}"), text("v" * value_size)) for i in range(entries)])
    value = b"\x40"
    for _ in range(nesting):
        value = b"\xc0" + bytes([len(value) + 1, 1]) + value if len(value) < 250 else \
            b"\xd0" + struct.pack(">II", len(value) + 4, 1) + value
    return (section(0x73, h("c0 03 01 a1 00")) + section(0x74, body)
            + section(0x77, value))


@pytest.mark.parametrize("what,make", [
    ("entries walked", lambda n: encoded_with(n)),
    ("long values skipped", lambda n: encoded_with(10, value_size=n)),
])
def test_reading_encoded_messages_is_linear(what, make):
    """Time at 10n over time at n stays far below quadratic (about 10 is linear)."""
    from timing import growth
    f = filtex.compile_sql("absent = 1 OR p.subject = 'x'")   # walks the whole map

    def operation(n: int):
        data = make(n)
        return lambda: f.evaluate(data)
    assert growth(operation, 2_000) < 30, what


def test_deep_bodies_are_refused_with_a_reason_not_a_crash():
    f = filtex.compile_sql("amqp_value[0][0] IS NULL")
    outcome = f.outcome(encoded_with(1, nesting=500))
    assert outcome.result is None and "nested" in outcome.reason
