"""Benchmark cases for the jms and rabbitmq dialects: the most complex
expressions of the peers' own suites, each with a hand-written Python function
of that dialect's semantics, and seeded messages with the fields they read
(matching, not matching, missing, of other types).

``tests/test_benchmark_cases.py`` checks every hand-written function returns
what the compiled filter returns on every message, so the comparison measures
equal work.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from proton import int32, symbol, ubyte, uint

from filtex import Message

_JAVA_NUMBERS = (int, int32, float)
_ERLANG_NUMBERS = (int, uint, ubyte, float)


def _and3(*values):
    if False in values:
        return False
    return None if None in values else True


def _not3(value):
    return None if value is None else not value


# --- jms ---------------------------------------------------------------------------------

def _jms_string_equals(value, constant):
    if value is None:
        return None
    return value.__class__ in (str, symbol) and value == constant


def hand_jms_model(m):
    """ActiveMQ SelectorTest.testLike (also in Artemis' suite)."""
    ap = m.application_properties
    cid = ap.get("modelClassId")
    if cid is None:
        a = None
    else:   # LIKE on a non-string is FALSE
        a = cid.__class__ in (str, symbol) and cid.startswith("com.whatever.something.")
    if a is False:
        return False
    b = _jms_string_equals(ap.get("modelInstanceId"), "170")
    if b is False:
        return False
    c = True if ap.get("modelRequestError") is None else \
        _jms_string_equals(ap.get("modelCorrelatedClientId"), "whatever")
    return _and3(a, b, c)


def hand_jms_qpid_nested(m):
    """Qpid Broker-J JMSSelectorFilterSyntaxTest's most nested selector: it reduces
    to NOT (NOT (price NOT BETWEEN 90 AND 110) AND fruit IN (...) AND entry LIKE
    '%aaa%')."""
    ap = m.application_properties
    price = ap.get("price")
    if price is None:
        inside = None
    elif price.__class__ in _JAVA_NUMBERS:
        inside = 90 <= price <= 110
    else:
        inside = True    # NOT (price < 90 OR price > 110): unlike types order FALSE
    fruit = ap.get("fruit")
    if fruit is None or fruit.__class__ not in (str, symbol):
        listed = None    # IN on a missing or non-string value is unknown
    else:
        listed = fruit in ("apple", "banana", "cherry")
    entry = ap.get("entry")
    if entry is None:
        like = None
    else:
        like = entry.__class__ in (str, symbol) and "aaa" in entry
    return _not3(_and3(inside, listed, like))


def _java_wrap(value, bits):
    half = 1 << (bits - 1)
    return value if -half <= value < half else (value + half) % (1 << bits) - half


def hand_jms_arithmetic(m):
    """price * quantity > 1000 as Java computes it: Integer times Integer wraps at 32
    bits, with a Long at 64, with a Double in double; a non-number is NULL."""
    ap = m.application_properties
    price, quantity = ap.get("price"), ap.get("quantity")
    if price is None or quantity is None:
        return None
    pc, qc = price.__class__, quantity.__class__
    if pc not in _JAVA_NUMBERS or qc not in _JAVA_NUMBERS:
        return None
    if pc is float or qc is float:
        total = price * quantity
        return total > 1000 if total == total else True   # NaN orders above all (compareTo)
    total = _java_wrap(price * quantity, 32 if pc is int32 and qc is int32 else 64)
    return total > 1000


def hand_jms_headers(m):
    """JMSType = 'order' AND JMSDeliveryMode = 'PERSISTENT': JMSType is the
    x-opt-jms-type annotation, else the subject; persistent is durable true."""
    jms_type = m.message_annotations.get("x-opt-jms-type")
    if jms_type is None:
        jms_type = m.properties.get("subject")
    if jms_type is None:
        is_order = None
    else:
        is_order = jms_type.__class__ in (str, symbol) and jms_type == "order"
    if is_order is False:
        return False
    if m.header.get("durable") is not True:   # NON_PERSISTENT
        return False
    return is_order


# --- rabbitmq ------------------------------------------------------------------------------

def _rmq_kind(value):
    if value is True or value is False:
        return "bool"
    if value.__class__ in _ERLANG_NUMBERS:
        return "number"
    if isinstance(value, (str, bytes)):
        return "bytes"
    return None


def _rmq_equals(value, constant):
    if value is None:
        return None
    return _rmq_kind(value) == "bytes" and str(value) == constant


def _rmq_number(value):
    return value if value is not None and _rmq_kind(value) == "number" else None


def _pcre_in(needle, text):
    """'%needle%' as RabbitMQ's regex reads it: no line feed but a final one
    (a binary needs to be UTF-8 text)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return needle in text and ("\n" not in text or text.index("\n") == len(text) - 1)


def hand_rabbitmq_complex6(m):
    """RabbitMQ amqp_filter_sql_unit_SUITE complex_expressions, the sixth."""
    ap = m.application_properties
    country = ap.get("country")
    first = _and3(_or3(_rmq_equals(country, "UK"), _rmq_equals(country, "US")),
                  None if ap.get("city") is None else
                  any(_rmq_equals(ap.get("city"), c) for c in ("London", "New York", "Paris")))
    if first is True:
        return True
    price, discount = _rmq_number(ap.get("price")), _rmq_number(ap.get("discount"))
    cheap = None if price is None or discount is None else price * (1 - discount) < 10.0
    quantity = ap.get("quantity")
    many = None if quantity is None else (_rmq_kind(quantity) == "number" and quantity > 50)
    description = ap.get("description")
    described = None if description is None or _rmq_kind(description) != "bytes" \
        else _pcre_in("test", description)
    second = _and3(cheap, many, described)
    if second is True:
        return True
    active, premium = ap.get("active"), ap.get("premium")
    third = _and3(active if active is True or active is False else None,
                  _not3(premium if premium is True or premium is False else None))
    return _or3(first, second, third)


def _rmq_string_equals(value, constant, encoded):
    if value is None:
        return None
    cls = value.__class__
    if cls is str or cls is symbol:
        return value == constant
    return cls is bytes and value == encoded


def hand_rabbitmq_properties(m):
    """properties.subject = 'order.created' AND properties.content_type = 'application/json'
    in RabbitMQ's value model: strings and symbols are byte strings."""
    props = m.properties
    subject = _rmq_string_equals(props.get("subject"), "order.created", b"order.created")
    if subject is False:
        return False
    content = _rmq_string_equals(props.get("content-type"), "application/json",
                                 b"application/json")
    if content is False:
        return False
    return None if subject is None or content is None else True


def _or3(*values):
    if True in values:
        return True
    return None if None in values else False


@dataclass(frozen=True)
class DialectCase:
    name: str
    dialect: str
    sql: str
    hand: Callable
    fields: dict   # field ("section:key", or a property's name) -> choices for the messages


_MISSING = object()

DIALECT_CASES = [
    DialectCase("activemq-like", "jms",
                "modelClassId LIKE 'com.whatever.something.%' AND modelInstanceId = '170' AND "
                "(modelRequestError IS NULL OR modelCorrelatedClientId = 'whatever')",
                hand_jms_model,
                {"modelClassId": ["com.whatever.something.Foo", "com.other.Bar", 7, _MISSING],
                 "modelInstanceId": ["170", "171", int32(170), _MISSING],
                 "modelRequestError": ["boom", _MISSING, _MISSING],
                 "modelCorrelatedClientId": ["whatever", "other", _MISSING]}),
    DialectCase("qpid-nested", "jms",
                "not (((true and true) or (false or true)) and (not (price not between 90 and "
                "110) and not (not (fruit in ('apple', 'banana', 'cherry')) or (entry NOT LIKE "
                "'%aaa%'))))",
                hand_jms_qpid_nested,
                {"price": [int32(100), int32(120), 95.5, "100", _MISSING],
                 "fruit": ["apple", "mango", 3, _MISSING],
                 "entry": ["xaaay", "bbb", 5, _MISSING]}),
    DialectCase("jms-arithmetic", "jms", "price * quantity > 1000", hand_jms_arithmetic,
                {"price": [19.99, int32(25), 120, int32(400), "12", _MISSING],
                 "quantity": [int32(3), int32(100), 7, 2.5, _MISSING]}),
    DialectCase("jms-headers", "jms", "JMSType = 'order' AND JMSDeliveryMode = 'PERSISTENT'",
                hand_jms_headers,
                {"message_annotations:x-opt-jms-type": [symbol("order"), "invoice", _MISSING,
                                                        _MISSING],
                 "properties:subject": ["order", "invoice", _MISSING],
                 "header:durable": [True, False, _MISSING]}),
    DialectCase("rabbitmq-properties", "rabbitmq",
                "properties.subject = 'order.created' AND "
                "properties.content_type = 'application/json'",
                hand_rabbitmq_properties,
                {"properties:subject": ["order.created", "order.deleted", _MISSING],
                 "properties:content-type": [symbol("application/json"), symbol("text/plain"),
                                             _MISSING]}),
    DialectCase("rabbitmq-complex-6", "rabbitmq",
                "((country = 'UK' OR country = 'US') AND (city IN ('London', 'New York', "
                "'Paris'))) OR (price * (1 - discount) < 10.0 AND quantity > 50 AND "
                "description LIKE '%test%') OR (active AND NOT premium)",
                hand_rabbitmq_complex6,
                {"country": [symbol("UK"), "FR", "US", 5, _MISSING],
                 "city": ["London", "Berlin", _MISSING],
                 "price": [10.5, 8, "x", _MISSING], "discount": [0.25, 0, _MISSING],
                 "quantity": [uint(100), uint(10), _MISSING],
                 "description": ["a test message", "nothing", _MISSING],
                 "active": [True, False, 1, _MISSING], "premium": [False, True, _MISSING]}),
]


def make_dialect_messages(case: DialectCase, count: int = 256, seed: int = 11) -> list[Message]:
    rng = random.Random(seed)
    messages = []
    for _ in range(count):
        sections: dict = {}
        for name, choices in case.fields.items():   # "section:key", or an application property
            section, _, key = name.rpartition(":")
            value = rng.choice(choices)
            if value is not _MISSING:
                sections.setdefault(section or "application_properties", {})[key] = value
        messages.append(Message(**sections))
    return messages
