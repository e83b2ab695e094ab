"""The generated fast paths for arithmetic, negation and the JMS headers give
what the runtime gives, at the edges where Java and Python part: int32 and
long overflow, nested Integer arithmetic (which must stay an Integer), -0.0,
NaN, infinities, Float, unsigned types, strings and booleans in number
positions. Each filter is compiled twice, with inline fast paths and in
compact code (runtime calls only), and both evaluate every value pair."""
from __future__ import annotations

import itertools
import math
import uuid
from decimal import Decimal

import pytest
from proton import (UNDESCRIBED, Array, Data, Described, char, float32, int32, symbol,
                    timestamp, ubyte, ulong)

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


JUNCTION_VALUES = [None, True, False, "blue", symbol("blue"), char("b"), "red", 5, int32(5),
                   ubyte(9), 2.5, math.nan, math.inf, -math.inf, b"blue", Decimal("5"),
                   timestamp(5), ["x"]]


def _junction_filters(seed: int, count: int) -> list[str]:
    """AND/OR/NOT trees of tests on a, b and c: at the root (early returns) and
    nested (nested ifs), with operands that may be NULL, of another type, or fail."""
    import random
    rng = random.Random(seed)
    atoms = ["a = 'blue'", "a <> 'blue'", "b > 4", "b IS NULL", "c IN ('blue', 'red')",
             "a LIKE 'bl%'", "c NOT LIKE '%e%'", "b BETWEEN 1 AND 6", "a IS NOT NULL",
             "b = 2.5", "c = 'red'", "b * 2 > 9", "a"]

    def tree(depth: int) -> str:
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(atoms)
        if rng.random() < 0.15:
            return f"NOT ({tree(depth - 1)})"
        joiner = rng.choice([" AND ", " OR "])
        return "(" + joiner.join(tree(depth - 1) for _ in range(rng.randint(2, 4))) + ")"
    return [tree(3) for _ in range(count)]


@pytest.mark.slow
@pytest.mark.parametrize("dialect", ["amqp", "jms", "rabbitmq"])
def test_junctions_that_return_early_agree_with_the_runtime(dialect, monkeypatch):
    """A root AND/OR returns at its first decisive item (``matches`` at the first
    item not TRUE), a short nested one runs its items in nested ifs, strings
    against numbers and booleans and IS NULL are settled inline: every outcome and
    every ``matches`` equal the compact code's, which calls the runtime's junction
    and comparisons."""
    import random
    rng = random.Random(27)
    messages = [filtex.Message(application_properties={
        k: v for k in "abc" if (v := rng.choice(JUNCTION_VALUES)) is not None})
        for _ in range(150)]
    checked = 0
    for text in _junction_filters(27, 40):
        try:
            compact = _compact(text, dialect, monkeypatch)
        except filtex.FilterError:   # not this dialect's SQL (a condition that is no boolean)
            continue
        inline = filtex.compile_sql(text, dialect)
        for message in messages:
            expected = compact.outcome(message).result
            assert inline.outcome(message).result is expected, (text, message)
            assert inline.evaluate(message) is expected, (text, message)
            assert inline.matches(message) is (expected is True), (text, message)
        checked += 1
    assert checked >= 20   # rabbitmq has no BETWEEN


def test_values_rabbitmq_never_drops_are_read_without_a_view():
    """rabbitmq's IS NULL skips the view for ``never_dropped`` classes: the
    view really keeps each of them."""
    from filtex.dialects import get_dialect
    rabbitmq = get_dialect("rabbitmq").semantics
    samples = {int: 1, str: "x", symbol: symbol("x"), char: char("x"), bool: False,
               bytes: b"", timestamp: timestamp(1), int32: int32(1), ubyte: ubyte(1),
               ulong: ulong(1)}
    from filtex.runtime.values import INT_CLASSES
    for cls in rabbitmq.never_dropped:
        sample = samples.get(cls) if cls in samples else cls(1) if cls in INT_CLASSES else None
        assert sample is not None and type(sample) is cls, cls
        assert rabbitmq.view(sample) is not None, cls


