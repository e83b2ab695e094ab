"""The generated fast paths for arithmetic, negation and the JMS headers give
what the runtime gives, at the edges where Java and Python part: int32 and
long overflow, nested Integer arithmetic (which must stay an Integer), -0.0,
NaN, infinities, Float, unsigned types, strings and booleans in number
positions. Each filter is compiled twice, with inline fast paths and in
compact code (runtime calls only), and both evaluate every value pair."""
from __future__ import annotations

import itertools
import math
from decimal import Decimal

import pytest
from proton import char, float32, int32, symbol, timestamp, ubyte, ulong

import filtex
from filtex.row import generator

EDGE_VALUES = [
    int32(7), int32(-3), int32(2**31 - 1), int32(-2**31), int32(0), int32(46341),
    7, -3, 2**31, 2**63 - 1, -2**63, 3037000500, 0, ulong(2**64 - 1), ubyte(200),
    1.5, -0.0, 0.0, math.nan, math.inf, -math.inf, 1e308, float32(2.5),
    Decimal("2.5"), timestamp(1000), True, "7", symbol("x"), None]

EXPRESSIONS = {
    "amqp": ["a * b > 0", "a + b = 10", "a - b < a", "(a * b) * b > 0", "-(a + b) < 0",
             "-a = b", "a / b > 1", "(a - b) + a <> 0", "-(-a) = a", "a % b = 1", "-a IS NULL"],
    "jms": ["a * b > 0", "a + b = 10", "a - b < a", "(a * b) * b > 0", "-(a + b) < 0",
            "-a = b", "a / b > 1", "(a - b) + a <> 0", "-(-a) = a", "a * 2 + b > 100",
            "a * 3000000000 > b", "-(a * b) * 2 < 0", "a BETWEEN 1 AND 10",
            "a NOT BETWEEN 1 AND 10", "a / 0 > b", "-a IS NULL", "a + b = '77'",
            "a + 'x' = '7x'", "a + b <> 'xx'"],
    "rabbitmq": ["a * b > 0", "a + b = 10", "a - b < a", "(a * b) * b > 0", "-(a + b) < 0",
                 "-a = b", "a / b > 1", "(a - b) + a <> 0", "-(-a) = a", "a % b = 1",
                 "-a IS NULL"],
}

CASES = [(dialect, text) for dialect, texts in EXPRESSIONS.items() for text in texts]


def _compact(text: str, dialect: str, monkeypatch: pytest.MonkeyPatch) -> filtex.Filter:
    with monkeypatch.context() as patch:
        patch.setattr(generator, "INLINE_BUDGET", -1)
        filtex.cache_clear()
        compact = filtex.compile_sql(text, dialect)
    filtex.cache_clear()
    return compact


@pytest.mark.parametrize("dialect,text", CASES, ids=[f"{d}:{t}" for d, t in CASES])
def test_inline_arithmetic_agrees_with_the_runtime(dialect, text, monkeypatch):
    compact = _compact(text, dialect, monkeypatch)
    inline = filtex.compile_sql(text, dialect)
    assert inline.source != compact.source
    disagreements = []
    for a, b in itertools.product(EDGE_VALUES, repeat=2):
        props = {k: v for k, v in (("a", a), ("b", b)) if v is not None}
        message = filtex.Message(application_properties=props)
        expected, got = compact.outcome(message).result, inline.outcome(message).result
        if got is not expected:
            disagreements.append((a, b, expected, got))
    assert not disagreements, (text, disagreements[:5], inline.source)


JMS_HEADER_FILTERS = ["JMSType = 'order'", "JMSType = 'order' AND JMSDeliveryMode = 'PERSISTENT'",
                      "JMSDeliveryMode <> 'NON_PERSISTENT'", "JMSRedelivered",
                      "JMSType IS NULL OR JMSType LIKE 'ord%'", "JMSType IN ('order', 'invoice')"]


@pytest.mark.parametrize("text", JMS_HEADER_FILTERS)
def test_inline_jms_headers_agree_with_the_runtime(text, monkeypatch):
    """JMSType (annotation, else subject), JMSDeliveryMode and JMSRedelivered
    computed inline, against the dialect's functions."""
    compact = _compact(text, "jms", monkeypatch)
    inline = filtex.compile_sql(text, "jms")
    assert "_derived" in compact.source
    annotations = [symbol("order"), "invoice", 5, None]
    subjects = ["order", "other", None]
    durables = [True, False, 1, None]
    counts = [ulong(0), ulong(2), int32(-1), "x", None]
    for jms_type, subject, durable, count in itertools.product(annotations, subjects,
                                                               durables, counts):
        message = filtex.Message(
            message_annotations={} if jms_type is None else {symbol("x-opt-jms-type"): jms_type},
            properties={} if subject is None else {"subject": subject},
            header={k: v for k, v in (("durable", durable), ("delivery-count", count))
                    if v is not None})
        assert inline.evaluate(message) is compact.evaluate(message), (
            text, jms_type, subject, durable, count)


STRING_VALUES = ["Acme", "acme", "ab", "", "İ", "ß", symbol("Acme"), char("a"), 5, 2.5, b"ab",
                 True, None]
FUSED = ["LOWER(a) = 'acme'", "LEFT(a, 2) <> 'ab'", "UPPER(a) < 'M'", "SUBSTRING(a, 2, 3) = 'cm'",
         "RIGHT(a, 0) = ''", "LOWER(a) >= 'b' AND LEFT(a, 1) = 'a'", "LOWER(a, 'x') = 'acme'"]


@pytest.mark.parametrize("text", FUSED)
def test_string_functions_compared_in_one_test_agree_with_the_runtime(text, monkeypatch):
    """``LOWER(x) = 'c'`` is one test for strings; the outcome (failures and
    their reasons too) is the runtime's for every value."""
    compact = _compact(text, "amqp", monkeypatch)
    inline = filtex.compile_sql(text)
    for value in STRING_VALUES:
        message = filtex.Message(application_properties={} if value is None else {"a": value})
        assert inline.outcome(message) == compact.outcome(message), (text, value)
