"""The encoded reader's fast paths against the reader they replace (issue 27).

``filtex.amqp.encoded`` checks a message's sections by a function made for
their layout, a map by a regular expression of the keys it has learnt (or one
that splits any map's entries) and finds a key by its encoding, and steps over
list fields by a regular expression. None of that may change an answer: on
every message, each filter's outcome (verdict and reason) through the reader
is the one through the reader as it was (``encoded_before.py``), whatever was
learnt before; and where the complete decoder reads the message, the one on
the decoded ``filtex.Message``.

The messages are seeded, workload-like orders (header, annotations,
properties, 8-15 application properties, a data body), then broken where the
fast paths could be fooled: a key twice (in either encoding), keys and key
encodings inside binary and string values, str32 and sym8 keys, map8 and
map32, counts and sizes that lie, long and described values, sections cut
short, garbage after the message; and bytes flipped, cut and inserted.
"""
from __future__ import annotations

import random
import re
import struct
from typing import Any, Callable

import pytest
from proton import symbol, ulong

import filtex
from filtex.amqp import codec
from filtex.amqp import encoded as E
from filtex.amqp.codec import identical
from filtex.errors import EvaluationFailure
from filtex.message import HEADER_FIELDS, PROPERTIES_FIELDS

import encoded_before as before
from hostile_messages import amqp_list, amqp_map, mutated, section, string, sym, vbin
from hostile_messages import filters as hostile_filters

# --- workload-like orders, and the ways to break them ---------------------------------

KEYS = ["color", "order_type", "total_amount", "customer_region", "cancelled", "sku",
        "customer", "quantity", "price", "coupon", "store_id", "channel", "weight",
        "loyalty_tier", "is_gift", "currency", "discount", "batch_id", "source_system",
        "line_count"]


def value(rng: random.Random) -> bytes:
    roll = rng.randrange(12)
    if roll < 3:
        return string(rng.choice(["blue", "red", "premium", "EU-DE", "ABC-123-XY", "test-corp",
                                  "", "é¡", "x" * rng.randrange(60, 70)]))
    if roll == 3:
        return sym(rng.choice(["blue", "EUR", "JPY"]))
    if roll == 4:
        return b"\x54" + struct.pack(">b", rng.randrange(-128, 128))
    if roll == 5:
        return b"\x71" + struct.pack(">i", rng.randrange(-5, 9000))
    if roll == 6:
        return b"\x81" + struct.pack(">q", rng.randrange(10**12))
    if roll == 7:
        return b"\x82" + struct.pack(">d", rng.choice([0.05, 150.25, 7999.5]))
    if roll == 8:
        return rng.choice([b"\x41", b"\x42", b"\x56\x01", b"\x40"])
    if roll == 9:
        return b"\x61" + struct.pack(">h", rng.randrange(30))
    if roll == 10:
        return b"\x83" + struct.pack(">q", 1750772279000)
    return vbin(0xa0, 0xb0, bytes(rng.randrange(256) for _ in range(rng.randrange(12))))


def hidden(rng: random.Random) -> bytes:
    """A value whose bytes hold a key's encoding (or a whole entry)."""
    key = rng.choice(KEYS)
    inner = string(key) + rng.choice([string("blue"), b"\x54\x07", b""])
    if rng.random() < 0.5:
        return vbin(0xa0, 0xb0, rng.choice([b"", b"\x00", b"\xa1"]) + inner)
    return string(key + "¡" + key)   # UTF-8 of ¡ is c2 a1