# --- failures: the early exit where a value's class surely fails (amqp) ---------------------

FAILING_FILTERS = [
    "x > 100", "x = 100", "x <> 2.5", "x >= 1.0E3", "100 < x", "x = 'red'", "x <> 'red'",
    "x < 'm'", "x = '2024-01-01'", "x = TRUE", "x <> FALSE", "x IN (1, 2)", "x NOT IN (1, 2)",
    "x IN ('a', 'b')", "x NOT IN ('a', '2024-01-01')", "x LIKE 'a%'", "x NOT LIKE '%a_b%'",
    "x BETWEEN 1 AND 5", "x NOT BETWEEN 1.5 AND 2.5", "x BETWEEN -1.0E1 AND 1",
    "x * 2 > 10", "2 - x < 1", "x + 1 = 2", "x / 2 > 1", "x % 2 = 1", "-x < 0", "x * y > 10",
    "x + y = 'ab'", "x - y > 1", "y * 100 + x > 9", "x", "NOT x", "x AND y > 1",
    "y > 1 OR x = 'a'", "(x > 1 AND y = 2) OR NOT (y LIKE 'a%')", "LOWER(x) = 'a'",
    "UPPER(x, 'tr') <> 'A'", "LEFT(x, 2) IN ('ab')", "DATE(x) > 0", "filtex:length(x) = 1",
    "SUBSTRING(x, 1, y) = 'a'", "RIGHT(x, 1) LIKE 'a%'"]
"""Filters over ``x`` (and ``y``) whose tests fail for values of some classes."""

FAILING_VALUES = [
    None, True, False, 7, -3, ubyte(200), int32(5), ulong(2**64 - 1), 2**70, 1.5, math.nan,
    math.inf, float32(2.5), float32(math.nan), Decimal("2.5"), Decimal("NaN"), timestamp(1000),
    "7", "", "a", "2024-01-01", symbol("a"), char("a"), b"ab", uuid.UUID(int=5), [1], {"k": 1},
    Array(UNDESCRIBED, Data.INT, 1, 2), Described(symbol("d"), 1), type("Text", (str,), {})("a")]
"""A value of every class a filter may meet, NaNs and a str subclass included."""


def _failing_messages() -> list[filtex.Message]:
    messages = []
    for x, y in itertools.product(FAILING_VALUES, [None, 2, "a", True]):
        messages.append(filtex.Message(application_properties={
            k: v for k, v in (("x", x), ("y", y)) if v is not None}))
    return messages


@pytest.mark.parametrize("text", FAILING_FILTERS)
def test_failures_exit_early_as_the_runtime_fails(text, monkeypatch):
    """Where the declared table says a class fails a test, ``evaluate`` returns
    None and ``matches`` False at once; ``outcome`` and ``explain`` still run the
    runtime, which fails with its reason. Every answer, on a Message, its
    encoded bytes and a proton.Message, is the compact code's (runtime calls
    only, no early exit)."""
    import proton

    from filtex.amqp.encode import encode_message
    compact = _compact(text, "amqp", monkeypatch)
    inline = filtex.compile_sql(text)
    assert "type(message) in _VIEWS: return" in inline.source
    assert "type(message) in _VIEWS: return" not in compact.source
    for message in _failing_messages():
        expected = compact.outcome(message)
        forms: list = [message]
        try:
            data = encode_message(message)
        except (TypeError, ValueError, OverflowError):
            data = None
        if data is not None:
            converted = proton.Message()
            converted.decode(data)
            forms += [data, filtex.view(data), converted]
        for form in forms:
            assert inline.evaluate(form) is compact.evaluate(form), (text, message, form)
            assert inline.matches(form) is compact.matches(form), (text, message, form)
        assert inline.outcome(message) == expected, (text, message)
        assert str(inline.explain(message)) == str(compact.explain(message)), (text, message)


