"""Filters evaluated while walking encoded messages (``arrow/walk.py``) against the
per-message engine, message by message.

The walking kernel finds keys by prediction (each entry against the entry at the
same place in the previous message) and trusts the previous message's check
that no key is there twice only when every key matched; these columns are
made of messages that mostly share their keys and order, with the faults put
where a prediction would hide them: a key twice at a place where the previous
message had another, keys reordered, more keys than are checked pair by pair,
wrong-typed header and properties fields, null cells, and values of every
kind the atoms answer (strings in several scripts for the byte comparisons,
float specials, unsigned longs past 2**63, chars, timestamps).
"""
from __future__ import annotations

import random
import struct

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("numba")

import pyarrow as pa  # noqa: E402

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402

from hostile_messages import amqp_list, amqp_map, section, string, sym  # noqa: E402

KEYS = ["color", "size", "price", "count", "flag", "name", "weight", "big", "when", "tag"]
WORDS = ["red", "blue", "", "bleu", "é", "日本", "red-ish", "r%d", "a_b", "ré", "blue\x00x",
         "Z", "zz", "\U0001F600"]


def _value(rng: random.Random, key: str) -> bytes:
    roll = rng.random()
    if roll < 0.06:
        return b"\x40"
    if roll < 0.1:   # any other kind, now and then
        return rng.choice([b"\x41", b"\x54\x05", b"\x73\x00\x00\x00\x41", string("red"),
                           sym("blue"), b"\x82" + struct.pack(">d", float("nan")),
                           b"\x80" + struct.pack(">Q", 2**64 - 1), b"\x98" + bytes(16)])
    if key in ("color", "name", "tag"):
        return (sym if rng.random() < 0.1 else string)(rng.choice(WORDS))
    if key in ("size", "count"):
        return rng.choice([b"\x54" + struct.pack(">b", rng.randrange(-3, 12)),
                           b"\x71" + struct.pack(">i", rng.randrange(-100, 100)),
                           b"\x81" + struct.pack(">q", rng.choice([0, 5, -2**63, 2**63 - 1])),
                           b"\x52" + bytes([rng.randrange(256)]),
                           b"\x60" + struct.pack(">H", rng.randrange(65536))])
    if key in ("price", "weight"):
        x = rng.choice([0.0, -0.0, 1.5, 99.99, 100.0, float("inf"), float("-inf"),
                        float("nan"), 1e300, -7.25])
        return (b"\x72" + struct.pack(">f", x)) if rng.random() < 0.3 and abs(x) < 1e38 else \
            (b"\x82" + struct.pack(">d", x))
    if key == "flag":
        return rng.choice([b"\x41", b"\x42", b"\x56\x00", b"\x56\x01"])
    if key == "big":
        return b"\x80" + struct.pack(">Q", rng.choice([0, 7, 2**63, 2**64 - 1, 2**63 - 1]))
    return b"\x83" + struct.pack(">q", rng.choice([0, 1_700_000_000_000, -5]))


def _header(rng: random.Random) -> bytes:
    priority = b"\x50" + bytes([rng.randrange(10)])
    if rng.random() < 0.05:
        priority = string("high")   # a wrong type: the decoder leaves such a message
    return section(0x70, amqp_list([rng.choice([b"\x41", b"\x42"]), priority]))


def _properties(rng: random.Random) -> bytes:
    subject = string(rng.choice(WORDS)) if rng.random() < 0.9 else b"\x54\x01"
    return section(0x73, amqp_list([string(f"id-{rng.randrange(99)}"), b"\x40", b"\x40",
                                    subject, b"\x40", b"\x40", sym("text/plain"), b"\x40",
                                    b"\x40", b"\x83" + struct.pack(">q", rng.randrange(10))]))


def _message(rng: random.Random) -> bytes:
    keys = list(KEYS)
    roll = rng.random()
    if roll < 0.06:   # a key twice where the previous message had another key
        keys[rng.randrange(1, len(keys))] = keys[0]
    elif roll < 0.1:
        rng.shuffle(keys)
    elif roll < 0.13:
        keys += [f"extra-{i}" for i in range(30)]   # more than are checked pair by pair
    elif roll < 0.16:
        keys = keys[:rng.randrange(len(keys))]
    entries = [(string(k), _value(rng, k)) for k in keys]
    parts = [_header(rng)] if rng.random() < 0.9 else []
    parts.append(section(0x72, amqp_map([(sym("x-opt-a"), b"\x41")], True)))
    if rng.random() < 0.9:
        parts.append(_properties(rng))
    parts.append(section(0x74, amqp_map(entries, rng.random() < 0.2)))
    parts.append(section(0x75, b"\xa0\x03abc"))
    return b"".join(parts)