class Order:
    """One order's parts, each as the encoder will write it."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.header = [rng.choice([b"\x41", b"\x42"])] + (
            [b"\x50" + bytes([rng.randrange(10)])] if rng.random() < 0.85 else [])
        if rng.random() < 0.1:
            self.header = []   # list0: another layout, as proton writes a default header
        self.annotations = [(sym("x-opt-partition"), b"\x54" + bytes([rng.randrange(8)]))]
        self.properties = [string(f"order-{rng.randrange(10**6):06d}"), b"\x40",
                           string(rng.choice(["/orders/eu", "/orders/us"])),
                           string(rng.choice(["order.created", "order.shipped"])), b"\x40",
                           rng.choice([b"\x40", string("corr-1")]),
                           sym(rng.choice(["application/json", "text/plain"])), b"\x40",
                           b"\x40", b"\x83" + struct.pack(">q", 1750772279000
                                                          + 1000 * rng.randrange(-99, 99))]
        if rng.random() < 0.2:
            self.properties.append(string("g1"))
        self.entries = [(string(key), value(rng))
                        for key in rng.sample(KEYS, rng.randrange(8, 16))]
        self.wide_map = rng.random() < 0.8     # map32, as proton writes it
        self.count_shift = 0
        self.size_shift = 0
        self.body = section(0x75, vbin(0xa0, 0xb0, bytes(rng.randrange(40, 300))))
        self.extra = b""
        self.list_lie = (0, 0, 0)   # (which list: 1 header, 2 properties; byte 1 or 2; shift)

    def encode(self) -> bytes:
        entries = self.entries
        ap = amqp_map(entries, self.wide_map)
        if self.count_shift or self.size_shift:
            body = b"".join(k + v for k, v in entries)
            count = max(0, 2 * len(entries) + self.count_shift)
            size = max(0, len(body) + self.size_shift)
            ap = (b"\xd1" + struct.pack(">II", size + 4, count) if self.wide_map or size > 250
                  else bytes([0xc1, (size + 1) % 256, count % 256])) + body
        lists = [amqp_list(self.header), amqp_list(self.properties)]
        which, at, shift = self.list_lie
        if which and lists[which - 1][0] == 0xc0:   # a count or size that lies
            lied = bytearray(lists[which - 1])
            lied[at] = (lied[at] + shift) % 256
            lists[which - 1] = bytes(lied)
        return (section(0x70, lists[0]) + section(0x72, amqp_map(self.annotations))
                + section(0x73, lists[1]) + section(0x74, ap) + self.body + self.extra)


def twice(o: Order) -> None:
    if not o.entries:
        return
    key = o.rng.choice(o.entries)[0]
    if o.rng.random() < 0.3:
        key = string(key[2:], True)   # the same key as str32
    o.entries.insert(o.rng.randrange(len(o.entries) + 1), (key, value(o.rng)))


def renamed_twice(o: Order) -> None:
    """Two keys of one length made equal: a duplicate with the same bytes count."""
    by_length: dict[int, list[int]] = {}
    for i, (key, _) in enumerate(o.entries):
        by_length.setdefault(len(key), []).append(i)
    pairs = [ix for ix in by_length.values() if len(ix) > 1]
    if pairs:
        i, j = o.rng.sample(o.rng.choice(pairs), 2)
        o.entries[j] = (o.entries[i][0], o.entries[j][1])


def hide(o: Order) -> None:
    if not o.entries:
        return
    i = o.rng.randrange(len(o.entries))
    o.entries[i] = (o.entries[i][0], hidden(o.rng))


def wide_key(o: Order) -> None:
    if not o.entries:
        return
    i = o.rng.randrange(len(o.entries))
    o.entries[i] = (string(o.entries[i][0][2:], True), o.entries[i][1])


def symbol_key(o: Order) -> None:
    if not o.entries:
        return
    i = o.rng.randrange(len(o.entries))
    o.entries[i] = (sym(o.entries[i][0][2:]), o.entries[i][1])


def new_key(o: Order) -> None:
    o.entries.append((string(f"k{o.rng.randrange(1000)}"), value(o.rng)))


def odd_value(o: Order) -> None:
    if not o.entries:
        return
    i = o.rng.randrange(len(o.entries))
    o.entries[i] = (o.entries[i][0], o.rng.choice([
        b"\x00\x53\x01\x54\x05",                              # described
        string("y" * 300), vbin(0xa0, 0xb0, b"z" * 300),      # four-byte lengths
        string("short", True), amqp_list([b"\x54\x01"]), amqp_map([]),
        b"\xff", b"\x2d", string(b"\xff\xfe"), sym("é".encode()), b"\x56\x07"]))


def count_lie(o: Order) -> None:
    o.count_shift = o.rng.choice([-2, -1, 1, 2])


def size_lie(o: Order) -> None:
    o.size_shift = o.rng.choice([-2, -1, 1, 2])


def small_map(o: Order) -> None:
    o.entries = o.entries[:o.rng.randrange(0, 6)]
    o.wide_map = False


def annotations(o: Order) -> None:
    o.annotations.append(o.rng.choice([(b"\x53\x03", b"\x41"), (b"\x44", b"\x42"),
                                       (sym("x-opt-partition"), b"\x41"),
                                       (sym("x-opt-jms-type"), string("order.created"))]))


def fields(o: Order) -> None:
    part = o.rng.choice([o.header, o.properties])
    i = o.rng.randrange(len(part) + 1)
    part[i:i + 1] = [o.rng.choice([b"\x2d", b"\xa1\x09ab", b"\x00\x53\x01\x40", b"\x40",
                                   string(b"\xff"), b"\x52\x03", string("z" * 300)])]


def list_lie(o: Order) -> None:
    o.list_lie = (o.rng.choice([1, 2]), o.rng.choice([1, 2]), o.rng.choice([-2, -1, 1, 2]))


def tail(o: Order) -> None:
    o.extra = o.rng.choice([b"\x00", b"\x40", section(0x78, amqp_map([])),
                            section(0x74, amqp_map([])), section(0x75, b"\xa0\x00")])


def body(o: Order) -> None:
    o.body = o.rng.choice([b"", section(0x77, string("v")), section(0x76, amqp_list([b"\x41"])),
                           section(0x75, b"\xa0\x01x") * 2])


BREAKS: list[Callable[[Order], None]] = [
    twice, renamed_twice, hide, hide, wide_key, symbol_key, new_key, odd_value, count_lie,
    size_lie, small_map, annotations, fields, list_lie, tail, body]


def head(rng: random.Random, data: bytes) -> bytes:
    """A section's descriptor code or value constructor changed: another
    section, or the wrong encoding, where the layout had another."""
    starts = [start for _, start, _ in codec.locate_sections(data)]
    at = rng.choice(starts) + rng.choice([2, 3])
    new = rng.choice([0x45, 0xc0, 0xc1, 0xd0, 0xd1, 0xa0, 0xb0, 0x41] if data[at] > 0x80 or
                     data[at] == 0x45 else list(range(0x70, 0x79)))
    return data[:at] + bytes([new]) + data[at + 1:]


def orders(count: int, seed: int) -> list[bytes]:
    """Whole orders, then as many broken ones (a break or two, or bytes mutated)."""
    rng = random.Random(seed)
    whole = [Order(rng).encode() for _ in range(count)]
    broken = []
    for _ in range(count):
        o = Order(rng)
        for brk in rng.sample(BREAKS, rng.choice([1, 1, 2])):
            brk(o)
        data = o.encode()
        roll = rng.random()
        if roll < 0.3:
            data = mutated(rng, data)
        elif roll < 0.4:
            data = head(rng, Order(rng).encode())
        broken.append(data)
    return whole + broken


# --- the filters -----------------------------------------------------------------------

IN10 = "'EU-DE', 'EU-FR', 'US-CA', 'APAC-JP'"
WORKLOAD = [   # (jms, rabbitmq) of benchmarks/peer_workload.py's kinds
    ("color = 'blue'", "color = 'blue'"),
    ("JMSPriority > 4 AND color = 'blue'", "header.priority > 4 AND color = 'blue'"),
    (f"customer_region IN ({IN10})", f"customer_region IN ({IN10})"),
    ("sku LIKE 'ABC-%'", "sku LIKE 'ABC-%'"),
    ("total_amount BETWEEN 100 AND 5000", "total_amount >= 100 AND total_amount <= 5000"),
    ("price * quantity > 1000", "price * quantity > 1000"),
    ("coupon IS NULL", "coupon IS NULL"),
    ("JMSType = 'order.created' AND JMSDeliveryMode = 'PERSISTENT'",
     "properties.subject = 'order.created' AND p.content_type = 'application/json'"),
    ("order_type IN ('premium', 'express') AND NOT cancelled AND JMSTimestamp >= 0",
     "order_type IN ('premium', 'express') AND NOT cancelled AND p.creation_time >= 0"),
]
AMQP = ["zz IS NULL", "EXISTS(line_count)", "weight > 1 OR is_gift", "k7 IS NULL",
        "h.durable AND h.priority < 5", "h.ttl IS NULL", "p.subject LIKE 'order.%'",
        "p.[group-id] = 'g1'", "p.[reply-to-group-id] IS NULL", "p.[message-id] IS NOT NULL",
        "m.[x-opt-partition] = 3", "m.[x-opt-jms-type] IS NULL", "d.[x-opt-d] IS NULL",
        "f.[x-opt-f] IS NULL", "amqp_value = 'v'"]


def all_filters() -> list[filtex.Filter]:
    made = [filtex.compile_sql(text, dialect)
            for pair in WORKLOAD for dialect, text in zip(("jms", "rabbitmq"), pair)]
    made += [filtex.compile_sql(text) for text in AMQP]
    made += [filtex.compile_filter(("amqp:message-annotations-filter", {ulong(3): True}))]
    return made + hostile_filters()


FILTERS = all_filters()
BODILESS = [f for f in FILTERS if "amqp_value" not in (f.text or "")
            and "amqp_sequence" not in (f.text or "")]


# --- what is compared ----------------------------------------------------------------------

def outcome(f: filtex.Filter, message: Any) -> tuple[Any, Any]:
    got = f.outcome(message)
    return got.result, got.reason


def read(mapping: Any, how: Callable[[Any], Any]) -> Any:
    """A read's value, or its failure's reason (a filter's unknown), or the
    exception it raises (what any mapping raises: an unhashable key)."""
    try:
        return ("value", how(mapping))
    except EvaluationFailure as failure:
        return ("failed", failure.reason)
    except Exception as exc:   # noqa: BLE001
        return ("raised", type(exc).__name__)


def same_read(got: Any, want: Any) -> bool:
    if got[0] != "value" or want[0] != "value":
        return bool(got == want)
    return identical(got[1], want[1]) if not isinstance(got[1], list) else got[1] == want[1]


READS: list[Callable[[Any], Any]] = [
    *(lambda m, k=k: m.get(k) for k in KEYS[:12]),
    lambda m: m.get("k7", 7), lambda m: m.get(symbol("color")), lambda m: m.get("é\ud800"),
    lambda m: m.get(ulong(3)), lambda m: m.get(3), lambda m: m.get(["unhashable"]),
    lambda m: m.get("x-opt-partition"), lambda m: "color" in m, lambda m: len(m),
    lambda m: sorted(map(str, m)),
]
FIELD_READS = [(lambda m, n=n: m.get(n)) for n in HEADER_FIELDS + PROPERTIES_FIELDS]
SECTION_READS = {"_filtex_application_properties": READS, "_filtex_message_annotations": READS,
                 "_filtex_header": FIELD_READS, "_filtex_properties": FIELD_READS}


def compare(data: bytes, rng: random.Random, seen: dict[str, int]) -> None:
    """Every filter (fresh views, and one view read in a random order) and
    every map and field read, against the reader before; the verdicts
    against the decoded message where the decoder reads it."""
    way = tier(E.EncodedMessage(data))   # on the first read: the next ones may have learnt
    seen[way] = seen.get(way, 0) + 1
    old = {id(f): outcome(f, before.EncodedMessage(data)) for f in FILTERS}
    assert E.EncodedMessage(data).problem == before.EncodedMessage(data).problem, data.hex()
    for f in FILTERS:
        assert outcome(f, data) == old[id(f)], (f.text, data.hex())
    shared = filtex.view(data)
    for f in rng.sample(FILTERS, len(FILTERS)):
        assert outcome(f, shared) == old[id(f)], ("one view", f.text, data.hex())
    try:
        decoded = codec.decode_message(data)
    except codec.DecodeError:
        decoded = None
    if decoded is not None:
        for f in BODILESS:
            assert f.outcome(decoded).result == old[id(f)][0], ("decoded", f.text, data.hex())
    new_view, old_view = E.EncodedMessage(data), before.EncodedMessage(data)
    if new_view.problem is not None:
        return
    for name, reads in SECTION_READS.items():
        new_section, old_section = getattr(new_view, name), getattr(old_view, name)
        for how in rng.sample(reads, len(reads)):
            got, want = read(new_section, how), read(old_section, how)
            assert same_read(got, want), (name, got, want, data.hex())


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing learnt yet (layouts, keys, headers), as in a new process; what
    other tests taught the reader is back afterwards."""
    learning = {ctor: E._Learning(ctor) for ctor in (0xa1, 0xa3)}
    monkeypatch.setattr(E, "_LEARNING", learning)
    monkeypatch.setattr(E, "_LEARNING_BY_CODE",
                        {code: learning[ctor] for code, ctor in E._KEY_CTOR.items()})
    monkeypatch.setattr(E, "_layout", E._no_layout)
    monkeypatch.setattr(E, "_RECENT", ())
    for name in ("_LAYOUTS", "_SEEN", "_HEADERS", "_HEADERS_SEEN"):
        monkeypatch.setattr(E, name, {})
    monkeypatch.setattr(E, "_budget", [16, 0])


def tier(view: E.EncodedMessage) -> str:
    """How the application properties of a view were checked, reading them."""
    if view.problem is not None:
        return "no message"
    ap = view._filtex_application_properties
    if ap is E.EMPTY:
        return "none"
    try:
        ap.get("color")
    except EvaluationFailure:
        return "malformed"
    return {re.Match: "match", set: "split", dict: "walk"}.get(type(ap._index), "none")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [27, 28, 29])