def test_the_no_local_filter_without_a_receiving_connection_exits_early():
    """No-local without the link's connection fails in every dialect: None and
    False at once, the reason where it is asked for, on every form."""
    from filtex.amqp.encode import encode_message
    for dialect in ("amqp", "jms", "rabbitmq"):
        flt = filtex.compile_filter(("apache.org:no-local-filter:list", ["x"]), dialect)
        assert "type(message) in _VIEWS: return" in flt.source
        message = filtex.Message(connection="c1", application_properties={"a": 1})
        data = encode_message(message)
        for form in (message, data, filtex.view(data, "c1")):
            assert flt.evaluate(form) is None and flt.matches(form) is False
        for form in (message, filtex.view(data, "c1")):   # (bytes carry no connection)
            assert flt.evaluate(form, "c2") is True and flt.matches(form, "c1") is False
        assert flt.outcome(message) == (None, "the no-local filter needs the receiving "
                                                "connection")


def test_an_early_exit_leaves_other_objects_to_the_error_path():
    """An object that reads like a message but is no message form filtex knows:
    the early exit is not taken, the error path asks ``adapt``, which refuses it,
    as it did before the exit existed."""
    class Impostor:
        def __init__(self) -> None:
            self._filtex_application_properties = {"x": "abc"}
    flt = filtex.compile_sql("x > 100")
    with pytest.raises(filtex.NotAMessage):
        flt.evaluate(Impostor())  # type: ignore[arg-type]
    with pytest.raises(filtex.NotAMessage):
        flt.matches(Impostor())  # type: ignore[arg-type]


def test_the_views_are_the_forms_adapt_leaves_as_they_are():
    """The error path skips ``adapt`` for these classes: for each, ``adapt``
    returns None (the object already reads the protocol)."""
    import proton

    from filtex.amqp.encode import encode_message
    from filtex.forms import adapt, views
    message = filtex.Message(application_properties={"x": 1})
    converted = proton.Message()
    converted.decode(encode_message(message))
    import filtex.arrow as fa
    rows = list(fa.messages(fa.message_table([message])))
    samples = [message, filtex.view(encode_message(message)), filtex.view(converted), rows[0]]
    assert {type(s) for s in samples} == set(views())
    for sample in samples:
        assert adapt(sample) is None


def test_evaluate_writes_no_reason(monkeypatch):
    """A failure the runtime raises writes its reason only when it is read:
    ``evaluate`` and ``matches`` never name the types, ``outcome`` does."""
    from filtex.runtime import ops
    written = []
    real = ops.type_name
    monkeypatch.setattr(ops, "type_name", lambda value: written.append(value) or real(value))
    flt = filtex.compile_sql("a % b = 1 OR c = 'x'")   # a float: % fails in the runtime
    message = filtex.Message(application_properties={"a": 1.5, "b": 2, "c": "x"})
    assert flt.evaluate(message) is None and flt.matches(message) is False
    assert filtex.compile_sql("a = 'x'").evaluate(filtex.Message(
        application_properties={"a": [1]})) is None
    assert written == []
    assert flt.outcome(message).reason == "% needs integers, not floating-point and integer"
    assert written


def test_a_deferred_failure_reads_as_a_written_one():
    import pickle

    from filtex.errors import EvaluationFailure
    written = EvaluationFailure("cannot compare string with integer")
    deferred = EvaluationFailure.deferred(lambda a, b: f"cannot compare {a} with {b}",
                                          "string", "integer")
    for failure in (written, deferred):
        assert failure.reason == "cannot compare string with integer"
        assert str(failure) == failure.reason and failure.args == (failure.reason,)
        assert repr(failure) == "EvaluationFailure('cannot compare string with integer')"
        assert pickle.loads(pickle.dumps(failure)).reason == failure.reason
    with pytest.raises(EvaluationFailure, match="cannot compare string"):
        raise deferred
