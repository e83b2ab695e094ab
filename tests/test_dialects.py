"""The jms and rabbitmq dialects through the public API: the selector filter's
descriptors, RabbitMQ filter sets, pickling, and that each dialect is data."""
from __future__ import annotations

import dataclasses
import pickle

import pytest
from proton import Described, symbol, ulong

import filtex
from filtex import Message
from filtex.dialects import DIALECTS, Dialect

HIGH = Message(header={"priority": 7}, application_properties={"color": "blue"})
LOW = Message(header={"priority": 1}, application_properties={"color": "blue"})


@pytest.mark.parametrize("descriptor", [symbol("apache.org:selector-filter:string"),
                                        symbol("apache.org:jms-selector-filter:string"),
                                        ulong(0x0000468C00000004)])
def test_selector_filter_compiles_in_the_jms_dialect(descriptor):
    flt = filtex.compile_filter(Described(descriptor, "JMSPriority > 4 AND color = 'blue'"))
    assert flt.dialect == "jms"
    assert flt.evaluate(HIGH) is True and flt.evaluate(LOW) is False
    # JMS reading, not amqp's: a bare non-boolean property is FALSE, so NOT matches
    assert filtex.compile_filter(Described(descriptor, "NOT color")).evaluate(HIGH) is True


def test_rabbitmq_filter_set_reads_sql_and_property_filters_its_way():
    filters = {"sql": Described(symbol("amqp:sql-filter"), "header.priority > 4"),
               "props": Described(symbol("amqp:application-properties-filter"),
                                  {"color": None})}
    flt = filtex.compile_filter_set(filters, dialect="rabbitmq")
    assert flt.evaluate(HIGH) is True and flt.evaluate(LOW) is False
    # RabbitMQ: a null reference needs the key present (the specification: matches anything)
    missing = Message(header={"priority": 7})
    assert flt.evaluate(missing) is False
    assert filtex.compile_filter_set(filters).evaluate(missing) is True   # amqp (filtex 4.1)
    with pytest.raises(filtex.FilterError, match="1 to 16 entries"):
        filtex.compile_filter((symbol("amqp:application-properties-filter"), {}), "rabbitmq")


@pytest.mark.parametrize("dialect, text", [("jms", "JMSType = 'car' AND weight > 2500"),
                                           ("rabbitmq", "p.subject = 'car' AND weight > 2500")])
def test_dialect_filters_pickle_and_cache_by_dialect(dialect, text):
    flt = filtex.compile_sql(text, dialect)
    again = pickle.loads(pickle.dumps(flt))
    assert again.dialect == dialect and again.source == flt.source
    message = Message(properties={"subject": "car"}, application_properties={"weight": 3000})
    assert again.evaluate(message) is True
    assert filtex.compile_sql(text, dialect) is flt


def test_the_same_text_means_what_each_dialect_says():
    message = Message(application_properties={"n": 7, "s": "x"})
    answers = {d: filtex.compile_sql("n / 2 = 3.5 AND s <> 5", d).outcome(message)
               for d in ("amqp", "jms", "rabbitmq")}
    assert answers["amqp"].result is None and "cannot compare" in answers["amqp"].reason
    assert answers["jms"] == (True, None) and answers["rabbitmq"] == (True, None)


def test_dialects_are_data():
    for dialect in DIALECTS.values():
        assert isinstance(dialect, Dialect)
        assert dataclasses.is_dataclass(dialect)
        with pytest.raises(dataclasses.FrozenInstanceError):
            dialect.name = "changed"  # type: ignore[misc]
    with pytest.raises(filtex.FilterError) as raised:
        filtex.compile_sql("a = 1", "sql92")
    assert raised.value.condition == "amqp:not-implemented" and "jms" in raised.value.problem


@pytest.mark.parametrize("dialect, text, words", [
    ("rabbitmq", "x" * 4097, "longer than 4,096"),
    ("rabbitmq", " OR ".join(["a = 1"] * 51), "more than 200 tokens"),
    ("rabbitmq", "country = 'UK' and weight = 5", "must be written AND"),
    ("jms", "a = 1 AND", "unexpected end"),
    ("jms", "3 + 5", "condition is expected"),
])
def test_dialect_errors_name_the_problem(dialect, text, words):
    with pytest.raises(filtex.FilterError) as raised:
        filtex.compile_sql(text, dialect)
    assert words in raised.value.problem