def test_the_reader_answers_as_before_on_orders_broken_every_way(fresh, seed):
    messages = orders(120, seed)
    rng = random.Random(seed)
    for data in messages[:120] * 3:   # learnt from whole orders
        filtex.view(data)._filtex_application_properties.get("color")
    assert len(E._RECENT) >= 2 and E._LEARNING[0xa1].known is not None   # layouts, keys
    seen: dict[str, int] = {}
    for data in rng.sample(messages, len(messages)):
        compare(data, rng, seen)
    # the comparison means something: each way of checking a map was taken
    assert seen.get("match", 0) > 100 and seen.get("walk", 0) > 3, seen
    assert seen.get("split", 0) > 0 and seen.get("malformed", 0) > 10, seen


@pytest.mark.slow
def test_the_reader_answers_as_before_before_it_learns_anything(fresh):
    """The same comparisons on a reader that has learnt nothing, and then
    on one that has learnt from these very messages, broken ones included."""
    messages = orders(60, 30)
    rng = random.Random(30)
    seen: dict[str, int] = {}
    for data in messages:
        compare(data, rng, seen)
    assert seen.get("split", 0) > 5, seen
    for data in messages * 3:
        compare(data, rng, seen)


@pytest.mark.slow
def test_keys_learnt_from_many_maps_stay_bounded(fresh):
    """A stream of ever new keys: at most 64 known, and the known-keys
    expressions made anew ever more rarely."""
    rng = random.Random(31)
    made = 0
    known = None
    for i in range(3000):
        entries = [(string(f"key-{i}-{j}"), b"\x54\x01") for j in range(rng.randrange(1, 5))]
        data = section(0x74, amqp_map(entries, True))
        assert filtex.compile_sql(f"[key-{i}-0] = 1").evaluate(data) is True
        current = E._LEARNING[0xa1].known
        if current is not known:
            made, known = made + 1, current
        assert current is None or len(current.keys) <= 64
    assert made <= 13, made   # about log2 of the maps