FILTERS = [
    "color = 'red'", "color <> 'red'", "color < 'blue'", "color >= 'r'", "color > ''",
    "color IN ('red', 'bleu', '日本', '')", "color NOT IN ('red', 'é')",
    "color LIKE 'r%'", "color LIKE '%e'", "color LIKE '%e%u%'", "color LIKE 'red'",
    "color NOT LIKE 'b%'", "color LIKE 'r!%%' ESCAPE '!'", "color LIKE '%'",
    "name LIKE '%\U0001F600'", "tag = 'a_b' OR tag LIKE 'Z%'",
    "size > 3", "size BETWEEN -2 AND 5", "count <> 0", "count IN (5, -100, 99)",
    "price > 99.99", "price = 0", "price <= 100", "weight BETWEEN -10 AND 1e301",
    "NOT (weight > 0)", "big > 9223372036854775807", "big = 18446744073709551615",
    "flag", "NOT flag", "flag = FALSE OR size > 10", "when > 0",
    "color IS NULL", "size IS NOT NULL", "EXISTS(price)", "missing IS NULL", "missing = 1",
    "h.priority > 4", "h.durable = TRUE AND color = 'red'", "p.subject LIKE 'r%'",
    "p.[creation-time] >= 5", "p.[content-type] = 'text/plain'", "p.[message-id] = 'id-7'",
    "color = 'red' AND (size > 2 OR price < 50) AND NOT flag",
    "TRUE", "color = 'blue' OR 1 = 1",
]
JMS = ["color = 'red'", "color LIKE 'r%'", "color NOT LIKE '%u%'", "size > 3 AND price < 100",
       "color IN ('red', 'blue')", "JMSPriority > 4", "flag = TRUE", "count BETWEEN 1 AND 50",
       "color LIKE 'r\\%%' ESCAPE '\\'"]
RABBITMQ = ["color = 'red'", "color LIKE 'r%'", "size > 3 AND price < 100",
            "color IN ('red', 'blue') OR flag", "properties.subject = 'red'"]
CASES = ([(t, "amqp") for t in FILTERS] + [(t, "jms") for t in JMS]
         + [(t, "rabbitmq") for t in RABBITMQ])


@pytest.fixture(scope="module")
def column() -> tuple[list[bytes | None], pa.Array]:
    rng = random.Random(2511)
    cells: list[bytes | None] = [_message(rng) for _ in range(700)]
    for r in (3, 64, 65, 300):
        cells[r] = None
    cells[100] = cells[100][:-7]   # cut short
    return cells, pa.array([b"\x00"] + cells, pa.binary()).slice(1)   # offsets not from 0


@pytest.mark.slow
def test_every_filter_walks_and_agrees_message_by_message(column):
    cells, array = column
    walked = 0
    for text, dialect in CASES:
        flt = filtex.compile_sql(text, dialect)
        want = [None if c is None else flt.evaluate(c) for c in cells]
        walked += fa.can_walk(flt)
        for form in (array, array.cast(pa.large_binary()), pa.chunked_array([array[:333],
                                                                              array[333:]])):
            got = fa.evaluate_encoded(flt, form).verdicts.to_pylist()
            assert got == want, (text, dialect, [r for r, (g, w) in enumerate(zip(got, want))
                                                 if g != w][:5])
    assert walked >= len(CASES) - 3, walked   # the cases are for the walking kernel


def test_the_walk_answers_most_messages_itself(column):
    """The messages it marks are the faulty ones (about a sixth), not every one."""
    from filtex.arrow.walk import run, walked
    from filtex.arrow.parallel import rows_of_words
    from filtex.plan.prepared import prepared
    _, array = column
    ready = prepared(filtex.compile_sql("color = 'red' AND size > 3"))
    _, _, marked = run(ready, walked(ready, None), array)
    count = len(rows_of_words(marked))
    assert 0.05 * len(array) < count < 0.35 * len(array), count


@pytest.mark.parametrize("text", [
    "m.[x-opt-a] = TRUE", "amqp_value.order IS NULL", "size + 1 > 3", "LOWER(color) = 'red'",
    "color LIKE 'r_d'", "amqp_sequence[0] IS NOT NULL"])
def test_filters_without_a_byte_form_are_decoded(text, column):
    cells, array = column
    flt = filtex.compile_sql(text)
    assert not fa.can_walk(flt)
    want = [None if c is None else flt.evaluate(c) for c in cells]
    assert fa.evaluate_encoded(flt, array).verdicts.to_pylist() == want


@pytest.mark.slow
@pytest.mark.parametrize("text,make", [
    ("a LIKE '%xyz%b'", lambda n: [(string("a"), string("xy" * (n // 2)))]),
    ("a IN ('x', 'y') AND b < 'z'", lambda n: [(string("a"), string("x" * n)),
                                               (string("b"), string("x" * n))]),
    ("zz = 1", lambda n: [(string("k" * (n // 32) + f"{i:02}"), b"\x41") for i in range(31)]),
])
def test_the_walk_is_linear_in_the_message(text, make):
    """Time at n and 10n (a ratio, not a time): long strings searched and
    compared, long keys checked pair by pair."""
    from timing import growth
    flt = filtex.compile_sql(text)
    assert fa.can_walk(flt)

    def operation(size: int):
        cell = section(0x74, amqp_map(make(size), True))
        array = pa.array([cell] * 4, pa.binary())
        return lambda: fa.evaluate_encoded(flt, array)
    operation(10)()   # compiled first
    assert growth(operation, 20_000) < 30