def test_layouts_are_made_within_a_budget(fresh):
    """Messages of ever new layouts: a function for a layout met eight times,
    sixteen at most until many more messages have been read; and each reads
    its layout as the step-by-step check does."""
    rng = random.Random(32)
    forms = [(0x70, [b"\x45", amqp_list([b"\x41"]), amqp_list([b"\x41"], True)]),
             (0x71, [amqp_map([]), amqp_map([], True)]),
             (0x72, [amqp_map([]), amqp_map([], True)]),
             (0x73, [b"\x45", amqp_list([string("id")]), amqp_list([b"\x40"], True)]),
             (0x74, [amqp_map([]), amqp_map([(string("a"), b"\x54\x01")], True)]),
             (0x75, [vbin(0xa0, 0xb0, b"x"), vbin(0xa0, 0xb0, b"x", True)]),
             (0x77, [b"\x41", b"\x54\x05", string("v"), amqp_list([], True)]),
             (0x78, [amqp_map([]), amqp_map([], True)])]
    layouts = set()
    for _ in range(300):
        parts = [(code, rng.choice(values)) for code, values in forms if rng.random() < 0.5]
        parts = [(c, v) for c, v in parts if c != 0x77 or all(o != 0x75 for o, _ in parts)]
        data = b"".join(section(code, v) for code, v in parts)
        layouts.add(tuple((code, v[0]) for code, v in parts))
        for _ in range(9):
            view = E.EncodedMessage(data)
            assert view._where == E._where(E._locate(data)), data.hex()
            assert view._where == E._where(before._locate(data)), data.hex()
    assert len(layouts) > 100
    assert len(E._LAYOUTS) == 16 and E._budget[0] == 0


@pytest.mark.parametrize("data,words", [
    (section(0x74, amqp_map([(string("a"), b"\x54\x01"), (string("a"), b"\x54\x02")], True)),
     "duplicate map key 'a'"),
    (section(0x74, amqp_map([(string("a"), b"\x54\x01"), (string("a", True), b"\x54\x02")])),
     "duplicate map key 'a'"),
    (section(0x74, amqp_map([(string("b"), vbin(0xa0, 0xb0, string("a") + b"\x54\x02")),
                             (string("a"), b"\x54\x01")])), None),
])
def test_a_key_found_by_its_encoding_is_an_entry(fresh, data, words):
    for _ in range(12):   # learnt, then read by the known keys' expression too
        for text, want in (("a = 1", True), ("b IS NOT NULL", True), ("c IS NULL", True)):
            got = filtex.compile_sql(text).outcome(data)
            if words is None:
                assert got.result is want, (text, got)
            else:
                assert got.result is None and words in got.reason, (text, got)


@pytest.mark.parametrize("size", [255, 256, 300, 65536])
def test_a_long_value_is_stepped_over_whole(fresh, size):
    """A long value (a four-byte length) in a map and in a list. At 256 its
    bytes hold what a reader that read the length as 0 would take for an
    entry (key c, then a field) reaching the map's (the list's) end, so that
    the count still fits: c must be absent, as before."""
    content = bytes(size)
    if size == 256:
        content = b"\xa1\x01c\xb0\x00\x00\x00" + bytes([253]) + bytes(248)
    value = b"\xb0" + struct.pack(">I", size) + content
    data = section(0x73, amqp_list([b"\x40", value, b"\x40", string("s")], True))
    data += section(0x74, amqp_map([(string("a"), value), (string("b"), b"\x54\x02")], True))
    for _ in range(6):   # learnt, then read by the known keys' expression too
        for text in ("c IS NULL", "b = 2", "EXISTS(a)", "p.subject = 's'", "p.to IS NULL"):
            f = filtex.compile_sql(text)
            assert outcome(f, data) == outcome(f, before.EncodedMessage(data)) == (True, None), \
                (text, size)


@pytest.mark.parametrize("data", [
    section(0x74, b"\xc1\x00") + section(0x75, b"\xa0\x00"),              # no room for a count
    section(0x74, b"\xc1\x01\x00") + section(0x75, b"\xa0\x00"),
    section(0x74, b"\xd1\x00\x00\x00\x03\x00\x00\x00") + section(0x75, b"\xa0\x00"),
    section(0x74, b"\xd1\x00\x00\x00\x04\x00\x00\x00\x00") + section(0x75, b"\xa0\x00"),
    section(0x74, b"\xc1\x01\x01") + section(0x75, b"\xa0\x00"),          # an odd count
    section(0x74, b"\xc1\x02\x02\xa1") + section(0x75, b"\xa0\x00"),
])
def test_maps_too_small_for_their_count(fresh, data):
    for _ in range(12):   # learnt, then read by the known keys' expression too
        filtex.compile_sql("a = 1").evaluate(section(0x74, amqp_map([(string("a"), b"\x54\x01")])))
        for text in ("a IS NULL", "EXISTS(a)", "p.subject IS NULL"):
            f = filtex.compile_sql(text)
            assert outcome(f, data) == outcome(f, before.EncodedMessage(data)), text
